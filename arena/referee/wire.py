"""The one place where engine values become protobuf messages and back.

Engine card codes map to ``ono99.v1.Card`` values by ``code + 1`` (0 is unspecified),
in the same order, so a sorted hand stays sorted on the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ono99.v1 import game_pb2, referee_pb2

from arena.referee.results import MatchSpec, TimeControl, Verdict, VerdictKind
from arena.rules.cards import TOKENS
from arena.rules.events import (
    DEAL, DRAW, ELIMINATE, END, FORFEIT, FOUR_99, LOSE, OUT, PLAY, RESHUFFLE, SCORES, TOKEN,
)
from arena.rules.rulesets import GameConfig, get_ruleset, played_config
from arena.rules.views import SeatView, Table


N_CARDS = len(TOKENS)

_Event = game_pb2.Event
_SeatState = game_pb2.SeatState
_SeatView = game_pb2.SeatView


#: ``Card`` value = engine code + OFFSET (the enum's 0 is CARD_UNSPECIFIED). The one place
#: it is written: everything below goes through it.
OFFSET = 1


def card_from_wire(value: int) -> int | None:
    """The engine code of a ``Card`` value, or None for UNSPECIFIED or an unknown value."""
    code = value - OFFSET
    return code if 0 <= code < N_CARDS else None


def cards_to_wire(cards: Iterable[int]) -> list[int]:
    """``Card`` values of engine codes."""
    return [c + OFFSET for c in cards]


def rules_to_wire(config: GameConfig) -> game_pb2.Rules:
    """The Rules a match start announces: the ruleset by name, every option as text."""
    options = {k: (str(v).lower() if isinstance(v, bool) else str(v))
               for k, v in config.options.items()}
    return game_pb2.Rules(ruleset=config.ruleset.name, options=options, seats=config.seats,
                          limit=config.limit)


def rules_from_wire(rules: game_pb2.Rules) -> GameConfig:
    """The config of the rules a match start announces (every option, as text)."""
    ruleset = get_ruleset(rules.ruleset)
    options = {name: ruleset.option(name).parse(text) for name, text in rules.options.items()}
    return played_config(rules.ruleset, options, rules.seats)


def places_to_wire(ranking: Sequence[Sequence[int]]) -> list[game_pb2.Place]:
    """A ranking (groups of tied seats, best first) as Places."""
    return [game_pb2.Place(seats=list(group)) for group in ranking]


def places_from_wire(places: Iterable[game_pb2.Place]) -> tuple[tuple[int, ...], ...]:
    """A ranking back from its Places: best first, tied seats together."""
    return tuple(tuple(p.seats) for p in places)


def cards_from_wire(values: Iterable[int]) -> tuple[int, ...]:
    """Engine codes of ``Card`` values that must all be cards (ValueError otherwise)."""
    return tuple(_code(v) for v in values)


def _code(value: int) -> int:
    code = card_from_wire(value)
    if code is None:
        raise ValueError(f"{value} is not a card of the Card enum")
    return code


def event_to_wire(e: tuple) -> game_pb2.Event:
    """An engine event tuple (see :mod:`arena.rules.events`) as a protobuf Event."""
    kind = e[0]
    if kind == PLAY:
        return _Event(card_played=game_pb2.CardPlayed(seat=e[1], card=e[2] + OFFSET, total=e[3]))
    if kind == DRAW:
        return _Event(cards_drawn=game_pb2.CardsDrawn(seat=e[1], count=e[2]))
    if kind == DEAL:
        return _Event(round_started=game_pb2.RoundStarted(
            round=e[1], dealer=e[2], first=e[3], total=e[4]))
    if kind == FOUR_99:
        return _Event(four_ninety_nines=game_pb2.FourNinetyNines(seat=e[1], total=e[2]))
    if kind == RESHUFFLE:
        return _Event(reshuffled=game_pb2.Reshuffled(draw_size=e[1]))
    if kind == LOSE:
        return _Event(seat_lost=game_pb2.SeatLost(seat=e[1]))
    if kind == TOKEN:
        return _Event(token_lost=game_pb2.TokenLost(seat=e[1], tokens_left=e[2]))
    if kind == OUT:
        return _Event(out_of_round=game_pb2.OutOfRound(
            seat=e[1], card=0 if e[2] is None else e[2] + OFFSET))
    if kind == SCORES:
        return _Event(round_scored=game_pb2.RoundScored(scores=list(e[1])))
    if kind == ELIMINATE:
        return _Event(seat_eliminated=game_pb2.SeatEliminated(
            seat=e[1], hand=[] if e[2] is None else cards_to_wire(e[2])))
    if kind == FORFEIT:
        return _Event(seat_forfeited=game_pb2.SeatForfeited(seat=e[1], together=len(e) > 2))
    if kind == END:
        return _Event(game_ended=game_pb2.GameEnded(ranking=places_to_wire(e[1]), termination=e[2]))
    raise ValueError(f"unknown event {e!r}")


def event_from_wire(e: game_pb2.Event) -> tuple:
    """A protobuf Event back as the engine's event tuple: the inverse of
    :func:`event_to_wire`, for clients that show what they are sent (``arena watch``).
    The wire writes a hand laid face up and "no hand" alike, as an empty list; this reads
    it back as None (the engine never lays down an empty hand). ValueError for an Event of
    no known kind, or with a card that is not one."""
    kind = e.WhichOneof("kind")
    m = getattr(e, kind) if kind is not None else None
    if kind == "card_played":
        return (PLAY, m.seat, _code(m.card), m.total)
    if kind == "cards_drawn":
        return (DRAW, m.seat, m.count)
    if kind == "round_started":
        return (DEAL, m.round, m.dealer, m.first, m.total)
    if kind == "four_ninety_nines":
        return (FOUR_99, m.seat, m.total)
    if kind == "reshuffled":
        return (RESHUFFLE, m.draw_size)
    if kind == "seat_lost":
        return (LOSE, m.seat)
    if kind == "token_lost":
        return (TOKEN, m.seat, m.tokens_left)
    if kind == "out_of_round":
        return (OUT, m.seat, None if m.card == 0 else _code(m.card))
    if kind == "round_scored":
        return (SCORES, tuple(m.scores))
    if kind == "seat_eliminated":
        return (ELIMINATE, m.seat, cards_from_wire(m.hand) or None)
    if kind == "seat_forfeited":
        return (FORFEIT, m.seat, True) if m.together else (FORFEIT, m.seat)
    if kind == "game_ended":
        return (END, places_from_wire(m.ranking), m.termination)
    raise ValueError(f"an Event of no known kind: {e!r}")


class SeatStatesCache:
    """Encodes a Table's per-seat states once and reuses them while the Table is the same
    object (it changes only at eliminations, tokens, scores and new rounds)."""

    __slots__ = ("_table", "_states")

    def __init__(self) -> None:
        self._table = None
        self._states: list[game_pb2.SeatState] = []

    def get(self, table) -> list[game_pb2.SeatState]:
        if table is not self._table:
            revealed = table.revealed
            self._states = [
                _SeatState(hand_size=size or 0, in_game=table.in_game[s], in_round=table.in_round[s],
                           tokens=table.tokens[s], score=table.scores[s],
                           revealed=cards_to_wire(revealed.get(s, ())))
                for s, size in enumerate(table.hand_sizes)]
            self._table = table
        return self._states


def view_to_wire(view: SeatView, seat_states: list[game_pb2.SeatState]) -> game_pb2.SeatView:
    """A seat's engine view as a protobuf SeatView (``seat_states`` from the cache)."""
    table = view.table
    return _SeatView(
        seat=view.seat, hand=[c + OFFSET for c in view.hand], total=view.total,
        direction=view.direction, to_act=-1 if view.to_act is None else view.to_act,
        owed=view.owed, draw_size=view.draw_size, discard_size=view.discard_size,
        seats=seat_states, round=table.round, dealer=table.dealer)


