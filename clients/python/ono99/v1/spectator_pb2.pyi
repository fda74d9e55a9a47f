from ono99.v1 import game_pb2 as _game_pb2
from ono99.v1 import referee_pb2 as _referee_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_LIVE: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_ABORTED: _ClassVar[MatchStatus]
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_LIVE: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_ABORTED: MatchStatus

class MatchSummary(_message.Message):
    __slots__ = ("match_id", "tournament", "names", "rules", "time_control", "status", "turns", "started_at", "ranking", "termination", "interest")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    INTEREST_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    tournament: str
    names: _containers.RepeatedScalarFieldContainer[str]
    rules: _game_pb2.Rules
    time_control: _referee_pb2.TimeControl
    status: MatchStatus
    turns: int
    started_at: float
    ranking: _containers.RepeatedCompositeFieldContainer[_game_pb2.Place]
    termination: str
    interest: float
    def __init__(self, match_id: _Optional[str] = ..., tournament: _Optional[str] = ..., names: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[_game_pb2.Rules, _Mapping]] = ..., time_control: _Optional[_Union[_referee_pb2.TimeControl, _Mapping]] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., turns: _Optional[int] = ..., started_at: _Optional[float] = ..., ranking: _Optional[_Iterable[_Union[_game_pb2.Place, _Mapping]]] = ..., termination: _Optional[str] = ..., interest: _Optional[float] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("tournament", "recent")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    tournament: str
    recent: int
    def __init__(self, tournament: _Optional[str] = ..., recent: _Optional[int] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchSummary]
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchSummary, _Mapping]]] = ...) -> None: ...

class PublicState(_message.Message):
    __slots__ = ("total", "direction", "to_act", "owed", "draw_size", "discard_size", "seats", "round", "dealer")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    OWED_FIELD_NUMBER: _ClassVar[int]
    DRAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_SIZE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    total: int
    direction: int
    to_act: int
    owed: int
    draw_size: int
    discard_size: int
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.SeatState]
    round: int
    dealer: int
    def __init__(self, total: _Optional[int] = ..., direction: _Optional[int] = ..., to_act: _Optional[int] = ..., owed: _Optional[int] = ..., draw_size: _Optional[int] = ..., discard_size: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[_game_pb2.SeatState, _Mapping]]] = ..., round: _Optional[int] = ..., dealer: _Optional[int] = ...) -> None: ...

class MatchFrame(_message.Message):
    __slots__ = ("seq", "events", "state", "seat", "latency_us", "bank_ms", "at", "hands", "time")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    seq: int
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    state: PublicState
    seat: int
    latency_us: int
    bank_ms: _containers.RepeatedScalarFieldContainer[int]
    at: float
    hands: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Hand]
    time: float
    def __init__(self, seq: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., state: _Optional[_Union[PublicState, _Mapping]] = ..., seat: _Optional[int] = ..., latency_us: _Optional[int] = ..., bank_ms: _Optional[_Iterable[int]] = ..., at: _Optional[float] = ..., hands: _Optional[_Iterable[_Union[_referee_pb2.Hand, _Mapping]]] = ..., time: _Optional[float] = ...) -> None: ...

class FrameBatch(_message.Message):
    __slots__ = ("frames",)
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    frames: _containers.RepeatedCompositeFieldContainer[MatchFrame]
    def __init__(self, frames: _Optional[_Iterable[_Union[MatchFrame, _Mapping]]] = ...) -> None: ...

class MatchOver(_message.Message):
    __slots__ = ("status", "ranking", "termination", "hands", "turns", "duration_s")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_FIELD_NUMBER: _ClassVar[int]
    status: MatchStatus
    ranking: _containers.RepeatedCompositeFieldContainer[_game_pb2.Place]
    termination: str
    hands: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Hand]
    turns: int
    duration_s: float
    def __init__(self, status: _Optional[_Union[MatchStatus, str]] = ..., ranking: _Optional[_Iterable[_Union[_game_pb2.Place, _Mapping]]] = ..., termination: _Optional[str] = ..., hands: _Optional[_Iterable[_Union[_referee_pb2.Hand, _Mapping]]] = ..., turns: _Optional[int] = ..., duration_s: _Optional[float] = ...) -> None: ...

class MatchSnapshot(_message.Message):
    __slots__ = ("match", "frames", "verdicts", "over", "reason", "open_turn_ms", "delayed")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    OPEN_TURN_MS_FIELD_NUMBER: _ClassVar[int]
    DELAYED_FIELD_NUMBER: _ClassVar[int]
    match: MatchSummary
    frames: _containers.RepeatedCompositeFieldContainer[MatchFrame]
    verdicts: _containers.RepeatedCompositeFieldContainer[_referee_pb2.Verdict]
    over: MatchOver
    reason: str
    open_turn_ms: int
    delayed: int
    def __init__(self, match: _Optional[_Union[MatchSummary, _Mapping]] = ..., frames: _Optional[_Iterable[_Union[MatchFrame, _Mapping]]] = ..., verdicts: _Optional[_Iterable[_Union[_referee_pb2.Verdict, _Mapping]]] = ..., over: _Optional[_Union[MatchOver, _Mapping]] = ..., reason: _Optional[str] = ..., open_turn_ms: _Optional[int] = ..., delayed: _Optional[int] = ...) -> None: ...

