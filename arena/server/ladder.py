"""The ladder: matches among whichever bots are there, for as long as the server runs.

Available bots are the hosted ones (always) and the remote ones that are connected and
not playing. Each new table starts from the available bot with the fewest ladder
matches and adds those whose rating is closest to its own, with fewer matches and fewer
meetings first among equals: the pairings that tell the most; but first those it has not
met more than its share (:data:`REPEAT` times what an even share of its matches would
be). Bots come free in the groups they just played in (a table's bots end together, and
rest together), so seating only the bots free at that instant paired the same bots again
and again: with 4 bots and 2 tables, 1,304 of 1,320 matches were two fixed pairs; 6 bots
resting 0.3 s after each match met only 3 of their 15 pairs. So a table whose first bot
has met every free candidate more than its share waits (:data:`HOLD_S` at most) for a bot
that is about to come free (playing, or resting) and that it has not. (Rests drawn at
random, up to 10% or 50% longer, to break the groups up as well, made no pair's share
smaller and 300 matches of 4 bots resting 0.3 s took 6% or 30% longer: they are not.)
Matches are plain deals
(a remote bot's memory cannot be reset between rotations) from the ladder's own secret
seed, stored in the tournament called ``ladder`` (so its ratings survive a restart: they
are fitted from the stored matches), rated live by an online Elo for the pairings. What it
makes of its stored matches is taken up at a restart from its last snapshot and the
matches stored since (:mod:`arena.server.ladder_state`).
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from arena.aio import in_daemon_thread
from arena.bots.process import ArenaStartError
from arena.referee.results import MatchResult, MatchSpec, TimeControl
from arena.referee.server import RefereeServer
from arena.rules.errors import ConfigError
from arena.rules.rulesets import make_config
from arena.seeds import Seeds, fresh_master
from arena.server.ladder_state import (BENCH_AFTER, BENCH_S, SNAPSHOT_EVERY, LadderState,
                                       Snapshot, faults_of, void)
from arena.server.registry import Registry
from arena.store.base import (AlreadyStoredError, NotFoundError, RegisteredBot, Store,
                              StoreError, TournamentRecord, UnreadableStateError)
from arena.store.writer import StoreWriter
from arena.tournament.executor import lease_in_order, release_seats, seated_runner
from arena.tournament.seats import Retirements, SeatProvider
from arena.tournament.standings import Played, Results, saved_misfit
from arena.watch.hub import SpectatorHub, TournamentLog

log = logging.getLogger("arena.server")

#: How often the ladder looks for its database again while it cannot read it, in seconds.
LOOK_AGAIN_S = 1.0

NAME = "ladder"

#: A bot that met another in more than REPEAT times an even share of its ladder matches
#: (each of the other n - 1 bots in (table size - 1) / (n - 1) of them) is seated with it
#: only when no free bot that it met less will do: the share is the whole history's
#: (the ladder's stored meetings), so a pair that met too often early meets less since.
REPEAT = 1.5

#: The longest a table waits for a bot about to come free rather than seat a pair over
#: its share (the ladder looks again every half second, and whenever a match ends): a long
#: match of slow bots otherwise kept the free ones idle for as long as it lasted.
HOLD_S = 5.0

#: Hosted bots whose processes the ladder keeps running between their matches, by default:
#: the ones that played last. Each is a sandbox and an interpreter (about 40 MB for a
#: Python bot): kept for every bot, a ladder of 300 hosted bots held 12 GB.
WARM = 16


def check_settings(store: Store, table_size: int, move_ms: int, bank_ms: int) -> None:
    """:class:`ConfigError` if the ladder stored in ``store`` was played at another table
    size or time control than these: one rating would mix them. A server restarted with
    another --table-size (which tournaments take as their default too), --move-time or
    --bank rated its ladder's new matches with the old ones, and said nothing. (A ladder
    stored before these were kept has only its table size to compare.)"""
    try:
        stored = store.tournament(NAME).settings
    except NotFoundError:
        return
    given = {"table_size": table_size, "move_ms": move_ms, "bank_ms": bank_ms}
    differ = [key for key, value in given.items() if key in stored and stored[key] != value]
    if differ:
        raise ConfigError(f"the ladder in this database was played at {_flags(stored, differ)}, "
                          f"not {_flags(given, differ)}: one rating would mix the two. Serve "
                          "it as it was played (another ladder needs another database)")


def _flags(settings: dict, keys: list[str]) -> str:
    """``--table-size 2 --bank 10`` for ``keys`` of ``settings``."""
    shown = {"table_size": ("--table-size", 1), "move_ms": ("--move-time", 1000),
             "bank_ms": ("--bank", 1000)}
    return " ".join(f"{shown[k][0]} {settings[k] / shown[k][1]:g}" for k in keys)


class Ladder:
    """Keeps scheduling matches among the available bots."""

    def __init__(self, store: Store, registry: Registry, referee: RefereeServer,
                 table_size: int = 2, move_ms: int = 1000, bank_ms: int = 10_000,
                 concurrency: int = 1, ruleset: str = "modern", grace: float = 10.0,
                 hub: SpectatorHub | None = None, warm: int = WARM, rest: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.hub = hub
        if hub is not None:    # its log comes once its stored matches are read (run)
            hub.coming(NAME)
        self.grace = grace
        self.registry = registry
        self.referee = referee
        self.table_size = table_size
        self.concurrency = concurrency
        self.time_control = TimeControl(move_ms, bank_ms)
        self.config = make_config(ruleset, None, table_size)
        self.record = self._record()
        self.seeds = Seeds(self.record.settings["seed"])
        # what the stored matches say (the keys dealt, the ratings, who met whom) is read
        # by run, in a thread, before it seats anyone: read here, in the event loop, it
        # kept a server on 300,000 ladder matches from answering anyone for 15 s or more
        # (remote bots, which try to reconnect for 10 s, gave up)
        self.state = LadderState()
        self.log: TournamentLog | None = None            # the spectators' standings
        self._since = 0                                  # matches stored since a snapshot
        #: a match was found stored that the state does not count (see _store): no
        #: snapshot is saved any more, lest it pass that match's id
        self._uncounted = False
        self._saving: set[asyncio.Task] = set()          # snapshots being saved
        self.count = 0                                   # the highest key's n dealt
        #: numbers dealt but never stored, dealt again first (a heap)
        self.unused: list[int] = []
        # the providers that run processes (hosted bots), the least recently seated first;
        # beyond `warm` idle ones, the least recent are stopped (started again when next
        # seated)
        self.hosted: OrderedDict[str, SeatProvider] = OrderedDict()
        self.warm = warm
        self._cooling: set[asyncio.Task] = set()
        self.retirements = Retirements()                  # hosted bots that keep crashing
        self.writer = StoreWriter(store)                  # results stored off the loop
        # matches played while the database could not take them (full, locked, away),
        # oldest first: stored by run before the ladder starts anything new
        self.kept: list[tuple[str, list[str], MatchResult]] = []
        self.playing: set[str] = set()
        #: bots removed from the server whose warm processes are still to stop (once not
        #: playing: :meth:`_cool`)
        self._removed: set[str] = set()
        #: bot -> until when it sits out (benched for its faults, or resting)
        self.benched: dict[str, float] = {}
        #: seconds a bot rests after each of its ladder matches (0: it may be seated again
        #: at once, and a few bots play flat out: 19,000 matches in 8 minutes for 4 bots)
        self.rest = rest
        #: the time the bench, rests and holds read (a test gives its own)
        self._clock = clock
        #: since when the next table waits for a bot about to come free (None: it does not)
        self._holding: float | None = None
        self._wake = asyncio.Event()
        self._stopping = threading.Event()
        self._rng = random.Random(self.seeds.bot_seed("ladder", "pairings"))

    def _record(self) -> TournamentRecord:
        try:
            return self.store.tournament(NAME)
        except StoreError:
            settings = {"ladder": True, "table_size": self.table_size,
                        "move_ms": self.time_control.move_ms, "bank_ms": self.time_control.bank_ms,
                        "seed": fresh_master(), "secret": True, "bot_dirs": [], "bots": []}
            return self.store.create_tournament(NAME, settings, [])

    def wakeup(self) -> None:
        """A bot arrived (registered, connected, validated): look for a table now."""
        self._wake.set()

    # ---------------------------------------------------------------- the loop

    async def run(self) -> None:
        """Take up the stored ladder, then seat tables and play them until cancelled; then
        the tables in flight are cancelled (never stored), the hosted bots' processes
        stopped, and the matches kept for the database tried once more."""
        tasks: set[asyncio.Task] = set()
        away: StoreError | None = None        # the database, while it cannot be read
        try:
            await self._read_history()
            while True:
                try:
                    await self._store_kept()
                    # tables in flight are the tasks not done: a task's done callbacks
                    # (which drop it from the set) run after this loop wakes to the
                    # _wake its match sets as it ends, and counting it then cost every
                    # match the 0.5 s wait below (2 matches a second at most)
                    while sum(not t.done() for t in tasks) < self.concurrency:
                        table = self.pick()
                        if table is None:
                            break
                        # its bots are playing from now, not from when its task first runs:
                        # the next pick, just below, must not seat them again
                        self.playing.update(b.display for b in table)
                        task = asyncio.create_task(self._match(table))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                except StoreError as exc:
                    # the database cannot be read (a restart, a failover) or cannot take the
                    # matches played (a full disk, another process's lock): the matches in
                    # flight go on, nothing new starts, and the ladder tries again
                    if away is None:
                        log.warning("the ladder waits for its database: %s", exc)
                    away = exc
                    await asyncio.sleep(LOOK_AGAIN_S)
                    continue
                if away is not None:
                    log.warning("the ladder's database is back")
                    away = None
                self._wake.clear()
                try:
                    async with asyncio.timeout(0.5):
                        await self._wake.wait()
                except TimeoutError:
                    pass
        finally:
            self._stopping.set()               # a read of the history in its thread ends
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.gather(*(p.close() for p in self.hosted.values()), *self._cooling,
                                 return_exceptions=True)
            # saved before the kept matches are stored (and only if none is kept): a
            # cancelled match's write may still land, uncounted, and they would pass its id
            if self._since:                    # a restart then reads no match again
                self._snapshot()
            if self.kept:                      # a last try: the database may be back
                try:
                    await self._store_kept()
                except StoreError as exc:
                    log.error("the ladder stops with %d played matches it could not store "
                              "(%s): %s", len(self.kept), ", ".join(k for k, _, _ in self.kept),
                              exc)
            await asyncio.gather(*self._saving, return_exceptions=True)
            await asyncio.get_running_loop().run_in_executor(None, self.writer.close)

    async def _read_history(self) -> None:
        """Take up where the stored matches leave off, read in a thread (its own connection
        to the database), waiting for a database that cannot be read meanwhile. A server
        stopped meanwhile does not wait for that thread (a daemon)."""
        bots = [b.display for b in self.registry.active()]
        away = False
        while True:
            try:
                log_ = await in_daemon_thread(self._history, bots, name="ladder-history")
                break
            except StoreError as exc:
                if not away:
                    log.warning("the ladder waits for its database: %s", exc)
                away = True
                await asyncio.sleep(LOOK_AGAIN_S)
        if away:
            log.warning("the ladder's database is back")
        self._resume_benches()
        if log_ is not None:
            # its spectators' standings ranked as the organiser's (arena.server.boards),
            # read here, in the event loop, where bots are removed
            log_.removed = {b.display for b in self.registry.bots(include_removed=True)
                            if b.status == "removed"}
            self.hub.follow(log_)

    def _history(self, bots: list[str]) -> TournamentLog | None:
        """In a thread: the ladder's state (and its spectators' standings) from its last
        snapshot and the matches stored since, read a page at a time, or from every stored
        match if it has no snapshot it can use; then a snapshot of it, if it read any
        match. The spectators' log is returned (None without spectators)."""
        db = self.store.reopen()
        try:
            snapshot = self._last_snapshot(db)
            state = snapshot.state
            log_ = None if self.hub is None else TournamentLog.resumed(
                NAME, bots, snapshot.results, snapshot.ratings)
            read = 0
            for m in db.iter_matches(self.record, after=state.through):
                if self._stopping.is_set():    # the server stops meanwhile: no need to wait
                    raise asyncio.CancelledError   # (its run, cancelled, is not waiting)
                played = Played.of(m)
                state.add(m.id, m.key, m.bots, None if played is None else played.places)
                state.count_faults(m.bots, faults_of(m.bots, ((v["seat"], v["kind"])
                                                              for v in m.verdicts)),
                                   m.started_at + m.duration_s)
                if log_ is not None and played is not None:
                    log_.count(played)
                read += 1
            if read:
                try:
                    results, ratings = (None, None) if log_ is None else (log_.results,
                                                                          log_.elo.ratings)
                    db.save_state(self.record, state.through,
                                  Snapshot(state, results, ratings).to_data())
                except StoreError as exc:      # only a shortcut: the next one may be saved
                    log.warning("the ladder could not save its snapshot: %s", exc)
        finally:
            db.close()
        self.state = state
        # numbers dealt but never stored (matches in flight when the server was killed, or
        # not played), dealt again first: the keys stay L1 to Ln without a gap
        self.count = state.high
        self.unused = sorted(state.missing)
        self.log = log_
        if read == state.stored:
            log.info("the ladder takes up its %d stored matches (all read)", read)
        else:
            log.info("the ladder takes up its %d stored matches (%d read, the rest from its "
                     "snapshot)", state.stored, read)
        return log_

    def _last_snapshot(self, db: Store) -> Snapshot:
        """The ladder's last snapshot that it can use, else an empty one (every stored
        match is then read)."""
        try:
            saved = db.state(self.record)
            if saved is not None:
                snapshot = Snapshot.from_data(saved.through, saved.data)
                # a damaged or foreign row's counts would have matches read twice, or none
                misfit = saved_misfit(db, self.record, saved.through, snapshot.state.stored)
                if misfit is not None:
                    raise ValueError(misfit)
                if self.hub is None or snapshot.results is not None:
                    return snapshot
                raise ValueError("it has no standings for the spectators")
        except (UnreadableStateError, ValueError) as exc:
            log.warning("the ladder reads every stored match again: its snapshot cannot be "
                        "used (%s)", exc)
        return Snapshot(LadderState(), Results(), {})

    def _snapshot(self) -> None:
        """Save a snapshot of the ladder as it is now, in the results' writer thread (a
        copy of it is made here, and encoded there): a failure is said in the log, and
        the next one is saved :data:`SNAPSHOT_EVERY` matches later."""
        # none while matches are kept: a kept match's write may have landed though it
        # failed (a commit whose answer was lost), with an id that the matches counted
        # since have passed; a snapshot as of them would hide it from every start
        if self.kept or self._uncounted:
            return
        snapshot = Snapshot(self.state.copy())
        if self.log is not None:
            snapshot.results = self.log.results.copy()
            snapshot.ratings = dict(self.log.elo.ratings)
        self._since = 0
        self._save(snapshot.state.through, snapshot.to_data)

    def _save(self, through: int, make: Callable[[], dict[str, Any]]) -> None:
        """Save what ``make()`` gives as the ladder's state, after the writes asked for
        before (awaited as the ladder stops); a failure is said in the log."""
        async def save() -> None:
            try:
                await self.writer.save_state(self.record, through, make)
            except StoreError as exc:
                log.warning("the ladder could not save its snapshot: %s", exc)

        task = asyncio.create_task(save())
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    def available(self) -> list[RegisteredBot]:
        """The active bots that could sit at a table now: not playing, not resting or
        sitting out, and ready (a remote bot connected and not busy elsewhere)."""
        out = []
        now = self._clock()
        for bot in self.registry.active():
            if bot.display in self.playing or self.benched.get(bot.display, 0.0) > now:
                continue
            if self.registry.ready(bot):
                out.append(bot)
        return out

    def pick(self) -> list[RegisteredBot] | None:
        """The next table, or None when too few bots are available, or while it waits
        (:data:`HOLD_S` at most) for a bot about to come free that its first bot has met
        less than the free ones (see the module's notes)."""
        bots = self.available()
        if len(bots) < self.table_size:
            self._holding = None     # no table to hold: a later hold waits its own HOLD_S
            return None
        self._rng.shuffle(bots)   # ties broken at random, reproducibly
        games, ratings, meetings = self.state.games, self.state.elo.ratings, self.state.meetings
        first = min(bots, key=lambda b: games[b.display])
        rating = ratings.get(first.display, 1500.0)
        active = self.registry.active()
        # the most meetings with any one bot that keep within REPEAT times an even share
        # of first's matches
        most = REPEAT * games[first.display] * (self.table_size - 1) / max(1, len(active) - 1)

        def over(name: str) -> bool:
            return meetings[frozenset((first.display, name))] > most

        others = sorted((b for b in bots if b is not first), key=lambda b: (
            over(b.display), abs(ratings.get(b.display, 1500.0) - rating) // 50,
            games[b.display], meetings[frozenset((first.display, b.display))]))
        table = [first, *others[:self.table_size - 1]]
        if any(over(b.display) for b in table[1:]):
            now = self._clock()
            free = {b.display for b in bots}
            coming = [b for b in active if b.display not in free and not over(b.display)
                      and self._coming_free(b.display, now)]
            if coming:
                if self._holding is None:
                    self._holding = now
                if now - self._holding < HOLD_S:
                    return None
        self._holding = None
        return table

    def _coming_free(self, name: str, now: float) -> bool:
        """Whether bot ``name`` is about to be free: playing, or resting (not sitting out
        for its faults)."""
        if name in self.playing:
            return True
        until = self.benched.get(name, 0.0)
        return now < until <= now + self.rest

    def _ended(self, names: list[str], played: bool) -> None:
        """The table of ``names`` is over: they are free, or rest first if it was played."""
        self.playing.difference_update(names)
        if self.rest > 0 and played:
            until = self._clock() + self.rest
            for name in names:   # a longer bench for its faults stands
                self.benched[name] = max(self.benched.get(name, 0.0), until)
            asyncio.get_running_loop().call_later(self.rest, self._wake.set)

    async def _match(self, table: list[RegisteredBot]) -> None:
        names = [b.display for b in table]     # in self.playing since they were picked
        seats_of = []
        for bot in table:
            try:
                seats_of.append(self._provider(bot))
            except ConfigError as exc:
                # removed since the table was picked (its task starts a turn of the loop
                # later), or a hosted bot whose folder cannot be read: no match, and that
                # bot sits out (it would be picked first again, at once, again and again)
                self._sit_out(bot.display, str(exc))
                self.playing.difference_update(names)
                self._wake.set()
                return
        n = self._number()
        key = f"L{n}"
        order = list(range(len(table)))
        self._rng.shuffle(order)                 # who sits where
        providers = [seats_of[i] for i in order]
        seated = [names[i] for i in order]
        # a fresh deal and id for every attempt: a match cut short (the server stopped)
        # is never stored, so its n comes again after a restart, and a remote bot keeps
        # what it saw of it
        match_id, deal_seed = self.seeds.fresh_attempt(NAME, key)
        spec = MatchSpec(match_id, self.config, deal_seed, tuple(seated), self.time_control,
                         tuple(self.seeds.bot_seed(NAME, n, s) for s in range(len(table))))
        leased = []
        played = False
        try:
            try:
                leased = await lease_in_order(providers, seated)
            except ArenaStartError as exc:
                # this server cannot start a bot's process now (out of open files, processes
                # or memory): not the bots' doing, so no match and no verdict; these bots
                # wait a moment before the ladder tries them again
                log.warning("ladder match %s is not played: %s", key, exc)
                heapq.heappush(self.unused, n)
                await asyncio.sleep(LOOK_AGAIN_S)
                return
            listeners = [] if self.hub is None else [self.hub.listener(NAME)]
            runner = seated_runner(spec, leased, listeners, self.grace)
            result = await runner.run()
            if runner.lost_to_pause is not None:
                # this server stood still (Ctrl-Z, SIGSTOP, a paused machine) and a bot
                # left it meanwhile, as the SDKs leave a referee that does not answer: not
                # the bot's fault, so neither stored, rated nor counted against it (as a
                # tournament plays such a match again on resume); its n is dealt again
                seat, paused = runner.lost_to_pause
                log.warning("ladder match %s (%s) is not stored: this server was stopped for "
                            "%.0f s (Ctrl-Z, SIGSTOP, a paused machine) and %s's bot was lost "
                            "meanwhile; it is dealt again", key, result.match_id, paused,
                            seated[seat])
                heapq.heappush(self.unused, n)
                if self.hub is not None:
                    self.hub.tournament_dropped(NAME, result.match_id)
                return
            played = True
            release_seats(leased, result)
            leased = []
            for name, reason in self.retirements.observe(seated, result):
                if name in self.hosted:          # its processes: a remote bot has none
                    self._sit_out_crashes(name, reason)
            try:
                await self._store(key, seated, result)
            except StoreError as exc:
                # the database cannot take it now (away longer than the writer waits, a
                # full disk, a lock held longer than the busy timeout): kept, and stored
                # by run once it can be, before anything new starts; rated then (ratings
                # follow what is stored)
                log.warning("ladder match %s (%s) is kept until the database can store it: "
                            "%s", key, result.match_id, exc)
                self.kept.append((key, seated, result))
        finally:
            for p, s in leased:
                p.release(s, None)
            self._ended(names, played)
            self._cool()
            self._wake.set()

    def _number(self) -> int:
        """The next match's n: the lowest one dealt and never stored, else a new one."""
        if self.unused:
            return heapq.heappop(self.unused)
        self.count += 1
        return self.count

    async def _store_kept(self) -> None:
        """Store the matches kept while the database could not take them, oldest first; a
        :class:`StoreError` while it still cannot."""
        while self.kept:
            key, seated, result = self.kept[0]
            if await self._store(key, seated, result):
                log.warning("ladder match %s (%s), kept, is stored", key, result.match_id)
            del self.kept[0]

    async def _store(self, key: str, seated: list[str], result: MatchResult) -> bool:
        """Store a played match, then rate it and tell the spectators; whether it was
        stored (a key stored already is said, and dropped: no retry can help).
        :class:`StoreError` while the database cannot take it."""
        try:
            match_id = await self.writer.record_match(self.record, key, key, seated, result)
        except AlreadyStoredError as exc:
            log.error("ladder match %s (%s) was played but not stored: %s", key,
                      result.match_id, exc)
            # counted all the same, as a restart counts the match stored under its key
            # (the snapshots are void until then: below)
            self._bench(seated, result)
            if not self._uncounted:
                # the snapshots, the last saved included, may not count that match (an
                # arena that saved them while it sat kept passed its id): the next start
                # reads every match again, and none is saved until then
                self._uncounted = True
                why = (f"key {key} is stored by a match it did not count (a kept match whose "
                       "commit landed though its write failed)")
                log.warning("the ladder saves no more snapshots until it restarts: %s", why)
                self._save(0, lambda: void(why))
            return False
        # counted in the order stored (one writer thread, whose results come back in
        # order): a snapshot counts every match up to its last one's id
        played = Played.of_result(key, key, result)
        self.state.add(match_id, key, seated, None if played is None else played.places)
        self._bench(seated, result)
        if self.hub is not None and played is not None:
            self.hub.tournament_result(NAME, played, result.match_id)
        self._since += 1
        if self._since >= SNAPSHOT_EVERY:
            self._snapshot()
        return True

    def _bench(self, seated: list[str], result: MatchResult) -> None:
        """Count a stored match's faults (:data:`BENCHED_FOR`,
        :meth:`LadderState.count_faults`): a bot at :data:`BENCH_AFTER` of its last
        :data:`BENCH_OF` sits out."""
        faulted = faults_of(seated, ((v.seat, v.kind) for v in result.verdicts))
        for name, of in self.state.count_faults(seated, faulted,
                                                result.started_at + result.duration_s):
            self._sit_out(name, f"{BENCH_AFTER} of its last {of} matches ended in a fault of "
                                f"its own (the last: {faulted[name]})")

    def _resume_benches(self) -> None:
        """The bots sitting out for their faults as the server last stopped sit out what
        is left of it (a restart forgot it, as it forgot their counts: such a bot played
        at once)."""
        now = time.time()
        active = {b.display for b in self.registry.active()}   # not a bot removed since
        for name, until in self.state.benched.items():
            if until > now and name in active:
                # never longer than a bench: the clock may have gone back since it began
                self._sit_out(name, "it sat out for its faults as this server last stopped",
                              min(BENCH_S, math.ceil(until - now)))

    def _sit_out_crashes(self, name: str, reason: str) -> None:
        """A hosted bot that crashed (or failed to start) :attr:`Retirements.after` times
        sits out for :data:`BENCH_S` seconds, then plays again with fresh processes and a
        fresh count. Retired for good, as a tournament retires it, it was still seated:
        every match of it an instant forfeit, about 200 a second, for as long as the server
        ran, without a word in the log."""
        self.retirements.pardon(name)
        provider = self.hosted.pop(name, None)
        if provider is not None:
            self._close_later(provider, "the ladder stops this process: it sits out for its "
                                        "crashes")
        self._sit_out(name, reason)

    def _sit_out(self, name: str, why: str, seconds: float = BENCH_S) -> None:
        """Bot ``name`` is not seated for ``seconds`` (a longer rest stands), logged with
        ``why``; the ladder looks again when they are over."""
        self.benched[name] = max(self.benched.get(name, 0.0), self._clock() + seconds)
        log.warning("ladder: %s sits out for %g s: %s", name, seconds, why)
        asyncio.get_running_loop().call_later(seconds, self._wake.set)

    def _close_later(self, provider: SeatProvider, goodbye: str) -> None:
        """Stop a provider's processes in the background (awaited when the ladder stops)."""
        task = asyncio.create_task(provider.close(goodbye=goodbye))
        self._cooling.add(task)
        task.add_done_callback(self._cooling.discard)

    def _provider(self, bot: RegisteredBot) -> SeatProvider:
        """``bot``'s seat provider: kept from its last match if it runs processes (they
        stay warm), else asked of the registry each time (a remote bot removed since the
        table was picked is not found, and sits out)."""
        provider = self.hosted.get(bot.display)
        if provider is None:
            provider = self.registry.provider(bot, self.referee)
            if not provider.runs_processes:
                return provider
            self.hosted[bot.display] = provider
        self.hosted.move_to_end(bot.display)
        return provider

    def removed(self, name: str) -> None:
        """Bot ``name`` was removed from the server: its processes kept warm are stopped
        now (at the end of its match, if it plays one). They ran on, idle, for as long as
        the server did, while fewer than ``warm`` bots were idle beside it. The
        spectators' standings list it as removed, not ranked."""
        self._removed.add(name)
        if self.log is not None:
            self.log.bot_removed(name)
        self._cool()

    def _cool(self) -> None:
        """Stop the processes of the idle hosted bots seated least recently, beyond
        ``warm`` of them, and those of removed bots. A retired bot's provider stays: it
        holds its retirement."""
        for name in [n for n in self._removed if n not in self.playing]:
            self._removed.discard(name)
            if name in self.hosted:
                self._close_later(self.hosted.pop(name), "the bot was removed from the server")
        idle = [n for n, p in self.hosted.items() if n not in self.playing and not p.retired]
        for name in idle[:max(0, len(idle) - self.warm)]:
            self._close_later(self.hosted.pop(name),
                              "the ladder stops this process until the bot's next match")


__all__ = ["Ladder", "NAME"]
