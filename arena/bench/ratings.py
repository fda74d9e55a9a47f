"""``arena bench ratings``: do the standings find a known strength order, and how fast?

Bots of known order: ``bots/counter`` with a random-move rate of 0%, 25%, 50%, 75% and
100% (each random move makes it weaker; ``bots/greedy`` is too close to random for a
known order: with 60% random moves it measured below pure random). They play round-robin tournaments in this
process (the SDK's driver and the real bot code, without gRPC: see
:mod:`arena.tournament.inprocess`), deal after deal, under three designs:

* plain: one match per deal, seats rotating from deal to deal;
* duplicate: each deal once per seat rotation (every bot holds every seat's cards);
* duplicate + common bot seeds: as duplicate, and the bots' own randomness seeded by
  (deal, seat), so whoever holds a seat's cards also gets its random stream.

Each design plays a fixed budget of matches, deal after deal. Reported, as medians over
several master seeds: Kendall's tau between the fitted and the true order at an early
budget; the matches after which every pair of adjacent bots was first separated (LOS
>= 95% in the true direction; a noisy stopping time); and, steadier, the matches needed
projected from the final fit: a gap's variance falls as 1/matches, so the gap reaches
1.645 standard errors at budget x (1.645 sd / gap)^2, with each run's own standard errors
and the true gaps as well as they can be known (one fit over every match of every run), so
that designs differ only by the variance they leave; the figure is the worst adjacent pair.
"""

from __future__ import annotations

import importlib.util
import math
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.referee.results import MatchSpec
from arena.rules.rulesets import make_config
from arena.seeds import Seeds
from arena.tournament import schedule
from arena.tournament.inprocess import play_in_process
from arena.tournament.ratings import Placing, fit, kendall_tau

ROOT = Path(__file__).resolve().parents[2]
EPSILONS = (0.0, 0.25, 0.5, 0.75, 1.0)
DESIGNS = ("plain", "duplicate", "duplicate+seeds")


def _bot_class():
    spec = importlib.util.spec_from_file_location("counter_bot", ROOT / "bots" / "counter" / "bot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CounterBot


@dataclass
class DesignRun:
    design: str
    seed: int
    separated_at: int | None     # first time every adjacent pair had LOS >= 95% (None: never)
    projected: float             # matches needed, projected from the final fit's errors
    tau: float                   # Kendall's tau at the early budget
    matches: int
    seconds: float
    gap_sds: list[float]         # standard errors of the adjacent gaps at the end
    outcomes: list = field(repr=False, default_factory=list)


Z_LOS95 = 1.6448536269514722     # LOS >= 95% <=> gap >= 1.645 standard errors


def run_design(design: str, seed: int, table_size: int, budget: int, tau_budget: int) -> DesignRun:
    """Play ``budget`` matches of one design, deal after deal, refitting as it goes."""
    bot = _bot_class()
    names = [f"counter-{round(e * 100)}" for e in EPSILONS]   # the true order, best first
    n = len(names)
    duplicate = design != "plain"
    per_deal = schedule.size(n, table_size, 1, duplicate).matches
    deals = max(1, budget // per_deal)
    # no phases: bot objects are made afresh for every match here, and the budget is
    # counted deal after deal, each duplicate set whole
    plan = schedule.build(n, table_size, deals, duplicate, Seeds(seed),
                          common_bot_seeds=design == "duplicate+seeds", phases=False)
    config = make_config("modern", None, table_size)
    outcomes: list[Placing] = []
    tau = float("nan")
    separated = None
    next_check = per_deal
    t0 = time.perf_counter()
    for i, p in enumerate(plan, 1):
        spec = MatchSpec(f"{design}-{seed}-{p.key}", config, p.seed,
                         tuple(names[b] for b in p.seats), bot_seeds=p.bot_seeds)
        result = play_in_process(spec, [bot(EPSILONS[b]) for b in p.seats])
        outcomes.append(Placing(spec.names, result.places(), p.sample))
        if i == min(tau_budget, len(plan)):
            tau = kendall_tau(fit(outcomes, names).ranked(), names)
        if separated is None and i >= next_check and i % per_deal == 0:
            next_check = max(i + per_deal, int(i * 1.05))
            f = fit(outcomes, names)
            if all(f.los(names[k], names[k + 1]) >= 0.95 for k in range(n - 1)):
                separated = i
    final = fit(outcomes, names)
    sds = [math.sqrt(max(final.cov[k][k] + final.cov[k + 1][k + 1] - 2 * final.cov[k][k + 1], 0.0))
           for k in range(n - 1)]
    return DesignRun(design, seed, separated, float("nan"), tau, len(outcomes),
                     time.perf_counter() - t0, sds, outcomes)


def project(run: DesignRun, gaps: list[float]) -> float:
    """Matches at which every adjacent gap reaches 1.645 of its standard error, given the
    true gaps: a gap's variance falls as 1/matches."""
    return max(run.matches * (Z_LOS95 * sd / gap) ** 2 if gap > 0 else float("inf")
               for sd, gap in zip(run.gap_sds, gaps))


def run(console, seeds: int = 3, table_size: int = 2, budget: int = 8000,
        tau_budget: int = 1000) -> dict[str, list[DesignRun]]:
    from rich.table import Table

    results: dict[str, list[DesignRun]] = {d: [] for d in DESIGNS}
    for seed in range(1, seeds + 1):
        for design in DESIGNS:
            results[design].append(run_design(design, seed, table_size, budget, tau_budget))
    table = Table(title=f"ratings: counter with {', '.join(f'{e:.0%}' for e in EPSILONS)} random "
                        f"moves, {table_size} seats, {budget:,} matches x {seeds} master seeds (medians)")
    for col in ("design", f"tau at {tau_budget} matches", "matches to separate, projected",
                "first separated at", "seconds"):
        table.add_column(col, justify="left" if col == "design" else "right")
    # the true gaps, as well as they can be known: one fit over every match of every run
    names = [f"counter-{round(e * 100)}" for e in EPSILONS]
    pooled = fit([o for runs in results.values() for r in runs for o in r.outcomes], names)
    gaps = [pooled.theta[k] - pooled.theta[k + 1] for k in range(len(names) - 1)]
    for runs in results.values():
        for r in runs:
            r.projected = project(r, gaps)
    medians = {}
    for design, runs in results.items():
        tau = statistics.median(r.tau for r in runs)
        projected = statistics.median(r.projected for r in runs)
        seen = [r.separated_at for r in runs if r.separated_at is not None]
        medians[design] = (tau, projected)
        table.add_row(design, f"{tau:.2f}", f"{projected:,.0f}",
                      (f"{statistics.median(seen):,.0f}" if seen else "-") + f" ({len(seen)}/{len(runs)} runs)",
                      f"{sum(r.seconds for r in runs):.0f}")
    console.print(table)
    plain, dup, crn = (medians[d] for d in DESIGNS)
    console.print(f"duplicate deals need {plain[1] / dup[1]:.2f} x fewer matches than plain; "
                  f"with common bot seeds {plain[1] / crn[1]:.2f} x", highlight=False)
    console.print(f"ratings: tau {crn[0]:.2f} duplicate, {plain[0]:.2f} plain; "
                  f"matches to separate {crn[1]:.0f} duplicate, {plain[1]:.0f} plain", highlight=False)
    return results
