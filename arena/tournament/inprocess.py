"""Matches between Python bots played inside this process, without gRPC or clocks.

Each bot is an ``ono99.bot.Bot`` object driven through the SDK's own
:class:`~ono99.bot.driver.Driver` with the very protobuf messages the referee would
send (match start, turn requests with the seat's view and the public events, match end),
so a bot behaves exactly as it does over the wire; only the network and the clock are
missing. It is for experiments that need many matches fast (the ratings benchmark), not
for judging bots: there are no time limits, and a bot's exception propagates.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ono99.bot.base import Bot
from ono99.bot.driver import Driver

from arena.referee.results import MatchResult, MatchSpec, SeatStats, Status
from arena.referee.wire import (
    EventEncoder,
    SeatStatesCache,
    card_from_wire,
    match_end,
    match_start,
    rules_to_wire,
    turn_request,
)


def play_in_process(spec: MatchSpec, bots: Sequence[Bot]) -> MatchResult:
    """Play one match between bot objects (one per seat)."""
    started_at = time.time()
    t0 = time.perf_counter()
    game = spec.new_game()
    drivers = [Driver(b) for b in bots]
    rules = rules_to_wire(spec.config)
    for seat, driver in enumerate(drivers):
        list(driver.handle(match_start(spec, seat, rules)))
    encoder = EventEncoder()
    sent = [0] * len(drivers)
    states = SeatStatesCache()
    stats = [SeatStats() for _ in drivers]
    tc = spec.time_control
    turn_id = 0
    while not game.finished:
        seat = game.to_act
        wire = encoder.update(game.events)
        view = game.view(seat)
        turn_id += 1
        msg = turn_request(spec.match_id, turn_id, view, states, wire[sent[seat]:],
                           tc.move_ms, tc.bank_ms)
        sent[seat] = len(wire)
        answers = list(drivers[seat].handle(msg))
        card = card_from_wire(answers[0].action.card) if answers else None
        if card not in view.legal:
            raise ValueError(f"{spec.names[seat]} answered {answers!r} to a turn with legal "
                             f"cards {view.legal}")
        game.play(seat, card)
        stats[seat].moves += 1
    wire = encoder.update(game.events)
    outcome = game.outcome
    for seat, driver in enumerate(drivers):
        list(driver.handle(match_end(spec.match_id, outcome.ranking, outcome.termination,
                                     wire[sent[seat]:])))
    return MatchResult(spec, Status.FINISHED, outcome.ranking, outcome.termination, [], stats,
                       started_at, time.perf_counter() - t0, turn_id, game.events)

