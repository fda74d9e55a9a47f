"""A remote bot's connection breaks, for the tests of every SDK: mid-match (a real referee
on TCP, seat 0's bot, any SDK in its own process, behind a relay the test breaks,
support/proxy.py; seat 1 a Python bot connected directly), between its hello and its
welcome, or its token is refused as too many for a while; or its server restarts, refusing
it as shutting down meanwhile; or its connection goes silent, no end told."""

from __future__ import annotations

import asyncio
import io
import os
import sys
import time
from collections import deque
from collections.abc import Sequence

from ono99.transport import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc

from arena.referee import lobby
from arena.referee.lobby import new_token, token_hash
from arena.referee.listeners import MatchListener
from arena.referee.runner import MatchRunner
from arena.referee.server import RefereeServer
from support.matches import BOTS, spec
from support.proxy import Relay

#: The command of the Python SDK's sample bot that plays random cards.
PYTHON_RANDOM = (sys.executable, str(BOTS / "random" / "bot.py"))


class BreakAfter(MatchListener):
    """Calls ``action`` once, when the match has ``n`` events."""

    def __init__(self, n: int, action) -> None:
        self.n, self.action, self.done = n, action, False

    def frame(self, frame) -> None:
        if not self.done and frame.view.n_events >= self.n:
            self.done = True
            self.action()


async def launch(address: str, token: str, *args: str,
                 command: Sequence[str] = PYTHON_RANDOM) -> asyncio.subprocess.Process:
    """Start the bot ``command`` on ``address`` with ``token``, none of our ONO99_ settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONO99_")}
    return await asyncio.create_subprocess_exec(
        *command, "--referee", address, "--token", token, *args, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)


async def one_match(break_with, grace: float = 5.0, refuse: bool = False, reconnect: str = "10",
                    far: Sequence[str] = PYTHON_RANDOM):
    """Seat 0 (the bot ``far``) plays through the relay, seat 1 directly; ``break_with(relay)``
    breaks the relay after some events (and it refuses new connections if ``refuse``).
    Returns the result, each seat's exit code and stderr, and the relay."""
    server = await RefereeServer.start("tcp")
    try:
        async with Relay(server.address) as relay:
            regs = [server.lobby.register(n) for n in ("far", "near")]
            procs = [await launch(relay.address, regs[0].token, "--reconnect-timeout", reconnect,
                                  command=far),
                     await launch(server.address, regs[1].token)]
            try:
                sessions = [await server.lobby.wait_session(r.token, 10) for r in regs]
            except TimeoutError:
                raise AssertionError(f"a bot did not connect: refusals {list(server.lobby.refusals)}, "
                                     f"stderr {await _stop(procs)}") from None

            def cut() -> None:
                relay.refusing = refuse
                break_with(relay)

            again = {0: lambda timeout: server.lobby.wait_session_hash(regs[0].token_hash, timeout)}
            runner = MatchRunner(spec(["far", "near"], seed=11), sessions, [BreakAfter(12, cut)],
                                 reconnect=again, grace=grace)
            task = asyncio.create_task(runner.run())
            done, _ = await asyncio.wait({task}, timeout=30)
            if not done:   # a hang: say where, then fail
                stack = io.StringIO()
                task.print_stack(file=stack)
                task.cancel()
                raise AssertionError(
                    f"the match hung: {stack.getvalue()}\nsessions "
                    f"{[(s.session_id, s.closed, s.close_reason) for s in runner.sessions]}\n"
                    f"refusals {list(server.lobby.refusals)}\nstderr {await _stop(procs)}")
            result = task.result()
            await server.stop("all done")
            outcome = []
            for proc in procs:
                _, err = await asyncio.wait_for(proc.communicate(), 20)
                outcome.append((proc.returncode, err.decode()))
            return result, outcome, relay
    finally:
        await server.stop()


async def _stop(procs) -> list[str]:
    """Kill the bots still running; what each wrote on stderr."""
    for proc in procs:
        if proc.returncode is None:
            proc.kill()
    return [(await p.communicate())[1].decode() for p in procs]


async def welcomed(proc: asyncio.subprocess.Process, timeout: float = 10) -> str:
    """Read the log of a bot started with ``-v`` (any SDK) up to the welcome it received:
    only then has it a session to get back. Returns what it read."""
    lines = []
    async with asyncio.timeout(timeout):
        while not _welcome_logged(line := (await proc.stderr.readline()).decode()):
            assert line, f"the bot ended before its welcome: {lines}"
            lines.append(line)
    return "".join(lines) + line


def _welcome_logged(line: str) -> bool:
    """Python's and C++'s "<- welcome {...}", Node's 'received {"welcome":{...}'."""
    return "<- welcome {" in line or 'received {"welcome":' in line


