"""A tournament's schedule as data: every match it will play, with its seed and seating.

Round-robin for any table size K: every combination of K bots is a table, and every
table plays the same deals (common random numbers: deal d has the same seed at every
table). With duplicate deals each deal is played once per cyclic rotation of the seats,
so every bot holds every seat's cards of that deal; the K rotations form one *sample*
for the ratings. The bots' own randomness is then seeded by (deal, seat): whoever holds
a seat's cards also gets that seat's random stream, so two bots that decide alike play
the very same game, and only their differences move the result. Without duplicate deals
each match has its own deal, seats rotate from deal to deal, and each match is a sample.

A resume is "play what the store does not have yet": keys are stable for the same
settings.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from math import comb

from arena.rules.errors import ConfigError
from arena.rules.rulesets import MAX_SEATS, MIN_SEATS


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from the parts (stable across machines and Python versions)."""
    digest = hashlib.blake2b(":".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass(frozen=True)
class PlannedMatch:
    """One match of the schedule."""

    key: str                      # unique in the tournament, e.g. "t3-d12-r1"
    sample: str                   # the duplicate set it belongs to (or its own key)
    table: tuple[int, ...]        # the bots at the table (indices into the bot list)
    seats: tuple[int, ...]        # the bot at each seat
    deal: int
    rotation: int
    seed: int                     # the deal: the engine's seed
    bot_seeds: tuple[int, ...]    # one per seat, sent in the match start


@dataclass(frozen=True)
class ScheduleSize:
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
    tables = comb(n_bots, table_size)
    per_deal = table_size if duplicate else 1
    return ScheduleSize(n_bots, tables, deals, tables * deals * per_deal)


def build(n_bots: int, table_size: int, deals: int, duplicate: bool, seed: int,
          common_bot_seeds: bool = True) -> list[PlannedMatch]:
    """Every match, deal by deal (so every table advances evenly)."""
    check(n_bots, table_size, deals)
    tables = list(itertools.combinations(range(n_bots), table_size))
    plan = []
    for d in range(deals):
        deal_seed = derive_seed("deal", seed, d)
        for t, table in enumerate(tables):
            rotations = range(table_size) if duplicate else [d % table_size]
            for r in rotations:
                seats = tuple(table[(s + r) % table_size] for s in range(table_size))
                key = f"t{t}-d{d}-r{r}"
                if duplicate and common_bot_seeds:
                    bot_seeds = tuple(derive_seed("bot", seed, d, s) for s in range(table_size))
                else:
                    bot_seeds = tuple(derive_seed("bot", seed, key, s) for s in range(table_size))
                plan.append(PlannedMatch(key, f"t{t}-d{d}" if duplicate else key, table, seats,
                                         d, r, deal_seed, bot_seeds))
    return plan
