"""``arena bench ratings --coverage``: do the standings' 95% intervals hold the truth 95% of
the time, for every strength and every amount of data?

The truth is only known in a simulation, so the placings are drawn from the model the fit
assumes: fields of bots with known Elo ratings (uniform in +-800, a new field for every
replication) play matches at tables of 2 or 4 bots drawn at random, each finishing order
drawn from Plackett-Luce with strengths 10^(Elo / 400). Plackett-Luce is the model of a
whole order whose pairwise marginals are exactly the fit's Bradley-Terry (the order is an
exponential race), so the pairs of a 4-seat match are as dependent as they would be in a
real one. Each match is its own sample (no duplicate deals: what duplicates change is the
variance, which the fit measures from the data).

Coverage is counted per bot: whether its 95% interval holds its true Elo relative to the
field's mean weighted by matches played (what the standings' Elo is relative to), by how
far the bot is from that mean (the buckets: a very dominant or dominated bot is 600+
away) and by the number of matches each bot played. Also measured: the time of one fit
with its intervals for 20 bots and 5,000 4-seat matches, what the live standings pay at
every refit.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.tournament.ratings import ELO_MEAN, ELO_SCALE, Fit, Placing, fit

BUCKETS = (200.0, 400.0, 600.0)      # edges of |true Elo - field mean|; the last is 600+
GAMES = (10, 30, 100, 300)           # matches per bot
SEATS = (2, 4)
FIELD_BOTS = 6
SPREAD = 800.0                       # true Elo uniform in +-SPREAD
TARGET = (0.93, 0.97)                # what a 95% interval must cover, in every cell

Bounds = Callable[[Fit, str], tuple[float, float]]


def fit_bounds(f: Fit, bot: str) -> tuple[float, float]:
    """The standings' 95% interval of ``bot``'s Elo: what coverage is measured of."""
    return f.bounds(bot)


def simulate(rng: random.Random, truth: dict[str, float], seats: int, matches: int,
             prefix: str = "m") -> list[Placing]:
    """``matches`` matches at tables of ``seats`` bots drawn at random from ``truth`` (true
    Elo by bot), each order drawn from Plackett-Luce: the bot with the earliest of
    exponential times of rate 10^(Elo/400) finishes first, and so on."""
    names = list(truth)
    rate = {b: math.exp(truth[b] / ELO_SCALE) for b in names}
    out = []
    for m in range(matches):
        table = rng.sample(names, seats)
        times = {b: rng.expovariate(rate[b]) for b in table}
        order = sorted(table, key=times.__getitem__)
        out.append(Placing(tuple(table), tuple(order.index(b) + 1 for b in table), f"{prefix}{m}"))
    return out


def bucket_of(distance: float) -> int:
    """The bucket of a bot ``distance`` Elo from its field's mean (either side)."""
    return next((k for k, edge in enumerate(BUCKETS) if abs(distance) < edge), len(BUCKETS))


def bucket_names() -> list[str]:
    edges = (0.0, *BUCKETS)
    return [f"{lo:.0f}-{hi:.0f}" for lo, hi in zip(edges, BUCKETS)] + [f"{BUCKETS[-1]:.0f}+"]


@dataclass
class Cell:
    """Intervals of one bucket: how many held the truth, and how the others missed."""

    covered: int = 0
    total: int = 0
    toward_mean: int = 0      # the interval lay between the truth and the mean: pulled in

    @property
    def rate(self) -> float:
        return self.covered / self.total if self.total else float("nan")

    def add(self, other: Cell) -> None:
        self.covered += other.covered
        self.total += other.total
        self.toward_mean += other.toward_mean


@dataclass
class Row:
    """Coverage at one table size and number of matches per bot, by bucket."""

    seats: int
    games: int
    cells: list[Cell] = field(default_factory=lambda: [Cell() for _ in range(len(BUCKETS) + 1)])
    seconds: float = 0.0

    @property
    def overall(self) -> Cell:
        total = Cell()
        for c in self.cells:
            total.add(c)
        return total