async def _until_admitted(server: RefereeServer, token: str, proc, timeout: float):
    """The session of ``token`` once the referee admits it, or None if the bot exits (or
    ``timeout`` passes) first."""
    admitted = asyncio.ensure_future(server.lobby.wait_session(token, timeout))
    exited = asyncio.ensure_future(proc.wait())
    await asyncio.wait({admitted, exited}, return_when=asyncio.FIRST_COMPLETED)
    exited.cancel()
    if not admitted.done():
        admitted.cancel()
    return admitted.result() if admitted.done() and admitted.exception() is None else None


async def cut_before_welcome(command: Sequence[str] = PYTHON_RANDOM, reconnect: str = "10"):
    """A bot whose connection is cut after its hello reached the referee and before the
    welcome reached it (a relay holds the referee's replies back, then drops the
    connection), as when a server restarts at that moment; the referee lets it in again
    if it comes back. Returns the bot's exit code, its stderr, and the sessions the
    referee admitted."""
    server = await RefereeServer.start("tcp")
    try:
        async with Relay(server.address) as relay:
            token = server.lobby.register("far").token
            relay.withholding = True
            proc = await launch(relay.address, token, "--reconnect-timeout", reconnect,
                                command=command)
            first = await _until_admitted(server, token, proc, 10)
            assert first is not None, f"never admitted: {(await _stop([proc]))[0]}"
            relay.withholding = False
            relay.drop()                            # the welcome is lost with the connection
            async with asyncio.timeout(5):
                await first.wait_closed()
            sessions = [first]
            if again := await _until_admitted(server, token, proc, float(reconnect) + 5):
                sessions.append(again)
            await server.stop("all done")
            _, err = await asyncio.wait_for(proc.communicate(), 20)
            return proc.returncode, err.decode(), sessions
    finally:
        await server.stop()


async def use_up_hellos(server: RefereeServer, token: str) -> None:
    """Have the referee refuse ``token``'s hellos as REFUSAL_CODE_TOO_MANY (for
    lobby.HELLO_WINDOW_S from now): it is let in lobby.MAX_HELLOS times, each session
    replacing the last with its resume key, and the last one ends."""
    key = ""
    async with grpc.aio.insecure_channel(server.address) as channel:
        for _ in range(lobby.MAX_HELLOS):
            call = referee_pb2_grpc.RefereeStub(channel).Play()
            await call.write(referee_pb2.BotMessage(hello=referee_pb2.Hello(
                name="far", token=token, protocol_version=1, resume_key=key)))
            key = (await call.read()).welcome.resume_key
            assert key
        call.cancel()
    async with asyncio.timeout(5):
        while server.lobby.connected(token_hash(token)):
            await asyncio.sleep(0.01)


async def too_many(command: Sequence[str] = PYTHON_RANDOM, reconnect: str = "10"):
    """A bot started on a TCP referee that refuses its token as too many
    (REFUSAL_CODE_TOO_MANY, for lobby.HELLO_WINDOW_S), then says goodbye to it if it
    gets in. Returns the bot's exit code, its stderr, the seconds from the referee's first
    refusal of it to its exit (a loaded machine's slow start of the bot left out), and
    the referee's TOO_MANY refusals (one a hello it refused)."""
    server = await RefereeServer.start("tcp")
    try:
        token = new_token()
        server.lobby.register_hash("far", token_hash(token))   # a remote bot's, as a server's
        await use_up_hellos(server, token)
        refusals = server.lobby.refusals = _TimedRefusals(server.lobby.refusals)
        proc = await launch(server.address, token, "--reconnect-timeout", reconnect,
                            command=command)
        await _until_admitted(server, token, proc, float(reconnect) + 5)
        await server.stop("all done")
        _, err = await asyncio.wait_for(proc.communicate(), 20)
        ended = time.monotonic()
        refused = [r for r in server.lobby.refusals if r.startswith("too many")]
        assert refusals.first is not None, f"the bot was never refused: {err.decode()}"
        return proc.returncode, err.decode(), ended - refusals.first, refused
    finally:
        await server.stop()


class _TimedRefusals(deque):
    """The lobby's record of refused hellos, which also notes when the first refusal as
    too many came."""

    def __init__(self, kept: deque) -> None:
        super().__init__(kept, kept.maxlen)
        self.first: float | None = None

    def append(self, reason: str) -> None:
        if self.first is None and reason.startswith("too many"):
            self.first = time.monotonic()
        super().append(reason)


#: how the referee words a refusal of too many hellos with the bot's token
TOO_MANY_HELLOS = "too many hellos with the token of bot 'far': 60 within"


def check_too_many_past_the_window(outcome, reconnect: str, exit_refused: int = 3,
                                   code: str = "REFUSAL_CODE_TOO_MANY") -> None:
    """What :func:`too_many` returns for a bot still refused when its window ends: it
    gives up as refused, at once with ``reconnect`` "0", else after trying again.
    ``code``: how the SDK names the refusal."""
    rc, err, took, refused = outcome
    assert rc == exit_refused, err
    if reconnect == "0":
        assert len(refused) == 1 and took < 3
        # the referee's reason, whole: its "try again in" counts down from 60 s, the
        # window, from the hellos that used it up (59 s once, on a loaded machine)
        assert refused[0].startswith(f"{TOO_MANY_HELLOS} 60 s; try again in "), refused
        assert err.endswith(f"error: referee refused the connection ({code}): "
                            f"{refused[0]}\n"), err
    else:
        # its window (1 s) runs from its first try, a moment before its first refusal
        assert len(refused) >= 2 and 0.8 <= took < 5
        assert ("error: could not connect to the referee within 1 s (last: referee refused the "
                f"connection ({code}): {TOO_MANY_HELLOS} 60 s") in err


