"""Standings of a server's tournaments and ladder, made off the event loop.

A tournament's standings read every stored match of it and fit the ratings over them
(:mod:`arena.tournament.ratings`): for a ladder of a few hundred bots and thousands of
matches that takes seconds, and done in the event loop it stalled every match the server
referees, with ``arena standings`` and ``arena bots list`` waiting on it (a 200-bot
ladder's fit took minutes before the fit used numpy, and the whole server stopped
meanwhile). A :class:`Boards` reads and fits in one thread of its own, on its own
connection to the database (:class:`arena.store.thread.StoreThread`), and keeps the last
board of each tournament until a match is added to it: asking again, or many organisers
asking at once, costs one fit. It reads each match once: what standings need of every
match read so far is kept (:class:`arena.tournament.standings.Results`: a count for each
outcome of a ladder's matches, so a ladder that runs for weeks holds no more than its
field's outcomes; a whole stored match is 2.4 KB, and a 200-bot ladder's server grew by
that much a match while every call read them all), and a call reads only the matches
stored since; a ladder's first read starts from its last snapshot
(:mod:`arena.server.ladder_state`).

Where a board a little behind will do (the ladder, which never ends, and the ratings
``arena bots list`` shows), the caller waits up to ``PATIENCE_S`` for a new one, then
takes the last one if it is under ``STALE_S`` old (the new one is made meanwhile for the
next caller): a ladder of hundreds of bots, whose fit takes longer, answers at once.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from arena.store.base import Store
from arena.store.thread import StoreThread
from arena.tournament.standings import Standings, Stored, ranked, standings_of

#: A board: the tournament's name, its standings, and how many matches they are over.
Board = tuple[str, Standings, int]

PATIENCE_S = 2.0     # how long a caller that a recent board will do waits for a new one
STALE_S = 60.0       # a board older than this is not given while a new one is made


@dataclass
class _Read:
    """What the boards keep of one tournament's stored matches."""

    stored: Stored                           # the matches read, as standings read them
    board: Board | None = None               # made of all of the above, for board_bots
    #: the field the board is of, and (on a ladder) the bots removed from the server
    board_bots: tuple[list[str], list[str] | None] = ([], None)
    made_at: float = 0.0                     # when the board was made, or found current


class Boards:
    """The standings of ``store``'s tournaments, read and fitted in a thread of its own."""

    def __init__(self, store: Store) -> None:
        self._thread = StoreThread(store, "standings")
        self._read_so_far: dict[str, _Read] = {}
        self._making: dict[str | None, asyncio.Future] = {}   # boards being made, by name asked

    def _read(self, name: str | None) -> Board:
        db = self._thread.db()
        record = db.tournament(name)
        read = self._read_so_far.get(record.name)
        if read is None:           # from a ladder's snapshot, if it has one
            read = self._read_so_far[record.name] = _Read(Stored.saved(db, record))
        stored = read.stored
        new = stored.read(db, record)
        bots = record.bots or sorted(stored.results.bots)
        # a ladder's field changes without a match: a bot removed is marked at once
        removed = db.removed_bots() if record.settings.get("ladder") else None
        if read.board is None or new or (bots, removed) != read.board_bots:
            board = ranked(standings_of(stored.results, bots), removed)
            read.board = (record.name, board, stored.matches)
            read.board_bots = (bots, removed)
        read.made_at = time.monotonic()
        return read.board

    async def board(self, name: str | None, fresh: bool = True) -> Board:
        """A tournament's standings (the latest tournament's without a name), awaited
        without blocking the event loop; :class:`StoreError` or :class:`ConfigError` as
        :meth:`Store.tournament` raises them. ``fresh=False``: a recent board will do
        (see the module's notes)."""
        if fresh:   # read now: a board being made may have been read before the last match
            return await self._thread.call(self._read, name)
        read = self._read_so_far.get(name) if name is not None else None
        last = None if read is None or read.board is None else (read.board, read.made_at)
        making = self._making.get(name)
        if making is None:
            making = self._making[name] = self._thread.call(self._read, name)
            making.add_done_callback(lambda _: self._making.pop(name, None))
        # shielded: a caller that goes away stops no other caller's board
        if last is None or time.monotonic() - last[1] > STALE_S:
            return await asyncio.shield(making)
        try:
            async with asyncio.timeout(PATIENCE_S):
                return await asyncio.shield(making)
        except TimeoutError:
            return last[0]

    def close(self) -> None:
        """Wait for the boards asked for, then release the connection."""
        self._thread.close()