def measure(seats: int, games: int, fields: int, seed: int = 1, bots: int = FIELD_BOTS,
            spread: float = SPREAD, bounds: Bounds = fit_bounds) -> Row:
    """Coverage of ``bounds`` over ``fields`` simulated fields of ``bots`` bots, each bot
    playing about ``games`` matches at tables of ``seats``."""
    rng = random.Random(f"{seed}-{seats}-{games}")
    row = Row(seats, games)
    names = [f"bot{i}" for i in range(bots)]
    matches = max(1, round(games * bots / seats))
    t0 = time.perf_counter()
    for _ in range(fields):
        truth = {b: rng.uniform(-spread, spread) for b in names}
        f = fit(simulate(rng, truth, seats, matches), names)
        weights = f.mean or [1.0 / bots] * bots        # the Elo's mean: by matches played
        mean = sum(w * truth[b] for w, b in zip(weights, names))
        for bot in names:
            true_elo = ELO_MEAN + truth[bot] - mean
            low, high = bounds(f, bot)
            cell = row.cells[bucket_of(truth[bot] - mean)]
            cell.total += 1
            if low <= true_elo <= high:
                cell.covered += 1
            elif (true_elo > high) == (true_elo > ELO_MEAN):
                cell.toward_mean += 1
    row.seconds = time.perf_counter() - t0
    return row


def fit_seconds(bots: int = 20, matches: int = 5000, seats: int = 4, repeats: int = 3,
                seed: int = 5) -> float:
    """Best time of one fit with every bot's interval (what a standings refit costs)."""
    rng = random.Random(seed)
    truth = {f"bot{i:02d}": rng.uniform(-400, 400) for i in range(bots)}
    outcomes = simulate(rng, truth, seats, matches)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f = fit(outcomes, list(truth))
        for bot in truth:
            fit_bounds(f, bot)
        times.append(time.perf_counter() - t0)
    return min(times)


def run(console, fields: int = 1000, seed: int = 1, games: Sequence[int] = GAMES,
        seats: Sequence[int] = SEATS) -> list[Row]:
    from rich.table import Table

    rows = [measure(s, g, fields, seed) for s in seats for g in games]
    names = bucket_names()
    table = Table(title=f"ratings: coverage of 95% intervals by Elo from the field's mean; per "
                        f"row {fields} fields of {FIELD_BOTS} bots, true Elo uniform in "
                        f"+-{SPREAD:.0f}, each bot playing about that many matches")
    for col in ("seats", "matches", *names, "all", "misses pulled in", "seconds"):
        table.add_column(col, justify="right")
    for r in rows:
        misses = r.overall.total - r.overall.covered
        pulled_in = f"{r.overall.toward_mean / misses:.0%}" if misses else "-"
        table.add_row(str(r.seats), str(r.games), *(f"{c.rate:.1%}" for c in r.cells),
                      f"{r.overall.rate:.1%}", pulled_in, f"{r.seconds:.1f}")
    console.print(table)
    cells = [(c.rate, r, names[k]) for r in rows for k, c in enumerate(r.cells) if c.total]
    worst = max(cells, key=lambda x: abs(x[0] - 0.95))
    overall = Cell()
    for r in rows:
        overall.add(r.overall)
    inside = sum(TARGET[0] <= rate <= TARGET[1] for rate, _, _ in cells)
    seconds = fit_seconds()
    rate, row, bucket = worst
    console.print(f"ratings coverage: {overall.rate:.1%} overall, {inside}/{len(cells)} cells in "
                  f"{TARGET[0]:.0%}-{TARGET[1]:.0%}, farthest {rate:.1%} ({row.seats} seats, "
                  f"{row.games} matches/bot, {bucket} Elo); fit of 20 bots x 5,000 matches "
                  f"{seconds:.2f} s", highlight=False)
    return rows

