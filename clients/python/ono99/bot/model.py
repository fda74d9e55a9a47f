"""Typed, read-only views of the referee's messages, cards as tokens ("7", "P2", "99").

These wrap the protobuf messages of ``ono99.v1``; properties convert on access, so a bot
pays only for what it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ono99.v1 import game_pb2, referee_pb2

#: Token of each ``ono99.v1.Card`` value (index = enum number; 0 is unspecified).
TOKENS: tuple[str, ...] = (
    "", "-10", "R", "P2", "DP", "H",
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "99",
)
#: ``ono99.v1.Card`` value of each token.
CARD_VALUES: dict[str, int] = {t: i for i, t in enumerate(TOKENS) if t}


def token_of(card: int) -> str:
    """The token of a ``Card`` enum value (``"?"`` for a value this SDK does not know)."""
    return TOKENS[card] if 0 < card < len(TOKENS) else "?"


def tokens(cards: Any) -> list[str]:
    """The tokens of ``Card`` enum values (``"?"`` for each one this SDK does not know: a
    referee's value out of range never raises here, nor reads as another card)."""
    return [token_of(c) for c in cards]


@dataclass(frozen=True)
class Rules:
    """The rules of a match: ruleset, every option (as text), seats, limit."""

    ruleset: str
    options: dict[str, str]
    seats: int
    limit: int

    @classmethod
    def from_proto(cls, msg: game_pb2.Rules) -> Rules:
        return cls(msg.ruleset, dict(msg.options), msg.seats, msg.limit)


@dataclass(frozen=True)
class Event:
    """One public event: ``kind`` plus the fields that kind has (others are None).

    Kinds: ``deal``, ``play``, ``four99``, ``draw``, ``reshuffle``, ``lose``, ``token``,
    ``out``, ``scores``, ``eliminate``, ``forfeit``, ``end``.
    """

    kind: str
    seat: int | None = None
    card: str | None = None
    total: int | None = None
    count: int | None = None
    hand: tuple[str, ...] | None = None
    scores: tuple[int, ...] | None = None
    ranking: tuple[tuple[int, ...], ...] | None = None
    termination: str | None = None
    round: int | None = None
    dealer: int | None = None
    first: int | None = None
    tokens_left: int | None = None
    draw_size: int | None = None
    together: bool | None = None   # forfeit: it left with the seat of the forfeit before

    @classmethod
    def from_proto(cls, msg: game_pb2.Event) -> Event:
        which = msg.WhichOneof("kind")
        e = getattr(msg, which) if which else None
        if which == "card_played":
            return cls("play", seat=e.seat, card=token_of(e.card), total=e.total)
        if which == "cards_drawn":
            return cls("draw", seat=e.seat, count=e.count)
        if which == "round_started":
            return cls("deal", round=e.round, dealer=e.dealer, first=e.first, total=e.total)
        if which == "four_ninety_nines":
            return cls("four99", seat=e.seat, total=e.total)
        if which == "reshuffled":
            return cls("reshuffle", draw_size=e.draw_size)
        if which == "seat_lost":
            return cls("lose", seat=e.seat)
        if which == "token_lost":
            return cls("token", seat=e.seat, tokens_left=e.tokens_left)
        if which == "out_of_round":
            return cls("out", seat=e.seat, card=token_of(e.card) if e.card else None)
        if which == "round_scored":
            return cls("scores", scores=tuple(e.scores))
        if which == "seat_eliminated":
            return cls("eliminate", seat=e.seat, hand=tuple(tokens(e.hand)) or None)
        if which == "seat_forfeited":
            return cls("forfeit", seat=e.seat, together=e.together)
        if which == "game_ended":
            return cls("end", ranking=tuple(tuple(p.seats) for p in e.ranking),
                       termination=e.termination)
        return cls("unknown")


@dataclass(frozen=True)
class SeatInfo:
    """Public facts about one seat."""

    hand_size: int
    in_game: bool
    in_round: bool
    tokens: int
    score: int
    revealed: tuple[str, ...]


class Match:
    """A match this bot plays in, and the public history seen so far."""

    __slots__ = ("match_id", "seat", "names", "rules", "move_ms", "bank_ms", "bot_seed",
                 "_raw", "_events")

    def __init__(self, match_id: str, seat: int, names: list[str], rules: Rules | None,
                 move_ms: int, bank_ms: int, bot_seed: int) -> None:
        self.match_id = match_id
        self.seat = seat
        self.names = names
        self.rules = rules
        self.move_ms = move_ms
        self.bank_ms = bank_ms
        self.bot_seed = bot_seed
        self._raw: list[game_pb2.Event] = []   # as received; converted when first read
        self._events: list[Event] = []

    @classmethod
    def from_proto(cls, msg: referee_pb2.MatchStart) -> Match:
        return cls(msg.match_id, msg.seat, list(msg.seat_names), Rules.from_proto(msg.rules),
                   msg.time_control.move_ms, msg.time_control.bank_ms, msg.bot_seed)

    @property
    def events(self) -> list[Event]:
        """Every public event of the match so far, in order."""
        done = len(self._events)
        if done < len(self._raw):
            self._events.extend(Event.from_proto(e) for e in self._raw[done:])
        return self._events

    def played(self, this_round: bool = False) -> list[str]:
        """Cards played so far, in order (the public discard history); with
        ``this_round``, only since the current round's deal."""
        return self._played(("deal",) if this_round else ())

    def discard_pile(self) -> list[str]:
        """The cards on the discard pile now: played since the last deal or reshuffle."""
        return self._played(("deal", "reshuffle"))

    def _played(self, restart: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for e in self.events:
            if e.kind in restart:
                out.clear()
            elif e.kind == "play" or (e.kind == "out" and e.card):
                out.append(e.card)
            elif e.kind == "four99":
                out.extend(["99"] * 4)
        return out

    def __repr__(self) -> str:
        return f"Match({self.match_id!r}, seat={self.seat}, names={self.names})"


class View:
    """What this seat may know at its turn, as the referee sent it, cards as tokens."""

    __slots__ = ("_turn", "_view", "match")

    def __init__(self, turn: referee_pb2.TurnRequest, match: Match) -> None:
        self._turn = turn
        self._view = turn.view
        self.match = match

    @property
    def turn_id(self) -> int:
        return self._turn.turn_id

    @property
    def legal(self) -> list[str]:
        """The distinct cards this seat may play now (never empty)."""
        return tokens(self._turn.legal)

    @property
    def over_limit(self) -> bool:
        """Points scoring: nothing is playable within the limit; the card played takes the
        seat out of the round."""
        return self._turn.over_limit

    @property
    def move_ms(self) -> int:
        return self._turn.move_ms

    @property
    def bank_ms(self) -> int:
        return self._turn.bank_ms

    @property
    def previous_latency_us(self) -> int:
        return self._turn.previous_latency_us

    @property
    def seat(self) -> int:
        return self._view.seat

    @property
    def hand(self) -> list[str]:
        return tokens(self._view.hand)

    @property
    def total(self) -> int:
        return self._view.total

    @property
    def direction(self) -> int:
        return self._view.direction

    @property
    def to_act(self) -> int:
        return self._view.to_act

    @property
    def owed(self) -> int:
        return self._view.owed

    @property
    def draw_size(self) -> int:
        return self._view.draw_size

    @property
    def discard_size(self) -> int:
        return self._view.discard_size

    @property
    def round(self) -> int:
        return self._view.round

    @property
    def dealer(self) -> int:
        return self._view.dealer

    @property
    def limit(self) -> int:
        return self.match.rules.limit

    @property
    def seats(self) -> list[SeatInfo]:
        return [SeatInfo(s.hand_size, s.in_game, s.in_round, s.tokens, s.score,
                         tuple(tokens(s.revealed))) for s in self._view.seats]

    def next_seat(self, seat: int | None = None) -> int:
        """The seat that acts after ``seat`` (default: this one) in the current direction,
        skipping seats no longer playing."""
        seats = self._view.seats
        n = len(seats)
        s = self.seat if seat is None else seat
        for _ in range(n):
            s = (s + self.direction) % n
            if seats[s].in_round:
                return s
        return s

    def __repr__(self) -> str:
        return (f"View(seat={self.seat}, hand={self.hand}, legal={self.legal}, "
                f"total={self.total}, owed={self.owed})")


@dataclass(frozen=True)
class Verdict:
    """The referee's verdict on a seat: its kind (``timeout``, ``illegal``...), what
    happened, and how long the failed turn took by the referee's clock, in us (0 if not
    in a turn)."""

    seat: int
    kind: str
    detail: str
    latency_us: int


_VERDICTS = {v.number: v.name.removeprefix("VERDICT_KIND_").lower()
             for v in referee_pb2.VerdictKind.DESCRIPTOR.values}


@dataclass(frozen=True)
class MatchResult:
    """How a match ended, as the referee told this bot."""

    match_id: str
    ranking: tuple[tuple[int, ...], ...]
    termination: str
    verdicts: tuple[Verdict, ...]
    hands: dict[int, tuple[str, ...]]

    @classmethod
    def from_proto(cls, msg: referee_pb2.MatchEnd) -> MatchResult:
        return cls(
            msg.match_id,
            tuple(tuple(p.seats) for p in msg.ranking),
            msg.termination,
            tuple(Verdict(v.seat, _VERDICTS.get(v.kind, "unknown"), v.detail, v.latency_us)
                  for v in msg.verdicts),
            {h.seat: tuple(tokens(h.cards)) for h in msg.hands},
        )

    def place_of(self, seat: int) -> int:
        """``seat``'s place, 1 = best; tied seats share the best place of their group;
        0 when the match has no ranking (it was aborted)."""
        if not self.ranking:
            return 0
        place = 1
        for group in self.ranking:
            if seat in group:
                return place
            place += len(group)
        return place
