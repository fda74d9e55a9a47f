"""The Python SDK against a referee that is hostile or broken (a remote bot dials a
stranger's server): what it keeps is bounded, what it prints is escaped and cut, and a turn
that breaks what docs/bots.md promises is not shown to the bot. The driver takes real
protobuf messages, as from the wire; the last tests run a bot process against a scripted
referee. The Node.js and C++ SDKs' tests hold theirs to the same rules."""

from __future__ import annotations

import asyncio
import logging
import sys

import pytest
from ono99.bot import Bot
from ono99.bot.client import EXIT_BROKEN, EXIT_OK
from ono99.bot.driver import (
    MAX_MATCH_EVENTS, MAX_OPEN_MATCHES, SAID_CHARS, Driver, ProtocolError, RefusedError, said,
)
from ono99.bot.model import MatchResult
from ono99.v1 import game_pb2, referee_pb2

from support.scripted import Stream, match_start, plays, reject, scripted_run, turn, welcome

C = game_pb2.Card
#: a terminal's title set, colours, a line wiped and a line of the referee's own
SPOOF = "\x1b]0;PWNED\x07\x1b[31;1mred\x1b[2K\rFAKE: all good\u202e\x9b"


class Recorder(Bot):
    name = "recorder"

    def __init__(self) -> None:
        self.views = []

    def choose(self, view):
        self.views.append((view.legal, view.hand))
        return view.legal[0]


def start(match_id: str) -> referee_pb2.RefereeMessage:
    msg = match_start()
    msg.match_id = match_id
    return referee_pb2.RefereeMessage(match_start=msg)


def events(match_id: str, count: int) -> referee_pb2.RefereeMessage:
    return referee_pb2.RefereeMessage(events=referee_pb2.Events(match_id=match_id,
                                                                events=plays(count)))


def answers(driver: Driver, msg: referee_pb2.RefereeMessage) -> list:
    return list(driver.handle(msg))


