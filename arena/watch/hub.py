"""Where spectators find the matches: live ones as they are played, recent ones, and the
tournaments they belong to.

Matches reach the hub through :meth:`SpectatorHub.listener` (a match listener tagged with
its tournament: in this process) or :mod:`arena.watch.bus` (from referee processes of the
multi-process executor); either way a frame is encoded once, as the public
``MatchFrame`` every viewer is sent. With the organiser view on, the hub also keeps each
frame's hands, and only a subscription that asked for them, behind the organiser token,
gets them.

A viewer holds a :class:`Subscription`: a bounded queue. The match never waits for it:
when the queue is full, it is emptied and marked for a resync, and the viewer is sent a
fresh snapshot instead of what it missed. Nobody watching costs a list append per frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from ono99.v1 import referee_pb2, spectator_pb2 as pb

from arena.referee import wire as referee_wire
from arena.referee.listeners import Frame, MatchInfo, MatchListener, MatchOver
from arena.referee.results import Verdict
from arena.tournament.ratings import OnlineElo, Placing
from arena.tournament.standings import Played, Results, crosstable, ranked, standings_of
from arena.watch import wire

QUEUE = 512                 # messages a viewer may have waiting before it is resynced
RECENT = 100                # finished matches kept in memory for replays and lists
RECENT_TOURNAMENTS = 100    # finished tournaments kept in memory (the ladder never finishes)
STANDINGS_EVERY_S = 0.5     # a tournament's standings are sent at most this often
#: Up to this many bots a tournament's first standings are fitted at once, in the event
#: loop (well under 0.1 s); beyond, and for every refit, the fit runs in a thread and the
#: viewers get the standings when it is done (a 200-bot ladder's fit takes a second or two).
SYNC_FIT_BOTS = 40
#: Up to this many bots a tournament's standings carry its crosstable. It has a cell for
#: every pair that met: a 200-bot ladder's made each standings message 0.5 MB (3 MB at
#: 500 bots), sent to every viewer at every refit, and a browser rebuilt a table of 40,000
#: cells each time. Beyond, the rows alone (the web page says why; keep its text in step).
CROSSTABLE_BOTS = 32
UNENDED = 10_000            # results kept waiting for their match's end, at most
MAX_DELAY_TURNS = 100_000   # a viewer's delay: beyond any match (the proto's field is an int32)
#: Snapshots a match keeps to share as of its last frame (one a reason and delay): viewers
#: asking for many delays between two frames get theirs unshared, as before, rather than
#: holding a match's worth of memory each
SHARED_SNAPSHOTS = 8


class Resync:
    """In a subscription's queue: it overflowed; send a fresh snapshot."""


RESYNC = Resync()


class Stopping:
    """In a subscription's queue: the service is stopping (:meth:`SpectatorHub.stop`):
    the stream ends as one the server went away from, and its viewer may come back."""


STOPPING = Stopping()


@dataclass(eq=False)
class Subscription:
    """One viewer's queue. ``delay``: frames held back; ``hands``: the organiser view.

    Its own deque, not an ``asyncio.Queue``: a frame is pushed to every viewer of its
    match, so a push is on the loop that plays the matches once per viewer, and the
    queue's own bookkeeping (a waiter list, a task count, an event) made it about 1.1 us
    a viewer a frame (``hub.frame`` with 1,000 viewers); its stream takes everything that
    waits at once (:meth:`take`), which needs none of that."""

    delay: int = 0
    hands: bool = False
    items: deque = field(default_factory=deque)
    resyncs: int = 0
    #: its queue overflowed: a RESYNC waits in it, and nothing more is queued (but the
    #: end) until its viewer takes it (:meth:`caught_up`): the fresh snapshot then holds
    #: all that was not queued. A viewer that never reads costs nothing more.
    behind: bool = False
    #: its stream's rest between messages (the spectator service paces many viewers):
    #: ended early once the queue is half full
    woken: asyncio.Future | None = None
    #: its stream waiting for something to send (:meth:`take`)
    waiting: asyncio.Future | None = None
    #: an end (None, STOPPING) is queued: nothing after it is, so no overflow drops it
    ended: bool = False

    @property
    def half_full(self) -> bool:
        return len(self.items) >= QUEUE // 2

    def push(self, item) -> None:
        """Queue ``item`` (None: the end of the stream; STOPPING: its end as the service
        stops). A full queue is emptied for a RESYNC; the end is never among what is
        dropped: after the fresh snapshot, the stream must still end (else the viewer of a
        finished match waits for ever)."""
        if self.ended:
            return
        items = self.items
        end = self.ended = item is None or item is STOPPING
        if self.behind:
            if not end or len(items) >= 2:   # kept: the RESYNC, then the end
                return
            items.append(item)
        elif len(items) < QUEUE:
            items.append(item)
        else:
            self.resync()
            if end:
                items.append(item)
        if (waiting := self.waiting) is not None and not waiting.done():
            waiting.set_result(None)
        if (woken := self.woken) is not None and not woken.done() and self.half_full:
            woken.set_result(None)

    async def take(self) -> list:
        """All that waits, the first waited for."""
        while not self.items:
            self.waiting = waiting = asyncio.get_running_loop().create_future()
            try:
                await waiting
            finally:
                self.waiting = None
        return self.drain()

    def drain(self) -> list:
        """All that waits (none: an empty list), taken from the queue."""
        items = list(self.items)
        self.items.clear()
        return items

    def resync(self) -> None:
        """Drop what is queued for a RESYNC: its viewer is sent a fresh snapshot. An end
        queued stays, after it."""
        end = self.items[-1] if self.ended and self.items else None
        self.items.clear()
        self.items.append(RESYNC)
        if end is not None:
            self.items.append(end)
        self.resyncs += 1
        self.behind = True

    def caught_up(self) -> None:
        """Its viewer took the RESYNC, and gets a fresh snapshot: queue again."""
        self.behind = False


