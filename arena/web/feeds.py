"""The spectator streams the viewer's pages follow, each opened once however many pages
follow it.

A page's WebSocket used to be a stream of its own from the spectator service: a thousand
pages on TV were a thousand streams, each message made and sent a thousand times by the
process that plays the matches, and made JSON a thousand times here. Now the pages that
follow the same thing (a match at one delay, TV of one tournament at one delay, one
tournament) share one stream: its messages are made JSON once and handed to each page.
The service's cost is that of one spectator per viewer process, whatever the audience:
more viewer processes (behind a load balancer) carry more pages.

A page that joins a stream already under way is first sent what the stream sent since
its last snapshot (every stream begins with one, TV again at each switch): the same state
a stream of its own would begin from, as a snapshot and the messages after it (of a
tournament's standings, each a whole table, only the latest). That is kept up to
:data:`CATCH_UP_BYTES` a stream and :data:`CATCH_UP_TOTAL` for all; past either, the
stream takes no new page, and the next page opens a fresh one. A page that falls
:data:`BEHIND` messages behind (its connection too slow) is told to reconnect and dropped,
as the page does on any error; the others go on.

How many streams a viewer holds is bounded, whatever its pages ask: every visitor of a
public viewer is one loopback address behind its reverse proxy, so no cap per address
applies, and each distinct ``?delay=`` (0 to 100,000) or ``?tournament=`` was a stream
of its own: one visitor opened 1,000 (``/ws/tv?delay=0..999``), and ``/api/matches``
took 3 to 11 s where it took 18 ms. A delay is rounded up to one of
:data:`DELAY_STEPS` (:func:`shared_delay`), and at most :data:`MAX_STREAMS` streams are
open at once: a page that would open one more is sent an error (``retry``: it tries
again, waiting longer each time) and closed, while pages on the streams open go on.

A late page's catch-up ends with ``{"catch_up_age_ms": N}`` when its stream is a match's:
how long ago the last frame (or snapshot) it was just sent came, so that its turn clock
shows how long the seat to act has really been thinking, not since the page joined.
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable

from google.protobuf.message import Message

from ono99.v1.spectator_pb2 import MatchSnapshot

from arena.watch.client import WatchError
from arena.watch.hub import MAX_DELAY_TURNS

#: What a stream keeps for pages that join it late (JSON, since its last snapshot)
CATCH_UP_BYTES = 1024 * 1024
#: ... and all streams together (a thousand pages on a thousand matches)
CATCH_UP_TOTAL = 64 * 1024 * 1024
#: Messages a page may have waiting for its connection, beyond what it joined with, before
#: it is dropped
BEHIND = 1000
#: the kinds of a match's stream that (re)start its turn clock on a page (and its
#: snapshot: a MatchSnapshot, not a tournament's)
CLOCKED = frozenset({"frame", "frames"})
#: what a page that fell behind is told (it reconnects, and starts again in sync)
FELL_BEHIND = json.dumps({"error": "this page fell too far behind the stream", "retry": True})
#: what pages are told when their stream fails in a way of the viewer's own
BROKEN = json.dumps({"error": "the web viewer's stream broke", "retry": True})

#: The delays a stream is held back by (whole turns): one asked for is rounded up to the
#: next (never down: a delay is asked for to see less), so all the delays a page may ask
#: for are 17 streams of a thing followed, not 100,001. Steps of 1-2-5 a power of ten:
#: a stream's own delay is still the service's at least (arena serve --spectator-delay),
#: which it applies on its side.
DELAY_STEPS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000,
               50_000, MAX_DELAY_TURNS)
#: Streams of the spectator service the viewer holds open at once, shared by any number
#: of pages; a page that would open another is refused (TooManyStreams). Enough for a
#: page on every live match of a big tournament with TV and standings beside (a finished
#: match's stream ends after its snapshot), and a small cost to the loop that plays the
#: matches: idle streams cost it (1,000 took a ladder from 16.5 to 3.5 matches/s, 200
#: from 22 to 12/s: review 41). More viewer processes carry more.
MAX_STREAMS = 64

log = logging.getLogger(__name__)


def shared_delay(turns: int) -> int:
    """The delay of the stream a page asking for ``turns`` (0 to MAX_DELAY_TURNS) follows:
    the first of DELAY_STEPS at least as long."""
    return DELAY_STEPS[bisect.bisect_left(DELAY_STEPS, turns)]


class TooManyStreams(Exception):
    """The viewer holds MAX_STREAMS streams already; the message is the page's line."""


class Follower:
    """One page's place on a shared stream: iterate for its messages (JSON texts); the
    last may be an error's ``{"error", "retry"}``. :meth:`close` when the page leaves
    (again: nothing)."""

    def __init__(self, stream: _Shared, catch_up: list[str]) -> None:
        self._stream = stream
        self._waiting: collections.deque[str] = collections.deque(catch_up)
        self._most = BEHIND + len(catch_up)
        self._ready = asyncio.Event()
        self._ready.set()
        self._ended = False

    def _put(self, text: str) -> None:
        if self._ended:
            return
        if len(self._waiting) >= self._most:
            self._waiting.clear()
            self._end(FELL_BEHIND)
            self._stream.leave(self)
            return
        self._waiting.append(text)
        self._ready.set()

    def _end(self, last: str | None) -> None:
        if last is not None:
            self._waiting.append(last)
        self._ended = True
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[str]:
        while True:
            while self._waiting:
                yield self._waiting.popleft()
            if self._ended:
                return
            self._ready.clear()
            await self._ready.wait()

    def close(self) -> None:
        self._ended = True
        self._waiting.clear()
        self._stream.leave(self)


