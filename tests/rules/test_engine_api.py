"""The engine's public API: importable alone, seeded determinism, outcomes, the benchmark command."""

from __future__ import annotations

import ast
import copy
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import arena.rules
from arena.rules import (
    ConfigError, Deal, Game, NotInGame, Outcome, ScenarioError, make_config, parse_card, token,
)


def test_engine_imports_with_nothing_but_the_standard_library():
    code = ("import os, sys; env = dict(os.environ); import arena.rules, arena.seeds; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('grpc', 'rich', 'google', 'ono99')]; "
            "print(bad, env == dict(os.environ))")
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)
    assert out.stdout.strip() == "[] True"


#: standard modules that reach files, the clock, processes or the network: the rules
#: package is pure (STYLE.md), its callers do the I/O and hand it data
IMPURE_MODULES = {"os", "io", "pathlib", "shutil", "glob", "tempfile", "socket", "subprocess",
                  "time", "datetime", "sys", "asyncio", "threading", "urllib", "sqlite3"}


def test_the_rules_package_does_no_io():
    """Nothing in arena/rules imports a module that reaches files, the clock or processes, or
    calls open/print/input (the conformance runner read its vector files there)."""
    found = []
    for path in sorted(Path(arena.rules.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            found += [f"{path.name}:{node.lineno} imports {n}" for n in names
                      if n.split(".")[0] in IMPURE_MODULES]
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("open", "print", "input")):
                found.append(f"{path.name}:{node.lineno} calls {node.func.id}")
    assert found == []


def test_different_seeds_give_different_deals():
    hands = {tuple(map(tuple, Game.new(seed=s).hands)) for s in range(20)}
    assert len(hands) == 20


def test_seed_must_be_an_integer():
    with pytest.raises(ConfigError, match="seed='x'"):
        Game.new(seed="x")


def test_outcome_places_share_the_best_place_of_a_tie():
    outcome = Outcome(((2,), (0, 3), (1,)), "max_plays", 1)
    assert outcome.places() == [2, 4, 1, 2]


def test_card_tokens_round_trip_and_unknown_tokens_are_named():
    assert token(parse_card("P2")) == "P2"
    with pytest.raises(ConfigError, match="'Q'"):
        parse_card("Q")


def test_config_describe_names_changed_options():
    config = make_config("classic", {"scoring": "points", "points_target": "100"}, 3)
    assert config.describe() == "classic, 3 seats, scoring=points points_target=100"


def test_forfeit_removes_a_seat_and_play_goes_on():
    game = Game.new("modern", seats=3, seed=5)
    seat = game.to_act
    game.forfeit(seat)
    assert not game.in_game[seat]
    assert game.to_act not in (None, seat)
    assert game.revealed[seat]  # modern: laid face up, as if it had lost
    with pytest.raises(ValueError, match="out of the game"):
        game.forfeit(seat)
    while not game.finished:
        game.play(game.to_act, game.legal_cards()[0])
    assert game.outcome.ranking[-1] == (seat,)  # the first to leave ranks last


@pytest.mark.parametrize("ruleset, options", [
    ("modern", None), ("classic", None), ("classic", {"scoring": "points"}),
    ("classic-set99", None)])
def test_seats_that_forfeit_together_share_a_place_and_replay(ruleset, options):
    from arena.rules import replay
    from arena.rules.events import event_from_dict, event_to_dict

    game = Game.new(ruleset, options, seats=4, seed=3)
    game.forfeit(2, 0)
    assert game.in_game == [False, True, False, True] and not game.finished
    assert [e for e in game.events if e[0] == "forfeit"] == [("forfeit", 2), ("forfeit", 0, True)]
    assert game.decisions() == [("forfeit", 2, 0)]
    while not game.finished:
        game.play(game.to_act, game.legal_cards()[0])
    assert game.outcome.ranking[-1] == (0, 2)       # one place, below every seat still in
    assert game.outcome.places().count(3) == 2
    again = replay(game.config, 3, game.decisions())
    assert again.events == game.events and again.outcome == game.outcome
    assert [event_from_dict(event_to_dict(e)) for e in game.events] == game.events


@pytest.mark.parametrize("ruleset, options", [
    ("modern", None), ("classic", None), ("classic", {"scoring": "points"})])
def test_every_seat_forfeiting_together_ends_the_game_in_one_tie(ruleset, options):
    game = Game.new(ruleset, options, seats=3, seed=8)
    game.forfeit(0, 1, 2)
    assert game.finished and game.outcome.ranking == ((0, 1, 2),)
    assert game.outcome.places() == [1, 1, 1]
    # before: one at a time, the last seat won, though its bot had failed as well
    alone = Game.new(ruleset, options, seats=3, seed=8)
    alone.forfeit(0)
    alone.forfeit(1)
    assert alone.finished and alone.outcome.ranking == ((2,), (1,), (0,))


def test_forfeits_together_in_points_scoring_can_empty_the_round():
    game = Game.new("classic", {"scoring": "points"}, seats=4, seed=2)
    while sum(game.in_round) > 2 or not game.in_round[game.to_act]:
        # play until two seats are out of the round (a play past the limit, or out)
        game.play(game.to_act, game.legal_cards()[0] if game.legal_cards() else game.hand(game.to_act)[0])
        assert not game.finished and game.round == 1
    inside = [s for s in range(4) if game.in_round[s]]
    game.forfeit(*inside)                     # nobody is left in the round: it is scored
    assert game.round == 2 and not game.finished
    assert any(e[0] == "scores" for e in game.events)


def test_forfeit_in_a_token_game_eliminates_outright_and_redeals():
    game = Game.new("classic", seats=3, seed=5)
    game.forfeit(1)
    assert game.in_game == [True, False, True]
    assert game.tokens[1] == 3 and game.round == 2


def test_bench_engine_prints_its_table_and_summary_line():
    out = subprocess.run([sys.executable, "-m", "arena.cli.main", "bench", "engine",
                          "--seconds", "0.05"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"engine: \d+ decisions/s \(modern, 4 seats\)", last)
    for ruleset in ("modern", "classic", "classic-set99"):
        assert ruleset in out.stdout


def test_a_clone_plays_on_alone_and_draws_what_the_original_would():
    game = Game.new("classic", seats=3, seed=9)
    for _ in range(6):
        game.play(game.to_act, game.legal_cards()[0])
    copy = game.clone()
    before = list(game.events)
    while not copy.finished:
        copy.play(copy.to_act, copy.legal_cards()[0])
    assert game.events == before and not game.finished
    while not game.finished:
        game.play(game.to_act, game.legal_cards()[0])
    assert game.events == copy.events


STATE = [n for n in Game.__slots__ if n not in ("_cards", "_getrandbits")]


@pytest.mark.parametrize("ruleset, options, seats", [
    ("modern", None, 4), ("classic", None, 3), ("classic", {"scoring": "points"}, 4),
    ("classic-set99", None, 5)])
def test_playing_a_clone_to_the_end_changes_nothing_of_the_original(ruleset, options, seats):
    # the clone copies field by field: a container shared by mistake would show here
    for seed in range(20):
        game = Game.new(ruleset, options, seats=seats, seed=seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(0, 60)):
            if game.finished:
                break
            game.play(game.to_act, rng.choice(game.legal_cards()))
        before = {n: copy.deepcopy(getattr(game, n)) for n in STATE}
        clone = game.clone()
        assert {n: getattr(clone, n) for n in STATE} == before
        while not clone.finished:
            if rng.random() < 0.05 and clone.in_game[clone.to_act]:
                clone.forfeit(clone.to_act)
            else:
                clone.play(clone.to_act, rng.choice(clone.legal_cards()))
        assert {n: getattr(game, n) for n in STATE} == before


@pytest.mark.parametrize("ruleset, options, seats", [
    ("modern", None, 2), ("classic", None, 3), ("classic", {"scoring": "points"}, 4),
    ("classic-set99", None, 8)])
def test_a_scripted_start_goes_on_as_a_random_game_from_its_seed(ruleset, options, seats):
    # check-bot's scripted situations: chosen hands and total, then a whole random game
    config = make_config(ruleset, options, seats)
    deck = list(config.ruleset.deck)
    hands = [deck[4 * s:4 * s + 4] for s in range(seats)]
    rest = deck[4 * seats:4 * seats + 5]            # a short pile: reshuffles come soon
    games = []
    for _ in range(2):
        game = Game.from_deals(config, [Deal(hands, rest, 40)], then_seed=7)
        assert game.total == 40 and [sorted(h) for h in game.hands] == [sorted(h) for h in hands]
        rng = random.Random(3)
        while not game.finished:
            game.play(game.to_act, rng.choice(game.legal_cards()))
        games.append(game.events)
    assert games[0] == games[1]                     # the seed decides the rest
    assert any(e[0] == "reshuffle" for e in games[0])
    with pytest.raises(ScenarioError, match="reshuffle"):   # without a seed, as before
        game = Game.from_deals(config, [Deal(hands, rest, 40)])
        while not game.finished:
            game.play(game.to_act, game.legal_cards()[0])


@pytest.mark.parametrize("seat, words", [
    (1, "seat 1 cannot forfeit: it is out of the game"),
    (7, "seat 7 cannot forfeit: seats are 0 to 2"),
    (-1, "seat -1 cannot forfeit: seats are 0 to 2"),
    (True, "seat True cannot forfeit: seats are 0 to 2"),
])
def test_a_forfeit_the_game_cannot_take_is_a_typed_error(seat, words):
    game = Game.new("modern", seats=3, seed=4)
    game.forfeit(1)
    before = list(game.events)
    with pytest.raises(NotInGame, match=re.escape(words)) as err:
        game.forfeit(seat)
    assert err.value.code == "not_in_game" and game.events == before
    with pytest.raises(NotInGame, match="seat 1 cannot forfeit: it is out"):
        game.forfeit(0, 1)                   # one bad seat: none of them leaves
    with pytest.raises(NotInGame, match=re.escape("seats [0, 0] cannot forfeit: a seat is given twice")):
        game.forfeit(0, 0)
    assert game.events == before and game.in_game == [True, False, True]
    game.forfeit(0)                          # one seat left: the game is over
    with pytest.raises(NotInGame, match="the game is over"):
        game.forfeit(2)
