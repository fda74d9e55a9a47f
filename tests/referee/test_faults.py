"""Misbehaving bots: each gets the right verdict or refusal, the match finishes for the
others, and the referee keeps serving."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from ono99.v1 import referee_pb2 as pb

from support.matches import BOTS, play, replays, spec

from arena.referee.results import FaultPolicy, Status
from arena.rules.events import decisions
from arena.referee.server import RefereeServer


def verdict_kinds(result):
    return {v.seat: v.kind for v in result.verdicts}


def two_matches(names, **kw):
    return [spec(names, seed=7, **kw), spec(names, seed=8, **kw)]


def check_others_finish(results, faulty_seat):
    first, second = results
    assert first.status == Status.FINISHED and first.ranking[-1] == (faulty_seat,)
    assert second.status == Status.FINISHED  # the referee keeps serving


def rejections(logs, name):
    """What the rogue bot ``name`` logged: the refusals and rejections it received."""
    path = logs / f"{name}.stderr.log"
    if not path.exists():
        return []
    return [line[4:] for line in path.read_text().splitlines() if line.startswith("LOG ")]


def test_a_bot_that_sleeps_past_its_time_times_out(rogue, tmp_path, monkeypatch):
    monkeypatch.setenv("ROGUE_SLEEP", "1.5")
    results = play([rogue("sleep", 2), BOTS / "random", BOTS / "random"],
                   lambda n: two_matches(n, move_ms=200, bank_ms=300))
    verdict = results[0].verdicts[0]
    assert (verdict.seat, verdict.kind) == (0, "timeout")
    assert 500_000 <= verdict.latency_us < 1_000_000  # 200 ms + 300 ms bank, then the verdict
    assert "200 ms + 300 ms" in verdict.detail
    check_others_finish(results, 0)


def test_a_bot_that_exits_mid_match_crashed_and_is_restarted(rogue):
    results = play([BOTS / "random", rogue("exit", 2)], lambda n: two_matches(n))
    verdict = results[0].verdicts[0]
    assert (verdict.seat, verdict.kind) == (1, "crashed")
    assert "exited with code 1" in verdict.detail
    assert results[0].ranking == ((0,), (1,))
    # restarted for the next match, where it crashes again at the same point
    assert verdict_kinds(results[1]) == {1: "crashed"}


@pytest.mark.parametrize("mode", ["garbage_card", "unspecified"])
def test_a_bot_that_sends_garbage_cards_is_refused_then_judged_illegal(rogue, tmp_path, monkeypatch, mode):
    results = play([rogue(mode, 2), BOTS / "random", BOTS / "greedy"],
                   lambda n: two_matches(n, max_rejections=3), log_dir=tmp_path)
    assert verdict_kinds(results[0]) == {0: "illegal"}
    assert "4 refused actions" in results[0].verdicts[0].detail
    assert rejections(tmp_path, mode)[:4] == ["rejected ERROR_CODE_MALFORMED"] * 4
    check_others_finish(results, 0)


def test_a_bot_whose_answers_are_padded_past_the_limit_is_refused_then_judged_illegal(
        rogue, tmp_path):
    """A valid action padded with an unknown field to 8000 bytes (over a bot message's
    4096): refused as malformed, like any bad answer; the others play on."""
    results = play([rogue("padded", 2), BOTS / "random", BOTS / "greedy"],
                   lambda n: two_matches(n, max_rejections=3), log_dir=tmp_path)
    assert verdict_kinds(results[0]) == {0: "illegal"}
    assert rejections(tmp_path, "padded")[:4] == ["rejected ERROR_CODE_MALFORMED"] * 4
    check_others_finish(results, 0)


def test_a_bot_message_over_64_kib_ends_its_stream(rogue, tmp_path):
    results = play([rogue("padded", 2, extra=("100000",)), BOTS / "random", BOTS / "random"],
                   lambda n: two_matches(n), log_dir=tmp_path)
    # the stream ends; the bot then exits, which the referee may see first
    verdict = results[0].verdicts[0]
    assert verdict.kind in ("disconnected", "crashed")
    if verdict.kind == "disconnected":   # says what may have happened, not only "closed"
        assert "or sent a message over 64 KiB" in verdict.detail
    assert "rpc_error RESOURCE_EXHAUSTED" in rejections(tmp_path, "padded")
    check_others_finish(results, 0)


def test_a_bot_that_sends_undecodable_bytes_is_disconnected(rogue):
    results = play([rogue("garbage_bytes", 2), BOTS / "random", BOTS / "random"],
                   lambda n: two_matches(n))
    assert verdict_kinds(results[0]) == {0: "disconnected"}
    assert "a message is not a BotMessage: protobuf cannot parse it" in results[0].verdicts[0].detail
    check_others_finish(results, 0)


@pytest.mark.parametrize("mode, code", [
    ("not_in_hand", "ERROR_CODE_NOT_IN_HAND"),
    ("other_turn", "ERROR_CODE_NOT_YOUR_TURN"),
    ("stale", "ERROR_CODE_STALE_TURN"),
    # a late answer to the last match's turn, read in the next: stale too (it was told
    # "not a turn of yours", and bots.md promises stale_turn for a late answer)
    ("stale_match", "ERROR_CODE_STALE_TURN"),
])
def test_a_refused_action_leaves_the_turn_open(rogue, tmp_path, monkeypatch, mode, code):
    results = play([rogue(mode, 3), BOTS / "random"], lambda n: [spec(n, seed=s) for s in (3, 4, 5)],
                   log_dir=tmp_path)
    assert code in "".join(rejections(tmp_path, mode))
    for result in results:
        assert result.status == Status.FINISHED
        assert result.verdicts == []  # one refusal is no fault: it answered again in time
    assert results[0].stats[0].rejections + results[1].stats[0].rejections >= 1


@pytest.mark.parametrize("max_rejections, kind, words", [
    (5, "illegal", "refused actions in this match"),           # the usual limit
    # none: its clock runs out (or, on a slow machine, the referee gives up writing to it
    # first: it is cut off for not reading, within the same clock)
    (10**9, "timeout|disconnected", "no valid answer within 500 ms|cut off: it does not read"),
])
def test_a_bot_that_floods_and_never_reads_is_stopped_and_its_clock_holds(
        rogue, tmp_path, max_rejections, kind, words):
    """Its refusals pile up unread and it never answers: its clock runs as if it did
    nothing (no write to it holds the match), and the match goes on. (The bounded queue
    that cuts such a bot off: test_session_queue.py.)"""
    results = play([rogue("flood", 2), BOTS / "random"],
                   lambda n: [spec(n, seed=s, move_ms=500, bank_ms=1000,
                                   max_rejections=max_rejections) for s in (3, 4)],
                   log_dir=tmp_path)
    first = results[0]
    assert verdict_kinds(first).keys() == {0}, first.verdicts
    # the kind and its words go together
    assert any(verdict_kinds(first)[0] == k and w in first.verdicts[0].detail
               for k, w in zip(kind.split("|"), words.split("|"))), first.verdicts
    assert first.status == Status.FINISHED and first.ranking[-1] == (0,)
    assert first.duration_s < 5, f"the match ran {first.duration_s:.1f} s on a 1.5 s clock"
    assert results[1].status == Status.FINISHED     # a new process plays the next match
    assert "flooded" in rejections(tmp_path, "flood")


def test_autoplay_records_the_verdict_and_plays_on_for_the_seat(rogue):
    results = play([rogue("exit", 2), BOTS / "random"],
                   lambda n: [spec(n, seed=7, on_fault=FaultPolicy.AUTOPLAY)])
    result = results[0]
    assert verdict_kinds(result) == {0: "crashed"}
    assert result.status == Status.FINISHED
    assert not any(e[0] == "forfeit" for e in result.events)
    plays = [e for e in result.events if e[0] == "play" and e[1] == 0]
    assert len(plays) > 2  # the referee went on playing for seat 0


def test_autoplay_shows_the_other_seats_no_more_of_the_hand_than_the_cards_it_plays(rogue):
    # the referee's choice is public knowledge: had it played the first legal card in Card
    # enum order, each card would also have told the table that the seat held no legal
    # card before it (no -10, R or P2 behind a 7: most of a modern hand, turn after turn)
    results = play([rogue("exit", 1), BOTS / "random", BOTS / "random"],
                   lambda n: [spec(n, seed=s, on_fault=FaultPolicy.AUTOPLAY) for s in range(1, 7)])
    chosen = []   # (the card played, the legal cards) at each turn played for seat 0
    for result in results:
        assert verdict_kinds(result) == {0: "crashed"} and replays(result)
        game = result.spec.new_game()
        faulted = False
        for d in decisions(result.events):
            if d[0] == "play" and d[1] == 0 and len(game.legal_cards()) > 1:
                chosen.append((d[2], game.legal_cards()))
                faulted = True
            game.play(d[1], d[2]) if d[0] == "play" else game.forfeit(d[1])
        assert faulted
    assert len(chosen) >= 20
    firsts = sum(card == legal[0] for card, legal in chosen)
    assert firsts < len(chosen) * 0.8, f"{firsts} of {len(chosen)} were the first legal card"


async def _hello(address, token, version=1, first=None):
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream("/ono99.v1.Referee/Play",
                                     request_serializer=pb.BotMessage.SerializeToString,
                                     response_deserializer=pb.RefereeMessage.FromString)()
        await call.write(first or pb.BotMessage(hello=pb.Hello(
            name="x", token=token, protocol_version=version)))
        reply = await call.read()
        status = await call.code() if reply.WhichOneof("kind") == "refusal" else None
        call.cancel()
        return reply, status


@pytest.mark.parametrize("case, code, status", [
    ("wrong", pb.REFUSAL_CODE_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED),
    ("empty", pb.REFUSAL_CODE_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED),
    ("protocol", pb.REFUSAL_CODE_UNSUPPORTED_PROTOCOL, grpc.StatusCode.FAILED_PRECONDITION),
    ("no_hello", pb.REFUSAL_CODE_NO_HELLO, grpc.StatusCode.INVALID_ARGUMENT),
    ("in_use", pb.REFUSAL_CODE_TOKEN_IN_USE, grpc.StatusCode.ALREADY_EXISTS),
])
def test_hellos_are_refused_precisely_and_the_referee_keeps_serving(case, code, status):
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            reg = server.lobby.register("good")
            if case == "in_use":
                async with grpc.aio.insecure_channel(server.address) as channel:
                    first = channel.stream_stream(
                        "/ono99.v1.Referee/Play", request_serializer=pb.BotMessage.SerializeToString,
                        response_deserializer=pb.RefereeMessage.FromString)()
                    await first.write(pb.BotMessage(hello=pb.Hello(token=reg.token, protocol_version=1)))
                    assert (await first.read()).WhichOneof("kind") == "welcome"
                    reply, got = await _hello(server.address, reg.token)
                    first.cancel()
            else:
                token = {"wrong": "nope", "empty": ""}.get(case, reg.token)
                first_msg = pb.BotMessage(action=pb.Action(turn_id=1, card=7)) if case == "no_hello" else None
                reply, got = await _hello(server.address, token, 99 if case == "protocol" else 1, first_msg)
            assert reply.WhichOneof("kind") == "refusal"
            assert reply.refusal.code == code and reply.refusal.reason
            assert got == status
            await asyncio.sleep(0.05)
            # still serving: a good hello is welcome
            welcome, _ = await _hello(server.address, reg.token)
            assert welcome.WhichOneof("kind") == "welcome"
            assert welcome.welcome.bot_name == "good"
        finally:
            await server.stop()

    asyncio.run(go())


def test_a_launched_bot_with_a_wrong_token_is_refused_and_its_seat_judged(rogue, tmp_path):
    (result,) = play([rogue("wrong_token"), BOTS / "random"], lambda n: [spec(n)],
                     log_dir=tmp_path)
    assert verdict_kinds(result) == {0: "disconnected"}
    assert "could not start" in result.verdicts[0].detail
    assert "exited with code 3 before connecting" in result.verdicts[0].detail
    assert result.status == Status.FINISHED and result.ranking == ((1,), (0,))
    assert rejections(tmp_path, "wrong_token")[0] == "refusal REFUSAL_CODE_BAD_TOKEN"


def _raw_play(channel):
    return channel.stream_stream("/ono99.v1.Referee/Play", request_serializer=lambda b: b,
                                 response_deserializer=pb.RefereeMessage.FromString)()


@pytest.mark.parametrize("first, words", [
    (b"\x0a\xff\xff\xff\x0f", "a message is not a BotMessage: protobuf cannot parse it"),
    (None, "the stream ended before a hello"),
], ids=["not-protobuf", "nothing"])
def test_a_stream_that_never_says_hello_is_refused_no_hello(first, words):
    """Bytes that are not protobuf, or no message at all before the stream ends: the
    refusal NO_HELLO and INVALID_ARGUMENT, as for any first message that is not a hello
    (they were an UNKNOWN status from an exception, and a silent OK)."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = _raw_play(channel)
                if first is not None:
                    await call.write(first)
                await call.done_writing()
                reply = await call.read()
                assert reply.refusal.code == pb.REFUSAL_CODE_NO_HELLO
                assert words in reply.refusal.reason
                assert await call.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert words in await call.details()
            assert any(words in r for r in server.lobby.refusals)
        finally:
            await server.stop()

    asyncio.run(go())


