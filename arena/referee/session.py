"""One bot connection: its identity, its writes, and the turn it may answer.

A session lives as long as the bot's stream. The match runner opens a turn on it, sends
the request, and waits for actions; actions that do not answer the open turn are refused
here (``stale_turn``, ``not_your_turn``, ``malformed``) so the runner never sees them.

Nobody waits for a write. Messages go into the session's queue and its writer task
writes them in order: a bot that stops reading its stream (its gRPC flow-control window
full) holds up only its own writer, never the match runner, so its clock runs on whatever
it does with its stream. The queue is bounded: a bot that leaves ``MAX_QUEUED`` messages
unread while a write to it has been stuck for ``STUCK_S``, or ``HARD_CAP`` in any case, is
cut off (a flood of refused actions it never reads cannot grow the referee's memory).
Public events for a seat that is not acting join the Events message already waiting in
its queue, if any, rather than queue one message per turn.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import Counter, deque
from typing import TYPE_CHECKING, Any

from ono99.v1 import referee_pb2

from arena.referee import wire
from arena.referee.liveclock import live_clock

#: The largest message a bot may send (the proto's BotMessage comment): a turn's answer
#: is a few bytes; anything near this is padding.
MAX_BOT_MESSAGE = 4096

if TYPE_CHECKING:
    from arena.bots.process import BotProcess

_CLOSED = object()  # wakes a waiting runner when the stream ends
_NUDGE = object()   # wakes a waiting runner to count a refusal made here
_TIMEOUT = object()  # the turn's clock ran out

#: Messages a bot may leave unread, while a write to it is stuck for STUCK_S seconds,
#: before it is cut off: far more than a match queues for a bot that reads.
MAX_QUEUED = 256
STUCK_S = 1.0
#: ... and in any case (in-process house seats may play many turns without a pause).
HARD_CAP = 4096
#: Refused messages a bot may send while no turn of its is open, from its match's start
#: (a late answer after a timeout is one); past that it is cut off: each costs the
#: referee a read and a write, and a flood between its matches slowed everyone else's.
MAX_REFUSED_OUTSIDE = 16
#: Matches whose turn ids a session remembers after they end, to tell a late answer
#: (``stale_turn``) from a wrong id (``not_your_turn``).
RECENT_MATCHES = 4


class SessionClosed(Exception):
    """The bot's stream has ended; the message says how."""


