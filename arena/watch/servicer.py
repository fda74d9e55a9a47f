"""The Spectator service (spectator.proto): thin, over a :class:`SpectatorHub` and, for
matches no longer in memory, a source of stored records."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from ono99.transport import grpc
from ono99.v1 import spectator_pb2 as pb, spectator_pb2_grpc

from arena.referee.lobby import token_hash
from arena.rpc import abort
from arena.watch import hosts, wire
from arena.watch.hub import RESYNC, STOPPING, SpectatorHub, Subscription

log = logging.getLogger(__name__)

TV_PAUSE_S = 2.0      # TV shows a finished match this long before it switches
#: Every message to a viewer costs the event loop that plays the matches about 0.1 ms,
#: gRPC's own, whatever its size: 1,000 viewers of the ladder, each sent the start and
#: the end of every match, cut it from 16.5 matches a second to 3.5 (the forty-first
#: review). So beyond the first UNPACED_VIEWERS, viewers share a budget of messages a
#: second: a stream sends at most one message every (viewers - UNPACED_VIEWERS) /
#: VIEWER_MESSAGES_S seconds, and what came meanwhile goes in its next message (frames
#: in a batch, a tournament's news in a batch). A few dozen viewers are sent everything
#: as it comes (as arena bench watch's 20); 1,000 a message a second each; MAX_VIEWERS
#: one every 2 s.
UNPACED_VIEWERS = 32
VIEWER_MESSAGES_S = 1000
#: streams open at once (WatchMatch, WatchTV, WatchTournament): each holds a queue and a
#: gRPC call, some 35 KB; beyond this many a new one is refused RESOURCE_EXHAUSTED
MAX_VIEWERS = 2000
#: ... of which network hosts may take all but these: the organiser's own (local peers:
#: its web viewer) are never locked out (16 IPv6 /64s of one /56 filled every seat)
LOCAL_SEATS = 100
#: ... and from one network host (local peers are not counted: arena.watch.hosts). A web
#: viewer on another machine relays all its pages through at most 64 streams
#: (arena.web.feeds.MAX_STREAMS): two of them fit. It was 1,000: one host's idle streams
#: then cost a ladder most of its speed (the forty-first review)
MAX_VIEWERS_PER_HOST = 128
#: Records of stored matches are replays (a database read and the engine, milliseconds
#: each), asked for by anyone: four loops of GetRecord from one client cut a server's
#: ladder from 57 matches a second to 8. So they are built one at a time, in a thread,
#: and after one that took t the next waits RECORD_REST * t: records take at most a
#: quarter of the server's time. At most RECORD_QUEUE requests wait; more are refused
#: RESOURCE_EXHAUSTED. The last RECORD_CACHE records are kept (a finished match's record
#: never changes), those of matches up to RECORD_CACHE_FRAMES frames.
RECORD_REST = 3.0
RECORD_QUEUE = 32
#: ... of them from one network host (local peers are not counted): made-up match ids
#: from one client took every place, and real requests were refused
RECORD_QUEUE_PER_HOST = 8
RECORD_CACHE = 64
RECORD_CACHE_FRAMES = 2000
#: the last snapshots' messages kept encoded (the hub's shared snapshots are asked for by
#: many viewers within one frame; an unshared one is kept no longer than the next few)
SNAPSHOTS_ENCODED = 16
#: Quick calls (ListMatches, GetRecord) a second from one network host, on average, and
#: at once. They run in the loop that plays the matches: 410 ListMatches a second from one
#: client halved a ladder (the forty-first review). Local peers (the organiser's own web
#: viewer, which has its own limits) are not counted.
CALLS_PER_S = 20
CALLS_BURST = 40
_NOTHING = object()


class RecordSource(Protocol):
    """Where the records of matches no longer in the hub come from (a store)."""

    def snapshot(self, match_id: str) -> pb.MatchSnapshot | None:
        """A stored match's record, or None; called in a worker thread (one at a time)."""

    def close(self) -> None:
        """What it holds open is let go (the spectator service has stopped)."""


