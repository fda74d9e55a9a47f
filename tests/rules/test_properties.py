"""Property tests over random games of every ruleset, option combination and seat count.

Each example plays one whole seeded game with a random policy that also tries illegal
plays and, now and then, forfeits a seat (as the referee does for a failing bot), and
checks the invariants after every step.
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.rules import Game, PlayError, make_config, replay
from arena.rules.cards import ALL_CODES
from arena.rules.events import ELIMINATE, END, FORFEIT, PLAY
from arena.rules.views import SeatView

SETTINGS = settings(max_examples=3000, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def setups(draw):
    """A ruleset, a valid option combination, a seat count and a seed."""
    ruleset = draw(st.sampled_from(["modern", "classic", "classic-set99"]))
    options = {}
    if draw(st.booleans()):
        options["max_total"] = draw(st.sampled_from([98, 99]))
    if draw(st.integers(0, 4)) == 0:
        options["max_plays"] = draw(st.integers(1, 80))
    if ruleset != "modern":
        if draw(st.booleans()):
            options["scoring"] = "points"
            options["points_target"] = draw(st.sampled_from([25, 60, 120, 200]))
            options["points_mode"] = draw(st.sampled_from(["elimination", "lowest"]))
        else:
            options["tokens"] = draw(st.integers(0, 3))
        if ruleset == "classic" and draw(st.booleans()):
            options["ninety_nine_on_zero"] = True
    seats = draw(st.integers(2, 8))
    seed = draw(st.integers(0, 2**32))
    return make_config(ruleset, options, seats), seed


def cards_everywhere(game: Game) -> Counter:
    held = Counter(game.draw) + Counter(game.discard) + Counter(game.out_of_play)
    for hand in game.hands:
        if hand is not None:
            held.update(hand)
    return held


def check_view(game: Game, seat: int) -> None:
    view = game.view(seat)
    assert isinstance(view, SeatView)
    own = game.hands[seat]
    assert list(view.hand) == ([] if own is None else own)
    assert set(view.legal) <= set(view.hand)
    if seat != game.to_act:
        assert view.legal == ()
    # no other seat's hidden hand anywhere in the view: only hands laid face up
    for other, hand in view.revealed.items():
        assert not game.in_game[other]
        assert game.config.ruleset.name == "modern"  # only modern lays hands face up
    for name in SeatView.__slots__ + ("total", "direction", "to_act", "owed", "draw_size",
                                      "discard_size", "table", "_events", "_n_events", "outcome"):
        value = getattr(view, name)
        assert not isinstance(value, Game)
        assert value is not game.hands and value is not game.draw and value is not game.discard
    for event in view.events:
        if event[0] == ELIMINATE and event[2] is not None:
            assert not game.in_game[event[1]]
    assert view.hand_sizes == tuple(None if h is None else len(h) for h in game.hands)
    assert view.in_game == tuple(game.in_game)
    assert view.tokens == tuple(game.tokens) and view.scores == tuple(game.scores)


@SETTINGS
@given(setups(), st.integers(0, 2**32))
def test_random_games_keep_every_invariant(setup, policy_seed):
    config, seed = setup
    game = Game.from_config(config, seed)
    deck = Counter(config.ruleset.deck)
    rng = random.Random(policy_seed)
    limit = config.limit
    steps = 0
    while not game.finished:
        steps += 1
        assert steps < 50_000, "game does not end"
        seat = game.to_act
        assert game.legal_cards(), "the seat to act always has a choice"
        check_view(game, seat)
        check_view(game, rng.randrange(config.seats))
        roll = rng.random()
        if roll < 0.02:
            # one seat, or (now and then) several that fail together, every seat included
            alive = [s for s in range(config.seats) if game.in_game[s]]
            game.forfeit(*rng.sample(alive, 1 if roll < 0.015 else rng.randint(1, len(alive))))
        elif roll < 0.10:
            # a random attempt: it must be accepted exactly when it is legal for the seat to act
            who = rng.randrange(config.seats)
            card = rng.choice(list(ALL_CODES))
            before = (game.total, game.to_act, game.owed, len(game.events), cards_everywhere(game))
            ok = who == game.to_act and card in game.legal_cards()
            try:
                game.play(who, card)
            except PlayError as exc:
                assert not ok
                expected = ("not_your_turn" if who != game.to_act else
                            "not_in_hand" if card not in game.hands[who] else "illegal_play")
                assert exc.code == expected
                after = (game.total, game.to_act, game.owed, len(game.events), cards_everywhere(game))
                assert after == before
            else:
                assert ok
        else:
            game.play(seat, rng.choice(game.legal_cards()))
        assert cards_everywhere(game) == deck
        assert game.total <= limit
        if config.ruleset.name == "modern":
            assert game.total >= 0
    # every game ends with a ranking of all seats
    ranking = game.outcome.ranking
    seated = [s for group in ranking for s in group]
    assert sorted(seated) == list(range(config.seats))
    assert all(group for group in ranking)
    assert game.events[-1][0] == END
    assert game.legal_cards() == ()
    # the decisions and the seed replay the game exactly
    again = replay(config, seed, game.decisions())
    assert again.events == game.events
    assert again.outcome == game.outcome


@settings(max_examples=300, deadline=None)
@given(setups())
def test_same_seed_same_game(setup):
    config, seed = setup
    games = []
    for _ in range(2):
        game = Game.from_config(config, seed)
        rng = random.Random(seed)
        while not game.finished:
            game.play(game.to_act, rng.choice(game.legal_cards()))
        games.append(game)
    assert games[0].events == games[1].events


@settings(max_examples=300, deadline=None)
@given(setups())
def test_spectators_see_no_hidden_hand_until_the_end(setup):
    config, seed = setup
    game = Game.from_config(config, seed)
    rng = random.Random(seed)
    while not game.finished:
        view = game.spectator_view()
        assert view.hands is None
        assert set(view.revealed) <= {s for s in range(config.seats) if not game.in_game[s]}
        game.play(game.to_act, rng.choice(game.legal_cards()))
    final = game.spectator_view()
    assert final.hands is not None and len(final.hands) == config.seats


def test_event_record_names_only_public_facts():
    """Draws are counts; the only hands in the record are those laid face up."""
    game = Game.new("modern", seats=4, seed=11)
    rng = random.Random(3)
    while not game.finished:
        game.play(game.to_act, rng.choice(game.legal_cards()))
    for event in game.events:
        if event[0] == "draw":
            assert isinstance(event[2], int)
        if event[0] == ELIMINATE:
            assert event[2] == game.revealed[event[1]]
        if event[0] in (PLAY, FORFEIT):
            assert 0 <= event[1] < 4
