"""greedy: keep the total as low as possible; save deflecting cards for when it owes two.

``--epsilon P`` (or ONO99_EPSILON) plays a uniformly random legal card with probability P,
which makes a family of bots of known strength order for the ratings benchmark.
"""

import argparse
import os
import sys

from ono99.bot import Bot, run

DEFLECTORS = {"modern": {"R", "P2"}}          # classic rulesets: R and H
FORCING = {"P2", "DP"}
NUMBERS = {str(v): v for v in range(11)}


def total_after(card: str, total: int, ruleset: str) -> int:
    """The total after ``card`` (99s: classic-set99 sets 99; elsewhere +0)."""
    if card in NUMBERS:
        return total + NUMBERS[card]
    if card == "-10":
        return max(0, total - 10) if ruleset == "modern" else total - 10
    if card == "99" and ruleset == "classic-set99":
        return 99
    return total


class GreedyBot(Bot):
    name = "greedy"

    def __init__(self, epsilon: float = 0.0) -> None:
        super().__init__()
        self.epsilon = epsilon

    def choose(self, view):
        legal = view.legal
        # draw the coin and the pick every turn, whatever epsilon is: bots given the same
        # seed then make their random moves at the same moments (common random numbers)
        coin, pick = self.random.random(), self.random.random()
        if coin < self.epsilon:
            return legal[int(pick * len(legal))]
        ruleset = view.match.rules.ruleset
        deflectors = DEFLECTORS.get(ruleset, {"R", "H"})
        if view.owed == 2:
            for card in legal:
                if card in deflectors:
                    return card
        plain = [c for c in legal if c not in deflectors and c not in FORCING]
        pool = plain or legal
        # lowest resulting total; among equals, the card that is least useful to keep
        return min(pool, key=lambda c: (total_after(c, view.total, ruleset), c in FORCING))


def main(argv=None):
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--epsilon", type=float, default=float(os.environ.get("ONO99_EPSILON", 0)))
    args, rest = p.parse_known_args(argv)
    return run(GreedyBot(args.epsilon), rest)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
