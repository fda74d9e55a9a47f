"""Runs rules conformance vectors (the format of ``tests/conformance/FORMAT.md``).

A vector is a deck check or a scenario: explicit deals and reshuffle orders, then steps
that play cards and state facts that must hold. :func:`run_vector` takes one parsed vector
and returns a :class:`VectorResult`; nothing here reads a file or prints (the rules stay
pure: ``arena.cli.conformance`` finds and reads the files), so the CLI and the tests share it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from arena.rules.cards import TOKENS, deck_counts, parse_cards
from arena.rules.errors import ConfigError, PlayError
from arena.rules.game import Deal, Game
from arena.rules.rulesets import get_ruleset, make_config

PASS, FAIL, MALFORMED = "pass", "fail", "malformed"

EXPECT_FIELDS = (
    "total", "direction", "to_act", "owed", "hands", "hand_sizes", "draw_size",
    "discard_size", "in_game", "in_round", "tokens", "scores", "round", "finished", "ranking",
)
SCENARIO_KEYS = {"name", "ruleset", "options", "seats", "dealer", "deals", "reshuffles", "steps"}
STEP_KEYS = {"seat", "play", "error", "expect"}


class Malformed(Exception):
    """The vector does not follow the format; the message says where."""


@dataclass(frozen=True)
class VectorResult:
    """The result of one vector: its name, pass/fail/malformed, and why it did not pass."""

    name: str
    status: str
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def line(self) -> str:
        """The line the runner prints for this vector."""
        if self.status == PASS:
            return f"PASS {self.name}"
        label = "FAIL" if self.status == FAIL else "FAIL (malformed)"
        return f"{label} {self.name}: {self.detail}"


def run_vector(data: Any, default_name: str = "<vector>") -> VectorResult:
    """Run one vector given as parsed JSON."""
    name = default_name
    try:
        if not isinstance(data, dict):
            raise Malformed("a vector is a JSON object")
        name = data.get("name", default_name)
        if "deck" in data:
            return _run_deck(name, data)
        return _run_scenario(name, data)
    except Malformed as exc:
        return VectorResult(name, MALFORMED, str(exc))
    except ConfigError as exc:  # includes ScenarioError: a deal or reshuffle missing or wrong
        return VectorResult(name, MALFORMED, str(exc))


def _run_deck(name: str, data: dict) -> VectorResult:
    rules = _ruleset(data)
    expected = data["deck"]
    if not isinstance(expected, dict):
        raise Malformed("'deck' is an object of token to count")
    actual = deck_counts(rules.deck)
    for tok in sorted(set(expected) | set(actual)):
        if expected.get(tok, 0) != actual.get(tok, 0):
            return VectorResult(name, FAIL, f"deck has {actual.get(tok, 0)} x {tok}, "
                                            f"expected {expected.get(tok, 0)}")
    return VectorResult(name, PASS)


def _ruleset(data: dict):
    if "ruleset" not in data:
        raise Malformed("no 'ruleset'")
    return get_ruleset(data["ruleset"])


def _run_scenario(name: str, data: dict) -> VectorResult:
    unknown = set(data) - SCENARIO_KEYS
    if unknown:
        raise Malformed(f"unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("seats", "deals", "steps"):
        if key not in data:
            raise Malformed(f"no {key!r}")
    rules = _ruleset(data)
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise Malformed("'options' is an object")
    config = make_config(rules.name, options, data["seats"])
    deck = frozenset(rules.deck)
    deals = [_deal(d, k, deck) for k, d in enumerate(_list(data["deals"], "deals"))]
    reshuffles = [parse_cards(_list(r, "a reshuffle"), deck)
                  for r in _list(data.get("reshuffles", []), "reshuffles")]
    game = Game.from_deals(config, deals, reshuffles, data.get("dealer"))
    for number, step in enumerate(_list(data["steps"], "steps"), start=1):
        failure = _run_step(game, step, number)
        if failure:
            return VectorResult(name, FAIL, f"step {number}: {failure}")
    return VectorResult(name, PASS)


def _list(value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise Malformed(f"{what} must be a list")
    return value


def _deal(data: Any, index: int, deck: frozenset[int]) -> Deal:
    if not isinstance(data, dict) or "hands" not in data or "draw" not in data:
        raise Malformed(f"deal {index + 1} needs 'hands' and 'draw'")
    hands = [None if h is None else parse_cards(_list(h, "a hand"), deck)
             for h in _list(data["hands"], "hands")]
    total = data.get("total", 0)
    if isinstance(total, bool) or not isinstance(total, int):
        raise Malformed(f"deal {index + 1}: total must be an integer")
    return Deal(hands, parse_cards(_list(data["draw"], "draw"), deck), total)


def _run_step(game: Game, step: Any, number: int) -> str | None:
    if not isinstance(step, dict) or set(step) - STEP_KEYS:
        raise Malformed(f"step {number} is not an object of {', '.join(sorted(STEP_KEYS))}")
    if ("seat" in step) != ("play" in step):
        raise Malformed(f"step {number} needs both 'seat' and 'play', or neither")
    if "error" in step and "play" not in step:
        raise Malformed(f"step {number} expects an error but plays nothing")
    if "play" in step:
        # any known token: one the ruleset's deck lacks is a card the seat does not
        # hold (not_in_hand, after not_your_turn), not a malformed vector
        card = parse_cards([step["play"]])[0]
        before = facts(game)
        try:
            game.play(step["seat"], card)
        except PlayError as exc:
            if step.get("error") == exc.code:
                after = facts(game)
                if after != before:
                    return f"rejected with {exc.code} as expected, but the state changed"
            elif "error" in step:
                return f"expected error {step['error']}, got {exc.code} ({exc})"
            else:
                return f"seat {step['seat']} playing {step['play']} was rejected: {exc.code} ({exc})"
        else:
            if "error" in step:
                return f"expected error {step['error']}, but seat {step['seat']} played {step['play']}"
    expect = step.get("expect")
    if expect is None:
        return None
    if not isinstance(expect, dict):
        raise Malformed(f"step {number}: 'expect' is an object")
    unknown = set(expect) - set(EXPECT_FIELDS)
    if unknown:
        raise Malformed(f"step {number}: unknown expect field(s) {', '.join(sorted(unknown))}")
    actual = facts(game)
    for key in EXPECT_FIELDS:
        if key in expect:
            problem = _compare(key, expect[key], actual[key])
            if problem:
                return problem
    return None


def facts(game: Game) -> dict[str, Any]:
    """Every fact a vector may check, as the vector writes it."""
    n = game.seats
    return {
        "total": game.total,
        "direction": game.direction,
        "to_act": None if game.finished else game.to_act,
        "owed": game.owed,
        "hands": {str(s): [TOKENS[c] for c in game.hands[s]]
                  for s in range(n) if game.hands[s] is not None},
        "hand_sizes": [None if h is None else len(h) for h in game.hands],
        "draw_size": len(game.draw),
        "discard_size": len(game.discard),
        "in_game": [s for s in range(n) if game.in_game[s]],
        "in_round": [s for s in range(n) if game.in_round[s] and game.in_game[s]],
        "tokens": list(game.tokens),
        "scores": list(game.scores),
        "round": game.round,
        "finished": game.finished,
        "ranking": None if game.outcome is None else [list(g) for g in game.outcome.ranking],
    }


def _compare(key: str, expected: Any, actual: Any) -> str | None:
    if key == "hands":
        if not isinstance(expected, dict):
            raise Malformed("'hands' is an object of seat to hand")
        for seat, hand in expected.items():
            # null: the seat is no longer in the game (as in a deal's hands and hand_sizes)
            if hand is not None and not (isinstance(hand, list)
                                         and all(isinstance(t, str) for t in hand)):
                raise Malformed(f"'hands': seat {seat}'s hand is a list of card tokens or null")
            got = actual.get(str(seat))
            if hand is None:
                if got is not None:
                    return f"hands: seat {seat} holds {_show(got)}, expected it out of the game"
                continue
            if got is None:
                return f"hands: seat {seat} has no hand (out of the game), expected {_show(hand)}"
            if Counter(got) != Counter(hand):
                return f"hands: seat {seat} holds {_show(got)}, expected {_show(hand)}"
        return None
    if key == "ranking":
        if not (isinstance(expected, list) and all(
                isinstance(g, list) and all(isinstance(s, int) and not isinstance(s, bool)
                                            for s in g) for g in expected)):
            raise Malformed("'ranking' is a list of groups (lists) of seats")
        if actual is None:
            return f"ranking: the game is not over, expected {expected}"
        if [sorted(g) for g in expected] != [sorted(g) for g in actual]:
            return f"ranking is {actual}, expected {expected}"
        return None
    if expected != actual:
        return f"{key} is {json.dumps(actual)}, expected {json.dumps(expected)}"
    return None


def _show(hand: list[str]) -> str:
    return "[" + " ".join(hand) + "]"
