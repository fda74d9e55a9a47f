"""The storage interface: everything the tournament code and the CLI ask of a database.

One small interface, so a server database can sit beside SQLite without touching the
tournament code; one shared test suite runs against every backend.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from arena.aio import in_daemon_thread
from arena.referee.results import MatchResult
from arena.rules.game import places_of
from arena.store.location import redact

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TournamentRecord:
    """A stored tournament: its name and the settings that rebuild its schedule."""

    id: int
    name: str
    created_at: float
    settings: dict[str, Any]
    bots: list[str]            # bot names, in the order of the schedule
    #: when its organiser cancelled it (a server tournament: not resumed at a restart)
    cancelled_at: float | None = None


@dataclass(frozen=True)
class BotVersion:
    """A bot version to store: name, folder, manifest, content hash of its folder."""

    name: str
    folder: str
    manifest: dict[str, Any]
    content_hash: str


@dataclass(frozen=True)
class BotRecord(BotVersion):
    """A stored bot version (its id, and what :class:`BotVersion` holds)."""

    id: int


@dataclass(frozen=True)
class MatchRecord:
    """A stored match, as results and standings read it."""

    id: int
    tournament: str
    key: str                     # the schedule's key: unique in its tournament
    match_uid: str               # the opaque id the referee gave the match (bots saw it)
    sample: str                  # matches of one sample (a duplicate set) share it
    bots: list[str]              # bot name per seat
    seed: int
    ruleset: str
    options: dict[str, Any]
    status: str
    ranking: list[list[int]]
    termination: str
    verdicts: list[dict[str, Any]]
    stats: list[dict[str, Any]]
    started_at: float
    duration_s: float
    turns: int

    def places(self) -> list[int]:
        """Each seat's place, 1 = best; a tie shares the best place of its group."""
        return places_of(self.ranking, len(self.bots))

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "id", "tournament", "key", "match_uid", "sample", "bots", "seed", "ruleset", "options", "status",
            "ranking", "termination", "verdicts", "stats", "started_at", "duration_s", "turns")}


@dataclass(frozen=True)
class SavedState:
    """A tournament's state as of one of its matches (:meth:`Store.save_state`): what its
    player keeps of the matches stored through the match with id ``through``."""

    through: int
    data: dict[str, Any]
    saved_at: float


@dataclass(frozen=True)
class RegisteredBot:
    """A bot version entered on a server: remote (it connects with its token, of which
    only the hash is kept) or hosted (the server keeps its folder and launches it)."""

    id: int
    name: str                    # the base name, e.g. "alpha"
    version: int                 # 1, 2, ...: each version is rated on its own
    kind: str                    # "remote" or "hosted"
    token_hash: str | None       # remote
    folder: str | None           # hosted: where the server keeps it
    status: str                  # "active", "failed" (validation) or "removed"
    report: dict[str, Any] | None  # hosted: its check-bot report
    created_at: float

    @property
    def display(self) -> str:
        """The name it plays and is rated under: ``alpha``, then ``alpha v2``, ..."""
        return self.name if self.version == 1 else f"{self.name} v{self.version}"


class StoreError(Exception):
    """A storage request cannot be met (unknown tournament, name taken, newer schema...).

    A plain StoreError is the database failing (no connection, a lock held too long, a
    full disk): the command may work later. A :class:`RefusedError` is the request
    refused as it was made. The command line exits 1 for the first, 2 for the second
    (:func:`arena.cli.main.exit_status`)."""


class RefusedError(StoreError):
    """The database refuses the request as it was made: it names what is not there, or
    what another process holds, or a database this arena cannot use as it is, or the
    store is set up wrong (``$ONO99_DB_TIMEOUT``). Giving something else is the fix, not
    trying again."""


class UnusableDatabaseError(RefusedError):
    """The database given is none this arena can use as it is: not a database, another
    program's, a newer arena's, or a file SQLite cannot open or write where it is."""


