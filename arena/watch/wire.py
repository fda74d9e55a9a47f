"""The one place where what listeners and the store know of a match becomes Spectator
messages (spectator.proto), and where viewers read them back. Events, cards, rules and
verdicts are mapped by the referee's :mod:`arena.referee.wire`; this module composes
them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from ono99.v1 import referee_pb2, spectator_pb2 as pb

from arena.referee import wire
from arena.referee.listeners import Frame, MatchInfo, MatchOver
from arena.referee.results import Status, Verdict
from arena.rules.game import Termination
from arena.rules.views import SpectatorView
from arena.tournament.standings import CrossCell, Standings

STATUS = {Status.FINISHED: pb.MATCH_STATUS_FINISHED, Status.ABORTED: pb.MATCH_STATUS_ABORTED}
STATUS_NAMES = {pb.MATCH_STATUS_LIVE: "live", pb.MATCH_STATUS_FINISHED: "finished",
                pb.MATCH_STATUS_ABORTED: "aborted"}


def summary(info: MatchInfo, tournament: str = "") -> pb.MatchSummary:
    """A match as it starts, live, as part of ``tournament`` ("" none)."""
    return pb.MatchSummary(
        match_id=info.match_id, tournament=tournament, names=list(info.names),
        rules=wire.rules_to_wire(info.config),
        time_control=wire.time_control_to_wire(info.time_control),
        status=pb.MATCH_STATUS_LIVE, started_at=info.started_at)


def public_state(view: SpectatorView, states: wire.SeatStatesCache) -> pb.PublicState:
    """The public part of a spectator view (never its hands: those go in MatchOver)."""
    table = view.table
    return pb.PublicState(
        total=view.total, direction=view.direction,
        to_act=-1 if view.to_act is None else view.to_act, owed=view.owed,
        draw_size=view.draw_size, discard_size=view.discard_size,
        seats=states.get(table), round=table.round, dealer=table.dealer)


def frame(f: Frame, states: wire.SeatStatesCache) -> pb.MatchFrame:
    """A listener's frame, public part only (``hands`` are added per viewer: see
    :func:`with_hands`)."""
    return pb.MatchFrame(
        seq=f.seq, events=[wire.event_to_wire(e) for e in f.events],
        state=public_state(f.view, states), seat=-1 if f.seat is None else f.seat,
        latency_us=f.latency_us or 0, bank_ms=list(f.bank_ms), at=f.at, time=f.time)


def with_hands(public: pb.MatchFrame, hands: Sequence[Sequence[int]]) -> pb.MatchFrame:
    """The organiser's copy of a frame: every hand added."""
    private = pb.MatchFrame()
    private.CopyFrom(public)
    private.hands.extend(wire.hands_to_wire(hands))
    return private


def over(o: MatchOver) -> pb.MatchOver:
    """How a match ended, every hand shown."""
    return pb.MatchOver(
        status=STATUS.get(o.status, pb.MATCH_STATUS_FINISHED),
        ranking=wire.places_to_wire(o.ranking), termination=o.termination,
        hands=wire.hands_to_wire(o.hands), turns=o.turns, duration_s=o.duration_s)


def abandoned(summary: pb.MatchSummary, duration_s: float) -> pb.MatchOver:
    """The end of a match whose own never came (its worker lost, the run stopped before it
    was played again): aborted, as the referee ends a match it stops, no card shown."""
    return pb.MatchOver(status=pb.MATCH_STATUS_ABORTED, termination=Termination.ABORTED,
                        hands=wire.hands_to_wire([()] * len(summary.names)),
                        turns=summary.turns, duration_s=duration_s)


def end_summary(summary: pb.MatchSummary, over: pb.MatchOver) -> None:
    """Write how a match ended into its summary: its status, ranking, termination and
    turns (in place: the summary is shared by whoever lists the match)."""
    summary.status = over.status
    del summary.ranking[:]
    summary.ranking.extend(over.ranking)
    summary.termination = over.termination
    summary.turns = over.turns


def verdicts(vs) -> list[referee_pb2.Verdict]:
    """The referee's verdicts as Verdict messages."""
    return wire.verdicts_to_wire(vs)


def standings(board: Standings, cross: dict[str, dict[str, CrossCell]], matches: int) -> pb.Standings:
    """A tournament's standings and crosstable (``cross``: bot, opponent -> cell), over
    ``matches`` matches."""
    return pb.Standings(
        rows=[pb.StandingsRow(rank=rank, bot=line.bot, elo=line.elo, ci95=line.interval,
                              elo_low=line.low, elo_high=line.high,
                              matches=line.matches, wins=line.wins,
                              average_place=line.average_place, faults=dict(line.faults),
                              mark=line.mark)
              for rank, line in zip(board.ranks(), board.lines)],
        crosstable=[pb.CrossRow(bot=bot, cells=[
            pb.CrossCell(opponent=other, ahead=c.ahead, behind=c.behind, level=c.level)
            for other, c in row.items()]) for bot, row in cross.items()],
        matches=matches)


