"""A finished match's record (a ``MatchSnapshot``: its frames, verdicts and end), from
where it was kept: a database, an `arena match` event log, or a record downloaded from
the spectator service.

A database and an event log keep the public events and the deal's seed; the frames (the
public state after each decision) are rebuilt by replaying the engine with the seed, on
this side: the seed itself never goes to a spectator (with duplicate deals, the same
seed deals a later match of the tournament). A downloaded record has its frames already.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import Message
from ono99.v1 import spectator_pb2 as pb

from arena.referee import wire as referee_wire
from arena.referee.listeners import Frame, MatchInfo, MatchOver
from arena.referee.results import Status, TimeControl, Verdict
from arena.rules.errors import ConfigError
from arena.rules.events import FORFEIT, PLAY, decisions, event_from_dict
from arena.rules.game import Game
from arena.rules.rulesets import GameConfig, played_config
from arena.store.base import MatchRecord, Store
from arena.text import printable, printable_strings
from arena.watch import wire


class RecordError(ConfigError):
    """A record cannot be read or does not replay."""


def replay_snapshot(match_id: str, names: Sequence[str], config: GameConfig, seed: int,
                    events: Sequence[tuple], time_control: TimeControl, tournament: str = "",
                    status: str = Status.FINISHED, verdicts: Sequence[Verdict] = (),
                    started_at: float = 0.0, duration_s: float = 0.0,
                    turns: int | None = None) -> pb.MatchSnapshot:
    """The record of a match, its frames rebuilt by replaying the engine on ``seed``."""
    game = Game.from_config(config, seed)
    states = referee_wire.SeatStatesCache()
    frames = [wire.frame(Frame(match_id, 0, tuple(game.events), game.spectator_view(), None,
                               None, (), 0.0), states)]
    done = len(game.events)
    try:
        for d in decisions(events):
            if d[0] == PLAY:
                game.play(d[1], d[2])
            elif d[0] == FORFEIT:
                game.forfeit(*d[1:])
            frames.append(wire.frame(Frame(match_id, len(frames), tuple(game.events[done:]),
                                           game.spectator_view(), d[1] if d[0] == PLAY else None,
                                           None, (), 0.0), states))
            done = len(game.events)
    except Exception as exc:
        raise RecordError(f"match {match_id} does not replay from its seed: {exc}") from None
    if list(game.events) != list(events):
        raise RecordError(f"match {match_id} does not replay from its seed to its stored events")
    hands = tuple(tuple(game.hands[s]) if game.hands[s] is not None
                  else tuple(game.revealed.get(s, ())) for s in range(config.seats))
    ranking = game.outcome.ranking if game.outcome else ()
    termination = game.outcome.termination if game.outcome else "aborted"
    info = MatchInfo(match_id, tuple(names), config, time_control, started_at)
    summary = wire.summary(info, tournament)
    over = wire.over(MatchOver(match_id, status, tuple(ranking), termination, tuple(verdicts),
                               hands, len(frames) - 1 if turns is None else turns, duration_s))
    wire.end_summary(summary, over)
    summary.turns = len(frames) - 1   # the frames replayed (the end's turns: as stored)
    return wire.snapshot(summary, frames, "record", verdicts=wire.verdicts(verdicts), over=over)


def from_store(store: Store, match: MatchRecord) -> pb.MatchSnapshot:
    """A stored match's record."""
    config = played_config(match.ruleset, match.options, len(match.bots))
    settings = store.tournament(match.tournament).settings
    tc = TimeControl(settings.get("move_ms", 1000), settings.get("bank_ms", 10_000))
    events = [event_from_dict(e) for e in store.events(match.id)]
    verdicts = [Verdict(v["seat"], v["kind"], v["detail"], v.get("latency_us", 0))
                for v in match.verdicts]
    return replay_snapshot(match.match_uid, match.bots, config, match.seed, events, tc,
                           match.tournament, match.status, verdicts, match.started_at,
                           match.duration_s, match.turns)


class StoreRecords:
    """Finished matches of a database, by the id the referee gave them. Records are made
    in a worker thread (the spectator service's), on a connection of their own, opened
    at the first and closed by :meth:`close`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._own: Store | None = None
        self._using = threading.Lock()    # close waits for a record in the making

    def snapshot(self, match_id: str) -> pb.MatchSnapshot | None:
        with self._using:
            if self._own is None:
                self._own = self.store.reopen()
            match = self._own.match_by_uid(match_id)
            return None if match is None else from_store(self._own, match)

    def close(self) -> None:
        with self._using:
            if self._own is not None:
                self._own.close()
                self._own = None


def from_file(path: Path, max_frames: int | None = None) -> pb.MatchSnapshot:
    """A record from a file: an `arena match` event log (JSON lines: a header with the
    seed, the events, the result), or a record saved from the spectator service (one
    JSON object, a MatchSnapshot). Its texts (names, details) are made safe to show: a
    file may come from anyone. With ``max_frames``, a longer match is refused (before an
    event log is replayed). Its error's line is made safe too: it may quote the file."""
    try:
        snapshot = _from_file(path, max_frames)
    except RecordError as exc:
        raise RecordError(printable(str(exc))) from None
    printable_strings(snapshot)
    return snapshot


