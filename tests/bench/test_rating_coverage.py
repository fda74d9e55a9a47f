"""The coverage measurement behind ``arena bench ratings --coverage``: its simulated
placings follow the fit's model, and it tells a right interval from a wrong one.

Small, seeded simulations (well under a second each); the bench runs the large ones.
"""

from __future__ import annotations

import itertools
import random

import pytest

from arena.bench.rating_coverage import BUCKETS, bucket_of, fit_bounds, measure, simulate


def p_beats(a: float, b: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((b - a) / 400.0))


@pytest.mark.parametrize("seats", [2, 4])
def test_simulated_orders_have_the_fits_pairwise_odds(seats):
    """Plackett-Luce orders: in every pair of seats, the better bot finishes ahead with
    Bradley-Terry's probability, at 2 seats and at 4."""
    truth = {"a": 400.0, "b": 100.0, "c": 0.0, "d": -300.0}
    ahead = {pair: [0, 0] for pair in itertools.permutations(truth, 2)}
    for p in simulate(random.Random(3), truth, seats, 6000):
        for s, t in itertools.permutations(range(seats), 2):
            cell = ahead[(p.bots[s], p.bots[t])]
            cell[1] += 1
            cell[0] += p.places[s] < p.places[t]
    for (a, b), (won, met) in ahead.items():
        assert won / met == pytest.approx(p_beats(truth[a], truth[b]), abs=0.03), (a, b)


def test_simulated_placings_are_whole_orders_with_a_sample_each():
    out = simulate(random.Random(1), {f"b{i}": 0.0 for i in range(6)}, 4, 50)
    assert len(out) == 50 and len({p.sample for p in out}) == 50
    for p in out:
        assert len(set(p.bots)) == 4 and sorted(p.places) == [1, 2, 3, 4]


def test_buckets_are_by_distance_from_the_mean_either_side():
    assert bucket_of(0.0) == 0 and bucket_of(-199.9) == 0
    assert bucket_of(200.0) == 1 and bucket_of(-450.0) == 2
    assert bucket_of(BUCKETS[-1]) == len(BUCKETS) == bucket_of(-5000.0)


def scaled(factor: float):
    """The fit's interval, made ``factor`` times as wide around its Elo."""
    def bounds(f, bot):
        low, high = fit_bounds(f, bot)
        elo = f.elo(bot)
        return elo - factor * (elo - low), elo + factor * (high - elo)
    return bounds


def test_an_interval_too_narrow_or_too_wide_is_caught():
    """The measure can fail: half-width intervals cover far less than 95%, doubled ones
    nearly always, on the same simulated fields."""
    narrow = measure(2, 100, fields=12, seed=4, bounds=scaled(0.5))
    own = measure(2, 100, fields=12, seed=4)
    wide = measure(2, 100, fields=12, seed=4, bounds=scaled(4.0))
    assert narrow.overall.total == own.overall.total == 72
    assert narrow.overall.rate < 0.8
    assert narrow.overall.rate < own.overall.rate - 0.1
    assert wide.overall.rate > 0.99
    # a miss is counted once, on one side
    assert 0 < narrow.overall.toward_mean <= narrow.overall.total - narrow.overall.covered


@pytest.mark.parametrize("seats, games", [(2, 10), (4, 30)])
def test_the_fits_intervals_cover_dominant_bots_with_few_matches(seats, games):
    """The loose end this measure was made for: with 10-30 matches a bot, bots 600+ Elo
    from the field's mean were covered 1-11% of the time by +-1.96 standard errors with a
    prior of two games; the profile-likelihood intervals cover them like every other bot.
    A small seeded run, so the band is loose (the bench measures 93-97%)."""
    row = measure(seats, games, fields=60, seed=7)
    dominant = row.cells[-1]
    assert dominant.total >= 30
    assert dominant.rate >= 0.85, (dominant.covered, dominant.total)
    assert 0.90 <= row.overall.rate <= 0.99, (row.overall.covered, row.overall.total)
