"""The real gRPC client (``ono99.bot.run``/``play``) against real referees, and a scripted
one for what no referee says: exit codes, messages, and a whole session. Bots run as subprocesses (the sample bots' scripts) or in
threads next to a referee served by the test's own event loop; nothing is mocked."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ono99.bot import Bot, play, run
from ono99.bot.client import (
    CHANNEL_OPTIONS, EXIT_BROKEN, EXIT_OK, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE,
    QUICK_BREAK, SDK,
)
from ono99.transport import grpc
from ono99.v1 import game_pb2, referee_pb2

from arena.referee.results import MatchSpec, TimeControl
from arena.referee.runner import MatchRunner
from arena.referee.server import MIN_PING_INTERVAL_MS, RefereeServer
from arena.rules.rulesets import make_config
from arena.referee import lobby
from support.addresses import REFUSED, TAKEN, UPPER_CASE
from support.scripted import (
    Stream, late_reconnect, match_start, scripted_run, told_goodbye, turn, welcome,
)
from support.reconnect import (
    NOTICED_WITHIN, TOO_MANY_HELLOS,
    check_too_many_past_the_window, cut_before_welcome, restart, stalled, too_many, welcomed,
)

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "bots" / "random" / "bot.py"
GREEDY_BOT = ROOT / "bots" / "greedy" / "bot.py"
C = game_pb2.Card


def bot_env(**extra: str) -> dict[str, str]:
    """This environment without any ONO99_* variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONO99_")}
    env.update(extra)
    return env


def run_script(script: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 15) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], env=env or bot_env(),
                          capture_output=True, text=True, timeout=timeout)


async def start_script(script: Path, *args: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, str(script), *args, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)


async def finish(proc: asyncio.subprocess.Process, timeout: float = 10) -> tuple[int, str]:
    _, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, err.decode()


def one_match(sessions, ruleset="modern", seed=3) -> MatchRunner:
    spec = MatchSpec(f"sdk-{seed}", make_config(ruleset, None, len(sessions)), seed,
                     tuple(s.name for s in sessions), TimeControl(2000, 5000))
    return MatchRunner(spec, sessions)


# ---------------------------------------------------------------- usage


@pytest.mark.parametrize("args", [(), ("--referee", "unix:/nowhere"), ("--token", "t")])
def test_missing_referee_or_token_is_a_usage_error(args):
    proc = run_script(RANDOM_BOT, *args)
    assert proc.returncode == EXIT_USAGE == 2
    assert "give the referee address and token" in proc.stderr
    assert "--referee/--token" in proc.stderr and "$ONO99_REFEREE/$ONO99_TOKEN" in proc.stderr


def test_missing_arguments_in_process(capsys, monkeypatch):
    for name in ("ONO99_REFEREE", "ONO99_TOKEN", "ONO99_BOT_NAME"):
        monkeypatch.delenv(name, raising=False)

    class Idle(Bot):
        def choose(self, view):
            return view.legal[0]

    assert run(Idle(), []) == EXIT_USAGE
    assert "give the referee address and token" in capsys.readouterr().err


@pytest.mark.parametrize("address, said", REFUSED)
def test_an_address_no_referee_can_have_is_a_usage_error_at_once(address, said):
    # gRPC took each of these and said only, at the end of the connect timeout (30 s), that
    # no referee was reachable: the environment's ONO99_REFEREE counts as --referee does
    started = time.monotonic()
    proc = run_script(RANDOM_BOT, "--token", "t", env=bot_env(ONO99_REFEREE=address))
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert time.monotonic() - started < 10
    assert f"the referee address {address!r} (--referee or $ONO99_REFEREE): " in proc.stderr
    assert said in proc.stderr


@pytest.mark.parametrize("address, tls", TAKEN + [(a, ()) for a in UPPER_CASE])
def test_every_form_grpc_dials_is_taken(address, tls):
    proc = run_script(RANDOM_BOT, "--referee", address, "--token", "t", *tls,
                      "--connect-timeout", "0.5")
    assert proc.returncode == EXIT_UNREACHABLE, proc.stderr
    assert f"no referee reachable at {address.strip()} within" in proc.stderr


