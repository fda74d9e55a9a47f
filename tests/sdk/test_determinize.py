"""The SDK's determinizer: every sampled game agrees with what the observing seat knows,
uses each unseen card once, and spreads the unseen cards over the hidden hands as their
sizes imply. Games are real ones, played by random policies to random points."""

from __future__ import annotations

import math
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ono99.bot import Bot
from ono99.bot.determinize import Determinizer, engine_view
from ono99.bot.testing import FakeReferee
from support.games import configs, sdk_view

from arena.rules import Game, events, make_config
from arena.rules.cards import CODES, MODERN_DECK, TOKENS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def played_to(config, seed: int, steps: int) -> Game | None:
    """A seeded game played by a random policy (forfeits now and then, alone or together) for ``steps``
    decisions; None if it ended first."""
    game = Game.from_config(config, seed)
    rng = random.Random(seed)
    if config.ruleset.name != "modern":
        steps *= 4                                 # games of several rounds last longer
    for _ in range(steps):
        if game.finished:
            return None
        roll = rng.random()
        if roll < 0.02:
            # one seat, or now and then several that fail together
            alive = [s for s in range(game.seats) if game.in_game[s]]
            game.forfeit(*rng.sample(alive, 1 if roll < 0.014 else rng.randint(1, len(alive) - 1)))
        else:
            game.play(game.to_act, rng.choice(game.legal_cards()))
    return None if game.finished else game


@SETTINGS
@given(config=configs(max_plays=True), seed=st.integers(0, 2**32), steps=st.integers(0, 50),
       observer=st.integers(0, 7), to_act=st.booleans())
def test_every_sample_agrees_with_the_view(config, seed, steps, observer, to_act):
    game = played_to(config, seed, steps)
    if game is None:
        return
    seat = game.to_act if to_act else observer % game.seats
    view = sdk_view(game, seat)
    assert engine_view(view).to_dict() == game.view(seat).to_dict()
    det = Determinizer(view, history=True)
    truth_view, truth_public = game.view(seat).to_dict(), game.spectator_view().to_dict()
    unseen = Counter(det.unseen)
    rng = random.Random(seed)
    for sample in det.samples(5, rng):
        # own hand, legal cards, totals, sizes, revealed hands, tokens/scores, direction,
        # owed cards, round, dealer and the public record: all as the seat sees them
        assert sample.view(seat).to_dict() == truth_view
        assert sample.spectator_view().to_dict() == truth_public
        # what the engine keeps beyond the views, as in the true game
        assert sample.discard == game.discard
        assert (sample.played_99, sample.plays) == (game.played_99, game.plays)
        assert sample._left_ranking() == game._left_ranking()
        # the unseen cards, each used once: hidden hands, draw pile, face-down out of play
        hidden = Counter(sample.draw) + Counter(sample.out_of_play)
        for s in range(game.seats):
            if s != seat:
                hidden.update(sample.hands[s] or ())
        hidden.subtract(c for h in game.revealed.values() for c in h)
        assert +hidden == unseen
        # and it plays on to an end
        play = random.Random(seed + 1)
        while not sample.finished:
            sample.play(sample.to_act, play.choice(sample.legal_cards()))


@pytest.mark.parametrize("ruleset, options", [
    ("modern", None), ("classic", {"scoring": "points"}), ("classic", None)])
def test_seats_that_forfeited_together_stay_tied_in_every_sample(ruleset, options):
    config = make_config(ruleset, options, 5)
    game = Game.from_config(config, 4)
    rng = random.Random(4)
    while game.round == 1 and options:         # points: let the scores differ first
        game.play(game.to_act, rng.choice(game.legal_cards()))
    alive = [s for s in range(5) if game.in_game[s] and s != game.to_act]
    game.forfeit(alive[-1], alive[0])
    seat = game.to_act
    assert game._left_ranking()[0] == (alive[0], alive[-1])
    for sample in Determinizer(game.view(seat), history=True).samples(3, rng):
        assert sample._left_ranking() == game._left_ranking()


