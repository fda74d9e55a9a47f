"""The referee's clock: real time, except while the referee itself was not running.

A bot is timed from the moment its turn is sent to the moment its answer is read. While
the referee's process is stopped (Ctrl-Z then ``fg``, SIGSTOP, a paused virtual machine,
a machine swapping hard), its event loop reads nothing: an answer a bot sent in time
waits in a socket, and a plain clock charges the bot for the whole pause. A pause longer
than a bot's time gave it a timeout verdict it had not earned (or, when its answer was
read before the timer rang, drained its bank for every move after).

:class:`LiveClock` counts time as it passes, except that no more than
:data:`MOST_BETWEEN_BEATS_NS` is counted between two beats of a callback the event loop
runs every :data:`BEAT_S`. A loop that runs keeps beating, and its live time is real
time; a pause counts as that much at most, whichever callback runs first when it is
over, since :meth:`LiveClock.now_ns` caps the time since the last beat the same way.
(A loop kept from running by its own work, not by a stop, is the referee's delay too:
the bot waiting on it is not charged for it either.)
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator

#: How often the loop beats, in seconds.
BEAT_S = 0.05
#: The most live time counted between two beats: a beat that comes later than this found
#: the referee not running for the rest of the gap.
MOST_BETWEEN_BEATS_NS = 250_000_000

_perf_ns = time.perf_counter_ns


class LiveClock:
    """Live time on one event loop, in nanoseconds on the scale of ``perf_counter_ns``
    (the same while the loop runs)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # nothing here refers to the loop (its timer handles do): the loop's timer holds
        # the clock, and a loop dropped takes its clock along
        self._beat_at = self._live = _perf_ns()   # real and live time at the last beat
        self.paused_ns = 0                         # real time not counted, in all
        loop.call_later(BEAT_S, self._beat)

    def now_ns(self) -> int:
        """Live time now."""
        since = _perf_ns() - self._beat_at
        return self._live + (since if since < MOST_BETWEEN_BEATS_NS else MOST_BETWEEN_BEATS_NS)

    def _beat(self) -> None:
        # a plain callback, not a task: it runs in the first pass of the loop after a
        # pause, before any task woken by what arrived meanwhile
        now = _perf_ns()
        since = now - self._beat_at
        if since > MOST_BETWEEN_BEATS_NS:
            self.paused_ns += since - MOST_BETWEEN_BEATS_NS
            since = MOST_BETWEEN_BEATS_NS
        self._live += since
        self._beat_at = now
        asyncio.get_running_loop().call_later(BEAT_S, self._beat)


_clocks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LiveClock] = \
    weakref.WeakKeyDictionary()


def live_clock() -> LiveClock:
    """The running event loop's clock, started on first use (one per loop: a referee
    process's matches share it)."""
    loop = asyncio.get_running_loop()
    clock = _clocks.get(loop)
    if clock is None:
        clock = _clocks[loop] = LiveClock(loop)
    return clock


@contextlib.asynccontextmanager
async def live_timeout(seconds: float) -> AsyncIterator[asyncio.Timeout]:
    """As ``asyncio.timeout(seconds)``, on live time: a wait for a bot (its connection,
    its hello) that a pause of this process outlasted goes on for what is left of it. The
    timeout it yields may be moved (``reschedule``) as asyncio's may."""
    loop = asyncio.get_running_loop()
    clock = live_clock()
    deadline = clock.now_ns() + int(seconds * 1e9)
    async with asyncio.timeout(None) as timeout:
        def ring() -> None:
            nonlocal handle
            left = deadline - clock.now_ns()
            if left <= 0:
                if timeout.when() is None:     # not moved (reschedule) meanwhile
                    timeout.reschedule(loop.time())
            else:
                handle = loop.call_later(left / 1e9, ring)

        handle = loop.call_later(seconds, ring)
        try:
            yield timeout
        finally:
            handle.cancel()
