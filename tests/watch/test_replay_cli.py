"""``arena replay`` as a user runs it: on the event log `arena match --out` wrote, on a
record saved from the spectator service, and on a tournament's database; off a terminal
(the log, compared with what `arena match` printed) and on one (the keys)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import env_for, kill_marked, new_mark
from support.requirements import needs_module
from rich.text import Text
from support.terminal import Terminal

from arena.cli.match_log import event_lines, result_text
from arena.rules.events import event_from_dict
from arena.store import open_store
from arena.watch import records, wire

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
LATENCY = re.compile(r"  \d+\.\d ms$")


def command(*args) -> list[str]:
    return [sys.executable, "-m", "arena.cli.main", *map(str, args)]


def arena(mark: str, *args, cwd=ROOT, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run(command(*args), cwd=cwd, env=env_for(mark), capture_output=True,
                          text=True, timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One game of `arena match` (real bots): its output and its event log."""
    out = tmp_path_factory.mktemp("match")
    mark = new_mark()
    try:
        proc = arena(mark, "match", BOTS / "greedy", BOTS / "random", "--seed", 7,
                     "--ruleset", "classic", "--out", out)
    finally:
        kill_marked(mark)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out / "game-1.jsonl"


def arena_match_lines(stdout: str) -> tuple[list[str], str]:
    """What `arena match` printed of its game: the event lines (times left out: a log
    keeps none), and its result line's result."""
    block = re.search(r"─+ game 1 of 1 ─+\n(.*?)^game 1 \(seed \d+\): (.*?)$", stdout, re.S | re.M)
    return [LATENCY.sub("", line) for line in block.group(1).splitlines()], block.group(2)


def test_an_event_log_replays_as_arena_match_printed_it(played, mark):
    stdout, log = played
    events, result = arena_match_lines(stdout)
    match_id = json.loads(log.read_text().splitlines()[0])["match_id"]
    proc = arena(mark, "replay", log)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines() == ([f"match {match_id}: greedy vs random"] + events
                                        + [f"match {match_id}: {result}"])


def test_a_log_read_from_a_pipe_replays_the_same(played, mark):
    """``arena replay <(zcat game.jsonl.gz)``: a pipe is read as a file is (a FIFO waits
    for its writer, as any reader does)."""
    _, log = played
    read, write = os.pipe()
    feeder = subprocess.Popen(["cat", str(log)], stdout=write)
    os.close(write)
    try:
        proc = subprocess.run(command("replay", f"/dev/fd/{read}"), cwd=ROOT, env=env_for(mark),
                              capture_output=True, text=True, timeout=120, pass_fds=(read,))
    finally:
        os.close(read)
        feeder.wait(10)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == arena(mark, "replay", log).stdout


def test_turn_starts_at_that_frame(played, mark):
    _, log = played
    whole = arena(mark, "replay", log).stdout.splitlines()
    record = records.from_file(log)
    n = 10
    before = sum(len(event_lines(wire.frame_events(f), record.match.names))
                 for f in record.frames[:n])
    proc = arena(mark, "replay", log, "--turn", n)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == whole[:1] + whole[1 + before:]
    assert re.fullmatch(r" +(greedy|random) plays +\S+ -> +\d+", lines[1])   # frame 10's play


def test_a_record_saved_from_the_spectator_service_replays_the_same(played, mark, tmp_path):
    _, log = played
    saved = tmp_path / "record.json"
    saved.write_text(records.to_json(records.from_file(log)))
    proc = arena(mark, "replay", saved)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == arena(mark, "replay", log).stdout


def test_names_in_a_file_from_anyone_act_on_no_terminal(played, mark, tmp_path):
    """A record or an event log can come from anyone: a seat name holding escape
    sequences (a terminal title, a clipboard write, a link) is shown as escapes."""
    _, log = played
    lines = log.read_text().splitlines()
    header = json.loads(lines[0])
    header["seats"] = ["\x1b]0;PWNED\x07greedy", "random\u202e"]
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    proc = arena(mark, "replay", hostile)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout
    assert "\\x1b]0;PWNED\\x07greedy vs random\\u202e" in proc.stdout.splitlines()[0]


