"""A remote bot's connection breaks mid-match: the real SDK in its own process, talking to
a real referee on TCP through a relay the test breaks (tests/support/proxy.py).

Within the grace window the bot comes back and the match goes on as if nothing happened
(the bot is sent the match start and its open turn again, with every event); past it, the
seat gets a `disconnected` verdict that says so. When the referee has not noticed the drop
(a black hole, as when a route dies), the bot's reconnection replaces its old session
with the key it was welcomed with; a second process with only the token is still refused."""

from __future__ import annotations

import asyncio
import os
import sys

from arena.referee.results import Status, VerdictKind
from arena.referee.listeners import MatchListener
from arena.referee.runner import MatchRunner
from arena.referee.server import RefereeServer
from support.matches import BOTS, replays, spec
from support.proxy import Relay

RANDOM = BOTS / "random" / "bot.py"


class BreakAfter(MatchListener):
    """Calls ``action`` once, when the match has ``n`` events."""

    def __init__(self, n: int, action) -> None:
        self.n, self.action, self.done = n, action, False

    def frame(self, frame) -> None:
        if not self.done and frame.view.n_events >= self.n:
            self.done = True
            self.action()


async def launch(address: str, token: str, *args: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONO99_")}
    return await asyncio.create_subprocess_exec(
        sys.executable, str(RANDOM), "--referee", address, "--token", token, *args, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)


async def one_match(break_with, grace: float = 5.0, refuse: bool = False, reconnect: str = "10"):
    """Seat 0 plays through the relay, seat 1 directly; ``break_with(relay)`` breaks the
    relay after some events. Returns the result, seat 0's exit code and stderr, and the
    relay."""
    server = await RefereeServer.start("tcp")
    try:
        async with Relay(server.address) as relay:
            regs = [server.lobby.register(n) for n in ("far", "near")]
            far = await launch(relay.address, regs[0].token, "--reconnect-timeout", reconnect)
            near = await launch(server.address, regs[1].token)
            try:
                sessions = [await server.lobby.wait_session(r.token, 10) for r in regs]
            except TimeoutError:
                for proc in (far, near):
                    if proc.returncode is None:
                        proc.kill()
                errs = [(await p.communicate())[1].decode() for p in (far, near)]
                raise AssertionError(f"a bot did not connect: refusals "
                                     f"{list(server.lobby.refusals)}, stderr {errs}") from None

            def cut() -> None:
                relay.refusing = refuse
                break_with(relay)

            again = {0: lambda timeout: server.lobby.wait_session_hash(regs[0].token_hash, timeout)}
            runner = MatchRunner(spec(["far", "near"], seed=11), sessions, [BreakAfter(12, cut)],
                                 reconnect=again, grace=grace)
            task = asyncio.create_task(runner.run())
            done, _ = await asyncio.wait({task}, timeout=30)
            if not done:   # a hang: say where, then fail
                import io
                stack = io.StringIO()
                task.print_stack(file=stack)
                task.cancel()
                for proc in (far, near):
                    if proc.returncode is None:
                        proc.kill()
                errs = [(await p.communicate())[1].decode() for p in (far, near)]
                raise AssertionError(f"the match hung: {stack.getvalue()}\nsessions "
                                     f"{[(s.session_id, s.closed, s.close_reason) for s in runner.sessions]}"
                                     f"\nrefusals {list(server.lobby.refusals)}\nstderr {errs}")
            result = task.result()
            await server.stop("all done")
            outcome = []
            for proc in (far, near):
                _, err = await asyncio.wait_for(proc.communicate(), 20)
                outcome.append((proc.returncode, err.decode()))
            return result, outcome, relay
    finally:
        await server.stop()


def test_a_bot_whose_connection_drops_comes_back_and_the_match_goes_on():
    result, [(rc, err), (near_rc, _)], relay = asyncio.run(one_match(Relay.drop))
    assert result.status == Status.FINISHED and result.verdicts == [], result.verdicts
    assert replays(result)
    assert "reconnected to the referee after" in err, err
    assert relay.accepted == 2
    assert (rc, near_rc) == (0, 0), err


def test_a_silent_drop_is_replaced_by_the_reconnection():
    """The referee still holds the dead session: the bot's resume key replaces it."""
    result, [(rc, err), _], relay = asyncio.run(one_match(Relay.black_hole))
    assert result.status == Status.FINISHED and result.verdicts == [], result.verdicts
    assert "reconnected to the referee after" in err and "TOKEN_IN_USE" not in err, err
    assert relay.accepted == 2 and rc == 0


def test_past_the_grace_window_the_seat_is_disconnected():
    result, [(rc, err), (near_rc, _)], _ = asyncio.run(
        one_match(Relay.drop, grace=0.5, refuse=True, reconnect="2"))
    assert result.status == Status.FINISHED
    [verdict] = result.verdicts
    assert (verdict.seat, verdict.kind) == (0, VerdictKind.DISCONNECTED)
    assert "did not reconnect within 0.5 s" in verdict.detail
    assert result.ranking[0] == (1,)
    assert rc == 5 and "could not be restored within 2 s" in err, err
    assert near_rc == 0


def test_the_token_alone_does_not_take_over_a_live_session():
    async def scenario():
        server = await RefereeServer.start("tcp")
        try:
            reg = server.lobby.register("one")
            first = await launch(server.address, reg.token)
            await server.lobby.wait_session(reg.token, 10)
            second = await launch(server.address, reg.token)
            _, err = await asyncio.wait_for(second.communicate(), 20)
            still = server.lobby.connected(reg.token_hash)
            await server.stop("all done")
            await asyncio.wait_for(first.communicate(), 20)
            return second.returncode, err.decode(), still, first.returncode
        finally:
            await server.stop()

    rc, err, still, first_rc = asyncio.run(scenario())
    assert rc == 3 and "REFUSAL_CODE_TOKEN_IN_USE" in err
    assert still and first_rc == 0
