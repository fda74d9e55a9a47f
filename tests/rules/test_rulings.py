"""Table-driven tests of every rule and ruling of shared/RULES.md.

Most cases are scenarios in the conformance vector format (shared/conformance/FORMAT.md),
written by hand from RULES.md and run with ``arena.rules.conformance.run_vector``. Facts
the vector format cannot express (views, events, error messages, option validation, the
dealer) are tested through the engine API below the tables.

Shorthands: a hand or pile is a string of card tokens separated by spaces ("" = empty,
None = a seat no longer in the game); ``play(seat, card, **expect)`` plays and checks,
``err(seat, card, code)`` expects a rejection (the runner also checks the state is
unchanged), ``check(**expect)`` only checks.
"""

from __future__ import annotations

import pytest

from arena.rules import (
    ConfigError, Deal, Game, IllegalPlay, NotInHand, NotYourTurn, make_config, parse_card,
    parse_cards, tokens_of,
)
from arena.rules.conformance import MALFORMED, facts, run_vector
from arena.rules.events import DEAL, ELIMINATE, FOUR_99, LOSE, OUT, PLAY

# --------------------------------------------------------------------------- helpers


def cards(text):
    return None if text is None else text.split()


def deal(*hands, draw="", total=0):
    return {"hands": [cards(h) for h in hands], "draw": cards(draw), "total": total}


def _expect(expect):
    if "hands" in expect:
        expect["hands"] = {str(s): cards(h) for s, h in expect["hands"].items()}
    return expect


def play(seat, card, **expect):
    step = {"seat": seat, "play": card}
    if expect:
        step["expect"] = _expect(expect)
    return step


def err(seat, card, code):
    return {"seat": seat, "play": card, "error": code}


def check(**expect):
    return {"expect": _expect(expect)}


def vec(name, ruleset, seats, deals, steps, options=None, dealer=None, reshuffles=None):
    v = {"name": name, "ruleset": ruleset, "seats": seats, "deals": deals, "steps": steps}
    if options:
        v["options"] = options
    if dealer is not None:
        v["dealer"] = dealer
    if reshuffles is not None:
        v["reshuffles"] = [cards(r) for r in reshuffles]
    return v


def bug(vector, reason):
    """A case the engine gets wrong (see the report); kept so it turns green when fixed."""
    return pytest.param(vector, id=vector["name"],
                        marks=pytest.mark.xfail(strict=True, reason="engine bug: " + reason))


def case(vector):
    return pytest.param(vector, id=vector["name"])


POINTS = {"scoring": "points"}
ON_ZERO = {"ninety_nine_on_zero": True}

# --------------------------------------------------------------------------- the table

CASES = []

# ---- Decks (RULES.md "Decks")
CASES += [case(v) for v in (
    {"name": "deck/modern-112", "ruleset": "modern",
     "deck": {"0": 8, **{str(i): 6 for i in range(1, 10)}, "10": 10, "99": 10, "R": 10,
              "-10": 10, "P2": 10}},
    {"name": "deck/classic-54", "ruleset": "classic",
     "deck": {**{str(i): 3 for i in range(2, 10)}, "10": 10, "H": 4, "R": 6, "-10": 4,
              "DP": 2, "99": 4}},
    {"name": "deck/classic-set99-54", "ruleset": "classic-set99",
     "deck": {**{str(i): 3 for i in range(2, 10)}, "10": 10, "H": 4, "R": 6, "-10": 4,
              "DP": 2, "99": 4}},
)]

# ---- A turn: play one card, the total changes by its effect, draw one (RULES.md "A turn")
CASES += [case(v) for v in (
    vec("turn/play-then-draw-top-card", "modern", 2,
        [deal("10 7 3 0", "5 4 2 1", draw="6 8 9")],
        [check(to_act=0, total=0, direction=1, owed=1, draw_size=3, discard_size=0, round=1),
         play(0, "10", total=10, to_act=1, hands={0: "7 3 0 6"}, draw_size=2, discard_size=1),
         play(1, "5", total=15, to_act=0, hands={1: "4 2 1 8"}, hand_sizes=[4, 4])]),
    vec("turn/dealer-option-first-seat-after-dealer", "classic", 3,
        [deal("2 2 2 2", "3 3 3 3", "4 4 4 4", draw="5 5")],
        [check(to_act=1), play(1, "3", to_act=2, total=3)], dealer=0),
)]

# ---- Limits: modern 98, classic* 99, house rule max_total 98/99 (RULES.md "A turn")
CASES += [case(v) for v in (
    vec("limit/modern-98-99-not-allowed", "modern", 2,
        [deal("9 8 0 2", "0 3 4 5", draw="1 1 1", total=90)],
        [err(0, "9", "illegal_play"),
         play(0, "8", total=98, to_act=1, hands={0: "9 0 2 1"}),
         err(1, "3", "illegal_play"),
         play(1, "0", total=98, to_act=0)]),
    vec("limit/modern-max-total-98-explicit", "modern", 2,
        [deal("9 8 1 2", "0 3 4 5", draw="1 1 1", total=90)],
        [err(0, "9", "illegal_play"), play(0, "8", total=98)], options={"max_total": 98}),
    vec("limit/modern-max-total-99-house-rule", "modern", 2,
        [deal("9 8 0 2", "0 3 4 5", draw="1 1 1", total=90)],
        [play(0, "9", total=99, to_act=1), err(1, "3", "illegal_play"),
         play(1, "0", total=99, to_act=0)], options={"max_total": 99}),
    vec("limit/classic-exactly-99-allowed", "classic", 2,
        [deal("9 8 H 2", "H 2 3 4", draw="2 2 2", total=90)],
        [play(0, "9", total=99, to_act=1), err(1, "2", "illegal_play"),
         play(1, "H", total=99, to_act=0)]),
    vec("limit/classic-set99-exactly-99-allowed", "classic-set99", 2,
        [deal("9 8 H 2", "H 2 3 4", draw="2 2 2", total=90)],
        [play(0, "9", total=99, to_act=1), err(1, "2", "illegal_play"),
         play(1, "H", total=99, to_act=0)]),
    vec("limit/classic-max-total-98-house-rule", "classic", 2,
        [deal("9 8 2 2", "H 2 3 4", draw="2 2 2", total=90)],
        [err(0, "9", "illegal_play"), play(0, "8", total=98)], options={"max_total": 98}),
    vec("limit/classic-set99-max-total-98-99-card-illegal", "classic-set99", 2,
        [deal("99 2 3 4", "H 2 3 4", draw="2 2 2")],
        [err(0, "99", "illegal_play"), play(0, "2", total=2)], options={"max_total": 98}),
    vec("limit/classic-set99-max-total-98-99-card-illegal-even-at-98", "classic-set99", 2,
        [deal("99 H 3 4", "H 2 3 4", draw="2 2 2", total=98)],
        [err(0, "99", "illegal_play")], options={"max_total": 98}),
    vec("limit/classic-set99-max-total-98-four-99s-lose", "classic-set99", 2,
        [deal("99 99 99 99", "2 3 4 5", draw="2"), deal("2 3 4 5", "6 7 8 9", draw="2")],
        [check(round=2, tokens=[2, 3], to_act=1)], options={"max_total": 98}),
)]

# ---- No playable card: the seat loses, plays nothing, draws nothing (RULES.md "A turn")
CASES += [case(v) for v in (
    vec("lose/modern-no-playable-card-plays-and-draws-nothing", "modern", 3,
        [deal("8 0 0 0", "1 2 3 4", "0 5 5 5", draw="6 7", total=90)],
        [play(0, "8", total=98, to_act=2, in_game=[0, 2], hand_sizes=[4, None, 4],
              draw_size=1, discard_size=1)]),
    vec("lose/modern-at-setup", "modern", 3,
        [deal("5 6 7 8", "0 0 0 0", "0 0 0 0", draw="1", total=95)],
        [check(to_act=1, in_game=[1, 2], draw_size=1, discard_size=0, total=95)]),
    vec("lose/classic-token-lost-round-redealt", "classic", 2,
        [deal("9 2 2 2", "2 3 4 5", draw="H", total=90), deal("2 3 4 5", "6 7 8 9", draw="2 3")],
        [play(0, "9", round=2, tokens=[3, 2], total=0, to_act=1, draw_size=2,
              hands={0: "2 3 4 5", 1: "6 7 8 9"})]),
)]

