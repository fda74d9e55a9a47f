"""A tournament's schedule as data: every match it will play, with its seeds and seating.

Round-robin for any table size K: every combination of K bots is a table, and every
table plays N deals. With duplicate deals each deal is played once per cyclic rotation of
the seats, so every bot holds every seat's cards of that deal; the K rotations form one
*sample* for the ratings. The bots' own randomness is then seeded by (deal, seat):
whoever holds a seat's cards also gets that seat's random stream, so two bots that decide
alike play the very same game, and only their differences move the result. Without
duplicate deals each match has its own deal, seats rotate from deal to deal, and each
match is a sample. Whether a table plays duplicate deals is decided per table (a server
cannot restart a remote bot between rotations, so its tables play plain deals).

Integrity decides the rest. Seeds come from the run's secret (:mod:`arena.seeds`), and
a deal belongs to one table: were a deal shared by every table (common random numbers),
a bot would meet it again at its next table, knowing from the first match's end every
hand and the draws. The rotations of one deal are split into *phases* (one rotation of
every duplicate deal is a phase, rotation (p + t) mod K at table t in phase p) and no
bot process plays in two phases (the executors start fresh processes), so no process
meets a deal twice. The schedule runs phase after phase and, within a phase, deal by
deal, so every table advances evenly.

A resume is "play what the store does not have yet": keys are stable for the same
settings.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from math import comb

from arena.rules.errors import ConfigError
from arena.rules.rulesets import MAX_SEATS, MIN_SEATS
from arena.seeds import Seeds

#: Decides, for a table (its bots' indices), whether it plays duplicate deals.
DuplicatePolicy = Callable[[tuple[int, ...]], bool]


@dataclass(frozen=True)
class PlannedMatch:
    """One match of the schedule."""

    key: str                      # unique in the tournament, e.g. "t3-d12-r1"
    sample: str                   # the duplicate set it belongs to (or its own key)
    table: tuple[int, ...]        # the bots at the table (indices into the bot list)
    seats: tuple[int, ...]        # the bot at each seat
    deal: int
    rotation: int
    seed: int                     # the deal: the engine's seed (never sent to a bot)
    bot_seeds: tuple[int, ...]    # one per seat, sent in the match start
    phase: int = 0                # no bot process plays matches of two phases


@dataclass(frozen=True)
class ScheduleSize:
    """How big a tournament is: its bots, tables, deals per table and matches in all."""

    bots: int
    tables: int
    deals: int
    matches: int


def check(n_bots: int, table_size: int, deals: int) -> None:
    """Refuse impossible requests with a message that says why."""
    if n_bots < MIN_SEATS:
        raise ConfigError(f"a tournament needs at least {MIN_SEATS} bots, got {n_bots}")
    if not MIN_SEATS <= table_size <= MAX_SEATS:
        raise ConfigError(f"--table-size {table_size} is not allowed; tables seat "
                          f"{MIN_SEATS} to {MAX_SEATS}")
    if table_size > n_bots:
        raise ConfigError(f"--table-size {table_size} needs at least {table_size} bots, "
                          f"but {n_bots} were given")
    if deals < 1:
        raise ConfigError(f"--games {deals} is not allowed; every table plays at least one deal")


def size(n_bots: int, table_size: int, deals: int, duplicate: bool) -> ScheduleSize:
    """The size of a tournament's schedule, without building it."""
    tables = comb(n_bots, table_size)
    per_deal = table_size if duplicate else 1
    return ScheduleSize(n_bots, tables, deals, tables * deals * per_deal)


def build(n_bots: int, table_size: int, deals: int, duplicate: bool | DuplicatePolicy,
          seeds: Seeds, common_bot_seeds: bool = True, phases: bool = True) -> list[PlannedMatch]:
    """Every match, in the order to play them: phase by phase, deal by deal, table by table.

    ``duplicate`` is a bool for every table or a :data:`DuplicatePolicy`; ``phases``
    False puts every match in phase 0 (bot processes then carry their memory from one
    rotation of a deal to the next: for trusted bots only)."""
    check(n_bots, table_size, deals)
    tables = list(itertools.combinations(range(n_bots), table_size))
    policy = duplicate if callable(duplicate) else (lambda table, d=bool(duplicate): d)
    order = []
    for t, table in enumerate(tables):
        dup = policy(table)
        for d in range(deals):
            deal_seed = seeds.deal_seed(t, d)
            shared = (tuple(seeds.bot_seed(t, d, s) for s in range(table_size))
                      if dup and common_bot_seeds else None)
            for r in (range(table_size) if dup else [d % table_size]):
                seats = tuple(table[(s + r) % table_size] for s in range(table_size))
                key = f"t{t}-d{d}-r{r}"
                bot_seeds = shared or tuple(seeds.bot_seed(key, s) for s in range(table_size))
                # phase p plays rotation (p + t) mod K at table t: every phase has one
                # rotation of each deal, and across tables every bot sits in every seat
                # (so the provisional ratings of phase 0 are not all seat 0's advantage)
                phase = (r - t) % table_size if dup and phases else 0
                order.append(((phase, d, t, r), PlannedMatch(
                    key, f"t{t}-d{d}" if dup else key, table, seats, d, r, deal_seed,
                    bot_seeds, phase)))
    order.sort(key=lambda item: item[0])
    return [plan for _, plan in order]


def phases_of(plan: list[PlannedMatch]) -> int:
    """How many phases a plan has (each starts every bot afresh)."""
    return 1 + max((p.phase for p in plan), default=0)
