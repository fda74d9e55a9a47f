"""``arena bench engine``: random legal games in-process, views built at every decision.

Measures what the referee pays per decision: building the acting seat's view (as it
must, to send it), reading its legal cards, and applying the chosen card.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from arena.rules.game import Game
from arena.rules.rulesets import RULESETS, make_config

SEAT_COUNTS = (2, 4, 8)


@dataclass(frozen=True)
class EngineFigure:
    """Throughput of one ruleset at one seat count."""

    ruleset: str
    seats: int
    decisions: int
    games: int
    seconds: float

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds


def measure(ruleset: str, seats: int, seconds: float, seed: int = 0) -> EngineFigure:
    """Play random games of ``ruleset`` at ``seats`` for about ``seconds``."""
    config = make_config(ruleset, None, seats)
    getrandbits = random.Random(seed).getrandbits
    decisions = games = 0
    next_seed = seed
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        game = Game.from_config(config, next_seed)
        next_seed += 1
        while not game.finished:
            seat = game.to_act
            legal = game.view(seat).legal
            n = len(legal)
            i = getrandbits(3)            # uniform pick: at most 5 distinct legal cards
            while i >= n:
                i = getrandbits(3)
            game.play(seat, legal[i])
            decisions += 1
        games += 1
        if not games % 16 and time.perf_counter() >= deadline:
            break
    return EngineFigure(ruleset, seats, decisions, games, time.perf_counter() - start)


def run(seconds: float, console) -> list[EngineFigure]:
    """Measure every ruleset at 2, 4 and 8 seats; print a table and the summary line."""
    from rich.table import Table

    figures = []
    table = Table(title=f"engine: random legal games, {seconds:g} s each, views built every decision")
    for col in ("ruleset", "seats", "decisions/s", "games/s", "decisions/game"):
        table.add_column(col, justify="left" if col == "ruleset" else "right")
    for name in RULESETS:
        for seats in SEAT_COUNTS:
            fig = measure(name, seats, seconds)
            figures.append(fig)
            table.add_row(name, str(seats), f"{fig.decisions_per_second:,.0f}",
                          f"{fig.games_per_second:,.0f}", f"{fig.decisions / fig.games:.0f}")
    console.print(table)
    main = next(f for f in figures if f.ruleset == "modern" and f.seats == 4)
    console.print(f"engine: {main.decisions_per_second:.0f} decisions/s (modern, 4 seats)",
                  highlight=False)
    return figures
