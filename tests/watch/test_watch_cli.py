"""``arena watch`` as a user runs it: the real command in a subprocess, against a real
spectator service, off a terminal (a pipe: the log) and on one (a pseudo-terminal).

What it prints of a match is compared with what `arena match` prints of the same match:
`arena match`'s own live log follows each match the service serves (in process, see
support.spectators), and in the end-to-end tests the real `arena match --watch` and
`arena tournament --watch` run with real bot processes beside it.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from ono99.v1 import spectator_pb2, spectator_pb2_grpc
from support.launch import launched
from support.matches import spec
from support.processes import env_for
from support.spectators import ORGANISER_TOKEN, BackgroundService, Script
from support.terminal import Terminal

from arena.cli.match import describe_result
from arena.cli.match_log import start_text

ROOT = Path(__file__).resolve().parents[2]
ROGUE = ROOT / "tests" / "bots" / "rogue.py"
NAMES = ["ann", "bob", "cat", "dan"]


def command(*args) -> list[str]:
    return [sys.executable, "-m", "arena.cli.main", *map(str, args)]


def arena(mark: str, *args, timeout: float = 60, **env) -> subprocess.CompletedProcess:
    proc = subprocess.run(command(*args), cwd=ROOT, env={**env_for(mark), **env},
                          capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def watcher(mark: str, *args, **env) -> subprocess.Popen:
    """``arena watch ARGS`` with its output in a pipe (line mode), read as it comes."""
    return subprocess.Popen(command("watch", *args), cwd=ROOT, env={**env_for(mark), **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)


def read_until(proc: subprocess.Popen, done, timeout: float = 60) -> list[str]:
    """Lines from ``proc``'s stdout until ``done(lines)`` (or its end)."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while not done(lines):
        assert time.monotonic() < deadline, f"no end in {timeout} s:\n" + "\n".join(lines)
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
    return lines


def own_lines(stderr: str) -> list[str]:
    """stderr without gRPC's C core logging (it may log a server's goodbye, GOAWAY, at
    INFO level, before the command can tell it not to)."""
    return [line for line in stderr.splitlines() if not re.match(r"[IWE]\d{4} ", line)]


def expected(played) -> list[str]:
    """The lines a viewer prints of a whole match: its start, `arena match`'s live log of
    it, and `arena match`'s result line."""
    result = played.result()
    return ([start_text(played.match_id, result.spec.names)] + played.log_lines()
            + [f"match {played.match_id}: {describe_result(result)}"])


@pytest.fixture
def service():
    s = BackgroundService(organiser=True)
    yield s
    s.close()


def held_match(service: BackgroundService, seed: int, **script) -> tuple:
    """A four-seat match held at its 12th move until the test releases it."""
    script = Script(hold=12, **script)
    played = service.play(spec(NAMES, seed=seed, move_ms=60_000, bank_ms=60_000), script)
    service.wait_until(lambda: script.held, what="the match to reach its 12th move")
    return played, script


# ---------------------------------------------------------------- one match

def test_a_match_joined_midway_prints_the_lines_of_arena_match_then_exits(service, mark):
    # dan fails to answer early (a verdict in the snapshot the viewer joins with), cat
    # late (a verdict that arrives live)
    played, script = held_match(service, seed=11, fail={3: 2, 2: 6})
    proc = watcher(mark, service.address, "--match", played.match_id)
    try:
        service.wait_until(lambda: service.viewers(played.match_id) == 1, what="the viewer")
        service.call(script.release)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert err == ""
    lines = out.splitlines()
    assert lines == expected(played)
    verdicts = [line for line in lines if line.startswith("  verdict ")]
    assert [v.split(":")[0] for v in verdicts] == ["  verdict dan", "  verdict cat"]
    assert lines.index(verdicts[0]) < lines.index("  dan forfeits")   # as arena match puts it


def test_a_finished_match_is_printed_whole(service, mark):
    played = service.play(spec(NAMES[:3], seed=5), Script())
    played.result()
    proc = arena(mark, "watch", service.address, "--match", played.match_id)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == expected(played)


