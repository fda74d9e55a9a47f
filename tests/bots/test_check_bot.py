"""arena check-bot as a bot author runs it: every sample bot passes, and a bot that breaks
one rule (tests/bots/rogue.py, one fault planted per mode) fails that check and the run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import env_for, processes_marked

ROOT = Path(__file__).resolve().parents[2]
ROGUE = ROOT / "tests" / "bots" / "rogue.py"
SAMPLES = ["counter", "pusher", "greedy", "random", "lowest", "ismcts"]


def check_bot(mark: str, folder: Path, *args, env=None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", "check-bot", str(folder), *args],
                          cwd=ROOT, env={**env_for(mark), **(env or {})}, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert processes_marked(mark) == [], "bot processes left running"
    return proc


def rogue(tmp_path: Path, mode: str, trigger: int = 3) -> Path:
    folder = tmp_path / mode
    folder.mkdir()
    shutil.copy(ROGUE, folder / "rogue.py")
    (folder / "bot.toml").write_text(
        f'name = "{mode}"\ncommand = ["{{python}}", "rogue.py", "{mode}", "{trigger}"]\n')
    return folder


def lines(proc) -> dict[str, str]:
    """Each check's line, by check name."""
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith(("PASS ", "FAIL ")):
            out[line[5:].split(":", 1)[0]] = line
    return out


@pytest.mark.parametrize("bot", SAMPLES)
def test_every_sample_bot_passes(mark, bot):
    proc = check_bot(mark, ROOT / "bots" / bot)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checks = lines(proc)
    assert len(checks) == 13 and all(line.startswith("PASS") for line in checks.values())
    assert proc.stdout.splitlines()[-1] == f"check-bot: {bot}: 13 passed, 0 failed"
    assert "start-up " in proc.stdout and "peak memory " in proc.stdout


