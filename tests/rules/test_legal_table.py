"""The legal-cards memo (game.py ``_legal_table``) is only a faster way to the same answer:
at every decision of random games the memo's legal cards are the ones computed afresh,
and the memo is shared, never copied, by clones and pickles."""

from __future__ import annotations

import pickle
import random

import pytest

from arena.rules.game import _HAND, Game

CASES = [("modern", None, 4), ("modern", {"max_total": 99}, 3), ("classic", None, 5),
         ("classic", {"scoring": "points"}, 4), ("classic", {"ninety_nine_on_zero": True}, 3),
         ("classic-set99", None, 2)]


@pytest.mark.parametrize("ruleset, options, seats", CASES)
def test_the_memo_gives_the_legal_cards_computed_afresh(ruleset, options, seats):
    # play() and _settle() each pack the lookup state; a drift between them shows here
    for seed in range(30):
        game = Game.new(ruleset, options, seats=seats, seed=seed)
        rng = random.Random(seed)
        while not game.finished:
            seat = game.to_act
            view = game.view(seat)
            assert view.hand == tuple(game.hands[seat])
            if not game.over_limit:
                assert game.legal_cards() == game._compute_legal(game.hands[seat])
            game.play(seat, rng.choice(view.legal))


def test_clones_and_pickles_share_the_memo():
    game = Game.new("classic", None, 4, seed=1)
    for _ in range(10):
        game.play(game.to_act, game.legal_cards()[0])
    for twin in (game.clone(), pickle.loads(pickle.dumps(game))):
        assert twin._legal_table is game._legal_table
        assert twin.view(twin.to_act).legal == game.view(game.to_act).legal
        while not twin.finished:
            twin.play(twin.to_act, twin.legal_cards()[-1])


def test_the_memo_holds_each_distinct_answer_once():
    # a long-running server plays millions of decisions: the memo's entries grow with the
    # (hand, state) pairs visited (50,000 after 100,000 2-seat games), so they must share
    # their tuples (about 1,500 distinct), or the memo grows by megabytes for nothing
    for seed in range(200):
        game = Game.new("modern", None, 2, seed=seed)
        rng = random.Random(seed)
        while not game.finished:
            game.play(game.to_act, rng.choice(game.legal_cards()))
    table = game._legal_table
    entries = [x for row in table.rows.values() for x in row[:_HAND] if x is not None]
    assert len(entries) > 2 * len(table.answers)       # many entries share an answer
    assert len({id(x) for x in entries}) == len(table.answers)
    assert all(table.answers[x] is x for x in entries)