def test_a_server_that_comes_back_is_followed_on_without_a_line_lost_or_repeated(service, mark):
    played, script = held_match(service, seed=12)
    proc = watcher(mark, service.address, "--match", played.match_id)
    try:
        service.wait_until(lambda: service.viewers(played.match_id) == 1, what="the viewer")
        address = service.address
        service.stop_server()              # gone, while the match is held ...
        service.call(script.release)       # ... and goes on without the viewer
        time.sleep(1.0)
        service.start_server(address)      # back on the same port: the viewer resyncs
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines() == expected(played)
    [notice] = own_lines(err)
    assert re.fullmatch(rf"arena watch: the spectator service at {address} went away \(.*\); "
                        r"reconnecting\.\.\.", notice), err


# ---------------------------------------------------------------- TV

def test_tv_follows_one_match_after_another_and_says_when_the_server_is_gone(service, mark):
    proc = watcher(mark, service.address, "--tv")
    played = []
    try:
        for seed in (21, 22):
            match, script = held_match(service, seed=seed)
            service.wait_until(lambda: service.viewers(match.match_id) == 1, what="TV to join")
            service.call(script.release)
            match.result()
            played.append(match)
        ends = [f"match {m.match_id}: {describe_result(m.result())}" for m in played]
        lines = read_until(proc, lambda lines: ends[-1] in lines)
        service.stop_server()
        started = time.monotonic()
        rest, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert lines == expected(played[0]) + expected(played[1])
    assert rest == ""
    assert proc.returncode == 1
    assert own_lines(err)[-1] == (f"arena watch: error: the spectator service at "
                                    f"{service.address} went away and did not come back "
                                    "within 10 s")
    assert 8 < time.monotonic() - started < 20


# ---------------------------------------------------------------- errors and the list

def test_nothing_listening_is_one_line_within_a_few_seconds(mark):
    """One line after its connect timeout (5 s), which it says: not after a call's 30 s.
    The process's start comes on top, seconds on a loaded machine (11.5 s in all, once,
    where 10 s was asked)."""
    started = time.monotonic()
    proc = arena(mark, "watch", "127.0.0.1:9", "--tv")
    assert time.monotonic() - started < 25
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("arena watch: error: no spectator service at 127.0.0.1:9 "
                                  "(nothing answered within 5 s: ")
    assert len(proc.stderr.splitlines()) == 1


def test_the_servers_refusals_are_its_own_one_line(service, mark):
    played, script = held_match(service, seed=31)
    try:
        unknown = arena(mark, "watch", service.address, "--match", "nope")
        no_token = arena(mark, "watch", service.address, "--match", played.match_id,
                         "--token", "wrong")
        no_tournament = arena(mark, "watch", service.address, "--tournament", "nope")
    finally:
        service.call(script.release)
    # a request to change (exit 2), as arena show's unknown match and arena bots' wrong
    # token; they exited 1, as a service that is not there does
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr == "arena watch: error: no match 'nope' here\n"
    assert no_token.returncode == 2 and no_token.stdout == ""
    # a wrong token is named as wrong (it was reported as a missing one)
    assert no_token.stderr == ("arena watch: error: the organiser token given is not this "
                               "arena's (the one arena serve printed, or $ONO99_ORGANIZER_TOKEN "
                               "of the arena playing)\n")
    assert no_tournament.returncode == 2 and no_tournament.stdout == ""
    assert no_tournament.stderr.startswith("arena watch: error: no tournament 'nope' ")


@pytest.mark.parametrize("args, message", [
    (["localhost"], "'localhost' is not HOST:PORT"),
    ([""], "'' is not HOST:PORT"),                 # it followed the default address
    (["::1:50052"], "'::1:50052': write an IPv6 address in brackets: [::1]:50052"),
    (["unix:"], "'unix:': a unix socket needs a path"),
    (["127.0.0.1:1", "--tv", "--delay", "-1"], "--delay must be from 0 to 100,000 (turns)"),
    # past the protocol's int32: a traceback once connected
    (["127.0.0.1:1", "--tv", "--delay", "99999999999"], "--delay must be from 0 to 100,000"),
    (["127.0.0.1:1", "--tournament", "--delay", "2"], "--delay is for --match and --tv"),
])
def test_bad_arguments_are_one_line_and_exit_2(mark, args, message):
    proc = arena(mark, "watch", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"arena watch: error: {message}")


