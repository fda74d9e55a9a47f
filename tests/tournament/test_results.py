"""What standings keep of finished matches (``Results``): a count for each outcome of the
matches that are samples of their own, so a ladder that runs for weeks holds no more than
its field's outcomes; the same standings as the matches one by one, and the same to the
last bit in whatever order they came."""

from __future__ import annotations

import gc
import random
import sys
import types

from arena.tournament.ratings import Placing, fit
from arena.tournament.standings import Played, Results, crosstable, standings_of
from arena.watch.hub import TournamentLog


def _ladder(n_bots: int, matches: int, seed: int, first: int = 0) -> list[Played]:
    """2-seat ladder matches, each its own sample, a draw now and then."""
    rng = random.Random(seed)
    out = []
    for k in range(first, first + matches):
        a, b = rng.sample(range(n_bots), 2)
        places = rng.choice([(1, 2), (1, 2), (2, 1), (1, 1)]) if a < b else rng.choice([(1, 2), (2, 1)])
        out.append(Played(f"L{k}", (f"b{a}", f"b{b}"), places, f"L{k}"))
    return out


def _cup(n_bots: int, sets: int, seed: int) -> list[Played]:
    """4-seat matches in duplicate sets of 4 (one sample each), with a fault now and then."""
    rng = random.Random(seed)
    out = []
    for d in range(sets):
        table = [f"b{i}" for i in rng.sample(range(n_bots), 4)]
        for r in range(4):
            seated = tuple(table[r:] + table[:r])
            order = rng.sample([1, 2, 3, 4], 4)
            verdicts = ((0, "timeout"),) if rng.random() < 0.1 else ()
            out.append(Played(f"d{d}-r{r}", seated, tuple(order), f"d{d}", verdicts))
    return out


def _size(obj: object) -> int:
    """Bytes of ``obj`` and of everything it holds, each object once (tracemalloc would
    count the interpreter's free lists and the test runner's threads too)."""
    seen, stack, total = set(), [obj], 0
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        stack.extend(gc.get_referents(o))
    return total


def test_a_ladder_s_results_hold_a_count_for_each_outcome_however_long_it_runs():
    """A TournamentLog (the live view of a server's ladder) kept every match: up to 410
    bytes each, and with the Boards' copy up to 4 GB a day at 60 matches a second."""
    log = TournamentLog("ladder", [], 0, _ladder(10, 2000, seed=1))
    before = _size(log)
    for p in _ladder(10, 20_000, seed=2, first=2000):
        log.result(p)
    grown = _size(log) - before
    assert log.done == 22_000
    assert len(log.results.folded) <= 3 * 45 and not log.results.sets
    assert grown < 100_000, grown          # a list of the matches alone grew by 160,000


def test_folded_outcomes_fit_as_the_matches_one_by_one():
    played = _ladder(12, 3000, seed=3) + _cup(12, 60, seed=4)
    results = Results(played)
    assert results.matches == len(played)
    assert len(results.folded) < 3000 // 5          # a ladder's outcomes repeat
    one_by_one = fit([Placing(p.bots, p.places, p.sample) for p in played])
    folded = fit(results.placings())
    assert folded.samples == one_by_one.samples == 3000 + 60
    for bot in one_by_one.bots:
        assert abs(folded.elo(bot) - one_by_one.elo(bot)) < 1e-6
        for a, b in zip(folded.bounds(bot), one_by_one.bounds(bot)):
            assert abs(a - b) < 1e-6
    bots = [f"b{i}" for i in range(12)]
    cells = crosstable(results, bots)
    assert cells == crosstable(played, bots)
    assert sum(c.ahead + c.behind + c.level for row in cells.values() for c in row.values()) \
        == 2 * (3000 + 60 * 4 * 6)


