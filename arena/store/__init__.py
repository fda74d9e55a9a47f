"""Storage: one small interface (:class:`Store`), SQLite by default, PostgreSQL by URL."""

from arena.store.base import (
    BotRecord,
    BotVersion,
    MatchRecord,
    RefusedError,
    RegisteredBot,
    Store,
    StoreError,
    TournamentRecord,
)
from arena.store.location import is_url, redact
from arena.store.sqlite import SQLiteStore


def open_store(location: str, durable: bool = False, reading: bool = False,
               migrate: bool = True) -> Store:
    """The store at ``location``: a PostgreSQL database for a ``postgresql://`` (or
    ``postgres://``) URL, else a SQLite file at that path (created if missing).
    ``reading``: the caller only reads (a SQLite file on a read-only file system is then
    opened as it is). ``migrate=False``: its schema is brought up to date only by
    :meth:`Store.migrate`. :class:`StoreError` if it cannot be opened."""
    if is_url(location):
        # imported here: psycopg is only loaded by those who use a server
        from arena.store.postgres import PostgresStore
        return PostgresStore(location, durable=durable, migrate=migrate)
    return SQLiteStore(location, durable=durable, reading=reading, migrate=migrate)


__all__ = ["BotRecord", "BotVersion", "MatchRecord", "RegisteredBot", "RefusedError", "SQLiteStore", "Store", "StoreError",
           "TournamentRecord", "is_url", "open_store", "redact"]