def test_the_organiser_view_shows_the_same_log(service, mark):
    played = service.play(spec(NAMES[:2], seed=8), Script())
    played.result()
    proc = arena(mark, "watch", service.address, "--match", played.match_id,
                 ONO99_ORGANIZER_TOKEN=ORGANISER_TOKEN)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == expected(played)


def test_with_no_match_to_list_it_says_so_on_stderr(service, mark):
    """Off a terminal it printed nothing at all (a terminal showed an empty table)."""
    proc = arena(mark, "watch", service.address)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout
    assert proc.stderr == f"arena watch: no live or recent matches at {service.address}\n"


def test_without_a_mode_it_lists_the_live_and_recent_matches(service, mark):
    done = [service.play(spec(NAMES[:2], seed=s), Script(), tournament="cup") for s in (1, 2)]
    for m in done:
        m.result()
    live, script = held_match(service, seed=3)
    try:
        proc = arena(mark, "watch", service.address)
    finally:
        service.call(script.release)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(rf"{live.match_id}  -  ann vs bob vs cat vs dan: live, \d+ turns, "
                        r"interest 0\.\d\d", lines[0])
    assert lines[1:] == [f"{m.match_id}  cup  ann vs bob: "
                         + re.sub(r", [\d.]+ s\]$", "]", describe_result(m.result()))
                         for m in reversed(done)]


def test_the_address_comes_from_the_environment(service, mark):
    played = service.play(spec(NAMES[:2], seed=4), Script())
    played.result()
    proc = arena(mark, "watch", "--match", played.match_id, ONO99_SPECTATORS=service.address)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == expected(played)


@pytest.mark.parametrize("signals", [[signal.SIGINT], [signal.SIGTERM],
                                     [signal.SIGHUP], [signal.SIGINT] * 3,
                                     [signal.SIGTERM, signal.SIGINT], "until it exits"])
