"""Ratings from finishing orders: a batch Bradley-Terry fit with 95% intervals and
likelihood of superiority, and a provisional online Elo for live display.

Model. Each match's finishing order implies pairwise results: for two seats, the better
place scores 1, a shared place 0.5 each. A K-seat match gives K(K-1)/2 pairs; each is
weighted 1/(K-1), so every bot's pairs in one match weigh 1 in all. Bradley-Terry:
P(i beats j) = g_i / (g_i + g_j). We fit pairs rather than a Plackett-Luce model of the
whole order because ties (shared places, draws by the play limit) are natural as half
points in pairs and awkward in Plackett-Luce, and because the pairs fit the 2-seat and
the 8-seat case with one formula.

Fit. The posterior mode by Newton's method: the log-posterior sum_i W_i log g_i -
sum_ij N_ij log(g_i + g_j) + prior (W_i the weighted score of i, N_ij the weighted number
of pairs of i and j) is concave in log g, so a handful of steps reach it to 1e-10, where
Hunter's MM iterations (used before) need thousands with a weak prior. A small prior keeps
ratings finite for a bot that always wins or always loses: every bot gets virtual drawn
games against an anchor of strength 1 (as BayesElo's virtual draws do), worth ``PRIOR`` =
0.5 real games. It was 2 games: with 10-30 matches a bot, that pulled every rating so far
toward the mean that no interval around it could cover a bot 600+ Elo out.

Variance. Pairs are not independent (pairs of one match share its deal; the rotations of
one duplicate deal share their cards on purpose, which is what cancels luck), so a
match's pairs carry more or less information than their weights say. This is measured,
by *sample* (a duplicate set, or one match when deals are not duplicated): the spread of
each sample's score vector (the sandwich's "meat" M) against what independent pairs
would show (the curvature H of the log-likelihood). Their ratio, pooled over bots, is the
design effect d: about 1 for 2-seat matches, 0.4-0.6 for 4-seat Plackett-Luce orders,
below 1 for duplicate deals whose luck cancels. The prior is scaled by d, so that it is
worth the same real information at every table size. The covariance is the sandwich
H^-1 M* H^-1, where M* is M along directions the data inform and d x H along directions
they barely do: there residuals show nothing (a bot 800 Elo above the field that won its
20 matches shows no spread at all; two groups of bots 1200 Elo apart meet with no upset
in sight), so the measured meat would say "no uncertainty" exactly where it is largest.
M* = A M A + d (H - A H A) with A = H (H + KAPPA I)^-1: a direction with n informative
results (n = its curvature) keeps n / (n + KAPPA) of its measured spread.

Intervals. Profile likelihood, not +-1.96 standard errors: the 95% interval of a bot's
Elo (relative to the mean) is where the log-posterior, maximised over every other rating,
stays within 1.92 x (sandwich variance / model variance) of its maximum (the composite-
likelihood adjustment). Near the centre this is the Wald interval; for a dominant bot it
is asymmetric, as the data are: 20 wins of 20 bound its rating below but hardly above.
Measured by ``arena bench ratings --coverage`` (placings drawn from the model, 2 and 4
seats, 10 to 300 matches per bot, bots up to 1000 Elo from the mean): Wald intervals
with the former prior of 2 games covered 1-95% by cell, 66% overall, nearly every miss
pulled toward the mean; these cover 93.4-97.8% in every cell, 95.2% overall (two seeds,
1000 fields a row; the cells outside 93-97% are over, at 10-30 matches a bot).
Each bound is found by Venzon & Moolgavkar's method (1988): Newton steps on "gradient
parallel to the contrast, log-posterior at the threshold", a few linear solves each.
The solves, products and inverses are numpy's (LAPACK): Newton's steps need about 8
n-by-n solves a bot, and in pure Python they made a 200-bot ladder's fit take minutes
(O(n^4)); so a bound first tries chord steps, with the inverse Hessian at the estimate
(see _profile_bound), and most bounds need no solve.

Scale: Elo = 1500 + 400 / ln(10) * (log g_i - mean log g), so a 400-point gap means
10:1 odds. The mean is weighted by matches played, so that it is 1500 for a round robin
and a newcomer's first match in a ladder does not unsettle everyone's rating.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# numpy (and threadpoolctl) are imported by the functions that fit, not with this module:
# every arena command imports it (the standings' types, the live table's), and numpy was
# 0.2-0.3 s of CPU at the start of each one, a fit or none (`arena standings --server`,
# a multiprocess executor's workers, `arena match`). Once imported, an import is a lookup.

ELO_SCALE = 400.0 / math.log(10.0)
ELO_MEAN = 1500.0
Z95 = 1.959963984540054
PRIOR = 0.5       # virtual drawn games of each bot against the anchor, in real games' worth
KAPPA = 1.5       # informative results at which a measured spread and the model's weigh
                  # the same
STEP = 2.0        # longest step of a profile bound's Newton iterations (log-strength)


@dataclass(frozen=True)
class Placing:
    """One match as the ratings see it: the bot at each seat, each seat's place, and the
    sample it belongs to (matches of one duplicate set share a sample). ``count``: so many
    matches of this outcome, each a sample of its own (a ladder's matches, folded; see
    :class:`arena.tournament.standings.Results`); its sample is then no other's."""

    bots: Sequence[str]
    places: Sequence[int]
    sample: Hashable
    count: int = 1


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
    """A batch fit: log-strengths, their covariance, the 95% interval of every bot's Elo,
    and what derives from them."""

    bots: list[str]
    theta: list[float]             # natural log-strengths (anchor 0)
    cov: list[list[float]]         # covariance of theta (sandwich, see the module notes)
    samples: int
    low: list[float]               # 95% interval of each bot's Elo (profile likelihood)
    high: list[float]
    design: float = 1.0            # pooled design effect: variance against independent pairs
    mean: list[float] | None = None   # weights of the mean the Elo is relative to (by
                                      # matches played; None: equal)
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # a bot's row by its name: a 200-bot ladder's likelihoods of superiority read
        # 40,000 pairs, and a list's index() made that O(n^3)
        self._index = {b: i for i, b in enumerate(self.bots)}

    def elo(self, bot: str) -> float:
        """The bot's fitted Elo (the field's mean at ELO_MEAN)."""
        i = self._index[bot]
        return ELO_MEAN + ELO_SCALE * sum(x * t for x, t in zip(self.contrast(i), self.theta))

    def contrast(self, i: int) -> list[float]:
        """Bot i's distance from the mean, as weights on theta."""
        mean = self.mean or [1.0 / len(self.bots)] * len(self.bots)
        return [(1.0 if j == i else 0.0) - w for j, w in enumerate(mean)]

    def bounds(self, bot: str) -> tuple[float, float]:
        """The 95% interval of the bot's Elo: (low, high), around its Elo but not
        symmetric where the data are not (a bot that won nearly every match)."""
        i = self._index[bot]
        return self.low[i], self.high[i]

    def interval(self, bot: str) -> float:
        """Half-width of the narrowest interval ``Elo +- h`` that holds the 95% interval:
        for a display with one number, it covers at least as often."""
        low, high = self.bounds(bot)
        elo = self.elo(bot)
        return max(high - elo, elo - low)

    def stderr(self, bot: str) -> float:
        """Standard error of the bot's Elo (of its distance from the mean)."""
        a = self.contrast(self._index[bot])
        return ELO_SCALE * math.sqrt(max(_quad(a, self.cov), 0.0))

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: the probability that ``a`` is stronger than ``b``."""
        i, j = self._index[a], self._index[b]
        if i == j:
            return 0.5
        var = self.cov[i][i] + self.cov[j][j] - 2 * self.cov[i][j]
        diff = self.theta[i] - self.theta[j]
        if var <= 0:
            return 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5
        return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))

    def ranked(self) -> list[str]:
        """Bots by rating, best first."""
        return sorted(self.bots, key=lambda b: -self.theta[self._index[b]])


def count_of(value: Any) -> int:
    """A count read back from saved data (a snapshot of a tournament's state): an int, not
    below 0; ValueError for another (a damaged or foreign row), whose negative counts
    would spoil the fits and pairings that read it without a word."""
    n = int(value)
    if n < 0:
        raise ValueError(f"a count of {n}")
    return n


#: How far from ELO_MEAN a rating read back may be. Elo's 10 ** (difference / 400)
#: overflows past a difference of 123,000 (OverflowError at the next match of the two);
#: a real rating stays within a few thousand of the mean (its gain shrinks tenfold with
#: every 400 it leads by).
RATING_SPAN = 50_000.0


def rating_of(value: Any) -> float:
    """A rating read back from saved data: a finite float within RATING_SPAN of the mean;
    ValueError for NaN or infinity, which would spread to every rating updated beside
    it, or for one far enough out to overflow the next update."""
    r = float(value)
    if not math.isfinite(r) or abs(r - ELO_MEAN) > RATING_SPAN:
        raise ValueError(f"a rating of {r}")
    return r


class Tally:
    """The sums a fit's estimate reads, of any number of matches: for each table size, how
    often each bot finished ahead of each other and how often level with it. Integers, so
    the same matches give the same sums in whatever order they are added. A count for
    each two bots that met, so its size grows with the pairs that met (about 30 bytes a
    pair and direction: 6.5 MB for 500 bots that have all met), not with the matches,
    nor with every name a ladder has seen (its retired versions meet only the field of
    their time: an n-by-n matrix took 67 MB for 2,000 of them). ``samples``: how many
    samples the matches make (a duplicate set is one), kept by whoever adds them."""

    __slots__ = ("ahead", "level", "tables", "samples")

    def __init__(self) -> None:
        #: seats -> bot -> opponent -> pairs in which the bot finished ahead of it
        self.ahead: dict[int, dict[str, dict[str, int]]] = {}
        #: seats -> (a, b), a < b -> pairs in which they finished level
        self.level: dict[int, dict[tuple[str, str], int]] = {}
        self.tables: Counter[int] = Counter()     # seats -> matches
        self.samples = 0

    def add(self, bots: Sequence[str], places: Sequence[int], count: int = 1) -> None:
        """Count a match of ``bots`` (by seat) that ended in ``places`` (0 first, ties
        equal), ``count`` times: each pair of seats, as one ahead or the two level."""
        k = len(bots)
        if k < 2:
            return
        self.tables[k] += count
        ahead = self.ahead.get(k)
        if ahead is None:
            ahead = self.ahead[k] = {}
            self.level[k] = {}
        level = self.level[k]
        for s in range(k):
            for t in range(s + 1, k):
                a, b, pa, pb = bots[s], bots[t], places[s], places[t]
                if a == b:
                    continue  # a bot against itself tells nothing
                if pa == pb:
                    key = (a, b) if a < b else (b, a)
                    level[key] = level.get(key, 0) + count
                    continue
                if pa > pb:
                    a, b = b, a
                row = ahead.get(a)
                if row is None:
                    row = ahead[a] = {}
                row[b] = row.get(b, 0) + count

    @property
    def bots(self) -> set[str]:
        """Every bot of a pair."""
        out: set[str] = set()
        for table in self.ahead.values():
            for a, row in table.items():
                out.add(a)
                out.update(row)
        for table in self.level.values():
            for pair in table:
                out.update(pair)
        return out

    def sums(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each of ``names``'s weighted score, and each two's weighted number of pairs (an
        n-by-n matrix): each pair of a K-seat match weighs 1 / (K - 1). Summed as integers
        for each table size, then weighed: the same bits in whatever order they came."""
        import numpy as np
        n = len(names)
        at = {b: i for i, b in enumerate(names)}
        wins, games = np.zeros(n), np.zeros((n, n))
        for k in sorted(self.tables):
            met = np.zeros((n, n), dtype=np.int64)      # [i, j]: i ahead of j
            for a, row in self.ahead[k].items():
                i = at[a]
                for b, c in row.items():
                    met[i, at[b]] += c
            level = np.zeros((n, n), dtype=np.int64)
            for (a, b), c in self.level[k].items():
                level[at[a], at[b]] += c
            level += level.T
            w = 1.0 / (k - 1)
            wins += w * 0.5 * (2 * met.sum(axis=1) + level.sum(axis=1))   # half points
            games += w * (met + met.T + level)
        return wins, games

    def copy(self) -> Tally:
        other = Tally()
        other.ahead = {k: {a: dict(row) for a, row in t.items()} for k, t in self.ahead.items()}
        other.level = {k: dict(t) for k, t in self.level.items()}
        other.tables = Counter(self.tables)
        other.samples = self.samples
        return other

    def to_state(self) -> dict[str, Any]:
        """Its counts as plain data (JSON's types), that :meth:`from_state` reads back."""
        return {"ahead": [[k, a, b, c] for k, t in self.ahead.items()
                          for a, row in t.items() for b, c in row.items()],
                "level": [[k, a, b, c] for k, t in self.level.items() for (a, b), c in t.items()],
                "tables": [[k, c] for k, c in self.tables.items()],
                "samples": self.samples}

    @classmethod
    def from_state(cls, state: dict[str, Any], names: dict[str, str] | None = None) -> Tally:
        """The tally :meth:`to_state` gave ``state`` of; ``names``: each bot's name as the
        caller keeps it (one string for each name in memory, not one a count)."""
        same = names or {}
        other = cls()
        for k, c in state["tables"]:
            other.tables[int(k)] = count_of(c)
            other.ahead.setdefault(int(k), {})
            other.level.setdefault(int(k), {})
        for k, a, b, c in state["ahead"]:
            other.ahead[int(k)].setdefault(same.get(a, a), {})[same.get(b, b)] = count_of(c)
        for k, a, b, c in state["level"]:
            other.level[int(k)][same.get(a, a), same.get(b, b)] = count_of(c)
        other.samples = count_of(state["samples"])
        return other


class _Pairs:
    """The pairs of a set of matches, summed as the model needs them: each bot's weighted
    score, each pair of bots' weighted number of pairs (from a :class:`Tally` of every
    match), and the samples the sandwich's meat reads (each with the number of samples it
    stands for)."""

    def __init__(self, outcomes: Iterable[Placing], names: Sequence[str],
                 tally: Tally | None = None) -> None:
        """``tally``: the sums of every match, when ``outcomes`` are only the samples the
        meat reads (a :class:`arena.tournament.standings.Results` keeps a share of its
        outcomes, each standing for ``count`` samples); else they are summed here."""
        import numpy as np
        index = {b: i for i, b in enumerate(names)}
        self.n = len(names)
        samples: dict[Hashable, list[tuple[int, int, float, float]]] = defaultdict(list)
        counts: dict[Hashable, int] = {}
        own = tally is None
        if own:
            tally = Tally()
        for o in outcomes:
            if own:
                tally.add(o.bots, o.places, o.count)
            mine = []
            for a, b, score, w in pairs(o):
                i, j = index[a], index[b]
                if i != j:
                    mine.append((i, j, score, w))
            if mine:           # a sample's key looked up once (a folded one is a tuple)
                samples[o.sample] += mine
                counts[o.sample] = o.count
        wins, games = tally.sums(names)
        self.wins = wins.tolist()
        self.matches = sum(tally.tables.values())
        # the design effect of independent Plackett-Luce orders of equal bots: a K-seat
        # match's pairs spread (K + 1) / (3 (K - 1)) times what independent pairs would
        orders = sum(c * (k + 1) / (3 * (k - 1)) for k, c in sorted(tally.tables.items()))
        self.orders = orders / self.matches if self.matches else 1.0
        rows, cols = np.nonzero(np.triu(games, 1))       # each pair of bots that met, once
        self._i, self._j, self._w = rows.astype(np.intp), cols.astype(np.intp), games[rows, cols]
        self.games = [((int(i), int(j)), float(w)) for i, j, w in zip(rows, cols, self._w)]
        self._wins = np.array(self.wins)
        #: (how many samples, their pairs): one sample each but a folded outcome's
        self.samples = [(counts[key], pairs_of) for key, pairs_of in samples.items()]
        self.sample_count = sum(counts.values()) if own else tally.samples

    def mode(self, prior: float, theta: Sequence[float] | None = None,
             tolerance: float = 1e-10, max_iterations: int = 200) -> list[float]:
        """The posterior mode, by Newton's method (from ``theta`` if given): the
        log-posterior is concave, and each step is halved until it does not fall."""
        theta = list(theta) if theta is not None else [0.0] * self.n
        value, grad, hess = self.posterior(theta, prior)
        for _ in range(max_iterations):
            [step] = _solve(hess, grad)
            longest = max((abs(x) for x in step), default=0.0)
            if longest > STEP:
                step = [x * STEP / longest for x in step]
            for _ in range(60):
                trial = [t + x for t, x in zip(theta, step)]
                new = self.posterior(trial, prior)
                if new[0] >= value - 1e-12 * (1.0 + abs(value)):
                    break
                step = [x * 0.5 for x in step]
            theta, (value, grad, hess) = trial, new
            if longest < tolerance:
                break
        return theta

    def posterior(self, theta: Sequence[float], prior: float
                  ) -> tuple[float, list[float], np.ndarray]:
        """Log-posterior, its gradient, and its negative Hessian (data and prior) at
        ``theta``. In numpy: the profile bounds call it a few times a bot."""
        import numpy as np
        value, grad, p, q = self.slope(theta, prior)
        n = self.n
        i, j, w = self._i, self._j, self._w
        c = w * p * (1.0 - p)
        hess = np.diag(prior * q * (1.0 - q) + np.bincount(i, c, n) + np.bincount(j, c, n))
        hess[i, j] -= c                   # each pair of bots once: no index repeats
        hess[j, i] -= c
        return value, grad.tolist(), hess

    def slope(self, theta: Sequence[float], prior: float
              ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """Log-posterior and its gradient at ``theta``, without the Hessian (an n-by-n
        matrix to fill: what a profile bound's chord steps skip), and the win probability
        of each pair and of each bot against the anchor, which the Hessian is made of."""
        import numpy as np
        n = self.n
        t = np.asarray(theta, dtype=float)
        i, j, w = self._i, self._j, self._w
        d = t[i] - t[j]
        soft = np.logaddexp(0.0, d)               # log(1 + e^d), once for both uses
        p = np.exp(d - soft)                      # 1 / (1 + e^-d), without overflow
        q = _expit(t)
        value = (self._wins @ t + prior * float(np.sum(0.5 * t - np.logaddexp(0.0, t)))
                 - float(w @ (t[j] + soft)))                      # w log(e^ti + e^tj)
        grad = (self._wins + prior * (0.5 - q) - np.bincount(i, w * p, n)
                - np.bincount(j, w * (1.0 - p), n))
        return float(value), grad, p, q

    def curvature(self, theta: Sequence[float]) -> list[list[float]]:
        """Curvature of the data's log-likelihood alone (what independent pairs would
        spread as)."""
        n = self.n
        h = [[0.0] * n for _ in range(n)]
        for (i, j), w in self.games:
            p = _sigmoid(theta[i] - theta[j])
            c = w * p * (1.0 - p)
            h[i][i] += c
            h[j][j] += c
            h[i][j] -= c
            h[j][i] -= c
        return h

    def meat(self, theta: Sequence[float]) -> list[list[float]]:
        """Sum over samples of the outer product of each sample's score vector."""
        n = self.n
        m = [[0.0] * n for _ in range(n)]
        for count, sample_pairs in self.samples:
            g: dict[int, float] = defaultdict(float)
            for i, j, score, w in sample_pairs:
                r = w * (score - _sigmoid(theta[i] - theta[j]))
                g[i] += r
                g[j] -= r
            for r, gr in g.items():
                row = m[r]
                gr *= count
                for c, gc in g.items():
                    row[c] += gr * gc
        return m


def fit(outcomes: Iterable[Placing], bots: Sequence[str] | None = None, prior: float = PRIOR,
        design: float | None = None, tolerance: float = 1e-10,
        max_iterations: int = 200, tally: Tally | None = None) -> Fit:
    """Fit Bradley-Terry strengths to the pairs of ``outcomes``, with their covariance and
    95% intervals (see the module notes). ``design`` fixes the design effect instead of
    measuring it (1: pairs as independent as their weights say). ``tally``: the sums of
    every match, when ``outcomes`` are only the samples the sandwich reads (see
    :class:`_Pairs`)."""
    from threadpoolctl import threadpool_limits
    # one BLAS thread: these matrices are at most a few hundred wide, where OpenBLAS's
    # threads cost more than they share (a 160-bot fit's solves took 10 times as long on
    # 2 cores), and a server's other work needs the cores
    with threadpool_limits(1, user_api="blas"):
        return _fit(outcomes, bots, prior, design, tolerance, max_iterations, tally)


def _fit(outcomes: Iterable[Placing], bots: Sequence[str] | None, prior: float,
         design: float | None, tolerance: float, max_iterations: int,
         tally: Tally | None) -> Fit:
    import numpy as np
    outcomes = list(outcomes)
    if bots is not None:
        names = list(bots)
    elif tally is not None:
        names = sorted(tally.bots)
    else:
        names = sorted({b for o in outcomes for b in o.bots})
    data = _Pairs(outcomes, names, tally)
    n = len(names)
    s = data.sample_count
    theta = data.mode(prior, None, tolerance, max_iterations)
    h_data = data.curvature(theta)
    m = data.meat(theta)
    if design is None:
        info = sum(h_data[i][i] for i in range(n))
        # few informative results say little about it (100 wins of 100 show no spread
        # at all): lean on what independent orders would show
        design = (sum(m[i][i] for i in range(n)) + KAPPA * data.orders) / (info + KAPPA)
    prior *= design
    theta = data.mode(prior, theta, tolerance, max_iterations)
    value, _, h = data.posterior(theta, prior)
    h_data = np.array(data.curvature(theta))
    m = np.array(data.meat(theta))
    correction = s / (s - 1) if s > 1 else 1.0
    # the meat: measured along informed directions, the model's (x design) elsewhere
    eye = np.eye(n)
    a = eye - KAPPA * np.linalg.inv(h_data + KAPPA * eye)
    # h - aha: the data's unmeasured part and the prior
    meat = correction * (a @ m @ a) + design * (h - a @ h_data @ a)
    hinv = np.linalg.inv(h)
    cov = hinv @ meat @ hinv
    # the mean weighted by matches played: in a round robin the plain mean; in a ladder, a
    # newcomer's first match does not make every other bot's distance from the mean as
    # uncertain as the newcomer's rating (it doubled their intervals with equal weights),
    # and a bot that never played (retired before its first match) does not count at all
    played = [0.0] * n
    for (i, j), w in data.games:
        played[i] += w
        played[j] += w
    total = sum(played)
    result = Fit(names, theta, cov.tolist(), s, [], [], design,
                 [x / total for x in played] if total > 0 else None)
    for i in range(n):
        contrast = np.array(result.contrast(i))
        model = float(contrast @ hinv @ contrast)
        drop = 0.5 * Z95 ** 2 * (float(contrast @ cov @ contrast) / model if model > 0 else 1.0)
        lo, hi = (_profile_bound(data, prior, theta, value, hinv, contrast, drop, side)
                  for side in (-1.0, 1.0))
        result.low.append(ELO_MEAN + ELO_SCALE * lo)
        result.high.append(ELO_MEAN + ELO_SCALE * hi)
    return result


#: Chord steps a profile bound tries (with the Hessian at the estimate) before Newton's,
#: and Newton's steps after them (see _profile_bound). The chord steps stop early when a
#: step is longer than CHORD_CONTRACTION times the last: at that pace they would need more
#: steps than Newton's solves cost (measured on fields of 40 to 500 bots).
CHORD_STEPS = 20
NEWTON_STEPS = 100
CHORD_CONTRACTION = 0.7


def _profile_bound(data: _Pairs, prior: float, theta_hat: Sequence[float], top: float,
                   hinv: np.ndarray, a: np.ndarray, drop: float, side: float,
                   tolerance: float = 1e-7) -> float:
    """The value of the contrast ``a . theta`` where the profile log-posterior has fallen
    ``drop`` below its maximum ``top``, on ``side`` (+1 above the estimate, -1 below).

    Venzon & Moolgavkar (1988): at the bound, the gradient is parallel to ``a`` and the
    log-posterior equals top - drop. Each step solves the quadratic model of both
    conditions: delta = H^-1 (g - mu a), with mu^2 a'H^-1 a = 2 (l - target) + g'H^-1 g.

    Any positive definite H has the bound as its fixed point, so the first steps (up to
    CHORD_STEPS) use the inverse Hessian at the estimate, ``hinv``, already at hand: one
    product with it a step, where the Hessian at theta needs an n-by-n solve (a fit made
    about 8 a bot: 21 s for 500 bots at 4 seats). Near the estimate, as for most bots,
    they converge in a few steps; where the posterior bends away from its shape at the
    estimate (a dominant bot's open side), or they stall, up to NEWTON_STEPS steps go on
    with the Hessian at theta (Newton's method, from where the chord steps stopped)."""
    import numpy as np
    target = top - drop
    v_hat = hinv @ a
    spread_hat = float(a @ v_hat)
    if spread_hat <= 0.0:
        return float(a @ np.asarray(theta_hat))            # a contrast nothing can move
    scale = side * math.sqrt(2.0 * drop / spread_hat)
    theta = np.asarray(theta_hat) + scale * v_hat              # the quadratic model's bound
    last = math.inf
    for _ in range(CHORD_STEPS):
        value, grad, _, _ = data.slope(theta, prior)
        u = hinv @ grad
        room = 2.0 * (value - target) + float(grad @ u)
        mu = -side * math.sqrt(max(room, 0.0) / spread_hat)
        step = u - mu * v_hat
        longest = float(np.max(np.abs(step)))
        if longest > STEP or longest > CHORD_CONTRACTION * last:
            break                      # too far, or converging too slowly: Newton's steps
        theta = theta + step
        last = longest
        if longest < tolerance and abs(value - target) < tolerance:
            return float(a @ theta)
    theta = theta.tolist()
    a = a.tolist()
    for _ in range(NEWTON_STEPS):
        value, grad, hess = data.posterior(theta, prior)
        u, v = _solve(hess, grad, a)
        spread = sum(x * y for x, y in zip(a, v))
        room = 2.0 * (value - target) + sum(x * y for x, y in zip(grad, u))
        mu = -side * math.sqrt(max(room, 0.0) / spread)
        step = [x - mu * y for x, y in zip(u, v)]
        longest = max(abs(x) for x in step)
        if longest > STEP:
            step = [x * STEP / longest for x in step]
        theta = [t + x for t, x in zip(theta, step)]
        if longest < tolerance and abs(value - target) < tolerance:
            break
    return sum(x * t for x, t in zip(a, theta))


def _quad(a: Sequence[float], m: list[list[float]]) -> float:
    return sum(a[r] * sum(m[r][c] * a[c] for c in range(len(a))) for r in range(len(a)))


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _solve(a: np.ndarray, *b: Sequence[float]) -> list[list[float]]:
    """x with a x = b, for each b (one factorisation for all of them)."""
    import numpy as np
    return np.linalg.solve(a, np.array(b).T).T.tolist()


def _expit(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x), without overflow."""
    import numpy as np
    return np.exp(-np.logaddexp(0.0, -x))


class OnlineElo:
    """A provisional Elo updated after each match (pairwise, K-factor), for live display."""

    def __init__(self, bots: Iterable[str], k: float = 16.0) -> None:
        self.k = k
        self.ratings = {b: ELO_MEAN for b in bots}

    def update(self, outcome: Placing) -> None:
        """Move the ratings by one match's pairs, each pair's expected score against its
        actual one, all at once (the match's order of pairs does not matter)."""
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