class LiveMatch:
    """A match the hub follows: its summary, frames, verdicts, end, and viewers."""

    def __init__(self, summary: pb.MatchSummary, keep_hands: bool) -> None:
        self.summary = summary
        self.frames: list[pb.MatchFrame] = []
        self.hands: list[tuple] | None = [] if keep_hands else None
        self.verdicts: list[referee_pb2.Verdict] = []
        self.over: pb.MatchOver | None = None
        self.viewers: set[Subscription] = set()
        #: viewers behind (Subscription.behind): no message is made for them until they
        #: take their RESYNC, but the end
        self.behind: set[Subscription] = set()
        self.last_frame = time.monotonic()
        self.first_frame = math.inf            # when its first frame came (TV shows it from then)
        self.ratings: tuple[float, ...] = ()
        #: snapshots with no clock in them (held behind, or of the match over), made once
        #: for every viewer asking as of the same frame: TV's viewers all switch to the
        #: next match, and 1,000 of them each built (and gRPC encoded) the same snapshot
        self._shared: dict[tuple, pb.MatchSnapshot] = {}
        self._shared_as_of: tuple = ()
        self._sharing = True   # (False once over and no longer the last to end)

    @property
    def match_id(self) -> str:
        return self.summary.match_id

    @property
    def live(self) -> bool:
        return self.over is None

    def snapshot(self, reason: str, delay: int = 0, hands: bool = False) -> pb.MatchSnapshot:
        """The match so far (``delay`` frames held back while it runs). One held behind,
        or of the match over, is shared by the viewers that ask for it as of the same
        frame: not to be changed."""
        frames = self.frames
        held = 0 if self.over is not None else min(delay, len(frames))
        if not hands and (held or self.over is not None):
            as_of = (len(frames), len(self.verdicts), self.over is not None)
            if as_of != self._shared_as_of:
                self._shared_as_of = as_of
                self._shared.clear()
            key = (reason, held)
            if (snap := self._shared.get(key)) is None:
                snap = self._snapshot(reason, delay, held, hands)
                if len(self._shared) < SHARED_SNAPSHOTS and self._sharing:
                    self._shared[key] = snap
            return snap
        return self._snapshot(reason, delay, held, hands)

    def unshare(self) -> None:
        """Let the shared snapshots go (a match over, no longer the last to end: the
        recent matches each held one a reason)."""
        self._shared.clear()
        self._sharing = False

    def _snapshot(self, reason: str, delay: int, held: int, hands: bool) -> pb.MatchSnapshot:
        frames = self.frames
        shown = frames[:len(frames) - held]
        if hands and self.hands is not None:
            shown = [wire.with_hands(f, h) for f, h in zip(shown, self.hands)]
        open_ms = 0 if self.over or held else int((time.monotonic() - self.last_frame) * 1000)
        verdicts = self.verdicts if self.over is not None or not delay else ()
        snap = wire.snapshot(self.summary, shown, reason, held, open_ms, verdicts, self.over)
        if held:   # the turn count (and the clock: unknown then) of the frame last shown
            snap.match.turns = shown[-1].seq if shown else 0
        return snap

    def interest(self, delay: int = 0) -> float:
        """TV's measure (docs/watching.md): seats still in the game, the total against the
        limit, and how close the players' ratings are; as of ``delay`` frames ago (what a
        spectator held behind by the server's delay sees)."""
        if self.over is not None or not self.frames:
            return 0.0
        state = self.shown(delay).state
        seats = len(state.seats) or 1
        alive = sum(s.in_game for s in state.seats)
        limit = self.summary.rules.limit or 99
        closeness = 0.5
        if self.ratings:
            gap = max(self.ratings) - min(self.ratings)
            closeness = 1.0 / (1.0 + gap / 200.0)
        return (0.4 * alive / seats + 0.4 * min(state.total, limit) / limit + 0.2 * closeness
                + max(0, min(len(self.frames) - delay, 1000)) * 1e-6)   # a tie: the longer one

    def send(self, viewer: Subscription, item) -> None:
        """Queue ``item`` for ``viewer``; one whose queue overflows is left out of every
        frame until it reads (:attr:`behind`)."""
        viewer.push(item)
        if viewer.behind:
            self.viewers.discard(viewer)
            self.behind.add(viewer)

    def shown(self, delay: int) -> pb.MatchFrame:
        """The frame a viewer ``delay`` frames behind sees last (the first, at least)."""
        return self.frames[max(0, len(self.frames) - 1 - delay)]