@pytest.mark.parametrize("scheme", ["unix", "UNIX"])     # a scheme in any case, as grpcio's
def test_a_unix_socket_stays_plaintext_whatever_the_tls_settings(tmp_path, scheme):
    # the certificate named is not read (the Node.js and C++ SDKs' way), and the upper-case
    # scheme was dialled with TLS, over a socket that never leaves the machine (exit 4)
    socket = tmp_path / "ref.sock"
    address = f"{scheme}:{socket}"        # as the bot is told (a server takes lower case only)
    rc, err = told_goodbye(lambda: start_script(RANDOM_BOT, env=bot_env(
        ONO99_REFEREE=address, ONO99_TOKEN="t", ONO99_TLS="1", ONO99_TLS_CA="/nonexistent")),
        f"unix:{socket}")
    assert rc == EXIT_OK, err


# ---------------------------------------------------------------- unreachable


def test_nothing_listening_exits_4_quickly(tmp_path):
    address = f"unix:{tmp_path / 'nobody.sock'}"
    started = time.monotonic()
    proc = run_script(RANDOM_BOT, "--referee", address, "--token", "t", "--connect-timeout", "0.5")
    took = time.monotonic() - started
    assert proc.returncode == EXIT_UNREACHABLE == 4
    assert f"no referee reachable at {address} within 0.5 s" in proc.stderr
    assert took < 5, f"took {took:.1f} s"


@pytest.fixture
def unused_tcp_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nothing_listening_on_tcp_exits_4(unused_tcp_port):
    class Idle(Bot):
        def choose(self, view):
            return view.legal[0]

    started = time.monotonic()
    assert play(Idle(), f"127.0.0.1:{unused_tcp_port}", "t", connect_timeout=0.3) == EXIT_UNREACHABLE
    assert time.monotonic() - started < 3


def test_unreachable_over_tcp_without_tls_says_a_tls_referee_needs_it(unused_tcp_port):
    # a plaintext bot never connects to a TLS referee: it waits its connect timeout, and
    # then says what to check (it said only "no referee reachable", unlike Node and C++)
    address = f"127.0.0.1:{unused_tcp_port}"
    proc = run_script(RANDOM_BOT, "--referee", address, "--token", "t", "--connect-timeout", "0.3")
    assert proc.returncode == EXIT_UNREACHABLE
    assert (f"no referee reachable at {address} within 0.3 s (a referee that speaks TLS needs "
            "--tls-ca FILE or --tls)") in proc.stderr


# ---------------------------------------------------------------- a real referee


@pytest.mark.parametrize("token, code, reason", [
    ("not-a-token", "REFUSAL_CODE_BAD_TOKEN", "unknown token"),
    ("", "REFUSAL_CODE_BAD_TOKEN", "no token in the hello"),
])
def test_a_refused_hello_exits_3_with_the_reason(token, code, reason):
    async def scenario():
        server = await RefereeServer.start("unix")
        try:
            server.lobby.register("someone")
            proc = await start_script(RANDOM_BOT, "--referee", server.address, "--token", token,
                                      "--connect-timeout", "5", env=bot_env())
            return await finish(proc)
        finally:
            await server.stop()

    rc, err = asyncio.run(scenario())
    assert rc == EXIT_REFUSED == 3
    assert f"referee refused the connection ({code}): {reason}" in err


def test_a_token_in_use_is_refused():
    async def scenario():
        server = await RefereeServer.start("unix")
        try:
            token = server.lobby.register("twice").token
            first = await start_script(RANDOM_BOT, env=bot_env(ONO99_REFEREE=server.address,
                                                               ONO99_TOKEN=token))
            await server.lobby.wait_session(token, 5)
            second = await start_script(RANDOM_BOT, env=bot_env(ONO99_REFEREE=server.address,
                                                                ONO99_TOKEN=token))
            refused = await finish(second)
        finally:
            await server.stop()
        return refused, await finish(first)

    (rc, err), (first_rc, _) = asyncio.run(scenario())
    assert rc == EXIT_REFUSED
    assert "REFUSAL_CODE_TOKEN_IN_USE" in err and "already in use" in err
    assert first_rc == EXIT_OK   # the first session got its goodbye


def test_subprocess_bots_play_a_match_and_exit_0_after_goodbye():
    """The sample scripts configured by the environment, as ``arena match`` launches them."""

    async def scenario():
        server = await RefereeServer.start("unix")
        procs = []
        try:
            regs = [server.lobby.register(n) for n in ("random", "greedy")]
            for script, reg in zip((RANDOM_BOT, GREEDY_BOT), regs):
                procs.append(await start_script(script, env=bot_env(
                    ONO99_REFEREE=server.address, ONO99_TOKEN=reg.token, ONO99_BOT_NAME=reg.name)))
            sessions = [await server.lobby.wait_session(r.token, 5) for r in regs]
            result = await one_match(sessions).run()
        finally:
            await server.stop("all done")
        return sessions, result, [await finish(p) for p in procs]

    sessions, result, exits = asyncio.run(scenario())
    assert [s.sdk for s in sessions] == [SDK, SDK]
    assert result.verdicts == [] and sorted(s for g in result.ranking for s in g) == [0, 1]
    assert result.turns > 0
    assert [rc for rc, _ in exits] == [EXIT_OK, EXIT_OK], exits


