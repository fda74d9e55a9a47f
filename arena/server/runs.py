"""Tournaments on a server: run on demand, followed by anyone, resumed after a restart.

A tournament of registered bots runs as a task of the server; whoever started it, and
anyone after, follows its progress (each follower gets what happened so far, then every
match as it ends). It goes on if its followers leave. On a restart, every server
tournament with matches left resumes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from arena.bots.manifest import ManifestError
from arena.bots.process import ArenaStartError
from arena.referee.results import MAX_CLOCK_S, MatchResult, Verdict
from arena.referee.server import RefereeServer
from arena.rules.errors import ConfigError
from arena.server.registry import REMOVED, Registry
from arena.store.base import NotFoundError, Store, StoreError
from arena.tournament.executor import Executor
from arena.tournament.executors import ClusterError, ExecutorSetup, make_executor
from arena.tournament.schedule import PlannedMatch
from arena.tournament.standings import Played, stored_played
from arena.tournament.tournament import Settings, Tournament, name_problem
from arena.watch.bus import Bus
from arena.watch.hub import SpectatorHub

log = logging.getLogger("arena.server")

#: The ladder's own name (arena.server.ladder.NAME): no tournament may take it.
LADDER = "ladder"
#: The most matches a tournament on a server may have. Its schedule is built in memory
#: (about 400 bytes and 25 us a match: 100,000 matches take 2.5 s and 40 MB), in a thread,
#: so that the server's loop goes on serving meanwhile.
MAX_MATCHES = 100_000
#: Finished tournaments kept in memory for late followers (with the report of each match).
#: A follower of an older one hears that it started and finished, as after a restart.
FINISHED_KEPT = 100
#: ... and the events of their histories, all together: a match's is about 530 bytes, and
#: 100 tournaments of the most a server plays (MAX_MATCHES) held 5 GB for good.
FINISHED_EVENTS = 200_000


#: The executor of a tournament with a remote bot, whatever the server's own: its remote
#: bots connect to this server's referee, the one the local executor plays on here.
WITH_REMOTE_BOTS = "local"

#: what a tournament's followers hear when the server stops it (not that it is over)
_STOPPED = "the server stopped; the tournament resumes when the server starts again"


class NotRunningError(ConfigError):
    """A tournament to cancel that is not running (over, or stopped)."""


@dataclass
class Event:
    """One thing a follower hears: ``kind`` is started, match, retired or finished."""

    kind: str
    data: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MatchReport:
    """A match played, as a follower hears of it: what it takes to say so, kept in the
    run's history for later followers (not the result itself: its every event and stat
    made about 10 KB a match, kept for as long as the server ran)."""

    key: str
    sample: str
    bots: tuple[str, ...]
    places: tuple[int, ...]
    termination: str
    turns: int
    verdicts: tuple[Verdict, ...]

    @classmethod
    def of(cls, plan: PlannedMatch, result: MatchResult) -> MatchReport:
        return cls(plan.key, plan.sample, tuple(result.spec.names), tuple(result.places()),
                   result.termination, result.turns, tuple(result.verdicts))


class Run:
    """One tournament running (or over) on the server, and its followers."""

    def __init__(self, tournament: Tournament) -> None:
        self.t = tournament
        self.total = len(tournament.plan)
        self.done_before = self.total - len(tournament.pending())
        self.played = 0
        self.started = time.monotonic()
        self.history: list[Event] = []
        self.finished = False
        #: why it stopped before its schedule was played ("" when it was not)
        self.error = ""
        self._followers: set[asyncio.Queue] = set()
        self.task: asyncio.Task | None = None
        #: what plays it, once it plays
        self.executor: Executor | None = None
        #: its organiser stopped it (Runs.cancel)
        self.cancelled = False
        #: what stopped it, where that was a fault (not a cancel, not the server stopping)
        self.fault: Exception | None = None

    def release(self) -> None:
        """Drop what only playing needs, once the run is over: its plan (about 420 bytes a
        match) and its executor. A finished run is kept for late followers, bounded by its
        history (Runs._forget_finished), and a run stopped early has a short history but
        its whole plan: 100 of the largest a server takes held 4 GB (the fifteenth review)."""
        self.executor = None
        self.t.plan = []

    def publish(self, event: Event) -> None:
        self.history.append(event)
        for q in self._followers:
            q.put_nowait(event)

    async def follow(self) -> AsyncIterator[Event]:
        """Everything so far, then each event as it happens, until the end."""
        q: asyncio.Queue = asyncio.Queue()
        seen = list(self.history)
        self._followers.add(q)
        try:
            for event in seen:
                yield event
            if seen and seen[-1].kind == "finished":
                return
            while True:   # what happened since, the end included (it may have come meanwhile)
                event = await q.get()
                yield event
                if event.kind == "finished":
                    return
        finally:
            self._followers.discard(q)


class Runs:
    """The server's tournaments."""

    def __init__(self, store: Store, registry: Registry, referee: RefereeServer,
                 defaults: Settings, concurrency: int | None = None, grace: float = 10.0,
                 hub: SpectatorHub | None = None, executor: str = "local",
                 address: str | None = None) -> None:
        """``executor``: where tournaments of hosted bots only play (a name of
        :mod:`arena.tournament.executors`; ``local``: on this server's referee, as a
        tournament with a remote bot always does: its bot connects here)."""
        self.executor = executor
        self.address = address
        self.grace = grace
        self.hub = hub
        self.store = store
        self.registry = registry
        self.referee = referee
        self.defaults = defaults
        self.concurrency = concurrency or max(1, os.cpu_count() or 1)
        self.runs: dict[str, Run] = {}
        self._starting: dict[str, int] = {}   # name -> starts under way (Runs.start)

    async def start(self, name: str, bots: list[str], follow: bool = True, **settings) -> Run:
        """As :meth:`_start`; meanwhile (its schedule is built in a thread) a cancel of
        ``name`` waits for it, and cancels what it starts."""
        self._starting[name] = self._starting.get(name, 0) + 1
        try:
            return await self._start(name, bots, follow, **settings)
        finally:
            self._starting[name] -= 1
            if not self._starting[name]:
                del self._starting[name]

    async def _start(self, name: str, bots: list[str], follow: bool = True, **settings) -> Run:
        """Start a tournament of the registered ``bots`` (or follow the one called ``name``;
        one that stopped on an error goes on with what is left). With no bots, ``name`` is
        one to follow (:class:`NotFoundError` if there is none) unless ``follow`` is False
        (a name the server made)."""
        if (run := self._followable(name)) is not None:
            return run
        if name == LADDER:
            raise ConfigError("'ladder' is the ladder, not a tournament: follow it with arena "
                              "watch, or read its standings")
        if self.store.has_tournament(name):   # one row read: a server keeps thousands
            record = self.store.tournament(name)
            plan = await asyncio.to_thread(Settings.from_dict(record.settings).schedule)
            # the same name was followed meanwhile, or it goes on with what is left
            if (run := self._followable(name)) is not None:
                return run
            run = self._begin(Tournament.resume(self.store, name, plan))
            if record.cancelled_at is not None:   # followed again: it plays on
                self.store.set_cancelled(record, False)
            return run
        if not bots and follow:   # following one by name, and there is none
            raise NotFoundError(f"no tournament called {name!r} on this server (a new one names "
                                "its bots)")
        if (why := name_problem(name)) is not None:
            # repr escapes what is not printable
            raise ConfigError(f"tournament name {name!r} is not allowed: {why}")
        for key in ("move_ms", "bank_ms"):
            if not 0 <= (settings.get(key) or 0) <= MAX_CLOCK_S * 1000:
                raise ConfigError(f"{key}={settings[key]} is not allowed: milliseconds, 0 to "
                                  f"{MAX_CLOCK_S * 1000:,} (a day; 0: the server's)")
        chosen = [self.registry.find(b, active_only=True) for b in bots]
        values = {**self.defaults.to_dict(), **{k: v for k, v in settings.items() if v is not None}}
        values.update(bot_dirs=[], bots=[b.display for b in chosen],
                      remote=[i for i, b in enumerate(chosen)
                              if not self.registry.entry(b).resettable])
        checked = Tournament.check_registered(Settings.from_dict(values))
        if checked.matches() > MAX_MATCHES:
            raise ConfigError(f"a tournament of {checked.matches():,} matches is more than a server "
                              f"plays in one (at most {MAX_MATCHES:,}): fewer games, or fewer bots")
        plan = await asyncio.to_thread(checked.schedule)
        if name in self.runs:   # the same name was asked for meanwhile: follow it
            return self.runs[name]
        try:
            t = Tournament.create_registered(self.store, name, checked, plan)
        except StoreError as exc:
            raise ConfigError(str(exc)) from None
        return self._begin(t)

    def _followable(self, name: str) -> Run | None:
        """The run called ``name`` to follow: running, or over as planned (one that
        stopped on an error is not: following it starts it again)."""
        run = self.runs.get(name)
        return None if run is None or run.error else run

    def resume_unfinished(self) -> list[Run]:
        """After a restart: every server tournament with matches left goes on."""
        out = []
        for record in self.store.tournaments():
            if record.settings.get("bots") and record.name not in self.runs \
                    and record.cancelled_at is None:
                t = Tournament.resume(self.store, record.name)
                if t.pending():
                    out.append(self._begin(t))
        return out

    def _begin(self, t: Tournament) -> Run:
        run = Run(t)
        self.runs[t.name] = run
        schedule, clock, integrity = t.describe()
        run.publish(Event("started", {"name": t.name, "lines": [schedule, f"{clock}; {integrity}"],
                                      "bots": t.names,
                                      "total": run.total, "done": run.done_before}))
        run.task = asyncio.create_task(self._play(run))
        run.task.add_done_callback(lambda _: self._finish(run))
        log.info("tournament %s %s: %s, %d of %d matches to play", t.name,
                 "resumed" if run.done_before else "started", ", ".join(t.names),
                 run.total - run.done_before, run.total)
        return run

    async def _play(self, run: Run) -> None:
        t = run.t

        def on_retire(bot: str, reason: str) -> None:
            run.publish(Event("retired", {"bot": bot, "reason": reason}))

        hub = self.hub
        if hub is not None:
            hub.tournament(t.name, t.names, len(t.plan), list(stored_played(t.store, t.record)))

        def on_result(plan: PlannedMatch, result: MatchResult) -> None:
            run.played += 1
            run.publish(Event("match", {"match": MatchReport.of(plan, result)}))
            played = Played.of_result(plan.key, plan.sample, result)
            if hub is not None and played is not None:
                hub.tournament_result(t.name, played, result.match_id)

        claim = None
        try:
            if t.pending():
                # not while another process plays it (an arena tournament --resume on
                # this database): the one process at a time that does
                claim = self.store.claim_tournament(t.record)
                run.executor = executor = self._executor(t, on_retire)
                await t.play(executor, on_result)
            if hub is not None:
                hub.tournament_finished(t.name)
        except asyncio.CancelledError:
            if not run.cancelled:
                run.error = _STOPPED   # the server is stopping: its followers hear so
                raise
            if hub is not None:   # its spectators' feed ends too, as for a tournament over
                hub.tournament_finished(t.name)
        except Exception as exc:   # noqa: BLE001 - whatever stopped it: said, the server goes on
            # the executor could not go on (a Ray cluster with no room, a referee actor that
            # would not start, a database gone): its followers hear why
            run.error = str(exc) or type(exc).__name__
            run.fault = exc       # said once, by _finish, with the counts
            if hub is not None:   # and its spectators: they waited for ever
                hub.tournament_finished(t.name)
        finally:
            if claim is not None:
                claim.release()
            self._finish(run)

    def _finish(self, run: Run) -> None:
        """Tell ``run``'s followers it has ended (once): at the end of its play, or when
        its task ends without having begun it (cancelled in the moment after its start,
        which a coroutine not yet begun does not see: its handlers never run)."""
        if run.finished:
            return
        if run.cancelled:
            # counted from the store: a result being written when the cancel came is
            # stored (the writer finishes what it was asked) though its count never ran
            try:
                run.played = run.total - len(run.t.pending()) - run.done_before
            except StoreError:
                pass         # the database is gone: the count of results heard stands
            run.error = (f"cancelled by the organiser after {run.done_before + run.played} of "
                         f"{run.total} matches; following it by name plays what is left")
        elif run.task is not None and run.task.done() and run.task.cancelled():
            run.error = _STOPPED     # the server stopping, before the run began
        run.finished = True
        if run.error != _STOPPED:   # what stops with the server resumes with it: not an end
            # one line: a fault's (an ERROR, with its traceback where it is a bug) held the
            # counts apart from the reason, said twice (an ERROR, then an INFO "ended")
            fault = run.fault
            if fault is not None:
                level, how = logging.ERROR, "stopped"
                # a traceback only where it is a bug, not a failure the message says whole
                said = isinstance(fault, (ConfigError, StoreError, ArenaStartError, ClusterError))
                trace = None if said else fault
            else:
                level, how, trace = logging.INFO, "ended" if run.error else "finished", None
            log.log(level, "tournament %s %s: %d of %d matches played in %.0f s%s", run.t.name,
                    how, run.done_before + run.played, run.total, time.monotonic() - run.started,
                    f": {run.error}" if run.error else "", exc_info=trace)
        run.publish(Event("finished", {"name": run.t.name, "played": run.played,
                                       "seconds": time.monotonic() - run.started,
                                       "error": run.error}))
        run.release()
        self._forget_finished()

    async def cancel(self, name: str) -> Run:
        """Stop tournament ``name``, running here: its matches in flight are dropped (their
        bots told the match is over), and it is marked so that no restart resumes it
        (marked first: a server killed meanwhile does not resume it either).
        :class:`NotFoundError` for no tournament of that name, :class:`NotRunningError`
        for one not running."""
        while name in self._starting:   # its schedule is being built: cancel what starts
            await asyncio.sleep(0.05)
        run = self.runs.get(name)
        if run is None or run.finished:
            if name == LADDER:
                raise NotRunningError("the ladder is no tournament: it stops with the server")
            if run is not None:
                why = run.error or "it is over"
            else:
                try:
                    record = self.store.tournament(name)
                except NotFoundError:
                    raise NotFoundError(f"no tournament called {name!r} on this server") from None
                why = ("it was cancelled" if record.cancelled_at is not None else
                       "it is over, or was played by another arena")
            raise NotRunningError(f"tournament {name!r} is not running: {why}")
        self.store.set_cancelled(run.t.record, True)
        run.cancelled = True
        run.task.cancel()
        await asyncio.wait({run.task})
        return run

    def _executor(self, t: Tournament, on_retire) -> Executor:
        """What plays ``t``: the server's executor, by its name (hosted bots are launched
        from their folders wherever it plays: this server's referee, other processes, a
        Ray cluster's nodes; spectators fed through a bus), except for a tournament with a
        remote bot: :data:`WITH_REMOTE_BOTS`, said in the log."""
        name = WITH_REMOTE_BOTS if t.settings.remote else self.executor
        if name != self.executor:
            log.info("tournament %s plays on this server's referee (the %s executor), not the "
                     "%s executor: its remote bots connect here", t.name, name, self.executor)
        # a bot removed since the tournament began is still found, and forfeits its seats
        bots = [self.registry.find(n, include_removed=True) for n in t.names]

        def seats_here(referee: RefereeServer):
            # found again as its matches begin: a bot removed meanwhile forfeits
            return [self.registry.provider(self.registry.find(n, include_removed=True), referee)
                    for n in t.names]

        def launches(bot):
            try:
                return self.registry.entry(bot).manifest()
            except ManifestError:
                # a removed bot is never launched (it forfeits, on any executor): its
                # folder may be gone, which leaves it no folder here, not an error
                if bot.status != "removed":
                    raise
                return None

        setup = ExecutorSetup([launches(bot) for bot in bots], t.names,
                              self.concurrency, retire_after=t.settings.retire_after,
                              on_retire=on_retire,
                              bus=None if self.hub is None else Bus(self.hub, t.name),
                              log_dir=self.registry.data_dir / "logs" / "tournaments" / t.name,
                              sandbox=self.registry.sandbox, address=self.address,
                              retired={i: REMOVED for i, bot in enumerate(bots)
                                       if bot.status == "removed"},
                              seats_here=seats_here, referee=self.referee, grace=self.grace)
        return make_executor(name, setup)

    def removed(self, bot: str) -> None:
        """Bot ``bot`` (a display name) was removed from the server: it is retired from
        each tournament still playing it, wherever that plays, and its followers hear so."""
        for run in self.runs.values():
            if not run.finished and bot in run.t.names:
                if run.executor is not None:
                    run.executor.retire(run.t.names.index(bot), REMOVED)
                run.publish(Event("retired", {"bot": bot, "reason": REMOVED}))

    def _forget_finished(self) -> None:
        """Keep the last FINISHED_KEPT finished runs, and of them only as many of the
        latest as hold FINISHED_EVENTS events together (the latest always): a server plays
        tournament after tournament, and its memory must not grow with each."""
        finished = [name for name, r in self.runs.items() if r.finished]
        held = sum(len(self.runs[name].history) for name in finished)
        for i, name in enumerate(finished[:-1]):
            if len(finished) - i <= FINISHED_KEPT and held <= FINISHED_EVENTS:
                break
            held -= len(self.runs[name].history)
            del self.runs[name]

    async def stop(self) -> None:
        """Cancel every tournament still playing and wait for each to end (its matches
        in flight dropped, those played stored; a restart resumes it)."""
        tasks = [r.task for r in self.runs.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
