"""Random games checked against RULES.md recomputed from its text, independently of the
engine's legal-cards table and turn passing (an audit's oracle).

At every decision: the legal cards (a card is playable when its ruleset allows it now
and the total after it is at most the limit; in ``points`` scoring, a seat with none must
play a card that would be playable with no limit). After every plain play (nothing
automatic followed): the total, the direction (a reverse flips it unless two seats are
still playing), the seat to act and what it owes (a pair's first card keeps the seat
unless it deflects; a forcing card, or a deflecting first card, makes the next seat owe
two). At every new round: the dealer is the next seat still in the game, and the seat
after it acts first. At the end: the ranking (the seats still in, then those that left,
latest first; ``points`` eliminations after one round ordered by score; ``lowest``: all
seats by score). At every ``points`` round end: each seat's score grows by its hand's
points and 25 if it was out of the round.
"""

from __future__ import annotations

import random

import pytest

from arena.rules import Game
from arena.rules.cards import CODES, TOKENS

R, P2, DP, H, M10, N99 = (CODES[t] for t in ("R", "P2", "DP", "H", "-10", "99"))
SEEDS = range(12)


def _after(ruleset, card, total, owed, played_99, on_zero):
    """The total after ``card``, or None when the rules forbid it now (limit aside)."""
    tok = TOKENS[card]
    if tok == "-10":
        return max(0, total - 10) if ruleset == "modern" else total - 10
    if tok == "99":
        if ruleset == "modern":
            return None
        if ruleset == "classic-set99":
            return 99
        return total if on_zero and total % 10 == 0 and not played_99 else None
    if tok.isdigit():
        return total + int(tok)
    if card == DP and owed == 2:
        return None
    return total


TURN_VARIANTS = [
    ("modern", {}), ("modern", {"max_total": 99}),
    ("classic", {}), ("classic", {"ninety_nine_on_zero": True}),
    ("classic", {"max_total": 98, "ninety_nine_on_zero": True}),
    ("classic", {"scoring": "points", "points_target": 80}),
    ("classic", {"scoring": "points", "ninety_nine_on_zero": True, "points_mode": "lowest",
                 "points_target": 60}),
    ("classic-set99", {}), ("classic-set99", {"max_total": 98}),
    ("classic-set99", {"scoring": "points", "max_total": 98, "points_target": 70}),
]


@pytest.mark.parametrize("ruleset, options", TURN_VARIANTS, ids=str)
@pytest.mark.parametrize("seats", range(2, 9))
def test_legal_cards_and_turns_follow_the_text(ruleset, options, seats):
    limit = options.get("max_total", 98 if ruleset == "modern" else 99)
    on_zero = options.get("ninety_nine_on_zero", False)
    points = options.get("scoring") == "points"
    forcing = P2 if ruleset == "modern" else DP
    deflect = {R, P2} if ruleset == "modern" else {R, H}
    for seed in SEEDS:
        game = Game.new(ruleset, options, seats, seed)
        rng = random.Random(seed)
        played_99 = False                       # a 99 already played this turn
        while not game.finished:
            seat, total, owed = game.to_act, game.total, game.owed
            afters = {c: _after(ruleset, c, total, owed, played_99, on_zero)
                      for c in set(game.hand(seat))}
            playable = {c for c, a in afters.items() if a is not None and a <= limit}
            where = (seed, [TOKENS[c] for c in game.hand(seat)], total, owed)
            if playable:
                assert set(game.legal_cards()) == playable and not game.over_limit, where
            else:
                assert points, where
                assert set(game.legal_cards()) == {c for c, a in afters.items() if a is not None}
                assert game.over_limit
            card = rng.choice(game.legal_cards())
            rnd, direction, over = game.round, game.direction, game.over_limit
            still = sum(game.in_game[s] and game.in_round[s] for s in range(seats))
            seen = len(game.events)
            game.play(seat, card)
            automatic = [e for e in game.events[seen:] if e[0] not in ("play", "draw", "reshuffle")]
            if game.finished or game.round != rnd or automatic:
                played_99 = (played_99 and not game.finished and game.round == rnd
                             and game.to_act == seat and game.owed == 1)
                continue
            assert not over
            assert game.total == afters[card]
            turned = -direction if card == R and still > 2 else direction
            assert game.direction == turned
            if owed == 2 and card not in deflect:
                assert (game.to_act, game.owed) == (seat, 1)
                played_99 = played_99 or card == N99
            else:
                nxt = (seat + turned) % seats
                while not (game.in_game[nxt] and game.in_round[nxt]):
                    nxt = (nxt + turned) % seats
                owes = 2 if card == forcing or (owed == 2 and card in deflect) else 1
                assert (game.to_act, game.owed) == (nxt, owes)
                played_99 = False


