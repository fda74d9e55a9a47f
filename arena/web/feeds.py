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
a stream of its own would begin from, as a snapshot and the frames after it. That is kept
up to :data:`CATCH_UP_BYTES`; past it, the stream takes no new page, and the next page
opens a fresh one. A page that falls :data:`BEHIND` messages behind (its connection too
slow) is told to reconnect and dropped, as the page does on any error; the others go on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable

from google.protobuf.message import Message

from arena.watch.client import WatchError

#: What a stream keeps for pages that join it late (JSON, since its last snapshot)
CATCH_UP_BYTES = 1024 * 1024
#: Messages a page may have waiting for its connection before it is dropped
BEHIND = 1000
#: what a page that fell behind is told (it reconnects, and starts again in sync)
FELL_BEHIND = json.dumps({"error": "this page fell too far behind the stream", "retry": True})


class Follower:
    """One page's place on a shared stream: iterate for its messages (JSON texts); the
    last may be an error's ``{"error", "retry"}``. :meth:`close` when the page leaves."""

    def __init__(self, stream: _Shared) -> None:
        self._stream = stream
        self._waiting: collections.deque[str] = collections.deque()
        self._ready = asyncio.Event()
        self._ended = False

    def _put(self, text: str) -> None:
        if self._ended:
            return
        if len(self._waiting) >= BEHIND:
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
        self._stream.leave(self)


class SharedFeeds:
    """The viewer's shared streams, by what they follow."""

    def __init__(self, to_text: Callable[[Message], Awaitable[str]]) -> None:
        self._to_text = to_text
        self._streams: dict[Hashable, _Shared] = {}

    def follow(self, key: Hashable, open_feed: Callable[[], AsyncIterator[Message]]) -> Follower:
        """A page's place on the stream ``key`` (``open_feed()`` opens it, where none is
        open that a page may still join)."""
        stream = self._streams.get(key)
        if stream is None or not stream.joinable:
            stream = self._streams[key] = _Shared(key, open_feed(), self)
        return stream.join()

    def streams(self) -> int:
        """Streams open now (each one spectator of the service)."""
        return len(self._streams)

    def _gone(self, stream: _Shared) -> None:
        if self._streams.get(stream.key) is stream:
            del self._streams[stream.key]

    async def close(self) -> None:
        """Stop every stream (the viewer is stopping)."""
        streams = list(self._streams.values())
        self._streams.clear()
        for stream in streams:
            stream.task.cancel()
        await asyncio.gather(*(s.task for s in streams), return_exceptions=True)


class _Shared:
    """One stream of the service and the pages that follow it."""

    def __init__(self, key: Hashable, feed: AsyncIterator[Message], feeds: SharedFeeds) -> None:
        self.key = key
        self._feed = feed
        self._feeds = feeds
        self._followers: set[Follower] = set()
        #: what a page joining now is sent first (None: no page may join any more)
        self._since: list[str] | None = []
        self._bytes = 0
        self.task = asyncio.create_task(self._run())

    @property
    def joinable(self) -> bool:
        return self._since is not None

    def join(self) -> Follower:
        follower = Follower(self)
        follower._waiting.extend(self._since or ())   # (within CATCH_UP_BYTES, not BEHIND)
        follower._ready.set()
        self._followers.add(follower)
        return follower

    def leave(self, follower: Follower) -> None:
        self._followers.discard(follower)
        if not self._followers and not self.task.done():
            # nobody left: the stream closes (a page joining later opens a fresh one)
            self._since = None
            self._feeds._gone(self)
            self.task.cancel()

    async def _run(self) -> None:
        last = None
        try:
            async for message in self._feed:
                text = await self._feeds._to_text(message)
                self._keep(text, message.WhichOneof("kind") == "snapshot")
                for follower in list(self._followers):
                    follower._put(text)
        except WatchError as exc:
            last = json.dumps({"error": str(exc), "retry": exc.retry})
        finally:
            self._since = None
            self._feeds._gone(self)
            with contextlib.suppress(Exception):
                await self._feed.aclose()
            for follower in list(self._followers):
                follower._end(last)
            self._followers.clear()

    def _keep(self, text: str, snapshot: bool) -> None:
        if self._since is None:
            return
        if snapshot:
            self._since, self._bytes = [], 0
        self._since.append(text)
        self._bytes += len(text)
        if self._bytes > CATCH_UP_BYTES:   # the next page opens a fresh stream
            self._since = None
            self._feeds._gone(self)