# ---- Reshuffle: whole discard pile, the card just played included; total unchanged
CASES += [case(v) for v in (
    vec("reshuffle/includes-card-just-played", "modern", 2,
        [deal("1 3 3 3", "2 4 4 4", draw="5")],
        [play(0, "1", total=1, draw_size=0, discard_size=1, hands={0: "3 3 3 5"}),
         play(1, "2", total=3, draw_size=1, discard_size=0, hands={1: "4 4 4 2"}),
         play(0, "5", total=8, draw_size=0, discard_size=1, hands={0: "3 3 3 1"})],
        reshuffles=["2 1"]),
    vec("reshuffle/empty-draw-pile-from-the-start-total-unchanged", "classic", 2,
        [deal("-10 2 2 2", "3 3 3 3", draw="", total=50)],
        [play(0, "-10", total=40, draw_size=0, discard_size=0, hands={0: "2 2 2 -10"})],
        reshuffles=["-10"]),
    vec("reshuffle/during-four-99s-draw", "modern", 2,
        [deal("99 99 99 99", "1 2 3 4", draw="5 6", total=40)],
        [check(total=40, to_act=1, hands={0: "5 6 99 99"}, draw_size=2, discard_size=0)],
        reshuffles=["99 99 99 99"]),
)]

# ---- Reverse (RULES.md "Reverse")
CASES += [case(v) for v in (
    vec("reverse/modern-three-seats-flips", "modern", 3,
        [deal("R 1 1 1", "2 2 2 2", "3 3 3 3", draw="4 5 6")],
        [play(0, "R", total=0, direction=-1, to_act=2),
         play(2, "3", to_act=1, direction=-1),
         play(1, "2", to_act=0, total=5)]),
    vec("reverse/classic-three-seats-flips", "classic", 3,
        [deal("R 2 2 2", "3 3 3 3", "4 4 4 4", draw="5 6")],
        [play(0, "R", direction=-1, to_act=2), play(2, "4", to_act=1, total=4)]),
    vec("reverse/modern-flips-back", "modern", 4,
        [deal("R 1 1 1", "2 2 2 2", "3 3 3 3", "R 4 4 4", draw="5 6 7")],
        [play(0, "R", direction=-1, to_act=3), play(3, "R", direction=1, to_act=0)]),
    vec("reverse/modern-two-seats-no-flip-other-acts", "modern", 2,
        [deal("R 1 1 1", "2 2 2 2", draw="3 4 5")],
        [play(0, "R", direction=1, to_act=1, total=0),
         play(1, "2", direction=1, to_act=0),
         play(0, "1", to_act=1)]),
    vec("reverse/classic-two-seats-no-flip", "classic", 2,
        [deal("R 2 2 2", "R 3 3 3", draw="4 5 6")],
        [play(0, "R", direction=1, to_act=1), play(1, "R", direction=1, to_act=0)]),
    vec("reverse/classic-set99-two-seats-no-flip", "classic-set99", 2,
        [deal("R 2 2 2", "3 3 3 3", draw="4 5 6")],
        [play(0, "R", direction=1, to_act=1)]),
    vec("reverse/modern-two-seats-still-deflects-pair", "modern", 2,
        [deal("P2 1 1 1", "R 2 2 2", draw="3 4 5 6")],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "R", to_act=0, owed=2, direction=1),
         play(0, "1", to_act=0, owed=1, total=1),
         play(0, "1", to_act=1, owed=1, total=2, hands={0: "1 3 5 6"})]),
    vec("reverse/classic-two-seats-still-deflects-pair", "classic", 2,
        [deal("DP 2 2 2", "R 3 3 3", draw="4 5 6 7")],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "R", to_act=0, owed=2, direction=1),
         play(0, "2", to_act=0, owed=1),
         play(0, "2", to_act=1, owed=1, total=4)]),
    vec("reverse/modern-three-seats-one-eliminated-acts-as-two", "modern", 3,
        [deal("8 R R 0", "1 2 3 4", "0 R P2 0", draw="0 0 0 0 0 0", total=90)],
        [play(0, "8", total=98, to_act=2, in_game=[0, 2]),
         play(2, "R", direction=1, to_act=0),
         play(0, "R", direction=1, to_act=2),
         play(2, "P2", to_act=0, owed=2),
         play(0, "R", direction=1, to_act=2, owed=2)]),
    vec("reverse/modern-four-seats-one-eliminated-still-flips", "modern", 4,
        [deal("8 0 0 0", "1 2 3 4", "R 0 0 0", "0 0 0 0", draw="0 0 0", total=90)],
        [play(0, "8", to_act=2, in_game=[0, 2, 3]),
         play(2, "R", direction=-1, to_act=0)]),
    vec("reverse/classic-tokens-three-seats-one-eliminated", "classic", 3,
        [deal("2 3 4 5", "H H H H", "H H H H", draw="2", total=99),
         deal(None, "R 2 2 2", "R 3 3 3", draw="4 5 6")],
        [check(round=2, in_game=[1, 2], to_act=2),
         play(2, "R", direction=1, to_act=1),
         play(1, "R", direction=1, to_act=2)], options={"tokens": 0}),
    vec("reverse/points-three-seats-one-out-of-round", "classic", 3,
        [deal("5 6 7 8", "R 2 2 2", "H 2 2 2", draw="9 9 9 9", total=97)],
        [play(0, "5", in_round=[1, 2], to_act=1, total=97),
         play(1, "R", direction=1, to_act=2),
         play(2, "H", to_act=1)], options=POINTS),
)]