def test_bytes_that_are_not_a_bot_message_end_the_session_with_a_goodbye():
    """In a session, such bytes end it: a goodbye says why, the stream ends with
    INVALID_ARGUMENT (it ended with OK and no word), and the token may connect again."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            token = server.lobby.register("bot").token
            hello = pb.BotMessage(hello=pb.Hello(token=token, protocol_version=1)).SerializeToString()
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = _raw_play(channel)
                await call.write(hello)
                assert (await call.read()).HasField("welcome")
                await call.write(b"\x12\x05\x08")
                goodbye = await call.read()
                assert "a message is not a BotMessage: protobuf cannot parse it" in goodbye.goodbye.reason
                assert await call.code() == grpc.StatusCode.INVALID_ARGUMENT
                again = _raw_play(channel)
                await again.write(hello)
                assert (await again.read()).HasField("welcome")
                again.cancel()
        finally:
            await server.stop()

    asyncio.run(go())


@pytest.mark.parametrize("present, ranking", [
    ((), ((0, 1, 2),)),          # nobody came: one tie, not a win for the last seat
    ((1,), ((1,), (0, 2))),      # the absent seats share the last place
    ((0, 2), None),              # one absent seat: last, and the others play on
])
def test_seats_that_fail_before_the_first_turn_leave_together(present, ranking):
    """Seats judged at the start fail at the same moment: before, they forfeited one by
    one in seat order, so the last absent seat outranked the others (and with nobody
    there, won)."""
    from arena.referee.house import FirstLegal, HouseSession
    from arena.referee.runner import MatchRunner
    from support.matches import replays

    sessions = [HouseSession(FirstLegal()) if s in present else None for s in range(3)]
    result = asyncio.run(MatchRunner(spec(["a", "b", "c"], seed=5), sessions).run())
    assert result.status == Status.FINISHED
    if ranking is not None:
        assert result.ranking == ranking
    else:
        assert result.ranking[-1] == (1,) and len(result.ranking) == 3
    assert verdict_kinds(result) == {s: "disconnected" for s in range(3) if s not in present}
    forfeits = [e for e in result.events if e[0] == "forfeit"]
    assert [e[1] for e in forfeits] == [s for s in range(3) if s not in present]
    assert [len(e) > 2 for e in forfeits] == [i > 0 for i in range(len(forfeits))]
    assert replays(result)


def test_a_bot_lost_while_the_arena_stood_still_between_matches_is_lost_to_the_pause():
    """The arena stopped (here its event loop blocked 7 s; a SIGSTOP is alike) between two
    matches of a bot, which was lost meanwhile: its seat taken for the next match, that
    match begun after the pause found it gone and charged it ("disconnected before the
    match", stored as a result: CI's long-pause test, once in several runs). The pause is
    now counted from the bot's last sign of life (its last match's end), so the runner
    says the bot was lost to the pause, and a tournament plays the match again."""
    import signal
    import time

    from arena.local import LocalArena
    from arena.referee.runner import ARENA_PAUSE_S, MatchRunner

    async def go():
        async with LocalArena.open([BOTS / "random", BOTS / "greedy"]) as local:
            first = await local.play(spec(["random", "greedy"], seed=1))
            sessions = [bot.session for bot in local.bots]
            local.bots[0].process.jail.signal(signal.SIGKILL)   # kill -9 of its processes
            time.sleep(ARENA_PAUSE_S + 2)        # the loop stands still: the arena's pause
            await asyncio.sleep(0.1)   # the loop runs again (its clock counts the pause) ...
            runner = MatchRunner(spec(["random", "greedy"], seed=2), sessions)   # ... then this
            second = await runner.run()
            return first, second, runner.lost_to_pause

    first, second, lost = asyncio.run(go())
    assert first.status == Status.FINISHED and first.verdicts == []
    assert [v.seat for v in second.verdicts] == [0]     # the verdict stands in the match...
    assert lost is not None and lost[0] == 0 and lost[1] >= ARENA_PAUSE_S   # ...told as lost


def test_a_bot_that_is_always_a_little_late_spends_its_bank_and_times_out(
        rogue, tmp_path, monkeypatch):
    """A bot that takes 0.1 s every turn on a 50 ms move and a 200 ms bank draws ~50 ms
    from its bank each turn: the bank_ms it is sent goes down turn by turn and it times
    out within a few turns. Were the bank never drawn on, such a bot could take just
    under move time + bank on every turn for ever (mutation review: the bank's update
    replaced by ``pass``: it played all its turns, no verdict)."""
    monkeypatch.setenv("ROGUE_SLEEP", "0.1")
    results = play([rogue("slow_sometimes", 1, extra=("log_bank",)), BOTS / "random"],
                   lambda n: [spec(n, seed=7, move_ms=50, bank_ms=200)], log_dir=tmp_path)
    banks = [int(line.split()[1]) for line in rejections(tmp_path, "slow_sometimes")
             if line.startswith("bank ")]
    assert verdict_kinds(results[0]) == {0: "timeout"}, results[0].verdicts
    assert 2 <= len(banks) <= 8, banks                           # within a few turns
    # judged on the turn it logged last, with what was left of its bank then
    assert f"50 ms + {banks[-1]} ms of bank" in results[0].verdicts[0].detail
    assert banks[0] == 200
    assert all(later < earlier for earlier, later in zip(banks, banks[1:])), banks
    assert results[0].status == Status.FINISHED and results[0].ranking[-1] == (0,)


def test_refusals_are_counted_per_match_for_a_bot_that_plays_several(rogue, tmp_path):
    """The refusal limit is per match: a bot process that plays several matches starts
    each with none counted. Here it sends one stale answer at the start of each match but
    the first, on a limit of one: never judged. Were the count carried over (mutation
    review: begin_match no longer resetting ``rejections``), its third match would judge
    it illegal for refusals it got in the second."""
    results = play([rogue("stale_match", 3), BOTS / "random"],
                   lambda n: [spec(n, seed=s, max_rejections=1) for s in (3, 4, 5, 6)],
                   log_dir=tmp_path)
    assert rejections(tmp_path, "stale_match").count("rejected ERROR_CODE_STALE_TURN") == 3
    for result in results:
        assert result.status == Status.FINISHED
        assert result.verdicts == [], result.verdicts
    assert [r.stats[0].rejections for r in results] == [0, 1, 1, 1]


@pytest.mark.parametrize("total, taken", [(4096, True), (4097, False)])
def test_a_bot_message_of_4096_bytes_is_taken_and_one_byte_more_refused(rogue, tmp_path, total,
                                                                        taken):
    """A bot's messages are at most 4096 bytes (bots.md): an answer padded (with an
    unknown field) to exactly 4096 is taken as any answer, one of 4097 refused as
    malformed, and again at each try, until the bot is judged. (Mutation review: the
    size check of the open turn's answer, ``<= MAX_BOT_MESSAGE``, changed to ``<``:
    nothing failed, the only test sent 8000 bytes.)"""
    results = play([rogue("padded", 2, extra=(f"={total}",)), BOTS / "random"],
                   lambda n: [spec(n, seed=7, max_rejections=3)], log_dir=tmp_path)
    result = results[0]
    assert result.status == Status.FINISHED
    if taken:
        assert result.verdicts == [] and result.stats[0].rejections == 0, result.verdicts
        assert result.stats[0].moves >= 2           # its second, the padded one, taken
        assert rejections(tmp_path, "padded") == []
    else:
        assert verdict_kinds(result) == {0: "illegal"}
        assert rejections(tmp_path, "padded")[:4] == ["rejected ERROR_CODE_MALFORMED"] * 4
