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
from dataclasses import dataclass, field

from arena.referee.results import Status
from arena.server.ladder_state import standings_part
from arena.store.base import Store, TournamentRecord, UnreadableStateError
from arena.store.thread import StoreThread
from arena.tournament.standings import Played, Results, Standings, standings_of

#: A board: the tournament's name, its standings, and how many matches they are over.
Board = tuple[str, Standings, int]

PATIENCE_S = 2.0     # how long a caller that a recent board will do waits for a new one
STALE_S = 60.0       # a board older than this is not given while a new one is made


@dataclass
class _Read:
    """What the boards keep of one tournament's stored matches."""

    last_id: int = 0                         # the last match read
    matches: int = 0                         # every match stored (finished or not)
    results: Results = field(default_factory=Results)   # the finished ones, as rated
    board: Board | None = None               # made of all of the above, for board_bots
    board_bots: list[str] = field(default_factory=list)
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
        if read is None:
            read = self._read_so_far[record.name] = self._first_read(db, record)
        last_id = read.last_id
        for m in db.iter_matches(record, after=last_id):   # a page at a time
            read.last_id = m.id
            read.matches += 1
            if m.status == Status.FINISHED and m.ranking:
                read.results.add(Played.of(m))
        bots = record.bots or sorted(read.results.bots)
        if read.board is None or read.last_id != last_id or bots != read.board_bots:
            read.board = (record.name, standings_of(read.results, bots), read.matches)
            read.board_bots = bots
        read.made_at = time.monotonic()
        return read.board

    @staticmethod
    def _first_read(db: Store, record: TournamentRecord) -> _Read:
        """Where a tournament's first read starts: from its saved snapshot's results (a
        ladder's: :mod:`arena.server.ladder_state`), if it has one that can be used, and
        the matches stored since; else from its first match."""
        try:
            saved = db.state(record)
            part = None if saved is None else standings_part(saved.data)
        except (UnreadableStateError, ValueError, KeyError, TypeError):
            return _Read()                     # the ladder says so in the log, as it starts
        if part is None:
            return _Read()
        matches, results = part
        return _Read(last_id=saved.through, matches=matches, results=results)

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