def test_each_unseen_card_lands_in_each_hand_as_its_size_implies():
    config = make_config("modern", seats=4)
    game = played_to(config, 11, 23)
    seat = game.to_act
    det = Determinizer(game.view(seat))
    sizes = det.hidden
    pool = Counter(det.unseen)
    n = 3000
    seen = {s: Counter() for s in sizes}
    rng = random.Random(5)
    for sample in det.samples(n, rng):
        for s in sizes:
            seen[s].update(sample.hands[s])
    worst = 0.0
    for s, size in sizes.items():
        for card, copies in pool.items():
            p = copies / len(det.unseen)           # one slot holds this card
            expected = n * size * p
            sd = math.sqrt(n * size * p * (1 - p))  # slots are nearly independent
            worst = max(worst, abs(seen[s][card] - expected) / sd)
    assert worst < 4.5, worst


def test_a_weight_skews_the_samples():
    config = make_config("modern", seats=2)
    game = played_to(config, 3, 4)
    seat = game.to_act
    other = 1 - seat
    ninety_nine = CODES["99"]
    det = Determinizer(game.view(seat), weight=lambda c: 0.0 if ninety_nine in c.hands[other] else 1.0)
    rng = random.Random(1)
    assert all(ninety_nine not in g.hands[other] for g in det.samples(200, rng))


@pytest.mark.parametrize("weight, shown", [
    (lambda c: -1, "<lambda> returned -1"),
    (lambda c: float("nan"), "<lambda> returned nan"),
    (lambda c: 1.5, "<lambda> returned 1.5"),
    (lambda c: None, "<lambda> returned None"),
])
def test_a_weight_that_is_no_probability_is_named_as_the_fault(weight, shown):
    game = played_to(make_config("modern", seats=2), 3, 4)
    det = Determinizer(game.view(game.to_act), weight=weight)
    with pytest.raises(ValueError, match=rf"^the determinizer's weight hook {re.escape(shown)}: "
                                         r"it must return the probability .* from 0 to 1$"):
        det.sample(random.Random(1))
    for edge in (0, 1, True, 0.5):            # every probability is accepted
        Determinizer(game.view(game.to_act), weight=lambda c: edge).sample(random.Random(1))


def docs_example() -> dict:
    """The names docs/bots.md's determinization example defines, its code run as written."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text()
    code = re.search(r"```python\n((?:(?!```).)*?class Sampler\(Bot\).*?)```", text, re.S).group(1)
    space: dict = {"__code__": code}
    exec(code, space)
    return space


def test_the_docs_give_every_engine_event_layout():
    """docs/bots.md's table of the tuples a weight hook reads in candidate.view.events."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text()
    rows = re.findall(r"^  \| `(\w+)` \| (.*) \|$", text, re.M)
    assert {kind: re.findall(r"`(\w+)`", fields) for kind, fields in rows} == {
        kind: list(fields) for kind, fields in events._FIELDS.items()}


def test_the_example_in_the_docs_runs():
    """docs/bots.md's Sampler, run on a real view."""
    game = played_to(make_config("modern", seats=3), 2, 5)
    bot = docs_example()["Sampler"]()
    view = sdk_view(game, game.to_act)
    assert bot.choose(view) in view.legal


class Recorder(Bot):
    """Plays the first legal card, after determinizing the view: what a search bot reads."""

    def __init__(self) -> None:
        super().__init__()
        self.determinizers: list[Determinizer] = []

    def choose(self, view):
        self.determinizers.append(Determinizer(view))
        return view.legal[0]


