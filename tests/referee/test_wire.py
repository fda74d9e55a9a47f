"""The engine <-> protobuf mapping read back: every event of real games of every ruleset
(and a scripted one for the rare four 99s) survives ``event_to_wire`` then
``event_from_wire`` unchanged, and so do verdicts and rankings."""

from __future__ import annotations

import random

import pytest
from support.matches import RULESETS

from arena.referee import wire
from arena.referee.results import Verdict, VerdictKind
from arena.rules import events as ev
from arena.rules.cards import CODES
from arena.rules.game import Deal, Game
from arena.rules.rulesets import make_config

ALL_KINDS = {ev.DEAL, ev.PLAY, ev.FOUR_99, ev.DRAW, ev.RESHUFFLE, ev.LOSE, ev.TOKEN, ev.OUT,
             ev.SCORES, ev.ELIMINATE, ev.FORFEIT, ev.END}


def random_game(ruleset: str, options, seats: int, seed: int) -> Game:
    """A whole game of random legal plays; now and then the seat to act forfeits (as a
    failing bot's seat does)."""
    rng = random.Random(seed)
    game = Game.from_config(make_config(ruleset, options, seats), seed)
    while not game.finished:
        seat = game.to_act
        if rng.random() < 0.01:
            game.forfeit(seat)
        else:
            game.play(seat, rng.choice(game.view(seat).legal))
    return game


def four_99s_game() -> Game:
    """modern: seat 0 is dealt four 99s, which the referee plays for it."""
    c = CODES
    config = make_config("modern", None, 2)
    game = Game.from_deals(config, [Deal([[c["99"]] * 4, [c["1"], c["2"], c["3"], c["4"]]],
                                         [c[t] for t in ("5", "6", "7", "8", "9")], 50)], then_seed=1)
    while not game.finished:
        game.play(game.to_act, game.view(game.to_act).legal[0])
    return game


def round_trip(event: tuple) -> tuple:
    message = wire.event_to_wire(event)
    return wire.event_from_wire(type(message).FromString(message.SerializeToString()))


@pytest.mark.parametrize("ruleset, options", RULESETS)
def test_every_event_of_random_games_reads_back_as_it_was(ruleset, options):
    kinds = set()
    for seats in (2, 4, 8):
        for seed in range(6):
            game = random_game(ruleset, options, seats, seed * 7919 + seats)
            for event in game.events:
                assert round_trip(event) == event
                kinds.add(event[0])
    expected = {ev.DEAL, ev.PLAY, ev.DRAW, ev.FORFEIT, ev.END}
    if ruleset != "modern":     # random modern games end before the draw pile runs out
        expected.add(ev.RESHUFFLE)
    if (options or {}).get("scoring") == "points":
        expected |= {ev.OUT, ev.SCORES}
    else:
        expected |= {ev.LOSE, ev.ELIMINATE}
        if ruleset != "modern":
            expected.add(ev.TOKEN)
    assert expected <= kinds, f"these games never made {expected - kinds}"


def test_every_kind_of_event_is_covered_and_reads_back():
    seen = set()
    games = [four_99s_game()] + [random_game(r, o, 4, 3) for r, o in RULESETS]
    for game in games:
        for event in game.events:
            assert round_trip(event) == event
            seen.add(event[0])
    assert seen == ALL_KINDS


@pytest.mark.parametrize("event", [
    (ev.OUT, 2, None),                                   # out without playing
    (ev.OUT, 1, CODES["10"]),                            # a card past the limit
    (ev.ELIMINATE, 0, None),                             # no hand shown
    (ev.ELIMINATE, 3, (CODES["-10"], CODES["99"], CODES["R"])),
    (ev.END, ((2,), (0, 1), (3,)), "last_standing"),     # a tie in the middle
    (ev.END, (), "aborted"),
    (ev.SCORES, (0, 41, 203)),
    (ev.FORFEIT, 2),
    (ev.FORFEIT, 0, True),                               # left together with the one before
])
def test_edge_cases_read_back(event):
    assert round_trip(event) == event


def test_an_event_without_a_kind_or_with_a_bad_card_is_refused():
    from ono99.v1 import game_pb2

    with pytest.raises(ValueError, match="no known kind"):
        wire.event_from_wire(game_pb2.Event())
    with pytest.raises(ValueError, match="is not a card"):
        wire.event_from_wire(game_pb2.Event(card_played=game_pb2.CardPlayed(seat=0, card=0)))


@pytest.mark.parametrize("kind", list(VerdictKind))
def test_verdicts_read_back(kind):
    verdict = Verdict(1, kind, "what happened", 1234)
    [message] = wire.verdicts_to_wire([verdict])
    assert wire.verdict_from_wire(message) == verdict


def test_rankings_read_back():
    ranking = ((1,), (0, 2), (3,))
    assert wire.places_from_wire(wire.places_to_wire(ranking)) == ranking
