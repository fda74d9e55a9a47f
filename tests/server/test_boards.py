"""A server's standings boards (arena/server/boards.py), on a real SQLite file: made in a
thread of their own, a tournament's always over every stored match, a ladder's a little
behind at most, a fit made once for as long as no match is added, and each match read
once: the same standings as from every match read at once."""

from __future__ import annotations

import asyncio

from support.matches import store_ladder

from arena.server import boards as boards_module
from arena.server.boards import Boards
from arena.store import open_store
from arena.tournament.standings import ladder_order, standings


def test_a_ladder_s_board_a_little_behind_is_given_while_the_next_is_made(tmp_path, monkeypatch):
    db = tmp_path / "ladder.db"
    store_ladder(db, 12, 40)
    store = open_store(str(db))
    boards = Boards(store)
    fits = []
    real = boards_module.standings_of
    monkeypatch.setattr(boards_module, "standings_of", lambda *a: fits.append(1) or real(*a))

    async def go():
        assert (await boards.board("ladder", fresh=False))[2] == 40   # none yet: waited for
        assert (await boards.board("ladder"))[2] == 40 and len(fits) == 1   # no new match: no fit
        await asyncio.to_thread(store_ladder, db, 12, 5, 41)
        monkeypatch.setattr(boards_module, "PATIENCE_S", 0.0)
        name, board, matches = await boards.board("ladder", fresh=False)
        assert (name, matches) == ("ladder", 40)                # the last, at once
        assert (await boards.board("ladder"))[2] == 45          # fresh: over every match
        await asyncio.to_thread(store_ladder, db, 12, 5, 46)
        monkeypatch.setattr(boards_module, "STALE_S", 0.0)
        assert (await boards.board("ladder", fresh=False))[2] == 50   # too old to give
        made = (await boards.board("ladder"))[1]
        record = store.tournament("ladder")
        matches = store.matches(record)
        whole = ladder_order(standings(matches, sorted({b for m in matches for b in m.bots})))
        assert made.to_dict() == whole.to_dict()                # read by parts, fitted alike

    try:
        asyncio.run(go())
    finally:
        boards.close()
        store.close()
    assert len(fits) == 3
