"""ismcts: determinized Monte Carlo search on the arena's rules engine.

Each iteration deals the hidden cards one way they could lie
(:class:`ono99.bot.determinize.Determinizer`, uniform over the unseen cards), picks one of
this seat's legal cards by UCB1 over the statistics gathered so far across every deal
(the information set's root: the same cards are legal in every deal), plays it on the
engine and rolls out with a fast policy until this seat's fate is known: the game
ends, this seat leaves it, or (games of several rounds) the round ends. The result is
scored from this seat's place, or its share of the remaining tokens or points headroom.
The most visited card is played.

Thinking time: ``--think-ms`` or ``ONO99_THINK_MS`` (default 50) per move, capped by the
clock the referee gives (half the move allowance plus a 1/40 of the bank). Randomness
comes from ``self.random``, which the SDK seeds from the match's bot seed.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

from ono99.bot import Bot, run
from ono99.bot.determinize import Determinizer

from arena.rules.cards import CODES, TOKENS

R, P2, DP, H = CODES["R"], CODES["P2"], CODES["DP"], CODES["H"]
DEFLECT = {"modern": frozenset({R, P2}), "classic": frozenset({R, H}),
           "classic-set99": frozenset({R, H})}
EXPLORE = 0.7            # UCB1 exploration constant (rewards are in [0, 1])


class IsmctsBot(Bot):
    name = "ismcts"

    def __init__(self, think_ms: float = 50.0) -> None:
        super().__init__()
        self.think_ms = think_ms
        self.iterations = 0           # over the bot's life, for logs and tests

    def budget(self, view) -> float:
        """Seconds to think this move: the configured time, within the clock."""
        think = self.think_ms / 1000
        if view.move_ms > 0:
            think = min(think, view.move_ms / 2000 + view.bank_ms / 40000)
        return max(think, 0.001)

    def choose(self, view):
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        deadline = time.perf_counter() + self.budget(view)
        det = Determinizer(view)
        me = view.seat
        cards = [CODES[c] for c in legal]
        deflect = DEFLECT[view.match.rules.ruleset]
        points = view.match.rules.options.get("scoring") == "points"
        visits = [0] * len(cards)
        wins = [0.0] * len(cards)
        rng = self.random
        n = 0
        while True:
            n += 1
            if n <= len(cards):
                i = n - 1
            else:
                log_n = math.log(n)
                i = max(range(len(cards)), key=lambda k: wins[k] / visits[k]
                        + EXPLORE * math.sqrt(log_n / visits[k]))
            game = det.sample(rng)
            start_round = game.round
            game.play(me, cards[i])
            value = rollout(game, me, start_round, deflect, points, rng)
            visits[i] += 1
            wins[i] += value
            if n >= len(cards) and time.perf_counter() >= deadline:
                break
        self.iterations += n
        best = max(range(len(cards)), key=lambda k: (visits[k], wins[k]))
        return TOKENS[cards[best]]


def rollout(game, me: int, start_round: int, deflect, points: bool, rng) -> float:
    """Play ``game`` on with the rollout policy until ``me``'s fate is known; its value."""
    choice = rng.choice
    while not game.finished and game.in_game[me] and game.round == start_round:
        legal = game.legal_cards()
        if len(legal) > 1:
            card = None
            if game.owed == 2:
                for c in legal:
                    if c in deflect:
                        card = c
                        break
            if card is None:
                card = choice(legal)
        else:
            card = legal[0]
        game.play(game.to_act, card)
    return value(game, me, points)


def value(game, me: int, points: bool) -> float:
    """``me``'s result in [0, 1]: from its place once the game is over or it is out (1 =
    first); in a game going on after a round, its share of what is left to lose."""
    n = game.seats
    if game.finished:
        return (n - game.outcome.places()[me]) / (n - 1)
    if not game.in_game[me]:
        return (n - 1 - sum(game.in_game)) / (n - 1)      # the seats still in rank above
    alive = [s for s in range(n) if game.in_game[s]]
    k = len(alive)
    if points:
        target = game.config.options["points_target"]
        room = {s: max(1, target - game.scores[s]) for s in alive}
    else:
        room = {s: game.tokens[s] + 1 for s in alive}
    others = sum(room[s] for s in alive if s != me) / (k - 1)
    share = room[me] / (room[me] + others)
    return ((n - k) + (k - 1) * share) / (n - 1)


def main(argv=None):
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--think-ms", type=float,
                   default=float(os.environ.get("ONO99_THINK_MS", 50)))
    args, rest = p.parse_known_args(argv)
    return run(IsmctsBot(args.think_ms), rest)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