def is_row_id(value: int) -> bool:
    """Whether ``value`` fits a row id (a 64-bit signed integer in SQLite and PostgreSQL):
    a larger one is no match, where the database would refuse the query."""
    return -2**63 <= value < 2**63


class NotFoundError(RefusedError):
    """The store has no such tournament or match."""


class AlreadyStoredError(StoreError):
    """A match of that key is already stored in its tournament: storing it again cannot
    help, where other store errors (a full disk, a lock, a server away) may pass."""


class UnreadableStateError(RefusedError):
    """A saved tournament state that this arena cannot read (written by a newer one, or
    damaged): its matches are what counts, read again from the first."""


class TournamentExistsError(RefusedError):
    """A tournament of that name is stored already."""


def tries(deadline: float, first: float = 0.25, most: float = 2.0) -> Iterator[None]:
    """The tries at what fails while a database server is away (a connection): one at
    once, then one after each pause (``first`` seconds, doubling to ``most``) while it
    would begin before ``deadline`` (``time.monotonic()``). A loop over them that did not
    break out has run out of tries."""
    yield
    pause = first
    while time.monotonic() + pause <= deadline:
        time.sleep(pause)
        yield
        pause = min(2 * pause, most)


#: How often a claim that can be lost unseen (a PostgreSQL session's lock) is looked at,
#: in seconds: a round trip on its own session each time.
CLAIM_CHECK_S = 2.0


class Claim:
    """A process's hold on a database (:meth:`Store.claim`): ``close`` lets it go (the
    lock's file or session); ``keep``, where a hold can be lost without the process
    knowing (a database server's restart ends its session), says whether it still holds
    it, taking it again where it can."""

    def __init__(self, close: Callable[[], None], keep: Callable[[], bool] | None = None) -> None:
        self._close: Callable[[], None] | None = close
        self._keep = keep

    def held(self) -> bool:
        """Whether this process still holds the claim (blocking: a database round trip)."""
        if self._close is None:
            return False
        return self._keep is None or self._keep()

    def release(self) -> None:
        """Let another process claim the database (once; again does nothing)."""
        if self._close is not None:
            self._close()
            self._close = None

    async def lost(self, every: float = CLAIM_CHECK_S) -> None:
        """Return once this process no longer holds the claim: looked at every ``every``
        seconds, each look in a thread of its own (a database that does not answer holds
        it up, and must not hold up the stop of what waits on it); never for a claim
        that cannot be lost unseen (a file's lock), nor once released. Between the loss
        of a session and the next look another process may take it: the caller stops
        then, as two would play the same matches."""
        if self._keep is None:
            await asyncio.Future()                 # a file's lock goes only with us
        while self._close is not None:
            await asyncio.sleep(every)
            try:
                if not await in_daemon_thread(self.held, name="claim-check"):
                    return
            except Exception:              # not knowing is no reason to stop: look again
                log.exception("cannot tell whether this process still holds its claim")
        await asyncio.Future()


class TournamentInPlayError(RefusedError):
    """Another process is playing that tournament on this database."""


def tournament_in_play(name: str, where: str) -> TournamentInPlayError:
    """The error for a tournament that another process is playing on ``where``."""
    return TournamentInPlayError(
        f"tournament {name!r} is being played by another process on {where} (an arena "
        "tournament, or an arena serve); two would play the same matches and refuse each "
        "other's results: wait for it to end, or stop it (what it stored is kept)")


def already_claimed(where: str) -> RefusedError:
    """The error for a database another arena serve is using."""
    return RefusedError(f"another arena serve is already using {where}: one server at a time "
                      "may (two would deal the same ladder matches and resume the same "
                      "tournaments); stop it first, or serve another database")