def view_from_wire(view: game_pb2.SeatView, legal: Iterable[int], over_limit: bool,
                   config: GameConfig, events: Sequence[tuple]) -> SeatView:
    """A seat's protobuf SeatView (with its turn's ``legal`` cards and ``over_limit``) as
    the engine's view, the inverse of :func:`view_to_wire`: ``config`` from
    :func:`rules_from_wire`, ``events`` the public record so far, as engine tuples."""
    seats = view.seats
    table = Table(
        config=config,
        hand_sizes=tuple(s.hand_size if s.in_game else None for s in seats),
        in_game=tuple(s.in_game for s in seats),
        in_round=tuple(s.in_round for s in seats),
        tokens=tuple(s.tokens for s in seats),
        scores=tuple(s.score for s in seats),
        revealed={i: cards_from_wire(s.revealed) for i, s in enumerate(seats) if s.revealed},
        round=view.round, dealer=view.dealer)
    return SeatView.of(
        view.seat, cards_from_wire(view.hand), cards_from_wire(legal), over_limit, view.total,
        view.direction, None if view.to_act < 0 else view.to_act, view.owed, view.draw_size,
        view.discard_size, table, list(events), len(events), None)


#: Encoded plays and draws, shared by every match of the process: a turn's events are
#: nearly always one of a few thousand (seat, card, total) plays and (seat, count) draws,
#: and a dict look-up costs a tenth of building the Event. Read only: a message the
#: Events go into copies them.
_COMMON: dict[tuple, game_pb2.Event] = {}
_COMMON_KINDS = frozenset({PLAY, DRAW})
_COMMON_MAX = 20_000