def test_a_fake_referees_view_agrees_with_the_events_it_sent():
    """FakeReferee's piles follow its events: the discard pile holds the cards played
    since the deal, and the draw pile the rest of the deck (none of it out of play)."""
    bot = Recorder()
    ref = FakeReferee(bot, seats=3)
    ref.turn(hand=["5", "P2", "9", "R"], total=40)
    ref.event("play", seat=1, card="7", total=47)
    ref.event("play", seat=2, card="99", total=98)
    ref.turn(hand=["5", "P2", "9", "R"], legal=["P2", "R"], total=98)
    ref.event("deal", round=2, total=0)               # a new round: an empty discard pile
    ref.event("play", seat=1, card="3", total=3)
    ref.turn(hand=["5", "P2", "9", "R"], total=3, hand_sizes=[4, 3, 0],
             in_game=[True, True, False])
    assert [len(d.discard) for d in bot.determinizers] == [0, 2, 1]
    assert [d.out_of_play for d in bot.determinizers] == [0, 0, 0]
    assert [d.view.draw_size for d in bot.determinizers] == [112 - 12, 112 - 12 - 2, 112 - 7 - 1]


def test_the_example_in_the_docs_plays_through_a_fake_referee():
    """A bot author's unit test of the docs' Sampler: public plays, then its turn."""
    ref = FakeReferee(docs_example()["Sampler"](), seats=2)
    hand = ["5", "P2", "9", "R"]
    ref.event("play", seat=1, card="7", total=47)
    card = ref.turn(hand=hand, total=47)
    assert card in hand
    ref.event("play", seat=0, card=card, total=52)   # (the total matters to no one here)
    ref.event("draw", seat=0)
    ref.event("play", seat=1, card="10", total=62)
    assert ref.turn(hand=hand, total=62) in hand


def test_the_example_in_the_docs_tells_the_cards_apart():
    """Every card the other seat could hold is 5 or more: after the 5 (total 95) it
    surely has nothing playable and loses; after the -10 (view.legal[0]) it plays on."""
    ref = FakeReferee(docs_example()["Sampler"](), seats=2)
    hand = ["-10", "1", "2", "5"]
    unseen = Counter(["5"] * 5 + ["6", "7", "8", "9"] * 6 + ["10", "99"] * 10)
    deck = Counter(TOKENS[c] for c in MODERN_DECK)
    for card, copies in (deck - Counter(hand) - unseen).items():
        for _ in range(copies):
            ref.event("play", seat=1, card=card)
    assert ref.turn(hand=hand, total=90) == "5"


def test_the_example_in_the_docs_runs_as_a_script(tmp_path):
    """As written, the block is a bot program: run with no referee, it gets as far as
    run(), which says what is missing."""
    code = docs_example()["__code__"]
    (tmp_path / "bot.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONO99_")}
    done = subprocess.run([sys.executable, "bot.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "referee" in done.stderr


def test_a_99_that_sets_the_total_leaves_no_flag_for_the_rest_of_the_turn():
    """classic-set99: a seat that owes a pair and plays a 99 first still acts, and the
    engine keeps no 'played a 99 this turn' flag there (a 99 sets the total; the flag is
    for classic's ninety_nine_on_zero): the samples must not raise it either (hypothesis
    once found a sample that did)."""
    config = make_config("classic-set99", None, 2)
    for seed in range(2000):
        game = Game.from_config(config, seed)
        rng = random.Random(seed)
        while not game.finished:
            last = [e for e in game.events if e[0] != "draw"][-1:]
            if (game.owed == 1 and last and last[0][0] == "play" and last[0][1] == game.to_act
                    and last[0][2] == CODES["99"]):
                break
            game.play(game.to_act, rng.choice(game.legal_cards()))
        if not game.finished:
            break
    else:
        raise AssertionError("no classic-set99 game of 2,000 had a 99 first of an owed pair")
    det = Determinizer(sdk_view(game, game.to_act), history=True)
    for sample in det.samples(20, random.Random(seed)):
        assert sample.played_99 == game.played_99 is False
        assert sample.view(game.to_act).to_dict() == game.view(game.to_act).to_dict()
