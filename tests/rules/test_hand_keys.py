"""A hand is kept as one int key (each card's count a digit): the hands a game shows, and
the scripted deals whose hands a key could not hold."""

from __future__ import annotations

import random

import pytest

from arena.rules import Deal, Game, ScenarioError, make_config, parse_cards


def test_hands_are_sorted_lists_a_caller_cannot_change_the_game_through():
    game = Game.new("modern", None, 4, seed=5)
    rng = random.Random(5)
    while not game.finished:
        hands = game.hands
        for seat, hand in enumerate(hands):
            assert hand is None or (isinstance(hand, list) and hand == sorted(hand))
            assert list(game.hand(seat)) == (hand or [])
        assert list(game.view(game.to_act).hand) == hands[game.to_act]
        hands[game.to_act].append(99)                  # new lists each time
        hands[game.to_act - 1] = None
        assert game.hands[game.to_act] == list(game.hand(game.to_act))
        assert game.hands[game.to_act - 1] is not None or not game.in_game[game.to_act - 1]
        game.play(game.to_act, rng.choice(game.legal_cards()))


def test_long_hands_play_while_no_card_has_more_copies_than_a_digit_holds():
    config = make_config("classic", None, 2)
    ten = parse_cards(["10"] * 10)
    hands = [ten + parse_cards(["-10", "R"]), parse_cards(["2", "3", "4", "5", "6", "7"])]
    game = Game.from_deals(config, [Deal(hands, parse_cards(["9"] * 3))],
                           then_seed=1)
    assert game.hand(0) == tuple(sorted(hands[0]))
    game.play(game.to_act, game.legal_cards()[0])
    assert sum(len(h) for h in game.hands if h) == 18  # each hand keeps its size


def test_a_deal_whose_long_hand_could_hold_eleven_copies_of_a_card_is_refused():
    config = make_config("classic", None, 2)
    hands = [parse_cards(["10"] * 10 + ["R"]), parse_cards(["2", "3", "4", "5"])]
    with pytest.raises(ScenarioError, match=r"a hand of 11 cards and 11 copies of 10"):
        Game.from_deals(config, [Deal(hands, parse_cards(["10"]))])


def test_short_hands_may_be_dealt_from_a_pile_of_many_copies():
    # hands keep their size, so a 4-card hand never holds more than 4 of a card
    config = make_config("modern", None, 2)
    hands = [parse_cards(["0", "0", "0", "1"]), parse_cards(["0", "2", "3", "4"])]
    game = Game.from_deals(config, [Deal(hands, parse_cards(["0"] * 20))], then_seed=2)
    for _ in range(12):
        game.play(game.to_act, game.legal_cards()[0])
    assert all(h is None or len(h) == 4 for h in game.hands)