def test_verbose_logs_every_message_with_its_secrets_hidden():
    async def scenario():
        server = await RefereeServer.start("unix")
        try:
            regs = [server.lobby.register(n) for n in ("random", "greedy")]
            procs = [await start_script(script, "--referee", server.address, "--token", reg.token,
                                        *(["-v"] if script is RANDOM_BOT else []), env=bot_env())
                     for script, reg in zip((RANDOM_BOT, GREEDY_BOT), regs)]
            sessions = [await server.lobby.wait_session(r.token, 5) for r in regs]
            result = await one_match(sessions).run()
        finally:
            await server.stop("all done")
        return regs[0].token, sessions[0].resume_key, result, await finish(procs[0]), \
            await finish(procs[1])

    token, resume_key, result, (rc, err), (_, quiet) = asyncio.run(scenario())
    assert rc == EXIT_OK, err
    lines = err.splitlines()
    said = [line.split(" DEBUG ", 1)[1].split(" {", 1)[0] for line in lines if " DEBUG " in line]
    assert said[:3] == ["-> hello", "<- welcome", "<- match_start"]
    assert said.count("-> action") == result.stats[0].moves > 0
    assert said.count("<- turn") >= result.stats[0].moves
    assert said[-1] == "<- goodbye" and "<- match_end" in said
    assert all(" random DEBUG " in line for line in lines if " DEBUG " in line)
    assert 'token: "<hidden>"' in err and 'resume_key: "<hidden>"' in err
    assert token not in err and resume_key not in err
    assert " DEBUG " not in quiet


class Recorder(Bot):
    """Plays its first legal card; records what it sees."""

    name = "recorder"

    def __init__(self) -> None:
        super().__init__()
        self.starts, self.ends, self.turns, self.events = [], [], [], 0

    def choose(self, view):
        assert view.legal and set(view.legal) <= set(view.hand)
        self.turns.append((view.turn_id, view.seat, view.total))
        return view.legal[0]

    def on_match_start(self, match):
        self.starts.append(match)

    def on_event(self, event, match):
        self.events += 1

    def on_match_end(self, result, match):
        self.ends.append((result, match))


def test_in_process_bots_play_two_matches_over_one_connection():
    bots = [Recorder(), Recorder()]

    async def scenario():
        server = await RefereeServer.start("tcp")
        try:
            regs = [server.lobby.register(n) for n in ("left", "right")]
            codes = [asyncio.create_task(asyncio.to_thread(play, bot, server.address, reg.token,
                                                           None, 5))
                     for bot, reg in zip(bots, regs)]
            sessions = [await server.lobby.wait_session(r.token, 5) for r in regs]
            results = [await one_match(sessions, "modern", seed=5).run(),
                       await one_match(sessions, "classic", seed=6).run()]
        finally:
            await server.stop("all done")
        return results, await asyncio.wait_for(asyncio.gather(*codes), 10)

    results, codes = asyncio.run(scenario())
    assert codes == [EXIT_OK, EXIT_OK]
    for seat, bot in enumerate(bots):
        assert [m.seat for m in bot.starts] == [seat, seat]
        assert [m.names for m in bot.starts] == [["left", "right"]] * 2
        assert [m.rules.ruleset for m in bot.starts] == ["modern", "classic"]
        assert [r.match_id for r, _ in bot.ends] == [r.match_id for r in results]
        assert [r.ranking for r, _ in bot.ends] == [r.ranking for r in results]
        assert all(m is start for (_, m), start in zip(bot.ends, bot.starts))
        assert all(s == seat for _, s, _ in bot.turns)
        assert bot.events > 0
        # every move this bot made is in the referee's record
        assert len(bot.turns) == sum(r.stats[seat].moves for r in results)


