"""What the fuzzer sends: Hypothesis strategies for field values and whole messages.

Every field gets the values that break servers: zero, one, the limits of its type and one
past them where the wire allows it, negative numbers in unsigned places, enum numbers the
enum does not have, empty and enormous strings, text from every Unicode plane; and raw
bytes that are not protobuf, or are the protobuf of some other message.
"""

from __future__ import annotations

from hypothesis import strategies as st
from ono99.v1 import game_pb2, organizer_pb2, referee_pb2, spectator_pb2

INT32 = (-(2**31), -1, 0, 1, 2, 3, 7, 99, 2**31 - 1)
UINT64 = (0, 1, 2**32, 2**53 + 1, 2**63, 2**64 - 1)
#: the largest string a strategy makes: far above any field's limit, and above the 64 KiB
#: every port reads at most
BIG = 200_000
#: referee.proto and spectator.proto: a message over 64 KiB ends its call (gRPC's limit)
MAX_RECEIVE = 64 * 1024
#: referee.proto: a bot's message is at most 4096 bytes (a larger one is refused)
MAX_BOT_MESSAGE = 4096
#: referee.proto: the most characters of each text field of a Hello
HELLO_LIMITS = {"name": 64, "token": 256, "sdk": 100, "resume_key": 256}

N_CARDS = len(game_pb2.Card.values())   # CARD_UNSPECIFIED included


def int32s() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(INT32), st.integers(-(2**31), 2**31 - 1))


def uint64s() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(UINT64), st.integers(0, 2**64 - 1))


def cards() -> st.SearchStrategy[int]:
    """A ``Card`` number: every real card, UNSPECIFIED, one past the last, and any int32
    (proto3 enums are open: any number travels)."""
    return st.one_of(st.integers(0, N_CARDS), st.sampled_from(INT32))


def texts(big: bool = True) -> st.SearchStrategy[str]:
    """Strings: empty, short, any Unicode (no lone surrogates: protobuf refuses to send
    them), control characters, and (``big``) enormous ones."""
    parts = [st.just(""), st.text(max_size=20),
             st.text(st.characters(codec="utf-8"), max_size=64),
             st.sampled_from(["\x00", "../..", "ladder", " ", "é" * 70, "a" * 65, "%s%n",
                              "名前", "\U0001F0CF", "DROP TABLE bots;--"])]
    if big:
        parts.append(st.integers(1_000, BIG).map(lambda n: "x" * n))
    return st.one_of(*parts)


def fitting(limit: int) -> st.SearchStrategy[str]:
    """Printable text within ``limit`` characters: a field the referee accepts."""
    return st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp")),
                   max_size=limit)


def raw_bytes() -> st.SearchStrategy[bytes]:
    """Bytes that are rarely protobuf: random, cut-off varints, wrong wire types, a
    field's length running past the end, invalid UTF-8 in a string field."""
    return st.one_of(
        st.binary(max_size=64),
        st.sampled_from([b"\xff", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x0a\x7f",
                         b"\x0a\x05\x0a\x03\xff\xfe\xfd", b"\x12\x02\x08", b"\x07", b"\x0f\x00",
                         b"\x0a\x80\x80\x80\x80\x10", b"GET / HTTP/1.1\r\n\r\n"]),
        st.binary(min_size=1, max_size=4).map(lambda b: b"\x0a\xff\xff\xff\x0f" + b),
    )


def other_messages() -> st.SearchStrategy[bytes]:
    """The protobuf of messages of other services: well-formed bytes of the wrong type."""
    return st.sampled_from([
        referee_pb2.RefereeMessage(goodbye=referee_pb2.Goodbye(reason="bye")).SerializeToString(),
        referee_pb2.RefereeMessage(turn=referee_pb2.TurnRequest(match_id="m", turn_id=5)).SerializeToString(),
        organizer_pb2.TournamentRequest(name="t", bots=["a", "b"], games=3).SerializeToString(),
        spectator_pb2.WatchMatchRequest(match_id="m", delay_turns=-4).SerializeToString(),
        organizer_pb2.UploadChunk(data=b"\x1f\x8b" * 10).SerializeToString(),
    ])


def hellos(tokens: st.SearchStrategy[str]) -> st.SearchStrategy[referee_pb2.Hello]:
    """Hellos whose fields fit their limits as often as not (the checks behind them are
    reached), or are anything at all."""
    return st.builds(
        referee_pb2.Hello,
        name=st.one_of(fitting(HELLO_LIMITS["name"]), texts()), token=tokens,
        protocol_version=st.one_of(st.just(1), int32s()),
        sdk=st.one_of(fitting(HELLO_LIMITS["sdk"]), texts(big=False)),
        resume_key=st.one_of(st.just(""), texts(big=False)))


def actions(turn_ids: st.SearchStrategy[int]) -> st.SearchStrategy[referee_pb2.Action]:
    return st.builds(referee_pb2.Action, turn_id=turn_ids, card=cards())
