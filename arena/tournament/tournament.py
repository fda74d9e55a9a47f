"""A tournament: settings, the bots, its schedule, its record in the store, and running it.

Settings are stored with the tournament, so ``--resume NAME`` rebuilds the same schedule
and plays only the matches the store does not have: finished matches are neither
replayed nor duplicated, and matches that were in flight are played again from their
seeds. The settings hold the master seed (a secret unless the organiser gave one), so
they stay in the store: bots never see them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.bots.manifest import BotManifest, load_manifest
from arena.bots.setup import content_hash
from arena.referee.results import FaultPolicy, MatchResult, MatchSpec, TimeControl
from arena.rules.errors import ConfigError
from arena.rules.rulesets import GameConfig, make_config
from arena.seeds import Seeds, fresh_master
from arena.store.base import BotVersion, Store, TournamentRecord
from arena.store.writer import StoreWriter
from arena.text import counted
from arena.tournament import schedule
from arena.tournament.executor import Executor
from arena.tournament.executors import ExecutorSetup, make_executor
from arena.tournament.schedule import PlannedMatch
from arena.tournament.seats import RETIRE_AFTER

#: The derivation of seeds from the master: 2 is :class:`arena.seeds.Seeds`, one deal
#: per table. (1 was the public derivation of the first arena, deals shared by all tables.)
SEEDING = 2

#: The most matches one tournament here schedules. Its plan is built and held in memory
#: (about 12 us and 640 bytes a match): --games 99999999999 grew to 400 MB in 8 s, without
#: a word, on its way to the machine's every byte. A million matches is days of play.
MAX_MATCHES = 1_000_000


@dataclass(frozen=True)
class Settings:
    """Everything that decides a tournament's schedule and its matches."""

    bot_dirs: tuple[str, ...] = ()   # local: the bots' folders
    bots: tuple[str, ...] = ()       # a server's: the names its registered bots play under
    remote: tuple[int, ...] = ()     # which of ``bots`` connect from elsewhere
    duplicate_remote: bool = False   # duplicate deals even at tables with a remote bot
    table_size: int = 2
    games: int = 10                   # deals per table
    ruleset: str = "modern"
    options: dict[str, Any] = field(default_factory=dict)
    duplicate: bool = True
    seed: int | None = None           # the master seed (arena.seeds); None: draw a secret
    secret: bool = False              # the stored seed was drawn at random, not given
    phases: bool = True               # fresh bot processes for each rotation of the deals
    seeding: int = SEEDING            # how seeds derive from the master (see SEEDING)
    move_ms: int = 1000
    bank_ms: int = 10_000
    on_fault: str = FaultPolicy.FORFEIT
    max_rejections: int = 5
    retire_after: int = RETIRE_AFTER
    # how a local tournament's bots run (--sandbox, --limit), kept so that a resume plays
    # its second half as its first (None: stored by an arena before it kept them)
    sandbox: str | None = None
    limits: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("bot_dirs", "bots", "remote", "limits"):
            out[key] = list(out[key])
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        data = dict(data)
        for key in ("bot_dirs", "bots", "remote", "limits"):
            data[key] = tuple(data.get(key, ()))
        # stored by an arena before secret seeds: its deals came from public seeds, and
        # no scheme here rebuilds them
        data.setdefault("seeding", 1)
        return cls(**data)

    def config(self) -> GameConfig:
        """The rules every match plays (ruleset, options, seats at a table)."""
        return make_config(self.ruleset, self.options, self.table_size)

    @property
    def n_bots(self) -> int:
        """How many bots are entered (stored ones, else folders named)."""
        return len(self.bots) or len(self.bot_dirs)

    def duplicate_policy(self) -> bool | schedule.DuplicatePolicy:
        """Duplicate deals where they are safe: a bot whose memory cannot be reset (a remote
        one) would know, in a later rotation, the cards of an earlier one."""
        if not self.duplicate or not self.remote or self.duplicate_remote:
            return self.duplicate
        remote = set(self.remote)
        return lambda table: not remote & set(table)

    def size(self) -> schedule.ScheduleSize:
        """The schedule's size as if every bot could play duplicate deals (see
        :meth:`matches` for the count with remote bots)."""
        return schedule.size(self.n_bots, self.table_size, self.games, self.duplicate)

    def matches(self) -> int:
        """How many matches these settings schedule (tables with a remote bot playing plain
        deals), counted without building the schedule."""
        k, games = self.table_size, self.games
        tables = math.comb(self.n_bots, k)
        if not self.duplicate:
            return tables * games
        if not self.remote or self.duplicate_remote:
            return tables * games * k
        local = math.comb(self.n_bots - len(set(self.remote)), k)   # tables of no remote bot
        return games * (local * k + tables - local)

    def schedule(self) -> list[PlannedMatch]:
        """Every match of these settings, in order (the seed must be set). Pure: a server
        builds a big one in a thread, off its event loop."""
        return schedule.build(self.n_bots, self.table_size, self.games, self.duplicate_policy(),
                              Seeds(self.seed), phases=self.phases)