class MatchFeed(_message.Message):
    __slots__ = ("snapshot", "frame", "verdict", "over", "frames")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    snapshot: MatchSnapshot
    frame: MatchFrame
    verdict: _referee_pb2.Verdict
    over: MatchOver
    frames: FrameBatch
    def __init__(self, snapshot: _Optional[_Union[MatchSnapshot, _Mapping]] = ..., frame: _Optional[_Union[MatchFrame, _Mapping]] = ..., verdict: _Optional[_Union[_referee_pb2.Verdict, _Mapping]] = ..., over: _Optional[_Union[MatchOver, _Mapping]] = ..., frames: _Optional[_Union[FrameBatch, _Mapping]] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id", "delay_turns", "organizer_view")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    DELAY_TURNS_FIELD_NUMBER: _ClassVar[int]
    ORGANIZER_VIEW_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    delay_turns: int
    organizer_view: bool
    def __init__(self, match_id: _Optional[str] = ..., delay_turns: _Optional[int] = ..., organizer_view: _Optional[bool] = ...) -> None: ...

class WatchTVRequest(_message.Message):
    __slots__ = ("tournament", "delay_turns")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    DELAY_TURNS_FIELD_NUMBER: _ClassVar[int]
    tournament: str
    delay_turns: int
    def __init__(self, tournament: _Optional[str] = ..., delay_turns: _Optional[int] = ...) -> None: ...

class GetRecordRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class StandingsRow(_message.Message):
    __slots__ = ("rank", "bot", "elo", "ci95", "matches", "wins", "average_place", "faults", "elo_low", "elo_high", "mark")
    class FaultsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ELO_FIELD_NUMBER: _ClassVar[int]
    CI95_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    AVERAGE_PLACE_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    ELO_LOW_FIELD_NUMBER: _ClassVar[int]
    ELO_HIGH_FIELD_NUMBER: _ClassVar[int]
    MARK_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    elo: float
    ci95: float
    matches: int
    wins: int
    average_place: float
    faults: _containers.ScalarMap[str, int]
    elo_low: float
    elo_high: float
    mark: str
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., elo: _Optional[float] = ..., ci95: _Optional[float] = ..., matches: _Optional[int] = ..., wins: _Optional[int] = ..., average_place: _Optional[float] = ..., faults: _Optional[_Mapping[str, int]] = ..., elo_low: _Optional[float] = ..., elo_high: _Optional[float] = ..., mark: _Optional[str] = ...) -> None: ...

class CrossCell(_message.Message):
    __slots__ = ("opponent", "ahead", "behind", "level")
    OPPONENT_FIELD_NUMBER: _ClassVar[int]
    AHEAD_FIELD_NUMBER: _ClassVar[int]
    BEHIND_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    opponent: str
    ahead: int
    behind: int
    level: int
    def __init__(self, opponent: _Optional[str] = ..., ahead: _Optional[int] = ..., behind: _Optional[int] = ..., level: _Optional[int] = ...) -> None: ...

class CrossRow(_message.Message):
    __slots__ = ("bot", "cells")
    BOT_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    cells: _containers.RepeatedCompositeFieldContainer[CrossCell]
    def __init__(self, bot: _Optional[str] = ..., cells: _Optional[_Iterable[_Union[CrossCell, _Mapping]]] = ...) -> None: ...

class Standings(_message.Message):
    __slots__ = ("rows", "crosstable", "matches")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    CROSSTABLE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[StandingsRow]
    crosstable: _containers.RepeatedCompositeFieldContainer[CrossRow]
    matches: int
    def __init__(self, rows: _Optional[_Iterable[_Union[StandingsRow, _Mapping]]] = ..., crosstable: _Optional[_Iterable[_Union[CrossRow, _Mapping]]] = ..., matches: _Optional[int] = ...) -> None: ...

class TournamentSnapshot(_message.Message):
    __slots__ = ("name", "bots", "total", "done", "standings", "matches", "finished")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    name: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    total: int
    done: int
    standings: Standings
    matches: _containers.RepeatedCompositeFieldContainer[MatchSummary]
    finished: bool
    def __init__(self, name: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., total: _Optional[int] = ..., done: _Optional[int] = ..., standings: _Optional[_Union[Standings, _Mapping]] = ..., matches: _Optional[_Iterable[_Union[MatchSummary, _Mapping]]] = ..., finished: _Optional[bool] = ...) -> None: ...

class TournamentFeed(_message.Message):
    __slots__ = ("snapshot", "started", "finished", "standings", "over", "batch")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    snapshot: TournamentSnapshot
    started: MatchSummary
    finished: MatchSummary
    standings: Standings
    over: TournamentSnapshot
    batch: TournamentBatch
    def __init__(self, snapshot: _Optional[_Union[TournamentSnapshot, _Mapping]] = ..., started: _Optional[_Union[MatchSummary, _Mapping]] = ..., finished: _Optional[_Union[MatchSummary, _Mapping]] = ..., standings: _Optional[_Union[Standings, _Mapping]] = ..., over: _Optional[_Union[TournamentSnapshot, _Mapping]] = ..., batch: _Optional[_Union[TournamentBatch, _Mapping]] = ...) -> None: ...

class TournamentBatch(_message.Message):
    __slots__ = ("feeds",)
    FEEDS_FIELD_NUMBER: _ClassVar[int]
    feeds: _containers.RepeatedCompositeFieldContainer[TournamentFeed]
    def __init__(self, feeds: _Optional[_Iterable[_Union[TournamentFeed, _Mapping]]] = ...) -> None: ...

class WatchTournamentRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...