def test_the_same_matches_in_any_order_give_the_same_standings_to_the_bit():
    """A server that restarts reads its ladder back from the store, in the store's order;
    its live view had them in the order they ended."""
    played = _ladder(8, 800, seed=5) + _cup(8, 30, seed=6)
    bots = [f"b{i}" for i in range(8)]
    boards = []
    for seed in range(3):
        order = played[:]
        random.Random(seed).shuffle(order)
        board = standings_of(order, bots)
        boards.append([(l.bot, l.elo, l.low, l.high, l.matches, l.wins, l.place_total,
                        dict(l.faults)) for l in board.lines])
    assert boards[0] == boards[1] == boards[2]
    assert sum(line[4] for line in boards[0]) == 2 * 800 + 4 * 4 * 30
    assert sum(sum(line[7].values()) for line in boards[0]) > 0


def test_a_copy_is_left_alone_by_later_matches():
    results = Results(_ladder(5, 100, seed=7))
    copy = results.copy()
    for p in _ladder(5, 50, seed=8, first=100) + _cup(5, 2, seed=9):
        results.add(p)
    assert copy.matches == 100 and results.matches == 158
    assert sum(copy.folded.values()) == 100 and not copy.sets
    assert sum(line.matches for line in copy.lines.values()) == 200


def _board(results: Results, bots: list[str]) -> list[tuple]:
    board = standings_of(results, bots)
    return [(l.bot, l.elo, l.low, l.high, l.matches, l.wins, l.place_total, dict(l.faults))
            for l in board.lines]


def test_results_read_back_from_their_state_give_the_same_standings_to_the_bit():
    """A ladder's snapshot keeps its results as plain data (JSON): read back, they give
    the same standings, and so do the same matches added to both; a share kept (halved)
    stays the same share, and duplicate sets stay sets."""
    import json

    bots = [f"b{i}" for i in range(12)]
    results = Results(_table_ladder(12, 1500, seed=21) + _ladder(12, 400, seed=22)
                      + _cup(12, 20, seed=23), keep=300)
    assert results.halvings > 0 and results.sets
    back = Results.from_state(json.loads(json.dumps(results.to_state())))
    assert back.to_state() == results.to_state()
    assert _board(back, bots) == _board(results, bots)
    more = _table_ladder(12, 300, seed=24, first=1500) + _cup(12, 3, seed=25)
    for p in more:
        results.add(p)
        back.add(p)
    assert back.to_state() == results.to_state() and _board(back, bots) == _board(results, bots)
    assert [k for k in crosstable(back, bots)["b3"].items()] == \
        [k for k in crosstable(results, bots)["b3"].items()]
    empty = Results.from_state(json.loads(json.dumps(Results().to_state())))
    assert empty.matches == 0 and not empty.lines and not empty.tally.tables


def _table_ladder(n_bots: int, matches: int, seed: int, first: int = 0) -> list[Played]:
    """4-seat ladder matches among bots of spread strengths, each its own sample: bot i
    is i * 20 Elo above bot 0, its places drawn by a Plackett-Luce order."""
    rng = random.Random(seed)
    out = []
    for k in range(first, first + matches):
        seated = rng.sample(range(n_bots), 4)
        order, left = [], seated[:]
        while left:
            weights = [10 ** (b * 20 / 400) for b in left]
            pick = rng.choices(left, weights)[0]
            order.append(pick)
            left.remove(pick)
        out.append(Played(f"T{k}", tuple(f"b{b}" for b in seated),
                          tuple(order.index(b) + 1 for b in seated), f"T{k}"))
    return out


def test_a_bigger_table_s_ladder_holds_a_bounded_share_of_its_outcomes():
    """At 4 seats outcomes rarely repeat: each match was kept (about 140 bytes), so a
    ladder's memory grew for as long as it ran. Past ``keep`` outcomes only a share is
    kept for the intervals; the sums the ratings read are every match's."""
    results = Results(_table_ladder(40, 10_000, seed=11), keep=2000)
    assert len(results.folded) <= 2000 and results.halvings >= 2
    before = _size(results)
    for p in _table_ladder(40, 10_000, seed=12, first=10_000):
        results.add(p)
    assert results.matches == 20_000 and results.tally.samples == 20_000
    assert len(results.folded) <= 2000 and results.halvings >= 3
    grown = _size(results) - before
    assert grown < 20_000, grown      # each match kept: 10,000 more outcomes, 1.4 MB


