"""Matches played in other processes (the multi-process executor's referees), brought to
the hub of the process that serves spectators.

In a worker, a :class:`BusListener` encodes what the match tells it as the Spectator
messages the hub keeps (the same encoding as in-process) and sends them in batches, at
most ``FLUSH_S`` apart, over the queue the worker already sends results on. In the
serving process, :meth:`Bus.deliver` hands each batch to the hub. Only public data
crosses, unless the hub keeps the organiser view (then each frame's hands too).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from ono99.v1 import referee_pb2, spectator_pb2 as pb

from arena.referee import wire as referee_wire
from arena.referee.listeners import END, Frame, MatchInfo, MatchListener, MatchOver
from arena.referee.results import Verdict
from arena.watch import wire
from arena.watch.hub import SpectatorHub

FLUSH_S = 0.01

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tap:
    """What a worker needs to make its listener (picklable)."""

    tournament: str
    hands: bool

    def listener(self, send: Callable[[list], None]) -> MatchListener:
        return BusListener(send, self.tournament, self.hands)


class Bus:
    """The serving process's end: a tap for the workers, and delivery into ``hub``."""

    def __init__(self, hub: SpectatorHub, tournament: str) -> None:
        self.hub = hub
        self.tournament = tournament
        self.tap = Tap(tournament, hub.organiser_view)
        self._failed: set[str] = set()   # matches whose failure was logged (once each)

    def listener(self) -> MatchListener:
        """For matches played in this process: straight to the hub."""
        return self.hub.listener(self.tournament)

    def deliver(self, batch: list) -> None:
        """Hand ``batch`` to the hub. What fails there (a bug) is logged and the next
        message goes on: it stopped a multi-process run, and silently ended a Ray actor's
        stream (its matches unseen from then on)."""
        hub = self.hub
        for kind, match_id, data, extra in batch:
            try:
                if kind == "start":
                    hub.match_started(pb.MatchSummary.FromString(data))
                elif kind == "frame":
                    hub.frame(match_id, pb.MatchFrame.FromString(data), extra)
                elif kind == "verdict":
                    hub.verdict(match_id, referee_pb2.Verdict.FromString(data))
                elif kind == END:
                    hub.match_ended(match_id, pb.MatchOver.FromString(data))
            except Exception:   # noqa: BLE001 - logged; the spectators' other matches go on
                if match_id not in self._failed:   # once a match: not a trace every frame
                    if len(self._failed) >= 1000:
                        self._failed.clear()
                    self._failed.add(match_id)
                    log.exception("the spectator hub failed on a %s of match %s", kind, match_id)


class BusListener(MatchListener):
    """In a worker: the match's messages, encoded, sent back in batches."""

    def __init__(self, send: Callable[[list], None], tournament: str, hands: bool) -> None:
        self.send = send
        self.tournament = tournament
        self.sees_hands = hands
        self._states = referee_wire.SeatStatesCache()
        self._batch: list[tuple] = []
        self._timer: asyncio.TimerHandle | None = None

    def match_started(self, info: MatchInfo) -> None:
        self._add("start", info.match_id, wire.summary(info, self.tournament).SerializeToString())

    def frame(self, frame: Frame) -> None:
        self._add("frame", frame.match_id, wire.frame(frame, self._states).SerializeToString(),
                  frame.hands)

    def verdict(self, match_id: str, verdict: Verdict) -> None:
        self._add("verdict", match_id,
                  wire.verdicts([verdict])[0].SerializeToString())

    def match_ended(self, over: MatchOver) -> None:
        self._add(END, over.match_id, wire.over(over).SerializeToString())
        self.flush()

    def _add(self, kind: str, match_id: str, data: bytes, extra=None) -> None:
        self._batch.append((kind, match_id, data, extra))
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(FLUSH_S, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._batch:
            batch, self._batch = self._batch, []
            self.send(batch)