# ---- Forcing cards: P2 (modern), DP (classic*) (RULES.md "Forcing cards")
CASES += [case(v) for v in (
    vec("forcing/modern-p2-owed-pair", "modern", 3,
        [deal("P2 1 1 1", "2 3 4 4", "5 5 5 5", draw="6 7 8 9")],
        [play(0, "P2", total=0, to_act=1, owed=2, hands={0: "1 1 1 6"}),
         play(1, "2", total=2, to_act=1, owed=1, hands={1: "3 4 4 7"}),
         play(1, "3", total=5, to_act=2, owed=1, hands={1: "4 4 7 8"}),
         play(2, "5", total=10, to_act=0, owed=1)]),
    vec("forcing/classic-dp-owed-pair", "classic", 3,
        [deal("DP 2 2 2", "3 4 5 5", "6 6 6 6", draw="7 8 9 10")],
        [play(0, "DP", total=0, to_act=1, owed=2),
         play(1, "3", total=3, to_act=1, owed=1, hands={1: "4 5 5 8"}),
         play(1, "4", total=7, to_act=2, owed=1, hands={1: "5 5 8 9"})]),
    vec("forcing/classic-set99-dp-owed-pair", "classic-set99", 2,
        [deal("DP 2 2 2", "3 4 5 5", draw="7 8 9 10")],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "3", to_act=1, owed=1),
         play(1, "4", to_act=0, owed=1, total=7)]),
    vec("forcing/modern-deflect-by-p2", "modern", 3,
        [deal("P2 1 1 1", "P2 2 2 2", "3 3 3 3", draw="0 0 0 0")],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "P2", to_act=2, owed=2, direction=1),
         play(2, "3", to_act=2, owed=1),
         play(2, "3", to_act=0, owed=1, total=6)]),
    vec("forcing/modern-deflect-by-reverse", "modern", 3,
        [deal("P2 1 1 1", "R 2 2 2", "3 3 3 3", draw="0 0 0 0")],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "R", to_act=0, owed=2, direction=-1),
         play(0, "1", to_act=0, owed=1),
         play(0, "1", to_act=2, owed=1, total=2)]),
    vec("forcing/classic-deflect-by-hold", "classic", 3,
        [deal("DP 2 2 2", "H 3 3 3", "4 4 4 4", draw="5 5 5 5")],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "H", to_act=2, owed=2, direction=1, total=0),
         play(2, "4", to_act=2, owed=1),
         play(2, "4", to_act=0, owed=1, total=8)]),
    vec("forcing/classic-deflect-by-reverse", "classic", 3,
        [deal("DP 2 2 2", "R 3 3 3", "4 4 4 4", draw="5 5 5 5")],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "R", to_act=0, owed=2, direction=-1),
         play(0, "2", to_act=0, owed=1),
         play(0, "2", to_act=2, owed=1, total=4)]),
    vec("forcing/classic-set99-deflect-by-hold", "classic-set99", 3,
        [deal("DP 2 2 2", "H 3 3 3", "4 4 4 4", draw="5 5 5 5")],
        [play(0, "DP", to_act=1, owed=2), play(1, "H", to_act=2, owed=2)]),
    vec("forcing/modern-chain-twice-around-never-adds", "modern", 3,
        [deal("P2 P2 1 1", "P2 P2 1 1", "P2 3 4 5", draw="0 0 0 0 0 0 0 0")],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "P2", to_act=2, owed=2),
         play(2, "P2", to_act=0, owed=2),
         play(0, "P2", to_act=1, owed=2),
         play(1, "P2", to_act=2, owed=2),
         play(2, "3", to_act=2, owed=1, total=3),
         play(2, "4", to_act=0, owed=1, total=7),
         play(0, "1", to_act=1, owed=1, total=8)]),
    vec("forcing/classic-chain-around-the-table-hold-and-reverse", "classic", 3,
        [deal("DP H 2 2", "H R 3 3", "H 4 4 4", draw="5 5 5 5 5 5 5 5")],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "H", to_act=2, owed=2),
         play(2, "H", to_act=0, owed=2),
         play(0, "H", to_act=1, owed=2),
         play(1, "R", to_act=0, owed=2, direction=-1),
         play(0, "2", to_act=0, owed=1),
         play(0, "2", to_act=2, owed=1, total=4)]),
    vec("forcing/classic-dp-not-first-of-pair-but-second", "classic", 3,
        [deal("DP 2 2 2", "DP 3 3 3", "4 4 4 4", draw="5 5 5 5 5")],
        [play(0, "DP", to_act=1, owed=2),
         err(1, "DP", "illegal_play"),
         play(1, "3", to_act=1, owed=1),
         play(1, "DP", to_act=2, owed=2),
         play(2, "4", to_act=2, owed=1),
         play(2, "4", to_act=0, owed=1, total=11)]),
    vec("forcing/classic-set99-dp-not-first-of-pair", "classic-set99", 2,
        [deal("DP 2 2 2", "DP 3 3 3", draw="5 5 5")],
        [play(0, "DP", to_act=1, owed=2), err(1, "DP", "illegal_play")]),
    vec("forcing/modern-p2-as-second-card-forces-next", "modern", 3,
        [deal("P2 1 1 1", "2 P2 2 2", "3 3 3 3", draw="0 0 0 0")],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "2", to_act=1, owed=1),
         play(1, "P2", to_act=2, owed=2, total=2)]),
    vec("forcing/modern-reverse-as-second-card-flips-only", "modern", 3,
        [deal("P2 1 1 1", "2 R 2 2", "3 3 3 3", draw="0 0 0 0")],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "2", to_act=1, owed=1),
         play(1, "R", to_act=0, owed=1, direction=-1)]),
    vec("forcing/classic-hold-as-second-card-ends-turn", "classic", 3,
        [deal("DP 2 2 2", "2 H 2 2", "3 3 3 3", draw="5 5 5 5")],
        [play(0, "DP"), play(1, "2", owed=1), play(1, "H", to_act=2, owed=1)]),
    vec("forcing/modern-no-playable-first-card-loses-debt-dies", "modern", 3,
        [deal("P2 0 0 0", "9 9 9 9", "0 0 0 0", draw="0 0", total=90)],
        [play(0, "P2", to_act=2, owed=1, in_game=[0, 2], hand_sizes=[4, None, 4])]),
    vec("forcing/modern-no-playable-second-card-loses-debt-dies", "modern", 3,
        [deal("P2 0 0 0", "8 9 9 9", "0 0 0 0", draw="0 9 0", total=90)],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "8", total=98, to_act=2, owed=1, in_game=[0, 2])]),
    vec("forcing/classic-owing-seat-loses-next-round-nobody-owes", "classic", 3,
        [deal("DP 2 2 2", "6 7 8 9", "H H H H", draw="2", total=95),
         deal("2 2 2 2", "3 3 3 3", "4 4 4 4", draw="5")],
        [play(0, "DP", round=2, tokens=[3, 2, 3], owed=1, to_act=1, total=0)]),
    vec("forcing/classic-only-dp-playable-as-first-card-loses", "classic", 3,
        [deal("DP 2 2 2", "DP 9 9 9", "H H H H", draw="2", total=95),
         deal("2 2 2 2", "3 3 3 3", "4 4 4 4", draw="5")],
        [play(0, "DP", round=2, tokens=[3, 2, 3], owed=1)]),
)]

# ---- The 99 card, modern: never alone; four are played together automatically
CASES += [case(v) for v in (
    vec("99-modern/never-alone", "modern", 2,
        [deal("99 1 2 3", "4 4 4 4", draw="5")],
        [err(0, "99", "illegal_play"), play(0, "1", total=1)]),
    vec("99-modern/three-99s-never-alone", "modern", 2,
        [deal("99 99 99 3", "4 4 4 4", draw="5")],
        [err(0, "99", "illegal_play"), play(0, "3", total=3)]),
    vec("99-modern/four-99s-played-automatically", "modern", 2,
        [deal("99 99 99 99", "1 2 3 4", draw="5 6 7 8 9", total=50)],
        [check(total=50, to_act=1, owed=1, hands={0: "5 6 7 8"}, draw_size=1,
               discard_size=4)]),
    vec("99-modern/four-99s-at-98-still-played", "modern", 3,
        [deal("99 99 99 99", "0 2 3 4", "0 0 0 0", draw="5 6 7 8 9", total=98)],
        [check(total=98, to_act=1, hands={0: "5 6 7 8"}, in_game=[0, 1, 2])]),
    vec("99-modern/four-99s-first-of-pair-leaves-one-owed", "modern", 3,
        [deal("P2 1 1 1", "99 99 99 99", "2 2 2 2", draw="0 3 4 5 6 7")],
        [play(0, "P2", to_act=1, owed=1, total=0, hands={1: "3 4 5 6"}, discard_size=5),
         play(1, "3", to_act=2, owed=1, total=3, hands={1: "4 5 6 7"})]),
    vec("99-modern/four-99s-second-of-pair-ends-turn", "modern", 3,
        [deal("P2 1 1 1", "1 99 99 99", "2 2 2 2", draw="0 99 3 4 5 6")],
        [play(0, "P2", to_act=1, owed=2),
         play(1, "1", to_act=2, owed=1, total=1, hands={1: "3 4 5 6"})]),
    vec("99-modern/four-99s-twice-pay-an-owed-pair", "modern", 3,
        [deal("P2 1 1 1", "99 99 99 99", "2 2 2 2", draw="0 99 99 99 99 3 4 5 6")],
        [play(0, "P2", to_act=2, owed=1, total=0, hands={1: "3 4 5 6"}, discard_size=9)]),
    vec("99-modern/four-99s-then-no-playable-card-loses", "modern", 3,
        [deal("P2 1 1 1", "99 99 99 99", "2 2 2 2", draw="0 9 9 9 9", total=90)],
        [play(0, "P2", to_act=2, owed=1, in_game=[0, 2])]),
)]

