"""A second, independent model of RULES.md, written from its text in the fourteenth review,
against which the engine replays whole games state by state.

The model deals its own cards (full decks, or small random decks that start at a random
total, so that totals at the limit, reshuffles of a few cards, four 99s and hands without
a playable card come often), picks a random decision among the cards it finds legal, and
does everything the rules do on their own. The engine replays the same deals, reshuffle
orders and decisions (``Game.from_deals``); after the set-up and after every decision the
legal cards and every fact a conformance vector can check must agree: total, direction,
seat to act, cards owed, hands, pile sizes, seats in the game and in the round, tokens,
scores, round, end and ranking. Unlike ``test_rules_oracle``, it checks the automatic parts
too (draws, reshuffles, losses, eliminations, new rounds, scoring, the end).
"""

from __future__ import annotations

import random

import pytest

from arena.rules import Deal, Game, make_config
from arena.rules.cards import CLASSIC_DECK, CODES, MODERN_DECK, TOKENS

DECKS = {"modern": MODERN_DECK, "classic": CLASSIC_DECK, "classic-set99": CLASSIC_DECK}
SPECIAL = {"R", "P2", "DP", "H"}


def _points(tok: str) -> int:
    return 20 if tok == "99" else 15 if tok in SPECIAL or tok == "-10" else int(tok)


