"""Storing results off the event loop.

The referee's clocks run in the event loop; a store is synchronous, and a network
database's commit (or a SQLite file locked by another process) can take far longer than
a move's time limit. A :class:`StoreWriter` makes the writes in one thread of its own,
on its own connection (:class:`arena.store.thread.StoreThread`), in the order they were
asked for; the loop awaits each write without blocking, so matches in flight keep their
clocks. It also times the writes, whatever the backend (the tournament benchmark reports
it). Its connection waits up to :data:`RECONNECT_WINDOW` for a database server that went
away to come back (a restart, a failover), where a call in the event loop tries to connect
again only once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Self

from arena.referee.results import MatchResult
from arena.store.base import Store, TournamentRecord
from arena.store.thread import StoreThread


#: How long a write waits for a database server that went away to come back, in seconds.
RECONNECT_WINDOW = 60.0


class StoreWriter:
    """Writes matches to ``store``'s database from one thread of its own."""

    def __init__(self, store: Store) -> None:
        self._thread = StoreThread(store, "store-writer", RECONNECT_WINDOW)
        self.write_seconds = 0.0   # time spent in the writes themselves, in all

    def _record(self, *args: Any) -> int:
        t0 = time.perf_counter()
        try:
            return self._thread.db().record_match(*args)
        finally:
            self.write_seconds += time.perf_counter() - t0

    async def record_match(self, tournament: TournamentRecord, key: str, sample: str,
                           bots: list[str], result: MatchResult) -> int:
        """As :meth:`Store.record_match`, awaited without blocking the event loop."""
        return await self._thread.call(self._record, tournament, key, sample, bots, result)

    def _save(self, tournament: TournamentRecord, through: int,
              make: Callable[[], dict[str, Any]]) -> None:
        self._thread.db().save_state(tournament, through, make())

    async def save_state(self, tournament: TournamentRecord, through: int,
                         make: Callable[[], dict[str, Any]]) -> None:
        """As :meth:`Store.save_state` of what ``make()`` gives, which is called in the
        thread (encoding a big state there, not in the event loop), after the writes
        asked for before."""
        await self._thread.call(self._save, tournament, through, make)

    def close(self) -> None:
        """Wait for the writes asked for, then release the connection."""
        self._thread.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
