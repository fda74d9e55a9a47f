"""Seeded games played by a fixed policy, for ``tests/rules/test_frozen_games.py``: what
each setup's games record (events, and what the acting seat's view held at every
decision), and the command that writes the frozen copy (run it only when a rule is
meant to change):

    PYTHONPATH=tests python -m support.frozen_games > tests/rules/data/frozen_games.json
"""

from __future__ import annotations

import hashlib
import json
import random

from arena.rules import Deal, Game, make_config

#: (ruleset, options, seats): every ending, scoring and 99 rule, two to eight seats.
SETUPS = [
    ("modern", None, 2), ("modern", None, 4), ("modern", {"max_total": 99}, 8),
    ("modern", {"max_plays": 30}, 3),
    ("classic", None, 3), ("classic", {"ninety_nine_on_zero": True}, 4),
    ("classic", {"scoring": "points", "points_target": 60}, 4),
    ("classic", {"scoring": "points", "points_mode": "lowest", "max_total": 98}, 5),
    ("classic-set99", None, 5), ("classic-set99", {"scoring": "points"}, 3),
]
GAMES = 30                     # seeds 0..29 per setup, digested
WHOLE = 1                      # the first game of each setup, kept event by event


def play_out(game: Game, policy_seed: int) -> list:
    """Play ``game`` to the end: a random legal card from the acting seat's view, and
    now and then a forfeit; the record of what each decision saw and did."""
    rng = random.Random(policy_seed)
    seen = []
    while not game.finished:
        seat = game.to_act
        view = game.view(seat)
        seen.append((seat, view.hand, view.legal, view.over_limit, view.total, view.owed,
                     view.draw_size, view.discard_size, view.n_events))
        if rng.random() < 0.01:
            game.forfeit(rng.choice([s for s in range(game.seats) if game.in_game[s]]))
        else:
            game.play(seat, rng.choice(view.legal))
    return seen


def games_of(ruleset: str, options: dict | None, seats: int) -> list[tuple[list, list]]:
    """(events, views seen) of each game of a setup: seeded games, and one scripted start
    that goes on as a random game."""
    config = make_config(ruleset, options, seats)
    out = []
    for seed in range(GAMES):
        game = Game.from_config(config, seed)
        seen = play_out(game, seed + 1000)
        out.append((game.events, seen))
    deck = list(config.ruleset.deck)
    hands = [deck[4 * s:4 * s + 4] for s in range(seats)]
    game = Game.from_deals(config, [Deal(hands, deck[4 * seats:4 * seats + 5], 40)],
                           then_seed=7)
    seen = play_out(game, 7)
    out.append((game.events, seen))
    return out


def digest(items: list) -> str:
    """A short digest of a record (repr of tuples of ints, strings and None is stable)."""
    return hashlib.sha256(repr(items).encode()).hexdigest()[:32]


def frozen() -> list[dict]:
    """What the frozen copy holds, setup by setup."""
    out = []
    for ruleset, options, seats in SETUPS:
        games = games_of(ruleset, options, seats)
        out.append({
            "ruleset": ruleset, "options": options, "seats": seats,
            "events": digest([events for events, _ in games]),
            "views": digest([seen for _, seen in games]),
            "whole": [repr(events) for events, _ in games[:WHOLE]],
        })
    return out


if __name__ == "__main__":
    print(json.dumps(frozen(), indent=1))