class Model:
    """RULES.md, plainly: hands as lists of tokens, the draw pile top card first."""

    def __init__(self, ruleset, options, n, rng, dealer, small):
        self.rs, self.o, self.n, self.rng, self.small = ruleset, dict(options), n, rng, small
        self.limit = self.o.get("max_total", 98 if ruleset == "modern" else 99)
        self.max_plays = self.o.get("max_plays", 1000)
        self.points = ruleset != "modern" and self.o.get("scoring", "tokens") == "points"
        tokens_mode = ruleset != "modern" and not self.points
        self.on_zero = self.o.get("ninety_nine_on_zero", False)
        self.forcing = "P2" if ruleset == "modern" else "DP"
        self.deflect = {"R", "P2"} if ruleset == "modern" else {"R", "H"}
        self.in_game = [True] * n
        self.tokens = [self.o.get("tokens", 3) if tokens_mode else 0] * n
        self.scores = [0] * n
        self.round = 0
        self.dealer = n - 1 if dealer is None else dealer
        self.left = []          # groups of seats that left the game, in the order they left
        self.finished = False
        self.ranking = None
        self.deals, self.reshuffles = [], []
        self.new_round(first=True)

    def next_seat(self, seat, step, pool):
        s = (seat + step) % self.n
        while not pool[s]:
            s = (s + step) % self.n
        return s

    def new_round(self, first=False):
        self.round += 1
        if not first:
            self.dealer = self.next_seat(self.dealer, 1, self.in_game)
        deck = [TOKENS[c] for c in DECKS[self.rs]]
        self.rng.shuffle(deck)
        total = 0
        if self.small:
            kinds = sorted(set(deck)) + ["99"] * 6 + [self.forcing] * 2
            deck = [self.rng.choice(kinds)
                    for _ in range(4 * sum(self.in_game) + self.rng.randint(1, 6))]
            total = self.rng.randint(0 if self.rs == "modern" else -25, self.limit)
        self.hands = [[deck.pop() for _ in range(4)] if self.in_game[s] else None
                      for s in range(self.n)]
        self.draw = deck
        self.deals.append(Deal([None if h is None else [CODES[t] for t in h] for h in self.hands],
                               [CODES[t] for t in deck], total))
        self.discard, self.total, self.direction, self.owed = [], total, 1, 1
        self.played_99, self.plays = False, 0
        self.in_round = list(self.in_game)
        self.to_act = self.next_seat(self.dealer, 1, self.in_game)

    def draw_one(self, seat):
        if not self.draw:   # the whole discard pile, the card just played included
            self.draw, self.discard = self.discard, []
            self.rng.shuffle(self.draw)
            self.reshuffles.append([CODES[t] for t in self.draw])
        self.hands[seat].append(self.draw.pop(0))

    def after(self, tok, limited=True):
        """The total after ``tok`` now, or None if it may not be played."""
        t = self.total
        if tok == "99":
            if self.rs == "modern":
                return None
            if self.rs == "classic-set99":
                a = 99
            elif self.on_zero and t % 10 == 0 and not self.played_99:
                a = t
            else:
                return None
        elif tok == "-10":
            a = max(0, t - 10) if self.rs == "modern" else t - 10
        elif tok == "DP" and self.owed == 2:
            return None
        elif tok in SPECIAL:
            a = t
        else:
            a = t + int(tok)
        return None if limited and a > self.limit else a

    def legal(self, limited=True):
        return sorted({c for c in self.hands[self.to_act] if self.after(c, limited) is not None})

    def playing(self):
        return [g and r for g, r in zip(self.in_game, self.in_round)]

    def pass_turn(self, seat):
        self.to_act = self.next_seat(seat, self.direction, self.playing())
        self.owed, self.played_99 = 1, False

    def finish(self, ranking):
        # nobody owes anything once the game is over (RULES.md: the obligation dies with it)
        self.finished, self.to_act, self.owed = True, None, 1
        self.ranking = [sorted(g) for g in ranking]

    def left_ranking(self):
        return [g for block in reversed(self.left) for g in block]

    def eliminate(self, seat):
        self.in_game[seat] = self.in_round[seat] = False
        self.hands[seat] = None

    def one_left(self):
        alive = [s for s in range(self.n) if self.in_game[s]]
        if len(alive) > 1:
            return False
        self.finish(([alive] if alive else []) + self.left_ranking())
        return True

    def by_score(self, seats):
        groups = {}
        for s in sorted(seats, key=lambda s: self.scores[s]):
            groups.setdefault(self.scores[s], []).append(s)
        return list(groups.values())

    def end_points_round(self):
        for s in range(self.n):
            if self.in_game[s]:
                self.scores[s] += (sum(_points(c) for c in self.hands[s])
                                   + (0 if self.in_round[s] else 25))
        target = self.o.get("points_target", 200)
        alive = [s for s in range(self.n) if self.in_game[s]]
        reached = [s for s in alive if self.scores[s] >= target]
        if reached and self.o.get("points_mode", "elimination") == "lowest":
            return self.finish(self.by_score(alive) + self.left_ranking())
        if reached:
            for s in reached:
                self.eliminate(s)
            self.left.append(self.by_score(reached))
            if len(reached) == len(alive):
                return self.finish(self.left_ranking())
            if self.one_left():
                return
        self.new_round()

    def out_of_round(self, seat):
        self.in_round[seat] = False
        if sum(self.playing()) == 1:
            self.end_points_round()
        else:
            self.pass_turn(seat)

    def settle(self):
        """What the rules do on their own, until a seat has a choice or the game is over."""
        while not self.finished:
            seat, hand = self.to_act, self.hands[self.to_act]
            if self.rs == "modern" and hand == ["99"] * 4:
                self.discard += hand
                self.hands[seat] = []
                self.plays += 1
                for _ in range(4):
                    self.draw_one(seat)
                if self.plays >= self.max_plays:
                    self.finish([[s for s in range(self.n) if self.in_game[s]]] + self.left_ranking())
                elif self.owed == 2:
                    self.owed = 1
                else:
                    self.pass_turn(seat)
            elif self.legal():
                return
            elif self.points:
                if self.legal(limited=False):
                    return
                self.out_of_round(seat)
            elif self.rs == "modern":
                self.eliminate(seat)
                self.left.append([[seat]])
                if not self.one_left():
                    self.pass_turn(seat)
            else:
                if self.tokens[seat] > 0:
                    self.tokens[seat] -= 1
                else:
                    self.eliminate(seat)
                    self.left.append([[seat]])
                if not self.one_left():
                    self.new_round()

    def choices(self):
        return self.legal() or self.legal(limited=False)

    def play(self, seat, tok):
        past_limit = not self.legal()
        after = self.after(tok, limited=False)
        self.hands[seat].remove(tok)
        self.discard.append(tok)
        if not past_limit:      # past the limit, the total returns to its value before
            self.total = after
            self.played_99 = self.played_99 or (tok == "99" and self.rs == "classic")
        self.plays += 1
        self.draw_one(seat)
        if self.plays >= self.max_plays:
            self.finish([[s for s in range(self.n) if self.in_game[s]]] + self.left_ranking())
        elif past_limit:
            self.out_of_round(seat)
        elif self.owed == 2 and tok not in self.deflect:
            self.owed = 1
        else:
            owes = 2 if tok == self.forcing or (self.owed == 2 and tok in self.deflect) else 1
            if tok == "R" and sum(self.playing()) > 2:
                self.direction = -self.direction
            self.pass_turn(seat)
            self.owed = owes
        self.settle()

    def facts(self):
        return {
            "total": self.total, "direction": self.direction, "to_act": self.to_act,
            "owed": self.owed,
            "hands": [None if h is None else sorted(h) for h in self.hands],
            "draw_size": len(self.draw), "discard_size": len(self.discard),
            "in_game": list(self.in_game), "in_round": self.playing(),
            "tokens": list(self.tokens), "scores": list(self.scores), "round": self.round,
            "finished": self.finished, "ranking": self.ranking,
        }


