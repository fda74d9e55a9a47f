"""The C++ client (clients/cpp) through its sample bot, bots/cpp-counter.

A module fixture builds the bot with the `setup` command of its bot.toml, as the arena
will; then the bot plays real matches on a real referee against the Python sample bots
on every ruleset, and speaks the raw protocol to a scripted referee (64-bit turn ids,
rejections, goodbye, refusal, an unreachable or vanishing referee, exit codes, TLS), and
comes back to a real referee after its connection is broken mid-match or before its
welcome, or its host was refused as too many for a while, or its server restarted (refusing
it as shutting down meanwhile).

Only a missing cmake, protoc or grpc_cpp_plugin skips these tests; any other build
failure fails them, with CMake's message (which names the Debian packages to install).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from ono99.v1 import game_pb2, referee_pb2, referee_pb2_grpc

from support.addresses import REFUSED, TAKEN, UPPER_CASE
from support.matches import RULESETS, play, replays, spec
from support.proxy import Relay
from support.scripted import (
    Stream, finish, goodbye, late_reconnect, match_start, plays, scripted_run, serve, told_goodbye,
    turn, welcome,
)
from support.reconnect import (
    NOTICED_WITHIN, TOO_MANY_HELLOS,
    check_too_many_past_the_window, cut_before_welcome, one_match, restart, stalled, too_many,
    welcomed,
)
from support.requirements import missing as missing_tool

from arena.bots.manifest import load_manifest
from arena.bots.setup import SetupError, ensure_setup
from arena.referee import lobby
from arena.referee.results import Status, VerdictKind
from arena.referee.server import RefereeServer

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
CPP_BOT = BOTS / "cpp-counter"
PACKAGES = ("g++ make cmake pkg-config protobuf-compiler protobuf-compiler-grpc "
            "libprotobuf-dev libgrpc++-dev")
BUILD_TIMEOUT = 600  # a clean build takes about 30 s on 2 cores; a loaded machine, more

# the module fixture's build runs inside the first test's time limit
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT + 120)



# ---------------------------------------------------------------- building


@pytest.fixture(scope="module")
def cpp_bot() -> Path:
    """The built bot folder (its executable is build/cpp-counter)."""
    missing = [tool for tool in ("cmake", "protoc", "grpc_cpp_plugin") if shutil.which(tool) is None]
    if missing:
        missing_tool(f"the C++ toolchain is missing ({', '.join(missing)} not found); install it "
                    f"with: apt-get install -y --no-install-recommends {PACKAGES} "
                    "(clients/cpp/install-deps.sh)")
    # the arena's own setup: once per version of the bot's sources
    started = time.monotonic()
    try:
        result = ensure_setup(load_manifest(CPP_BOT), BUILD_TIMEOUT)
    except SetupError as exc:
        pytest.fail(str(exc), pytrace=False)
    print(f"{CPP_BOT.name}: {'built' if result.ran else 'up to date'} in "
          f"{time.monotonic() - started:.1f} s")
    return CPP_BOT


def test_the_clients_unit_tests_pass(cpp_bot, tmp_path):
    """clients/cpp/tests (the model and the driver, no network), built as the top-level
    project, as its CMakeLists builds them; a bot's build leaves them out."""
    sdk = ROOT / "clients" / "cpp"
    build = tmp_path / "build"
    for step in (["cmake", "-S", sdk, "-B", build, "-DCMAKE_BUILD_TYPE=Release"],
                 ["cmake", "--build", build, "-j", "2", "--target", "ono99bot_tests"]):
        done = subprocess.run(step, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run = subprocess.run([build / "ono99bot_tests"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "all checks passed" in run.stdout, run.stdout + run.stderr


# ---------------------------------------------------------------- real matches

def assert_complete_legal_game(result, seats: int) -> None:
    assert result.status == Status.FINISHED
    assert result.verdicts == []
    assert sorted(s for group in result.ranking for s in group) == list(range(seats))
    assert replays(result)  # the referee's record is a real game: it replays from the seed


@pytest.mark.parametrize("others, cpp_seat", [
    (["counter"], 0),
    (["counter", "greedy", "random"], 2),
], ids=["2-seats", "4-seats"])
def test_plays_every_ruleset_against_the_python_bots(cpp_bot, others, cpp_seat):
    dirs = [BOTS / name for name in others]
    dirs.insert(cpp_seat, cpp_bot)
    seats = len(dirs)
    results = play(dirs, lambda names: [spec(names, ruleset, seed, options)
                                        for ruleset, options in RULESETS for seed in (1, 2)])
    for result in results:
        assert_complete_legal_game(result, seats)
        stats = result.stats[cpp_seat]
        assert stats.rejections == 0
    assert sum(r.stats[cpp_seat].moves for r in results) > 0


@pytest.mark.parametrize("ruleset, options", [RULESETS[0], RULESETS[2], RULESETS[3], RULESETS[5]],
                         ids=["modern", "classic-points", "classic-99-on-zero", "set99-lowest"])
def test_makes_the_python_counters_moves(cpp_bot, ruleset, options):
    """The port is faithful: with the same seeds, a table with cpp-counter plays exactly
    the games the same table plays with the Python counter."""
    others = [BOTS / "greedy", BOTS / "random", BOTS / "pusher"]
    seeds = (11, 12, 13)

    def games(counter):
        results = play([counter, *others],
                       lambda names: [spec(names, ruleset, s, options) for s in seeds])
        return [r.events for r in results]

    cpp_games = games(cpp_bot)
    assert all(len(events) > 20 for events in cpp_games)
    assert cpp_games == games(BOTS / "counter")


def test_beats_random_clearly(cpp_bot):
    results = play([cpp_bot, BOTS / "random"], lambda names: [spec(names, seed=s) for s in range(1, 61)])
    wins = sum(r.ranking[0] == (0,) for r in results)
    assert wins >= 33, f"cpp-counter won {wins} of 60"  # the Python counter wins ~69%


# ---------------------------------------------------------------- the raw protocol

BINARY_NAME = "build/cpp-counter"


def bot_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONO99_")}
    env.update(extra)
    return env


async def start_bot(bot_dir: Path, *args: str, env: dict[str, str] | None = None):
    return await asyncio.create_subprocess_exec(
        str(bot_dir / BINARY_NAME), *args, env=env or bot_env(), cwd=bot_dir,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)


C = game_pb2.Card


def test_echoes_64_bit_turn_ids_retries_after_a_rejection_and_exits_0_on_goodbye(cpp_bot, tmp_path):
    address = f"unix:{tmp_path / 'ref.sock'}"
    seen: dict[str, object] = {}

    async def script(stream: Stream):
        hello = await stream.read()
        seen["hello"] = hello
        await stream.send(welcome=referee_pb2.Welcome(protocol_version=1, referee="scripted",
                                                      bot_name="cpp-counter", session_id="s1"))
        await stream.send(match_start=match_start())
        answers = []
        for turn_id in (2**63 - 1, 2**63, 2**63 + 12345, 2**64 - 1):
            await stream.send(turn=turn(turn_id, [C.CARD_3, C.CARD_9, C.CARD_REVERSE],
                                        [C.CARD_3, C.CARD_9, C.CARD_REVERSE]))
            answers.append((await stream.read()).action)
        seen["answers"] = answers
        # a refused answer: the bot tries another legal card for the same (huge) turn id
        first = answers[-1].card
        await stream.send(rejected=referee_pb2.ActionRejected(
            turn_id=2**64 - 1, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason="scripted refusal"))
        seen["retry"] = (await stream.read()).action
        seen["first"] = first
        await stream.send(match_end=referee_pb2.MatchEnd(
            match_id="m1", termination="last_standing",
            ranking=[game_pb2.Place(seats=[0]), game_pb2.Place(seats=[1])]))
        await stream.send(goodbye=referee_pb2.Goodbye(reason="all done"))

    async def scenario():
        server, servicer, _ = await serve(script, address)
        try:
            proc = await start_bot(cpp_bot, "--referee", address, "--token", "tok", "--name", "cee")
            await asyncio.wait_for(asyncio.shield(servicer.done), 15)
            return await finish(proc)
        finally:
            await server.stop(0.5)

    rc, err = asyncio.run(scenario())
    assert rc == 0, err
    hello = seen["hello"].hello
    assert (hello.name, hello.token, hello.protocol_version) == ("cee", "tok", 1)
    assert hello.sdk.startswith("ono99-cpp/")
    answers = seen["answers"]
    assert [a.turn_id for a in answers] == [2**63 - 1, 2**63, 2**63 + 12345, 2**64 - 1]
    assert all(a.card in (C.CARD_3, C.CARD_9, C.CARD_REVERSE) for a in answers)
    retry = seen["retry"]
    assert retry.turn_id == 2**64 - 1
    assert retry.card != seen["first"] and retry.card in (C.CARD_3, C.CARD_9, C.CARD_REVERSE)
    assert "action rejected (ERROR_CODE_ILLEGAL_PLAY): scripted refusal" in err


def run_scripted(cpp_bot, tmp_path, script, *args: str, timeout: float = 15):
    """The bot against ``script`` on a scripted referee: exit code, stderr, and the seconds
    from its first connection to its exit."""
    return scripted_run([cpp_bot / BINARY_NAME], script, tmp_path, *args, timeout=timeout,
                        env=bot_env(), cwd=cpp_bot)


def test_after_a_failed_write_the_match_end_and_goodbye_are_still_read(cpp_bot):
    """The referee ends the match and the stream while the bot answers (as after too many
    refused actions): a relay hands the bot the referee's last messages and the stream's
    end in one burst, so its answers to them cannot be written. The bot reads them all,
    goodbye included, and exits 0; it threw them away unread, and said "the referee closed
    the stream without a goodbye", exit 5."""
    cards = [C.CARD_1, C.CARD_2, C.CARD_3, C.CARD_4, C.CARD_5, C.CARD_6, C.CARD_7, C.CARD_8]

    async def scenario():
        relay = None

        async def script(stream: Stream):
            await welcome(stream)
            await stream.send(match_start=match_start())
            await stream.send(turn=turn(1, cards, cards))
            await stream.read()
            relay.holding = True
            for _ in cards[1:]:   # each asks the bot for another card
                await stream.send(rejected=referee_pb2.ActionRejected(
                    turn_id=1, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason="scripted"))
            await stream.send(match_end=referee_pb2.MatchEnd(match_id="m1",
                                                             termination="aborted"))
            await stream.send(goodbye=referee_pb2.Goodbye(reason="scripted"))
            asyncio.get_running_loop().call_later(0.3, relay.release)
            stream.fail(grpc.StatusCode.INVALID_ARGUMENT, "scripted end")

        server, _, port = await serve(script, "127.0.0.1:0")
        try:
            async with Relay(f"127.0.0.1:{port}") as relay:
                proc = await start_bot(cpp_bot, "--referee", relay.address, "--token", "t",
                                       "--reconnect-timeout", "0")
                return await finish(proc)
        finally:
            await server.stop(0)

    rc, err = asyncio.run(scenario())
    assert rc == 0, err
    assert "without a goodbye" not in err


def test_no_welcome_within_the_connect_timeout_breaks_the_stream(cpp_bot, tmp_path):
    """A server that takes the stream and never answers the hello: the bot gives up after
    its connect timeout, as after a broken stream (it waited forever)."""
    async def silent(stream: Stream):
        await stream.read()
        await asyncio.sleep(60)

    rc, err, took = run_scripted(cpp_bot, tmp_path, silent, "--connect-timeout", "1",
                                 "--reconnect-timeout", "0")
    assert rc == 5, err
    assert "error: no welcome from the referee within 1 s of the hello" in err
    assert took < 5


def test_welcomes_each_followed_at_once_by_a_break_end_within_the_reconnect_window(cpp_bot,
                                                                                    tmp_path):
    """A referee that welcomes the bot and breaks the stream at once, each time: every
    welcome restarted the reconnect window, and the bot tried forever."""
    async def script(stream: Stream):
        await welcome(stream)
        stream.fail(grpc.StatusCode.INTERNAL, "scripted break")

    rc, err, took = run_scripted(cpp_bot, tmp_path, script, "--reconnect-timeout", "1")
    assert rc == 5, err[-2000:]
    assert ("error: could not reconnect to the referee within 1 s (last: connection to the "
            "referee broke: INTERNAL: scripted break)") in err
    assert took < 5


def test_a_break_after_a_late_reconnect_and_a_longer_session_gets_a_fresh_window(cpp_bot,
                                                                                   tmp_path):
    """The bot reconnects late in its window (after 2.2 s of 3), stays 1.5 s (longer than
    the SDK's kQuickBreak, 1 s), and its stream breaks again: it reconnects in a fresh
    window, with the newest session's resume key. It counted the break against the old
    window, spent by then, and exited 5 without a single try."""
    hellos: list[referee_pb2.Hello] = []
    script = late_reconnect(hellos)
    rc, err, took = run_scripted(cpp_bot, tmp_path, script, "--reconnect-timeout", "3")
    assert rc == 0, err[-2000:]
    assert err.count("reconnected to the referee after") == 2, err[-2000:]
    assert "scripted break 2; reconnecting for up to 3 s" in err
    assert [h.resume_key for h in hellos] == ["", "k1", "k2"]
    assert took < 10


def test_a_silent_connection_is_noticed_and_the_bot_reconnects(cpp_bot):
    """Its connection goes silent, no end closed: the bot's pings go unanswered, it drops
    the connection and comes back with its resume key (it waited forever)."""
    rc, err, took = asyncio.run(stalled(command=[str(cpp_bot / BINARY_NAME)]))
    assert took is not None and took < NOTICED_WITHIN, err
    assert "warning: connection to the referee broke: UNAVAILABLE" in err, err
    assert "reconnected to the referee after" in err
    assert rc == 0, err


def test_a_stream_that_ends_without_goodbye_exits_5(cpp_bot, tmp_path):
    address = f"unix:{tmp_path / 'ref.sock'}"

    async def script(stream: Stream):
        await stream.read()
        await stream.send(welcome=referee_pb2.Welcome(protocol_version=1))
        # returning ends the stream with status OK and no goodbye

    async def scenario():
        server, servicer, _ = await serve(script, address)
        try:
            proc = await start_bot(cpp_bot, env=bot_env(ONO99_REFEREE=address, ONO99_TOKEN="t",
                                                        ONO99_RECONNECT_TIMEOUT="0"))
            await asyncio.wait_for(asyncio.shield(servicer.done), 15)
            return await finish(proc)
        finally:
            await server.stop(0.5)

    rc, err = asyncio.run(scenario())
    assert rc == 5, err
    assert "the referee closed the stream without a goodbye" in err


# A hostile referee's strings: a terminal title, colours, a line erased and a fake line
ESCAPES = "\x1b]0;TITLE\x07\x1b[31mRED\x1b[0m\x1b[2K\r\nFAKE: all good\u202e"
SHOWN = "\\x1b]0;TITLE\\x07\\x1b[31mRED\\x1b[0m\\x1b[2K\\x0d\\x0aFAKE: all good\\u202e"


def test_more_than_100000_events_for_a_match_break_the_session(cpp_bot, tmp_path):
    """100001 events for one match, in messages under gRPC's 4 MB: the bot breaks the
    session as a dropped connection does (exit 5 with no reconnect window). It kept every
    event: a referee that streamed events grew it to GBs in 30 s."""
    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(match_start=match_start())
        for count in (40000, 40000, 20000, 1):
            await stream.send(events=referee_pb2.Events(match_id="m1", events=plays(count)))
        await asyncio.sleep(10)

    rc, err, _ = run_scripted(cpp_bot, tmp_path, script, "--reconnect-timeout", "0")
    assert rc == 5, err[-2000:]
    assert "error: the referee sent more than 100000 events for match m1\n" in err


def test_hostile_strings_are_escaped_and_cut_and_unanswerable_turns_skipped(cpp_bot, tmp_path):
    """A rejection of no open turn prints nothing (1 MiB reasons in a loop wrote GBs); one
    of the open turn prints its reason escaped and cut. A turn with no legal card, or that
    puts the bot at a seat it does not have, is not answered (the bot died with SIGSEGV):
    the bot plays on to the goodbye and exits 0."""
    answers = []
    reason = ESCAPES + "x" * (1 << 20)

    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(rejected=referee_pb2.ActionRejected(
            turn_id=5, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason="no turn is open"))
        await stream.send(match_start=match_start())
        await stream.send(turn=turn(1, [C.CARD_3], []))
        outside = turn(2, [C.CARD_3], [C.CARD_3])
        outside.view.seat = 2
        await stream.send(turn=outside)
        await stream.send(turn=turn(3, [C.CARD_3, C.CARD_4], [C.CARD_3, C.CARD_4]))
        answers.append((await stream.read()).action)
        await stream.send(rejected=referee_pb2.ActionRejected(
            turn_id=3, code=referee_pb2.ERROR_CODE_STALE_TURN, reason=reason))
        await stream.send(rejected=referee_pb2.ActionRejected(
            turn_id=2, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason="not the open turn"))
        await stream.send(match_end=referee_pb2.MatchEnd(match_id="m1", termination="aborted"))
        await stream.send(goodbye=referee_pb2.Goodbye(reason=ESCAPES))

    rc, err, _ = run_scripted(cpp_bot, tmp_path, script)
    assert rc == 0, err[-2000:]
    assert len(err) < 3000 and "\x1b" not in err, err[-2000:]
    assert [a.turn_id for a in answers] == [3]
    assert "warning: the referee's turn 1 of match m1 offers no legal card; not answered\n" in err
    assert ("warning: the referee's turn 2 of match m1 puts the bot at seat 2 of 2; "
            "not answered\n") in err
    more = len(reason) - 300
    assert (f"warning: action rejected (ERROR_CODE_STALE_TURN): {SHOWN}"
            f"{'x' * (300 - len(ESCAPES))}... ({more} more characters)\n") in err
    assert "no turn is open" not in err and "not the open turn" not in err


async def refuse_with_escapes(stream: Stream):
    await stream.read()
    await stream.send(refusal=referee_pb2.Refusal(code=referee_pb2.REFUSAL_CODE_BAD_TOKEN,
                                                  reason=ESCAPES))


async def break_with_escapes(stream: Stream):
    await welcome(stream)
    stream.fail(grpc.StatusCode.INTERNAL, ESCAPES)


@pytest.mark.parametrize("script, exit_code, said", [
    (refuse_with_escapes, 3, "referee refused the connection (REFUSAL_CODE_BAD_TOKEN): "),
    (break_with_escapes, 5, "connection to the referee broke: INTERNAL: "),
], ids=["refusal", "status"])
def test_a_refusal_reason_and_status_details_are_escaped(cpp_bot, tmp_path, script, exit_code,
                                                         said):
    """They reached the terminal byte for byte: escape sequences included."""
    rc, err, _ = run_scripted(cpp_bot, tmp_path, script, "--reconnect-timeout", "0")
    assert rc == exit_code, err
    assert f"error: {said}{SHOWN}\n" in err
    assert "\x1b" not in err


@pytest.mark.parametrize("reconnect, message", [
    ("0", "error: connection to the referee broke: "),
    ("1", "error: could not reconnect to the referee within 1 s (last: no referee reachable at "),
])
def test_a_referee_that_vanishes_exits_5(cpp_bot, reconnect, message):
    """The bot tries to get its connection back for --reconnect-timeout s, then gives up."""
    async def scenario():
        server = await RefereeServer.start("unix")
        token = server.lobby.register("orphan").token
        proc = await start_bot(cpp_bot, "--referee", server.address, "--token", token,
                               "--reconnect-timeout", reconnect, "-v")
        await welcomed(proc)            # only a welcomed bot has a session to get back
        # from before the cut: the bot may see its stream end (and its clock start)
        # before stop() returns here (the C++ bot gave up 5 ms short of 1 s after it)
        started = time.monotonic()
        await server.server.stop(None)  # no goodbye: the stream is cut
        try:
            return (*await finish(proc), time.monotonic() - started)
        finally:
            await server.stop()

    rc, err, took = asyncio.run(scenario())
    assert rc == 5, err
    assert message in err
    assert float(reconnect) <= took < float(reconnect) + 3


@pytest.mark.parametrize("token, code, reason", [
    ("not-a-token", "REFUSAL_CODE_BAD_TOKEN", "unknown token"),
    ("", "REFUSAL_CODE_BAD_TOKEN", "no token in the hello"),
])
def test_a_refused_hello_exits_3_with_the_reason(cpp_bot, token, code, reason):
    async def scenario():
        server = await RefereeServer.start("unix")
        try:
            server.lobby.register("someone")
            proc = await start_bot(cpp_bot, env=bot_env(ONO99_REFEREE=server.address,
                                                        ONO99_TOKEN=token))
            return await finish(proc)
        finally:
            await server.stop()

    rc, err = asyncio.run(scenario())
    assert rc == 3, err
    assert f"referee refused the connection ({code}): {reason}" in err


def test_a_real_referee_says_goodbye_and_the_bot_exits_0(cpp_bot):
    async def scenario():
        server = await RefereeServer.start("tcp")   # the other transport than the matches'
        try:
            reg = server.lobby.register("cpp")
            proc = await start_bot(cpp_bot, "-v", env=bot_env(
                ONO99_REFEREE=server.address, ONO99_TOKEN=reg.token, ONO99_BOT_NAME="cpp"))
            session = await server.lobby.wait_session(reg.token, 10)
        finally:
            await server.stop("all done")
        return reg.token, session, await finish(proc)

    token, session, (rc, err) = asyncio.run(scenario())
    assert rc == 0, err
    assert session.sdk.startswith("ono99-cpp/") and session.name == "cpp"
    # -v logs every message, but never the secret token
    assert 'cpp -> hello { name: "cpp" token: "<hidden>"' in err
    assert 'cpp <- goodbye { reason: "all done" }' in err
    assert token not in err


def test_nothing_listening_exits_4_quickly(cpp_bot, tmp_path):
    address = f"unix:{tmp_path / 'nobody.sock'}"
    started = time.monotonic()
    proc = subprocess.run([str(cpp_bot / BINARY_NAME), "--referee", address, "--token", "t",
                           "--connect-timeout", "0.5"], env=bot_env(), capture_output=True,
                          text=True, timeout=15)
    took = time.monotonic() - started
    assert proc.returncode == 4, proc.stderr
    assert f"no referee reachable at {address} within 0.5 s" in proc.stderr
    assert took < 5, f"took {took:.1f} s"


def test_nothing_listening_on_tcp_exits_4(cpp_bot):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run([str(cpp_bot / BINARY_NAME), "--connect-timeout=0.3"],
                          env=bot_env(ONO99_REFEREE=f"127.0.0.1:{port}", ONO99_TOKEN="t"),
                          capture_output=True, text=True, timeout=15)
    assert proc.returncode == 4, proc.stderr


def test_keeps_retrying_until_the_referee_appears(cpp_bot, tmp_path):
    address = f"unix:{tmp_path / 'late.sock'}"

    async def script(stream: Stream):
        await stream.read()
        await stream.send(welcome=referee_pb2.Welcome(protocol_version=1))
        await stream.send(goodbye=referee_pb2.Goodbye(reason="bye"))

    async def scenario():
        proc = await start_bot(cpp_bot, "--referee", address, "--token", "t",
                               "--connect-timeout", "10")
        await asyncio.sleep(1.5)  # the bot is retrying by now
        server, servicer, _ = await serve(script, address)
        try:
            started = time.monotonic()
            await asyncio.wait_for(asyncio.shield(servicer.done), 10)
            return await finish(proc), time.monotonic() - started
        finally:
            await server.stop(0.5)

    (rc, err), took = asyncio.run(scenario())
    assert rc == 0, err
    assert took < 5, f"the bot took {took:.1f} s to notice the referee"  # it retries every <= 1 s


# ---------------------------------------------------------------- reconnection

@pytest.mark.parametrize("break_with", [Relay.drop, Relay.black_hole], ids=["drop", "black-hole"])
def test_a_broken_connection_comes_back_and_the_match_goes_on(cpp_bot, break_with):
    """Through a relay cut mid-match: the bot dials again with its resume key (which also
    replaces a session the referee has not seen die), hears the match again from its start,
    and plays it to the end without a verdict."""
    far = [str(cpp_bot / BINARY_NAME)]
    result, [(rc, err), (near_rc, _)], relay = asyncio.run(one_match(break_with, far=far))
    assert result.status == Status.FINISHED and result.verdicts == [], result.verdicts
    assert replays(result)
    assert "reconnected to the referee after" in err, err
    assert relay.accepted == 2  # one try was enough: no refusal of the token as in use
    assert (rc, near_rc) == (0, 0), err


def test_dials_again_with_its_resume_key_through_a_token_in_use(cpp_bot, tmp_path):
    """After its stream ends mid-match, the bot says hello again with the key it was
    welcomed with, tries again after a refusal of the token as still in use, and answers
    the same match's turn once more."""
    address = f"unix:{tmp_path / 'ref.sock'}"
    hellos, actions = [], []

    class Referee(referee_pb2_grpc.RefereeServicer):
        async def Play(self, request_iterator, context):
            stream = Stream(context)
            hellos.append((await stream.read()).hello)
            if len(hellos) == 2:  # the referee has not noticed yet that the first one died
                await stream.send(refusal=referee_pb2.Refusal(
                    code=referee_pb2.REFUSAL_CODE_TOKEN_IN_USE, reason="in use"))
                await context.abort(grpc.StatusCode.ALREADY_EXISTS, "in use")
            await stream.send(welcome=referee_pb2.Welcome(protocol_version=1,
                                                          resume_key=f"key-{len(hellos)}"))
            await stream.send(match_start=match_start())
            await stream.send(turn=turn(7, [C.CARD_3, C.CARD_9], [C.CARD_3, C.CARD_9]))
            actions.append((await stream.read()).action)
            if len(hellos) == 1:
                return  # the stream ends without a goodbye
            await stream.send(match_end=referee_pb2.MatchEnd(match_id="m1", termination="last_standing"))
            await stream.send(goodbye=referee_pb2.Goodbye(reason="all done"))

    async def scenario():
        server = grpc.aio.server()
        referee_pb2_grpc.add_RefereeServicer_to_server(Referee(), server)
        server.add_insecure_port(address)
        await server.start()
        try:
            proc = await start_bot(cpp_bot, "--referee", address, "--token", "tok")
            return await finish(proc, 20)
        finally:
            await server.stop(0.5)

    rc, err = asyncio.run(scenario())
    assert rc == 0, err
    assert [h.resume_key for h in hellos] == ["", "key-1", "key-1"]
    assert [a.turn_id for a in actions] == [7, 7]
    assert "warning: the referee closed the stream without a goodbye; reconnecting for up to 10 s" in err
    assert "reconnected to the referee after" in err


async def serve_streams(scripts, address: str):
    """A referee on ``address`` serving the n-th Play stream with ``scripts[n]`` (the last
    one to any later stream); returns the server and the hellos received, in order."""
    hellos = []

    class Referee(referee_pb2_grpc.RefereeServicer):
        async def Play(self, request_iterator, context):
            stream = Stream(context)
            n = len(hellos)
            hellos.append((await stream.read()).hello)
            await scripts[min(n, len(scripts) - 1)](stream)

    server = grpc.aio.server()
    referee_pb2_grpc.add_RefereeServicer_to_server(Referee(), server)
    server.add_insecure_port(address)
    await server.start()
    return server, hellos


async def welcome_then_end(stream: Stream):
    await stream.send(welcome=referee_pb2.Welcome(protocol_version=1, resume_key="key-1"))
    # returning ends the stream with status OK and no goodbye


async def cut_before_its_welcome(stream: Stream):
    await stream.context.abort(grpc.StatusCode.UNAVAILABLE, "not now")


async def refuse_shutting_down(stream: Stream):
    await stream.send(refusal=referee_pb2.Refusal(
        code=referee_pb2.REFUSAL_CODE_SHUTTING_DOWN, reason="the referee is shutting down"))
    await stream.context.abort(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")


async def welcome_and_goodbye(stream: Stream):
    await stream.send(welcome=referee_pb2.Welcome(protocol_version=1, resume_key="key-2"))
    await stream.send(goodbye=referee_pb2.Goodbye(reason="all done"))


def run_against(cpp_bot, scripts, address: str, *args: str) -> tuple[int, str, list]:
    async def scenario():
        server, hellos = await serve_streams(scripts, address)
        try:
            proc = await start_bot(cpp_bot, "--referee", address, "--token", "tok", *args)
            return (*await finish(proc, 20), hellos)
        finally:
            await server.stop(0.5)

    return asyncio.run(scenario())


@pytest.mark.parametrize("first, warning, keys", [
    (welcome_then_end,
     "warning: the referee closed the stream without a goodbye; reconnecting for up to 10 s\n",
     ["", "key-1", "key-1", "key-1"]),
    (cut_before_its_welcome,
     "warning: connection to the referee broke: UNAVAILABLE: not now; trying again for up to 10 s\n",
     ["", "", "", ""]),
], ids=["after-its-welcome", "before-its-welcome"])
def test_a_referee_shutting_down_is_waited_out_while_reconnecting(cpp_bot, tmp_path, first,
                                                                  warning, keys):
    """As across an `arena serve` restart: the stream ends with no goodbye, the stopping
    referee refuses the next hellos as REFUSAL_CODE_SHUTTING_DOWN, then the restarted one
    lets the bot in: it waits that out as the Python SDK does, with its resume key."""
    rc, err, hellos = run_against(
        cpp_bot, [first, refuse_shutting_down, refuse_shutting_down, welcome_and_goodbye],
        f"unix:{tmp_path / 'ref.sock'}")
    assert rc == 0, err
    assert warning in err, err
    assert "connected to the referee after" in err and "error:" not in err, err
    assert [h.resume_key for h in hellos] == keys


def test_a_referee_shutting_down_past_the_reconnect_window_exits_5(cpp_bot, tmp_path):
    rc, err, hellos = run_against(cpp_bot, [welcome_then_end, refuse_shutting_down],
                                  f"unix:{tmp_path / 'ref.sock'}", "--reconnect-timeout", "2")
    assert rc == 5, err
    assert err.endswith("error: could not reconnect to the referee within 2 s (last: referee "
                        "refused the connection (REFUSAL_CODE_SHUTTING_DOWN): the referee is "
                        "shutting down)\n"), err
    # tried again (after 0.2 s, then 0.4 s more, ...): the first two retries are due 0.6 s
    # into a 2 s window, so a loaded machine still has time for both; no upper bound: at
    # the window's end the SDK may squeeze in a few more tries at once (on a unix socket
    # its WaitForConnected with a deadline already past can still succeed)
    assert len(hellos) >= 3


def test_a_referee_shutting_down_at_the_first_connection_is_final(cpp_bot, tmp_path):
    """As in the Python SDK: only REFUSAL_CODE_TOO_MANY is waited out at the first hello."""
    rc, err, hellos = run_against(cpp_bot, [refuse_shutting_down, welcome_and_goodbye],
                                  f"unix:{tmp_path / 'ref.sock'}")
    assert rc == 3, err
    assert err.endswith("error: referee refused the connection (REFUSAL_CODE_SHUTTING_DOWN): "
                        "the referee is shutting down\n"), err
    assert "warning:" not in err, err
    assert len(hellos) == 1


def test_past_the_grace_window_the_seat_is_disconnected_and_the_bot_exits_5(cpp_bot):
    far = [str(cpp_bot / BINARY_NAME)]
    result, [(rc, err), _], _ = asyncio.run(
        one_match(Relay.drop, grace=0.5, refuse=True, reconnect="2", far=far))
    [verdict] = result.verdicts
    assert (verdict.seat, verdict.kind) == (0, VerdictKind.DISCONNECTED)
    assert rc == 5 and "could not reconnect to the referee within 2 s" in err, err


def test_a_server_restart_keeps_the_bot_through_shutting_down_refusals(cpp_bot):
    """The real referee stops (as `arena serve` does: no goodbye to a remote bot) and
    refuses the bot's hellos as REFUSAL_CODE_SHUTTING_DOWN; the bot waits that out, and a
    new referee at the same address takes it back."""
    rc, err, refused, admitted = asyncio.run(restart([str(cpp_bot / BINARY_NAME)]))
    assert refused and admitted, err
    assert rc == 0, err
    assert "; reconnecting for up to 10 s" in err
    assert "reconnected to the referee after" in err and "error:" not in err, err


def test_a_token_refused_as_too_many_for_a_while_gets_in_when_it_passes(cpp_bot, monkeypatch):
    """REFUSAL_CODE_TOO_MANY from a real referee: the bot tries again within its
    reconnect window, and plays once let in."""
    # the block outlasts the bot's start, whose first hello it must refuse (1.5 s did
    # not, once, for node-counter on a loaded machine: let in at once, never refused)
    monkeypatch.setattr(lobby, "HELLO_WINDOW_S", 4.0)
    rc, err, took, refused = asyncio.run(too_many([str(cpp_bot / BINARY_NAME)]))
    assert rc == 0, err
    assert ("warning: referee refused the connection (REFUSAL_CODE_TOO_MANY): "
            f"{TOO_MANY_HELLOS} 4 s; try again in ") in err
    assert " s; trying again for up to 10 s" in err
    assert "connected to the referee after" in err
    # refused at least once, and let in soon after the block (4 s, then a pause of 2 s at
    # most), not at the end of its reconnect window (10 s)
    assert refused and took < 9.5


@pytest.mark.parametrize("reconnect", ["0", "1"])
def test_too_many_for_longer_than_the_window_exits_3(cpp_bot, reconnect):
    check_too_many_past_the_window(asyncio.run(too_many([str(cpp_bot / BINARY_NAME)], reconnect)),
                                   reconnect)


@pytest.mark.parametrize("reconnect", ["10", "0"])
def test_a_connection_cut_between_hello_and_welcome_is_tried_again(cpp_bot, reconnect):
    """The hello reached the real referee, its welcome never reached the bot: no refusal
    was said, so it dials again, as after any broken stream (0: it gives up at once)."""
    rc, err, sessions = asyncio.run(cut_before_welcome([str(cpp_bot / BINARY_NAME)], reconnect))
    if reconnect == "0":
        assert rc == 5 and len(sessions) == 1, err
        assert "error: connection to the referee broke: UNAVAILABLE" in err
        return
    assert rc == 0, err
    assert len(sessions) == 2
    assert "warning: connection to the referee broke: UNAVAILABLE" in err
    assert "; trying again for up to 10 s" in err and "connected to the referee after" in err


# ---------------------------------------------------------------- TLS

@pytest.fixture(scope="module")
def tls_cert(tmp_path_factory) -> Path:
    """A folder with key.pem and cert.pem, self-signed for localhost and 127.0.0.1."""
    openssl = shutil.which("openssl")
    if openssl is None:
        missing_tool("openssl is not installed: the TLS tests make their certificate with it")
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return folder


@pytest.mark.parametrize("how", ["--tls-ca", "ONO99_TLS_CA"])
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_tls_trusting_the_referee_certificate(cpp_bot, tls_cert, how, host):
    async def scenario():
        tls = ((tls_cert / "key.pem").read_bytes(), (tls_cert / "cert.pem").read_bytes())
        server, servicer, port = await serve(goodbye, "127.0.0.1:0", tls)
        try:
            ca = str(tls_cert / "cert.pem")
            args = ("--tls-ca", ca) if how == "--tls-ca" else ()
            env = bot_env(ONO99_REFEREE=f"{host}:{port}", ONO99_TOKEN="t",
                          **({} if args else {"ONO99_TLS_CA": ca}))
            proc = await start_bot(cpp_bot, *args, env=env)
            await asyncio.wait_for(asyncio.shield(servicer.done), 15)
            return await finish(proc)
        finally:
            await server.stop(0.5)

    rc, err = asyncio.run(scenario())
    assert rc == 0, err


@pytest.mark.parametrize("args, hint", [
    ((), "(a referee that speaks TLS needs --tls-ca FILE or --tls)"),
    (("--tls",), "over TLS (is its certificate the one trusted? --tls-ca FILE names it)"),
], ids=["plaintext", "system-roots"])
def test_tls_mismatch_exits_4_naming_the_tls_options(cpp_bot, tls_cert, args, hint):
    """Plaintext to a TLS referee, or TLS trusting only the system's roots to a self-signed
    one: no connection, and the message says what to check."""
    async def scenario():
        tls = ((tls_cert / "key.pem").read_bytes(), (tls_cert / "cert.pem").read_bytes())
        server, _, port = await serve(goodbye, "127.0.0.1:0", tls)
        try:
            proc = await start_bot(cpp_bot, "--referee", f"127.0.0.1:{port}", "--token", "t",
                                   "--connect-timeout", "0.5", *args)
            return await finish(proc), port
        finally:
            await server.stop(0.5)

    (rc, err), port = asyncio.run(scenario())
    assert rc == 4, err
    assert f"error: no referee reachable at 127.0.0.1:{port} within 0.5 s {hint}\n" in err


@pytest.mark.parametrize("ca, message", [
    ("/nonexistent/ca.pem", "error: cannot read the TLS certificate /nonexistent/ca.pem: "
                            "No such file or directory\n"),
    ("key.pem", "holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)\n"),
])
def test_an_unusable_certificate_file_exits_2(cpp_bot, tls_cert, ca, message):
    proc = subprocess.run([str(cpp_bot / BINARY_NAME), "--tls-ca", str(tls_cert / ca)],
                          env=bot_env(ONO99_REFEREE="127.0.0.1:1", ONO99_TOKEN="t"),
                          capture_output=True, text=True, timeout=15)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.endswith(message)


def test_a_unix_socket_stays_plaintext(cpp_bot, tmp_path):
    address = f"unix:{tmp_path / 'ref.sock'}"
    rc, err = told_goodbye(lambda: start_bot(cpp_bot, env=bot_env(
        ONO99_REFEREE=address, ONO99_TOKEN="t", ONO99_TLS="1", ONO99_TLS_CA="/nonexistent")),
        address)
    assert rc == 0, err


@pytest.mark.parametrize("args, env", [
    ((), {}),
    (("--referee", "unix:/nowhere"), {}),
    (("--token", "t"), {}),
    (("--bogus",), {"ONO99_REFEREE": "unix:/nowhere", "ONO99_TOKEN": "t"}),
    (("--connect-timeout", "soon"), {"ONO99_REFEREE": "unix:/nowhere", "ONO99_TOKEN": "t"}),
    (("--reconnect-timeout", "-1"), {"ONO99_REFEREE": "unix:/nowhere", "ONO99_TOKEN": "t"}),
    ((), {"ONO99_REFEREE": "unix:/nowhere", "ONO99_TOKEN": "t", "ONO99_RECONNECT_TIMEOUT": "soon"}),
    (("--tls-ca",), {"ONO99_REFEREE": "unix:/nowhere", "ONO99_TOKEN": "t"}),
    (("--referee",), {}),
])
def test_usage_errors_exit_2(cpp_bot, args, env):
    proc = subprocess.run([str(cpp_bot / BINARY_NAME), *args], env=bot_env(**env),
                          capture_output=True, text=True, timeout=15)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ")


@pytest.mark.parametrize("address, said", REFUSED + [(a, "scheme in lower case") for a in UPPER_CASE])
def test_an_address_no_referee_can_have_exits_2_at_once(cpp_bot, address, said):
    # gRPC took each and said only, at the end of the connect timeout (30 s), that no
    # referee was reachable
    started = time.monotonic()
    proc = subprocess.run([str(cpp_bot / BINARY_NAME), "--token", "t"],
                          env=bot_env(ONO99_REFEREE=address), capture_output=True, text=True,
                          timeout=15)
    assert proc.returncode == 2, proc.stderr
    assert time.monotonic() - started < 10
    assert f"error: the referee address '{address}' (--referee or $ONO99_REFEREE): " in proc.stderr
    assert said in proc.stderr


@pytest.mark.parametrize("address, tls", TAKEN)
def test_every_form_grpc_dials_is_taken(cpp_bot, address, tls):
    proc = subprocess.run([str(cpp_bot / BINARY_NAME), "--referee", address, "--token", "t",
                           *tls, "--connect-timeout", "0.5"], env=bot_env(),
                          capture_output=True, text=True, timeout=15)
    assert proc.returncode == 4, proc.stderr
    assert f"no referee reachable at {address.strip()} within" in proc.stderr


def test_help_exits_0(cpp_bot):
    proc = subprocess.run([str(cpp_bot / BINARY_NAME), "--help"], env=bot_env(),
                          capture_output=True, text=True, timeout=15)
    assert proc.returncode == 0
    for text in ("--referee", "ONO99_TOKEN", "--tls ", "ONO99_TLS=1", "--tls-ca FILE", "ONO99_TLS_CA",
                 "--reconnect-timeout", "ONO99_RECONNECT_TIMEOUT"):
        assert text in proc.stdout


def test_the_sample_passes_check_bot(cpp_bot):
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", "check-bot", str(cpp_bot)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "check-bot: cpp-counter: 13 passed, 0 failed"
