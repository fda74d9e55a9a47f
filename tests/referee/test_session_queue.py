"""A session's writes: queued, written in order by the session's own writer, never waited
for by the match; a bot that does not read is cut off once its queue is over the limit
while a write to it is stuck (or over the hard cap at once). The gRPC stream here is a
stand-in whose writes the test holds or lets through: the session's logic is what runs."""

from __future__ import annotations

import asyncio

import pytest
from ono99.v1 import game_pb2, referee_pb2 as pb

from arena.referee import session as session_module
from arena.referee.session import BotSession, SessionClosed


class Stream:
    """A stream's write side: records what was written; ``open`` lets writes through."""

    def __init__(self) -> None:
        self.written: list[pb.RefereeMessage] = []
        self.open = asyncio.Event()
        self.open.set()

    async def write(self, msg) -> None:
        await self.open.wait()
        self.written.append(msg)


def message(i: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(events=pb.Events(match_id=f"m{i}"))


def test_messages_are_written_in_order_without_waiting():
    async def go():
        stream = Stream()
        s = BotSession("h", "bot", stream)
        for i in range(50):
            s.post(message(i))           # returns at once
        assert stream.written == []
        await asyncio.sleep(0.01)
        return stream.written

    assert [m.events.match_id for m in asyncio.run(go())] == [f"m{i}" for i in range(50)]


def test_a_bot_that_does_not_read_is_cut_off_once_its_write_is_stuck():
    """Over the limit, the bot is cut off once its write has been stuck for STUCK_S (1 s),
    not before. (With STUCK_S patched to 0.1 s, the 260 posts below outlasted it on a
    loaded machine now and then: cut off before the test looked.)"""
    async def go():
        stream = Stream()
        stream.open.clear()              # the bot reads nothing: the first write never ends
        s = BotSession("h", "bot", stream)
        s.post(message(0))
        await asyncio.sleep(0)           # the writer takes it: the first write is under way
        for i in range(1, session_module.MAX_QUEUED + 5):
            s.post(message(i))           # over the limit, but not stuck for long yet
        await asyncio.sleep(session_module.STUCK_S + 0.05)
        with pytest.raises(SessionClosed) as exc:
            s.post(message(-1))
        return s, str(exc.value)

    s, error = asyncio.run(go())
    assert s.closed and s.closed_by_referee
    assert "cut off: it does not read its stream" in error


def test_the_hard_cap_holds_however_fast_messages_come():
    async def go():
        s = BotSession("h", "bot", Stream())
        with pytest.raises(SessionClosed):
            for i in range(session_module.HARD_CAP + 1):
                s.post(message(i))     # no pause: the writer never ran
        return s

    assert asyncio.run(go()).closed


def test_events_join_the_events_message_waiting_in_the_queue():
    async def go():
        stream = Stream()
        stream.open.clear()
        s = BotSession("h", "bot", stream)
        s.post(message(0))
        await asyncio.sleep(0)           # the writer takes it: the first write is under way
        e = game_pb2.Event(seat_lost=game_pb2.SeatLost(seat=1))
        for _ in range(5):               # the same match as the one being written
            s.post_events("m0", [e])
        queued = len(s._queue)
        stream.open.set()
        await asyncio.sleep(0.01)
        return queued, stream.written

    queued, written = asyncio.run(go())
    assert queued == 2                   # the one being written, and one Events message
    assert [len(m.events.events) for m in written] == [0, 5]
