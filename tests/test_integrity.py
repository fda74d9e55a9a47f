"""Competition integrity, as a cheating bot sees it: real tournaments and matches (the CLI
in a subprocess, real bot processes) between tests/bots/cheater.py and its honest copy.

The cheater inverts its bot seed over plausible masters, tables and deals, and keeps every
match in memory to recognise another rotation of a deal. Under the defaults (secret seeds,
fresh processes per phase) it finds nothing and, against its honest copy over duplicate
deals, gains nothing. With a known seed and no phases both attacks work, and the seed
attack wins most matches: the attacks are real, so their failure means something.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.processes import env_for, processes_marked

ROOT = Path(__file__).resolve().parents[1]
CHEATER = ROOT / "tests" / "bots" / "cheater.py"


def bots(folder: Path) -> tuple[Path, Path]:
    """The cheater and its honest copy as bot folders (each holding the script: a
    sandboxed bot sees nothing else)."""
    folder.mkdir(parents=True)
    for name, extra in (("cheater", ""), ("honest", ', "--honest"')):
        (folder / name).mkdir()
        shutil.copy(CHEATER, folder / name / "cheater.py")
        (folder / name / "bot.toml").write_text(
            f'name = "{name}"\ncommand = ["{{python}}", "cheater.py"{extra}]\n')
    return folder / "cheater", folder / "honest"


def reports(logs: Path, name: str = "cheater") -> list[dict]:
    """The cheater's report lines, from every log of its processes."""
    out = []
    for log in sorted(logs.rglob(f"{name}*.stderr.log")):
        out += [json.loads(line[7:]) for line in log.read_text().splitlines()
                if line.startswith("REPORT ")]
    return out


def arena(mark: str, *args) -> str:
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", *map(str, args)], cwd=ROOT,
                          env=env_for(mark), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert processes_marked(mark) == [], "bot processes left running"
    return proc.stdout


def tournament(mark: str, tmp_path: Path, games: int, *flags) -> list[dict]:
    """A two-bot duplicate tournament; the cheater's report, one line per match, each with
    the schedule key the store maps its opaque match id to."""
    cheater, honest = bots(tmp_path / "bots")
    db = tmp_path / "t.db"
    arena(mark, "tournament", cheater, honest, "--games", games, "--db", db,
          "--logs", tmp_path / "logs", "-q", *flags)
    keys = {m["match_uid"]: m["key"] for m in json.loads(arena(mark, "matches", "--db", db, "--json"))}
    lines = reports(tmp_path / "logs")
    assert len(lines) == 2 * games
    for line in lines:
        line["key"] = keys[line["match_id"]]
    return lines


def deals_met_twice(report: list[dict]) -> int:
    """How often one process played a deal it had played before (another rotation)."""
    seen = Counter((r["pid"], r["key"].rsplit("-r", 1)[0]) for r in report)
    return sum(n - 1 for n in seen.values())


def binomial_two_sided(k: int, n: int) -> float:
    """P(a fair coin's result is at least as far from n/2 as k), exactly."""
    far = abs(k - n / 2)
    return min(1.0, sum(math.comb(n, i) for i in range(n + 1) if abs(i - n / 2) >= far) / 2**n)


def wins(report: list[dict]) -> int:
    return sum(r["place"] == 1 for r in report)


@pytest.mark.parametrize("concurrency", [1, 2])
def test_under_the_defaults_the_cheater_finds_nothing_and_gains_nothing(tmp_path, mark, concurrency):
    report = tournament(mark, tmp_path, 150, "--concurrency", concurrency)
    assert [r for r in report if r["seed_found"] or r["memory_found"] or r["predicted"]] == []
    # a fresh process per phase: no process meets a deal twice, so no match of the other
    # rotation is ever in the cheater's memory
    assert deals_met_twice(report) == 0
    assert sum(r["guesses"] for r in report) == 0
    # a two-sided test on 300 matches: no gain (and no loss) measurable
    assert binomial_two_sided(wins(report), len(report)) > 0.05, wins(report)


def test_with_a_known_seed_and_no_phases_both_attacks_succeed(tmp_path, mark):
    report = tournament(mark, tmp_path, 100, "--seed", 1, "--no-phases", "--concurrency", 1)
    assert deals_met_twice(report) == 100                    # one process, both rotations
    found = Counter(r["seed_found"] for r in report)
    assert found["tournament"] == len(report), found          # every deal computed
    predicted = sum(r["predicted"] for r in report)
    assert predicted > 1000 and sum(r["correct"] for r in report) == predicted
    assert sum(r["memory_found"] for r in report) >= 10       # rotations recognised too
    # and it pays: knowing the cards, it wins far more than half (p < 1e-6)
    assert wins(report) > 100 and binomial_two_sided(wins(report), len(report)) < 1e-6, wins(report)


def test_secret_seeds_stop_the_inversion_and_phases_stop_the_memory(tmp_path, mark):
    # each defence alone: a secret seed without phases, phases with a known seed
    no_phases = tournament(mark, tmp_path / "a", 60, "--no-phases", "--concurrency", 1)
    assert not any(r["seed_found"] or r["predicted"] for r in no_phases)
    assert sum(r["memory_found"] for r in no_phases) >= 20    # of the 60 second rotations
    known_seed = tournament(mark, tmp_path / "b", 60, "--seed", 1)
    assert all(r["seed_found"] == "tournament" for r in known_seed)
    assert not any(r["memory_found"] or r["guesses"] for r in known_seed)


def test_arena_match_games_have_secret_seeds(tmp_path, mark):
    cheater, honest = bots(tmp_path / "bots")
    arena(mark, "match", cheater, honest, "--games", 10, "-q", "--out", tmp_path / "a")
    assert len(reports(tmp_path / "a")) == 10
    assert not any(r["seed_found"] for r in reports(tmp_path / "a"))
    arena(mark, "match", cheater, honest, "--games", 10, "-q", "--seed", 1, "--out", tmp_path / "b")
    assert [r["seed_found"] for r in reports(tmp_path / "b")] == ["match"] * 10