def test_a_match_is_kept_to_its_most_events_and_one_more_breaks_the_session():
    driver = Driver(Recorder())
    answers(driver, start("m1"))
    for _ in range(MAX_MATCH_EVENTS // 25_000):
        answers(driver, events("m1", 25_000))
    assert len(driver.matches["m1"]._raw) == MAX_MATCH_EVENTS
    with pytest.raises(ProtocolError) as caught:
        answers(driver, events("m1", 1))
    assert str(caught.value) == "the referee sent more than 100000 events for match m1"
    assert len(driver.matches["m1"]._raw) == MAX_MATCH_EVENTS


def test_matches_never_ended_are_forgotten_the_least_recently_heard_of_first():
    driver = Driver(Recorder())
    for i in range(MAX_OPEN_MATCHES):
        answers(driver, start(f"m{i}"))
    answers(driver, events("m0", 1))                   # m0 heard of last: m1 goes first
    answers(driver, start("new"))
    assert len(driver.matches) == MAX_OPEN_MATCHES
    assert "m0" in driver.matches and "m1" not in driver.matches and "new" in driver.matches
    # turns of matches never started make matches as well, held to the same number
    for i in range(3 * MAX_OPEN_MATCHES):
        t = turn(i, [C.CARD_3], [C.CARD_3])
        t.match_id = f"unknown{i}"
        assert len(answers(driver, referee_pb2.RefereeMessage(turn=t))) == 1
    assert len(driver.matches) == MAX_OPEN_MATCHES


def test_a_rejection_of_no_open_turn_prints_nothing_and_the_open_turn_s_is_escaped(caplog):
    driver = Driver(Recorder())
    answers(driver, start("m1"))
    reason = SPOOF + "x" * (1 << 20)
    with caplog.at_level(logging.DEBUG, logger="ono99.bot"):
        for _ in range(100):
            answers(driver, referee_pb2.RefereeMessage(rejected=referee_pb2.ActionRejected(
                turn_id=9, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason=reason)))
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    caplog.clear()
    answers(driver, referee_pb2.RefereeMessage(turn=turn(5, [C.CARD_3, C.CARD_9],
                                                         [C.CARD_3, C.CARD_9])))
    retry = answers(driver, referee_pb2.RefereeMessage(rejected=referee_pb2.ActionRejected(
        turn_id=5, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason=reason)))
    assert [a.action.card for a in retry] == [C.CARD_9]
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert line == f"action rejected (ERROR_CODE_ILLEGAL_PLAY): {said(reason)}"
    assert "\x1b" not in line and len(line) < 500


def test_said_escapes_what_is_not_printable_and_cuts_the_rest():
    assert said(SPOOF) == ("\\x1b]0;PWNED\\x07\\x1b[31;1mred\\x1b[2K\\x0dFAKE: all good"
                           "\\u202e\\x9b")
    assert said("\U000e0001\n\t") == "\\U000e0001\\x0a\\x09"
    long = "é" * (SAID_CHARS + 7)
    assert said(long) == "é" * SAID_CHARS + "... (7 more characters)"
    assert said("a plain reason") == "a plain reason"


@pytest.mark.parametrize("legal,seat,seats,problem", [
    ([], 0, 2, "offers no legal card"),
    ([C.CARD_3], 2, 2, "puts the bot at seat 2 of 2"),
    ([C.CARD_3], 0, 0, "puts the bot at seat 0 of 0"),
    ([C.CARD_3], -1, 2, "puts the bot at seat -1 of 2"),
])
def test_a_turn_that_breaks_the_view_s_promises_is_not_answered(caplog, legal, seat, seats,
                                                                 problem):
    bot = Recorder()
    driver = Driver(bot)
    answers(driver, start("m1"))
    t = turn(4, [C.CARD_3], legal)
    t.view.seat = seat
    del t.view.seats[seats:]
    with caplog.at_level(logging.WARNING, logger="ono99.bot"):
        assert answers(driver, referee_pb2.RefereeMessage(turn=t)) == []
    assert bot.views == []
    assert [r.getMessage() for r in caplog.records] == [
        f"the referee's turn 4 of match m1 {problem}; not answered"]
    # and the match goes on
    assert len(answers(driver, referee_pb2.RefereeMessage(
        turn=turn(5, [C.CARD_3], [C.CARD_3])))) == 1


def test_the_open_turn_ends_with_the_next_turn_and_with_its_match_forgotten():
    def turn_of(match_id: str, turn_id: int, legal) -> referee_pb2.RefereeMessage:
        t = turn(turn_id, [C.CARD_3, C.CARD_9], legal)
        t.match_id = match_id
        return referee_pb2.RefereeMessage(turn=t)

    def rejection(turn_id: int) -> referee_pb2.RefereeMessage:
        return referee_pb2.RefereeMessage(rejected=referee_pb2.ActionRejected(
            turn_id=turn_id, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason="late"))

    driver = Driver(Recorder())
    answers(driver, start("m0"))
    answers(driver, turn_of("m0", 1, [C.CARD_3, C.CARD_9]))
    answers(driver, turn_of("m0", 2, []))                      # not answered
    assert answers(driver, rejection(1)) == []
    answers(driver, turn_of("m0", 3, [C.CARD_3, C.CARD_9]))
    for i in range(1, MAX_OPEN_MATCHES):
        answers(driver, start(f"m{i}"))
    answers(driver, start("m0"))          # a reconnection's replay: m0 heard of last
    answers(driver, start("one more"))
    assert "m0" in driver.matches and "m1" not in driver.matches
    assert [a.action.card for a in answers(driver, rejection(3))] == [C.CARD_9]
    for i in range(MAX_OPEN_MATCHES):     # m0 forgotten, and its open turn with it
        answers(driver, start(f"n{i}"))
    assert "m0" not in driver.matches
    assert answers(driver, rejection(3)) == []


def test_card_values_the_sdk_does_not_know_read_as_a_question_mark():
    bot = Recorder()
    driver = Driver(bot)
    answers(driver, start("m1"))
    t = turn(1, [C.CARD_3, 18, -1], [C.CARD_3, 18, -1])
    t.events.add(card_played=game_pb2.CardPlayed(seat=1, card=99, total=3))
    answers(driver, referee_pb2.RefereeMessage(turn=t))
    assert bot.views == [(["3", "?", "?"], ["3", "?", "?"])]
    assert [e.card for e in driver.matches["m1"].events] == ["?"]
    end = referee_pb2.MatchEnd(match_id="m1", termination="aborted",
                               hands=[referee_pb2.Hand(seat=1, cards=[C.CARD_3, 18])])
    assert MatchResult.from_proto(end).hands == {1: ("3", "?")}


def test_a_refusal_s_unknown_code_and_reason_are_shown_safely():
    error = RefusedError(referee_pb2.Refusal(code=999, reason=SPOOF))
    assert error.code == "999"
    assert "\x1b" not in str(error) and str(error).endswith(said(SPOOF))


# ---------------------------------------------------------------- a bot process

BOT = '''
from ono99.bot import Bot, run

class First(Bot):
    name = "first"

    def choose(self, view):
        return view.legal[0]

raise SystemExit(run(First()))
'''


def run_bot(tmp_path, script, *args: str) -> tuple[int, str]:
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    rc, err, _ = scripted_run([sys.executable, bot], script, tmp_path, *args, timeout=30)
    return rc, err


def test_a_hostile_referee_s_strings_reach_the_terminal_escaped_and_the_bot_plays_on(tmp_path):
    """Rejections of no turn, a long spoofing rejection of the open one, turns with no
    legal card or a seat out of range, then a good turn and a spoofing goodbye: the bot
    prints one line a case, no escape byte, and exits 0."""
    answered: list[int] = []
    reason = SPOOF + "x" * (1 << 20)

    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(match_start=match_start())
        await reject(stream, 9, reason, 50)
        await stream.send(turn=turn(1, [C.CARD_3], []))
        bad_seat = turn(2, [C.CARD_3], [C.CARD_3])
        bad_seat.view.seat = 5
        await stream.send(turn=bad_seat)
        await stream.send(turn=turn(3, [C.CARD_3, C.CARD_9], [C.CARD_3, C.CARD_9]))
        answered.append((await stream.read()).action.turn_id)
        await reject(stream, 3, reason)
        answered.append((await stream.read()).action.turn_id)
        await stream.send(goodbye=referee_pb2.Goodbye(reason=SPOOF))

    rc, err = run_bot(tmp_path, script)
    assert rc == EXIT_OK, err[-3000:]
    assert answered == [3, 3]
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    assert err.count("action rejected") == 1
    assert f"action rejected (ERROR_CODE_ILLEGAL_PLAY): {said(reason)}" in err
    assert "the referee's turn 1 of match m1 offers no legal card; not answered" in err
    assert "the referee's turn 2 of match m1 puts the bot at seat 5 of 2; not answered" in err
    assert f"the referee said goodbye: {said(SPOOF)}" in err
    assert len(err) < 5_000


def test_a_referee_that_streams_events_breaks_the_session_with_a_bounded_memory(tmp_path):
    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(match_start=match_start())
        for _ in range(MAX_MATCH_EVENTS // 25_000 + 1):
            await stream.send(events=events("m1", 25_000).events)
        await asyncio.sleep(10)

    rc, err = run_bot(tmp_path, script, "--reconnect-timeout", "0")
    assert rc == EXIT_BROKEN, err[-3000:]
    assert err.endswith("error: the referee sent more than 100000 events for match m1\n"), err
