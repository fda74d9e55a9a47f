"""The SQLite backend: one file, WAL mode, a schema version with ordered migrations.

A finished match and its events are written in one transaction, so a crash (Ctrl-C,
``kill -9``) can lose a match in flight but never a finished one. ``durable=True`` also
makes each commit survive a power loss (``synchronous=FULL``: an fsync per match);
the default, ``synchronous=NORMAL`` in WAL mode, survives process crashes and may lose
the last commits on power loss, which a resume then plays again.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.referee.results import MatchResult
from arena.store.rows import (
    EVENTS_ENCODING, MATCH_FROM, MATCH_INSERT, MATCH_SELECT, REGISTERED_SELECT, STATE_ENCODING,
    decode_events, decode_state, encode_events, encode_state, match_record, match_values,
    registered_bot,
)
from arena.store.base import (
    AlreadyStoredError,
    BotRecord,
    BotVersion,
    Claim,
    MatchRecord,
    NotFoundError,
    RefusedError,
    RegisteredBot,
    SavedState,
    Store,
    StoreError,
    TournamentExistsError,
    TournamentRecord,
    UnusableDatabaseError,
    already_claimed,
    is_row_id,
    not_found,
    tournament_in_play,
)
from arena.store.migrations import migrations, refuse_newer, schema_version

#: The schema version this arena's files bring a database to (``PRAGMA user_version``).
SCHEMA_VERSION = schema_version("sqlite")
#: A tournament's row, as :meth:`SQLiteStore._tournament` reads it.
_TOURNAMENT_COLUMNS = "id, name, created_at, settings, cancelled_at"


def statements(sql: str) -> list[str]:
    """The statements of a migration file, one by one. A ``;`` inside a string, a comment
    or a trigger's body does not end a statement: a candidate ends at a ``;`` only when
    :func:`sqlite3.complete_statement` says it is whole. (``executescript`` would do the
    splitting, but it commits first, and a migration must run in our own transaction.)"""
    found, start = [], 0
    for end in (m.end() for m in re.finditer(";", sql)):
        candidate = sql[start:end]
        if sqlite3.complete_statement(candidate):
            found.append(candidate.strip())
            start = end
    rest = sql[start:]
    if _without_comments(rest).strip():
        raise StoreError(f"a migration ends with an incomplete statement: {rest.strip()[:80]!r}")
    return found


def _without_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*|/\*.*?\*/", "", sql, flags=re.DOTALL)


#: How long a write waits for another process's lock on the file, in seconds (default 30).
TIMEOUT_ENV = "ONO99_DB_TIMEOUT"


def busy_timeout() -> float:
    """How long a write waits for another's lock, in seconds ($ONO99_DB_TIMEOUT, else 30);
    :class:`StoreError` if the variable is not a number above 0."""
    try:
        value = float(os.environ.get(TIMEOUT_ENV, "30"))
    except ValueError:
        value = -1
    if not 0 < value < 1e6:
        raise RefusedError(f"${TIMEOUT_ENV} must be a number of seconds above 0, not "
                         f"{os.environ.get(TIMEOUT_ENV)!r}")
    return value


def _said(doing: str) -> Callable:
    """A SQLite error out of the call (a full disk, an I/O error, a damaged file) as a
    :class:`StoreError` that says what failed, and where; the store's own pass as they are."""
    def wrap(method: Callable) -> Callable:
        @functools.wraps(method)
        def call(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise StoreError(f"cannot {doing} in {self.path}: {exc}") from None
        return call
    return wrap


def _flock(path: str, doing: str, taken: Callable[[], StoreError],
           remove: bool = False) -> Claim:
    """An exclusive flock of ``path`` (made if missing), held until the claim is released
    or the process ends; ``taken()`` if another holds it. ``remove``: the release removes
    the file too (a tournament's: one a tournament ever played piled up beside the
    database)."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot {doing}: cannot open {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise taken() from None
        # a holder that removes its file on release may have done so between our open and
        # our lock: we would hold the lock of a file nobody else can find, beside another
        # process holding the new one. Hold it only if it is still the file at ``path``.
        try:
            still = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            still = False
        if still:
            break
        os.close(fd)

    def release() -> None:
        if remove:    # while holding the lock: whoever opens it next makes a new file
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        os.close(fd)   # and with the descriptor, the lock
    return Claim(release)


class SQLiteStore(Store):
    """A :class:`Store` in one SQLite file."""

    def __init__(self, path: str | Path, durable: bool = False, *, any_thread: bool = False,
                 reading: bool = False, migrate: bool = True) -> None:
        """``any_thread``: the connection may be used by a thread other than the one that
        opened it (one thread at a time), as :meth:`reopen`'s is. ``reading``: the caller
        only reads, so a file on a read-only file system is opened as it is (see
        :meth:`_open_read_only`)."""
        self.path = str(path)
        self.durable = durable
        if self.path in ("", ":memory:") or self.path.startswith("file:"):
            # SQLite's own names for a database of no file, which every connection (a
            # worker's, a resume's) sees empty: a tournament's results would be lost
            raise UnusableDatabaseError(f"{self.path!r} is no database file: give the path of one "
                             "(it is made if missing)")
        # SQLite's -wal and -shm files, and this store's claims, go by the file's name: a
        # second name for the file (a hard link) is a second database to them, and two
        # servers wrote one file through two names, each with its own -wal, until it was
        # malformed. SQLite itself follows a symbolic link to its file; the claims are
        # made beside that file too (before, a server on a link played beside one on the
        # file's own path).
        self._real = os.path.realpath(self.path)
        if os.path.isdir(self._real):   # its links are its subfolders: not the check below
            raise UnusableDatabaseError(f"{self.path} is a folder, not a database file: give "
                                        "the path of one (it is made if missing)")
        try:
            links = os.stat(self._real).st_nlink
        except OSError:
            links = 1           # not made yet (or unreadable: connect says why)
            _made_private(self._real)
        if links > 1:
            raise UnusableDatabaseError(f"cannot open database {self.path}: the file has {links} names "
                             "(hard links), and SQLite keeps its journal and locks by name, so "
                             "two programs using two names would corrupt it: keep one name "
                             "(remove the other links, or copy the file)")
        try:
            self.timeout = busy_timeout()
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=self.timeout,
                                      check_same_thread=not any_thread)
        except sqlite3.Error as exc:
            raise UnusableDatabaseError(f"cannot open database {self.path}: {exc}"
                                        f"{_unwritable(self._real)}") from None
        try:
            self._set_up(migrate)
        except sqlite3.Error as exc:
            self.db.close()
            if reading and _read_only_fs(self._real):
                self._open_read_only(exc)
                return
            # a lock held past the wait may pass; the file itself (not a database, a
            # read-only or unwritable place) is for the user to change
            unusable = not _busy(exc)
            raise (UnusableDatabaseError if unusable else StoreError)(
                f"cannot open database {self.path}: {exc}"
                f"{_unwritable(self._real) if unusable else ''}") from None
        except BaseException:
            self.db.close()
            raise

    def _open_read_only(self, why: sqlite3.Error) -> None:
        """Open the file on a read-only file system (a published results volume, a
        read-only mount): SQLite cannot make the shared-memory file a WAL database's
        readers need there, so the file is opened immutable, which no other process may
        then change; a `-wal` beside it (a writer's, through another mount) or an older
        schema (no migration can run) is refused, saying why."""
        if os.path.exists(f"{self._real}-wal"):
            raise UnusableDatabaseError(f"cannot open database {self.path}: it is on a read-only file "
                             f"system, beside a -wal file of changes not yet in it (another "
                             f"program may be writing it): open it where it is written, or "
                             f"copy the file and its -wal ({why})")
        try:
            self.db = sqlite3.connect(f"file:{urllib.parse.quote(self._real)}?mode=ro&immutable=1",
                                      uri=True, isolation_level=None)
            self._refuse_foreign()
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.Error as exc:
            self.db.close()
            raise UnusableDatabaseError(f"cannot open database {self.path}: {exc}") from None
        try:
            refuse_newer(self.path, version, "sqlite")
            if version != SCHEMA_VERSION:
                raise UnusableDatabaseError(f"cannot open database {self.path}: it was written by an "
                                 f"older arena (schema {version}, now {SCHEMA_VERSION}), "
                                 "and is on a read-only file system, where it cannot be "
                                 "brought up to date: copy it somewhere writable")
        except BaseException:
            self.db.close()
            raise

    def migrate(self) -> None:
        try:
            self._set_up()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from None

    def _set_up(self, migrate: bool = True) -> None:
        """Switch the file to WAL and bring its schema up to date (``migrate``).

        SQLite skips the busy handler where waiting could deadlock: when several processes
        open one new file at once, all reading it and then wanting to switch its journal
        mode, some get "database is locked" at once. Those start again (the switch and the
        migrations are idempotent) until the busy timeout has passed."""
        deadline = time.monotonic() + self.timeout
        pause = 0.005
        while True:
            try:
                # sqlite3.connect opens lazily: a file that is not a database fails here
                self._refuse_foreign()
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
                self.db.execute("PRAGMA foreign_keys=ON")
                if migrate:
                    self._migrate()
                return
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def _begin(self) -> None:
        """Open a write transaction, waiting up to the busy timeout for another process's
        lock; then a :class:`StoreError` that says so (nothing was written)."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreError(f"database {self.path} is locked by another process (waited "
                             f"{self.timeout:g} s; ${TIMEOUT_ENV} sets how long): nothing was "
                             f"written ({exc})") from None

    def _rollback(self) -> None:
        """Roll back the open transaction, if SQLite has not already (it rolls back by
        itself after some failures, a full disk among them, and a second ROLLBACK would
        hide why with "no transaction is active")."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def _refuse_foreign(self) -> None:
        """A StoreError for a SQLite database of something else (tables, and no arena
        schema version), before anything is written to it: the arena's tables went into
        it, even from a command that only reads."""
        # one statement, one snapshot: another process may be creating the arena's tables
        # in this new file, and commits them with their schema version
        rows = self.db.execute(
            "SELECT name, (SELECT user_version FROM pragma_user_version) FROM sqlite_master "
            "WHERE type = 'table' ORDER BY name LIMIT 6").fetchall()
        if rows and not rows[0][1]:
            tables = [name for name, _ in rows]
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise UnusableDatabaseError(f"{self.path} is a SQLite database of something else (tables: "
                             f"{shown}), not an arena database; give another --db")

    def _migrate(self) -> None:
        """Bring the file to :data:`SCHEMA_VERSION` (see :mod:`arena.store.migrations`)."""
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        refuse_newer(self.path, version, "sqlite")
        for migration in migrations("sqlite")[version:]:
            self._begin()
            try:
                # another process may have run this migration while we waited for the lock
                if self.db.execute("PRAGMA user_version").fetchone()[0] < migration.version:
                    for statement in statements(migration.sql):
                        self.db.execute(statement)
                    self.db.execute(f"PRAGMA user_version={migration.version}")
                self.db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    @property
    def url(self) -> str:
        return self.path

    def reopen(self) -> SQLiteStore:
        # opened here, used by the thread it is handed to: sqlite3 would refuse that
        return SQLiteStore(self.path, durable=self.durable, any_thread=True)

    def claim(self) -> Claim:
        # an flock of a file of its own beside the database (as SQLite's -wal and -shm),
        # not of the database: on NFS, Linux makes an flock into an fcntl lock of the
        # whole file, which SQLite's own fcntl locks would meet. The kernel lets it go
        # when the process ends, however it ends; Python's descriptors are not inherited
        # by the processes the server starts.
        return _flock(f"{self._real}-serving", f"claim {self.path} for this server",
                      lambda: already_claimed(self.path))

    def claim_tournament(self, tournament: TournamentRecord) -> Claim:
        # as claim, a file of its own for each tournament, in a folder beside the database
        folder = f"{self._real}-playing"
        doing = f"claim tournament {tournament.name!r} in {self.path}"
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot {doing}: cannot make {folder}: "
                             f"{exc.strerror or exc}") from None
        return _flock(os.path.join(folder, str(tournament.id)), doing,
                      lambda: tournament_in_play(tournament.name, self.path), remove=True)

    # ---------------------------------------------------------------- tournaments

    @_said("create a tournament")
    def create_tournament(self, name: str, settings: dict[str, Any],
                          bots: Sequence[BotVersion]) -> TournamentRecord:
        created = time.time()
        self._begin()
        try:   # its bots and itself, or nothing
            records = [self._add_bot(b) for b in bots]
            cur = self.db.execute(
                "INSERT INTO tournaments (name, created_at, settings) VALUES (?, ?, ?)",
                (name, created, json.dumps(settings)))
            tid = cur.lastrowid
            self.db.executemany(
                "INSERT INTO tournament_bots (tournament_id, position, bot_id) VALUES (?, ?, ?)",
                [(tid, i, b.id) for i, b in enumerate(records)])
            self.db.execute("COMMIT")
        except sqlite3.IntegrityError:
            self._rollback()
            raise TournamentExistsError(f"a tournament called {name!r} already exists in "
                                        f"{self.path}") from None
        except BaseException:
            self._rollback()
            raise
        return TournamentRecord(tid, name, created, settings, [b.name for b in records])

    def _tournament(self, row) -> TournamentRecord:
        tid, name, created, settings, cancelled = row
        bots = [r[0] for r in self.db.execute(
            "SELECT b.name FROM tournament_bots tb JOIN bots b ON b.id = tb.bot_id "
            "WHERE tb.tournament_id = ? ORDER BY tb.position", (tid,))]
        return TournamentRecord(tid, name, created, json.loads(settings), bots, cancelled)

    @_said("mark a tournament cancelled")
    def set_cancelled(self, tournament: TournamentRecord, cancelled: bool) -> TournamentRecord:
        self.db.execute("UPDATE tournaments SET cancelled_at = ? WHERE id = ?",
                        (time.time() if cancelled else None, tournament.id))
        row = self.db.execute(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE id = ?",
                              (tournament.id,)).fetchone()
        if row is None:
            raise StoreError(f"no tournament {tournament.id} in {self.path}")
        return self._tournament(row)

    @_said("read a tournament")
    def tournament(self, name: str | None = None) -> TournamentRecord:
        if name is None:
            row = self.db.execute(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments "
                                  "ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                raise NotFoundError(f"no tournament in {self.path} yet")
        else:
            row = self.db.execute(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments "
                                  "WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise not_found(name, f"in {self.path}", self)
        return self._tournament(row)

    @_said("read the tournaments")
    def tournaments(self) -> list[TournamentRecord]:
        rows = self.db.execute(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments ORDER BY id")
        return [self._tournament(r) for r in rows.fetchall()]

    @_said("read a tournament")
    def has_tournament(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM tournaments WHERE name = ?", (name,)).fetchone() is not None

    @_said("read the tournaments")
    def tournament_names(self, limit: int) -> list[str]:
        rows = self.db.execute("SELECT name FROM tournaments ORDER BY id DESC LIMIT ?", (limit,))
        return [r[0] for r in rows.fetchall()]

    # ---------------------------------------------------------------- bots

    @_said("read a tournament's bots")
    def tournament_bots(self, tournament: TournamentRecord) -> list[BotRecord]:
        rows = self.db.execute(
            "SELECT b.id, b.name, b.folder, b.manifest, b.content_hash FROM tournament_bots tb "
            "JOIN bots b ON b.id = tb.bot_id WHERE tb.tournament_id = ? ORDER BY tb.position",
            (tournament.id,))
        return [BotRecord(id=i, name=n, folder=f, manifest=json.loads(m), content_hash=h)
                for i, n, f, m, h in rows.fetchall()]

    @_said("store a bot")
    def add_bot(self, name: str, folder: str, manifest: dict[str, Any], content_hash: str) -> BotRecord:
        self._begin()
        try:
            record = self._add_bot(BotVersion(name, folder, manifest, content_hash))
            self.db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise
        return record

    def _add_bot(self, bot: BotVersion) -> BotRecord:
        """In the open transaction: the record of ``bot``, inserted if new."""
        row = self.db.execute("SELECT id FROM bots WHERE name = ? AND content_hash = ?",
                              (bot.name, bot.content_hash)).fetchone()
        if row is None:
            cur = self.db.execute(
                "INSERT INTO bots (name, folder, manifest, content_hash) VALUES (?, ?, ?, ?)",
                (bot.name, bot.folder, json.dumps(bot.manifest), bot.content_hash))
            bot_id = cur.lastrowid
        else:
            bot_id = row[0]
        return BotRecord(id=bot_id, name=bot.name, folder=bot.folder, manifest=bot.manifest,
                         content_hash=bot.content_hash)

    # ---------------------------------------------------------------- matches

    @_said("store a match")
    def record_match(self, tournament: TournamentRecord, key: str, sample: str,
                     bots: list[str], result: MatchResult) -> int:
        values = match_values(tournament.id, key, sample, bots, result)
        events = encode_events(result)
        self._begin()
        try:
            cur = self.db.execute(
                f"INSERT INTO matches ({', '.join(MATCH_INSERT)}) VALUES "
                f"({', '.join('?' * len(MATCH_INSERT))})", values)
            match_id = cur.lastrowid
            self.db.execute("INSERT INTO match_events (match_id, encoding, data) VALUES (?, ?, ?)",
                            (match_id, EVENTS_ENCODING, events))
            self.db.execute("COMMIT")
        except sqlite3.IntegrityError:
            self._rollback()
            raise AlreadyStoredError(f"match {key!r} of tournament {tournament.name!r} is "
                                     "already stored") from None
        except BaseException:
            self._rollback()
            raise
        return match_id

    @_said("read the matches")
    def finished_keys(self, tournament: TournamentRecord) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT key FROM matches WHERE tournament_id = ?",
                                              (tournament.id,))}

    @_said("read the matches")
    def matches(self, tournament: TournamentRecord, after: int = 0,
                limit: int | None = None) -> list[MatchRecord]:
        rows = self.db.execute(
            f"SELECT {MATCH_SELECT} {MATCH_FROM} "
            "WHERE m.tournament_id = ? AND m.id > ? ORDER BY m.id LIMIT ?",
            (tournament.id, after, -1 if limit is None else limit))
        return [match_record(r) for r in rows.fetchall()]

    @_said("read the matches")
    def last_matches(self, tournament: TournamentRecord, count: int) -> list[MatchRecord]:
        rows = self.db.execute(
            f"SELECT {MATCH_SELECT} {MATCH_FROM} "
            "WHERE m.tournament_id = ? ORDER BY m.id DESC LIMIT ?", (tournament.id, count))
        return [match_record(r) for r in reversed(rows.fetchall())]

    @_said("read a match")
    def match(self, match_id: int) -> MatchRecord:
        if not is_row_id(match_id):
            raise NotFoundError(f"no match {match_id} in {self.path}")
        row = self.db.execute(
            f"SELECT {MATCH_SELECT} {MATCH_FROM} "
            "WHERE m.id = ?", (match_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no match {match_id} in {self.path}")
        return match_record(row)

    @_said("read a match")
    def match_by_uid(self, match_uid: str) -> MatchRecord | None:
        row = self.db.execute(
            f"SELECT {MATCH_SELECT} {MATCH_FROM} "
            "WHERE m.match_uid = ? ORDER BY m.id DESC LIMIT 1", (match_uid,)).fetchone()
        return None if row is None else match_record(row)

    @_said("read a match's events")
    def events(self, match_id: int) -> list[dict[str, Any]]:
        row = self.db.execute("SELECT encoding, data FROM match_events WHERE match_id = ?",
                              (match_id,)).fetchone()
        if row is None:
            raise StoreError(f"no events of match {match_id} in {self.path}")
        return decode_events(match_id, *row)

    @_said("save a tournament's state")
    def save_state(self, tournament: TournamentRecord, through: int, data: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO tournament_states (tournament_id, through, encoding, data, "
                        "saved_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (tournament_id) DO UPDATE "
                        "SET through = excluded.through, encoding = excluded.encoding, "
                        "data = excluded.data, saved_at = excluded.saved_at",
                        (tournament.id, through, STATE_ENCODING, encode_state(data), time.time()))

    @_said("read a tournament's state")
    def state(self, tournament: TournamentRecord) -> SavedState | None:
        row = self.db.execute("SELECT through, encoding, data, saved_at FROM tournament_states "
                              "WHERE tournament_id = ?", (tournament.id,)).fetchone()
        return None if row is None else decode_state(tournament.name, row)

    # ---------------------------------------------------------------- a server's own

    @_said("read a server setting")
    def server_value(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM server WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    @_said("set a server setting")
    def set_server_value(self, key: str, value: str) -> bool:
        cur = self.db.execute("INSERT OR IGNORE INTO server (key, value) VALUES (?, ?)", (key, value))
        return cur.rowcount == 1

    @_said("register a bot")
    def register_bot(self, name: str, kind: str, token_hash: str | None = None,
                     folder: str | None = None, status: str = "active") -> RegisteredBot:
        self._begin()
        try:
            version = self.db.execute("SELECT COALESCE(MAX(version), 0) + 1 FROM registered_bots "
                                      "WHERE name = ?", (name,)).fetchone()[0]
            cur = self.db.execute(
                "INSERT INTO registered_bots (name, version, kind, token_hash, folder, status, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, version, kind, token_hash, folder, status, time.time()))
            row = self.db.execute(f"SELECT {REGISTERED_SELECT} FROM registered_bots WHERE id = ?",
                                  (cur.lastrowid,)).fetchone()
            self.db.execute("COMMIT")
        except sqlite3.IntegrityError as exc:
            self._rollback()
            raise StoreError(f"cannot register bot {name!r}: {exc}") from None
        except BaseException:
            self._rollback()
            raise
        return registered_bot(row)

    @_said("read the registered bots")
    def registered_bots(self, include_removed: bool = False) -> list[RegisteredBot]:
        where = "" if include_removed else "WHERE status != 'removed'"
        rows = self.db.execute(f"SELECT {REGISTERED_SELECT} FROM registered_bots {where} ORDER BY id")
        return [registered_bot(r) for r in rows.fetchall()]

    @_said("update a registered bot")
    def update_registered_bot(self, bot_id: int, status: str | None = None,
                              folder: str | None = None,
                              report: dict[str, Any] | None = None) -> RegisteredBot:
        sets, values = [], []
        for column, value in (("status", status), ("folder", folder),
                              ("report", None if report is None else json.dumps(report))):
            if value is not None:
                sets.append(f"{column} = ?")
                values.append(value)
        if sets:
            self.db.execute(f"UPDATE registered_bots SET {', '.join(sets)} WHERE id = ?",
                            (*values, bot_id))
        row = self.db.execute(f"SELECT {REGISTERED_SELECT} FROM registered_bots WHERE id = ?",
                              (bot_id,)).fetchone()
        if row is None:
            raise StoreError(f"no registered bot {bot_id}")
        return registered_bot(row)

    def close(self) -> None:
        self.db.close()


def _busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite failed on another connection's lock (SQLITE_BUSY)."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY


def _unwritable(path: str) -> str:
    """Why a database that cannot be opened for writing cannot be, where its folder says
    (SQLite's own words are "unable to open database file"), or ``""``."""
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        return f" (there is no folder {folder})"
    if _read_only_fs(path):
        return (f" ({folder} is on a read-only file system: SQLite writes the file, and its "
                "-wal and -shm beside it)")
    if not os.access(folder, os.W_OK | os.X_OK):
        return (f" ({folder} is not writable by this user: SQLite writes the file, and its "
                "-wal and -shm beside it)")
    return ""


def _made_private(path: str) -> None:
    """Make a new database file readable by its owner alone (SQLite gives its -wal and
    -shm files the same mode). Made by connect under the usual umask, it was every local
    user's to read, with the master seed of every tournament in it, from which each deal,
    live matches' hands too, follows (arena.seeds). Where it cannot be made here, connect
    says why."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _read_only_fs(path: str) -> bool:
    """Whether the file system holding ``path`` is mounted read-only."""
    try:
        return bool(os.statvfs(os.path.dirname(path) or ".").f_flag & os.ST_RDONLY)
    except OSError:
        return False