def test_off_a_terminal_ctrl_c_or_sigterm_ends_watching_at_once(service, mark, signals):
    """Ctrl-C (and SIGTERM, as timeout or a service manager sends it) raised as
    KeyboardInterrupt wherever the viewer was, gRPC's own code included; once, under
    timeout, the viewer then hung for good at exit, closing its channel again
    (_ChannelCallState.__del__). Now they only ask it to stop: it leaves within a poll,
    exit status 0, however many arrive (the later ones while it closes; one that came
    after watching was over, as it exited, killed it: status -2, "until it exits")."""
    played, script = held_match(service, seed=43)
    proc = subprocess.Popen(launched(command("watch", service.address, "--tv")), cwd=ROOT,
                            env=env_for(mark), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith("match "), (first, proc.stderr.read() if not first else "")
        if signals == "until it exits":      # a SIGINT every 5 ms
            deadline = time.monotonic() + 10
            while proc.poll() is None and time.monotonic() < deadline:
                proc.send_signal(signal.SIGINT)
                time.sleep(0.005)
        else:
            for sig in signals:
                proc.send_signal(sig)
                time.sleep(0.05)
        # the hang was for good, the match it watches is held: 10 s tells it from a viewer
        # that stops (its waits look every 0.2 s) and closes its channel, which took over
        # the 3 s once asked here, on a loaded machine
        assert proc.wait(timeout=10) == 0, proc.stderr.read()
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        service.call(script.release)


# ---------------------------------------------------------------- on a terminal

def test_on_a_terminal_a_live_table_until_the_match_ends(service, mark):
    played, script = held_match(service, seed=41, think=0.02)
    term = Terminal(command("watch", service.address, "--match", played.match_id), ROOT,
                    env_for(mark))
    try:
        screen = term.wait_for(r"thinking \d+\.\d s")
        assert all(name in screen for name in NAMES)
        assert re.search(r"total [█░]+ +\d+ / 98", screen)
        assert "last plays" in screen and "live" in screen
        service.call(script.release)
        assert term.wait() == 0
        final = term.read(0.1)
        assert "result: " + describe_result(played.result()) in final
        assert term.settings_restored()
    finally:
        term.close()


def test_on_a_terminal_a_busy_tournament_is_redrawn_a_few_times_a_second(service, mark):
    """A busy ladder sends about 80 messages a second (each match started, then
    finished): `arena watch --tournament` redrew the whole terminal at each, 23% of a core
    (the thirtieth review). It draws at most every 0.1 s while messages keep coming, and
    what came last within 0.1 s of the quiet after them."""
    from arena.cli.watch import DRAW_EVERY_S, TICK_S
    from arena.tournament.standings import Played

    def stored(result) -> None:        # as a tournament does once a result is stored
        service.call(lambda: service.hub.tournament_result(
            "busy", Played.of_result(result.match_id, result.match_id, result), result.match_id))

    service.call(lambda: service.hub.tournament("busy", NAMES[:2], 0))
    term = Terminal(command("watch", service.address, "--tournament", "busy"), ROOT,
                    env_for(mark))
    try:
        term.wait_for(r" 0 matches")
        before = term.output.count(b"\x1b[H")      # each redraw starts at the top
        start = time.monotonic()
        played = [service.play(spec(NAMES[:2], seed=100 + i), Script(think=0.0), tournament="busy")
                  for i in range(60)]
        for match in played:
            stored(match.result())
        took = time.monotonic() - start
        term.wait_for(r" 60 matches", timeout=10)
        draws = term.output.count(b"\x1b[H") - before
        assert draws <= (took + TICK_S) / DRAW_EVERY_S + 5, (draws, took)
        term.interrupt()
        assert term.wait() == 0
    finally:
        term.close()


def test_on_a_terminal_ctrl_c_leaves_cleanly(service, mark):
    played, script = held_match(service, seed=42)
    term = Terminal(command("watch", service.address, "--tv"), ROOT, env_for(mark))
    try:
        term.wait_for(r"thinking \d+\.\d s")
        term.interrupt()
        assert term.wait() == 0
        assert "Traceback" not in term.read(0.1)
        assert term.settings_restored()
    finally:
        term.close()
        service.call(script.release)


# ---------------------------------------------------------------- with real arenas

def slow_bot(tmp_path: Path, name: str) -> Path:
    """A bot process that takes 30 ms over every answer (ROGUE_SLEEP): a game lasts long
    enough to be watched."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["{{python}}", "rogue.py", "slow_sometimes", "1"]\n')
    shutil.copy(ROGUE, folder / "rogue.py")
    return folder


def wait_for_text(proc: subprocess.Popen, out: Path, pattern: str) -> re.Match:
    """The first match of ``pattern`` in ``out`` (``proc``'s output), once it is there."""
    deadline = time.monotonic() + 60
    while not (found := re.search(pattern, out.read_text())):
        assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
        time.sleep(0.05)
    return found


def start_serving(mark: str, out: Path, *args,
                  listen: str = "127.0.0.1:0") -> tuple[subprocess.Popen, str]:
    """``arena ARGS --watch LISTEN`` (output to ``out``); and its spectators' address."""
    # Ctrl-C stops it, as at a terminal (even where this test runs with SIGINT ignored)
    proc = subprocess.Popen(launched(command(*args, "--watch", listen)), cwd=ROOT,
                            env={**env_for(mark), "ROGUE_SLEEP": "0.03"},
                            stdout=out.open("w"), stderr=subprocess.STDOUT)
    return proc, wait_for_text(proc, out, r"spectators: arena watch (\S+) --tv").group(1)


def slow_match(tmp_path: Path, mark: str, games: int) -> tuple[subprocess.Popen, Path, str]:
    """``arena match`` of two slow bots, ``games`` games, served to spectators: the
    process, its output and the spectators' address."""
    out = tmp_path / "match.out"
    match, address = start_serving(mark, out, "match", slow_bot(tmp_path, "slow"),
                                   slow_bot(tmp_path, "slower"), "--games", games,
                                   "--out", tmp_path / "logs")
    return match, out, address


def test_spectators_on_a_unix_socket_are_followed_at_its_path(tmp_path, mark):
    """`--watch unix:PATH` served there but printed `arena watch unix:1 --tv` (gRPC answers
    1 for a socket bound, which was taken for a port), and `arena watch` and `arena web`
    took HOST:PORT only."""
    where = f"unix:{tmp_path / 's.sock'}"
    out = tmp_path / "match.out"
    match, address = start_serving(mark, out, "match", slow_bot(tmp_path, "slow"),
                                   slow_bot(tmp_path, "slower"), "--games", 3,
                                   "--out", tmp_path / "logs", listen=where)
    try:
        assert address == where
        wait_for_text(match, out, r"─ game 1 of 3 ─")
        listed = arena(mark, "watch", address)
        assert listed.returncode == 0, listed.stderr
        assert re.search(r"^[0-9a-f]{16} .*slow vs slower", listed.stdout, re.M), listed.stdout
    finally:
        match.kill()


def test_tv_prints_what_arena_match_prints(tmp_path, mark):
    # TV shows live matches only: a viewer that comes after the last game sees none. The
    # games go on (a second each) until the viewer has printed a whole one, then Ctrl-C
    # stops them: a viewer slow to start (a loaded machine) still has games to join. It
    # is started once game 2 is under way, so it surely joins in the middle of the run.
    match, out, address = slow_match(tmp_path, mark, 200)
    try:
        wait_for_text(match, out, r"─ game 2 of 200 ─")
        proc = watcher(mark, address, "--tv")
        try:
            lines = read_until(proc, lambda lines: sum(line.startswith("match ") for line in lines) >= 2
                               and lines[-1].startswith("match ") and "[" in lines[-1])
        finally:
            proc.kill()
        match.send_signal(signal.SIGINT)
        assert match.wait(60) == 130
    finally:
        match.kill()
    printed = out.read_text()
    games = {}   # a game's result line -> its live log (the finished games of arena match)
    for found in re.finditer(r"─+ game (\d+) of 200 ─+\n(.*?)^game \1 \(seed \d+\): (.*?)$",
                             printed, re.S | re.M):
        games[found.group(3)] = found.group(2).splitlines()
    start, *log, end = lines
    assert re.fullmatch(r"match [0-9a-f]{16}: slow vs slower", start)
    result = end.split(": ", 1)[1]
    assert result in games, f"{result!r} is not one of arena match's results"
    assert log == games[result]


def test_a_command_that_ends_with_viewers_on_it_ends_their_streams_without_a_traceback(
        tmp_path, mark):
    """`arena match --watch` ended with `arena watch --tv` still on it: the server's stop
    cancelled the TV stream (waiting between matches for good) and gRPC printed the cancel
    as a bare traceback on the command's stderr (the twenty-fifth review: 3 runs of 3),
    and the viewer looked for the service for 10 s more, then failed (exit 1). The
    command's streams now end first, as finished ones (it is done: nothing comes back on
    its address): the command ends with exit 0 and nothing more said, and so does the
    viewer."""
    # 10 games of about 1.5 s: the viewer, started at the first, must join before the last
    # ends (with 3, a loaded machine started it too late, 5 runs in 10, and it then looked
    # for a service that was gone for 10 s)
    match, out, address = slow_match(tmp_path, mark, 10)
    try:
        wait_for_text(match, out, r"─ game 1 of 10 ─")
        proc = watcher(mark, address, "--tv")
        try:
            assert match.wait(120) == 0, out.read_text()
            got, err = proc.communicate(timeout=5)     # ends with the command
        finally:
            proc.kill()
    finally:
        match.kill()
    printed = out.read_text()
    assert "Traceback" not in printed and "CancelledError" not in printed, printed
    assert proc.returncode == 0 and own_lines(err) == [], err
    assert got.startswith("match "), got    # it was watching when the command ended


def test_a_tournament_is_followed_to_its_end_and_its_standings(tmp_path, mark):
    out = tmp_path / "tournament.out"
    db = tmp_path / "t.db"
    tournament, address = start_serving(
        mark, out, "tournament", slow_bot(tmp_path, "slow"), slow_bot(tmp_path, "slower"),
        "--games", 3, "--concurrency", 1, "--db", db, "--name", "cup")
    proc = watcher(mark, address, "--tournament")
    try:
        try:
            got, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired as exc:
            # whole: pytest's repr of the exception cut lines from the middle of each chunk
            # read (a CI run's failure looked like a watcher that skipped matches 2-4)
            printed, errors = (b.decode() if isinstance(b, bytes) else b
                               for b in (exc.output, exc.stderr))
            raise AssertionError(f"the watcher did not end within 120 s; it printed:\n"
                                 f"{printed}\n(stderr: {errors})\nthe tournament's "
                                 f"output:\n{out.read_text()}") from None
        ended = time.monotonic()
        assert tournament.wait(60) == 0
        assert time.monotonic() - ended < 5    # the viewer ended with the tournament
    finally:
        proc.kill()
        tournament.kill()
    assert proc.returncode == 0, err
    lines = got.splitlines()
    header = re.fullmatch(r"tournament cup: (\d) of 6 matches played; bots: slow, slower", lines[0])
    assert header, lines[0]
    finished = [line for line in lines if line.startswith("[")]
    assert [int(re.match(r"\[(\d)/6\]", line).group(1)) for line in finished] == list(
        range(int(header.group(1)) + 1, 7))
    for line in finished:
        assert re.fullmatch(r"\[\d/6\] match [0-9a-f]{16}: 1\. (slow|slower)   2\. "
                            r"(slow|slower)   \[last_standing, \d+ turns\]", line), line
    assert "standings of cup (6 matches)" in got
    stored = json.loads(arena(mark, "standings", "cup", "--db", db, "--json").stdout)
    for row in stored["standings"]:
        shown = re.search(rf"│ +{row['bot']} +│ +{row['elo']:.0f} │ +-(\d+) \+(\d+) │", got)
        assert shown, got
        minus, plus = map(int, shown.groups())   # the 95% interval, as distances from the Elo
        assert abs(minus - (row["elo"] - row["elo_low"])) <= 1
        assert abs(plus - (row["elo_high"] - row["elo"])) <= 1


# ---------------------------------------------------------------- a hostile service

#: a window title, a clipboard write, colours and a bidi override: a terminal obeys each
HOSTILE = "bob\x1b]0;TITLE\x1b\\\x1b]52;c;cm0gLXJmIH4K\x1b\\\x1b[31mRED\x1b[0m\u202egnp.exe"


class _Hostile(spectator_pb2_grpc.SpectatorServicer):
    def ListMatches(self, request, context):  # noqa: N802
        return spectator_pb2.ListMatchesResponse(matches=[spectator_pb2.MatchSummary(
            match_id="m1", tournament=HOSTILE, names=["ann", HOSTILE],
            status=spectator_pb2.MATCH_STATUS_LIVE)])

    def WatchMatch(self, request, context):  # noqa: N802
        context.abort(grpc.StatusCode.NOT_FOUND, HOSTILE)
        yield


def test_what_a_hostile_service_sends_is_printed_escaped(mark):
    """Whoever runs a spectator service (or sits on a plain connection to it) chose its
    strings: `arena watch` printed them raw, and the terminal set its title, wrote the
    clipboard, turned the line around. They are escaped, as a file's are."""
    server = grpc.server(futures.ThreadPoolExecutor(2))
    spectator_pb2_grpc.add_SpectatorServicer_to_server(_Hostile(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        listed = arena(mark, "watch", f"127.0.0.1:{port}")
        refused = arena(mark, "watch", f"127.0.0.1:{port}", "--match", "m1")
    finally:
        server.stop(None)
    assert listed.returncode == 0, listed.stderr
    for out in (listed.stdout + listed.stderr, refused.stdout + refused.stderr):
        assert "\x1b" not in out and "\u202e" not in out, repr(out)
        assert "bob\\x1b]0;TITLE" in out and "\\x1b]52;c;" in out and "\\u202egnp.exe" in out, repr(out)
    assert refused.returncode != 0