class Tournament:
    """A tournament in the store, ready to run (or to resume)."""

    def __init__(self, store: Store, record: TournamentRecord, settings: Settings,
                 manifests: Sequence[BotManifest] = (), warnings: Sequence[str] = (),
                 plan: list[PlannedMatch] | None = None) -> None:
        """``manifests``: the bots' folders, for a local tournament; a server's names its
        registered bots in ``settings.bots`` and seats them itself. ``plan``: the
        settings' schedule, if it was built already."""
        self.store = store
        self.record = record
        self.settings = settings
        self.manifests = list(manifests)
        self.names = list(settings.bots) or [m.name for m in manifests]
        self.config = settings.config()
        self.seeds = Seeds(settings.seed)
        self.plan = settings.schedule() if plan is None else plan
        self.warnings = list(warnings)
        self._written = 0.0        # seconds spent storing results in finished runs
        self._writer: StoreWriter | None = None

    @property
    def write_seconds(self) -> float:
        """Time spent storing this tournament's results so far (timed by its writer,
        whatever the backend)."""
        return self._written + (self._writer.write_seconds if self._writer else 0.0)

    @property
    def name(self) -> str:
        return self.record.name

    @staticmethod
    def check(settings: Settings) -> list[BotManifest]:
        """The bots' manifests, once the settings and the bots are checked; raises
        :class:`ConfigError` saying what is wrong. Needs no store: a refused tournament
        leaves nothing behind."""
        manifests = [load_manifest(d) for d in settings.bot_dirs]
        # names that differ only in case are one name: they read alike in every table,
        # and their log folders are one on a file system that ignores case
        names = [m.name for m in manifests]
        for i, name in enumerate(names):
            other = next((n for n in names[:i] if n.casefold() == name.casefold()), None)
            if other == name:
                raise ConfigError(f"two bots are named {name!r}: every bot of a tournament "
                                  "needs its own name (the 'name' in bot.toml)")
            if other is not None:
                raise ConfigError(f"two bots are named {other!r} and {name!r}: every bot of a "
                                  "tournament needs its own name (the 'name' in bot.toml), "
                                  "which case alone does not make")
        schedule.check(len(manifests), settings.table_size, settings.games)
        matches = settings.matches()
        if matches > MAX_MATCHES:
            raise ConfigError(f"--games {settings.games:,} makes a tournament of {matches:,} "
                              f"matches, more than one tournament plays (at most "
                              f"{MAX_MATCHES:,}): fewer games, or fewer bots")
        settings.config()  # a bad ruleset or option is refused before anything is stored
        return manifests

    @classmethod
    def create(cls, store: Store, name: str, settings: Settings) -> Tournament:
        """Check the settings and the bots, and store a new tournament."""
        manifests = cls.check(settings)
        changes: dict[str, Any] = {"bot_dirs": [str(m.folder) for m in manifests]}
        if settings.seed is None:
            changes.update(seed=fresh_master(), secret=True)
        settings = Settings.from_dict({**settings.to_dict(), **changes})
        bots = [BotVersion(m.name, str(m.folder), _manifest_dict(m), content_hash(m))
                for m in manifests]
        record = store.create_tournament(name, settings.to_dict(), bots)
        return cls(store, record, settings, manifests)

    @staticmethod
    def check_registered(settings: Settings) -> Settings:
        """The settings of a tournament of a server's registered bots, checked (else
        :class:`ConfigError`), with a secret seed unless one was given."""
        names = list(settings.bots)
        if len(set(names)) != len(names):
            raise ConfigError("a bot is named twice: every bot of a tournament plays once")
        schedule.check(len(names), settings.table_size, settings.games)
        settings.config()
        if settings.seed is None:
            settings = Settings.from_dict({**settings.to_dict(), "seed": fresh_master(),
                                           "secret": True})
        return settings

    @classmethod
    def create_registered(cls, store: Store, name: str, settings: Settings,
                          plan: list[PlannedMatch] | None = None) -> Tournament:
        """Store a new tournament of a server's registered bots (``settings.bots``);
        ``plan``: its schedule, if it was built already (from checked settings)."""
        settings = cls.check_registered(settings)
        bots = [BotVersion(n, "", {"name": n, "registered": True}, f"registered:{n}")
                for n in settings.bots]
        record = store.create_tournament(name, settings.to_dict(), bots)
        return cls(store, record, settings, plan=plan)

    @classmethod
    def resume(cls, store: Store, name: str, plan: list[PlannedMatch] | None = None) -> Tournament:
        """The stored tournament ``name``, with its bots loaded from their folders again
        (``plan``: its schedule, if it was built already)."""
        record = store.tournament(name)
        if record.settings.get("ladder"):
            # an arena serve's ladder, stored as a tournament: a TypeError traceback here
            raise ConfigError(f"{name!r} is an arena serve's ladder, which is never over: it "
                              "goes on when the server starts on this database")
        settings = Settings.from_dict(record.settings)
        if settings.seeding != SEEDING:
            raise ConfigError(
                f"tournament {name!r} was stored by an older arena, whose deals came from "
                "public seeds that bots could compute; it cannot be resumed by this one "
                f"(its results stay readable: arena standings {name})")
        if settings.bots:   # a server's: it seats its registered bots itself
            return cls(store, record, settings, plan=plan)
        manifests = [load_manifest(d) for d in settings.bot_dirs]
        warnings = []
        stored = {b.name: b for b in store.tournament_bots(record)}
        for m in manifests:
            old = stored.get(m.name)
            if old is not None and old.content_hash != content_hash(m):
                warnings.append(f"bot {m.name} ({m.folder}) changed since the tournament started; "
                                "its remaining matches use the new version")
        return cls(store, record, settings, manifests, warnings, plan)

    def describe(self) -> tuple[str, str, str]:
        """In words: its schedule; its rules and clock; what keeps bots from its deals."""
        s = self.settings
        size = s.size()
        per_deal = (f"x {s.table_size} seat rotations (duplicate)" if s.duplicate
                    else "(no duplicates)")
        plain = ("" if not s.duplicate or len(self.plan) == size.matches
                 else "; tables with a remote bot play each deal once, unrotated")
        schedule_line = (f"{counted(size.bots, 'bot')}, {counted(size.tables, 'table')} of "
                         f"{s.table_size}, {counted(size.deals, 'deal')} each {per_deal}{plain}: "
                         f"{counted(len(self.plan), 'match', 'matches')}")
        clock = f"{self.config.describe()}; {TimeControl(s.move_ms, s.bank_ms).describe()}"
        seeds = ("secret seeds" if s.secret
                 else f"seed {s.seed} (bots could compute the deals: trusted bots only)")
        if not s.duplicate:
            integrity = seeds
        elif not s.phases:
            integrity = f"{seeds}; no phases (a bot process plays every rotation: trusted bots only)"
        else:
            phases = schedule.phases_of(self.plan)
            integrity = (f"{seeds}; {counted(phases, 'phase')}, fresh bot processes for each"
                         if phases > 1 else f"{seeds}; one phase")
        return schedule_line, clock, integrity

    def pending(self) -> list[PlannedMatch]:
        """The planned matches the store does not have yet."""
        done = self.store.finished_keys(self.record)
        return [p for p in self.plan if p.key not in done]

    def spec(self, plan: PlannedMatch) -> MatchSpec:
        """The match to play for ``plan`` now (called for each attempt at it)."""
        s = self.settings
        # the id a bot sees is opaque (the store maps it to the key): no table, deal,
        # rotation or order in it
        match_id, seed = self.seeds.match_id(self.name, plan.key), plan.seed
        if s.secret and set(s.remote) & set(plan.table):
            # a remote bot keeps what it saw of an attempt that did not finish (a server
            # stopped, a worker lost): each attempt is a fresh deal, under a fresh id
            # (these tables play plain deals: no other rotation shares the deal). A seed
            # the organiser gave asks for reproducible deals: those stay as planned.
            match_id, seed = self.seeds.fresh_attempt(self.name, plan.key)
        return MatchSpec(match_id, self.config, seed,
                         tuple(self.names[b] for b in plan.seats), TimeControl(s.move_ms, s.bank_ms),
                         plan.bot_seeds, s.on_fault, s.max_rejections)

    def setup(self, concurrency: int, **options: Any) -> ExecutorSetup:
        """What an executor needs to play this tournament's bots from their folders
        (``options``: the other fields of :class:`ExecutorSetup`)."""
        return ExecutorSetup(self.manifests, self.names, concurrency,
                             retire_after=self.settings.retire_after, **options)

    async def run(self, concurrency: int, on_result: Callable[[PlannedMatch, MatchResult], None],
                  executor: str = "auto", **options: Any) -> None:
        """Play every pending match on the executor called ``executor`` (see
        :mod:`arena.tournament.executors`), the bots launched from their folders;
        ``options``: the rest of its :class:`ExecutorSetup` (listeners, log_dir, sandbox,
        bus for listeners wherever matches run, address of a cluster...). Each result is
        stored (one transaction) before ``on_result`` sees it."""
        await self.play(make_executor(executor, self.setup(concurrency, **options)), on_result)

    async def play(self, executor: Executor,
                   on_result: Callable[[PlannedMatch, MatchResult], None]) -> None:
        """Play every pending match on ``executor``; each result is stored (one
        transaction, off the event loop: see :class:`StoreWriter`) before ``on_result``
        sees it."""
        pending = self.pending()
        if not pending:
            return
        writer = self._writer = StoreWriter(self.store)

        async def record(plan: PlannedMatch, result: MatchResult) -> None:
            await writer.record_match(self.record, plan.key, plan.sample,
                                      [self.names[b] for b in plan.seats], result)
            on_result(plan, result)

        try:
            await executor.run(pending, self.spec, record)
        finally:
            writer.close()
            self._written += writer.write_seconds
            self._writer = None


#: The longest tournament name.
MAX_NAME = 64


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a new tournament, or None. Names are printed in commands
    to copy (--resume NAME, arena standings NAME) and shown on terminals: a name starting
    with '-' reads as an option there, blanks at its ends are lost, and control or format
    characters (a right-to-left override, a zero-width space) show one name as another."""
    if not 1 <= len(name) <= MAX_NAME:
        return f"1 to {MAX_NAME} characters"
    if name.strip() != name:
        return "no blanks at either end"
    if name.startswith("-"):
        return "it may not start with '-' (it would read as an option)"
    if not name.isprintable():
        bad = next(c for c in name if not c.isprintable())
        return f"no control or format characters (it holds U+{ord(bad):04X})"
    return None


def default_concurrency() -> int:
    """Matches in flight by default: one per core."""
    return max(1, os.cpu_count() or 1)


def _manifest_dict(m: BotManifest) -> dict[str, Any]:
    return {"name": m.name, "command": list(m.command), "setup": list(m.setup) if m.setup else None,
            "description": m.description}

