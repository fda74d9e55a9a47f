"""A remote bot's connection breaks mid-match: the real SDK in its own process, talking to
a real referee on TCP through a relay the test breaks (tests/support/proxy.py, reconnect.py).

Within the grace window the bot comes back and the match goes on as if nothing happened
(the bot is sent the match start and its open turn again, with every event); past it, the
seat gets a `disconnected` verdict that says so. When the referee has not noticed the drop
(a black hole, as when a route dies), the bot's reconnection replaces its old session
with the key it was welcomed with; a second process with only the token is still refused."""

from __future__ import annotations

import asyncio

from arena.referee.results import Status, VerdictKind
from arena.referee.server import RefereeServer
from support.matches import replays
from support.proxy import Relay
from support.reconnect import launch, one_match


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
