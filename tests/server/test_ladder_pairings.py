"""The ladder's pairings: every two bots meet about as often as any other two, whatever
the number of tables and the rest. The real Ladder picks its tables over its real state,
on a clock of the test's: matches of known strengths end in a seeded order, as
:meth:`Ladder.run` and :meth:`Ladder._match` seat and free them.

Before 2026-12-06 the ladder seated only the bots free at that instant, and bots came
free in the groups they had just played in: 4 bots at 2 tables met in two fixed pairs
(3.1 times an even share each, 4 of the 6 pairs never), and 6 bots resting 0.3 s met in
3 of their 15 pairs (5 times an even share)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
from collections import Counter

import pytest

from arena.bots.sandbox import SandboxConfig
from arena.referee.lobby import Lobby
from arena.server.ladder import HOLD_S, NAME, Ladder
from arena.server.registry import Registry
from arena.store.sqlite import SQLiteStore

MATCHES = 300


def _field(store: SQLiteStore, tmp_path, n: int) -> Registry:
    """A server's registry of ``n`` hosted bots (b0, b1, ...), as the ladder asks it to
    pick: a hosted bot is ready whenever it is not playing (none is launched here)."""
    for i in range(n):
        store.register_bot(f"b{i}", "hosted", folder=str(tmp_path / f"b{i}"))
    return Registry(store, Lobby(), tmp_path / "data", SandboxConfig())


def _meetings(tmp_path, bots: int, concurrency: int, rest: float) -> Counter:
    """How often each two of ``bots`` bots 200 Elo apart met in the first MATCHES matches
    of a ladder of ``concurrency`` tables whose bots rest ``rest`` seconds after each
    match; matches last 20 to 60 ms."""
    store = SQLiteStore(tmp_path / "ladder.db")
    store.create_tournament(NAME, {"ladder": True, "table_size": 2, "seed": 19,
                                   "secret": True, "bot_dirs": [], "bots": []}, [])
    now = 0.0
    field = _field(store, tmp_path, bots)
    strength = {b.display: 200.0 * i for i, b in enumerate(field.active())}
    rng = random.Random(7)
    met: Counter[frozenset[str]] = Counter()

    async def play() -> None:
        nonlocal now
        ladder = Ladder(store, field, None, concurrency=concurrency, rest=rest,
                        clock=lambda: now)
        ending: list[tuple[float, int, list[str]]] = []
        order = itertools.count()
        played = 0
        while played < MATCHES:
            while len(ending) < concurrency:          # as run seats them
                table = ladder.pick()
                if table is None:
                    break
                names = [b.display for b in table]
                ladder.playing.update(names)
                heapq.heappush(ending, (now + rng.uniform(0.02, 0.06), next(order), names))
            if not ending:      # all resting, or a table held: the ladder looks again
                now = min([t for t in ladder.benched.values() if t > now] or [now + 0.5])
                continue
            now, _, names = heapq.heappop(ending)
            a, b = names
            won = rng.random() < 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
            played += 1
            ladder.state.add(played, f"L{played}", names, [1, 2] if won else [2, 1])
            met[frozenset(names)] += 1
            ladder._ended(names, True)
        ladder.writer.close()

    try:
        asyncio.run(play())
    finally:
        store.close()
    return met


@pytest.mark.parametrize("rest", [0.0, 0.3])
@pytest.mark.parametrize("concurrency", [1, 2])
@pytest.mark.parametrize("bots", [4, 6])
def test_no_two_bots_meet_more_than_twice_their_share(tmp_path, bots, concurrency, rest):
    met = _meetings(tmp_path, bots, concurrency, rest)
    pairs = bots * (bots - 1) // 2
    even = MATCHES / pairs
    assert len(met) == pairs, f"pairs that never met: {sorted(map(sorted, met))}"
    worst, n = met.most_common(1)[0]
    assert n <= 2 * even, f"{sorted(worst)} met {n} times in {MATCHES} ({even:.0f} is even)"


def test_a_table_waits_for_a_bot_about_to_come_free_for_hold_s_at_most(tmp_path):
    """b0 and b1 met in every match they played; b2 and b3 are at a table. The two free
    bots wait for them, not for ever: a long match would keep them idle as long."""
    store = SQLiteStore(tmp_path / "ladder.db")
    now = 0.0

    async def picks() -> list:
        nonlocal now
        ladder = Ladder(store, _field(store, tmp_path, 4), None, concurrency=2,
                        clock=lambda: now)
        for n in range(1, 5):
            ladder.state.add(n, f"L{n}", ["b0", "b1"], [1, 2])
        ladder.state.add(5, "L5", ["b2", "b3"], [1, 2])
        ladder.playing.update({"b2", "b3"})
        seated = []
        for at in (0.0, HOLD_S - 0.1, HOLD_S):
            now = at
            table = ladder.pick()
            seated.append(None if table is None else sorted(b.display for b in table))
        ladder.writer.close()
        return seated

    try:
        assert asyncio.run(picks()) == [None, None, ["b0", "b1"]]
    finally:
        store.close()