#: the fields that name a seat (repeated ``seats``: a ranking's group of tied seats)
_SEAT_FIELDS = frozenset({"seat", "to_act", "dealer", "first", "seats"})


def _out_of_range(message: Message, seats: int) -> str | None:
    """What in a record read from a file names a seat the match does not have, or holds
    a value its enum does not know (a card 999): shown, they were tracebacks. None if
    nothing."""
    for field, value in message.ListFields():
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            items = [v for v in value.values() if isinstance(v, Message)]
        else:
            items = list(value) if field.is_repeated else [value]
        for item in items:
            if isinstance(item, Message):
                problem = _out_of_range(item, seats)
                if problem:
                    return problem
            elif (field.name in _SEAT_FIELDS and field.type in (field.TYPE_INT32, field.TYPE_UINT32)
                  and (field.is_repeated or field.name != "seats")):   # Rules.seats: a count
                if not -1 <= item < seats:
                    return f"{field.name} {item} is not a seat of its {seats}"
            elif field.enum_type is not None and field.enum_type.values_by_number.get(item) is None:
                return f"{field.name} {item} is not a value of {field.enum_type.name}"
    return None


def _too_long(path: Path, frames: int, max_frames: int | None) -> None:
    if max_frames is not None and frames > max_frames:
        raise RecordError(f"{path} holds a match of {frames:,} turns, more than the "
                          f"{max_frames:,} replayed here: replay it with `arena replay`")


def _from_file(path: Path, max_frames: int | None) -> pb.MatchSnapshot:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path} is not text (UTF-8): neither an arena match event log "
                          "nor a match record") from None
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" not in stripped.strip():
        try:
            record = wire.record_from_json(stripped)
        except (json_format.ParseError, ValueError, RecursionError) as exc:
            raise RecordError(f"{path} is not a match record: {exc}") from None
        if not record.HasField("match") or not record.frames:
            # a JSON object of other fields parses, as a record of nothing
            raise RecordError(f"{path} is not a match record: it holds no match and no "
                              "frames (neither an arena match event log nor a match record)")
        _too_long(path, len(record.frames) - 1, max_frames)
        problem = _out_of_range(record, len(record.match.names))
        if problem:
            raise RecordError(f"{path} is not a match record: {problem}")
        return record
    try:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        header = next((x for x in lines if x.get("type") == "match"), None)
        if header is None:
            raise RecordError(f"{path} is neither an arena match event log nor a match record "
                              f"({'it is empty' if not lines else 'it has no match line'})")
        result = next((x for x in lines if x.get("type") == "result"), {})
        events = [event_from_dict({k: v for k, v in x.items() if k != "type"})
                  for x in lines if x.get("type") == "event"]
        _too_long(path, len(decisions(events)), max_frames)
        names = header["seats"]            # the bot at each seat
        config = played_config(header["ruleset"], header.get("options"), len(names))
        tc = TimeControl(**header.get("time_control", {}))
        verdicts = [Verdict(v["seat"], v["kind"], v["detail"], v.get("latency_us", 0))
                    for v in result.get("verdicts", ())]
        return replay_snapshot(header["match_id"], names, config, header["seed"], events, tc,
                               "", result.get("status", Status.FINISHED), verdicts,
                               header.get("started_at", 0.0), result.get("duration_s", 0.0),
                               result.get("turns"))
    except RecordError:
        raise
    # whatever the file holds (lines that are not objects, nesting too deep to parse)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise RecordError(f"{path} is neither an arena match event log nor a match record "
                          f"({exc.__class__.__name__}: {exc})") from None


def to_dict(message: Message) -> dict:
    """A spectator message as JSON data, as a download holds it: protobuf's JSON mapping
    with the proto's field names (fields at their default left out, 64-bit numbers as
    strings). The web viewer sends every stream message to its page this way, so the page
    reads one format, live or from a file."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def to_json(message: Message) -> str:
    """A spectator message as JSON text (:func:`to_dict`): a record as a download saves it
    (and :func:`from_file` reads back), a stream message as the web page gets it."""
    return json.dumps(to_dict(message), separators=(",", ":"))