# ---- The 99 card, classic: unplayable; option ninety_nine_on_zero
CASES += [case(v) for v in (
    vec("99-classic/unplayable-by-default", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6")],
        [err(0, "99", "illegal_play"), play(0, "2", total=2)]),
    vec("99-classic/unplayable-on-zero-without-option", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6", total=20)],
        [err(0, "99", "illegal_play")]),
    vec("99-classic/four-99s-no-playable-card-loses", "classic", 2,
        [deal("99 99 99 99", "2 3 4 5", draw="2"), deal("2 3 4 5", "6 7 8 9", draw="2")],
        [check(round=2, tokens=[2, 3], to_act=1)]),
    vec("99-classic/on-zero-at-total-0", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6")],
        [play(0, "99", total=0, to_act=1, hands={0: "2 3 4 6"})], options=ON_ZERO),
    vec("99-classic/on-zero-at-total-20-adds-0", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6", total=20)],
        [play(0, "99", total=20, to_act=1)], options=ON_ZERO),
    vec("99-classic/on-zero-at-total-90", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6", total=90)],
        [play(0, "99", total=90, to_act=1)], options=ON_ZERO),
    vec("99-classic/on-zero-at-negative-total", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6", total=-10)],
        [play(0, "99", total=-10, to_act=1)], options=ON_ZERO),
    vec("99-classic/on-zero-after-minus-ten-below-zero", "classic", 2,
        [deal("-10 2 3 4", "99 5 5 5", draw="6 7")],
        [play(0, "-10", total=-10), play(1, "99", total=-10, to_act=0)], options=ON_ZERO),
    vec("99-classic/on-zero-not-on-total-5", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6", total=5)],
        [err(0, "99", "illegal_play")], options=ON_ZERO),
    vec("99-classic/on-zero-not-on-negative-5", "classic", 2,
        [deal("99 2 3 4", "5 5 5 5", draw="6", total=-5)],
        [err(0, "99", "illegal_play")], options=ON_ZERO),
    vec("99-classic/on-zero-one-per-two-card-turn", "classic", 3,
        [deal("DP 2 2 2", "99 99 10 3", "99 4 4 4", draw="5 5 5 5 5")],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "99", total=0, to_act=1, owed=1),
         err(1, "99", "illegal_play"),
         play(1, "10", total=10, to_act=2, owed=1),
         play(2, "99", total=10, to_act=0)], options=ON_ZERO),
    vec("99-classic/on-zero-99-does-not-deflect", "classic", 3,
        [deal("DP 2 2 2", "99 3 3 3", "4 4 4 4", draw="5 5 5")],
        [play(0, "DP"), play(1, "99", to_act=1, owed=1, direction=1)], options=ON_ZERO),
    vec("99-classic/on-zero-four-99s-playable-at-0", "classic", 2,
        [deal("99 99 99 99", "2 3 4 5", draw="6")],
        [play(0, "99", total=0, to_act=1, hands={0: "99 99 99 6"})], options=ON_ZERO),
    vec("99-classic/on-zero-four-99s-owed-pair-second-99-not-allowed-loses", "classic", 3,
        [deal("DP 2 2 2", "99 99 99 99", "H H H H", draw="2 99"),
         deal("2 2 2 2", "3 3 3 3", "4 4 4 4", draw="5")],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "99", round=2, tokens=[3, 2, 3], owed=1)], options=ON_ZERO),
    vec("99-classic/on-zero-four-99s-at-5-lose", "classic", 2,
        [deal("99 99 99 99", "2 3 4 5", draw="6", total=5), deal("2 3 4 5", "6 7 8 9", draw="2")],
        [check(round=2, tokens=[2, 3])], options=ON_ZERO),
)]

# ---- The 99 card, classic-set99: sets the total to 99
CASES += [case(v) for v in (
    vec("99-set99/sets-total-from-0", "classic-set99", 2,
        [deal("99 2 3 4", "H 2 3 4", draw="H 6")],
        [play(0, "99", total=99, to_act=1), err(1, "2", "illegal_play"),
         play(1, "H", total=99, to_act=0)]),
    vec("99-set99/sets-total-from-negative", "classic-set99", 2,
        [deal("99 2 3 4", "H 2 3 4", draw="5", total=-20)],
        [play(0, "99", total=99)]),
    vec("99-set99/sets-total-from-99", "classic-set99", 2,
        [deal("99 2 3 4", "H 2 3 4", draw="5", total=99)],
        [play(0, "99", total=99, to_act=1)]),
    vec("99-set99/minus-ten-after-99", "classic-set99", 2,
        [deal("99 2 3 4", "-10 2 3 4", draw="5 6")],
        [play(0, "99", total=99), play(1, "-10", total=89)]),
    vec("99-set99/first-card-of-pair-does-not-deflect", "classic-set99", 3,
        [deal("DP 2 2 2", "99 H 3 3", "H 4 4 4", draw="5 5 5")],
        [play(0, "DP"), play(1, "99", total=99, to_act=1, owed=1),
         play(1, "H", to_act=2, owed=1)]),
)]

# ---- Minus ten: modern floors at 0, classic* may go negative
CASES += [case(v) for v in (
    vec("minus-ten/modern-15-to-5", "modern", 2,
        [deal("-10 1 1 1", "2 2 2 2", draw="3", total=15)], [play(0, "-10", total=5)]),
    vec("minus-ten/modern-floors-5-to-0", "modern", 2,
        [deal("-10 1 1 1", "2 2 2 2", draw="3", total=5)], [play(0, "-10", total=0)]),
    vec("minus-ten/modern-floors-0-to-0", "modern", 2,
        [deal("-10 1 1 1", "-10 2 2 2", draw="3 4")],
        [play(0, "-10", total=0), play(1, "-10", total=0)]),
    vec("minus-ten/classic-5-to-minus-5", "classic", 2,
        [deal("-10 2 2 2", "3 3 3 3", draw="4", total=5)], [play(0, "-10", total=-5)]),
    vec("minus-ten/classic-0-to-minus-20", "classic", 2,
        [deal("-10 2 2 2", "-10 3 3 3", draw="4 5 6")],
        [play(0, "-10", total=-10), play(1, "-10", total=-20), play(0, "2", total=-18)]),
    vec("minus-ten/classic-set99-negative", "classic-set99", 2,
        [deal("-10 2 2 2", "3 3 3 3", draw="4", total=5)], [play(0, "-10", total=-5)]),
)]

# ---- New rounds (classic*): dealer and first seat among those still in, total 0,
#      clockwise, nobody owes (RULES.md "How a game ends")
CASES += [case(v) for v in (
    vec("new-round/dealer-and-first-seat-skip-eliminated", "classic", 4,
        [deal("9 2 2 2", "2 3 4 5", "H H H H", "H H H H", draw="2 2 2", total=90),
         deal("DP 2 2 2", None, "R 3 3 3", "9 9 9 9", draw="4 4 4", total=91),
         deal("9 2 2 2", None, "2 3 4 5", None, draw="H H", total=90)],
        [play(0, "9", round=2, in_game=[0, 2, 3], to_act=2, total=91, direction=1, owed=1,
              hand_sizes=[4, None, 4, 4]),
         play(2, "R", direction=-1, to_act=0),
         play(0, "DP", round=3, in_game=[0, 2], to_act=0, total=90, direction=1, owed=1,
              hand_sizes=[4, None, 4, None]),
         play(0, "9", finished=True, to_act=None, ranking=[[0], [2], [3], [1]])],
        options={"tokens": 0}),
    vec("new-round/two-seats-first-seat-alternates", "classic-set99", 2,
        [deal("9 2 2 2", "2 3 4 5", draw="H", total=90),
         deal("2 3 4 5", "9 2 2 2", draw="H", total=90),
         deal("2 2 2 2", "3 3 3 3", draw="H")],
        [play(0, "9", round=2, to_act=1, tokens=[3, 2]),
         play(1, "9", round=3, to_act=0, tokens=[2, 2], total=0)]),
    vec("new-round/points-dealer-moves-reverse-flips-again", "classic", 3,
        [deal("2 9 9 9", "5 6 7 8", "2 4 4 4", draw="3 10 H 99", total=95),
         deal("2 2 2 2", "R 3 3 3", "4 4 4 4", draw="5")],
        [play(0, "2"), play(1, "6"), play(2, "2"),
         play(0, "9", round=2, to_act=1, total=0, in_round=[0, 1, 2], direction=1, owed=1),
         play(1, "R", direction=-1, to_act=0)],
        options=POINTS),
)]

# ---- modern: last player standing; laid face up, skipped, ranking
CASES += [case(v) for v in (
    vec("modern-end/eliminations-skip-and-rank-latest-highest", "modern", 4,
        [deal("8 0 0 1", "1 2 3 4", "0 5 5 5", "1 1 1 1", draw="1 5 7", total=90)],
        [play(0, "8", total=98, to_act=2, in_game=[0, 2, 3], hand_sizes=[4, None, 4, 4]),
         play(2, "0", to_act=0, in_game=[0, 2], hand_sizes=[4, None, 4, None]),
         play(0, "0", finished=True, to_act=None, in_game=[0],
              ranking=[[0], [2], [3], [1]])]),
    vec("modern-end/counter-clockwise-play-passes-to-next-seat-still-in", "modern", 4,
        [deal("R 0 0 0", "0 0 0 0", "0 0 0 0", "1 2 3 4", draw="0 0", total=98)],
        [play(0, "R", direction=-1, to_act=2, in_game=[0, 1, 2]),
         play(2, "0", to_act=1, direction=-1)]),
    vec("modern-end/two-seats-one-loses", "modern", 2,
        [deal("8 0 0 0", "1 2 3 4", draw="1", total=90)],
        [play(0, "8", finished=True, ranking=[[0], [1]], to_act=None)]),
)]

