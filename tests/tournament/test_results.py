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


def test_a_bigger_table_s_outcomes_rarely_repeat_and_each_takes_a_quarter_of_a_match():
    """At 4 seats each ladder match is its own outcome; kept flat, with each bot's name once
    (every match read from the store brings its own copies of the names), an outcome takes
    about 140 bytes where the match it came from took 550."""
    rng = random.Random(10)
    played = [Played(f"L{k}", tuple("bot-%d" % b for b in rng.sample(range(200), 4)),
                     tuple(rng.sample([1, 2, 3, 4], 4)), f"L{k}") for k in range(5000)]
    results = Results(played)
    kept = _size(results)
    assert len(results.folded) == 5000
    assert kept < 200 * 5000, kept / 5000
