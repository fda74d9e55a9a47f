"""Matches for tests: a spec with the usual clock, played on a LocalArena with real bot
processes, and the check that a result's event record is a real game."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from pathlib import Path

from arena.local import LocalArena
from arena.referee.house import FirstLegal, HouseSession
from arena.referee.results import MatchSpec, TimeControl
from arena.referee.runner import MatchRunner
from arena.rules.events import decisions
from arena.rules.game import replay
from arena.rules.rulesets import make_config

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
_ids = itertools.count(1)

#: Every ruleset, with its scoring variants and options: (ruleset, options).
RULESETS = [
    ("modern", None),
    ("classic", None),
    ("classic", {"scoring": "points", "points_target": 60}),
    ("classic", {"ninety_nine_on_zero": True, "tokens": 1}),
    ("classic-set99", None),
    ("classic-set99", {"scoring": "points", "points_mode": "lowest", "points_target": 80}),
]


def spec(names, ruleset="modern", seed=1, options=None, move_ms=1000, bank_ms=10_000, **kw):
    return MatchSpec(f"t{next(_ids)}", make_config(ruleset, options, len(names)), seed,
                     tuple(names), TimeControl(move_ms, bank_ms), **kw)


def play(bot_dirs, specs_for, listeners=(), log_dir=None):
    """Start a LocalArena with ``bot_dirs`` (bots in the sandbox, as by default; their
    output in ``log_dir``), play the specs ``specs_for(labels)`` returns, return the results."""

    async def go():
        async with LocalArena.open(bot_dirs, log_dir=log_dir) as local:
            return [await local.play(s, listeners) for s in specs_for(local.labels)]

    return asyncio.run(go())


def replays(result) -> bool:
    """Whether the referee's event record is a real game: it replays from the seed with
    the decisions it records."""
    return replay(result.spec.config, result.spec.seed, decisions(result.events)).events == result.events


class _Stalled(HouseSession):
    """A house seat that never answers: its match stays live."""

    async def next_action(self, timeout):
        await asyncio.sleep(3600)


@contextlib.asynccontextmanager
async def live_match(hub, seed: int = 2):
    """A 2-seat match on ``hub`` that stays live (TV has it to show at once) until the
    block ends."""
    task = asyncio.create_task(MatchRunner(spec(["a", "b"], seed=seed),
                                           [_Stalled(FirstLegal()) for _ in "ab"],
                                           [hub.listener("")]).run())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def store_ladder(db: Path, bots: int, matches: int, first: int = 1) -> None:
    """Store in ``db`` a ladder of ``bots`` bots and ``matches`` 2-seat matches (keys from
    ``first``; the ladder made if it is not there), played by the referee's runner with
    house seats (first legal card, or the forcing card)."""
    from arena.referee.house import Forcer
    from arena.store import StoreError, open_store

    async def play() -> list:
        results = []
        for k in range(first, first + matches):
            a, b = k % bots, (k * 7 + 1 + k // bots) % bots
            b = (b + 1) % bots if a == b else b
            the_spec = spec((f"b{a}", f"b{b}"), seed=k)
            seats = [HouseSession(FirstLegal() if i % 3 else Forcer()) for i in (a, b)]
            results.append(await MatchRunner(the_spec, seats).run())
        return results

    store = open_store(str(db))
    try:
        try:
            record = store.tournament("ladder")
        except StoreError:
            record = store.create_tournament("ladder", {"ladder": True, "table_size": 2,
                                                        "seed": 1, "secret": True,
                                                        "bot_dirs": [], "bots": []}, [])
        for k, result in enumerate(asyncio.run(play()), first):
            store.record_match(record, f"L{k}", f"L{k}", list(result.spec.names), result)
    finally:
        store.close()


def grow_ladder(db: Path, copies: int) -> None:
    """Store ``db``'s ladder matches (and their events) again ``copies`` times, as new
    matches after them, each its own deal (its key for a sample), as a ladder's are."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        base = conn.execute("SELECT max(id) FROM matches").fetchone()[0]
        conn.execute("CREATE TEMP TABLE base AS SELECT * FROM matches")
        conn.execute("CREATE TEMP TABLE k AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
                     "SELECT n + 1 FROM r WHERE n < ?) SELECT n FROM r", (copies,))
        columns = ("tournament_id, match_uid, bots, seed, ruleset, options, status, ranking, "
                   "termination, verdicts, stats, started_at, duration_s, turns")
        conn.execute(f"INSERT INTO matches (id, key, sample, {columns}) SELECT "
                     f"b.id + {base} * k.n, 'L' || (b.id + {base} * k.n), "
                     f"'L' || (b.id + {base} * k.n), {columns} FROM base b, k ORDER BY k.n, b.id")
        conn.execute(f"INSERT INTO match_events SELECT e.match_id + {base} * k.n, e.encoding, "
                     "e.data FROM match_events e, k")
