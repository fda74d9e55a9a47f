"""What a match tells those who follow it (live displays, logs, spectators), and how.

A listener is given public data only: who plays under what rules (not the seed), each
step's public events with the spectator view after them (the engine's one function for
what a spectator may know), verdicts, and how the match ended. The organiser's view is
the one exception, asked for explicitly (``sees_hands``): each step then also carries
every hand.

Listeners run isolated from the match: :class:`Broadcast` calls each one and, if it
raises, logs the error and drops that listener; the match goes on. A match with no
listener builds nothing for them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.referee.results import TimeControl, Verdict
from arena.rules.rulesets import GameConfig
from arena.rules.views import SpectatorView

log = logging.getLogger("arena.referee")


@dataclass(frozen=True)
class MatchInfo:
    """A match as anyone may know it before it starts."""

    match_id: str
    names: tuple[str, ...]
    config: GameConfig
    time_control: TimeControl
    started_at: float            # Unix time


@dataclass(frozen=True)
class Frame:
    """One step of a match: the public events of one decision (or of the deal, a
    forfeit) and the public state after them."""

    match_id: str
    seq: int                     # 0 for the deal, then 1, 2, ...
    events: tuple[tuple, ...]
    view: SpectatorView
    seat: int | None             # whose decision it was
    latency_us: int | None       # how long it took
    bank_ms: tuple[int, ...]     # each seat's bank left
    at: float                    # seconds since the match started
    hands: tuple[tuple[int, ...], ...] | None = None   # for organiser listeners only
    time: float = 0.0            # Unix time it was made


@dataclass(frozen=True)
class MatchOver:
    """How a match ended (also when the referee stopped it: status ``aborted``)."""

    match_id: str
    status: str
    ranking: tuple[tuple[int, ...], ...]
    termination: str
    verdicts: tuple[Verdict, ...]
    hands: tuple[tuple[int, ...], ...]   # every hand at the end, revealed now
    turns: int
    duration_s: float


class MatchListener:
    """Follows matches. Methods are called in the referee's event loop and must not block."""

    #: The organiser's view: frames carry every hand. Only listeners that serve it
    #: (behind the organiser token) may set this.
    sees_hands = False

    def match_started(self, info: MatchInfo) -> None:
        """A match is starting: who plays under what rules."""

    def frame(self, frame: Frame) -> None:
        """One step of a match: its public events and the state after them."""

    def verdict(self, match_id: str, verdict: Verdict) -> None:
        """A seat of match ``match_id`` got a verdict (it timed out, crashed...)."""

    def match_ended(self, over: MatchOver) -> None:
        """A match is over (or was stopped): how it ended."""


class Broadcast:
    """Listeners called one by one; one that raises is logged and dropped."""

    def __init__(self, listeners: Sequence[MatchListener] = ()) -> None:
        self.listeners = list(listeners)
        self.hands = any(listener.sees_hands for listener in self.listeners)

    def __bool__(self) -> bool:
        return bool(self.listeners)

    def match_started(self, info: MatchInfo) -> None:
        self._each("match_started", info)

    def frame(self, frame: Frame, private: Frame | None = None) -> None:
        """``private``: the same frame with the hands, for organiser listeners."""
        for listener in list(self.listeners):
            self._call(listener, "frame", private if listener.sees_hands and private else frame)

    def verdict(self, match_id: str, verdict: Verdict) -> None:
        self._each("verdict", match_id, verdict)

    def match_ended(self, over: MatchOver) -> None:
        self._each("match_ended", over)

    def _each(self, method: str, *args) -> None:
        for listener in list(self.listeners):
            self._call(listener, method, *args)

    def _call(self, listener: MatchListener, method: str, *args) -> None:
        try:
            getattr(listener, method)(*args)
        except BrokenPipeError:
            # the reader of what it writes went: this process's output (arena match ... |
            # head), or a referee worker's parent (its bus): nobody is left to watch, and
            # the run stops, as a writer to a closed pipe does, its cleanup in order
            raise
        except Exception:
            log.exception("listener %r failed in %s; it is dropped, the match goes on",
                          listener, method)
            self.listeners.remove(listener)
            self.hands = any(x.sees_hands for x in self.listeners)


#: The kind of a tap's message that ends its match, the last of that match's messages (a
#: batch a tap sends is a list of ``(kind, match_id, data, extra)``).
END = "over"


class ListenerTap(Protocol):
    """Picklable: makes, in another process, a listener that sends what it hears (in
    batches of messages, each ``(kind, match_id, data, extra)``) through ``send``."""

    def listener(self, send: Callable[[list], None]) -> MatchListener: ...


class ListenerBus(Protocol):
    """Listeners for matches wherever they are played: ``listener()`` in this process; in
    another, ``tap`` goes there and what its listener sends comes back to ``deliver``."""

    tap: ListenerTap

    def listener(self) -> MatchListener: ...

    def deliver(self, batch: list) -> None: ...