# ---- tokens scoring (classic*): a loss costs a token, with none left eliminates
CASES += [case(v) for v in (
    vec("tokens/default-3-fourth-loss-eliminates", "classic", 2,
        [deal("2 3 4 5", "H 2 2 2", draw="2", total=99),
         deal("2 3 4 5", "H 2 2 2", draw="2", total=99),
         deal("2 3 4 5", "H 2 2 2", draw="2", total=99),
         deal("2 3 4 5", "H 2 2 2", draw="2", total=99)],
        [check(round=2, tokens=[2, 3], to_act=1, in_game=[0, 1]),
         play(1, "H", round=4, tokens=[0, 3], to_act=1, in_game=[0, 1], finished=False),
         play(1, "H", finished=True, in_game=[1], ranking=[[1], [0]])]),
    vec("tokens/option-1-second-loss-eliminates", "classic", 2,
        [deal("2 3 4 5", "H 2 2 2", draw="2", total=99),
         deal("2 3 4 5", "H 2 2 2", draw="2", total=99)],
        [check(round=2, tokens=[0, 1], in_game=[0, 1]),
         play(1, "H", finished=True, ranking=[[1], [0]])], options={"tokens": 1}),
    vec("tokens/option-0-first-loss-eliminates", "classic-set99", 2,
        [deal("2 3 4 5", "H 2 2 2", draw="2", total=99)],
        [check(finished=True, in_game=[1], ranking=[[1], [0]], tokens=[0, 0])],
        options={"tokens": 0}),
    vec("tokens/loss-with-token-ends-round-for-all", "classic", 3,
        [deal("9 2 2 2", "2 3 4 5", "H H H H", draw="2", total=90),
         deal("2 2 2 2", "3 3 3 3", "4 4 4 4", draw="5")],
        [play(0, "9", round=2, tokens=[3, 2, 3], in_game=[0, 1, 2], total=0,
              hands={0: "2 2 2 2", 1: "3 3 3 3", 2: "4 4 4 4"}, draw_size=1)]),
    vec("tokens/explicit-scoring-tokens", "classic", 2,
        [deal("2 3 4 5", "H 2 2 2", draw="2", total=99)],
        [check(finished=True, ranking=[[1], [0]])],
        options={"scoring": "tokens", "tokens": 0}),
)]

# ---- points scoring (classic*): play past the limit, out of the round, scores
CASES += [case(v) for v in (
    vec("points/over-limit-total-returns-draw-back-out-of-round", "classic", 3,
        [deal("2 9 9 9", "5 6 7 8", "2 4 4 4", draw="3 10 H 99", total=95),
         deal("2 2 2 2", "3 3 3 3", "4 4 4 4", draw="5")],
        [play(0, "2", total=97, to_act=1),
         play(1, "6", total=97, to_act=2, in_round=[0, 2], hands={1: "5 7 8 10"},
              hand_sizes=[4, 4, 4], discard_size=2),
         play(2, "2", total=99, to_act=0),
         play(0, "9", round=2, scores=[66, 55, 27], in_game=[0, 1, 2])],
        options=POINTS),
    vec("points/over-limit-seat-chooses-any-card", "classic", 2,
        [deal("5 6 7 8", "H 2 2 2", draw="9", total=97),
         deal("2 2 2 2", "3 3 3 3", draw="5")],
        [play(0, "8", round=2, scores=[5 + 6 + 7 + 9 + 25, 2 + 2 + 2 + 15])],
        options=POINTS),
    vec("points/over-limit-never-dp-as-first-of-pair", "classic", 3,
        [deal("DP 2 2 2", "DP 6 7 8", "H H H H", draw="2 9", total=95)],
        [play(0, "DP", to_act=1, owed=2),
         err(1, "DP", "illegal_play"),
         play(1, "6", total=95, in_round=[0, 2], to_act=2, owed=1)],
        options=POINTS),
    vec("points/over-limit-dp-allowed-when-not-owed", "classic-set99", 3,
        [deal("H 2 2 2", "DP 9 9 9", "H H H H", draw="2 9", total=95)],
        [play(0, "H", to_act=1), play(1, "DP", to_act=2, owed=2)],
        options=POINTS),
    vec("points/over-limit-card-reshuffled-when-draw-pile-empty", "classic", 3,
        [deal("2 2 2 2", "5 6 7 8", "H H H H", draw="3", total=97)],
        [play(0, "2", draw_size=0, discard_size=1),
         play(1, "6", total=99, hands={1: "5 7 8 6"}, draw_size=1, discard_size=0,
              in_round=[0, 2])],
        options=POINTS, reshuffles=["6 2"]),
    vec("points/owed-pair-dies-when-owing-seat-goes-out", "classic", 3,
        [deal("DP 2 2 2", "5 6 7 8", "H H H H", draw="2 9", total=95)],
        [play(0, "DP", to_act=1, owed=2),
         play(1, "5", total=95, to_act=2, owed=1, in_round=[0, 2])],
        options=POINTS),
    vec("points/owed-second-card-over-limit-out", "classic", 3,
        [deal("DP 2 2 2", "3 6 7 8", "H H H H", draw="2 9 9", total=95)],
        [play(0, "DP"), play(1, "3", total=98, owed=1, to_act=1),
         play(1, "6", total=98, to_act=2, owed=1, in_round=[0, 2])],
        options=POINTS),
    vec("points/classic-four-99s-out-without-playing", "classic", 3,
        [deal("2 2 2 2", "99 99 99 99", "H H H H", draw="3 4 5")],
        [play(0, "2", total=2, to_act=2, in_round=[0, 2], hands={1: "99 99 99 99"},
              draw_size=2, discard_size=1)],
        options=POINTS),
    vec("points/classic-99-over-limit-only-where-option-allows", "classic", 2,
        [deal("99 5 6 7", "H H H H", draw="2", total=97),
         deal("2 2 2 2", "3 3 3 3", draw="5")],
        [err(0, "99", "illegal_play"),
         play(0, "5", round=2, scores=[20 + 6 + 7 + 2 + 25, 60], in_round=[0, 1])],
        options={**POINTS, **ON_ZERO}),
    vec("points/round-ends-when-one-seat-left-scores", "classic", 2,
        [deal("2 H R -10", "5 10 99 9", draw="DP 2", total=97),
         deal("2 2 2 2", "3 3 3 3", draw="5")],
        [play(0, "2", total=99, to_act=1),
         play(1, "5", round=2, scores=[15 * 4, 10 + 20 + 9 + 2 + 25], to_act=1, total=0,
              in_round=[0, 1])],
        options=POINTS),
    vec("points/scoring-set99-99-counts-20", "classic-set99", 2,
        [deal("2 99 99 9", "5 6 7 8", draw="10 4", total=97),
         deal("2 2 2 2", "3 3 3 3", draw="5")],
        [play(0, "2"), play(1, "5", scores=[20 + 20 + 9 + 10, 6 + 7 + 8 + 4 + 25])],
        options=POINTS),
    vec("points/elimination-ranked-by-score", "classic", 3,
        [deal("2 2 2 2", "9 9 9 9", "8 8 8 8", draw="2 9 8", total=97)],
        [play(0, "2", total=99),
         play(1, "9", to_act=2, in_round=[0, 2]),
         play(2, "8", finished=True, scores=[8, 61, 57], in_game=[0],
              ranking=[[0], [2], [1]])],
        options={**POINTS, "points_target": 50}),
    vec("points/elimination-equal-scores-tie", "classic", 3,
        [deal("2 2 2 2", "9 9 9 9", "9 9 9 9", draw="2 9 9", total=97)],
        [play(0, "2"), play(1, "9"),
         play(2, "9", finished=True, scores=[8, 61, 61], ranking=[[0], [1, 2]])],
        options={**POINTS, "points_target": 50}),
    vec("points/elimination-all-reach-target-same-round", "classic", 3,
        [deal("2 2 2 2", "9 9 9 9", "8 8 8 8", draw="2 9 8", total=97)],
        [play(0, "2"), play(1, "9"),
         play(2, "8", finished=True, scores=[8, 61, 57], in_game=[],
              ranking=[[0], [2], [1]])],
        options={**POINTS, "points_target": 5}),
    vec("points/elimination-over-rounds-latest-ranked-higher", "classic", 3,
        [deal("2 2 2 2", "9 9 9 9", "H 2 2 2", draw="2 9 2 2", total=97),
         deal("9 9 9 9", None, "2 3 3 3", draw="3 9", total=97)],
        [play(0, "2", total=99),
         play(1, "9", to_act=2, in_round=[0, 2]),
         play(2, "H", to_act=0, total=99),
         play(0, "2", round=2, scores=[33, 61, 2 + 2 + 2 + 2], in_game=[0, 2], to_act=2),
         play(2, "2", total=99, to_act=0),
         play(0, "9", finished=True, scores=[33 + 36 + 25, 61, 8 + 3 + 3 + 3 + 3],
              ranking=[[2], [0], [1]])],
        options={**POINTS, "points_target": 50}),
    vec("points/elimination-below-target-goes-on", "classic", 3,
        [deal("2 2 2 2", "9 9 9 9", "8 8 8 8", draw="2 9 8", total=97),
         deal("2 2 2 2", None, "4 4 4 4", draw="5")],
        [play(0, "2"), play(1, "9"),
         play(2, "8", finished=False, round=2, in_game=[0, 2], scores=[8, 61, 57],
              to_act=2, hand_sizes=[4, None, 4])],
        options={**POINTS, "points_target": 60}),
    vec("points/lowest-game-ends-all-ranked-by-score", "classic", 3,
        [deal("2 2 2 2", "9 9 9 9", "8 8 8 8", draw="2 9 8", total=97)],
        [play(0, "2"), play(1, "9"),
         play(2, "8", finished=True, scores=[8, 61, 57], in_game=[0, 1, 2],
              ranking=[[0], [2], [1]])],
        options={**POINTS, "points_target": 60, "points_mode": "lowest"}),
    vec("points/lowest-equal-scores-tie", "classic", 3,
        [deal("2 2 2 2", "9 9 9 9", "9 9 9 9", draw="2 9 9", total=97)],
        [play(0, "2"), play(1, "9"),
         play(2, "9", finished=True, ranking=[[0], [1, 2]])],
        options={**POINTS, "points_target": 61, "points_mode": "lowest"}),
    vec("points/lowest-below-target-new-round", "classic", 2,
        [deal("2 2 2 2", "9 9 9 9", draw="2 9", total=97),
         deal("2 2 2 2", "3 3 3 3", draw="5")],
        [play(0, "2"), play(1, "9", finished=False, round=2, scores=[8, 61])],
        options={**POINTS, "points_target": 62, "points_mode": "lowest"}),
)]