@pytest.mark.parametrize("reconnect, message", [
    ("0", "error: connection to the referee broke: "),
    ("1", "error: could not reconnect to the referee within 1 s (last: "),
])
def test_a_referee_that_vanishes_without_goodbye_exits_5(reconnect, message):
    """A bot tries to get its connection back for ``--reconnect-timeout`` s, then gives up."""
    async def scenario():
        server = await RefereeServer.start("unix")
        token = server.lobby.register("orphan").token
        proc = await start_script(RANDOM_BOT, "--referee", server.address, "--token", token,
                                  "--reconnect-timeout", reconnect, "-v", env=bot_env())
        await welcomed(proc)              # only a welcomed bot has a session to get back
        # from before the cut: the bot may see its stream end (and its clock start)
        # before stop() returns here (the C++ bot gave up 5 ms short of 1 s after it)
        started = time.monotonic()
        await server.server.stop(None)  # no goodbye: the stream is cut
        try:
            return (*await finish(proc), time.monotonic() - started)
        finally:
            await server.stop()               # removes the socket's folder

    rc, err, took = asyncio.run(scenario())
    assert rc == EXIT_BROKEN == 5
    assert message in err
    assert float(reconnect) <= took < float(reconnect) + 3


def test_a_token_refused_as_too_many_for_a_while_gets_in_when_it_passes(monkeypatch):
    """REFUSAL_CODE_TOO_MANY passes (here: the token said hello too often): the bot tries
    again, backing off, within its reconnect window, and plays once let in."""
    # the block outlasts the bot's start, whose first hello it must refuse (1.5 s did
    # not, once, for node-counter on a loaded machine: let in at once, never refused)
    monkeypatch.setattr(lobby, "HELLO_WINDOW_S", 4.0)
    rc, err, took, refused = asyncio.run(too_many())
    assert rc == EXIT_OK, err
    assert ("warning: referee refused the connection (REFUSAL_CODE_TOO_MANY): "
            f"{TOO_MANY_HELLOS} 4 s; try again in ") in err
    assert " s; trying again for up to 10 s" in err
    assert "connected to the referee after" in err
    # refused at least once, and let in soon after the block (4 s, then a pause of 2 s at
    # most), not at the end of its reconnect window (10 s)
    assert refused and took < 9.5


@pytest.mark.parametrize("reconnect", ["0", "1"])
def test_too_many_for_longer_than_the_window_exits_3(reconnect):
    """Past its reconnect window (at once with 0) the bot gives up, as refused."""
    check_too_many_past_the_window(asyncio.run(too_many(reconnect=reconnect)), reconnect,
                                   EXIT_REFUSED)


@pytest.mark.parametrize("reconnect", ["10", "0"])
def test_a_connection_cut_between_hello_and_welcome_is_tried_again(reconnect):
    """The hello reached the referee, the welcome never reached the bot: no refusal was
    said, so the bot tries again as after any broken stream (0: it gives up at once)."""
    rc, err, sessions = asyncio.run(cut_before_welcome(reconnect=reconnect))
    if reconnect == "0":
        assert rc == EXIT_BROKEN and len(sessions) == 1, err
        assert "error: connection to the referee broke: UNAVAILABLE" in err
        return
    assert rc == EXIT_OK, err
    assert len(sessions) == 2
    assert "warning: connection to the referee broke: UNAVAILABLE" in err
    assert "; trying again for up to 10 s" in err and "connected to the referee after" in err


def test_a_server_restart_keeps_the_bot_through_shutting_down_refusals():
    """The referee stops (as `arena serve` does: no goodbye to a remote bot) and refuses
    the bot's hellos as REFUSAL_CODE_SHUTTING_DOWN; the bot waits that out, and a new
    referee at the same address takes it back."""
    rc, err, refused, admitted = asyncio.run(restart())
    assert refused and admitted, err
    assert rc == EXIT_OK, err
    assert "warning: connection to the referee broke" in err
    assert "reconnected to the referee after" in err and "error:" not in err, err


# ---------------------------------------------------------------- a silent connection


def test_a_silent_connection_is_noticed_and_the_bot_reconnects():
    """Its connection goes silent, no end closed (a NAT that forgot it, a dead route): the
    bot's pings go unanswered, it drops the connection and comes back with its resume
    key. Without pings it waited for its next message forever."""
    rc, err, took = asyncio.run(stalled())
    assert took is not None and took < NOTICED_WITHIN, err
    assert "warning: connection to the referee broke: UNAVAILABLE" in err, err
    assert "; reconnecting for up to 10 s" in err and "reconnected to the referee after" in err
    assert rc == EXIT_OK, err


def test_a_silent_connection_that_cannot_be_restored_exits_5():
    rc, err, took = asyncio.run(stalled(reconnect="1", refuse=True))
    assert took is None
    assert rc == EXIT_BROKEN, err
    assert "error: could not reconnect to the referee within 1 s (last: " in err, err


