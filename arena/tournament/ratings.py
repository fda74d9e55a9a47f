"""Ratings from finishing orders: a batch Bradley-Terry fit with 95% intervals and
likelihood of superiority, and a provisional online Elo for live display.

Model. Each match's finishing order implies pairwise results: for two seats, the better
place scores 1, a shared place 0.5 each. A K-seat match gives K(K-1)/2 pairs; each is
weighted 1/(K-1), so every bot's pairs in one match weigh 1 in all. Bradley-Terry:
P(i beats j) = g_i / (g_i + g_j). We fit pairs rather than a Plackett-Luce model of the
whole order because ties (shared places, draws by the play limit) are natural as half
points in pairs and awkward in Plackett-Luce, and because the pairs fit the 2-seat and
the 8-seat case with one formula.

Fit. Hunter's MM algorithm (Hunter 2004, "MM algorithms for generalized Bradley-Terry
models", eq. 3): g_i <- W_i / sum_j N_ij / (g_i + g_j), with W_i the weighted score of i
and N_ij the weighted number of pairs of i and j. A small prior keeps ratings finite
for a bot that always wins or always loses: every bot gets ``prior`` virtual games,
drawn, against an anchor of strength 1 (as BayesElo's virtual draws do).

Intervals. The fit treats pairs as independent; they are not (pairs of one match share
its deal; the rotations of one duplicate deal share their cards on purpose, which is what
cancels luck). So the covariance is the cluster-robust sandwich H^-1 M H^-1, clustered by
*sample* (a duplicate set, or one match when deals are not duplicated): H is the curvature
of the log-posterior, M the sum over samples of the outer products of each sample's score
vector. This makes the intervals reflect the variance the design actually has. With few
samples the sandwich is biased low (20 wins out of 20 show no spread at all), so it is
shrunk toward the model-based H^-1 with weight 10 / (S + 10) for S samples: early
intervals are the model's, later ones the design's.

Scale: Elo = 1500 + 400 / ln(10) * (log g_i - mean log g), so a 400-point gap means
10:1 odds; the mean rating is 1500.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ELO_SCALE = 400.0 / math.log(10.0)
ELO_MEAN = 1500.0
Z95 = 1.959963984540054
SHRINK = 10.0  # samples at which the robust and the model covariance weigh the same


@dataclass(frozen=True)
class Placing:
    """One match as the ratings see it: the bot at each seat, each seat's place, and the
    sample it belongs to (matches of one duplicate set share a sample)."""

    bots: Sequence[str]
    places: Sequence[int]
    sample: str


def pairs(outcome: Placing) -> list[tuple[str, str, float, float]]:
    """``(a, b, score of a, weight)`` for every pair of seats of a match."""
    k = len(outcome.bots)
    if k < 2:
        return []
    w = 1.0 / (k - 1)
    out = []
    for s in range(k):
        for t in range(s + 1, k):
            ps, pt = outcome.places[s], outcome.places[t]
            score = 1.0 if ps < pt else 0.0 if ps > pt else 0.5
            out.append((outcome.bots[s], outcome.bots[t], score, w))
    return out


@dataclass
class Fit:
    """A batch fit: log-strengths, their covariance, and what derives from them."""

    bots: list[str]
    theta: list[float]             # natural log-strengths (anchor 0)
    cov: list[list[float]]         # covariance of theta (cluster-robust)
    samples: int

    def elo(self, bot: str) -> float:
        i = self.bots.index(bot)
        mean = sum(self.theta) / len(self.theta)
        return ELO_MEAN + ELO_SCALE * (self.theta[i] - mean)

    def stderr(self, bot: str) -> float:
        """Standard error of the bot's Elo (of its distance from the mean)."""
        n = len(self.bots)
        i = self.bots.index(bot)
        a = [(1.0 if j == i else 0.0) - 1.0 / n for j in range(n)]
        var = sum(a[r] * self.cov[r][c] * a[c] for r in range(n) for c in range(n))
        return ELO_SCALE * math.sqrt(max(var, 0.0))

    def interval(self, bot: str) -> float:
        """Half-width of the 95% interval of the bot's Elo."""
        return Z95 * self.stderr(bot)

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: the probability that ``a`` is stronger than ``b``."""
        i, j = self.bots.index(a), self.bots.index(b)
        if i == j:
            return 0.5
        var = self.cov[i][i] + self.cov[j][j] - 2 * self.cov[i][j]
        diff = self.theta[i] - self.theta[j]
        if var <= 0:
            return 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5
        return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))

    def ranked(self) -> list[str]:
        """Bots by rating, best first."""
        return sorted(self.bots, key=lambda b: -self.theta[self.bots.index(b)])


def fit(outcomes: Iterable[Placing], bots: Sequence[str] | None = None, prior: float = 2.0,
        tolerance: float = 1e-10, max_iterations: int = 10_000) -> Fit:
    """Fit Bradley-Terry strengths to the pairs of ``outcomes`` (see the module notes)."""
    outcomes = list(outcomes)
    names = list(bots) if bots is not None else sorted({b for o in outcomes for b in o.bots})
    index = {b: i for i, b in enumerate(names)}
    n = len(names)
    wins = [prior * 0.5] * n                    # virtual draws against the anchor
    games: dict[tuple[int, int], float] = defaultdict(float)
    by_sample: dict[str, list[tuple[int, int, float, float]]] = defaultdict(list)
    for o in outcomes:
        for a, b, score, w in pairs(o):
            i, j = index[a], index[b]
            if i == j:
                continue  # a bot against itself tells nothing
            wins[i] += w * score
            wins[j] += w * (1.0 - score)
            games[(min(i, j), max(i, j))] += w
            by_sample[o.sample].append((i, j, score, w))
    neighbours: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (i, j), w in games.items():
        neighbours[i].append((j, w))
        neighbours[j].append((i, w))

    gamma = [1.0] * n
    for _ in range(max_iterations):
        new = []
        for i in range(n):
            denom = prior / (gamma[i] + 1.0)
            gi = gamma[i]
            for j, w in neighbours[i]:
                denom += w / (gi + gamma[j])
            new.append(wins[i] / denom if denom > 0 else gi)
        change = max((abs(math.log(new[i] / gamma[i])) for i in range(n)), default=0.0)
        gamma = new
        if change < tolerance:
            break
    theta = [math.log(g) for g in gamma]

    # curvature of the log-posterior (the "bread") ...
    h = [[0.0] * n for _ in range(n)]
    for (i, j), w in games.items():
        p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
        c = w * p * (1.0 - p)
        h[i][i] += c
        h[j][j] += c
        h[i][j] -= c
        h[j][i] -= c
    for i in range(n):
        q = 1.0 / (1.0 + math.exp(-theta[i]))
        h[i][i] += prior * q * (1.0 - q)
    # ... and the spread of each sample's score (the "meat")
    m = [[0.0] * n for _ in range(n)]
    for sample_pairs in by_sample.values():
        g = [0.0] * n
        for i, j, score, w in sample_pairs:
            p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
            g[i] += w * (score - p)
            g[j] -= w * (score - p)
        nz = [i for i in range(n) if g[i]]
        for r in nz:
            for c in nz:
                m[r][c] += g[r] * g[c]
    s = len(by_sample)
    correction = s / (s - 1) if s > 1 else 1.0
    hinv = _inverse(h)
    robust = _mul(_mul(hinv, m), hinv)
    alpha = SHRINK / (s + SHRINK)
    cov = [[(1 - alpha) * correction * robust[r][c] + alpha * hinv[r][c] for c in range(n)]
           for r in range(n)]
    return Fit(names, theta, cov, s)


def _mul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    cols = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan inverse of a small positive-definite matrix."""
    n = len(a)
    m = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        p = m[col][col]
        if abs(p) < 1e-300:
            raise ZeroDivisionError("singular matrix")
        inv = 1.0 / p
        m[col] = [v * inv for v in m[col]]
        for r in range(n):
            if r != col and m[r][col]:
                f = m[r][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [row[n:] for row in m]


class OnlineElo:
    """A provisional Elo updated after each match (pairwise, K-factor), for live display."""

    def __init__(self, bots: Iterable[str], k: float = 16.0) -> None:
        self.k = k
        self.ratings = {b: ELO_MEAN for b in bots}

    def update(self, outcome: Placing) -> None:
        deltas: dict[str, float] = defaultdict(float)
        for a, b, score, w in pairs(outcome):
            if a == b:
                continue
            expected = 1.0 / (1.0 + 10 ** ((self.ratings[b] - self.ratings[a]) / 400.0))
            d = self.k * w * (score - expected)
            deltas[a] += d
            deltas[b] -= d
        for bot, d in deltas.items():
            self.ratings[bot] += d


def kendall_tau(order: Sequence[str], truth: Sequence[str]) -> float:
    """Kendall's tau between two orders of the same items (1 = identical, -1 = reversed)."""
    pos = {b: i for i, b in enumerate(order)}
    n = len(truth)
    concordant = discordant = 0
    for x in range(n):
        for y in range(x + 1, n):
            if pos[truth[x]] < pos[truth[y]]:
                concordant += 1
            else:
                discordant += 1
    total = n * (n - 1) / 2
    return (concordant - discordant) / total if total else 1.0
