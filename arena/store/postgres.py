"""The PostgreSQL backend (psycopg 3): the SQLite store's promises, on a server that many
arenas, on many machines, write and read at once.

One connection per store, in autocommit mode: every write that must be whole (a match and
its events, a tournament and its bots) is one explicit transaction, and every read is one
statement, which sees only committed rows (READ COMMITTED). So writers never see each
other's halves, readers never wait for writers, and a ``kill -9`` of an arena in the
middle of a write leaves no trace: the server rolls back the transaction of a connection
that went away.

A connection lost (the server restarted or failed over, the network dropped it) is made
again by the next call, which then runs again: within the store's ``reconnect_window``
(none by default: one try at once, so a call in an event loop never waits long; the
thread that writes results waits longer, :mod:`arena.store.writer`). A write whose commit
may have landed just before the connection went looks for its row before writing again,
so nothing is stored twice.

Durability: ``durable=True`` sets ``synchronous_commit = on`` for the session, so every
commit is flushed to disk before ``record_match`` returns, whatever the server's default.
Without it the server's own setting holds (``on`` unless its administrator changed it),
which already survives a crash of the arena, of PostgreSQL and of the machine.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import select
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors

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
    RegisteredBot,
    SavedState,
    Store,
    StoreError,
    TournamentExistsError,
    TournamentRecord,
    already_claimed,
    is_row_id,
    not_found,
    tournament_in_play,
    tries,
)
from arena.store.location import redact, scrub
from arena.store.migrations import migrations, refuse_newer, schema_version

log = logging.getLogger(__name__)

#: The schema version this arena's files bring a database to.
SCHEMA_VERSION = schema_version("postgresql")

#: The table that records each migration applied (one row per version).
VERSION_TABLE = "arena_schema_migrations"

#: The advisory lock that openers of one database take to migrate it one at a time
#: (advisory locks are per database: two arenas on two databases do not wait on each other).
MIGRATION_LOCK = 0x6F6E6F3939   # "ono99"

#: The advisory lock that ``arena serve`` holds on its database (:meth:`PostgresStore.claim`).
SERVE_LOCK = 0x6F6E6F3939 + 1
#: The class of a tournament's advisory lock (pg_try_advisory_lock(class, tournament id)).
PLAY_LOCK_CLASS = 0x6F6E6F39   # "ono9"

#: How long to wait for the server to answer a connection, in seconds.
CONNECT_TIMEOUT = 10

#: The same, for the one try of a store with no ``reconnect_window`` (its calls are made
#: in an event loop, which a server that does not answer, behind a network cut, would
#: stall): libpq's shortest.
RETRY_TIMEOUT = 2

#: How long a claim let go waits for the server to say its advisory lock is free before it
#: ends its session anyway: a server that does not answer (stopped, or across a network
#: cut, where no reset ever comes) held ``release`` until TCP gave up, a quarter of an
#: hour, on the event loop of an arena serve (a tournament's end, the server's stop). The
#: lock still goes with the session, as it did before the unlock was sent.
UNLOCK_WAIT_S = 2.0

#: How long a look at a claim (:meth:`Claim.held`, every CLAIM_CHECK_S, in a thread) waits
#: for its session to answer, and then for its lock to be taken again on a new one: the
#: look waited as long as TCP would, holding the claim's lock, and a release (on the event
#: loop of an arena serve) waited behind it. No answer in time is a session lost.
KEEP_WAIT_S = 10.0


def _reconnecting(method: Callable) -> Callable:
    """A call that finds its connection lost connects again (within the store's
    ``reconnect_window``) and runs once more, with ``_again`` set for the writes that must
    first look for what an interrupted commit may have stored; lost again, the same, until
    the window, counted from the first loss, has passed (with no window: once). Otherwise
    its error stands, saying that connecting again failed too. Behind a call that gave up
    (within a window's time of it, the connection not made again since), a call tries
    once: the calls queued behind one that gave up each waited a window of their own, and
    a run stopped after twice its window (the twenty-seventh review's)."""
    @functools.wraps(method)
    def call(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        deadline = None
        while True:
            try:
                return method(self, *args, **kwargs)
            except StoreError as exc:
                if not (self.db.closed or self.db.broken):
                    raise                      # the statement's own error: no retry
                if deadline is None:
                    now = time.monotonic()
                    behind = now <= self._gave_up_at + self.reconnect_window
                    deadline = now if behind else now + self.reconnect_window
                elif time.monotonic() >= deadline:
                    # a second loss inside the window was this write's end, which stopped
                    # a tournament on a flapping failover (the seventeenth review)
                    raise
                self._reconnect(exc, deadline)
            finally:
                self._again = False
            self._again = True
    return call


class PostgresStore(Store):
    """A :class:`Store` in a PostgreSQL database, named by its URL."""

    def __init__(self, url: str, durable: bool = False, *, migrate: bool = True) -> None:
        self._url = url
        self.durable = durable
        self._again = False                    # a call made again after a reconnection
        self._gave_up_at = -math.inf           # when a call last gave up connecting again
        self.db = self._open()
        try:
            if migrate:
                self.migrate()
        except BaseException:
            self.db.close()
            raise

    def migrate(self) -> None:
        with self._errors("bring the schema up to date"):
            self._migrate()

    def _open(self) -> psycopg.Connection:
        """A new connection, or a :class:`StoreError` that says why not."""
        try:
            return self._connect()
        except (psycopg.Error, ValueError) as exc:
            # a bad URL is a ProgrammingError; an unreachable server an OperationalError
            said = self._scrub(exc)
            raise StoreError(f"cannot connect to {self.describe()}: {said}{_what_to_do(said)}") from None

    def _connect(self, timeout: float = CONNECT_TIMEOUT) -> psycopg.Connection:
        # client_encoding: text comes back as str whatever the database's encoding; a
        # SQL_ASCII database (what a cluster made under the C locale, as in many
        # containers, gives) otherwise hands psycopg bytes for every text column
        db = psycopg.connect(self._url, autocommit=True, connect_timeout=timeout,
                             client_encoding="UTF8")
        if self.durable:
            try:
                db.execute("SET synchronous_commit = on")
            except BaseException:
                db.close()
                raise
        return db

    def _reconnect(self, lost: StoreError, deadline: float) -> None:
        """A new connection in place of the lost one: tried at once, then again (0.25 s
        apart, doubling to 2 s) until ``deadline`` (the end of the ``reconnect_window``
        since the call first lost it; past it, once); ``lost``, with why the last try
        failed, when none succeeds."""
        began = time.monotonic()
        once = began >= deadline   # past the window (a call behind one that gave up)
        timeout = CONNECT_TIMEOUT if self.reconnect_window and not once else RETRY_TIMEOUT
        for _ in tries(deadline):
            try:
                db = self._connect(timeout)
                break
            except psycopg.Error as exc:
                failure = exc
        else:
            if not self.reconnect_window:
                waited = ""
            elif once:
                waited = " once (a call before it had tried for its window)"
            else:
                waited = f" for {self.reconnect_window:g} s"
            self._gave_up_at = time.monotonic()
            raise StoreError(f"{lost}; connecting again{waited} failed: "
                             f"{self._scrub(failure)}") from None
        self.db.close()
        self.db = db
        self._gave_up_at = -math.inf
        # said: a database away for most of a minute went by without a word (the review
        # as a scale-out operator), the run only slower for it
        log.warning("the connection to %s was lost (%s); connected again after %.1f s",
                    self.describe(), lost, time.monotonic() - began)

    @property
    def url(self) -> str:
        return self._url

    def reopen(self) -> PostgresStore:
        return PostgresStore(self._url, durable=self.durable)

    def claim(self) -> Claim:
        # a session-level advisory lock, on a session of its own (the store's connection
        # may be made again, which would let it go): the server ends it with the session,
        # when the process ends however it ends. A restart of the database server ends it
        # too; the server then serves on without it.
        return self._advisory_lock("claim the database for this server", (SERVE_LOCK,),
                                   lambda: already_claimed(self.describe()))

    def claim_tournament(self, tournament: TournamentRecord) -> Claim:
        # as claim, keyed by the tournament: two int4 keys (ids past 2^31, were there ever
        # so many, share one)
        return self._advisory_lock(f"claim tournament {tournament.name!r}",
                                   (PLAY_LOCK_CLASS, tournament.id % 2**31),
                                   lambda: tournament_in_play(tournament.name, self.describe()))

    def _advisory_lock(self, doing: str, key: tuple[int, ...],
                       taken: Callable[[], StoreError]) -> Claim:
        """A session-level advisory lock of ``key`` (one bigint, or two int4), on a session
        of its own, held until the claim is released or the process ends; ``taken()`` if
        another session holds it."""
        # the key written in (whole numbers): the unlock goes through libpq as it is
        keys = ", ".join(str(int(k)) + ("::int4" if len(key) == 2 else "") for k in key)
        lock = f"SELECT pg_try_advisory_lock({keys})"
        unlock = f"SELECT pg_advisory_unlock({keys})"
        db = self._open()
        try:
            with self._errors(doing):
                held = db.execute(lock).fetchone()[0]
        except BaseException:
            db.close()
            raise
        if not held:
            db.close()
            raise taken()
        session = [db]
        holds = [True]     # whether session[0] holds the lock (one taken again may not)
        released = [False]
        using = threading.Lock()

        def keep() -> bool:
            # the session answers: the lock is its own. Gone (the database server
            # restarted, the connection cut, no answer in KEEP_WAIT_S): the lock went
            # with it, and another process may have it now; take it again on a new
            # session if none has. A database still away holds it for nobody: held,
            # until it is back. Never after the release (a look waiting behind it took
            # the lock again, for a session nobody would end).
            with using:
                if released[0]:
                    return False
                if _ask(session[0], "SELECT 1", KEEP_WAIT_S) is not None:
                    return True
                session[0].close()
                try:
                    db = self._open()
                except (psycopg.Error, StoreError):
                    return True
                again = _ask(db, lock, KEEP_WAIT_S)
                if again is None:
                    db.close()
                    return True
                session[0] = db
                holds[0] = again == "t"
                return holds[0]

        def close() -> None:
            # let go first, then end the session: a session's locks go when its server
            # process exits, which it does after the client has moved on (a claim made
            # just after a release was refused, on a busy machine). A session gone
            # already took its lock with it.
            with using:
                released[0] = True
                if holds[0]:   # an unlock of a lock not held: a WARNING in the server's log
                    _ask(session[0], unlock, UNLOCK_WAIT_S)
                session[0].close()

        return Claim(close, keep)

    def _scrub(self, exc: BaseException) -> str:
        """The driver's message, on one line (libpq adds hints on lines of their own; a
        command's error is one line), with the password taken out."""
        return scrub(" ".join(str(exc).split()), self._url)

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """A driver error (the server gone, a statement refused) as a :class:`StoreError`
        that says what we were doing and where; our own errors pass as they are."""
        try:
            yield
        except psycopg.Error as exc:
            raise StoreError(f"cannot {doing} in {self.describe()}: {self._scrub(exc)}") from None

    # ---------------------------------------------------------------- the schema

    def _version(self) -> int:
        exists = self.db.execute("SELECT to_regclass(%s)", (VERSION_TABLE,)).fetchone()[0]
        if exists is None:
            return 0
        return self.db.execute(f"SELECT COALESCE(MAX(version), 0) FROM {VERSION_TABLE}").fetchone()[0]

    def _migrate(self) -> None:
        """Bring the database to :data:`SCHEMA_VERSION` (see :mod:`arena.store.migrations`).
        The advisory lock makes openers at once take turns; each reads the version again
        under it and skips what another ran meanwhile."""
        version = self._version()
        refuse_newer(redact(self._url), version, "postgresql")
        for migration in migrations("postgresql")[version:]:
            with self.db.transaction():
                self.db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                self.db.execute(f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} ("
                                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                                "applied_at DOUBLE PRECISION NOT NULL)")
                current = self._version()
                refuse_newer(redact(self._url), current, "postgresql")
                if current < migration.version:
                    # a file's statements in one execute: without parameters, psycopg
                    # sends it as one simple query, which may hold many statements
                    self.db.execute(migration.sql)
                    self.db.execute(f"INSERT INTO {VERSION_TABLE} (version, name, applied_at) "
                                    "VALUES (%s, %s, %s)", (migration.version, migration.name, time.time()))

    # ---------------------------------------------------------------- tournaments

    @_reconnecting
    def create_tournament(self, name: str, settings: dict[str, Any],
                          bots: Sequence[BotVersion]) -> TournamentRecord:
        created = time.time()
        with self._errors(f"create tournament {name!r}"):
            if self._again:
                # the connection went during the last try: its commit may have landed
                row = self.db.execute(f"SELECT {self._TOURNAMENT_COLUMNS} FROM tournaments "
                                      "WHERE name = %s", (name,)).fetchone()
                if row is not None and json.loads(row[3]) == json.loads(json.dumps(settings)):
                    made = self._tournament(row)
                    if made.bots == [b.name for b in bots]:
                        return made
            try:
                with self.db.transaction():   # its bots and itself, or nothing
                    records = [self._add_bot(b) for b in bots]
                    tid = self.db.execute(
                        "INSERT INTO tournaments (name, created_at, settings) VALUES (%s, %s, %s) "
                        "RETURNING id", (name, created, json.dumps(settings))).fetchone()[0]
                    with self.db.cursor() as cur:
                        cur.executemany(
                            "INSERT INTO tournament_bots (tournament_id, position, bot_id) "
                            "VALUES (%s, %s, %s)", [(tid, i, b.id) for i, b in enumerate(records)])
            except errors.UniqueViolation:
                raise TournamentExistsError(f"a tournament called {name!r} already exists in "
                                            f"{self.describe()}") from None
        return TournamentRecord(tid, name, created, settings, [b.name for b in records])

    _TOURNAMENT_COLUMNS = "id, name, created_at, settings, cancelled_at"

    def _tournament(self, row) -> TournamentRecord:
        tid, name, created, settings, cancelled = row
        bots = [r[0] for r in self.db.execute(
            "SELECT b.name FROM tournament_bots tb JOIN bots b ON b.id = tb.bot_id "
            "WHERE tb.tournament_id = %s ORDER BY tb.position", (tid,))]
        return TournamentRecord(tid, name, created, json.loads(settings), bots, cancelled)

    @_reconnecting
    def set_cancelled(self, tournament: TournamentRecord, cancelled: bool) -> TournamentRecord:
        with self._errors(f"mark tournament {tournament.name!r} cancelled"):
            row = self.db.execute(f"UPDATE tournaments SET cancelled_at = %s WHERE id = %s "
                                  f"RETURNING {self._TOURNAMENT_COLUMNS}",
                                  (time.time() if cancelled else None, tournament.id)).fetchone()
            if row is None:
                raise StoreError(f"no tournament {tournament.id} in {redact(self._url)}")
            return self._tournament(row)

    @_reconnecting
    def tournament(self, name: str | None = None) -> TournamentRecord:
        with self._errors("read a tournament"):
            if name is None:
                row = self.db.execute(f"SELECT {self._TOURNAMENT_COLUMNS} FROM tournaments "
                                      "ORDER BY id DESC LIMIT 1").fetchone()
                if row is None:
                    raise NotFoundError(f"no tournament in {self.describe()} yet")
            else:
                row = self.db.execute(f"SELECT {self._TOURNAMENT_COLUMNS} FROM tournaments "
                                      "WHERE name = %s", (name,)).fetchone()
                if row is None:
                    raise not_found(name, f"in {self.describe()}", self)
            return self._tournament(row)

    @_reconnecting
    def tournaments(self) -> list[TournamentRecord]:
        with self._errors("read the tournaments"):
            rows = self.db.execute(f"SELECT {self._TOURNAMENT_COLUMNS} FROM tournaments ORDER BY id")
            return [self._tournament(r) for r in rows.fetchall()]

    @_reconnecting
    def has_tournament(self, name: str) -> bool:
        with self._errors("read a tournament"):
            return self.db.execute("SELECT 1 FROM tournaments WHERE name = %s",
                                   (name,)).fetchone() is not None

    @_reconnecting
    def tournament_names(self, limit: int) -> list[str]:
        with self._errors("read the tournaments"):
            rows = self.db.execute("SELECT name FROM tournaments ORDER BY id DESC LIMIT %s", (limit,))
            return [r[0] for r in rows.fetchall()]

    # ---------------------------------------------------------------- bots

    @_reconnecting
    def tournament_bots(self, tournament: TournamentRecord) -> list[BotRecord]:
        with self._errors(f"read the bots of tournament {tournament.name!r}"):
            rows = self.db.execute(
                "SELECT b.id, b.name, b.folder, b.manifest, b.content_hash FROM tournament_bots tb "
                "JOIN bots b ON b.id = tb.bot_id WHERE tb.tournament_id = %s ORDER BY tb.position",
                (tournament.id,)).fetchall()
        return [BotRecord(id=i, name=n, folder=f, manifest=json.loads(m), content_hash=h)
                for i, n, f, m, h in rows]

    @_reconnecting
    def add_bot(self, name: str, folder: str, manifest: dict[str, Any], content_hash: str) -> BotRecord:
        with self._errors(f"store bot {name!r}"), self.db.transaction():
            return self._add_bot(BotVersion(name, folder, manifest, content_hash))

    def _add_bot(self, bot: BotVersion) -> BotRecord:
        """In the open transaction: the record of ``bot``, inserted if new. ON CONFLICT
        waits for another arena inserting the same version, then keeps its row; the
        SELECT after it (a new snapshot, in READ COMMITTED) sees that row."""
        row = self.db.execute(
            "INSERT INTO bots (name, folder, manifest, content_hash) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (name, content_hash) DO NOTHING RETURNING id",
            (bot.name, bot.folder, json.dumps(bot.manifest), bot.content_hash)).fetchone()
        if row is None:
            row = self.db.execute("SELECT id FROM bots WHERE name = %s AND content_hash = %s",
                                  (bot.name, bot.content_hash)).fetchone()
        return BotRecord(id=row[0], name=bot.name, folder=bot.folder, manifest=bot.manifest,
                         content_hash=bot.content_hash)

    # ---------------------------------------------------------------- matches

    @_reconnecting
    def record_match(self, tournament: TournamentRecord, key: str, sample: str,
                     bots: list[str], result: MatchResult) -> int:
        values = match_values(tournament.id, key, sample, bots, result)
        events = encode_events(result)
        with self._errors(f"store match {key!r} of tournament {tournament.name!r}"):
            if self._again:
                # the connection went during the last try: its commit may have landed
                row = self.db.execute("SELECT id FROM matches WHERE tournament_id = %s AND "
                                      "key = %s AND match_uid = %s",
                                      (tournament.id, key, result.match_id)).fetchone()
                if row is not None:
                    return row[0]
            try:
                with self.db.transaction():
                    match_id = self.db.execute(
                        f"INSERT INTO matches ({', '.join(MATCH_INSERT)}) VALUES "
                        f"({', '.join(['%s'] * len(MATCH_INSERT))}) RETURNING id",
                        values).fetchone()[0]
                    self.db.execute("INSERT INTO match_events (match_id, encoding, data) "
                                    "VALUES (%s, %s, %s)", (match_id, EVENTS_ENCODING, events))
            except errors.UniqueViolation:
                raise AlreadyStoredError(f"match {key!r} of tournament {tournament.name!r} is "
                                         "already stored") from None
        return match_id

    @_reconnecting
    def finished_keys(self, tournament: TournamentRecord) -> set[str]:
        with self._errors(f"read the matches of tournament {tournament.name!r}"):
            return {r[0] for r in self.db.execute("SELECT key FROM matches WHERE tournament_id = %s",
                                                  (tournament.id,))}

    @_reconnecting
    def matches(self, tournament: TournamentRecord, after: int = 0,
                limit: int | None = None) -> list[MatchRecord]:
        with self._errors(f"read the matches of tournament {tournament.name!r}"):
            rows = self.db.execute(f"SELECT {MATCH_SELECT} {MATCH_FROM} "
                                   "WHERE m.tournament_id = %s AND m.id > %s ORDER BY m.id "
                                   "LIMIT %s", (tournament.id, after, limit))
            return [match_record(r) for r in rows.fetchall()]

    @_reconnecting
    def last_matches(self, tournament: TournamentRecord, count: int) -> list[MatchRecord]:
        with self._errors(f"read the matches of tournament {tournament.name!r}"):
            rows = self.db.execute(f"SELECT {MATCH_SELECT} {MATCH_FROM} "
                                   "WHERE m.tournament_id = %s ORDER BY m.id DESC LIMIT %s",
                                   (tournament.id, count))
            return [match_record(r) for r in reversed(rows.fetchall())]

    @_reconnecting
    def match(self, match_id: int) -> MatchRecord:
        if not is_row_id(match_id):
            raise NotFoundError(f"no match {match_id} in {self.describe()}")
        with self._errors(f"read match {match_id}"):
            row = self.db.execute(f"SELECT {MATCH_SELECT} {MATCH_FROM} WHERE m.id = %s",
                                  (match_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no match {match_id} in {self.describe()}")
        return match_record(row)

    @_reconnecting
    def match_by_uid(self, match_uid: str) -> MatchRecord | None:
        with self._errors(f"read match {match_uid!r}"):
            row = self.db.execute(f"SELECT {MATCH_SELECT} {MATCH_FROM} "
                                  "WHERE m.match_uid = %s ORDER BY m.id DESC LIMIT 1",
                                  (match_uid,)).fetchone()
        return None if row is None else match_record(row)

    @_reconnecting
    def events(self, match_id: int) -> list[dict[str, Any]]:
        with self._errors(f"read the events of match {match_id}"):
            row = self.db.execute("SELECT encoding, data FROM match_events WHERE match_id = %s",
                                  (match_id,)).fetchone()
        if row is None:
            raise StoreError(f"no events of match {match_id} in {self.describe()}")
        return decode_events(match_id, *row)

    @_reconnecting
    def save_state(self, tournament: TournamentRecord, through: int, data: dict[str, Any]) -> None:
        with self._errors(f"save the state of tournament {tournament.name!r}"):
            self.db.execute("INSERT INTO tournament_states (tournament_id, through, encoding, "
                            "data, saved_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT "
                            "(tournament_id) DO UPDATE SET through = excluded.through, "
                            "encoding = excluded.encoding, data = excluded.data, "
                            "saved_at = excluded.saved_at",
                            (tournament.id, through, STATE_ENCODING, encode_state(data),
                             time.time()))

    @_reconnecting
    def state(self, tournament: TournamentRecord) -> SavedState | None:
        with self._errors(f"read the state of tournament {tournament.name!r}"):
            row = self.db.execute("SELECT through, encoding, data, saved_at FROM "
                                  "tournament_states WHERE tournament_id = %s",
                                  (tournament.id,)).fetchone()
        return None if row is None else decode_state(tournament.name, row)

    # ---------------------------------------------------------------- a server's own

    @_reconnecting
    def server_value(self, key: str) -> str | None:
        with self._errors(f"read server setting {key!r}"):
            row = self.db.execute("SELECT value FROM server WHERE key = %s", (key,)).fetchone()
        return None if row is None else row[0]

    @_reconnecting
    def set_server_value(self, key: str, value: str) -> bool:
        with self._errors(f"set server setting {key!r}"):
            if self._again and self.db.execute("SELECT value FROM server WHERE key = %s",
                                               (key,)).fetchone() == (value,):
                return True                    # the last try's commit landed
            cur = self.db.execute("INSERT INTO server (key, value) VALUES (%s, %s) "
                                  "ON CONFLICT (key) DO NOTHING", (key, value))
            return cur.rowcount == 1

    @_reconnecting
    def register_bot(self, name: str, kind: str, token_hash: str | None = None,
                     folder: str | None = None, status: str = "active") -> RegisteredBot:
        with self._errors(f"register bot {name!r}"):
            if self._again:
                # the last try's commit may have landed: a registration is new, with a
                # token or a folder of its own, so the latest version shows it
                row = self.db.execute(
                    f"SELECT {REGISTERED_SELECT} FROM registered_bots WHERE name = %s AND "
                    "kind = %s AND token_hash IS NOT DISTINCT FROM %s AND folder IS NOT "
                    "DISTINCT FROM %s AND version = (SELECT MAX(version) FROM registered_bots "
                    "WHERE name = %s)", (name, kind, token_hash, folder, name)).fetchone()
                if row is not None:
                    return registered_bot(row)
            try:
                with self.db.transaction():
                    # versions are numbered by reading the last one: registrations take turns
                    # (SQLite's BEGIN IMMEDIATE does the same), reads go on meanwhile
                    self.db.execute("LOCK TABLE registered_bots IN SHARE ROW EXCLUSIVE MODE")
                    version = self.db.execute(
                        "SELECT COALESCE(MAX(version), 0) + 1 FROM registered_bots WHERE name = %s",
                        (name,)).fetchone()[0]
                    row = self.db.execute(
                        "INSERT INTO registered_bots (name, version, kind, token_hash, folder, "
                        f"status, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {REGISTERED_SELECT}",
                        (name, version, kind, token_hash, folder, status, time.time())).fetchone()
            except errors.IntegrityError as exc:
                raise StoreError(f"cannot register bot {name!r}: {self._scrub(exc)}") from None
        return registered_bot(row)

    @_reconnecting
    def registered_bots(self, include_removed: bool = False) -> list[RegisteredBot]:
        where = "" if include_removed else "WHERE status != 'removed'"
        with self._errors("read the registered bots"):
            rows = self.db.execute(f"SELECT {REGISTERED_SELECT} FROM registered_bots {where} ORDER BY id")
            return [registered_bot(r) for r in rows.fetchall()]

    @_reconnecting
    def update_registered_bot(self, bot_id: int, status: str | None = None,
                              folder: str | None = None,
                              report: dict[str, Any] | None = None) -> RegisteredBot:
        sets, values = [], []
        for column, value in (("status", status), ("folder", folder),
                              ("report", None if report is None else json.dumps(report))):
            if value is not None:
                sets.append(f"{column} = %s")
                values.append(value)
        with self._errors(f"update registered bot {bot_id}"):
            if sets:
                row = self.db.execute(f"UPDATE registered_bots SET {', '.join(sets)} WHERE id = %s "
                                      f"RETURNING {REGISTERED_SELECT}", (*values, bot_id)).fetchone()
            else:
                row = self.db.execute(f"SELECT {REGISTERED_SELECT} FROM registered_bots WHERE id = %s",
                                      (bot_id,)).fetchone()
        if row is None:
            raise StoreError(f"no registered bot {bot_id}")
        return registered_bot(row)

    def close(self) -> None:
        self.db.close()


#: libpq's words for the usual first-run problems, and what the organiser does about each
_FIRST_RUN = (
    (re.compile(r"no password supplied"),
     "give the password in the URL (postgresql://USER:PASSWORD@HOST/DB), in ~/.pgpass or in "
     "PGPASSWORD"),
    (re.compile(r"password authentication failed"),
     "check the password given (in the URL, ~/.pgpass or PGPASSWORD)"),
    (re.compile(r'database "[^"]*" does not exist'),
     "make it first (createdb -O USER DB, or CREATE DATABASE as a superuser)"),
    (re.compile(r"role \"[^\"]*\" does not exist"),
     "make the user first (createuser USER), or give one that exists"),
)


def _what_to_do(said: str) -> str:
    """``" (what to do)"`` for a connection error an organiser meets on a first run, or
    ``""``: libpq says what failed, not what to do about it."""
    for words, advice in _FIRST_RUN:
        if words.search(said):
            return f" ({advice})"
    return ""


def _ask(db: psycopg.Connection, sql: str, wait: float) -> str | None:
    """Send ``sql`` on ``db`` and wait up to ``wait`` s for its answer, through libpq's
    non-blocking calls (psycopg waits as long as TCP does: a server stopped, or behind a
    network cut, where no reset ever comes, held the caller for a quarter of an hour); the
    first value of its answer as text, or None: no answer in time, an error, or no row.
    For a claim's own session, whose one use is its lock, so nothing else waits on it."""
    pgconn = db.pgconn
    deadline = time.monotonic() + wait
    try:
        pgconn.send_query(sql.encode())
        while True:
            pgconn.consume_input()
            if not pgconn.is_busy():
                value = None
                while (result := pgconn.get_result()) is not None:
                    if value is None and result.status == psycopg.pq.ExecStatus.TUPLES_OK \
                            and result.ntuples:
                        value = (result.get_value(0, 0) or b"").decode()
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            select.select([pgconn.socket], [], [], left)
    except (psycopg.Error, OSError, ValueError):
        return None
