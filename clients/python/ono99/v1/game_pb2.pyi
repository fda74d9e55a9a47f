from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Card(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CARD_UNSPECIFIED: _ClassVar[Card]
    CARD_MINUS_TEN: _ClassVar[Card]
    CARD_REVERSE: _ClassVar[Card]
    CARD_PLAY_TWO: _ClassVar[Card]
    CARD_DOUBLE_PLAY: _ClassVar[Card]
    CARD_HOLD: _ClassVar[Card]
    CARD_0: _ClassVar[Card]
    CARD_1: _ClassVar[Card]
    CARD_2: _ClassVar[Card]
    CARD_3: _ClassVar[Card]
    CARD_4: _ClassVar[Card]
    CARD_5: _ClassVar[Card]
    CARD_6: _ClassVar[Card]
    CARD_7: _ClassVar[Card]
    CARD_8: _ClassVar[Card]
    CARD_9: _ClassVar[Card]
    CARD_10: _ClassVar[Card]
    CARD_99: _ClassVar[Card]
CARD_UNSPECIFIED: Card
CARD_MINUS_TEN: Card
CARD_REVERSE: Card
CARD_PLAY_TWO: Card
CARD_DOUBLE_PLAY: Card
CARD_HOLD: Card
CARD_0: Card
CARD_1: Card
CARD_2: Card
CARD_3: Card
CARD_4: Card
CARD_5: Card
CARD_6: Card
CARD_7: Card
CARD_8: Card
CARD_9: Card
CARD_10: Card
CARD_99: Card

class Rules(_message.Message):
    __slots__ = ("ruleset", "options", "seats", "limit")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RULESET_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    ruleset: str
    options: _containers.ScalarMap[str, str]
    seats: int
    limit: int
    def __init__(self, ruleset: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ..., seats: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class SeatState(_message.Message):
    __slots__ = ("hand_size", "in_game", "in_round", "tokens", "score", "revealed")
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    IN_GAME_FIELD_NUMBER: _ClassVar[int]
    IN_ROUND_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    hand_size: int
    in_game: bool
    in_round: bool
    tokens: int
    score: int
    revealed: _containers.RepeatedScalarFieldContainer[Card]
    def __init__(self, hand_size: _Optional[int] = ..., in_game: _Optional[bool] = ..., in_round: _Optional[bool] = ..., tokens: _Optional[int] = ..., score: _Optional[int] = ..., revealed: _Optional[_Iterable[_Union[Card, str]]] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "hand", "total", "direction", "to_act", "owed", "draw_size", "discard_size", "seats", "round", "dealer")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    OWED_FIELD_NUMBER: _ClassVar[int]
    DRAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_SIZE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: _containers.RepeatedScalarFieldContainer[Card]
    total: int
    direction: int
    to_act: int
    owed: int
    draw_size: int
    discard_size: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatState]
    round: int
    dealer: int
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, str]]] = ..., total: _Optional[int] = ..., direction: _Optional[int] = ..., to_act: _Optional[int] = ..., owed: _Optional[int] = ..., draw_size: _Optional[int] = ..., discard_size: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ..., round: _Optional[int] = ..., dealer: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("round_started", "card_played", "four_ninety_nines", "cards_drawn", "reshuffled", "seat_lost", "token_lost", "out_of_round", "round_scored", "seat_eliminated", "seat_forfeited", "game_ended")
    ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    FOUR_NINETY_NINES_FIELD_NUMBER: _ClassVar[int]
    CARDS_DRAWN_FIELD_NUMBER: _ClassVar[int]
    RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    SEAT_LOST_FIELD_NUMBER: _ClassVar[int]
    TOKEN_LOST_FIELD_NUMBER: _ClassVar[int]
    OUT_OF_ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORED_FIELD_NUMBER: _ClassVar[int]
    SEAT_ELIMINATED_FIELD_NUMBER: _ClassVar[int]
    SEAT_FORFEITED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    round_started: RoundStarted
    card_played: CardPlayed
    four_ninety_nines: FourNinetyNines
    cards_drawn: CardsDrawn
    reshuffled: Reshuffled
    seat_lost: SeatLost
    token_lost: TokenLost
    out_of_round: OutOfRound
    round_scored: RoundScored
    seat_eliminated: SeatEliminated
    seat_forfeited: SeatForfeited
    game_ended: GameEnded
    def __init__(self, round_started: _Optional[_Union[RoundStarted, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., four_ninety_nines: _Optional[_Union[FourNinetyNines, _Mapping]] = ..., cards_drawn: _Optional[_Union[CardsDrawn, _Mapping]] = ..., reshuffled: _Optional[_Union[Reshuffled, _Mapping]] = ..., seat_lost: _Optional[_Union[SeatLost, _Mapping]] = ..., token_lost: _Optional[_Union[TokenLost, _Mapping]] = ..., out_of_round: _Optional[_Union[OutOfRound, _Mapping]] = ..., round_scored: _Optional[_Union[RoundScored, _Mapping]] = ..., seat_eliminated: _Optional[_Union[SeatEliminated, _Mapping]] = ..., seat_forfeited: _Optional[_Union[SeatForfeited, _Mapping]] = ..., game_ended: _Optional[_Union[GameEnded, _Mapping]] = ...) -> None: ...

class RoundStarted(_message.Message):
    __slots__ = ("round", "dealer", "first", "total")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    round: int
    dealer: int
    first: int
    total: int
    def __init__(self, round: _Optional[int] = ..., dealer: _Optional[int] = ..., first: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("seat", "card", "total")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    total: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, str]] = ..., total: _Optional[int] = ...) -> None: ...

class FourNinetyNines(_message.Message):
    __slots__ = ("seat", "total")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    total: int
    def __init__(self, seat: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class CardsDrawn(_message.Message):
    __slots__ = ("seat", "count")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    count: int
    def __init__(self, seat: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class Reshuffled(_message.Message):
    __slots__ = ("draw_size",)
    DRAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    draw_size: int
    def __init__(self, draw_size: _Optional[int] = ...) -> None: ...

class SeatLost(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class TokenLost(_message.Message):
    __slots__ = ("seat", "tokens_left")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKENS_LEFT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    tokens_left: int
    def __init__(self, seat: _Optional[int] = ..., tokens_left: _Optional[int] = ...) -> None: ...

class OutOfRound(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, str]] = ...) -> None: ...

class RoundScored(_message.Message):
    __slots__ = ("scores",)
    SCORES_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, scores: _Optional[_Iterable[int]] = ...) -> None: ...

class SeatEliminated(_message.Message):
    __slots__ = ("seat", "hand")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: _containers.RepeatedScalarFieldContainer[Card]
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, str]]] = ...) -> None: ...

class SeatForfeited(_message.Message):
    __slots__ = ("seat", "together")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOGETHER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    together: bool
    def __init__(self, seat: _Optional[int] = ..., together: _Optional[bool] = ...) -> None: ...

class GameEnded(_message.Message):
    __slots__ = ("ranking", "termination")
    RANKING_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    ranking: _containers.RepeatedCompositeFieldContainer[Place]
    termination: str
    def __init__(self, ranking: _Optional[_Iterable[_Union[Place, _Mapping]]] = ..., termination: _Optional[str] = ...) -> None: ...

class Place(_message.Message):
    __slots__ = ("seats",)
    SEATS_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seats: _Optional[_Iterable[int]] = ...) -> None: ...
