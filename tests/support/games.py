"""Games for tests of the engine and of what bots build on it: hypothesis strategies for
every ruleset and option, and the view the SDK hands a bot for a seat of an engine game."""

from __future__ import annotations

from hypothesis import strategies as st
from ono99.bot.model import Match, Rules, View

from arena.referee import wire
from arena.rules import Game, make_config


@st.composite
def configs(draw, max_plays: bool = False):
    """A game config of any ruleset, scoring and options, 2 to 8 seats (``max_plays``:
    sometimes a cap on the cards played per round)."""
    ruleset = draw(st.sampled_from(["modern", "classic", "classic-set99"]))
    options = {}
    if ruleset != "modern":
        if draw(st.booleans()):
            options.update(scoring="points", points_target=draw(st.sampled_from([40, 120])),
                           points_mode=draw(st.sampled_from(["elimination", "lowest"])))
        else:
            options["tokens"] = draw(st.integers(0, 2))
        if ruleset == "classic" and draw(st.booleans()):
            options["ninety_nine_on_zero"] = True
    if draw(st.booleans()):
        options["max_total"] = draw(st.sampled_from([98, 99]))
    if max_plays and draw(st.integers(0, 3)) == 0:
        options["max_plays"] = draw(st.integers(5, 60))
    return make_config(ruleset, options, draw(st.integers(2, 8)))


def sdk_view(game: Game, seat: int) -> View:
    """What the SDK hands a bot for ``seat``: the engine view through the referee's wire."""
    match = Match("m", seat, [f"s{s}" for s in range(game.seats)],
                  Rules.from_proto(wire.rules_to_wire(game.config)), 100, 1000, 7)
    match._raw.extend(wire.event_to_wire(e) for e in game.events)
    msg = wire.turn_request("m", 1, game.view(seat), wire.SeatStatesCache(), [], 100, 1000)
    return View(msg.turn, match)