def _crosstable(results: Results, bots: list[str]) -> dict:
    """The crosstable of a field of up to CROSSTABLE_BOTS bots; none beyond."""
    return crosstable(results, bots) if len(bots) <= CROSSTABLE_BOTS else {}


class TournamentLog:
    """A tournament (or the ladder) as spectators follow it: progress, finished matches,
    standings with a crosstable, and its viewers. Its matches are kept as their
    :class:`Results` (a ladder's, a count for each outcome)."""

    def __init__(self, name: str, bots: Sequence[str], total: int, played: Sequence[Played]) -> None:
        self.name = name
        self.bots = list(bots)
        self.total = total
        self.results = Results()
        self.finished = False
        self.viewers: set[Subscription] = set()
        self.elo = OnlineElo(bots)
        for p in played:
            self.count(p)
        self._standings: pb.Standings | None = None
        self._fitted = 0                       # matches in the last fit
        self._standings_at = 0.0
        self._every = STANDINGS_EVERY_S
        self._standings_task: asyncio.TimerHandle | asyncio.Future | None = None
        #: a ladder's bots removed from the server: its standings are then ranked as
        #: ``arena standings ladder`` ranks them (:func:`ladder_order`); None for a
        #: tournament's, ranked by the Elo
        self.removed: set[str] | None = None

    @classmethod
    def resumed(cls, name: str, bots: Sequence[str], results: Results,
                ratings: dict[str, float]) -> TournamentLog:
        """The log of a tournament (a ladder) whose finished matches so far are
        ``results``, with ``ratings`` their online Elo (a saved snapshot's), as the log
        of those matches would have them; later ones come by :meth:`result`."""
        log = cls(name, bots, 0, ())
        log.results = results
        log.elo.ratings.update(ratings)
        return log

    @property
    def done(self) -> int:
        return self.results.matches

    def standings(self, fresh: bool = False) -> pb.Standings:
        """The batch fit over every match so far, refitted at most every ``_every``
        seconds: at least STANDINGS_EVERY_S, and 20 times as long as the last fit took
        (a ladder's thousands of matches then cost a core at most a twentieth). Between
        refits the last fit is given (to a viewer that joins, however often it joins),
        and the next is sent to every viewer when it is made, in a thread (the event loop
        referees matches meanwhile). ``fresh``: refit now (the tournament's end). The
        first standings of a tournament of more than SYNC_FIT_BOTS bots are unrated
        until their fit is done."""
        stale = self._standings is None or self._fitted < self.done
        if not (fresh and stale or self._standings is None):
            if stale:
                self._refit_later()
            return self._standings
        bots = self._bots()
        if fresh or len(bots) <= SYNC_FIT_BOTS:
            self._made(*self._fit(self.results.copy(), bots, self._removed()))
        else:
            board = ranked(standings_of(self.results, bots, rate=False), self._removed())
            self._standings = wire.standings(board, _crosstable(self.results, bots), self.done)
            self._refit_later()
        return self._standings

    def _removed(self) -> frozenset[str] | None:
        """A copy of :attr:`removed`, for a fit in a thread."""
        return None if self.removed is None else frozenset(self.removed)

    def bot_removed(self, bot: str) -> None:
        """A ladder's bot was removed from the server: its standings are ranked again at
        once (a removed bot is listed last, not ranked), not only at the next match."""
        if self.removed is None:
            self.removed = set()
        self.removed.add(bot)
        self._fitted = -1                      # the last fit is stale, whatever it counted
        if self.viewers:
            self._refit_later()

    def _bots(self) -> list[str]:
        return sorted(set(self.bots) | self.results.bots)

    @staticmethod
    def _fit(results: Results, bots: list[str],
             removed: frozenset[str] | None) -> tuple[pb.Standings, int, float]:
        """Standings of ``results`` (called in the loop or in a thread: it reads only
        what it is given, a copy), how many matches they are over, and how long they took."""
        t0 = time.monotonic()
        board = wire.standings(ranked(standings_of(results, bots), removed),
                               _crosstable(results, bots), results.matches)
        return board, results.matches, time.monotonic() - t0

    def _made(self, board: pb.Standings, fitted: int, took: float) -> None:
        if fitted < self._fitted:
            return                             # a fit that ended after a later one
        self._standings = board
        self._fitted = fitted
        self._standings_at = time.monotonic()
        self._every = max(STANDINGS_EVERY_S, 20 * took)

    def result(self, played: Played) -> None:
        """A match just finished: counted, its bots in the field, the viewers' standings
        refitted."""
        for bot in played.bots:
            if bot not in self.bots:   # a bot entered on the ladder after it started
                self.bots.append(bot)
        self.count(played)
        if self.viewers:
            self._refit_later()

    def count(self, played: Played) -> None:
        """A finished match counted in the standings (a past one, read from the store:
        its bots need not be in the field any more)."""
        for bot in played.bots:
            self.elo.ratings.setdefault(bot, 1500.0)
        self.results.add(played)
        self.elo.update(Placing(played.bots, played.places, played.sample))

    def _refit_later(self) -> None:
        """Refit when the limit allows, in a thread, and send the standings to the viewers
        then."""
        if self._standings_task is None:
            wait = max(0.0, self._standings_at + self._every - time.monotonic())
            self._standings_task = asyncio.get_running_loop().call_later(wait, self._refit)

    def _refit(self) -> None:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, self._fit, self.results.copy(), self._bots(),
                                      self._removed())
        self._standings_task = future             # no other refit until this one is done
        future.add_done_callback(self._send_standings)

    def _send_standings(self, future: asyncio.Future) -> None:
        self._standings_task = None
        if future.cancelled():
            return
        self._made(*future.result())
        if self.viewers:
            self.tell(wire.standings_feed(self._standings))
        if self._fitted < self.done and self.viewers:
            self._refit_later()                   # matches came in while it fitted

    def tell(self, message: pb.TournamentFeed) -> None:
        """Send ``message`` to every viewer of the tournament."""
        for viewer in list(self.viewers):
            viewer.push(message)

    def snapshot(self, matches: Sequence[pb.MatchSummary]) -> pb.TournamentSnapshot:
        return wire.tournament_snapshot(self.name, self.bots, self.total, self.done,
                                        self.standings(self.finished), matches, self.finished)