def test_the_referee_accepts_the_pings_of_the_sdk():
    """A client pinging more often than the referee accepts is cut (GOAWAY too_many_pings)
    after two strikes: an idle bot would lose its connection every half minute."""
    options = dict(CHANNEL_OPTIONS)
    assert options["grpc.keepalive_time_ms"] >= MIN_PING_INTERVAL_MS
    assert options["grpc.http2.max_pings_without_data"] == 0


# ---------------------------------------------------------------- a scripted referee

# A bot slow in each hook: the referee's last messages and the end of its stream (an error
# status right after its goodbye) are all there before the bot reads or writes again.
SLOW_BOT = '''
import sys, time
from ono99.bot import Bot, run

class Slow(Bot):
    name = "slow"

    def choose(self, view):
        time.sleep(0.5)
        return view.legal[0]

    def on_match_start(self, match):
        time.sleep(0.5)

    def on_match_end(self, result, match):
        print("on_match_end:", result.termination, file=sys.stderr)

raise SystemExit(run(Slow()))
'''


def run_slow_bot(tmp_path, script, *args: str) -> tuple[int, str, float]:
    """The slow bot against ``script`` on a scripted referee: exit code, stderr, and the
    seconds from its first connection to its exit."""
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    return scripted_run([sys.executable, bot], script, tmp_path, *args, env=bot_env())


def test_no_welcome_within_the_connect_timeout_breaks_the_stream(tmp_path):
    """A server that takes the stream and never answers the hello: the bot gives up after
    its connect timeout as after a broken stream (it waited forever)."""
    async def silent(stream: Stream):
        await stream.read()
        await asyncio.sleep(60)

    rc, err, took = run_slow_bot(tmp_path, silent, "--connect-timeout", "1",
                                 "--reconnect-timeout", "0")
    assert rc == EXIT_BROKEN, err[-2000:]
    assert "error: no welcome from the referee within 1 s of the hello" in err
    assert took < 5


def test_a_goodbye_then_an_error_status_ends_the_bot(tmp_path):
    """The referee writes its match_end and goodbye and ends the stream with an error at
    once (as it does after a message it cannot parse): the bot reads them all, though its
    action could not be written, and exits 0. It lost them, as a broken stream, and
    reconnected and was welcomed again, for ever."""
    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(match_start=match_start())
        await stream.send(turn=turn(7, [C.CARD_3, C.CARD_9], [C.CARD_3, C.CARD_9]))
        await stream.send(match_end=referee_pb2.MatchEnd(match_id="m1", termination="aborted"))
        await stream.send(goodbye=referee_pb2.Goodbye(reason="scripted"))
        stream.fail(grpc.StatusCode.INVALID_ARGUMENT, "scripted error")

    rc, err, _ = run_slow_bot(tmp_path, script)
    assert rc == EXIT_OK, err[-2000:]
    assert "on_match_end: aborted" in err
    assert "the referee said goodbye: scripted" in err


def test_welcomes_each_followed_at_once_by_a_break_end_within_the_reconnect_window(tmp_path):
    """A referee that welcomes the bot and breaks the stream at once, each time: every
    welcome restarted the reconnect window, and the bot tried for ever."""
    async def script(stream: Stream):
        await welcome(stream)
        stream.fail(grpc.StatusCode.INTERNAL, "scripted break")

    rc, err, took = run_slow_bot(tmp_path, script, "--reconnect-timeout", "1")
    assert rc == EXIT_BROKEN, err[-2000:]
    assert ("error: could not reconnect to the referee within 1 s (last: connection to the "
            "referee broke: INTERNAL: scripted break)") in err
    assert took < 5


def test_a_break_after_a_late_reconnect_and_a_longer_session_gets_a_fresh_window(tmp_path):
    """The bot reconnects late in its window (after 2.2 s of 3), stays 1.5 s (longer than
    QUICK_BREAK), and its stream breaks again: it reconnects in a fresh window, with the
    newest session's resume key. It counted the break against the old window, spent by
    then, and exited 5 without a single try."""
    assert QUICK_BREAK < 1.5
    hellos: list[referee_pb2.Hello] = []
    script = late_reconnect(hellos)
    rc, err, took = run_slow_bot(tmp_path, script, "--reconnect-timeout", "3")
    assert rc == EXIT_OK, err[-2000:]
    assert err.count("reconnected to the referee after") == 2, err[-2000:]
    assert "scripted break 2; reconnecting for up to 3 s" in err
    assert [h.resume_key for h in hellos] == ["", "k1", "k2"]
    assert took < 10