# ---------------------------------------------------------------- the service's messages

def snapshot(summary: pb.MatchSummary, frames: Iterable[pb.MatchFrame], reason: str,
             delayed: int = 0, open_turn_ms: int = 0,
             verdicts: Iterable[referee_pb2.Verdict] = (),
             over: pb.MatchOver | None = None) -> pb.MatchSnapshot:
    """A match as a viewer starts from (``reason``: join, tv, resync, record): the frames
    shown, ``delayed`` held back, the turn open for ``open_turn_ms``, and the verdicts and
    the end where they may be shown."""
    snap = pb.MatchSnapshot(match=summary, frames=frames, reason=reason, delayed=delayed,
                            open_turn_ms=open_turn_ms, verdicts=verdicts)
    if over is not None:
        snap.over.CopyFrom(over)
    return snap


def listed(summary: pb.MatchSummary, interest: float, turns: int | None = None) -> pb.MatchSummary:
    """A live match's summary as a list shows it: its interest, and the turns shown to a
    spectator held behind (None: all of them); a copy (the hub's own is shared)."""
    out = copy_of(summary)
    out.interest = interest
    if turns is not None:
        out.turns = turns
    return out


def match_list(summaries: Iterable[pb.MatchSummary]) -> pb.ListMatchesResponse:
    """The answer to ListMatches."""
    return pb.ListMatchesResponse(matches=summaries)


def snapshot_feed(snap: pb.MatchSnapshot) -> pb.MatchFeed:
    """A match stream's snapshot (its first message, and after a resync)."""
    return pb.MatchFeed(snapshot=snap)


def frame_feed(f: pb.MatchFrame) -> pb.MatchFeed:
    """One frame, on a match stream."""
    return pb.MatchFeed(frame=f)


def frames_feed(frames: Iterable[pb.MatchFrame]) -> pb.MatchFeed:
    """Frames queued behind each other, in one message of a match stream."""
    return pb.MatchFeed(frames=pb.FrameBatch(frames=frames))


def verdict_feed(v: referee_pb2.Verdict) -> pb.MatchFeed:
    """A verdict, on a match stream."""
    return pb.MatchFeed(verdict=v)


def over_feed(o: pb.MatchOver) -> pb.MatchFeed:
    """The end, on a match stream."""
    return pb.MatchFeed(over=o)


def tournament_snapshot(name: str, bots: Sequence[str], total: int, done: int,
                        table: pb.Standings, matches: Iterable[pb.MatchSummary],
                        finished: bool) -> pb.TournamentSnapshot:
    """A tournament as a follower starts from: its progress, standings and matches."""
    return pb.TournamentSnapshot(name=name, bots=bots, total=total, done=done, standings=table,
                                 matches=matches, finished=finished)


def tournament_feed(snap: pb.TournamentSnapshot) -> pb.TournamentFeed:
    """A tournament stream's snapshot (its first message, and after a resync)."""
    return pb.TournamentFeed(snapshot=snap)


def started_feed(summary: pb.MatchSummary) -> pb.TournamentFeed:
    """A match of the tournament started."""
    return pb.TournamentFeed(started=summary)


def finished_feed(summary: pb.MatchSummary) -> pb.TournamentFeed:
    """A match of the tournament is over."""
    return pb.TournamentFeed(finished=summary)


def standings_feed(table: pb.Standings) -> pb.TournamentFeed:
    """The tournament's standings, fitted again."""
    return pb.TournamentFeed(standings=table)


def tournament_over_feed(snap: pb.TournamentSnapshot) -> pb.TournamentFeed:
    """The tournament is over: its last snapshot."""
    return pb.TournamentFeed(over=snap)


#: the kinds of a tournament's messages that may go in a batch (a snapshot or the end
#: never does)
BATCHED = frozenset({"started", "finished", "standings"})


class Encodings:
    """Messages that many viewers share (the hub's), each encoded once: ``encoded(m)`` is
    ``make(m)``'s bytes, made at the first call for the message ``m``. The ``keep`` used
    last are kept, each with its message (held, so that its id names no other meanwhile)."""

    def __init__(self, make: Callable[[Message], Message], keep: int = 4096) -> None:
        self._make = make
        self._keep = keep
        self._made: dict[int, tuple[Message, bytes]] = {}

    def encoded(self, message: Message) -> bytes:
        made = self._made.pop(id(message), None)
        if made is None or made[0] is not message:
            made = (message, self._make(message).SerializeToString())
            if len(self._made) >= self._keep:
                del self._made[next(iter(self._made))]   # the one used least lately
        self._made[id(message)] = made                   # (last, as the one used lately)
        return made[1]


