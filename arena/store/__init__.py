"""Storage: one small interface (:class:`Store`), SQLite by default."""

from arena.store.base import (
    BotRecord, BotVersion, MatchRecord, RegisteredBot, Store, StoreError, TournamentRecord,
)
from arena.store.sqlite import SQLiteStore


def open_store(path: str, durable: bool = False) -> Store:
    """The store at ``path`` (a SQLite file; later, other backends by URL)."""
    return SQLiteStore(path, durable=durable)


__all__ = ["BotRecord", "BotVersion", "MatchRecord", "RegisteredBot", "SQLiteStore", "Store", "StoreError",
           "TournamentRecord", "open_store"]
