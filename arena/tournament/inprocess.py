"""An executor that plays Python bots inside this process, without gRPC or clocks.

Each bot is an ``ono99.bot.Bot`` object driven through the SDK's own
:class:`~ono99.bot.driver.Driver` with the very protobuf messages the referee would
send (match start, turn requests with the seat's view and the public events, match end),
so a bot behaves exactly as it does over the wire; only the network and the clock are
missing. It is for experiments that need many matches fast (the ratings benchmark), not
for judging bots: there are no time limits, and a bot's exception propagates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ono99.bot.base import Bot
from ono99.bot.driver import Driver
from ono99.v1 import referee_pb2

from arena.referee.results import FINISHED, MatchResult, MatchSpec, SeatStats
from arena.referee.wire import (
    SeatStatesCache, card_from_wire, cards_to_wire, event_to_wire, places_to_wire, rules_to_wire,
    view_to_wire,
)
from arena.rules.game import Game
from arena.tournament.executor import Executor, ResultSink
from arena.tournament.schedule import PlannedMatch


def play_in_process(spec: MatchSpec, bots: Sequence[Bot]) -> MatchResult:
    """Play one match between bot objects (one per seat)."""
    started_at = time.time()
    t0 = time.perf_counter()
    game = Game.from_config(spec.config, spec.seed)
    drivers = [Driver(b) for b in bots]
    rules = rules_to_wire(spec.config)
    tc = referee_pb2.TimeControl(move_ms=spec.time_control.move_ms, bank_ms=spec.time_control.bank_ms)
    for seat, driver in enumerate(drivers):
        list(driver.handle(referee_pb2.RefereeMessage(match_start=referee_pb2.MatchStart(
            match_id=spec.match_id, seat=seat, seat_names=list(spec.names), rules=rules,
            time_control=tc, bot_seed=spec.bot_seed(seat)))))
    wire: list = []
    sent = [0] * len(drivers)
    states = SeatStatesCache()
    stats = [SeatStats() for _ in drivers]
    turn_id = 0
    while not game.finished:
        seat = game.to_act
        events = game.events
        wire.extend(event_to_wire(e) for e in events[len(wire):])
        view = game.view(seat)
        turn_id += 1
        msg = referee_pb2.RefereeMessage(turn=referee_pb2.TurnRequest(
            match_id=spec.match_id, turn_id=turn_id, view=view_to_wire(view, states.get(view.table)),
            legal=cards_to_wire(view.legal), over_limit=view.over_limit, events=wire[sent[seat]:],
            move_ms=tc.move_ms, bank_ms=tc.bank_ms))
        sent[seat] = len(wire)
        answers = list(drivers[seat].handle(msg))
        card = card_from_wire(answers[0].action.card) if answers else None
        if card not in view.legal:
            raise ValueError(f"{spec.names[seat]} answered {answers!r} to a turn with legal "
                             f"cards {view.legal}")
        game.play(seat, card)
        stats[seat].moves += 1
    wire.extend(event_to_wire(e) for e in game.events[len(wire):])
    outcome = game.outcome
    for seat, driver in enumerate(drivers):
        list(driver.handle(referee_pb2.RefereeMessage(match_end=referee_pb2.MatchEnd(
            match_id=spec.match_id, ranking=places_to_wire(outcome.ranking),
            termination=outcome.termination, events=wire[sent[seat]:]))))
    return MatchResult(spec, FINISHED, outcome.ranking, outcome.termination, [], stats,
                       started_at, time.perf_counter() - t0, turn_id, game.events)


class InProcessExecutor(Executor):
    """Plays planned matches one after another with bot objects made by ``factories``
    (one factory per bot of the tournament; one object per seat, made per match)."""

    def __init__(self, factories: Sequence[Callable[[], Bot]]) -> None:
        self.factories = list(factories)

    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        for plan in plans:
            result = play_in_process(spec_of(plan), [self.factories[b]() for b in plan.seats])
            outcome = on_result(plan, result)
            if outcome is not None and hasattr(outcome, "__await__"):
                await outcome