class Batches:
    """Batches of messages that many viewers share (the hub's), encoded: each message is
    encoded once, as a batch of one (``one(message)``: its element of the batch's
    repeated field, with the field's tag and length), and a viewer's batch is those
    elements joined, inside ``field`` (the stream message's field holding the batch): the
    same bytes protobuf makes of the batch message. Building a batch message for each
    viewer copied every message into it: a fifth of the loop that plays the matches with
    1,000 viewers of a ladder.

    (Joined whole stream messages, each a batch of one, would read the same in Python,
    which merges a field met twice, but not in protobufjs before 2026, which kept the
    last: a JavaScript viewer lost all but one of each batch.)"""

    def __init__(self, field: FieldDescriptor, one: Callable[[Message], Message],
                 keep: int = 4096) -> None:
        self._tag = _varint(field.number << 3 | 2)   # a length-delimited field
        self._elements = Encodings(one, keep)

    def __call__(self, messages: Sequence[Message]) -> bytes:
        joined = b"".join(map(self._elements.encoded, messages))
        return self._tag + _varint(len(joined)) + joined

    def message(self, messages: Sequence[Message]) -> Message | bytes:
        """``messages`` as one stream message: one alone as it is (as the hub made it,
        shared by its viewers), several as their batch's bytes."""
        return messages[0] if len(messages) == 1 else self(messages)


def _varint(n: int) -> bytes:
    """``n`` (0 or more) as protobuf writes a tag or a length: 7 bits a byte, low first."""
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def tournament_batches() -> Batches:
    """Batches of a tournament's messages (kinds of BATCHED), as a TournamentFeed's bytes."""
    return Batches(pb.TournamentFeed.DESCRIPTOR.fields_by_name["batch"],
                   lambda feed: pb.TournamentBatch(feeds=[feed]))


def frame_batches() -> Batches:
    """Batches of a match's frame messages, as a MatchFeed's bytes."""
    return Batches(pb.MatchFeed.DESCRIPTOR.fields_by_name["frames"],
                   lambda feed: pb.FrameBatch(frames=[feed.frame]))


def unbatched(message: Message) -> Sequence[Message]:
    """A stream's message as the messages it carries: one, but for a tournament's batch
    (its viewers read each on its own)."""
    if isinstance(message, pb.TournamentFeed) and message.HasField("batch"):
        return message.batch.feeds
    return (message,)


# ---------------------------------------------------------------- a viewer's requests

def list_request(tournament: str = "", recent: int = 50) -> pb.ListMatchesRequest:
    """Live matches (of ``tournament``; "": any), then ``recent`` finished ones."""
    return pb.ListMatchesRequest(tournament=tournament, recent=recent)


def record_request(match_id: str) -> pb.GetRecordRequest:
    """A finished match's whole record."""
    return pb.GetRecordRequest(match_id=match_id)


def watch_match_request(match_id: str, delay: int = 0,
                        organizer_view: bool = False) -> pb.WatchMatchRequest:
    """Follow one match, ``delay`` turns behind (the organiser's view: every hand)."""
    return pb.WatchMatchRequest(match_id=match_id, delay_turns=delay,
                                organizer_view=organizer_view)


def watch_tv_request(tournament: str = "", delay: int = 0) -> pb.WatchTVRequest:
    """Follow TV (of ``tournament``; "": any), ``delay`` turns behind."""
    return pb.WatchTVRequest(tournament=tournament, delay_turns=delay)


def watch_tournament_request(name: str = "") -> pb.WatchTournamentRequest:
    """Follow tournament ``name`` ("": the current one; ``ladder``: the ladder)."""
    return pb.WatchTournamentRequest(name=name)


# ---------------------------------------------------------------- read back, by viewers

M = TypeVar("M", bound=Message)


def copy_of(message: M) -> M:
    """A viewer's own copy of a message it keeps up to date (a snapshot)."""
    out = type(message)()
    out.CopyFrom(message)
    return out


def record_from_json(text: str) -> pb.MatchSnapshot:
    """A match record saved as JSON (unknown fields ignored); json_format's
    :class:`~google.protobuf.json_format.ParseError` (or a ValueError) if it is none."""
    return json_format.Parse(text, pb.MatchSnapshot(), ignore_unknown_fields=True)


def frame_events(f: pb.MatchFrame) -> list[tuple]:
    """A frame's events as the engine's tuples."""
    return [wire.event_from_wire(e) for e in f.events]


def decision(f: pb.MatchFrame) -> tuple[int | None, int | None]:
    """Whose decision a frame was and how long it took, in us: each None when not known
    (the deal, a forfeit; a record rebuilt from a database or an event log, which keep no
    times, says 0)."""
    seat = None if f.seat < 0 else f.seat
    return seat, (f.latency_us or None) if seat is not None else None


def ranking(places) -> tuple[tuple[int, ...], ...]:
    """A ranking back from its Places: best first, tied seats together."""
    return wire.places_from_wire(places)


def verdict(v: referee_pb2.Verdict) -> Verdict:
    """A Verdict message back as the referee's."""
    return wire.verdict_from_wire(v)


def status_name(status: int) -> str:
    """``live``, ``finished`` or ``aborted``."""
    return STATUS_NAMES.get(status, "live")