class EventEncoder:
    """A game's public event record encoded once, shared by every seat's messages."""

    __slots__ = ("wire",)

    def __init__(self) -> None:
        self.wire: list[game_pb2.Event] = []

    def update(self, events: Sequence[tuple]) -> list[game_pb2.Event]:
        """Encode the events not encoded yet; the whole encoded record."""
        wire = self.wire
        for i in range(len(wire), len(events)):
            e = events[i]
            if e[0] not in _COMMON_KINDS:   # (others may hold lists: not keys)
                wire.append(event_to_wire(e))
                continue
            encoded = _COMMON.get(e)
            if encoded is None:
                if len(_COMMON) >= _COMMON_MAX:
                    _COMMON.clear()
                encoded = _COMMON[e] = event_to_wire(e)
            wire.append(encoded)
        return wire


def time_control_to_wire(tc: TimeControl) -> referee_pb2.TimeControl:
    """A seat's clock as the TimeControl message a match start (or summary) carries."""
    return referee_pb2.TimeControl(move_ms=tc.move_ms, bank_ms=tc.bank_ms)


def match_start(spec: MatchSpec, seat: int, rules: game_pb2.Rules) -> referee_pb2.RefereeMessage:
    """The MatchStart a seat receives (``rules`` from :func:`rules_to_wire`, made once)."""
    return referee_pb2.RefereeMessage(match_start=referee_pb2.MatchStart(
        match_id=spec.match_id, seat=seat, seat_names=list(spec.names), rules=rules,
        time_control=time_control_to_wire(spec.time_control), bot_seed=spec.bot_seed(seat)))


def turn_request(match_id: str, turn_id: int, view: SeatView, seat_states: SeatStatesCache,
                 events: Sequence[game_pb2.Event], move_ms: int, bank_ms: int,
                 previous_latency_us: int = 0) -> referee_pb2.RefereeMessage:
    """The TurnRequest of the seat ``view`` belongs to: its view, nothing else, its legal
    cards, the public events it has not seen, and its clock."""
    return referee_pb2.RefereeMessage(turn=referee_pb2.TurnRequest(
        match_id=match_id, turn_id=turn_id, view=view_to_wire(view, seat_states.get(view.table)),
        legal=[c + OFFSET for c in view.legal], over_limit=view.over_limit, events=events,
        move_ms=move_ms, bank_ms=bank_ms, previous_latency_us=previous_latency_us))


def match_end(match_id: str, ranking: Sequence[Sequence[int]], termination: str,
              events: Sequence[game_pb2.Event], verdicts: Sequence[referee_pb2.Verdict] = (),
              hands: Sequence[referee_pb2.Hand] = ()) -> referee_pb2.RefereeMessage:
    """The MatchEnd a seat receives."""
    return referee_pb2.RefereeMessage(match_end=referee_pb2.MatchEnd(
        match_id=match_id, ranking=places_to_wire(ranking), termination=termination,
        verdicts=verdicts, hands=hands, events=events))