class SharedFeeds:
    """The viewer's shared streams, by what they follow."""

    def __init__(self, to_text: Callable[[Message], Awaitable[str]]) -> None:
        self._to_text = to_text
        self._joinable: dict[Hashable, _Shared] = {}   # the stream a new page joins, by key
        self._running: set[_Shared] = set()            # every stream open
        self.kept_bytes = 0                            # their catch-ups, together

    def follow(self, key: Hashable, open_feed: Callable[[], AsyncIterator[Message]],
               always: bool = False) -> Follower:
        """A page's place on the stream ``key`` (``open_feed()`` opens it, where none is
        open that a page may still join). :class:`TooManyStreams` where that would be
        more than MAX_STREAMS, but for a stream that is ``always`` opened: the front
        page's (TV, the tournament running, at each delay step: one visitor asking for
        64 made-up tournaments' TV held every place, and every other page was refused)."""
        stream = self._joinable.get(key)
        if stream is None or not stream.joinable:
            if not always and sum(not s.always for s in self._running) >= MAX_STREAMS:
                raise TooManyStreams(f"this web viewer follows {MAX_STREAMS} streams of the "
                                     "spectator service already, the most it may; try again "
                                     "later")
            stream = self._joinable[key] = _Shared(key, open_feed, self, always)
            self._running.add(stream)
        return stream.join()

    def streams(self) -> int:
        """Streams open now (each one spectator of the service)."""
        return len(self._running)

    def _unjoinable(self, stream: _Shared) -> None:
        if self._joinable.get(stream.key) is stream:
            del self._joinable[stream.key]

    def _ended(self, stream: _Shared) -> None:
        self._unjoinable(stream)
        self._running.discard(stream)

    async def close(self) -> None:
        """Stop every stream (the viewer is stopping)."""
        streams = list(self._running)
        for stream in streams:
            stream.stop()
        await asyncio.gather(*(s.task for s in streams), return_exceptions=True)


class _Shared:
    """One stream of the service and the pages that follow it."""

    def __init__(self, key: Hashable, open_feed: Callable[[], AsyncIterator[Message]],
                 feeds: SharedFeeds, always: bool = False) -> None:
        self.key = key
        self.always = always           # opened beyond MAX_STREAMS (SharedFeeds.follow)
        self._open_feed = open_feed    # called in the task: one cancelled first opens nothing
        self._feeds = feeds
        self._followers: set[Follower] = set()
        #: what a page joining now is sent first (None: no page may join any more)
        self._since: list[str] | None = []
        self._standings: int | None = None   # where the latest standings are in it
        self._clocked_at: float | None = None   # when a match's turn clock last restarted
        self._bytes = 0
        self.task = asyncio.create_task(self._run())

    @property
    def joinable(self) -> bool:
        return self._since is not None

    def join(self) -> Follower:
        catch_up = list(self._since or ())
        if catch_up and self._clocked_at is not None:
            age_ms = round((time.monotonic() - self._clocked_at) * 1000)
            catch_up.append(json.dumps({"catch_up_age_ms": age_ms}))
        follower = Follower(self, catch_up)
        self._followers.add(follower)
        return follower

    def leave(self, follower: Follower) -> None:
        self._followers.discard(follower)
        if not self._followers:   # nobody left: a page joining later opens a fresh stream
            self.stop()

    def stop(self) -> None:
        self._drop()
        self._feeds._ended(self)
        self.task.cancel()

    async def _run(self) -> None:
        last = None
        feed = None
        try:
            feed = self._open_feed()
            async for message in feed:
                text = await self._feeds._to_text(message)
                kind = message.WhichOneof("kind")
                if kind in CLOCKED or (kind == "snapshot"
                                       and isinstance(message.snapshot, MatchSnapshot)):
                    self._clocked_at = time.monotonic()
                self._keep(text, kind)
                for follower in list(self._followers):
                    follower._put(text)
        except WatchError as exc:
            last = json.dumps({"error": str(exc), "retry": exc.retry})
        except Exception:   # (not the page's fault, nor the service's: said, and logged)
            log.exception("a web viewer stream (%s) broke", self.key)
            last = BROKEN
        finally:
            self._drop()
            self._feeds._ended(self)
            if feed is not None:
                with contextlib.suppress(Exception):
                    await feed.aclose()
            for follower in list(self._followers):
                follower._end(last)
            self._followers.clear()

    def _keep(self, text: str, kind: str | None) -> None:
        if self._since is None:
            return
        if kind == "snapshot":
            self._drop()
            self._since = []
        elif kind == "standings" and self._standings is not None:
            # a whole table: the latest is all a page needs of them
            self._count(-len(self._since.pop(self._standings)))
        if kind == "standings":
            self._standings = len(self._since)
        self._since.append(text)
        self._count(len(text))
        if self._bytes > CATCH_UP_BYTES or self._feeds.kept_bytes > CATCH_UP_TOTAL:
            self._drop()       # the next page opens a fresh stream
            self._feeds._unjoinable(self)

    def _count(self, size: int) -> None:
        """``size`` bytes more (or fewer) kept, in this stream and in all."""
        self._bytes += size
        self._feeds.kept_bytes += size

    def _drop(self) -> None:
        """What it kept for late pages goes (none may join any more, or a snapshot came)."""
        self._count(-self._bytes)
        self._since = None
        self._standings = None
