from ono99.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RefusalCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REFUSAL_CODE_UNSPECIFIED: _ClassVar[RefusalCode]
    REFUSAL_CODE_BAD_TOKEN: _ClassVar[RefusalCode]
    REFUSAL_CODE_TOKEN_IN_USE: _ClassVar[RefusalCode]
    REFUSAL_CODE_UNSUPPORTED_PROTOCOL: _ClassVar[RefusalCode]
    REFUSAL_CODE_NO_HELLO: _ClassVar[RefusalCode]
    REFUSAL_CODE_SHUTTING_DOWN: _ClassVar[RefusalCode]
    REFUSAL_CODE_TOO_MANY: _ClassVar[RefusalCode]
    REFUSAL_CODE_BAD_HELLO: _ClassVar[RefusalCode]

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_CODE_UNSPECIFIED: _ClassVar[ErrorCode]
    ERROR_CODE_NOT_YOUR_TURN: _ClassVar[ErrorCode]
    ERROR_CODE_NOT_IN_HAND: _ClassVar[ErrorCode]
    ERROR_CODE_ILLEGAL_PLAY: _ClassVar[ErrorCode]
    ERROR_CODE_STALE_TURN: _ClassVar[ErrorCode]
    ERROR_CODE_MALFORMED: _ClassVar[ErrorCode]

class VerdictKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VERDICT_KIND_UNSPECIFIED: _ClassVar[VerdictKind]
    VERDICT_KIND_TIMEOUT: _ClassVar[VerdictKind]
    VERDICT_KIND_DISCONNECTED: _ClassVar[VerdictKind]
    VERDICT_KIND_CRASHED: _ClassVar[VerdictKind]
    VERDICT_KIND_ILLEGAL: _ClassVar[VerdictKind]
    VERDICT_KIND_ABORTED: _ClassVar[VerdictKind]
    VERDICT_KIND_RETIRED: _ClassVar[VerdictKind]
    VERDICT_KIND_ABSENT: _ClassVar[VerdictKind]
REFUSAL_CODE_UNSPECIFIED: RefusalCode
REFUSAL_CODE_BAD_TOKEN: RefusalCode
REFUSAL_CODE_TOKEN_IN_USE: RefusalCode
REFUSAL_CODE_UNSUPPORTED_PROTOCOL: RefusalCode
REFUSAL_CODE_NO_HELLO: RefusalCode
REFUSAL_CODE_SHUTTING_DOWN: RefusalCode
REFUSAL_CODE_TOO_MANY: RefusalCode
REFUSAL_CODE_BAD_HELLO: RefusalCode
ERROR_CODE_UNSPECIFIED: ErrorCode
ERROR_CODE_NOT_YOUR_TURN: ErrorCode
ERROR_CODE_NOT_IN_HAND: ErrorCode
ERROR_CODE_ILLEGAL_PLAY: ErrorCode
ERROR_CODE_STALE_TURN: ErrorCode
ERROR_CODE_MALFORMED: ErrorCode
VERDICT_KIND_UNSPECIFIED: VerdictKind
VERDICT_KIND_TIMEOUT: VerdictKind
VERDICT_KIND_DISCONNECTED: VerdictKind
VERDICT_KIND_CRASHED: VerdictKind
VERDICT_KIND_ILLEGAL: VerdictKind
VERDICT_KIND_ABORTED: VerdictKind
VERDICT_KIND_RETIRED: VerdictKind
VERDICT_KIND_ABSENT: VerdictKind

class BotMessage(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: Action
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("name", "token", "protocol_version", "sdk", "resume_key")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SDK_FIELD_NUMBER: _ClassVar[int]
    RESUME_KEY_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    protocol_version: int
    sdk: str
    resume_key: str
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ..., protocol_version: _Optional[int] = ..., sdk: _Optional[str] = ..., resume_key: _Optional[str] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("turn_id", "card")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    card: _game_pb2.Card
    def __init__(self, turn_id: _Optional[int] = ..., card: _Optional[_Union[_game_pb2.Card, str]] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "refusal", "match_start", "turn", "events", "rejected", "match_end", "goodbye")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    refusal: Refusal
    match_start: MatchStart
    turn: TurnRequest
    events: Events
    rejected: ActionRejected
    match_end: MatchEnd
    goodbye: Goodbye
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., refusal: _Optional[_Union[Refusal, _Mapping]] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., turn: _Optional[_Union[TurnRequest, _Mapping]] = ..., events: _Optional[_Union[Events, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., goodbye: _Optional[_Union[Goodbye, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "referee", "bot_name", "session_id", "resume_key")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REFEREE_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RESUME_KEY_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    referee: str
    bot_name: str
    session_id: str
    resume_key: str
    def __init__(self, protocol_version: _Optional[int] = ..., referee: _Optional[str] = ..., bot_name: _Optional[str] = ..., session_id: _Optional[str] = ..., resume_key: _Optional[str] = ...) -> None: ...

class Refusal(_message.Message):
    __slots__ = ("code", "reason")
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    code: RefusalCode
    reason: str
    def __init__(self, code: _Optional[_Union[RefusalCode, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("move_ms", "bank_ms")
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    move_ms: int
    bank_ms: int
    def __init__(self, move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "seat", "seat_names", "rules", "time_control", "bot_seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    rules: _game_pb2.Rules
    time_control: TimeControl
    bot_seed: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., rules: _Optional[_Union[_game_pb2.Rules, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class TurnRequest(_message.Message):
    __slots__ = ("match_id", "turn_id", "view", "legal", "over_limit", "events", "move_ms", "bank_ms", "previous_latency_us")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    OVER_LIMIT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    turn_id: int
    view: _game_pb2.SeatView
    legal: _containers.RepeatedScalarFieldContainer[_game_pb2.Card]
    over_limit: bool
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    move_ms: int
    bank_ms: int
    previous_latency_us: int
    def __init__(self, match_id: _Optional[str] = ..., turn_id: _Optional[int] = ..., view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., legal: _Optional[_Iterable[_Union[_game_pb2.Card, str]]] = ..., over_limit: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., previous_latency_us: _Optional[int] = ...) -> None: ...

class Events(_message.Message):
    __slots__ = ("match_id", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("turn_id", "code", "reason")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    turn_id: int
    code: ErrorCode
    reason: str
    def __init__(self, turn_id: _Optional[int] = ..., code: _Optional[_Union[ErrorCode, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class Verdict(_message.Message):
    __slots__ = ("seat", "kind", "detail", "latency_us")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: VerdictKind
    detail: str
    latency_us: int
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[_Union[VerdictKind, str]] = ..., detail: _Optional[str] = ..., latency_us: _Optional[int] = ...) -> None: ...

class Hand(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[_game_pb2.Card]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_game_pb2.Card, str]]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "ranking", "termination", "verdicts", "hands", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RANKING_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ranking: _containers.RepeatedCompositeFieldContainer[_game_pb2.Place]
    termination: str
    verdicts: _containers.RepeatedCompositeFieldContainer[Verdict]
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, match_id: _Optional[str] = ..., ranking: _Optional[_Iterable[_Union[_game_pb2.Place, _Mapping]]] = ..., termination: _Optional[str] = ..., verdicts: _Optional[_Iterable[_Union[Verdict, _Mapping]]] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class Goodbye(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...