class Store(abc.ABC):
    """A database of tournaments, bots and matches."""

    #: How long a call waits for a database server that went away (a restart, a
    #: failover) to come back before it fails, in seconds; 0: one try to connect again,
    #: at once. Only a network database loses its connection (PostgreSQL).
    reconnect_window: float = 0.0

    @property
    @abc.abstractmethod
    def url(self) -> str:
        """Where the store lives, as it was opened: a SQLite file's path as given, or a
        PostgreSQL URL (with its password, if it has one: show :meth:`describe` instead)."""

    def describe(self) -> str:
        """:attr:`url` as it may be printed or logged: a URL's password hidden."""
        return redact(self.url)

    @abc.abstractmethod
    def reopen(self) -> Store:
        """A new, independent connection to the same database, with the same settings
        (durability included), that may be handed to another thread (one thread at a
        time uses it): a thread that writes off the event loop gets its own connection
        instead of sharing this one. The caller closes it."""

    @abc.abstractmethod
    def claim_tournament(self, tournament: TournamentRecord) -> Claim:
        """This process's hold on ``tournament`` while it plays it (``arena tournament``,
        and ``arena serve`` for each it plays), released as :meth:`claim`'s is.
        :class:`TournamentInPlayError` if another process holds it."""

    @abc.abstractmethod
    def migrate(self) -> None:
        """Bring the schema up to date: opening a store does, unless it was opened with
        ``migrate=False`` (a server, which first claims the database: a newer arena
        refused because another server holds it must leave the database as it was)."""

    @abc.abstractmethod
    def claim(self) -> Claim:
        """This process's hold on the database as its one server (``arena serve``): two
        servers on one database would deal the same ladder matches and resume the same
        tournaments, each refusing the other's results. Held until :meth:`Claim.release`
        or the end of the process, however it ends (``kill -9`` included: a restart may
        claim it at once). :class:`StoreError` if another process holds it."""

    @abc.abstractmethod
    def create_tournament(self, name: str, settings: dict[str, Any],
                          bots: Sequence[BotVersion]) -> TournamentRecord:
        """A new tournament of ``bots`` (each stored if new), in one transaction: nothing
        is stored if it fails; :class:`StoreError` if the name is taken."""

    @abc.abstractmethod
    def tournament(self, name: str | None = None) -> TournamentRecord:
        """The tournament called ``name`` (the latest when None); :class:`StoreError` if none."""

    @abc.abstractmethod
    def tournaments(self) -> list[TournamentRecord]:
        """Every tournament, oldest first."""

    @abc.abstractmethod
    def has_tournament(self, name: str) -> bool:
        """Whether a tournament is called ``name`` (one row read, however many there are)."""

    @abc.abstractmethod
    def set_cancelled(self, tournament: TournamentRecord, cancelled: bool) -> TournamentRecord:
        """Mark ``tournament`` cancelled by its organiser now (a server does not resume it
        when it starts again), or, with False, no longer; the record as stored."""

    @abc.abstractmethod
    def tournament_names(self, limit: int) -> list[str]:
        """The names of the last ``limit`` tournaments, newest first."""

    @abc.abstractmethod
    def tournament_bots(self, tournament: TournamentRecord) -> list[BotRecord]:
        """The bot versions a tournament was created with, in schedule order."""

    @abc.abstractmethod
    def add_bot(self, name: str, folder: str, manifest: dict[str, Any], content_hash: str) -> BotRecord:
        """The bot version with this name and hash, stored if new."""

    @abc.abstractmethod
    def record_match(self, tournament: TournamentRecord, key: str, sample: str,
                     bots: list[str], result: MatchResult) -> int:
        """Store a finished match with its events, in one transaction; returns its id.
        Storing a key twice raises :class:`AlreadyStoredError` and keeps the first."""

    @abc.abstractmethod
    def finished_keys(self, tournament: TournamentRecord) -> set[str]:
        """Keys of the tournament's stored matches."""

    @abc.abstractmethod
    def matches(self, tournament: TournamentRecord, after: int = 0,
                limit: int | None = None) -> list[MatchRecord]:
        """The tournament's matches, in the order they were stored; ``after``: only those
        stored after the match with that id (its matches since a read that ended there:
        one writer stores a tournament's matches, so their ids grow as they are stored);
        ``limit``: at most so many."""

    @abc.abstractmethod
    def last_matches(self, tournament: TournamentRecord, count: int) -> list[MatchRecord]:
        """The tournament's last ``count`` matches stored, in the order stored (``arena
        matches --limit``: a ladder's last 20 of millions, without reading the others)."""

    def iter_matches(self, tournament: TournamentRecord, after: int = 0,
                     page: int = 5000) -> Iterator[MatchRecord]:
        """The tournament's matches as :meth:`matches` gives them, read ``page`` at a time:
        what a long-running ladder has stored does not fit in memory as records (4 KB
        each: 1.2 GB for 300,000 matches, read whole at every start of a server)."""
        while True:
            batch = self.matches(tournament, after=after, limit=page)
            yield from batch
            if len(batch) < page:
                return
            after = batch[-1].id

    @abc.abstractmethod
    def match(self, match_id: int) -> MatchRecord:
        """One match; :class:`StoreError` if unknown."""

    @abc.abstractmethod
    def match_by_uid(self, match_uid: str) -> MatchRecord | None:
        """The match the referee called ``match_uid`` (the id bots and spectators see)."""

    def find_match(self, ref: str) -> MatchRecord | None:
        """The match ``ref`` names: the id bots and spectators see, else the number
        ``arena matches`` shows (ASCII digits only). None if ``ref`` is neither an id here
        nor a number; a number that is no match here raises :meth:`match`'s error."""
        found = self.match_by_uid(ref)
        if found is None and ref.isascii() and ref.isdigit():
            found = self.match(int(ref))
        return found

    @abc.abstractmethod
    def events(self, match_id: int) -> list[dict[str, Any]]:
        """A match's public event record (as :func:`arena.rules.events.event_to_dict`)."""

    @abc.abstractmethod
    def save_state(self, tournament: TournamentRecord, through: int, data: dict[str, Any]) -> None:
        """Keep ``data`` (JSON's types) as ``tournament``'s state as of its match with id
        ``through``, in place of the one before (a ladder's snapshot)."""

    @abc.abstractmethod
    def state(self, tournament: TournamentRecord) -> SavedState | None:
        """``tournament``'s saved state, or None; :class:`UnreadableStateError` if it cannot
        be read (its matches still can)."""

    # ---------------------------------------------------------------- a server's own

    @abc.abstractmethod
    def server_value(self, key: str) -> str | None:
        """A server setting (e.g. the organiser token's hash), or None."""

    @abc.abstractmethod
    def set_server_value(self, key: str, value: str) -> bool:
        """Set a server setting if it has none yet; False if it had one (kept)."""

    @abc.abstractmethod
    def register_bot(self, name: str, kind: str, token_hash: str | None = None,
                     folder: str | None = None, status: str = "active") -> RegisteredBot:
        """A new version of bot ``name`` (version 1 if new, else the next one)."""

    @abc.abstractmethod
    def registered_bots(self, include_removed: bool = False) -> list[RegisteredBot]:
        """Every registered bot version, oldest first."""

    def removed_bots(self) -> list[str]:
        """The names (displays) of the bot versions removed from the server, sorted."""
        return sorted(b.display for b in self.registered_bots(include_removed=True)
                      if b.status == "removed")

    @abc.abstractmethod
    def update_registered_bot(self, bot_id: int, status: str | None = None,
                              folder: str | None = None,
                              report: dict[str, Any] | None = None) -> RegisteredBot:
        """Change a registered version's status, folder or validation report."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the database."""


#: How many tournament names an error about a missing one lists (newest first).
KNOWN_SHOWN = 10


def not_found(name: str, where: str, store: Store) -> NotFoundError:
    """The error for a tournament ``name`` that is not in ``store`` (``where``: "in"
    its path, or "on this server" to a server's organiser, who need not know where the
    server keeps its database), naming the last few that are (a server has thousands:
    never all of them)."""
    known = store.tournament_names(KNOWN_SHOWN + 1)
    listed = ", ".join(known[:KNOWN_SHOWN]) + (", ..." if len(known) > KNOWN_SHOWN else "")
    return NotFoundError(f"no tournament called {name!r} {where}"
                         + (f"; known: {listed}" if known else ""))
