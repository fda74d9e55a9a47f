"""Played: a finished match as standings read it, kept by a server for every match of its
ladder for as long as it runs."""

from __future__ import annotations

import gc
import tracemalloc

from support.matches import store_ladder

from arena.store import open_store
from arena.tournament.standings import Played


def test_a_ladder_s_played_matches_share_what_repeats(tmp_path):
    """Read back from the store, each match's bot names, places and sample (its own key)
    were copies of their own: 447 bytes a match, twice over in a server (its live view and
    its standings boards each keep them). Shared: 194."""
    db = tmp_path / "arena.db"
    store_ladder(db, 40, 600)
    store = open_store(str(db))
    try:
        record = store.tournament("ladder")
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            played = [Played.of(m) for m in store.matches(record)]   # the records dropped
            gc.collect()
            per_match = (tracemalloc.get_traced_memory()[0] - before) / len(played)
        finally:
            tracemalloc.stop()
    finally:
        store.close()
    assert len(played) == 600
    assert per_match < 250, f"{per_match:.0f} bytes a match"
    assert played[0].sample is played[0].key
    assert len({p.places for p in played}) == len({id(p.places) for p in played}), \
        "two tuples of the same places"
    names = {}
    for p in played:
        for bot in p.bots:
            assert names.setdefault(bot, bot) is bot, "two copies of one bot's name"
