"""The schedule as data: sizes, tables, duplicate rotations, phases, seeds, keys and refusals."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter, defaultdict
from math import comb

import pytest

from arena.rules.errors import ConfigError
from arena.seeds import Seeds
from arena.tournament.schedule import build, check, phases_of, size

# (bots, table size, deals, duplicate)
SETUPS = [
    (2, 2, 1, False), (2, 2, 5, True), (3, 2, 4, True), (4, 2, 3, False), (4, 3, 2, True),
    (5, 3, 4, False), (5, 4, 2, True), (6, 6, 3, True), (8, 8, 2, True), (9, 8, 1, False),
]


@pytest.mark.parametrize("bots, k, deals, duplicate, tables, matches", [
    (2, 2, 1, False, 1, 1),
    (2, 2, 10, True, 1, 20),
    (4, 2, 10, True, 6, 120),
    (4, 2, 10, False, 6, 60),
    (5, 3, 4, False, 10, 40),
    (5, 3, 4, True, 10, 120),
    (8, 8, 3, True, 1, 24),
    (10, 4, 2, True, 210, 1680),
])
def test_size_counts_tables_and_matches(bots, k, deals, duplicate, tables, matches):
    s = size(bots, k, deals, duplicate)
    assert (s.bots, s.tables, s.deals, s.matches) == (bots, tables, deals, matches)


@pytest.mark.parametrize("bots, k, deals, duplicate", SETUPS)
def test_every_table_is_a_k_combination_played_deals_times_k_or_deals(bots, k, deals, duplicate):
    plan = build(bots, k, deals, duplicate, Seeds(3))
    assert len(plan) == size(bots, k, deals, duplicate).matches
    per_table = Counter(p.table for p in plan)
    assert set(per_table) == set(itertools.combinations(range(bots), k))
    assert len(per_table) == comb(bots, k)
    assert set(per_table.values()) == {deals * k if duplicate else deals}
    for p in plan:
        assert sorted(p.seats) == list(p.table)           # the table's bots, each once
        assert len(p.bot_seeds) == k
    # phase by phase, and deal by deal within a phase: every table advances evenly
    assert [(p.phase, p.deal) for p in plan] == sorted((p.phase, p.deal) for p in plan)


@pytest.mark.parametrize("bots, k, deals", [(3, 2, 3), (4, 3, 2), (5, 4, 2), (8, 8, 2)])
def test_duplicate_plays_each_deal_once_per_rotation_with_every_bot_in_every_seat(bots, k, deals):
    plan = build(bots, k, deals, True, Seeds(9))
    by_set = defaultdict(list)
    for p in plan:
        by_set[(p.table, p.deal)].append(p)
    assert len(by_set) == comb(bots, k) * deals
    for (table, deal), matches in by_set.items():
        assert sorted(p.rotation for p in matches) == list(range(k))
        assert len({p.seats for p in matches}) == k
        for seat in range(k):
            assert sorted(p.seats[seat] for p in matches) == list(table)   # each bot once per seat
        assert len({p.seed for p in matches}) == 1                        # the same cards
        assert len({p.sample for p in matches}) == 1                      # one sample
    # different sets are different samples
    assert len({p.sample for p in plan}) == len(by_set)


@pytest.mark.parametrize("duplicate", [True, False])
def test_a_deal_belongs_to_one_table_and_every_deal_differs(duplicate):
    # a deal shared by tables would be met again by a bot at its next table, with every
    # hand known from the first match's end
    plan = build(5, 3, 6, duplicate, Seeds(11))
    seeds = defaultdict(set)
    for p in plan:
        seeds[(p.table, p.deal)].add(p.seed)
    assert all(len(s) == 1 for s in seeds.values())
    assert len({next(iter(s)) for s in seeds.values()}) == len(seeds) == comb(5, 3) * 6
    assert all(0 <= p.seed < 2**63 for p in plan)
    # another master changes every deal
    other = {(p.table, p.deal): p.seed for p in build(5, 3, 6, duplicate, Seeds(12))}
    assert all(other[k] not in seeds[k] for k in seeds)


@pytest.mark.parametrize("bots, k, deals, duplicate", SETUPS)
def test_keys_are_unique_and_stable_across_calls(bots, k, deals, duplicate):
    plan = build(bots, k, deals, duplicate, Seeds(5))
    assert len({p.key for p in plan}) == len(plan)
    assert build(bots, k, deals, duplicate, Seeds(5)) == plan
    # the keys do not depend on the seed: a resume finds its matches by key
    assert [p.key for p in build(bots, k, deals, duplicate, Seeds(6))] == [p.key for p in plan]
    if not duplicate:
        assert all(p.sample == p.key for p in plan)


def test_keys_name_table_deal_and_rotation_in_phase_order():
    plan = build(3, 2, 2, True, Seeds(1))
    # phase p plays rotation (p + t) mod 2 at table t
    assert [p.key for p in plan] == [
        "t0-d0-r0", "t1-d0-r1", "t2-d0-r0", "t0-d1-r0", "t1-d1-r1", "t2-d1-r0",   # phase 0
        "t0-d0-r1", "t1-d0-r0", "t2-d0-r1", "t0-d1-r1", "t1-d1-r0", "t2-d1-r1"]   # phase 1
    assert [p.phase for p in plan] == [0] * 6 + [1] * 6
    assert plan[0].sample == plan[6].sample == "t0-d0"
    # without phases: deal by deal, each duplicate set together, as one phase
    plain = build(3, 2, 2, True, Seeds(1), phases=False)
    assert [p.key for p in plain[:6]] == ["t0-d0-r0", "t0-d0-r1", "t1-d0-r0", "t1-d0-r1",
                                          "t2-d0-r0", "t2-d0-r1"]
    assert {p.phase for p in plain} == {0} and phases_of(plain) == 1
    assert sorted(plain, key=lambda p: p.key) == sorted(
        (dataclasses.replace(p, phase=0) for p in plan), key=lambda p: p.key)


@pytest.mark.parametrize("bots, k, deals, duplicate", SETUPS)
def test_no_bot_meets_a_deal_twice_in_one_phase(bots, k, deals, duplicate):
    # the integrity property the executors rely on: a process lives in one phase, so
    # no process meets a deal twice
    plan = build(bots, k, deals, duplicate, Seeds(4))
    seen = Counter((bot, p.phase, p.seed) for p in plan for bot in p.seats)
    assert max(seen.values()) == 1
    assert phases_of(plan) == (k if duplicate else 1)
    tables = sorted({p.table for p in plan})
    if duplicate:
        assert all(p.rotation == (p.phase + tables.index(p.table)) % k for p in plan)
    else:
        assert all(p.phase == 0 for p in plan)


def test_in_each_phase_every_bot_sits_first_at_some_of_its_tables():
    # so that provisional standings in the first phase are not seat 0's advantage
    plan = build(5, 2, 1, True, Seeds(3))
    for phase in (0, 1):
        first = Counter(p.seats[0] for p in plan if p.phase == phase)
        assert set(first) == set(range(5)), first


def test_a_policy_decides_duplicate_deals_per_table():
    # e.g. a server: tables with a bot it cannot restart play plain deals
    remote = {1}
    plan = build(4, 2, 3, lambda table: not remote & set(table), Seeds(8))
    for table in itertools.combinations(range(4), 2):
        matches = [p for p in plan if p.table == table]
        if remote & set(table):
            assert len(matches) == 3 and all(p.sample == p.key and p.phase == 0 for p in matches)
        else:
            assert len(matches) == 6 and {p.phase for p in matches} == {0, 1}
    assert [p.phase for p in plan] == sorted(p.phase for p in plan)


def test_duplicate_bot_seeds_depend_only_on_the_deal_and_seat():
    plan = build(5, 3, 4, True, Seeds(21))
    by_deal = defaultdict(set)
    for p in plan:
        by_deal[(p.table, p.deal)].add(p.bot_seeds)
    for deal, seeds in by_deal.items():
        assert len(seeds) == 1, deal                      # every rotation
        [bot_seeds] = seeds
        assert len(set(bot_seeds)) == 3                   # seats differ
        assert all(0 <= s < 2**63 for s in bot_seeds)
    assert len({next(iter(s)) for s in by_deal.values()}) == len(by_deal)   # deals differ
    # whoever holds a seat gets that seat's random stream
    holders = defaultdict(set)
    for p in plan:
        for seat, bot in enumerate(p.seats):
            holders[(p.table, p.deal, p.bot_seeds[seat])].add(seat)
    assert all(len(seats) == 1 for seats in holders.values())
    # and no bot seed is a deal seed
    assert not {p.seed for p in plan} & {s for p in plan for s in p.bot_seeds}


@pytest.mark.parametrize("duplicate, common", [(True, False), (False, True), (False, False)])
def test_bot_seeds_are_per_match_without_common_duplicate_seeds(duplicate, common):
    plan = build(4, 2, 3, duplicate, Seeds(21), common_bot_seeds=common)
    all_seeds = [s for p in plan for s in p.bot_seeds]
    assert len(set(all_seeds)) == len(all_seeds)


def test_plain_mode_rotates_the_seats_with_the_deal_index():
    k = 3
    plan = build(4, k, 7, False, Seeds(2))
    for p in plan:
        assert p.rotation == p.deal % k
        assert p.seats == tuple(p.table[(s + p.deal) % k] for s in range(k))
    # over K consecutive deals every bot of a table sits in every seat once
    for table in itertools.combinations(range(4), k):
        first = [p for p in plan if p.table == table and p.deal < k]
        for seat in range(k):
            assert sorted(p.seats[seat] for p in first) == list(table)


@pytest.mark.parametrize("bots, k, deals, words", [
    (1, 2, 1, ["at least 2 bots", "got 1"]),
    (0, 2, 1, ["at least 2 bots", "got 0"]),
    (4, 1, 1, ["--table-size 1", "2 to 8"]),
    (10, 9, 1, ["--table-size 9", "2 to 8"]),
    (3, 4, 1, ["--table-size 4", "at least 4 bots", "3 were given"]),
    (4, 2, 0, ["--games 0", "at least one deal"]),
    (4, 2, -3, ["--games -3"]),
])
def test_impossible_schedules_are_refused_naming_the_problem(bots, k, deals, words):
    for call in (lambda: check(bots, k, deals), lambda: build(bots, k, deals, True, Seeds(1))):
        with pytest.raises(ConfigError) as err:
            call()
        for word in words:
            assert word in str(err.value)


@pytest.mark.parametrize("bots, k, deals, duplicate", SETUPS)
def test_possible_schedules_pass_the_check_and_build_in_full(bots, k, deals, duplicate):
    assert check(bots, k, deals) is None
    assert len(build(bots, k, deals, duplicate, Seeds(2))) == size(bots, k, deals, duplicate).matches
