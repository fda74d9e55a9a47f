"""A remote bot's connection breaks mid-match, for the tests of every SDK: a real referee
on TCP, seat 0's bot (any SDK, in its own process) behind a relay the test breaks
(support/proxy.py), seat 1 a Python bot connected directly."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence

from arena.referee.runner import MatchListener, MatchRunner
from arena.referee.server import RefereeServer
from support.matches import BOTS, spec
from support.proxy import Relay

#: The command of the Python SDK's sample bot that plays random cards.
PYTHON_RANDOM = (sys.executable, str(BOTS / "random" / "bot.py"))


class BreakAfter(MatchListener):
    """Calls ``action`` once, when the match has ``n`` events."""

    def __init__(self, n: int, action) -> None:
        self.n, self.action, self.done = n, action, False

    def events(self, spec, game, events, seat, latency_us) -> None:
        if not self.done and len(game.events) >= self.n:
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
                for proc in procs:
                    proc.kill()
                errs = [(await p.communicate())[1].decode() for p in procs]
                raise AssertionError(f"a bot did not connect: refusals "
                                     f"{list(server.lobby.refusals)}, stderr {errs}") from None

            def cut() -> None:
                relay.refusing = refuse
                break_with(relay)

            again = {0: lambda timeout: server.lobby.wait_session_hash(regs[0].token_hash, timeout)}
            runner = MatchRunner(spec(["far", "near"], seed=11), sessions, [BreakAfter(12, cut)],
                                 reconnect=again, grace=grace)
            result = await asyncio.wait_for(runner.run(), 60)
            await server.stop("all done")
            outcome = []
            for proc in procs:
                _, err = await asyncio.wait_for(proc.communicate(), 20)
                outcome.append((proc.returncode, err.decode()))
            return result, outcome, relay
    finally:
        await server.stop()