def test_the_json_report(mark):
    proc = check_bot(mark, ROOT / "bots" / "lowest", "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["failed"] == 0 and report["passed"] == 13
    assert [c["name"] for c in report["checks"]][:2] == ["setup", "hello"]
    assert report["matches"] >= 10 and report["startup_s"] > 0 and report["peak_memory_mb"] > 0


# mode -> (the check that must fail, words in its line, extra arguments, environment)
FAULTS = {
    "bad_protocol": ("hello", ["protocol version 99 is not supported"], [], {}),
    "no_hello": ("hello", ["the first message of a session must be a hello"], [], {}),
    "modern_only": ("rulesets", ["classic", "crashed"], [], {}),
    "crash_on_big_tables": ("seats", ["8 seats failed"], [], {}),
    "crash_on_owed": ("owed pairs", ["an owed pair after P2", "view.owed is 2"], [], {}),
    "crash_on_over_limit": ("over-limit turns", ["over_limit set"], [], {}),
    "crash_on_four99": ("four 99s", ["four 99s in a modern hand", "crashed"], [], {}),
    "one_match": ("one connection", ["connections", "next match_start follows"], [], {}),
    "other_turn": ("own turns", ["not_your_turn", "echoing its turn_id"], [], {}),
    "stale": ("own turns", ["stale_turn"], [], {}),
    "not_in_hand": ("legal cards", ["not_in_hand", "TurnRequest.legal"], [], {}),
    "garbage_card": ("own turns", ["malformed"], [], {}),
    "slow_sometimes": ("move time", ["relies on its bank"], ["--move-time", "0.05"],
                       {"ROGUE_SLEEP": "0.08"}),
    "exit": ("no faults", ["crashed"], [], {}),
    "garbage_bytes": ("no faults", ["disconnected"], [], {}),
    "linger": ("goodbye", ["still running 3 s after the goodbye"], [], {}),
}


@pytest.mark.parametrize("mode", FAULTS)
def test_a_planted_fault_fails_its_check_and_the_run(tmp_path, mark, mode):
    check, words, args, env = FAULTS[mode]
    trigger = 20 if mode == "slow_sometimes" else 3
    proc = check_bot(mark, rogue(tmp_path, mode, trigger), *args, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = lines(proc)[check]
    assert line.startswith("FAIL"), line
    for word in words:
        assert word in line, line
    assert proc.stdout.splitlines()[-1].startswith(f"check-bot: {mode}: ")
    assert proc.stdout.splitlines()[-1].endswith(" failed") and " 0 failed" not in proc.stdout


def test_a_bot_that_answers_no_turn_fails_the_checks_that_judge_answers(tmp_path, mark):
    """A bot crashing at its first turn passed 'own turns' and 'legal cards', though it
    answered nothing; and the 'rulesets' and 'no faults' lines repeated the same excerpt
    of its stderr once a match (about 2,000 characters each)."""
    proc = check_bot(mark, rogue(tmp_path, "exit", 1))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = lines(proc)
    for check in ("own turns", "legal cards", "move time"):
        assert found[check].startswith("FAIL") and "it answered no turn" in found[check], found[check]
    faults = found["no faults"]
    assert faults.startswith("FAIL") and " matches (" in faults, faults
    assert len(faults) < 600, faults


def test_a_healthy_raw_protocol_bot_passes(tmp_path, mark):
    proc = check_bot(mark, rogue(tmp_path, "good"))
    assert proc.returncode == 0, proc.stdout


def test_a_setup_that_runs_is_announced_first(tmp_path, mark):
    """A C++ bot's first check builds it for a minute: check-bot said nothing meanwhile
    (arena match says why it waits). It says so on stderr, as arena match does; the
    report on stdout is as before."""
    folder = rogue(tmp_path, "good")
    with open(folder / "bot.toml", "a") as toml:
        toml.write('setup = ["sh", "-c", "echo built"]\n')
    proc = check_bot(mark, folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.startswith("bot good: running its setup (sh -c echo built), output in ")
    assert lines(proc)["setup"].startswith("PASS setup: ran in ")
    again = check_bot(mark, folder)
    assert "running its setup" not in again.stderr       # up to date: nothing to wait for


def test_answers_after_a_time_out_are_the_time_out_s_fault_not_the_turn_ids(tmp_path,
                                                                           monkeypatch):
    """A slow bot's answers that came after its turn had timed out were refused, and its
    "own turns" check failed on them (it was told "not_your_turn", and looked for a bug in
    its turn ids): the time-out is the fault, which "move time" and "no faults" name."""
    import asyncio

    from arena.bots.check import check_bot as examine
    from arena.bots.manifest import load_manifest

    monkeypatch.setenv("ROGUE_SLEEP", "0.6")
    report = asyncio.run(examine(load_manifest(rogue(tmp_path, "sleep", trigger=3)),
                                 move_ms=100, bank_ms=100))
    checks = {c.name: c for c in report.checks}
    assert not checks["no faults"].passed and "timeout" in checks["no faults"].detail
    own = checks["own turns"]
    assert own.passed, own.detail
    assert "came after their turn had timed out" in own.detail and "stale_turn" in own.detail


#: what Node.js prints of an uncaught error, as a hosted Node bot whose SDK is not found
#: printed it: the error, its stack, and Node's version last
NODE_ERROR = """node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '../../clients/node'
Require stack:
- /bot/bot.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at Module.require (node:internal/modules/cjs/loader:1311:19)
    at require (node:internal/modules/helpers:179:18)
    at Object.<anonymous> (/bot/bot.js:3:13)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/bot/bot.js' ]
}

Node.js v20.20.2
"""


def test_a_bot_that_fails_at_start_is_told_its_error_line_not_only_its_last(tmp_path, mark):
    """The last 3 lines of a Node.js error are its stack's end and Node's version: the
    check said `} | Node.js v20.20.2`, never "Cannot find module"."""
    folder = tmp_path / "nodeish"
    folder.mkdir()
    (folder / "fail.py").write_text(f"import sys\nsys.stderr.write({NODE_ERROR!r})\nsys.exit(1)\n")
    (folder / "bot.toml").write_text('name = "nodeish"\ncommand = ["{python}", "fail.py"]\n')
    proc = check_bot(mark, folder)
    hello = lines(proc)["hello"]
    assert hello.startswith("FAIL hello: ")
    assert "stderr: Error: Cannot find module '../../clients/node' | … | " in hello, hello
    assert hello.count("Node.js v20.20.2") == 1
