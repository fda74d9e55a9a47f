"""A thread of its own, with its own connection to a store's database.

The referee's clocks run in the event loop; a store is synchronous, and a network
database's call (or a SQLite file locked by another process) can take far longer than a
move's time limit. A :class:`StoreThread` runs store calls in one thread, on a connection
opened there (:meth:`Store.reopen`: a connection belongs to the thread that opened it),
in the order they were asked for; the loop awaits each without blocking. The results'
writer (:mod:`arena.store.writer`) and a server's standings (:mod:`arena.server.boards`)
each have one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from arena.store.base import Store, StoreError, tries

T = TypeVar("T")


class StoreThread:
    """Calls on ``store``'s database from one thread of its own (``name`` names it)."""

    def __init__(self, store: Store, name: str, reconnect_window: float | None = None) -> None:
        """``reconnect_window``: how long its connection waits for a database server that
        went away (None: the store's own)."""
        self._source = store
        self._db: Store | None = None
        self._window = reconnect_window
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=name)

    def db(self) -> Store:
        """The thread's connection (opened at its first use, waiting for a database server
        that is away as a lost connection does). Only in the thread."""
        if self._db is None:
            # the first use may come as the server restarts: a tournament whose first
            # result met a restart stopped, where a later one was waited for
            for _ in tries(time.monotonic() + (self._window or 0.0)):
                try:
                    self._db = self._source.reopen()
                    break
                except StoreError as exc:
                    failure = exc
            else:
                raise failure
            if self._window is not None:
                self._db.reconnect_window = self._window
        return self._db

    def call(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """``fn(*args)`` in the thread, after what was asked before: a future to await."""
        return asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        """Wait for the calls asked for, then release the connection."""
        def release() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None
        self._pool.submit(release).result()
        self._pool.shutdown(wait=True)