# ---- Endless games: max_plays (RULES.md "Endless games")
CASES += [case(v) for v in (
    vec("max-plays/reached-game-ends-draw-for-all", "modern", 3,
        [deal("1 1 1 1", "2 2 2 2", "3 3 3 3", draw="4 5 6")],
        [play(0, "1", finished=False), play(1, "2", finished=False),
         play(2, "3", finished=True, to_act=None, ranking=[[0, 1, 2]],
              hands={2: "3 3 3 6"}, total=6)],
        options={"max_plays": 3}),
    vec("max-plays/eliminated-seats-ranked-after", "modern", 3,
        [deal("8 0 0 0", "1 2 3 4", "0 0 0 0", draw="0 0", total=90)],
        [play(0, "8", finished=False, to_act=2),
         play(2, "0", finished=True, ranking=[[0, 2], [1]])],
        options={"max_plays": 2}),
    vec("max-plays/four-99s-are-one-play", "modern", 2,
        [deal("99 99 99 99", "1 2 3 4", draw="5 6 7 8 9 9")],
        [check(finished=False, to_act=1),
         play(1, "1", finished=True, ranking=[[0, 1]])],
        options={"max_plays": 2}),
    vec("max-plays/four-99s-reaching-count-drawn-then-end", "modern", 2,
        [deal("99 99 99 99", "1 2 3 4", draw="5 6 7 8 9")],
        [check(finished=True, hands={0: "5 6 7 8"}, draw_size=1, ranking=[[0, 1]])],
        options={"max_plays": 1}),
    vec("max-plays/first-of-pair-reaching-count-ends", "modern", 3,
        [deal("P2 1 1 1", "2 2 2 2", "3 3 3 3", draw="4 5")],
        [play(0, "P2", finished=False),
         play(1, "2", finished=True, hands={1: "2 2 2 5"}, ranking=[[0, 1, 2]])],
        options={"max_plays": 2}),
    vec("max-plays/counts-the-current-round-only", "classic", 2,
        [deal("9 2 2 2", "2 3 4 5", draw="H", total=90),
         deal("2 2 2 2", "3 3 3 3", draw="4 5")],
        [play(0, "9", round=2, finished=False, to_act=1),
         play(1, "3", finished=False),
         play(0, "2", finished=True, ranking=[[0, 1]])],
        options={"max_plays": 2}),
    vec("max-plays/tokens-eliminated-seat-after", "classic", 3,
        [deal("2 3 4 5", "H H H H", "H H H H", draw="2", total=99),
         deal(None, "2 2 2 2", "3 3 3 3", draw="4")],
        [check(round=2, to_act=2), play(2, "3", finished=True, ranking=[[1, 2], [0]])],
        options={"tokens": 0, "max_plays": 1}),
    vec("max-plays/points-past-limit-play-counts", "classic", 3,
        [deal("2 2 2 2", "5 6 7 8", "H H H H", draw="3 9", total=97)],
        [play(0, "2", finished=False),
         play(1, "5", finished=True, hand_sizes=[4, 4, 4], ranking=[[0, 1, 2]])],
        options={**POINTS, "max_plays": 2}),
    vec("max-plays/points-out-of-round-seats-share-the-draw", "classic", 3,
        [deal("5 6 7 8", "H H H H", "H H H H", draw="9 2", total=97)],
        [play(0, "5", finished=False, in_round=[1, 2]),
         play(1, "H", finished=True, ranking=[[0, 1, 2]])],
        options={**POINTS, "max_plays": 2}),
)]

# ---- Errors: not_your_turn, not_in_hand, illegal_play, in that order; state unchanged
CASES += [case(v) for v in (
    vec("errors/checked-in-order", "modern", 2,
        [deal("9 0 5 6", "1 2 3 4", draw="7 7", total=90)],
        [err(1, "1", "not_your_turn"),
         err(1, "9", "not_your_turn"),
         err(0, "8", "not_in_hand"),
         err(0, "99", "not_in_hand"),
         err(0, "9", "illegal_play"),
         play(0, "0", total=90, to_act=1)]),
    vec("errors/not-your-turn-once-game-over", "modern", 2,
        [deal("8 0 0 0", "1 2 3 4", draw="1", total=90)],
        [play(0, "8", finished=True),
         err(0, "0", "not_your_turn"),
         err(1, "1", "not_your_turn")]),
    vec("errors/eliminated-seat-not-your-turn", "modern", 3,
        [deal("8 0 0 0", "1 2 3 4", "0 0 0 0", draw="0 0", total=90)],
        [play(0, "8", to_act=2), err(1, "1", "not_your_turn")]),
    vec("errors/illegal-while-owing", "modern", 3,
        [deal("P2 1 1 1", "99 9 3 3", "0 0 0 0", draw="0 0", total=90)],
        [play(0, "P2"), err(1, "9", "illegal_play"), err(1, "99", "illegal_play"),
         play(1, "3", owed=1, to_act=1, total=93)]),
)]


@pytest.mark.parametrize("vector", CASES)
def test_scenario(vector):
    result = run_vector(vector)
    assert result.passed, result.line()


# --------------------------------------------------------------------------- direct API