def _points(card):
    tok = TOKENS[card]
    return 20 if tok == "99" else 15 if tok in ("H", "R", "-10", "DP", "P2") else int(tok)


ROUND_VARIANTS = [
    ("modern", {}), ("modern", {"max_plays": 25}), ("classic", {}), ("classic", {"tokens": 0}),
    ("classic-set99", {"tokens": 1, "max_plays": 40}),
    ("classic", {"scoring": "points", "points_target": 60}),
    ("classic-set99", {"scoring": "points", "points_target": 50, "points_mode": "lowest"}),
]


@pytest.mark.parametrize("ruleset, options", ROUND_VARIANTS, ids=str)
@pytest.mark.parametrize("seats", range(2, 9))
def test_dealers_scores_and_rankings_follow_the_text(ruleset, options, seats):
    points = options.get("scoring") == "points"
    for seed in range(40):
        game = Game.new(ruleset, options, seats, seed)
        rng = random.Random(seed)
        dealer = seats - 1
        assert [e[2:4] for e in game.events if e[0] == "deal"][0] == (dealer, 0)
        seen = len(game.events)
        left = []                               # groups of seats that left, in order
        while not game.finished:
            hands = {s: game.hand(s) for s in range(seats) if game.in_game[s]}
            in_round, scores = list(game.in_round), list(game.scores)
            seat = game.to_act
            game.play(seat, rng.choice(game.legal_cards()))
            new, seen = game.events[seen:], len(game.events)
            for event in new:
                if event[0] == "deal" and event[1] > 1:
                    dealer = (dealer + 1) % seats
                    while not game.in_game[dealer]:
                        dealer = (dealer + 1) % seats
                    first = (dealer + 1) % seats
                    while not game.in_game[first]:
                        first = (first + 1) % seats
                    assert event[2:4] == (dealer, first)
                if event[0] == "scores":
                    for s, hand in hands.items():
                        outs = [e for e in new if e[0] == "out" and e[1] == s]
                        if s == seat or any(e[2] is not None for e in outs):
                            continue            # its hand changed: a card played and drawn
                        out = outs or not in_round[s]
                        assert event[1][s] == scores[s] + sum(map(_points, hand)) + 25 * bool(out)
            gone = [e[1] for e in new if e[0] == "eliminate"]
            if gone and points:
                by_score = {}
                for s in sorted(gone, key=lambda s: game.scores[s]):
                    by_score.setdefault(game.scores[s], []).append(s)
                left.append([sorted(g) for g in by_score.values()])
            else:
                left += [[[s]] for s in gone]
        ranking = [sorted(g) for g in game.outcome.ranking]
        if game.outcome.termination == "target_reached" and options.get("points_mode") == "lowest":
            by_score = {}
            for s in sorted(range(seats), key=lambda s: game.scores[s]):
                by_score.setdefault(game.scores[s], []).append(s)
            expected = [sorted(g) for g in by_score.values()]
        else:
            alive = [s for s in range(seats) if game.in_game[s]]
            expected = ([alive] if alive else []) + [g for blk in reversed(left) for g in blk]
        assert ranking == expected, (seed, ranking, expected)
