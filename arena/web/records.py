"""The viewer's finished matches' records as JSON, each made once, in a thread, and kept.

A record never changes, and making its JSON is the costly part of a download (what that
cost the viewer: :data:`RECORD_JSON_BYTES`), so it is not made again for each request.
The downloads (``GET /api/record/ID``) and the streams' snapshots of a finished match
(:mod:`arena.web.server`) read it; it knows nothing of HTTP, so it lives apart from them.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Hashable

from google.protobuf.message import Message
from ono99.v1 import spectator_pb2 as pb

from arena.watch import records

#: Finished matches' records kept as the JSON a download sends, up to this many bytes in
#: all (the newest first). A record never changes, and its JSON is the costly part of a
#: download: an 8-seat match of 835 frames is 0.7 MB, made in 100 ms of Python, and eight
#: loops of GET on it, from anyone, took the viewer's whole time (its other pages and
#: API calls waited seconds). Each is made once, in a thread, however many ask for it.
RECORD_JSON_BYTES = 64 * 1024 * 1024


class RecordsJson:
    """Finished matches' records as JSON, kept (RECORD_JSON_BYTES); others (cut short,
    to be played again under their id) made at each download. A stream's snapshot of a
    finished match is its record too, under another key."""

    def __init__(self, budget: int = RECORD_JSON_BYTES) -> None:
        self.budget = budget
        self._kept: collections.OrderedDict[Hashable, str] = collections.OrderedDict()
        self._bytes = 0
        self._making: dict[Hashable, asyncio.Future[str]] = {}

    async def get(self, key: Hashable, fetch: Callable[[], Awaitable[Message]]) -> str:
        """The JSON of what ``fetch()`` gets, a match's record (or a stream message with
        its snapshot), kept under ``key`` (its match id) once made (its WatchError passes
        through)."""
        if (text := self._kept.get(key)) is not None:
            self._kept.move_to_end(key)
            return text
        making = self._making.get(key)
        if making is None:   # the first to ask makes it; the others meanwhile wait for it
            making = self._making[key] = asyncio.ensure_future(self._make(key, fetch))

            def made(future: asyncio.Future) -> None:
                self._making.pop(key, None)
                if not future.cancelled():
                    future.exception()   # taken: not logged if every page that asked left
            making.add_done_callback(made)
        return await asyncio.shield(making)   # a page that leaves does not stop it

    async def _make(self, key: Hashable, fetch) -> str:
        message = await fetch()
        text = await asyncio.to_thread(records.to_json, message)
        snapshot = message.snapshot if isinstance(message, pb.MatchFeed) else message
        # a finished record only: one cut short (ABORTED, a tournament cancelled) is
        # played again under its id when the tournament resumes, and kept, its first
        # attempt would be every later download's
        if snapshot.over.status == pb.MATCH_STATUS_FINISHED and len(text) <= self.budget:
            self._kept[key] = text
            self._bytes += len(text)
            while self._bytes > self.budget:
                self._bytes -= len(self._kept.popitem(last=False)[1])
        return text


#: A match list (``GET /api/matches``) is asked of the service at most this often for one
#: tournament: every page asks every 3 s, and a viewer on another machine than the
#: service is one network host there, whose quick calls are capped (20 a second): one
#: visitor's loop of /api/matches left every other page's list a 503
LIST_FRESH_S = 1.0
#: tournaments whose latest list is kept (a made-up name is a call of its own)
LISTS_KEPT = 64


class MatchLists:
    """The match lists by tournament, each asked of the service at most once a
    LIST_FRESH_S however many pages ask (those asking together share the one call; its
    WatchError passes through to each)."""

    def __init__(self, fetch: Callable[[str], Awaitable[Message]]) -> None:
        self._fetch = fetch
        self._asked: collections.OrderedDict[str, tuple[float, asyncio.Future[dict]]] = \
            collections.OrderedDict()

    async def get(self, tournament: str) -> dict:
        loop = asyncio.get_running_loop()
        asked = self._asked.get(tournament)
        if asked is None or loop.time() - asked[0] >= LIST_FRESH_S:
            future = asyncio.ensure_future(self._list(tournament))
            future.add_done_callback(lambda f: f.cancelled() or f.exception())   # taken
            asked = self._asked[tournament] = (loop.time(), future)
            self._asked.move_to_end(tournament)
            while len(self._asked) > LISTS_KEPT:
                self._asked.popitem(last=False)
        return await asyncio.shield(asked[1])

    async def _list(self, tournament: str) -> dict:
        return records.to_dict(await self._fetch(tournament))