def make(ruleset, seats, hands, draw="", total=0, options=None, reshuffles=(), dealer=None,
         more=()):
    """A scripted game; ``more`` lists the deals of later rounds as (hands, draw, total)."""
    config = make_config(ruleset, options or {}, seats)
    deck = frozenset(config.ruleset.deck)

    def one(hs, dr, tot):
        return Deal([None if h is None else parse_cards(h.split(), deck) for h in hs],
                    parse_cards(dr.split(), deck), tot)

    deals = [one(hands, draw, total)] + [one(*d) for d in more]
    return Game.from_deals(config, deals, [parse_cards(r.split(), deck) for r in reshuffles],
                           dealer)


def C(tok):
    return parse_card(tok)


# ---- Setup (RULES.md "Setup"): dealer is the last seat, the next seat acts first,
#      four cards each, total 0, clockwise
@pytest.mark.parametrize("ruleset", ["modern", "classic", "classic-set99"])
@pytest.mark.parametrize("seats", [2, 5, 8])
def test_setup_of_a_seeded_game(ruleset, seats):
    game = Game.new(ruleset, seats=seats, seed=11)
    first = game.events[0]
    assert first[0] == DEAL and first[1:] == (1, seats - 1, 0, 0)
    deck = len(make_config(ruleset, {}, seats).ruleset.deck)
    in_hands = sum(len(h) for h in game.hands if h is not None)
    assert in_hands + len(game.draw) + len(game.discard) + len(game.out_of_play) == deck
    # seed 11 deals every seat a playable hand, so nothing has happened on its own yet
    assert game.round == 1 and not any(e[0] in (PLAY, FOUR_99, LOSE, OUT) for e in game.events)
    assert all(len(h) == 4 for h in game.hands)
    assert game.total == 0 and game.direction == 1 and game.to_act == 0 and game.owed == 1
    assert len(game.draw) == deck - 4 * seats and not game.discard


# ---- Players: 2 to 8 at one table for every ruleset
@pytest.mark.parametrize("ruleset", ["modern", "classic", "classic-set99"])
def test_seat_counts(ruleset):
    for seats in (2, 8):
        assert make_config(ruleset, {}, seats).seats == seats
    for seats in (0, 1, 9, 100, -2):
        with pytest.raises(ConfigError, match=rf"seats={seats}\b"):
            make_config(ruleset, {}, seats)


# ---- Options: defaults, and each one belongs to the rulesets RULES.md names
@pytest.mark.parametrize("ruleset, limit", [("modern", 98), ("classic", 99),
                                             ("classic-set99", 99)])
def test_option_defaults(ruleset, limit):
    config = make_config(ruleset, {}, 4)
    assert config.limit == limit
    assert config.options["max_plays"] == 1000
    if ruleset != "modern":
        assert config.options["scoring"] == "tokens"
        assert config.options["tokens"] == 3
        points = make_config(ruleset, {"scoring": "points"}, 4).options
        assert points["points_target"] == 200 and points["points_mode"] == "elimination"


@pytest.mark.parametrize("ruleset", ["modern", "classic", "classic-set99"])
@pytest.mark.parametrize("value", [98, 99])
def test_max_total_house_rule_accepted_everywhere(ruleset, value):
    assert make_config(ruleset, {"max_total": value}, 3).limit == value


@pytest.mark.parametrize("ruleset", ["modern", "classic", "classic-set99"])
@pytest.mark.parametrize("value", [97, 100, 0, 50, -98])
def test_max_total_other_values_are_errors(ruleset, value):
    with pytest.raises(ConfigError, match=rf"max_total={value}\b"):
        make_config(ruleset, {"max_total": value}, 3)


@pytest.mark.parametrize("ruleset, options, named", [
    ("modern", {"scoring": "tokens"}, "scoring"),
    ("modern", {"scoring": "points"}, "scoring"),
    ("modern", {"tokens": 3}, "tokens"),
    ("modern", {"points_target": 100}, "points_target"),
    ("modern", {"points_mode": "lowest"}, "points_mode"),
    ("modern", {"ninety_nine_on_zero": True}, "ninety_nine_on_zero"),
    ("classic-set99", {"ninety_nine_on_zero": True}, "ninety_nine_on_zero"),
    ("classic-set99", {"ninety_nine_on_zero": False}, "ninety_nine_on_zero"),
    ("classic", {"scoring": "points", "tokens": 3}, "tokens"),
    ("classic-set99", {"scoring": "points", "tokens": 0}, "tokens"),
    ("classic", {"colour": "red"}, "colour"),
    ("modern", {"max_round": 3}, "max_round"),
    ("classic", {"scoring": "both"}, "both"),
    ("classic", {"tokens": -1}, "-1"),
    ("classic", {"tokens": "many"}, "many"),
    ("classic", {"scoring": "points", "points_target": 0}, "points_target=0"),
    ("classic", {"scoring": "points", "points_mode": "highest"}, "highest"),
    ("classic", {"ninety_nine_on_zero": "maybe"}, "maybe"),
    ("modern", {"max_plays": 0}, "max_plays=0"),
    ("classic-set99", {"max_plays": -5}, "max_plays=-5"),
])
def test_bad_options_are_config_errors_naming_the_value(ruleset, options, named):
    with pytest.raises(ConfigError) as info:
        make_config(ruleset, options, 3)
    assert named in str(info.value)


def test_options_every_ruleset_accepts():
    for ruleset in ("modern", "classic", "classic-set99"):
        assert make_config(ruleset, {"max_plays": 5}, 2).options["max_plays"] == 5
    assert make_config("classic", {"ninety_nine_on_zero": True}, 2).options["ninety_nine_on_zero"]
    assert make_config("classic", {"tokens": 0}, 2).options["tokens"] == 0
    opts = make_config("classic-set99", {"scoring": "points", "points_target": 30,
                                         "points_mode": "lowest"}, 2).options
    assert (opts["points_target"], opts["points_mode"]) == (30, "lowest")


def test_unknown_ruleset_is_named():
    with pytest.raises(ConfigError, match="'uno'"):
        make_config("uno", {}, 3)
    with pytest.raises(ConfigError, match="'uno'"):
        Game.new("uno", seats=3)


def test_unknown_card_tokens_are_named():
    with pytest.raises(ConfigError, match="'Q'"):
        parse_card("Q")
    with pytest.raises(ConfigError, match="'P2'"):
        parse_cards(["P2"], make_config("classic", {}, 2).ruleset.deck)
    with pytest.raises(ConfigError, match="'H'"):
        parse_cards(["H"], make_config("modern", {}, 2).ruleset.deck)
    vector = vec("bad-token", "modern", 2, [deal("1 2 3 X9", "5 6 7 8", draw="9")], [])
    result = run_vector(vector)
    assert result.status == MALFORMED and "'X9'" in result.detail


# ---- Reshuffle: an order that leaves out the card just played is not a permutation of
#      the discard pile, so the vector is malformed (the pile includes that card)
def test_reshuffle_order_must_include_the_card_just_played():
    vector = vec("reshuffle-without-played-card", "modern", 2,
                 [deal("1 3 3 3", "2 4 4 4", draw="5")],
                 [play(0, "1"), play(1, "2")], reshuffles=["1"])
    result = run_vector(vector)
    assert result.status == MALFORMED and "not an order of the discard pile" in result.detail


# ---- New rounds: the dealer moves to the next seat still in (clockwise)
def test_new_round_dealer_moves_to_next_seat_still_in():
    game = make("classic", 4, ["9 2 2 2", "2 3 4 5", "H H H H", "H H H H"], "2 2 2", 90,
                options={"tokens": 0},
                more=[([ "DP 2 2 2", None, "R 3 3 3", "9 9 9 9"], "4 4 4", 91),
                      (["9 2 2 2", None, "2 3 4 5", None], "H H", 90)])
    assert (game.dealer, game.to_act) == (3, 0)
    game.play(0, C("9"))                         # seat 1 has no playable card: out
    assert (game.round, game.dealer, game.to_act) == (2, 0, 2)
    assert game.view(2).table.dealer == 0
    game.play(2, C("R"))
    game.play(0, C("DP"))                        # seat 3 owes two, cannot pay: out
    assert (game.round, game.dealer, game.to_act) == (3, 2, 0)
    deals = [e[1:] for e in game.events if e[0] == DEAL]
    assert deals == [(1, 3, 0, 90), (2, 0, 2, 91), (3, 2, 0, 90)]