def test_a_tournament_match_replays_by_number_or_by_id(tmp_path, mark):
    db = tmp_path / "arena.db"
    proc = arena(mark, "tournament", BOTS / "greedy", BOTS / "random", BOTS / "lowest",
                 "--table-size", 3, "--games", 1, "--ruleset", "classic", "--db", db, "-q")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(arena(mark, "matches", "--db", db, "--json").stdout)
    match = listed[-1]
    by_number = arena(mark, "replay", match["id"], "--db", db)
    by_id = arena(mark, "replay", match["match_uid"], "--db", db)
    assert by_number.returncode == 0, by_number.stderr
    assert by_number.stdout == by_id.stdout
    store = open_store(str(db))
    try:
        events = [event_from_dict(e) for e in store.events(match["id"])]
    finally:
        store.close()
    names = match["bots"]
    assert by_number.stdout.splitlines() == (
        [f"match {match['match_uid']}: " + " vs ".join(names)]
        + [Text.from_markup(line).plain for line in event_lines(events, names)]
        + [f"match {match['match_uid']}: " + result_text(
            names, match["ranking"], match["status"], match["termination"], match["turns"],
            match["duration_s"])])
    # in the folder of the database, --db may be left out
    assert arena(mark, "replay", match["id"], cwd=tmp_path).stdout == by_number.stdout


@pytest.mark.parametrize("case", ["no file", "not a record", "JSON of something else",
                                  "a seat it does not have", "a card no deck has",
                                  "unknown match", "no database", "an empty file",
                                  "events with no match line", "escapes in a record",
                                  "escapes in an event log", "a file that is no database"])
def test_what_cannot_be_replayed_is_one_line_and_exit_2(tmp_path, mark, case):
    """A match, a file or a database that is not there, or not what it should be, is a
    request to change: exit 2, as arena show says it (it was 1, as for a failure)."""
    db = tmp_path / "empty.db"
    open_store(str(db)).close()
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "other.json").write_text('{"x": 1}')   # parsed as a record of nothing, once
    # records may come from anyone: these were IndexError and ValueError tracebacks
    match = '{"match": {"matchId": "m1", "names": ["a", "b"]}, "frames": [{"events": [%s]}]}'
    (tmp_path / "seat.json").write_text(match % '{"seatForfeited": {"seat": 42}}')
    (tmp_path / "card.json").write_text(match % '{"cardPlayed": {"seat": 1, "card": 999}}')
    # these two said "(StopIteration: )"
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "events.jsonl").write_text('{"type": "event"}\n{"type": "event"}\n')
    # the file's own bytes in the error line: a terminal would run them (a title, a clear)
    (tmp_path / "esc.json").write_text('{"match": {"started_at": "\\u001b]0;TITLE\\u001b\\\\"}, '
                                       '"frames": [{}]}')
    (tmp_path / "esc.jsonl").write_text('{"type": "match", "seats": ["a", "b"], "ruleset": '
                                        '"modern", "match_id": "m", "seed": 1, "time_control": '
                                        '{"\\u001b[2J": 1}}\n{"type": "result"}\n')
    (tmp_path / "garbage.db").write_text("not a database\n")
    args, message = {
        "no file": ([tmp_path / "gone.jsonl"], f"cannot read {tmp_path / 'gone.jsonl'}: No such file"),
        "not a record": ([tmp_path / "notes.txt"], "is neither an arena match event log nor a "
                                                   "match record"),
        "JSON of something else": ([tmp_path / "other.json"], "is not a match record: it "
                                                             "holds no match and no frames"),
        "a seat it does not have": ([tmp_path / "seat.json"], "is not a match record: seat 42 "
                                                              "is not a seat of its 2"),
        "a card no deck has": ([tmp_path / "card.json"], "is not a match record: card 999 is "
                                                         "not a value of Card"),
        "unknown match": (["123", "--db", db], f"no match '123' in {db}"),
        "no database": (["123", "--db", tmp_path / "none.db"], "123 is not a file, and there is "
                                                               "no database at"),
        "an empty file": ([tmp_path / "empty.jsonl"], "empty.jsonl is neither an arena match "
                                                      "event log nor a match record (it is empty)"),
        "events with no match line": ([tmp_path / "events.jsonl"], "events.jsonl is neither an "
                                      "arena match event log nor a match record (it has no "
                                      "match line)"),
        "escapes in a record": ([tmp_path / "esc.json"], "\\x1b]0;TITLE\\x1b"),
        "escapes in an event log": ([tmp_path / "esc.jsonl"], "'\\x1b[2J'"),
        "a file that is no database": (["1", "--db", tmp_path / "garbage.db"],
                                       "file is not a database"),
    }[case]
    proc = arena(mark, "replay", *args)
    assert "\x1b" not in proc.stderr, repr(proc.stderr)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("arena replay: error: ") and message in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_a_database_that_does_not_answer_is_one_line_and_exit_1(mark):
    """A failure, not a request to change: it may work later."""
    needs_module("psycopg")
    url = "postgresql://arena@127.0.0.1:1/arena"          # nothing listens at port 1
    proc = arena(mark, "replay", "1", "--db", url)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"arena replay: error: cannot connect to {url}: ")
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--turn", "100000"], "--turn 100000 is not a frame of this match: 0 to "),
    (["--turn", "-1"], "--turn -1 is not a frame of this match"),
    (["--speed", "11"], "--speed must be between 0.25 and 10"),
])
def test_bad_options_are_one_line_and_exit_2(played, mark, args, message):
    _, log = played
    proc = arena(mark, "replay", log, *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"arena replay: error: {message}")