class SpectatorServicer(spectator_pb2_grpc.SpectatorServicer):
    """``ono99.v1.Spectator``: matches and tournaments from the hub, older records from
    ``records``; every hand only for a caller with the organiser token."""

    def __init__(self, hub: SpectatorHub, records: RecordSource | None = None,
                 organizer_hash: str | None = None) -> None:
        self.hub = hub
        self.records = records
        self.organizer_hash = organizer_hash
        self.viewers = 0
        self.per_host = hosts.PerHost(MAX_VIEWERS_PER_HOST)
        self.calls = hosts.CallRate(CALLS_PER_S, CALLS_BURST)
        self._building = asyncio.Lock()
        self._waiting = 0
        self._waiting_from = hosts.PerHost(RECORD_QUEUE_PER_HOST)
        self._next_build = 0.0                 # loop time a record may next be built
        self._records: collections.OrderedDict[str, pb.MatchSnapshot] = collections.OrderedDict()
        self._frames = wire.frame_batches()          # encoded once for every viewer
        self._news = wire.tournament_batches()
        #: a snapshot's message, encoded once for the viewers that share it (the hub's
        #: shared snapshots: TV's viewers switching to the next match)
        self._snapshots = wire.Encodings(wire.snapshot_feed, keep=SNAPSHOTS_ENCODED)

    @contextlib.asynccontextmanager
    async def _viewer(self, context):
        """One stream's seat among the viewers, or RESOURCE_EXHAUSTED when all are taken,
        or when its network host holds its share of them."""
        host = hosts.network_host(context.peer())
        if self.viewers >= MAX_VIEWERS - (LOCAL_SEATS if host is not None else 0):
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"this arena has {self.viewers} viewers already"
                        f"{', all it takes from other machines' if host else ''}; try again later")
        if self.per_host.full(host):
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{host} has {self.per_host.cap} streams open already, the most "
                        "one host may; close one first")
        self.viewers += 1
        self.per_host.add(host)

        def leave() -> None:
            self.viewers -= 1
            self.per_host.remove(host)
        left = _at_end(context, leave)
        try:
            yield
        finally:
            left()

    async def _quick(self, context) -> str | None:
        """A quick call's network host (None: a local peer), or RESOURCE_EXHAUSTED when
        it calls more often than CALLS_PER_S."""
        host = hosts.network_host(context.peer())
        if not self.calls.allow(host):
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{host} calls more often than the {CALLS_PER_S} a second one host may "
                        "(list and records); try again in a moment")
        return host

    async def ListMatches(self, request, context):  # noqa: N802 (gRPC's names)
        await self._quick(context)
        await _not_negative(context, "recent", request.recent)
        return wire.match_list(self.hub.summaries(request.tournament, request.recent or 50))

    async def WatchMatch(self, request, context):  # noqa: N802
        if request.organizer_view:
            await self._authorize(context)
        await _not_negative(context, "delay_turns", request.delay_turns)
        async with self._viewer(context):
            got = self.hub.subscribe(request.match_id, request.delay_turns, request.organizer_view)
            if got is None:
                yield wire.snapshot_feed(await self._record(request.match_id, context))
                return
            _at_end(context, lambda: self.hub.unsubscribe(request.match_id, got[0]))
            async for message in self._follow(request.match_id, *got, context):
                yield message

    async def WatchTV(self, request, context):  # noqa: N802
        await _not_negative(context, "delay_turns", request.delay_turns)
        async with self._viewer(context):
            since = None
            showing: dict[str, Subscription] = {}   # the match on now

            def leave() -> None:
                for match_id, sub in showing.items():
                    self.hub.unsubscribe(match_id, sub)
            _at_end(context, leave)
            while True:
                # a match that started after the last one shown and is over by the end of
                # the pause is shown too
                match = await self.hub.next_live(request.tournament, since=since)
                if match is None:
                    await self._stopping(context)
                    return
                got = self.hub.subscribe(match.match_id, request.delay_turns, reason="tv")
                if got is None:
                    continue
                showing.clear()
                showing[match.match_id] = got[0]
                async for message in self._follow(match.match_id, *got, context):
                    yield message
                since = match.first_frame
                if not await self.hub.rest(TV_PAUSE_S):
                    await self._stopping(context)
                    return

    async def WatchTournament(self, request, context):  # noqa: N802
        async with self._viewer(context):
            # one still coming (a ladder reading its stored matches) is waited for: its
            # viewer is a viewer meanwhile, within the caps
            log = await self.hub.tournament_ready(request.name)
            if log is None and self.hub.stopping:
                await self._stopping(context)
                return
            if log is None:
                known = ", ".join(sorted(self.hub.tournaments)) or "none yet"
                await abort(context, grpc.StatusCode.NOT_FOUND,
                            f"no tournament {request.name!r} is followed here (known: {known})"
                            if request.name else "no tournament is running here yet")
            sub, snapshot = self.hub.follow_tournament(log)
            _at_end(context, lambda: log.viewers.discard(sub))
            yield wire.tournament_feed(snapshot)
            try:
                since = asyncio.get_running_loop().time()
                while True:
                    since, items = await self._next(since, sub)
                    news: list[pb.TournamentFeed] = []   # what goes in one message
                    for item in items:
                        if isinstance(item, pb.TournamentFeed) and \
                                item.WhichOneof("kind") in wire.BATCHED:
                            if item.HasField("standings"):   # only the latest table counts
                                news = [n for n in news if not n.HasField("standings")]
                            news.append(item)
                            continue
                        if news:                   # what came before, first
                            yield self._news.message(news)
                            news = []
                        if item is None:
                            return
                        if item is STOPPING:
                            await self._stopping(context)
                            return
                        if item is RESYNC:
                            sub.caught_up()
                            item = wire.tournament_feed(log.snapshot(self.hub.summaries(log.name)))
                        yield item
                    if news:
                        yield self._news.message(news)
            finally:
                log.viewers.discard(sub)

    async def GetRecord(self, request, context):  # noqa: N802
        host = await self._quick(context)
        return await self._record(request.match_id, context, host)

    # ---------------------------------------------------------------- helpers

    async def _follow(self, match_id: str, sub: Subscription, snapshot: pb.MatchSnapshot,
                      context) -> AsyncIterator[pb.MatchFeed]:
        """The snapshot, then the subscription's messages until the match is over. Frames
        already in a snapshot are not sent again (a resync may overtake the queue). The
        subscription ends with the stream, however it ends: one cancelled while its
        snapshot was being sent (a viewer that left before reading it) stayed among the
        match's viewers until the match ended."""
        last = snapshot.frames[-1].seq if snapshot.frames else -1
        try:
            yield self._snapshots.encoded(snapshot)
            since = asyncio.get_running_loop().time()
            while True:
                since, items = await self._next(since, sub)
                frames = []   # frames queued behind each other, in one message
                for item in items:
                    if isinstance(item, pb.MatchFeed) and item.HasField("frame"):
                        if item.frame.seq > last:
                            frames.append(item)
                            last = item.frame.seq
                        continue
                    if frames:
                        yield self._frames.message(frames)
                        frames = []
                    if item is None:
                        return
                    if item is STOPPING:
                        await self._stopping(context)
                        return
                    if item is RESYNC:
                        snapshot = self.hub.resnapshot(match_id, sub)
                        if snapshot is None:
                            return
                        last = snapshot.frames[-1].seq if snapshot.frames else -1
                        item = wire.snapshot_feed(snapshot)
                    yield item                      # a verdict, the end, a snapshot
                if frames:
                    yield self._frames.message(frames)
        finally:
            self.hub.unsubscribe(match_id, sub)

    async def _next(self, since: float, sub: Subscription) -> tuple[float, list]:
        """After its rest (:meth:`_rest`), all that waits in a viewer's queue, the first
        waited for: it all goes now, without a rest between (a verdict, a message of its
        own, cost a rest each). When it went, and the items."""
        since = await self._rest(since, sub)
        return since, await sub.take()

    async def _rest(self, since: float, sub: Subscription) -> float:
        """A stream's wait for its next message, begun (loop time) ``since`` the last:
        what is left of its share of VIEWER_MESSAGES_S, or until its queue is half full
        (a fast match's frames overflowed a viewer resting 2 s: it was sent the whole
        match again). When it may go on."""
        loop = asyncio.get_running_loop()
        share = max(0, self.viewers - UNPACED_VIEWERS) / VIEWER_MESSAGES_S
        if (wait := since + share - loop.time()) > 0 and not sub.half_full:
            sub.woken = woken = loop.create_future()
            timer = loop.call_later(wait, _wake, woken)
            try:
                await woken
            finally:
                timer.cancel()
                sub.woken = None
        return loop.time()

    async def _stopping(self, context) -> None:
        """A stream's end as the service stops: UNAVAILABLE, the code of a server gone, so
        that its viewer looks for the service again (a server restarted: arena watch
        follows on); where it stops for good (:attr:`SpectatorHub.final`), nothing: the
        stream's caller returns, and it ends as a finished one does."""
        if not self.hub.final:
            await abort(context, grpc.StatusCode.UNAVAILABLE, "the spectator service is stopping")

    async def _record(self, match_id: str, context, host: str | None = None) -> pb.MatchSnapshot:
        if (record := self._records.get(match_id)) is not None:
            self._records.move_to_end(match_id)
            return record
        got = self.hub.subscribe(match_id, reason="record")
        if got is not None:
            sub, snapshot = got
            self.hub.unsubscribe(match_id, sub)
            if snapshot.HasField("over"):   # kept: a 1,000-turn match's took 6 ms a call
                self._keep(match_id, snapshot)
                return snapshot
            await abort(context, grpc.StatusCode.FAILED_PRECONDITION,
                                f"match {match_id} is still being played: watch it live")
        record = None if self.records is None else await self._stored(match_id, context, host)
        if record is None:
            await abort(context, grpc.StatusCode.NOT_FOUND, f"no match {match_id!r} here")
        return record

    async def _stored(self, match_id: str, context, host: str | None) -> pb.MatchSnapshot | None:
        """A stored match's record, built in its turn (see RECORD_REST)."""
        if self._waiting >= RECORD_QUEUE:
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{RECORD_QUEUE} records are being made already; try again later")
        if self._waiting_from.full(host):
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{host} has {RECORD_QUEUE_PER_HOST} records being made already, the "
                        "most one host may; try again later")
        self._waiting += 1
        self._waiting_from.add(host)
        try:
            async with self._building:
                loop = asyncio.get_running_loop()
                if (rest := self._next_build - loop.time()) > 0:
                    await asyncio.sleep(rest)
                if (record := self._records.get(match_id)) is not None:
                    return record               # made while this one waited
                started = loop.time()
                record = await asyncio.to_thread(self.records.snapshot, match_id)
                self._next_build = loop.time() + RECORD_REST * (loop.time() - started)
        finally:
            self._waiting -= 1
            self._waiting_from.remove(host)
        if record is not None:
            self._keep(match_id, record)
        return record

    def _keep(self, match_id: str, record: pb.MatchSnapshot) -> None:
        """A finished match's record, kept (it never changes) if it is not too long. Not
        an aborted one: its match is played again under the same id (a tournament
        resumed), and the record then is the new attempt's."""
        if record.over.status == pb.MATCH_STATUS_FINISHED and len(record.frames) <= RECORD_CACHE_FRAMES:
            self._records[match_id] = record
            if len(self._records) > RECORD_CACHE:
                self._records.popitem(last=False)

    async def _authorize(self, context) -> None:
        given = dict(context.invocation_metadata()).get("authorization", "")
        token = given.removeprefix("Bearer ").strip()
        if self.organizer_hash is None:
            await abort(context, grpc.StatusCode.PERMISSION_DENIED,
                                "this arena offers no organiser view")
        if not token:
            await abort(context, grpc.StatusCode.UNAUTHENTICATED,
                                "the organiser view needs the organiser token (--token, or "
                                "ONO99_ORGANIZER_TOKEN)")
        if not secrets.compare_digest(token_hash(token), self.organizer_hash):
            await abort(context, grpc.StatusCode.UNAUTHENTICATED,
                                "the organiser token given is not this arena's (the one arena "
                                "serve printed, or $ONO99_ORGANIZER_TOKEN of the arena playing)")


def _wake(woken: asyncio.Future) -> None:
    if not woken.done():
        woken.set_result(None)


def _at_end(context, leave: Callable[[], None]) -> Callable[[], None]:
    """Run ``leave`` once: when the call ``context`` ends, or when what this returns is
    called (a stream's own ``finally``), whichever comes first. A stream's ``finally``
    alone is not enough: grpc.aio stops a handler where a cancel finds it and never closes
    it, so a viewer gone during a write (its snapshot on the way) left the cleanup to the
    handler's generator being freed, which nothing promises while anything holds it (a
    traceback, a log record): its subscription stayed among the match's viewers, its
    place counted against the caps."""
    done = False

    def once(*_context) -> None:
        nonlocal done
        if not done:
            done = True
            try:
                leave()
            except Exception:   # a bug: logged, and grpc runs the call's other callbacks
                log.exception("a spectator stream's cleanup failed")
    context.add_done_callback(once)
    return once


async def _not_negative(context, field: str, value: int) -> None:
    """A count may not be negative (ListMatches took -5 for "all but the last 5")."""
    if value < 0:
        await abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                    f"{field}={value} is not allowed: a count, 0 or more")