def test_new_round_dealer_leaves_when_eliminated():
    # 3 seats, dealer 2 is eliminated in round 1: round 2's dealer is seat 0, seat 1 first
    game = make("classic", 3, ["9 2 2 2", "H 2 2 2", "2 3 4 5"], "2 2", 90,
                options={"tokens": 0}, more=[(["2 2 2 2", "3 3 3 3", None], "4", 0)])
    game.play(0, C("9"))
    game.play(1, C("H"))                         # seat 2 cannot play: eliminated
    assert game.in_game == [True, True, False]
    assert (game.round, game.dealer, game.to_act) == (2, 0, 1)


# ---- modern elimination: hand laid face up, public to seats and spectators
def test_modern_eliminated_hand_is_laid_face_up_for_everyone():
    game = make("modern", 3, ["8 0 0 0", "1 2 3 4", "0 0 0 0"], "5 5", 90)
    game.play(0, C("8"))
    shown = tuple(parse_cards("1 2 3 4".split()))
    for seat in range(3):
        assert tuple(sorted(game.view(seat).revealed[1])) == tuple(sorted(shown))
        assert game.view(seat).to_dict()["revealed"] == {"1": ["1", "2", "3", "4"]}
    spectator = game.spectator_view()
    assert tuple(sorted(spectator.revealed[1])) == tuple(sorted(shown))
    assert spectator.hands is None                 # the live hands stay hidden
    assert spectator.hand_sizes == (4, None, 4)
    assert any(e[0] == ELIMINATE and e[1] == 1 and e[2] is not None for e in game.events)
    assert game.to_act == 2


# ---- Errors: messages name the card, and for the limit the total and the limit;
#      a rejected play changes nothing
def test_error_messages_name_card_total_and_limit():
    game = make("modern", 2, ["9 0 5 6", "1 2 3 4"], "7 7", 90)
    with pytest.raises(NotYourTurn, match=r"\b1\b") as info:
        game.play(1, C("1"))
    assert info.value.code == "not_your_turn"
    with pytest.raises(NotInHand, match=r"\b8\b") as info:
        game.play(0, C("8"))
    assert info.value.code == "not_in_hand"
    with pytest.raises(IllegalPlay) as info:
        game.play(0, C("9"))
    message = str(info.value)
    assert info.value.code == "illegal_play"
    assert "9" in message and "90" in message and "98" in message


def test_error_messages_for_99_and_dp_name_the_card():
    game = make("classic", 3, ["DP 2 2 2", "DP 99 3 3", "4 4 4 4"], "5 5 5")
    game.play(0, C("DP"))
    with pytest.raises(IllegalPlay, match="DP"):
        game.play(1, C("DP"))
    with pytest.raises(IllegalPlay, match="99"):
        game.play(1, C("99"))
    game = make("modern", 2, ["99 1 1 1", "2 2 2 2"], "3")
    with pytest.raises(IllegalPlay, match="99"):
        game.play(0, C("99"))


def test_error_after_the_game_is_over_names_it():
    game = make("modern", 2, ["8 0 0 0", "1 2 3 4"], "1", 90)
    game.play(0, C("8"))
    assert game.finished
    with pytest.raises(NotYourTurn, match="over"):
        game.play(0, C("0"))


def test_rejected_play_leaves_the_game_unchanged():
    game = make("classic", 3, ["DP 2 2 2", "DP 99 3 3", "4 4 4 4"], "5 5 5", 95)
    game.play(0, C("DP"))
    before = (facts(game), len(game.events), game.view(1).to_dict(), game.legal_cards())
    for seat, tok in ((0, "2"), (1, "9"), (1, "DP"), (1, "99"), (1, "10")):
        with pytest.raises((NotYourTurn, NotInHand, IllegalPlay)):
            game.play(seat, C(tok))
    assert (facts(game), len(game.events), game.view(1).to_dict(), game.legal_cards()) == before


# ---- Views: a seat sees its own hand only; legal cards only for the seat to act;
#      `played` is the public discard history
def test_seat_view_never_holds_another_live_hand():
    game = make("modern", 3, ["1 2 3 4", "5 6 7 8", "9 10 R -10"], "0 0 0")
    for seat in range(3):
        view = game.view(seat)
        assert view.hand == game.hand(seat)
        data = view.to_dict()
        assert "hands" not in data and data["revealed"] == {}
        others = [t for s in range(3) if s != seat for t in tokens_of(game.hand(s))]
        shown = set(data["hand"]) | set(data["legal"])
        assert not shown & set(others)
        assert data["hand_sizes"] == [4, 4, 4]


def test_legal_cards_only_for_the_seat_to_act():
    game = make("modern", 3, ["1 2 3 99", "5 6 7 8", "9 10 R -10"], "0 0 0", 90)
    assert set(tokens_of(game.view(0).legal)) == {"1", "2", "3"}
    assert game.view(1).legal == () and game.view(2).legal == ()
    game.play(0, C("3"))
    assert game.view(0).legal == ()
    assert set(tokens_of(game.view(1).legal)) == {"5"}


def test_points_view_over_limit_lists_every_card_the_seat_may_choose():
    game = make("classic", 2, ["5 6 7 8", "H H H H"], "9", 97, options=POINTS)
    view = game.view(0)
    assert view.over_limit and set(tokens_of(view.legal)) == {"5", "6", "7", "8"}
    assert not game.view(1).over_limit and game.view(1).legal == ()


def test_played_lists_every_card_played_in_order():
    game = make("modern", 2, ["99 99 99 99", "1 2 3 4"], "5 6 7 8 9 10", 0)
    game.play(1, C("3"))
    game.play(0, C("5"))
    assert tokens_of(game.view(1).played) == ["99", "99", "99", "99", "3", "5"]
    assert tokens_of(game.spectator_view().played) == ["99", "99", "99", "99", "3", "5"]


def test_played_includes_cards_played_past_the_limit():
    game = make("classic", 3, ["2 2 2 2", "5 6 7 8", "H H H H"], "3 9", 97, options=POINTS)
    game.play(0, C("2"))
    game.play(1, C("7"))
    assert tokens_of(game.view(2).played) == ["2", "7"]
    assert any(e[0] == OUT and e[1] == 1 for e in game.events)


def test_spectators_see_hidden_hands_only_once_over():
    game = make("modern", 2, ["8 0 0 0", "0 0 0 1"], "1 2 9", 89)
    game.play(0, C("8"))
    assert game.spectator_view().hands is None
    game.play(1, C("1"))                         # 98: seat 0 holds 0 0 0 1
    game.play(0, C("0"))                         # seat 1 holds 0 0 0 2: plays on
    assert game.spectator_view().hands is None
    game = make("modern", 3, ["8 0 0 0", "1 2 3 4", "1 1 1 1"], "0 0", 90)
    game.play(0, C("8"))
    assert game.finished
    hands = game.spectator_view().hands
    assert hands is not None and tokens_of(hands[0]) == ["0", "0", "0", "0"]


def test_views_show_public_facts():
    game = make("classic", 3, ["9 2 2 2", "2 3 4 5", "H H H H"], "2", 90,
                more=[(["2 2 2 2", "3 3 3 3", "4 4 4 4"], "5 6", 0)])
    game.play(0, C("9"))
    view = game.view(2)
    assert view.tokens == (3, 2, 3) and view.round == 2 and view.in_game == (True,) * 3
    assert view.draw_size == 2 and view.discard_size == 0 and view.total == 0
    assert view.to_act == 1 and view.owed == 1 and view.direction == 1


def test_events_never_show_a_live_hand():
    game = make("classic", 3, ["9 2 2 2", "2 3 4 5", "H H H H"], "2", 90, options={"tokens": 0},
                more=[(["2 2 2 2", None, "4 4 4 4"], "5 6", 0)])
    game.play(0, C("9"))                         # seat 1 is eliminated (token game: hidden)
    data = game.view(0).to_dict()
    for event in data["events"]:
        assert "hand" not in event or event["hand"] is None
        assert event["kind"] != "draw" or isinstance(event["count"], int)
    assert data["revealed"] == {}
