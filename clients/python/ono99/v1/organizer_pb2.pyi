from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AddRemoteBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class AddRemoteBotResponse(_message.Message):
    __slots__ = ("name", "version", "token")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    token: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., token: _Optional[str] = ...) -> None: ...

class UploadChunk(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: UploadHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[UploadHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class UploadHeader(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class Check(_message.Message):
    __slots__ = ("name", "passed", "detail")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    passed: bool
    detail: str
    def __init__(self, name: _Optional[str] = ..., passed: _Optional[bool] = ..., detail: _Optional[str] = ...) -> None: ...

class UploadBotResponse(_message.Message):
    __slots__ = ("name", "version", "passed", "checks", "summary")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    passed: bool
    checks: _containers.RepeatedCompositeFieldContainer[Check]
    summary: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., passed: _Optional[bool] = ..., checks: _Optional[_Iterable[_Union[Check, _Mapping]]] = ..., summary: _Optional[str] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BotInfo(_message.Message):
    __slots__ = ("name", "kind", "version", "status", "connected", "elo", "ci95", "matches", "faults", "elo_low", "elo_high", "mark")
    class FaultsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    ELO_FIELD_NUMBER: _ClassVar[int]
    CI95_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    ELO_LOW_FIELD_NUMBER: _ClassVar[int]
    ELO_HIGH_FIELD_NUMBER: _ClassVar[int]
    MARK_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: str
    version: int
    status: str
    connected: bool
    elo: float
    ci95: float
    matches: int
    faults: _containers.ScalarMap[str, int]
    elo_low: float
    elo_high: float
    mark: str
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., version: _Optional[int] = ..., status: _Optional[str] = ..., connected: _Optional[bool] = ..., elo: _Optional[float] = ..., ci95: _Optional[float] = ..., matches: _Optional[int] = ..., faults: _Optional[_Mapping[str, int]] = ..., elo_low: _Optional[float] = ..., elo_high: _Optional[float] = ..., mark: _Optional[str] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotInfo]
    def __init__(self, bots: _Optional[_Iterable[_Union[BotInfo, _Mapping]]] = ...) -> None: ...

class RemoveBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RemoveBotResponse(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class BotLogsRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class BotLogsResponse(_message.Message):
    __slots__ = ("name", "text")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    name: str
    text: str
    def __init__(self, name: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class TournamentRequest(_message.Message):
    __slots__ = ("name", "bots", "games", "table_size", "ruleset", "options", "move_ms", "bank_ms", "no_duplicate", "seed")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    TABLE_SIZE_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    NO_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    name: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    games: int
    table_size: int
    ruleset: str
    options: _containers.ScalarMap[str, str]
    move_ms: int
    bank_ms: int
    no_duplicate: bool
    seed: int
    def __init__(self, name: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., games: _Optional[int] = ..., table_size: _Optional[int] = ..., ruleset: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., no_duplicate: _Optional[bool] = ..., seed: _Optional[int] = ...) -> None: ...

class TournamentProgress(_message.Message):
    __slots__ = ("started", "match", "retired", "finished")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    started: TournamentStarted
    match: MatchPlayed
    retired: BotRetired
    finished: TournamentFinished
    def __init__(self, started: _Optional[_Union[TournamentStarted, _Mapping]] = ..., match: _Optional[_Union[MatchPlayed, _Mapping]] = ..., retired: _Optional[_Union[BotRetired, _Mapping]] = ..., finished: _Optional[_Union[TournamentFinished, _Mapping]] = ...) -> None: ...

class TournamentStarted(_message.Message):
    __slots__ = ("name", "lines", "bots", "total", "done")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    name: str
    lines: _containers.RepeatedScalarFieldContainer[str]
    bots: _containers.RepeatedScalarFieldContainer[str]
    total: int
    done: int
    def __init__(self, name: _Optional[str] = ..., lines: _Optional[_Iterable[str]] = ..., bots: _Optional[_Iterable[str]] = ..., total: _Optional[int] = ..., done: _Optional[int] = ...) -> None: ...

class SeatVerdict(_message.Message):
    __slots__ = ("seat", "kind", "detail")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: str
    detail: str
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class MatchPlayed(_message.Message):
    __slots__ = ("key", "sample", "bots", "places", "termination", "turns", "verdicts")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    key: str
    sample: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    places: _containers.RepeatedScalarFieldContainer[int]
    termination: str
    turns: int
    verdicts: _containers.RepeatedCompositeFieldContainer[SeatVerdict]
    def __init__(self, key: _Optional[str] = ..., sample: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., places: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ..., turns: _Optional[int] = ..., verdicts: _Optional[_Iterable[_Union[SeatVerdict, _Mapping]]] = ...) -> None: ...

class BotRetired(_message.Message):
    __slots__ = ("bot", "reason")
    BOT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    bot: str
    reason: str
    def __init__(self, bot: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class TournamentFinished(_message.Message):
    __slots__ = ("name", "played", "seconds", "error")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    name: str
    played: int
    seconds: float
    error: str
    def __init__(self, name: _Optional[str] = ..., played: _Optional[int] = ..., seconds: _Optional[float] = ..., error: _Optional[str] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class CancelTournamentResponse(_message.Message):
    __slots__ = ("name", "played", "total")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    name: str
    played: int
    total: int
    def __init__(self, name: _Optional[str] = ..., played: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class StandingsRequest(_message.Message):
    __slots__ = ("name", "los_max_bots")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LOS_MAX_BOTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    los_max_bots: int
    def __init__(self, name: _Optional[str] = ..., los_max_bots: _Optional[int] = ...) -> None: ...

class StandingsLine(_message.Message):
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

class LosRow(_message.Message):
    __slots__ = ("bot", "los")
    class LosEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    BOT_FIELD_NUMBER: _ClassVar[int]
    LOS_FIELD_NUMBER: _ClassVar[int]
    bot: str
    los: _containers.ScalarMap[str, float]
    def __init__(self, bot: _Optional[str] = ..., los: _Optional[_Mapping[str, float]] = ...) -> None: ...

class StandingsResponse(_message.Message):
    __slots__ = ("tournament", "standings", "los", "matches")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    LOS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    tournament: str
    standings: _containers.RepeatedCompositeFieldContainer[StandingsLine]
    los: _containers.RepeatedCompositeFieldContainer[LosRow]
    matches: int
    def __init__(self, tournament: _Optional[str] = ..., standings: _Optional[_Iterable[_Union[StandingsLine, _Mapping]]] = ..., los: _Optional[_Iterable[_Union[LosRow, _Mapping]]] = ..., matches: _Optional[int] = ...) -> None: ...