def engine_facts(game: Game) -> dict:
    return {
        "total": game.total, "direction": game.direction,
        "to_act": None if game.finished else game.to_act,
        "owed": game.owed,
        "hands": [None if h is None else sorted(TOKENS[c] for c in h) for h in game.hands],
        "draw_size": len(game.draw), "discard_size": len(game.discard),
        "in_game": list(game.in_game),
        "in_round": [g and r for g, r in zip(game.in_game, game.in_round)],
        "tokens": list(game.tokens), "scores": list(game.scores), "round": game.round,
        "finished": game.finished,
        "ranking": None if game.outcome is None else [sorted(g) for g in game.outcome.ranking],
    }


VARIANTS = [
    ("modern", {}), ("modern", {"max_total": 99}), ("modern", {"max_plays": 30}),
    ("classic", {}), ("classic", {"ninety_nine_on_zero": True}), ("classic", {"tokens": 0}),
    ("classic", {"max_total": 98, "ninety_nine_on_zero": True, "tokens": 1}),
    ("classic", {"scoring": "points", "points_target": 80}),
    ("classic", {"scoring": "points", "ninety_nine_on_zero": True, "points_mode": "lowest",
                 "points_target": 60}),
    ("classic", {"scoring": "points", "points_target": 40, "max_plays": 50}),
    ("classic-set99", {}), ("classic-set99", {"max_total": 98}),
    ("classic-set99", {"tokens": 1, "max_plays": 40}),
    ("classic-set99", {"scoring": "points", "max_total": 98, "points_target": 70}),
    ("classic-set99", {"scoring": "points", "points_target": 50, "points_mode": "lowest"}),
]


@pytest.mark.parametrize("ruleset, options", VARIANTS, ids=str)
@pytest.mark.parametrize("small", [False, True], ids=["full-deck", "small-decks"])
def test_the_engine_plays_every_game_as_the_model_does(ruleset, options, small):
    for seats in range(2, 9):
        for seed in range(3):
            rng = random.Random(f"{ruleset}{options}{seats}{seed}{small}")
            dealer = None if seed == 0 else rng.randrange(seats)
            model = Model(ruleset, options, seats, rng, dealer, small)
            model.settle()
            decisions, states = [], [model.facts()]
            while not model.finished:
                choices = model.choices()
                card = (max(choices, key=lambda t: t.isdigit() and int(t)) if rng.random() < 0.4
                        else rng.choice(choices))
                decisions.append((model.to_act, card, choices))
                model.play(model.to_act, card)
                states.append(model.facts())
            game = Game.from_deals(make_config(ruleset, options, seats), model.deals,
                                   model.reshuffles, dealer)
            where = (seats, seed, dealer)
            assert engine_facts(game) == states[0], where
            for step, (seat, card, choices) in enumerate(decisions, start=1):
                assert sorted(TOKENS[c] for c in game.legal_cards()) == choices, (where, step)
                game.play(seat, CODES[card])
                assert engine_facts(game) == states[step], (where, step, seat, card)