class BotSession:
    """The referee's end of one bot's stream."""

    def __init__(self, token_hash: str, name: str, context: Any, sdk: str = "") -> None:
        # random, not counted: a count would tell a bot how many sessions came before it
        self.session_id = f"s-{secrets.token_hex(6)}"
        self.resume_key = secrets.token_urlsafe(16)   # the bot's alone: lets it replace us
        self.token_hash = token_hash
        self.name = name
        self.sdk = sdk
        self.context = context
        self.process: BotProcess | None = None  # set when the arena launched this bot
        self.close_reason = ""
        self.closed_by_referee = False          # the referee ended the stream (bad bytes)
        self.farewell = False                   # it was sent a goodbye, or must get none
        self.rejections = 0                     # refused actions in the current match
        self._refused_outside = 0               # ... of them sent while no turn was open
        self.refused: Counter[str] = Counter()  # refused actions by error code, all matches
        self.last_refusal = ""                  # the latest one's code (for a verdict)
        self._closed = False
        self._queue: deque = deque()             # messages not yet written, in order
        self._writer: asyncio.Task | None = None
        self._wake: asyncio.Future | None = None  # the idle writer waits on it
        self._write_since: float | None = None    # when the write under way began
        self._drained: asyncio.Future | None = None  # someone waits for the queue to empty
        self._open_turn: int | None = None
        self._issued: set[int] = set()          # turn ids given it in this match ...
        #: ... and in the last matches before (a late answer may come matches later: a
        #: bot asleep times out in each match that comes meanwhile)
        self._issued_before: deque[set[int]] = deque(maxlen=RECENT_MATCHES)
        self._inbox: deque = deque()            # actions (or nudges) not yet taken
        self._waiter: asyncio.Future | None = None
        self._timer: asyncio.TimerHandle | None = None  # rings for the waiting runner
        self._deadline = 0.0                     # ... when its time is out (loop time)
        self._live_deadline = 0                  # ... and on the live clock (ns)
        self._loop = asyncio.get_running_loop()
        clock = self._clock = live_clock()
        self._now_ns = clock.now_ns              # a pause of this process is not the bot's
        #: this process's pauses in all (the clock's, in ns) when the bot was last known to
        #: be there: its hello, then each match's end. A bot lost between two matches while
        #: the process was stopped is lost to the pause too (MatchRunner.lost_to_pause)
        self.paused_seen = clock.paused_ns
        self._done = self._loop.create_future()

    # ---------------------------------------------------------------- state

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, reason: str, by_referee: bool = False) -> None:
        """The stream ended (or must end): wake whoever waits on it."""
        if self._closed:
            return
        self._closed = True
        self.closed_by_referee = by_referee
        self.close_reason = reason
        self._deliver(_CLOSED)
        self._wake_writer()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._done.done():
            self._done.set_result(reason)

    def drop(self, reason: str) -> None:
        """Close and end the stream without a goodbye (the bot may come back)."""
        self.farewell = True   # none to be said
        self.close(reason)

    async def say_goodbye(self, reason: str, timeout: float = 1.0) -> None:
        """Tell the bot the referee is done with it (so it can exit by itself), and close,
        once the goodbye is written (or ``timeout`` s have passed)."""
        if not self._closed:
            try:
                self.post(wire.goodbye(reason))
                self.farewell = True
                async with asyncio.timeout(timeout):
                    await self._written()
            except (SessionClosed, TimeoutError):
                pass
        self.close(reason)

    async def wait_closed(self) -> str:
        return await asyncio.shield(self._done)

    # ---------------------------------------------------------------- writes

    def post(self, msg: referee_pb2.RefereeMessage) -> None:
        """Queue one message, written in order with every other by the session's writer;
        returns at once. :class:`SessionClosed` if the stream is gone, or if the bot has
        left so many messages unread that it is cut off now."""
        if self._closed:
            raise SessionClosed(self.close_reason)
        queue = self._queue
        queue.append(msg)
        n = len(queue)
        if n > MAX_QUEUED and (n > HARD_CAP or (
                self._write_since is not None and self._loop.time() - self._write_since > STUCK_S)):
            self.close(f"cut off: it does not read its stream ({n} messages unread)",
                       by_referee=True)
            raise SessionClosed(self.close_reason)
        if self._writer is None:
            self._writer = self._loop.create_task(self._write_all())
        else:
            self._wake_writer()

    def post_events(self, match_id: str, events) -> None:
        """Public events: added to the Events message waiting in the queue, if there is
        one not yet being written, else queued as a new message."""
        queue = self._queue
        if len(queue) > 1 and not self._closed:
            last = queue[-1]
            if last.HasField("events") and last.events.match_id == match_id:
                last.events.events.extend(events)
                return
        self.post(wire.events(match_id, events))

    async def send(self, msg: referee_pb2.RefereeMessage) -> None:
        """:meth:`post`, for callers that treat every session alike (a house seat's send
        plays its bot at once)."""
        self.post(msg)

    async def _write_all(self) -> None:
        """The writer: the queue's messages, in order, until the stream closes."""
        queue, write = self._queue, self.context.write
        try:
            while True:
                while queue and not self._closed:
                    self._write_since = self._loop.time()
                    await write(queue[0])
                    self._write_since = None
                    queue.popleft()
                if self._closed:
                    queue.clear()
                    return
                self._resolve_drained()
                self._wake = self._loop.create_future()
                await self._wake
        except asyncio.CancelledError:
            queue.clear()
            raise
        except Exception as exc:  # the transport failed: the stream is gone
            queue.clear()
            self.close(f"write failed: {exc}")
        finally:
            self._resolve_drained()

    def _resolve_drained(self) -> None:
        drained = self._drained
        if drained is not None:
            self._drained = None
            if not drained.done():
                drained.set_result(None)

    def _wake_writer(self) -> None:
        wake = self._wake
        if wake is not None:
            self._wake = None
            if not wake.done():
                wake.set_result(None)

    async def stop_writer(self, timeout: float = 1.0) -> None:
        """Stop the writer (the stream is closing): whoever writes next writes alone.

        A closed session's writer ends by itself after the write under way, dropping the
        rest of its queue; it is waited for up to ``timeout`` s and only then cancelled.
        (Cancelled in the middle of a write, it left gRPC's write pending, and the
        goodbye written next failed: a bot cut off under load got no goodbye.)"""
        writer = self._writer
        if writer is None or writer.done():
            return
        if self._closed:
            self._wake_writer()
            done, _ = await asyncio.wait((writer,), timeout=timeout)
            if done:
                return
            # else a bot that does not read: the write waits on it
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)

    async def _written(self) -> None:
        """Until the queue is written (or the writer is gone)."""
        if not self._queue or self._closed or self._writer is None or self._writer.done():
            return
        if self._drained is None:
            self._drained = self._loop.create_future()
        await asyncio.shield(self._drained)

    async def reject(self, turn_id: int, code: str, reason: str) -> None:
        self.rejections += 1
        self.refused[code] += 1
        self.last_refusal = code
        try:
            self.post(wire.rejected(turn_id, code, reason))
        except SessionClosed:
            pass

    # ---------------------------------------------------------------- turns

    def begin_match(self) -> None:
        self.rejections = 0
        self._refused_outside = 0
        self._issued_before.append(self._issued)
        self._issued = set()

    def end_match(self) -> None:
        self._open_turn = None
        self.paused_seen = self._clock.paused_ns

    def open_turn(self, turn_id: int) -> None:
        self._open_turn = turn_id
        self._issued.add(turn_id)
        self._inbox.clear()  # nothing from an earlier turn answers this one

    def close_turn(self) -> None:
        self._open_turn = None

    def _deliver(self, item: object) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(item)
        else:
            self._inbox.append(item)

    async def next_action(self, timeout: float) -> referee_pb2.Action | None:
        """The next action for the open turn, waiting up to ``timeout`` s; None when a
        refusal was counted here. Raises :class:`SessionClosed` when the stream ends and
        ``TimeoutError`` when the time runs out. (A bare future and the session's timer,
        not ``asyncio.wait_for``: no task per turn.)"""
        if self._closed:
            raise SessionClosed(self.close_reason)
        if self._inbox:
            item = self._inbox.popleft()
        else:
            waiter = self._waiter = self._loop.create_future()
            self._live_deadline = self._now_ns() + int(timeout * 1e9)
            self._arm(self._loop.time() + timeout)
            try:
                item = await waiter
            finally:
                self._waiter = None
            if item is _TIMEOUT:
                raise TimeoutError
        if item is _CLOSED:
            raise SessionClosed(self.close_reason)
        if item is _NUDGE:
            return None
        return item

    def _arm(self, deadline: float) -> None:
        """Have the timer ring by ``deadline`` (loop time) for the runner waiting now.
        One timer per session, moved only when it would ring too late: a turn ends long
        before its clock runs out, so most turns neither push a timer onto the loop's
        heap nor leave a cancelled one there for the loop to sweep out."""
        self._deadline = deadline
        timer = self._timer
        if timer is None or timer.when() > deadline:
            if timer is not None:
                timer.cancel()
            self._timer = self._loop.call_at(deadline, self._ring)

    def _ring(self) -> None:
        """The timer rang: the waiting runner's time is out if its deadline has come, on
        the live clock too, else the timer is set again for it (it was set for an earlier
        turn, or this process was paused: what the pause took is not the bot's)."""
        rang_at = self._timer.when()
        self._timer = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._deadline > rang_at:
            self._arm(self._deadline)
            return
        left = self._live_deadline - self._now_ns()
        if left > 0:
            self._arm(self._loop.time() + left / 1e9)
        else:
            waiter.set_result(_TIMEOUT)

    # ---------------------------------------------------------------- reads

    def take(self, msg: referee_pb2.BotMessage) -> bool:
        """Hand an action for the open turn to the runner at once (the hot path, no
        coroutine); False for anything else, which :meth:`on_message` answers."""
        action = msg.action
        turn_id = action.turn_id
        if turn_id and turn_id == self._open_turn and msg.HasField("action") \
                and msg.ByteSize() <= MAX_BOT_MESSAGE:
            self._deliver(action)
            return True
        return False

    async def on_message(self, msg: referee_pb2.BotMessage) -> None:
        """A message :meth:`take` did not take (called by the servicer's read loop): it is
        refused, and the runner is nudged to count the refusal."""
        kind = msg.WhichOneof("kind")
        size = msg.ByteSize()
        if size > MAX_BOT_MESSAGE:
            await self.reject(msg.action.turn_id, "malformed",
                              f"a message of {size} bytes; a bot's messages are at most "
                              f"{MAX_BOT_MESSAGE} bytes")
        elif kind == "action":
            turn_id = msg.action.turn_id
            if turn_id in self._issued or any(turn_id in ids for ids in self._issued_before):
                await self.reject(turn_id, "stale_turn", f"turn {turn_id} is already over")
            else:
                await self.reject(turn_id, "not_your_turn",
                                  f"turn {turn_id} is not a turn of yours"
                                  + ("" if self._open_turn is None
                                     else f"; your open turn is {self._open_turn}"))
        elif kind == "hello":
            await self.reject(0, "malformed", "hello was already received on this stream")
        else:
            await self.reject(0, "malformed", "a BotMessage with no action")
        if self._open_turn is not None:
            self._deliver(_NUDGE)
            return
        self._refused_outside += 1
        if self._refused_outside > MAX_REFUSED_OUTSIDE:
            self.close(f"cut off: {self._refused_outside} refused messages while no turn of "
                       f"its was open (at most {MAX_REFUSED_OUTSIDE} a match)", by_referee=True)