def test_on_a_terminal_the_keys_step_through_the_match(played, mark):
    _, log = played
    last = len(records.from_file(log).frames) - 1
    term = Terminal(command("replay", log), ROOT, env_for(mark))
    try:
        screen = term.wait_for(r"frame [12]/\d+  1x  playing")
        assert "greedy" in screen and "random" in screen and "last plays" in screen
        term.type("\x1b[F")                                  # End
        term.wait_for(rf"frame {last}/{last}  1x  paused")
        term.type("\x1b[D" + "p")                            # left, p
        term.wait_for(rf"frame {last - 2}/{last}  1x  paused")
        term.type("\x1b[H")                                  # Home
        term.wait_for(rf"frame 0/{last}  1x  paused")
        term.type("n+")
        term.wait_for(rf"frame 1/{last}  2x  paused")
        term.type(" ")
        term.wait_for(rf"frame \d+/{last}  2x  playing")
        term.type("q")
        assert term.wait() == 0
        assert term.settings_restored()
    finally:
        term.close()


def test_on_a_terminal_ctrl_c_leaves_cleanly(played, mark):
    _, log = played
    term = Terminal(command("replay", log, "--speed", "0.25"), ROOT, env_for(mark))
    try:
        term.wait_for(r"frame 0/\d+  0\.25x  playing")
        term.interrupt()
        assert term.wait() == 0
        assert "Traceback" not in term.read(0.1)
        assert term.settings_restored()
    finally:
        term.close()


def test_on_a_terminal_without_keys_it_plays_through_and_ends(played, mark):
    _, log = played
    last = len(records.from_file(log).frames) - 1
    term = Terminal(command("replay", log, "--speed", "10", "--turn", max(0, last - 20)), ROOT,
                    env_for(mark), stdin=subprocess.DEVNULL)
    try:
        assert term.wait(30) == 0
        assert "result: 1. " in term.read(0.1)
    finally:
        term.close()


def test_a_time_just_under_a_half_hundredth_reads_the_same_played_and_replayed():
    """`arena match` printed a game's time from the clock (0.1649999 s: 0.16 s), its event
    log keeps it to the microsecond (0.165 s), and `arena replay` printed that: 0.17 s,
    one line of the replay unlike the game's (a CI run of the test above). Both print
    the time as the log keeps it."""
    from arena.cli.match_log import result_text

    played = 0.16499996
    logged = round(played, 6)              # as MatchResult.to_dict writes it
    line = result_text(["a", "b"], [[0], [1]], "finished", "last_standing", 3, played)
    assert line == result_text(["a", "b"], [[0], [1]], "finished", "last_standing", 3, logged)
    assert line.endswith("[last_standing, 3 turns, 0.17 s]")
