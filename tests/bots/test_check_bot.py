"""arena check-bot as a bot author runs it: every sample bot passes, and a bot that breaks
one rule (tests/bots/rogue.py, one fault planted per mode) fails that check and the run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import bot_env_names, env_for, processes_marked

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
    # ismcts thinks 50 ms a move by default: 28 s of the suite's time here, for checks
    # that do not judge its strength (tests/bots/test_ismcts.py plays it at its own
    # thinking time, within its clock)
    env = {"ONO99_THINK_MS": "5", "ONO99_BOT_ENV": f"{bot_env_names()},ONO99_THINK_MS"}
    proc = check_bot(mark, ROOT / "bots" / bot, env=env if bot == "ismcts" else None)
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
    "garbage_card": ("legal cards", ["malformed", "TurnRequest.legal"], [], {}),
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
    # (the command as a shell would run it: quoted where a word must be)
    assert proc.stderr.startswith("bot good: running its setup (sh -c 'echo built'), output in ")
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
    assert "came after their turn was over" in own.detail and "time-outs" in own.detail
    assert "stale_turn" in own.detail
    # the time-outs, which differ only in the bank left, are named together, once
    assert checks["no faults"].detail.count("timeout (no valid answer within") == 1, \
        checks["no faults"].detail


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


def sdk_bot(tmp_path: Path, name: str, body: str) -> Path:
    """A bot on the Python SDK whose class body is ``body``."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.py").write_text(
        "from ono99.bot import Bot, run\n\n\nclass B(Bot):\n" + body
        + "\n\nif __name__ == '__main__':\n    raise SystemExit(run(B()))\n")
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = "{{python}} bot.py"\n')
    return folder


def test_a_bot_disqualified_for_its_cards_is_told_about_its_cards_not_its_turn_ids(tmp_path, mark):
    """A bot that tries a card it does not hold first, every turn, is disqualified at its
    sixth refusal in a match; the SDK's next card then comes after the turn is over. The
    check failed "own turns" for those late answers, advising to echo turn ids (which an
    SDK bot never touches): the cards are the fault, and the verdict names the last."""
    folder = sdk_bot(tmp_path, "unheld", """    name = "unheld"

    def choose(self, view):
        return next(c for c in ("99", "10", "9", "8", "7", "R", "P2") if c not in view.hand)
""")
    proc = check_bot(mark, folder)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = lines(proc)
    assert found["own turns"].startswith("PASS own turns: answered only its own turns; "), found["own turns"]
    assert "seats disqualified for refused cards" in found["own turns"]
    assert found["legal cards"].startswith("FAIL legal cards: refused: ") and "not_in_hand" in found["legal cards"]
    assert "refused actions in this match (the limit is 5); the last: not_in_hand)" in found["no faults"], \
        found["no faults"]


def test_a_crashing_bot_is_told_its_crash_once_with_its_line_and_not_to_keep_reading(tmp_path, mark):
    """A bot whose choose() raises: "one connection" told it to keep reading after
    match_end (it was started again after each crash); the "rulesets" and "no faults"
    lines quoted its stderr twice; and Python 3.11's ~~~^^^ marks took the place of the
    line naming the file and line of the error."""
    folder = sdk_bot(tmp_path, "raiser", """    name = "raiser"

    def choose(self, view):
        return {"a": 1}["b"] + len(view.legal)
""")
    proc = check_bot(mark, folder)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = lines(proc)
    one = found["one connection"]
    assert "started again after each of its" in one and "(the process ended)" in one, one
    for check in ("rulesets", "no faults"):
        assert found[check].count("stderr: ") == 1, found[check]
    assert 'bot.py", line 8, in choose' in found["no faults"], found["no faults"]
    assert "~~" not in found["no faults"] and "^^" not in found["no faults"]
    assert "bot output: not kept (--out DIR keeps it" in proc.stdout
    # its whole output, kept where asked
    kept = check_bot(mark, folder, "--out", tmp_path / "logs")
    assert f"bot output: {tmp_path / 'logs' / 'raiser.stderr.log'}" in kept.stdout.splitlines()
    log = (tmp_path / "logs" / "raiser.stderr.log").read_text()
    assert "Traceback (most recent call last)" in log and "KeyError: 'b'" in log
    # a second run's output is not added to the first's
    again = check_bot(mark, folder, "--out", tmp_path / "logs")
    assert again.returncode == 2 and again.stderr.splitlines() == [
        f"arena check-bot: error: --out {tmp_path / 'logs'} holds the output of another run "
        "(raiser.stderr.log), which this one's would be added to: give a new folder"]


def test_a_slow_check_says_how_far_it_is(tmp_path, mark, capsys):
    """A bot that takes 1.5 s a move ran check-bot for 5 minutes in silence. Past 10 s
    without a line, it says how many matches are played (on stderr; the report is
    unchanged)."""
    from arena.cli import check_bot as cli

    import asyncio

    from arena.bots.check import check_bot as examine
    from arena.bots.manifest import load_manifest

    folder = rogue(tmp_path, "good")
    proc = check_bot(mark, folder)
    took = float(re.search(r"; ([0-9.]+) s in all", proc.stdout).group(1))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # silent when quick (a loaded machine made a check of a few seconds take 10.7)
    assert took > cli.PROGRESS_S or "check matches played" not in proc.stderr, (took, proc.stderr)
    heard = []
    report = asyncio.run(examine(load_manifest(folder), on_match=lambda *a: heard.append(a)))
    assert [(n, of) for n, of, _ in heard] == [(n, report.matches) for n in range(1, 14)]
    assert all(a[2] <= b[2] for a, b in zip(heard, heard[1:]))
    on_match = cli.progress("good")
    for played, seconds in ((1, 4.0), (2, 10.5), (3, 12.0), (4, 21.0), (13, 40.0)):
        on_match(played, 13, seconds)
    assert capsys.readouterr().err.splitlines() == ["bot good: 2 of 13 check matches played in 10 s",
                                          "bot good: 4 of 13 check matches played in 21 s"]


def test_a_python_bot_started_by_another_python_is_told_to_use_the_arena_s(tmp_path, mark):
    """`command = "python3 bot.py"` starts a Python without the SDK: the check said
    "No module named 'ono99'" and that a bot must send a hello, not what to change."""
    folder = sdk_bot(tmp_path, "otherpy", """    name = "otherpy"

    def choose(self, view):
        return view.legal[0]
""")
    (folder / "bot.toml").write_text('name = "otherpy"\ncommand = "python3 bot.py"\n')
    proc = check_bot(mark, folder)
    hello = lines(proc)["hello"]
    assert "No module named 'ono99'" in hello, hello
    assert "start the bot with {python} in bot.toml's command ({python} bot.py)" in hello, hello