SHUTTING_DOWN = "the referee is shutting down"   # the reason of its refusals


async def restart(command: Sequence[str] = PYTHON_RANDOM, reconnect: str = "10"):
    """A welcomed bot's server restarts, as ``arena serve`` does (arena/server/app.py
    ``stop``: a remote bot is told no goodbye, and is meant to come back): the referee
    starts stopping, so that every hello from then on is refused as
    REFUSAL_CODE_SHUTTING_DOWN, and the bot's connection (through a relay) is cut; once the
    referee has refused the bot at least once, it stops, and a new referee, knowing the
    token, takes the bot back at the same address and says goodbye to it. Returns the
    bot's exit code, its stderr from its welcome on (it runs with ``-v``), the
    SHUTTING_DOWN refusals the first referee sent, and whether the second one admitted
    the bot.

    The relay cuts the connection, rather than the referee's ``Lobby.drop`` ending the
    stream as the server does: a stream dropped that way does not always end while the
    referee goes on serving (it does once the server stops), which would make this flaky."""
    first = await RefereeServer.start("tcp")
    second = None
    try:
        async with Relay(first.address) as relay:
            reg = first.lobby.register("far")
            proc = await launch(relay.address, reg.token, "--reconnect-timeout", reconnect,
                                "-v", command=command)
            await welcomed(proc)         # it has a session to get back
            first.lobby.closing = True   # from now on every hello is refused ...
            relay.drop()                 # ... the bot's next one included
            deadline = time.monotonic() + 10
            while SHUTTING_DOWN not in first.lobby.refusals and proc.returncode is None:
                if time.monotonic() > deadline:
                    raise AssertionError(f"never refused: refusals {list(first.lobby.refusals)}, "
                                         f"stderr {(await _stop([proc]))[0]}")
                await asyncio.sleep(0.02)
            refused = [r for r in first.lobby.refusals if r == SHUTTING_DOWN]
            # while no referee is there, the bot's tries find none (not a half-open link)
            relay.refusing = True
            await first.stop()
            relay.drop()
            second = await RefereeServer.start("tcp")
            second.lobby.register("far", reg.token)
            host, port = second.address.rsplit(":", 1)
            relay.target = (host, int(port))
            relay.refusing = False
            admitted = await _until_admitted(second, reg.token, proc, float(reconnect) + 5)
            await second.stop("all done")
            _, err = await asyncio.wait_for(proc.communicate(), 20)
            return proc.returncode, err.decode(), refused, admitted is not None
    finally:
        await first.stop()
        if second is not None:
            await second.stop()


#: the SDKs ping every 10 s and give up on a ping not answered within 10 s: a bot notices a
#: silent connection 10 to 20 s after it went silent (some seconds more on a loaded machine)
NOTICED_WITHIN = 30


async def stalled(command: Sequence[str] = PYTHON_RANDOM, reconnect: str = "10",
                  refuse: bool = False):
    """A welcomed bot, waiting for a match on a real TCP referee, whose connection (through
    a relay) goes silent, both ends kept open: nothing tells the bot, only its own pings
    can. With ``refuse`` the relay refuses new connections from then on. The referee says
    goodbye once the bot is back; a bot not back (nor gone) within NOTICED_WITHIN s and
    its reconnect window is killed. Returns the bot's exit code, its stderr from its
    welcome on (it runs with ``-v``), and the seconds from the stall to the bot's next
    connection through the relay (None if none came)."""
    server = await RefereeServer.start("tcp")
    try:
        async with Relay(server.address) as relay:
            token = server.lobby.register("far").token
            proc = await launch(relay.address, token, "--reconnect-timeout", reconnect, "-v",
                                command=command)
            await welcomed(proc)
            relay.stall()
            relay.refusing = refuse
            stalled_at = time.monotonic()
            took, seen = None, ""
            deadline = stalled_at + NOTICED_WITHIN + float(reconnect)
            while time.monotonic() < deadline and proc.returncode is None:
                if relay.accepted > 1:
                    took = time.monotonic() - stalled_at
                    seen = await welcomed(proc)   # the referee took its resume key
                    break
                await asyncio.sleep(0.1)
            await server.stop("all done")
            try:
                _, err = await asyncio.wait_for(proc.communicate(), 10)
            except TimeoutError:
                return None, seen + (await _stop([proc]))[0], took
            return proc.returncode, seen + err.decode(), took
    finally:
        await server.stop()
