"""Game.from_state: a game rebuilt from its state plays on exactly as the original, and a
state whose cards do not add up, or that cannot be, is refused with a reason."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.games import configs

from arena.rules import Deal, Game, ScenarioError, make_config
from arena.rules.cards import CODES
from arena.rules.events import DEAL, RESHUFFLE

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def scripted(config, seed: int) -> Game:
    """A game whose first deal is scripted (random) and whose draw pile is ordered: its
    reshuffles and later rounds come from ``Random(seed)``, as from_state's do."""
    rng = random.Random(seed ^ 0x5EED)
    pile = list(config.ruleset.deck)
    rng.shuffle(pile)
    hands = [[pile.pop() for _ in range(4)] for _ in range(config.seats)]
    return Game.from_deals(config, [Deal(hands, pile)], then_seed=seed)


def state_of(game: Game) -> dict:
    """Everything from_state takes, read from a live game."""
    revealed = [c for h in game.revealed.values() for c in h]
    out = list(game.out_of_play)
    for c in revealed:
        out.remove(c)
    return dict(
        hands=game.hands, draw=list(reversed(game.draw)), to_act=game.to_act,
        discard=game.discard, total=game.total, direction=game.direction, owed=game.owed,
        played_99=game.played_99, in_round=game.in_round, revealed=game.revealed,
        out_of_play=out, tokens=game.tokens, scores=game.scores, round=game.round,
        dealer=game.dealer, plays=game.plays, left=game._left_ranking(), events=game.events)


def step(game: Game, rng: random.Random) -> None:
    """One random decision; now and then a forfeit (as the referee does for a failing bot)."""
    if rng.random() < 0.01:
        game.forfeit(rng.choice([s for s in range(game.seats) if game.in_game[s]]))
    else:
        game.play(game.to_act, rng.choice(game.legal_cards()))


def public(game: Game):
    return (game.spectator_view().to_dict(), [game.view(s).to_dict() for s in range(game.seats)],
            game.legal_cards(), game.over_limit, game.outcome)


@SETTINGS
@given(config=configs(), seed=st.integers(0, 2**32), steps=st.integers(0, 300))
def test_a_game_rebuilt_from_its_state_plays_on_as_the_original(config, seed, steps):
    game = scripted(config, seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if game.finished:
            return
        step(game, rng)
    if game.finished:
        return
    # the card source of both is Random(seed) only while the original has not used it yet
    pristine = not any(e[0] == RESHUFFLE or (e[0] == DEAL and e[1] > 1) for e in game.events)
    twin = Game.from_state(config, **state_of(game), seed=seed)
    assert public(twin) == public(game)
    while not game.finished:
        before = len(game.events)
        step(game, rng)
        if not pristine and {e[0] for e in game.events[before:]} & {RESHUFFLE, DEAL}:
            return                              # the card sources differ from here on
        last = game.decisions()[-1]
        if last[0] == "play":
            twin.play(last[1], last[2])
        else:
            twin.forfeit(last[1])
        assert public(twin) == public(game)


def test_cards_that_do_not_add_up_are_refused_by_name():
    config = make_config("modern", seats=2)
    game = Game.from_config(config, 1)
    state = state_of(game)
    state["draw"] = state["draw"] + [CODES["99"]]
    with pytest.raises(ScenarioError, match="do not add up to the modern deck: 99 too many, "
                                            "nothing missing"):
        Game.from_state(config, **state)


@pytest.mark.parametrize("change, message", [
    (dict(to_act=5), "to_act=5 is not a seat in the round"),
    (dict(total=120), "total 120 is above the limit 98"),
    (dict(owed=3), "owed=3"),
    (dict(hands=[[]]), "1 hands are given for 2 seats"),
])
def test_an_impossible_state_is_refused(change, message):
    config = make_config("modern", seats=2)
    state = state_of(Game.from_config(config, 1)) | change
    with pytest.raises(ScenarioError, match=message):
        Game.from_state(config, **state)


def test_a_seat_with_no_playable_card_loses_at_once():
    config = make_config("modern", seats=3)
    deck = list(config.ruleset.deck)
    hands = [[CODES["9"]] * 4, [CODES["1"]] * 4, [CODES["R"]] * 4]
    for hand in hands:
        for c in hand:
            deck.remove(c)
    game = Game.from_state(config, hands=hands, draw=deck, to_act=0, total=95)
    assert game.in_game == [False, True, True] and game.revealed == {0: (CODES["9"],) * 4}
    assert game.to_act == 1


def test_random_draws_pick_from_the_pile_the_same_way_for_the_same_seed():
    """``random_draws``: the pile's order is not given; each draw is a random card of it,
    the same for the same seed (a search's common random numbers), other seeds differing."""
    config = make_config("modern", None, 2)
    deck = sorted(config.ruleset.deck)
    hands = [deck[:4], deck[4:8]]                 # -10s: playable whatever is drawn
    # the pile only number cards, every other card out of play: a draw from anywhere
    # but the pile shows
    pile = [c for c in deck[8:] if CODES["0"] <= c <= CODES["10"]]
    aside = [c for c in deck[8:] if not CODES["0"] <= c <= CODES["10"]]

    def first_draws(seed: int) -> list[int]:
        game = Game.from_state(config, hands=hands, draw=pile, out_of_play=aside, to_act=0,
                               seed=seed, random_draws=True)
        drawn = []
        for _ in range(6):
            seat = game.to_act
            before = list(game.hands[seat])
            card = game.legal_cards()[0]
            game.play(seat, card)
            before.remove(card)
            after = list(game.hands[seat])
            for c in before:
                after.remove(c)
            drawn += after
        return drawn

    runs = {seed: first_draws(seed) for seed in range(20)}
    assert all(first_draws(seed) == runs[seed] for seed in (0, 7))
    assert all(all(c in pile for c in drawn) for drawn in runs.values())
    assert len({tuple(d) for d in runs.values()}) > 15
