"""Results as data: what was played, how it ended, and what each bot did wrong.

Ratings and storage read :class:`MatchResult` and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from arena.rules.events import event_to_dict
from arena.rules.game import Deal, Game, places_of
from arena.rules.rulesets import GameConfig
from arena.seeds import Seeds

class VerdictKind(StrEnum):
    """Why the referee removed (or played for) a seat."""

    TIMEOUT = "timeout"            # no valid answer within the move allowance plus the bank
    DISCONNECTED = "disconnected"  # the bot's stream ended during the match
    CRASHED = "crashed"            # the bot process exited during the match
    ILLEGAL = "illegal"            # too many refused actions in one match
    ABORTED = "aborted"            # the referee stopped the match (shutdown)
    RETIRED = "retired"            # the bot failed too often and was retired from the tournament
    ABSENT = "absent"              # a remote bot was not connected when its match was due


class FaultPolicy(StrEnum):
    """What happens to a faulty seat (``MatchSpec.on_fault``)."""

    FORFEIT = "forfeit"  # it leaves the game as if it had lost (default)
    AUTOPLAY = "play"    # the referee plays a legal card at random from then on (seeded: see runner)


class Status(StrEnum):
    """How a match ended: played to its end, or stopped by the referee."""

    FINISHED = "finished"
    ABORTED = "aborted"


#: the longest move allowance, and the largest bank, a command accepts: a day (the
#: protocol's uint32 of milliseconds ends at 49 days, and a longer clock is a typo)
MAX_CLOCK_S = 86_400


@dataclass(frozen=True)
class TimeControl:
    """A seat's clock: each move may take ``move_ms``; beyond it, time comes from the bank.
    Each is at most :data:`MAX_CLOCK_S` seconds (the protocol carries them as 32-bit ms)."""

    move_ms: int = 1000
    bank_ms: int = 10_000

    def describe(self) -> str:
        """In words: ``1 s/move + 10 s bank``."""
        return f"{self.move_ms / 1000:g} s/move + {self.bank_ms / 1000:g} s bank"


@dataclass(frozen=True)
class MatchSpec:
    """Everything that decides a match: rules, seed, seating, clocks, fault policy."""

    match_id: str
    config: GameConfig
    seed: int
    names: tuple[str, ...]
    time_control: TimeControl = TimeControl()
    bot_seeds: tuple[int, ...] = ()   # one per seat; default: derived from the seed
    on_fault: str = FaultPolicy.FORFEIT
    max_rejections: int = 5           # refused actions a seat may send in one match
    scenario: tuple[Deal, ...] = ()   # scripted first rounds; then random from the seed

    def new_game(self) -> Game:
        """The game this spec plays: from its seed, or its scenario and then its seed."""
        if self.scenario:
            return Game.from_deals(self.config, self.scenario, then_seed=self.seed)
        return Game.from_config(self.config, self.seed)

    def bot_seed(self, seat: int) -> int:
        """The seed sent to ``seat``: from ``bot_seeds``, else keyed by the deal seed (a bot
        cannot get from it back to the deal: that would take inverting BLAKE2b)."""
        if self.bot_seeds:
            return self.bot_seeds[seat]
        return Seeds(self.seed).bot_seed("seat", seat)

    def first_turn_id(self) -> int:
        """Turn ids of the match count up from here: keyed by the deal seed and the match
        id, so they say nothing of other matches (not even how many turns the referee
        has run) and replay identically. Below 2^62, with room to count up."""
        return Seeds(self.seed).bot_seed("turn ids", self.match_id) >> 1


@dataclass(frozen=True)
class Verdict:
    """A seat's fault, with the referee's measured latency of the failed turn."""

    seat: int
    kind: str
    detail: str
    latency_us: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"seat": self.seat, "kind": self.kind, "detail": self.detail,
                "latency_us": self.latency_us}


@dataclass
class SeatStats:
    """Per-seat timing of one match (referee-measured)."""

    moves: int = 0
    latency_us_total: int = 0
    latency_us_max: int = 0
    rejections: int = 0
    #: every move's latency, in order (for percentiles across matches: not stored)
    latencies_us: list[int] = field(default_factory=list, compare=False, repr=False)

    @property
    def latency_us_mean(self) -> float:
        return self.latency_us_total / self.moves if self.moves else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"moves": self.moves, "latency_us_mean": round(self.latency_us_mean),
                "latency_us_max": self.latency_us_max, "rejections": self.rejections}


@dataclass
class MatchResult:
    """How one match went: the ranking, why it ended, verdicts, timings, the event record."""

    spec: MatchSpec
    status: str
    ranking: tuple[tuple[int, ...], ...]
    termination: str
    verdicts: list[Verdict]
    stats: list[SeatStats]
    started_at: float          # Unix time
    duration_s: float
    turns: int
    events: list[tuple] = field(default_factory=list, repr=False)

    @property
    def match_id(self) -> str:
        return self.spec.match_id

    def places(self) -> list[int]:
        """Each seat's place, 1 = best; a tie shares the best place of its group."""
        return places_of(self.ranking, len(self.spec.names))

    def to_dict(self, with_events: bool = False) -> dict[str, Any]:
        spec = self.spec
        out = {
            "match_id": spec.match_id,
            "ruleset": spec.config.ruleset.name,
            "options": dict(spec.config.options),
            "seats": list(spec.names),
            "seed": spec.seed,
            "status": self.status,
            "ranking": [list(g) for g in self.ranking],
            "termination": self.termination,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "stats": [s.to_dict() for s in self.stats],
            "time_control": {"move_ms": spec.time_control.move_ms,
                             "bank_ms": spec.time_control.bank_ms},
            "on_fault": spec.on_fault,
            "started_at": self.started_at,
            "duration_s": round(self.duration_s, 6),
            "turns": self.turns,
        }
        if with_events:
            out["events"] = [event_to_dict(e) for e in self.events]
        return out
