"""counter: card counting.

The cards this seat has not seen (the deck, minus its hand, the discard pile since the
last deal or reshuffle, and hands laid face up) are what the other hands are drawn from.
For each legal card it estimates the chance that the next seat holds no playable card
after it (a hypergeometric draw of that seat's hand size from the unseen cards) and
plays the card most likely to make the next seat lose, keeping deflectors for owed pairs
and, all else equal, the total low.

``--epsilon P`` (or ONO99_EPSILON) plays a uniformly random legal card with probability P,
which makes a family of bots of known strength order for the ratings benchmark.
"""

import argparse
import os
import sys

from collections import Counter
from math import comb

from ono99.bot import Bot, run

MODERN_DECK = {"0": 8, **{str(v): 6 for v in range(1, 10)}, "10": 10, "99": 10, "R": 10,
               "-10": 10, "P2": 10}
CLASSIC_DECK = {**{str(v): 3 for v in range(2, 10)}, "10": 10, "H": 4, "R": 6, "-10": 4,
                "DP": 2, "99": 4}
NUMBERS = {str(v): v for v in range(11)}
FORCING = {"P2", "DP"}


class CounterBot(Bot):
    name = "counter"

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
        rules = view.match.rules
        ruleset = rules.ruleset
        modern = ruleset == "modern"
        deflectors = {"R", "P2"} if modern else {"R", "H"}
        if view.owed == 2:
            for card in legal:
                if card in deflectors:
                    return card
        if len(legal) == 1:
            return legal[0]
        unseen = self.unseen(view, MODERN_DECK if modern else CLASSIC_DECK)
        pool = sum(unseen.values())
        seats = view.seats
        best, best_score = legal[0], None
        for card in legal:
            total = self.total_after(card, view.total, ruleset)
            nxt = view.next_seat() if card != "R" or sum(s.in_round for s in seats) == 2 \
                else self.reverse_next(view)
            size = seats[nxt].hand_size or 4
            owes_two = card in FORCING or (view.owed == 2 and card in deflectors)
            safe = sum(n for c, n in unseen.items()
                       if self.playable(c, total, rules, owes_two and c == "DP"))
            p_stuck = self.stuck_chance(unseen, pool, safe, size, modern)
            if owes_two:  # two cards to find: roughly, stuck on either
                p_stuck = 1 - (1 - p_stuck) ** 1.7
            keep = 0.02 if card in deflectors or card in FORCING or card == "-10" else 0.0
            score = (p_stuck - keep, -total)
            if best_score is None or score > best_score:
                best, best_score = card, score
        return best

    @staticmethod
    def stuck_chance(unseen, pool, safe, size, modern):
        """The chance that a hand of ``size`` drawn from the ``pool`` unseen cards holds
        none of the ``safe`` ones. In modern, a hand of four 99s is not stuck: its seat
        plays them together and draws four more."""
        if pool < size:
            return 0.0
        stuck = comb(pool - safe, size)
        if modern and size == 4:
            stuck -= comb(unseen.get("99", 0), 4)
        return stuck / comb(pool, size)

    @staticmethod
    def total_after(card, total, ruleset):
        if card in NUMBERS:
            return total + NUMBERS[card]
        if card == "-10":
            return max(0, total - 10) if ruleset == "modern" else total - 10
        if card == "99" and ruleset == "classic-set99":
            return 99
        return total

    @staticmethod
    def playable(card, total, rules, opening_pair_dp):
        if card in NUMBERS:
            return total + NUMBERS[card] <= rules.limit
        if card == "99":
            if rules.ruleset == "classic-set99":
                return rules.limit >= 99
            if rules.ruleset == "classic":
                return rules.options.get("ninety_nine_on_zero") == "true" and total % 10 == 0
            return False
        if opening_pair_dp:
            return False
        return True

    @staticmethod
    def reverse_next(view):
        seats = view.seats
        n = len(seats)
        s = view.seat
        for _ in range(n):
            s = (s - view.direction) % n
            if seats[s].in_round:
                return s
        return s

    @staticmethod
    def unseen(view, deck):
        counts = Counter(deck)
        counts.subtract(view.hand)
        counts.subtract(view.match.discard_pile())
        for info in view.seats:
            counts.subtract(info.revealed)
        return {c: n for c, n in counts.items() if n > 0}


def main(argv=None):
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--epsilon", type=float, default=float(os.environ.get("ONO99_EPSILON", 0)))
    args, rest = p.parse_known_args(argv)
    return run(CounterBot(args.epsilon), rest)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