def test_a_ladder_s_retired_versions_cost_only_the_pairs_they_met():
    """Every version a ladder has seen stays in its standings, but meets only the field of
    its time: 1,000 names, 40 of them playing at a time. An n-by-n matrix of counts for
    the sums would take 16 MB; a count for each two bots that met takes 1.6 MB."""
    rng = random.Random(15)
    results = Results()
    for k in range(20_000):
        low = k * 960 // 20_000
        seated = rng.sample(range(low, low + 40), 4)
        results.add(Played(f"V{k}", tuple(f"b{b}" for b in seated),
                           tuple(rng.sample([1, 2, 3, 4], 4)), f"V{k}"))
    assert len(results.bots) > 990
    assert _size(results.tally) < 3_000_000, _size(results.tally)


def test_a_share_of_the_outcomes_rates_as_all_of_them():
    """The estimate reads every match's sums; the intervals, a share of the outcomes (an
    unbiased sample of the spread): they stay within a few Elo of those from every one."""
    played = _table_ladder(30, 12_000, seed=13)
    bots = [f"b{i}" for i in range(30)]
    every = standings_of(Results(played), bots)
    share = Results(played, keep=3000)
    assert share.halvings >= 2
    some = standings_of(share, bots)
    assert every.fit.samples == some.fit.samples == 12_000
    assert abs(some.fit.design - every.fit.design) < 0.05 * every.fit.design
    widths = []
    for a, b in zip(sorted(every.lines, key=lambda l: l.bot), sorted(some.lines, key=lambda l: l.bot)):
        assert (a.bot, a.matches, a.wins, a.place_total) == (b.bot, b.matches, b.wins, b.place_total)
        assert abs(a.elo - b.elo) < 1.0
        assert abs((a.high - a.low) - (b.high - b.low)) < 0.1 * (a.high - a.low)
        widths.append(a.high - a.low)
    assert 20 < min(widths) and max(widths) < 80     # ratings measured, not the prior's
    elo = {l.bot: l.elo for l in every.lines}
    assert elo["b29"] - elo["b0"] > 400               # 29 x 20 Elo apart, as drawn
    cells = crosstable(share, bots)
    assert cells == crosstable(played, bots)
    assert cells["b29"]["b0"].ahead > cells["b29"]["b0"].behind


def test_which_share_is_kept_does_not_depend_on_the_order_the_matches_came_in():
    played = _table_ladder(12, 3000, seed=14)
    bots = [f"b{i}" for i in range(12)]
    boards = []
    for seed in range(3):
        order = played[:]
        random.Random(seed).shuffle(order)
        results = Results(order, keep=300)
        assert results.halvings >= 2
        board = standings_of(results, bots)
        boards.append((sorted(results.folded.items()),
                       [(l.bot, l.elo, l.low, l.high, l.matches) for l in board.lines]))
    assert boards[0] == boards[1] == boards[2]


def test_a_win_is_a_sole_first_place_a_shared_first_is_no_bots_win():
    """A bot's wins count the matches it finished first alone: a first place shared
    (a tie for the lead) is a win for nobody, as the standings' "wins" column says to
    whoever reads it (a tie is half a point in the fit, not a win each). (Mutation
    review: ``len(firsts) == 1`` changed to ``>= 1``, a shared first then a win for
    the first seat sharing it, and nothing failed.)"""
    played = [Played("m0", ("a", "b"), (1, 2), "m0"),
              Played("m1", ("a", "b"), (1, 1), "m1"),               # level: no win
              Played("m2", ("a", "b", "c"), (1, 1, 3), "m2"),       # a and b share first
              Played("m3", ("c", "a", "b"), (1, 2, 2), "m3")]
    lines = {line.bot: line for line in standings_of(Results(played), ["a", "b", "c"]).lines}
    assert {bot: line.wins for bot, line in lines.items()} == {"a": 1, "b": 0, "c": 1}
    assert {bot: line.matches for bot, line in lines.items()} == {"a": 4, "b": 4, "c": 2}