class SpectatorHub:
    """Live and recent matches, and tournaments, for the spectator service."""

    def __init__(self, organiser_view: bool = False, min_delay: int = 0, recent: int = RECENT) -> None:
        """``organiser_view``: keep every frame's hands, for viewers with the organiser
        token. ``min_delay``: frames every other viewer is held behind a live match."""
        self.organiser_view = organiser_view
        self.min_delay = min_delay
        self.matches: OrderedDict[str, LiveMatch] = OrderedDict()   # live, then recent
        #: a match started, ended or had a frame since (:meth:`best_live`'s answers hold
        #: till then: TV's viewers all ask at its switch to the next match)
        self._changes = 0
        self._best: dict[str, LiveMatch | None] = {}
        self._best_as_of = -1
        #: the live matches with a frame (TV's choice), apart from the recent ones
        self._showing: dict[str, LiveMatch] = {}
        #: the match over last, the one whose shared snapshots are kept (TV shows it to
        #: viewers that switch during its pause); each before it lets its own go
        self._ended_last: LiveMatch | None = None
        self._recent: deque[str] = deque()
        self._recent_cap = recent
        self.tournaments: dict[str, TournamentLog] = {}
        self._finished: OrderedDict[str, None] = OrderedDict()   # finished tournaments, oldest first
        self._current: str | None = None           # the tournament started last
        # tournaments announced but not followed yet (a ladder reading its stored matches):
        # a viewer asking for one waits for it rather than hear there is no such tournament
        self._coming: dict[str, asyncio.Event] = {}
        self._followed = asyncio.Event()           # set once any tournament is followed
        # TV waiting for a live match: for each tournament waited for ("" any), one future
        # that a match it would show resolves, and how many wait on it (none: forgotten)
        self._arrivals: dict[str, list] = {}
        #: set while the service is stopping (:meth:`stop`); ``final``: for good (the
        #: command serving it is done), not to come back
        self._stopped = asyncio.Event()
        self.final = False
        # matches whose result came before their end (match id -> tournament): on Ray the
        # result and the spectators' batches come by two streams, in no set order. Their
        # followers hear of them once they end (told at the result, they listed a match
        # finished that was still live, and never heard it end)
        self._unended: OrderedDict[str, str] = OrderedDict()

    # ---------------------------------------------------------------- feeding the hub

    def listener(self, tournament: str = "") -> MatchListener:
        """A match listener (in this process) that brings its matches here, as part of
        ``tournament``."""
        return _HubListener(self, tournament)

    def tournament(self, name: str, bots: Sequence[str], total: int,
                   played: Sequence[Played] = ()) -> TournamentLog:
        """Start following a tournament (``total`` 0: the ladder, which never ends)."""
        log = self.tournaments.get(name)
        if log is None or log.finished:
            return self.follow(TournamentLog(name, bots, total, played))
        self._current = name
        return log

    def follow(self, log: TournamentLog) -> TournamentLog:
        """Start following the tournament of ``log``, made elsewhere (in a thread: the
        ladder's, over every match it has stored), in place of any log of that name: one
        over (a server tournament cancelled, now followed again) is replaced by a fresh
        one, whose viewers are not told at once that it is over, nor forgotten as
        finished."""
        self.tournaments[log.name] = log
        self._finished.pop(log.name, None)
        self._current = log.name
        coming = self._coming.pop(log.name, None)
        if coming is not None:
            coming.set()
        self._followed.set()
        return log

    def coming(self, name: str) -> None:
        """Tournament ``name`` will be followed once it is ready (the ladder, once it has
        read what it stored: seconds on a long one): viewers asking for it meanwhile wait
        (:meth:`tournament_ready`)."""
        if name not in self.tournaments:
            self._coming.setdefault(name, asyncio.Event())

    def stop(self, final: bool = False) -> None:
        """The spectator service is stopping: every viewer's stream ends now, after what
        it was sent (STOPPING; with ``final``, the command that serves it is done and
        nothing comes back: the end), and none waits any more for a match or a
        tournament. So its streams end before the server's stop, which had to cancel them
        (a viewer following TV waits between matches for good), and gRPC printed each
        cancel as a bare traceback as the arena ended (`arena match --watch` with a viewer
        still on it). A server started again on the hub calls :meth:`start`."""
        self.final = final
        self._stopped.set()
        end = None if final else STOPPING
        for match in self.matches.values():
            for viewer in match.viewers | match.behind:
                viewer.push(end)
        for log in self.tournaments.values():
            for viewer in log.viewers:
                viewer.push(end)
        for arrival in self._arrivals.values():
            if not arrival[0].done():
                arrival[0].set_result(None)
        for coming in (*self._coming.values(), self._followed):
            coming.set()

    def start(self) -> None:
        """A service (again) on this hub: its streams wait and follow as before (for a
        tournament still coming too)."""
        self.final = False
        self._stopped = asyncio.Event()
        for coming in self._coming.values():
            coming.clear()
        if not self.tournaments:
            self._followed.clear()

    @property
    def stopping(self) -> bool:
        """The service is stopping (:meth:`stop`): streams end, none waits."""
        return self._stopped.is_set()

    async def rest(self, seconds: float) -> bool:
        """A pause of ``seconds``, cut short by :meth:`stop`; whether the service goes on."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._stopped.wait()
        return not self.stopping

    async def tournament_ready(self, name: str) -> TournamentLog | None:
        """:meth:`tournament_log`, once a tournament that is coming is followed; None for
        one neither followed nor coming."""
        log = self.tournament_log(name)
        if log is None:
            if name:
                coming = self._coming.get(name)
            else:   # the one running: whichever is followed first (a tournament may start
                    # before the ladder is read)
                coming = self._followed if self._coming else None
            if coming is not None:
                await coming.wait()
                log = self.tournament_log(name)
        return log

    def tournament_result(self, name: str, played: Played, match_id: str | None = None) -> None:
        """A match of tournament ``name`` is over: into its standings; its followers hear of
        match ``match_id``, if the hub has it."""
        log = self.tournaments.get(name)
        if log is None:
            return
        log.result(played)
        if match_id is None:
            return
        match = self.matches.get(match_id)
        if match is not None and match.over is not None:
            self._tell_finished(log, match)
        else:   # its end (or even its start) is still on its way
            self._unended[match_id] = name
            while len(self._unended) > UNENDED:
                self._unended.popitem(last=False)

    def tournament_dropped(self, name: str, match_id: str) -> None:
        """A match of tournament ``name`` that will not count (the ladder deals it again
        under another id: a bot was lost while the server stood still). Its followers
        heard it start and would never hear it finish (it stayed live on their pages):
        they get the tournament's snapshot again, which lists it as played, not live, and
        counts only what counts."""
        log = self.tournaments.get(name)
        if log is None:
            return
        self._unended.pop(match_id, None)
        log.tell(wire.tournament_feed(log.snapshot(self.summaries(name))))

    def _tell_finished(self, log: TournamentLog, match: LiveMatch) -> None:
        log.tell(wire.finished_feed(match.summary))

    def tournament_finished(self, name: str) -> None:
        """Tournament ``name`` is over: its matches still live end, aborted (their end will
        not come: a worker lost, its run stopped before they were played again); its
        followers get its last snapshot, then the end."""
        log = self.tournaments.get(name)
        if log is None:
            return
        now = time.monotonic()
        for match in [m for m in self.matches.values()
                      if m.live and m.summary.tournament == name]:
            took = now - match.first_frame if match.frames else 0.0
            self.match_ended(match.match_id, wire.abandoned(match.summary, took))
        for match_id in [m for m, t in self._unended.items() if t == name]:
            del self._unended[match_id]
        log.finished = True
        message = wire.tournament_over_feed(log.snapshot(self.summaries(name)))
        for viewer in list(log.viewers):
            viewer.push(message)
            viewer.push(None)   # the end of the stream
        self._finished[name] = None
        self._finished.move_to_end(name)
        while len(self._finished) > RECENT_TOURNAMENTS:   # a server's memory must not grow with each
            old, _ = self._finished.popitem(last=False)
            if old != self._current:
                self.tournaments.pop(old, None)

    def match_started(self, summary: pb.MatchSummary) -> None:
        """A match starts: followed from now on, its tournament's followers told."""
        match = LiveMatch(summary, self.organiser_view)
        self._changes += 1
        earlier = self.matches.pop(summary.match_id, None)
        if earlier is not None:
            # a match cut short, played again under its id (a tournament table's, resumed
            # or dealt again): its first attempt leaves the recent matches now, or its
            # turn to leave them would take this attempt, live, from the hub; viewers of
            # an attempt that never ended (its referee lost) follow this one, from a
            # fresh snapshot, rather than wait for ever
            with contextlib.suppress(ValueError):
                self._recent.remove(summary.match_id)
            self._showing.pop(summary.match_id, None)
            for viewer in earlier.viewers | earlier.behind:
                if not viewer.behind:
                    viewer.resync()
                match.behind.add(viewer)
        log = self.tournaments.get(summary.tournament)
        if log is not None:
            match.ratings = tuple(log.elo.ratings.get(n, 1500.0) for n in summary.names)
        self.matches[summary.match_id] = match
        if log is not None and log.viewers:
            log.tell(wire.started_feed(summary))

    def _arrived(self, tournament: str, match_id: str) -> None:
        """Match ``match_id`` of ``tournament`` can be shown (it has its first frame):
        wake the TV viewers waiting for one of it, or for any."""
        for key in ("", tournament):
            arrival = self._arrivals.pop(key, None)
            if arrival is not None:
                arrival[0].set_result(match_id)

    def frame(self, match_id: str, frame: pb.MatchFrame, hands: tuple | None = None) -> None:
        """A step of a match, to its viewers (``hands``: every hand, for the organiser's)."""
        match = self.matches.get(match_id)
        if match is None or match.over is not None or frame.seq != len(match.frames):
            return   # one of an attempt that was lost, come late: not this attempt's
        match.frames.append(frame)
        self._changes += 1
        if len(match.frames) == 1:
            match.first_frame = time.monotonic()
            self._showing[match_id] = match
            # TV shows a match from its first frame on: woken at the match's start, a
            # waiter that found no frame yet waited for the next start (for ever, when
            # that match was the last)
            self._arrived(match.summary.tournament, match_id)
        match.last_frame = time.monotonic()
        if match.hands is not None:
            match.hands.append(hands)
        match.summary.turns = frame.seq
        if not match.viewers:
            return
        frames = match.frames
        # one message for every viewer that sees the same frame (as it is now, or the
        # same number of frames behind: the server's delay holds them all), not one each
        made: dict[int, pb.MatchFeed] = {}
        for viewer in list(match.viewers):
            if not viewer.hands:
                if viewer.delay >= len(frames):
                    continue
                if (feed := made.get(viewer.delay)) is None:
                    feed = made[viewer.delay] = wire.frame_feed(frames[-1 - viewer.delay])
                match.send(viewer, feed)
                continue
            i = len(frames) - 1 - viewer.delay   # the organiser's: every hand
            if i < 0:
                continue
            hand = hands if not viewer.delay else match.hands[i] if match.hands is not None else None
            match.send(viewer, wire.frame_feed(frames[i] if hand is None else wire.with_hands(frames[i], hand)))

    def verdict(self, match_id: str, verdict: referee_pb2.Verdict) -> None:
        """A verdict in a match, to its viewers that are not held behind."""
        match = self.matches.get(match_id)
        if match is None or match.over is not None:
            return
        match.verdicts.append(verdict)
        for viewer in list(match.viewers):
            if not viewer.delay:
                match.send(viewer, wire.verdict_feed(verdict))

    def match_ended(self, match_id: str, over: pb.MatchOver) -> None:
        """A match is over: its viewers get what was held back and the end; it is kept
        among the recent matches."""
        match = self.matches.get(match_id)
        if match is None or match.over is not None:
            return   # the end of a lost attempt, come late (or one ended for it)
        match.over = over
        self._changes += 1
        self._showing.pop(match_id, None)
        if self._ended_last is not None:
            self._ended_last.unshare()
        self._ended_last = match
        wire.end_summary(match.summary, over)
        # the messages every viewer shares, made once (the frames held back: once a
        # delay): 1,000 viewers held 5 frames behind were each made their own 5 frames,
        # verdicts and end, and each frame of theirs was encoded on its own
        frames, end = match.frames, wire.over_feed(over)
        verdicts = [wire.verdict_feed(v) for v in match.verdicts]
        held: dict[int, list[pb.MatchFeed]] = {}
        for viewer in list(match.viewers):
            if viewer.delay:   # the match is over: what was held back is shown now
                shown = range(max(0, len(frames) - viewer.delay), len(frames))
                if viewer.hands and match.hands is not None:
                    feeds = [wire.frame_feed(wire.with_hands(frames[i], match.hands[i]))
                             for i in shown]
                elif (feeds := held.get(viewer.delay)) is None:
                    feeds = held[viewer.delay] = [wire.frame_feed(frames[i]) for i in shown]
                for feed in feeds:
                    viewer.push(feed)
                for feed in verdicts:
                    viewer.push(feed)
            viewer.push(end)
            viewer.push(None)
        for viewer in match.behind:   # their RESYNC's snapshot holds the end; then the end
            viewer.push(None)
        match.viewers.clear()
        match.behind.clear()
        if (name := self._unended.pop(match_id, None)) is not None \
                and (log := self.tournaments.get(name)) is not None:
            self._tell_finished(log, match)
        self._recent.append(match_id)
        while len(self._recent) > self._recent_cap:
            self.matches.pop(self._recent.popleft(), None)

    # ---------------------------------------------------------------- reading it

    def summaries(self, tournament: str = "", recent: int = 50) -> list[pb.MatchSummary]:
        """Live matches (most interesting first), then finished ones, newest first."""
        chosen = [m for m in self.matches.values()
                  if not tournament or m.summary.tournament == tournament]
        # a live match as far as anyone without the organiser token may see it (the
        # server's spectator delay): its turns and interest from the frame they are shown
        delay = self.min_delay
        live = sorted((m for m in chosen if m.live), key=lambda m: m.interest(delay), reverse=True)
        done = [m for m in reversed(chosen) if not m.live][:recent]
        out = []
        for m in live:
            out.append(wire.listed(m.summary, m.interest(delay),
                                   m.shown(delay).seq if delay and m.frames else None))
        return out + [m.summary for m in done]

    def subscribe(self, match_id: str, delay: int = 0, hands: bool = False,
                  reason: str = "join") -> tuple[Subscription, pb.MatchSnapshot] | None:
        """A viewer of one match: its subscription and the snapshot it starts from; None
        if the hub does not know the match. A finished match's subscription is already
        closed after its snapshot."""
        match = self.matches.get(match_id)
        if match is None:
            return None
        sub = Subscription(max(delay, 0 if hands else self.min_delay), hands and self.organiser_view)
        snapshot = match.snapshot(reason, sub.delay, sub.hands)
        if not match.live or self.final:
            sub.push(None)
        elif self.stopping:
            sub.push(STOPPING)
        else:
            match.viewers.add(sub)
        return sub, snapshot

    def resnapshot(self, match_id: str, sub: Subscription) -> pb.MatchSnapshot | None:
        """A fresh snapshot for a viewer that took its RESYNC, which is queued for again."""
        sub.caught_up()
        match = self.matches.get(match_id)
        if match is None:
            return None
        if sub in match.behind:
            match.behind.discard(sub)
            match.viewers.add(sub)
        return match.snapshot("resync", sub.delay, sub.hands)

    def unsubscribe(self, match_id: str, sub: Subscription) -> None:
        """A viewer of match ``match_id`` has gone."""
        match = self.matches.get(match_id)
        if match is not None:
            match.viewers.discard(sub)
            match.behind.discard(sub)

    def best_live(self, tournament: str = "") -> LiveMatch | None:
        """The most interesting live match of ``tournament`` ("" any) with a frame, or None."""
        if self._best_as_of != self._changes:
            self._best_as_of = self._changes
            self._best.clear()
        if tournament in self._best:
            return self._best[tournament]
        live = [m for m in self._showing.values()
                if not tournament or m.summary.tournament == tournament]
        best = max(live, key=lambda m: m.interest(self.min_delay), default=None)
        if not tournament or tournament in self.tournaments:
            # kept: not for a name a stream made up (a client's names held 30 MB)
            self._best[tournament] = best
        return best

    def _shown_since(self, tournament: str, since: float) -> LiveMatch | None:
        """The match over last of those whose first frame came after ``since``."""
        for match_id in reversed(self._recent):
            match = self.matches.get(match_id)
            if match is not None and match.first_frame > since and (
                    not tournament or match.summary.tournament == tournament):
                return match
        return None

    def waiting_for_live(self, tournament: str = "") -> int:
        """How many streams (TV's) wait in :meth:`next_live` for a match of ``tournament``
        to start."""
        arrival = self._arrivals.get(tournament)
        return arrival[1] if arrival is not None else 0

    async def next_live(self, tournament: str = "", timeout: float | None = None,
                        since: float | None = None) -> LiveMatch | None:
        """The best live match, waiting up to ``timeout`` s for one to start. A match that
        started while it waited is given even if it has ended since: between fast bots a
        match lasts a few ms, and where matches do not overlap (a ladder's, one at a time,
        with a pause to start its bots) no match would be live by the time TV looks. So
        is, with ``since`` (the ``first_frame`` of the match TV showed last), the last match
        over of those that started after it, when none is live: one that started and ended
        in TV's pause after a match is not skipped. None past ``timeout``, or once the
        service stops (:meth:`stop`)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        best = self.best_live(tournament)
        if best is None and since is not None:
            best = self._shown_since(tournament, since)
        while best is None:
            if self.stopping:
                return None
            arrival = self._arrivals.get(tournament)
            if arrival is None:
                arrival = self._arrivals[tournament] = [asyncio.get_running_loop().create_future(), 0]
            arrival[1] += 1
            try:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                async with asyncio.timeout(left):
                    # shared: one leaving must not cancel it
                    arrived = await asyncio.shield(arrival[0])
            except TimeoutError:
                return None
            finally:
                arrival[1] -= 1
                if not arrival[1] and self._arrivals.get(tournament) is arrival:
                    del self._arrivals[tournament]   # nobody waits for it any more
            await asyncio.sleep(0.05)   # let the matches starting with it show up too
            best = self.best_live(tournament) or self.matches.get(arrived)
        return best

    def tournament_log(self, name: str) -> TournamentLog | None:
        """A tournament by name; "" for the one started last."""
        return self.tournaments.get(name or self._current or "")

    def follow_tournament(self, log: TournamentLog) -> tuple[Subscription, pb.TournamentSnapshot]:
        """A follower of a tournament: its subscription and the snapshot it starts from."""
        sub = Subscription()
        snapshot = log.snapshot(self.summaries(log.name))
        if self.stopping and not self.final:
            sub.push(STOPPING)
        elif log.finished or self.stopping:
            sub.push(None)
        else:
            log.viewers.add(sub)
        return sub, snapshot


class _HubListener(MatchListener):
    """Brings one process's matches to the hub, tagged with their tournament."""

    def __init__(self, hub: SpectatorHub, tournament: str) -> None:
        self.hub = hub
        self.tournament = tournament
        self.sees_hands = hub.organiser_view
        self._states = referee_wire.SeatStatesCache()

    def match_started(self, info: MatchInfo) -> None:
        self.hub.match_started(wire.summary(info, self.tournament))

    def frame(self, frame: Frame) -> None:
        self.hub.frame(frame.match_id, wire.frame(frame, self._states), frame.hands)

    def verdict(self, match_id: str, verdict: Verdict) -> None:
        self.hub.verdict(match_id, wire.verdicts([verdict])[0])

    def match_ended(self, over: MatchOver) -> None:
        self.hub.match_ended(over.match_id, wire.over(over))

