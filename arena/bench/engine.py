"""``arena bench engine``: random legal games in-process, views built at every decision.

Measures what the referee pays per decision: building the acting seat's view (as it
must, to send it), reading its legal cards, and applying the chosen card.

With ``--rlcard``, RLCard's bare UNO engine (``rlcard.games.uno.game.UnoGame``, 4
players, driven directly: no environment wrapper, no state encoding beyond what its
``step`` does) is measured in the same run as ours at modern 4 seats, in alternating
short slices, so that load from other work on a shared machine falls on both alike; the
ratio of the two is the figure to compare across machines, not either rate alone.
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
    return _play_ours(ruleset, config, random.Random(seed).random, seed, seconds)


def _play_ours(ruleset: str, config, uniform, first_seed: int,
               seconds: float) -> EngineFigure:
    """Random legal games on seeds from ``first_seed`` for about ``seconds`` (whole games).

    The bot's side of a decision is one uniform pick, ``legal[int(uniform() * n)]`` (one
    C call), and RLCard's loop picks the same way, so both sides pay the same for it."""
    decisions = games = 0
    next_seed = first_seed
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        game = Game.from_config(config, next_seed)
        next_seed += 1
        while not game.finished:
            seat = game.to_act
            legal = game.view(seat).legal
            game.play(seat, legal[int(uniform() * len(legal))])
            decisions += 1
        games += 1
        if not games % 16 and time.perf_counter() >= deadline:
            break
    return EngineFigure(ruleset, config.seats, decisions, games, time.perf_counter() - start)


RLCARD_MISSING = ("--rlcard needs RLCard's UNO engine, which is not installed here: "
                  "pip install rlcard (it needs numpy)")


def rlcard_available() -> bool:
    """Whether RLCard's UNO engine can be imported (it needs numpy)."""
    try:
        import rlcard.games.uno.game  # noqa: F401
    except ImportError:
        return False
    return True


def _play_rlcard(game, uniform, seconds: float) -> EngineFigure:
    """RLCard's bare UNO engine: init_game, then get_legal_actions and step with a
    uniformly random legal action until is_over, for about ``seconds`` (whole games).
    A decision is one step, as one play is one of ours (a UNO draw is a decision too)."""
    decisions = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        game.init_game()
        while not game.is_over():
            legal = game.get_legal_actions()
            game.step(legal[int(uniform() * len(legal))])
            decisions += 1
        games += 1
        if not games % 4 and time.perf_counter() >= deadline:
            break
    return EngineFigure("rlcard-uno", game.num_players, decisions, games,
                        time.perf_counter() - start)


def _add(a: EngineFigure | None, b: EngineFigure) -> EngineFigure:
    if a is None:
        return b
    return EngineFigure(a.ruleset, a.seats, a.decisions + b.decisions, a.games + b.games,
                        a.seconds + b.seconds)


def compare_rlcard(seconds: float, slices: int = 6,
                   seed: int = 0) -> tuple[EngineFigure, EngineFigure]:
    """Ours (modern, 4 seats) and RLCard's UNO (4 players), each for about ``seconds`` in
    all, cut into ``slices`` slices played alternately (ours first in even slices, RLCard
    first in odd ones), so that drift in the machine's load does not favour either."""
    import numpy as np
    from rlcard.games.uno.game import UnoGame

    config = make_config("modern", None, 4)
    uniform = random.Random(seed).random
    uno = UnoGame(num_players=4)
    uno.np_random = np.random.RandomState(seed)   # its dealer and round draw from this
    uno_uniform = random.Random(seed + 1).random
    ours = theirs = None
    next_seed = seed
    part = seconds / slices
    for k in range(slices):
        for side in ((0, 1) if k % 2 == 0 else (1, 0)):
            if side == 0:
                fig = _play_ours("modern", config, uniform, next_seed, part)
                next_seed += fig.games
                ours = _add(ours, fig)
            else:
                theirs = _add(theirs, _play_rlcard(uno, uno_uniform, part))
    return ours, theirs


def run(seconds: float, console, rlcard: bool = False) -> list[EngineFigure]:
    """Measure every ruleset at 2, 4 and 8 seats; print a table and the summary line.
    With ``rlcard``, then measure ours (modern, 4 seats) against RLCard's UNO, alternated,
    and end with both rates and their ratio."""
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
    if not rlcard:
        console.print(f"engine: {main.decisions_per_second:.0f} decisions/s (modern, 4 seats)",
                      highlight=False)
        return figures
    # the ratio comes from its own alternated run, not from the table's row
    ours, theirs = compare_rlcard(seconds * 3)
    figures += [ours, theirs]
    console.print(f"then ours and RLCard's UNO (4 players, random legal moves), {seconds * 3:g} s "
                  "each in all, in 6 alternated slices: the line below comes from that run",
                  highlight=False)
    ratio = ours.decisions_per_second / theirs.decisions_per_second
    console.print(f"engine: {ours.decisions_per_second:.0f} decisions/s (modern, 4 seats) = "
                  f"{ratio:.2f} x RLCard UNO ({theirs.decisions_per_second:.0f} decisions/s)",
                  highlight=False)
    return figures
