"""A remote bot's connection breaks mid-match: the real SDK in its own process, talking to
a real referee on TCP through a relay the test breaks (tests/support/proxy.py, reconnect.py).

Within the grace window the bot comes back and the match goes on as if nothing happened
(the bot is sent the match start and its open turn again, with every event); past it, the
seat gets a `disconnected` verdict that says so. When the referee has not noticed the drop
(a black hole, as when a route dies), the bot's reconnection replaces its old session
with the key it was welcomed with; a second process with only the token is still refused."""

from __future__ import annotations

import asyncio
import re

from ono99.transport import grpc
from ono99.v1 import referee_pb2 as pb, referee_pb2_grpc

from arena.referee.results import Status, VerdictKind
from arena.referee.runner import MatchRunner
from arena.referee.server import RefereeServer
from support.matches import replays, spec
from support.proxy import Relay
from support.reconnect import launch, one_match


async def read(call, kind):
    """The next message of ``kind`` on ``call`` (others skipped)."""
    while True:
        msg = await asyncio.wait_for(call.read(), 10)
        if msg.WhichOneof("kind") == kind:
            return msg


async def raw_match(server, max_rejections: int):
    """Two raw bots said hello to ``server``; a match between them runs, each may come
    back with its resume key. Returns the runner's task, the bots' registrations, their
    calls with their resume keys, their sessions, and ``hello(reg, key)`` for another
    stream of a bot."""
    regs = [server.lobby.register(n) for n in ("a", "b")]
    channel = grpc.aio.insecure_channel(server.address)
    stub = referee_pb2_grpc.RefereeStub(channel)

    async def hello(reg, key=""):
        call = stub.Play()
        await call.write(pb.BotMessage(hello=pb.Hello(token=reg.token, protocol_version=1,
                                                      resume_key=key)))
        return call, (await read(call, "welcome")).welcome.resume_key

    calls = [await hello(reg) for reg in regs]
    sessions = [await server.lobby.wait_session(r.token, 10) for r in regs]
    again = {s: (lambda t, h=r.token_hash: server.lobby.wait_session_hash(h, t))
             for s, r in enumerate(regs)}
    runner = MatchRunner(spec(["a", "b"], max_rejections=max_rejections), sessions, reconnect=again)
    task = asyncio.create_task(runner.run())
    for call, _ in calls:
        await read(call, "match_start")
    while not any(s._open_turn for s in sessions):
        await asyncio.sleep(0.01)
    return task, regs, calls, sessions, hello, channel


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
    assert rc == 5 and "could not reconnect to the referee within 2 s" in err, err
    assert near_rc == 0


def test_a_drop_with_little_clock_left_names_the_wait_it_had():
    """The wait for a dropped bot is the grace or what is left of its clock, whichever is
    less: the verdict said the grace ('within 10 s') after a wait of 1.5 s."""
    result, [(rc, err), _], _ = asyncio.run(
        one_match(Relay.drop, grace=30, refuse=True, reconnect="2"))
    [verdict] = result.verdicts
    assert verdict.kind == VerdictKind.DISCONNECTED
    waited = re.search(r"it did not reconnect within ([0-9.]+) s", verdict.detail)
    assert waited and 0 < float(waited.group(1)) <= 11, verdict.detail   # 1 s + 10 s of bank


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


def test_a_bot_back_while_another_seat_acts_hears_the_match_end():
    """A bot's new session is taken up at its next turn; when the match ends before that,
    it still gets the match start (it has heard nothing of the match on this session) and
    the match end. (Found by the fuzzer: the runner held the old, closed session to the
    end, and the match end reached nobody.)"""
    async def scenario():
        server = await RefereeServer.start("tcp")
        try:
            task, regs, calls, sessions, hello, channel = await raw_match(server, 0)
            async with channel:
                acting = next(i for i, s in enumerate(sessions) if s._open_turn)
                other = 1 - acting
                turn = (await read(calls[acting][0], "turn")).turn
                back, _ = await hello(regs[other], calls[other][1])   # replaces its session
                await read(calls[other][0], "goodbye")
                # one refused card is one too many (max_rejections=0): the match ends now
                await calls[acting][0].write(pb.BotMessage(action=pb.Action(turn_id=turn.turn_id)))
                await read(calls[acting][0], "match_end")
                start = await read(back, "match_start")
                end = (await read(back, "match_end")).match_end
                result = await task
                back.cancel()
                calls[acting][0].cancel()
                return acting, other, start.match_start, end, result
        finally:
            await server.stop()

    acting, other, start, end, result = asyncio.run(scenario())
    assert start.seat == other and start.match_id == end.match_id == result.match_id
    assert [(v.seat, v.kind) for v in end.verdicts] == [(acting, pb.VERDICT_KIND_ILLEGAL)]
    assert [list(p.seats) for p in end.ranking] == [[other], [acting]]
    assert any(e.HasField("round_started") for e in end.events)   # every event, from the deal


def test_refused_actions_still_count_after_a_reconnection():
    """The limit of refused actions is the match's: reconnecting with the resume key reset
    it, and a bot was refused 20 times in a match, 5 a connection, with no verdict."""
    async def scenario():
        server = await RefereeServer.start("tcp")
        try:
            task, regs, calls, sessions, hello, channel = await raw_match(server, 2)
            async with channel:
                acting = next(i for i, s in enumerate(sessions) if s._open_turn)
                call, key = calls[acting]
                turn = (await read(call, "turn")).turn
                for _ in range(2):          # the limit: refused, no verdict yet
                    await call.write(pb.BotMessage(action=pb.Action(turn_id=turn.turn_id)))
                    await read(call, "rejected")
                back, _ = await hello(regs[acting], key)      # replaces its session
                turn = (await read(back, "turn")).turn        # the same turn, again
                await back.write(pb.BotMessage(action=pb.Action(turn_id=turn.turn_id)))
                end = (await read(back, "match_end")).match_end
                result = await task
                back.cancel()
                for c, _ in calls:
                    c.cancel()
                return acting, end, result
        finally:
            await server.stop()

    acting, end, result = asyncio.run(scenario())
    assert [(v.seat, v.kind) for v in result.verdicts] == [(acting, VerdictKind.ILLEGAL)]
    assert "3 refused actions in this match (the limit is 2)" in result.verdicts[0].detail
    assert [(v.seat, v.kind) for v in end.verdicts] == [(acting, pb.VERDICT_KIND_ILLEGAL)]