def events(match_id: str, events: Sequence[game_pb2.Event]) -> referee_pb2.RefereeMessage:
    """Public events for a seat that is not about to act."""
    return referee_pb2.RefereeMessage(events=referee_pb2.Events(match_id=match_id, events=events))


def verdicts_to_wire(verdicts: Iterable[Verdict]) -> list[referee_pb2.Verdict]:
    """The referee's verdicts as Verdict messages."""
    return [referee_pb2.Verdict(seat=v.seat, kind=VERDICT_KINDS[v.kind], detail=v.detail,
                                latency_us=v.latency_us) for v in verdicts]


def verdict_from_wire(v: referee_pb2.Verdict) -> Verdict:
    """A Verdict message back as the referee's (its kind by name, "unspecified" if unknown)."""
    return Verdict(v.seat, _VERDICT_NAMES.get(v.kind, "unspecified"), v.detail, v.latency_us)


def hands_to_wire(hands: Sequence[Sequence[int]]) -> list[referee_pb2.Hand]:
    """Every seat's cards at the end of a match (``hands[seat]``)."""
    return [referee_pb2.Hand(seat=s, cards=cards_to_wire(h)) for s, h in enumerate(hands)]


def rejected(turn_id: int, code: str, reason: str) -> referee_pb2.RefereeMessage:
    """An action was refused (``code`` one of :data:`ERROR_CODES`); the turn stays open."""
    return referee_pb2.RefereeMessage(rejected=referee_pb2.ActionRejected(
        turn_id=turn_id, code=ERROR_CODES[code], reason=reason))


def welcome(protocol_version: int, referee: str, bot_name: str,
            session_id: str, resume_key: str) -> referee_pb2.RefereeMessage:
    """A hello accepted: the session a bot plays in, and the key to resume it."""
    return referee_pb2.RefereeMessage(welcome=referee_pb2.Welcome(
        protocol_version=protocol_version, referee=referee, bot_name=bot_name,
        session_id=session_id, resume_key=resume_key))


def refusal(code: int, reason: str) -> referee_pb2.RefereeMessage:
    """A refused hello: ``code`` a ``RefusalCode``; the stream ends after it."""
    return referee_pb2.RefereeMessage(refusal=referee_pb2.Refusal(code=code, reason=reason))


def goodbye(reason: str) -> referee_pb2.RefereeMessage:
    """The referee is done with a bot; its stream ends after this."""
    return referee_pb2.RefereeMessage(goodbye=referee_pb2.Goodbye(reason=reason))


ERROR_CODES = {
    "not_your_turn": referee_pb2.ERROR_CODE_NOT_YOUR_TURN,
    "not_in_hand": referee_pb2.ERROR_CODE_NOT_IN_HAND,
    "illegal_play": referee_pb2.ERROR_CODE_ILLEGAL_PLAY,
    "stale_turn": referee_pb2.ERROR_CODE_STALE_TURN,
    "malformed": referee_pb2.ERROR_CODE_MALFORMED,
}

VERDICT_KINDS = {
    VerdictKind.TIMEOUT: referee_pb2.VERDICT_KIND_TIMEOUT,
    VerdictKind.DISCONNECTED: referee_pb2.VERDICT_KIND_DISCONNECTED,
    VerdictKind.CRASHED: referee_pb2.VERDICT_KIND_CRASHED,
    VerdictKind.ILLEGAL: referee_pb2.VERDICT_KIND_ILLEGAL,
    VerdictKind.ABORTED: referee_pb2.VERDICT_KIND_ABORTED,
    VerdictKind.RETIRED: referee_pb2.VERDICT_KIND_RETIRED,
    VerdictKind.ABSENT: referee_pb2.VERDICT_KIND_ABSENT,
}

_VERDICT_NAMES = {wire: kind for kind, wire in VERDICT_KINDS.items()}
