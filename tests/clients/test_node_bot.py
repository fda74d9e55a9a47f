"""The Node.js SDK (clients/node) and its sample bot (bots/node-counter): its own unit
tests, real matches against the Python sample bots on a real referee, a connection broken
mid-match (or before its welcome) that comes back, a host refused as too many, a server
restart (refusing it as shutting down meanwhile) that keeps it, and a hostile scripted
referee (endless events, huge or spoofing strings, turns no bot can play)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys

import grpc
import pytest
from ono99.v1 import game_pb2, referee_pb2

from support.matches import BOTS, RULESETS, play, replays, spec
from support.proxy import Relay
from support.reconnect import (
    NOTICED_WITHIN, TOO_MANY_HELLOS, cut_before_welcome, one_match, restart, stalled, too_many,
)
from support.scripted import Stream, match_start, plays, reject, scripted_run, turn, welcome

from arena.referee import lobby

from arena.referee.results import Status

NODE_COUNTER = BOTS / "node-counter"
NODE_SDK = BOTS.parent / "clients" / "node"



def failures(tap: str) -> str:
    """The failed tests of node's TAP output, with their details (else its end)."""
    lines = tap.splitlines()
    blocks = ["\n".join(lines[i:i + 40]) for i, line in enumerate(lines)
              if line.lstrip().startswith("not ok")]
    return "\n...\n".join(blocks)[-8000:] if blocks else tap[-4000:]


def test_node_sdk_unit_tests_pass(node):
    """npm test in clients/node: the SDK against a fake referee (node's test runner)."""
    proc = subprocess.run(["npm", "test"], cwd=NODE_SDK, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, failures(proc.stdout) + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout


def test_node_counter_unit_tests_pass(node):
    proc = subprocess.run([node, "--test", "bot.test.js"], cwd=NODE_COUNTER, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, failures(proc.stdout) + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout


@pytest.mark.parametrize("ruleset, options", RULESETS)
@pytest.mark.parametrize("seats", [2, 4])
def test_node_bot_plays_every_ruleset_to_the_end(node, ruleset, options, seats):
    bots = ([NODE_COUNTER, BOTS / "counter"] if seats == 2 else
            [NODE_COUNTER, BOTS / "pusher", BOTS / "counter", NODE_COUNTER])
    node_seats = [i for i, b in enumerate(bots) if b == NODE_COUNTER]
    # bot seeds above 2^63 travel as uint64: the node bot must take them without a fault
    results = play(bots, lambda names: [
        spec(names, ruleset, seed, options, bot_seeds=tuple(2**64 - 1 - i for i in range(seats)))
        for seed in (1, 2)])
    for result in results:
        assert result.status == Status.FINISHED
        assert result.verdicts == []
        assert sorted(s for g in result.ranking for s in g) == list(range(seats))
        assert replays(result)
        played = {e[1] for e in result.events if e[0] == "play"}
        assert set(node_seats) <= played, "a node seat never played"


def test_node_bot_replays_its_randomness_from_the_bot_seed(node, tmp_path):
    """With --epsilon the node bot plays random cards drawn from bot.random: the same specs
    give the same games, other bot seeds other games."""
    folder = tmp_path / "node-random"
    folder.mkdir()
    # a copy of node-counter out of the repository: the SDK is found where the arena says
    shutil.copy(NODE_COUNTER / "bot.js", folder / "bot.js")
    (folder / "bot.toml").write_text(
        'name = "node-random"\ncommand = ["node", "bot.js", "--epsilon", "0.7"]\n')
    bots = [folder, BOTS / "counter"]

    def specs(seeds):
        return lambda names: [spec(names, "modern", 5, bot_seeds=(s, 1)) for s in seeds]

    first = play(bots, specs([2**63 + 5, 7]))
    second = play(bots, specs([2**63 + 5, 7]))
    assert [r.verdicts for r in first + second] == [[]] * 4
    assert first[0].events == second[0].events
    assert first[1].events == second[1].events
    assert first[0].events != first[1].events


def test_node_counter_beats_random_clearly(node):
    results = play([NODE_COUNTER, BOTS / "random"],
                   lambda names: [spec(names, seed=s) for s in range(1, 81)])
    assert all(r.verdicts == [] for r in results)
    wins = sum(r.ranking[0] == (0,) for r in results)
    assert wins >= 48, f"node-counter won {wins} of 80"  # 60%; bots/counter wins ~69%


@pytest.mark.parametrize("ruleset, options", RULESETS)
def test_node_counter_plays_exactly_as_counter(node, ruleset, options):
    """The port is faithful: in the seat of bots/counter, against the same opponents and
    seeds, node-counter makes the same decisions, so the games are the same."""
    def games(bot):
        return play([bot, BOTS / "random", BOTS / "pusher"],
                    lambda names: [spec(names, ruleset, seed, options) for seed in range(1, 9)])

    python, js = games(BOTS / "counter"), games(NODE_COUNTER)
    assert [r.verdicts for r in js] == [[]] * 8
    for a, b in zip(python, js):
        assert a.events == b.events, f"seed {a.spec.seed}: node-counter decided otherwise than counter"


def test_node_counter_passes_check_bot(node):
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", "check-bot", str(NODE_COUNTER)],
                          cwd=BOTS.parent, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "check-bot: node-counter: 13 passed, 0 failed"


@pytest.mark.parametrize("break_with", [Relay.drop, Relay.black_hole], ids=["drop", "black-hole"])
def test_a_broken_connection_comes_back_and_the_match_goes_on(node, break_with):
    """Through a relay cut mid-match: node-counter dials again with its resume key (which
    also replaces a session the referee has not seen die), hears the match again from its
    start, and plays it to the end without a verdict."""
    far = [node, str(NODE_COUNTER / "bot.js")]
    result, [(rc, err), (near_rc, _)], relay = asyncio.run(one_match(break_with, far=far))
    assert result.status == Status.FINISHED and result.verdicts == [], result.verdicts
    assert replays(result)
    assert "reconnected to the referee after" in err, err
    assert relay.accepted == 2  # one try was enough: no refusal of the token as in use
    assert (rc, near_rc) == (0, 0), err


def test_a_token_refused_as_too_many_for_a_while_gets_in_when_it_passes(node, monkeypatch):
    """REFUSAL_CODE_TOO_MANY from a real referee: node-counter tries again within its
    reconnect window, and plays once let in."""
    # the block outlasts the bot's start, whose first hello it must refuse (1.5 s did
    # not, once, for node-counter on a loaded machine: let in at once, never refused)
    monkeypatch.setattr(lobby, "HELLO_WINDOW_S", 4.0)
    rc, err, took, refused = asyncio.run(too_many([node, str(NODE_COUNTER / "bot.js")]))
    assert rc == 0, err
    assert f"warning: referee refused the connection (too_many): {TOO_MANY_HELLOS} 4 s" in err
    assert "connected to the referee after" in err
    # refused at least once, and let in soon after the block (4 s, then a pause of 2 s at
    # most), not at the end of its reconnect window (10 s)
    assert refused and took < 9.5


def test_too_many_for_longer_than_the_window_exits_3(node):
    rc, err, took, refused = asyncio.run(too_many([node, str(NODE_COUNTER / "bot.js")], "1"))
    assert rc == 3, err
    assert ("error: could not connect to the referee within 1 s (last: referee refused the "
            f"connection (too_many): {TOO_MANY_HELLOS} 60 s") in err
    assert len(refused) >= 2 and 0.8 <= took < 5   # the window runs from its first try


def test_a_connection_cut_between_hello_and_welcome_is_tried_again(node):
    """The hello reached the real referee, its welcome never reached node-counter: no
    refusal was said, so it dials again, as after any broken stream."""
    rc, err, sessions = asyncio.run(cut_before_welcome([node, str(NODE_COUNTER / "bot.js")]))
    assert rc == 0, err
    assert len(sessions) == 2
    assert "; trying again for up to 10 s" in err and "connected to the referee after" in err


def test_a_server_restart_keeps_the_bot_through_shutting_down_refusals(node):
    """The referee stops (as `arena serve` does: no goodbye to a remote bot) and refuses
    node-counter's hellos as shutting_down; it waits that out, and a new referee on the
    same address takes it back."""
    rc, err, refused, admitted = asyncio.run(restart([node, str(NODE_COUNTER / "bot.js")]))
    assert refused and admitted, err
    assert rc == 0, err
    assert "; reconnecting for up to 10 s" in err
    assert "reconnected to the referee after" in err and "error:" not in err, err


def test_a_silent_connection_is_noticed_and_the_bot_reconnects(node):
    """Its connection goes silent, no end closed (a NAT that forgot it): node-counter's
    pings go unanswered, it drops the connection and comes back with its resume key (it
    waited forever)."""
    rc, err, took = asyncio.run(stalled(command=[node, str(NODE_COUNTER / "bot.js")]))
    assert took is not None and took < NOTICED_WITHIN, err
    assert "warning: connection to the referee broke: UNAVAILABLE" in err, err
    assert "reconnected to the referee after" in err
    assert rc == 0, err


C = game_pb2.Card
# a window title, colours, a line erased and a fake one, a right-to-left override
SPOOF = "\x1b]0;PWNED\x07\x1b[31mRED\x1b[0m\u202e\x1b[2K\r\nFAKE: all good"
SPOOF_SHOWN = r"\x1b]0;PWNED\x07\x1b[31mRED\x1b[0m\u202e\x1b[2K\x0d\x0aFAKE: all good"


def hostile_run(node, tmp_path, script, *args: str, timeout: float = 20) -> tuple[int, str]:
    """node-counter against ``script`` on a scripted referee: its exit code and stderr
    (shown with ascii() when a test fails: the referee's escapes must not reach pytest's
    terminal either)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONO99_")}
    rc, err, _ = scripted_run([node, NODE_COUNTER / "bot.js"], script, tmp_path, *args,
                              timeout=timeout, env=env)
    return rc, err


@pytest.mark.parametrize("batches", [(40000, 40000, 20001), (150000,)], ids=["100001", "150000"])
def test_a_match_past_100000_events_breaks_the_session_as_a_dropped_connection(node, tmp_path, batches):
    """The events are kept for the match (the bot may read them all): past 100000 (several
    messages: gRPC's 4 MB limit) the session breaks, and the bot reconnects; 150000 in one
    message is no RangeError (push(...events) overflowed the stack)."""
    sessions = []

    async def script(stream: Stream):
        await welcome(stream)
        sessions.append(stream)
        if len(sessions) == 1:
            await stream.send(match_start=match_start())
            for count in batches:
                await stream.send(events=referee_pb2.Events(match_id="m1", events=plays(count)))
        else:
            await stream.send(goodbye=referee_pb2.Goodbye(reason="scripted"))

    rc, err = hostile_run(node, tmp_path, script, "--reconnect-timeout", "5")
    assert rc == 0, ascii(err[-2000:])
    assert ("warning: the referee sent more than 100000 events for match m1; reconnecting for up "
            "to 5 s") in err
    assert len(sessions) == 2


def test_rejections_of_no_open_turn_print_nothing(node, tmp_path):
    """Before any turn, and of a turn other than the open one: 1 MiB reasons in a loop
    wrote gigabytes of stderr."""
    reason = "x" * (1 << 20)

    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(match_start=match_start())
        await reject(stream, 1, reason, 20)
        await stream.send(turn=turn(2, [C.CARD_3, C.CARD_9], [C.CARD_3, C.CARD_9]))
        await stream.read()
        await reject(stream, 1, reason, 20)
        await stream.send(goodbye=referee_pb2.Goodbye(reason=SPOOF))

    rc, err = hostile_run(node, tmp_path, script)
    assert rc == 0, ascii(err[-2000:])
    assert "rejected" not in err and len(err) < 2000, ascii(err[:2000])


def test_the_referees_strings_are_printed_escaped_and_cut(node, tmp_path):
    """A rejection of the open turn is printed: its escape sequences escaped, its 1 MiB cut
    after 300 characters."""
    reason = SPOOF + "x" * (1 << 20)

    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(match_start=match_start())
        await stream.send(turn=turn(5, [C.CARD_3, C.CARD_9], [C.CARD_3, C.CARD_9]))
        await stream.read()
        await reject(stream, 5, reason)
        await stream.read()   # the retry
        await stream.send(goodbye=referee_pb2.Goodbye(reason=SPOOF))

    rc, err = hostile_run(node, tmp_path, script)
    assert rc == 0, ascii(err[-2000:])
    shown = SPOOF_SHOWN + "x" * (300 - len(SPOOF))
    assert (f"action rejected (illegal_play): {shown}... ({len(reason) - 300} more characters)\n"
            in err), ascii(err[:2000])
    assert "\x1b" not in err and "\u202e" not in err and len(err) < 2000


@pytest.mark.parametrize("end", ["refusal", "status"])
def test_a_refusal_and_a_broken_streams_details_are_printed_escaped(node, tmp_path, end):
    async def script(stream: Stream):
        if end == "refusal":
            await stream.read()
            await stream.send(refusal=referee_pb2.Refusal(
                code=referee_pb2.REFUSAL_CODE_BAD_TOKEN, reason=SPOOF))
        else:
            await welcome(stream)
            stream.fail(grpc.StatusCode.INTERNAL, SPOOF)

    rc, err = hostile_run(node, tmp_path, script, "--reconnect-timeout", "0")
    line = ("error: referee refused the connection (bad_token): " if end == "refusal"
            else "error: connection to the referee broke: INTERNAL: ")
    assert (rc, line + SPOOF_SHOWN + "\n") == (3 if end == "refusal" else 5, err), ascii(err)
    assert "\x1b" not in err


def test_turns_no_bot_can_play_are_not_answered_and_the_bot_plays_on(node, tmp_path):
    """An empty legal list, a seat outside the seats: the bot's choose (which reads
    legal[0] and its own seat) is not called and nothing is sent; the next turn is played,
    and the goodbye ends the bot as usual."""
    answers = []

    async def script(stream: Stream):
        await welcome(stream)
        await stream.send(match_start=match_start())
        await stream.send(turn=turn(7, [C.CARD_3], []))
        outside = turn(8, [C.CARD_3], [C.CARD_3])
        outside.view.seat = 2
        await stream.send(turn=outside)
        await stream.send(turn=turn(9, [C.CARD_3], [C.CARD_3]))
        answers.append((await stream.read()).action)
        await stream.send(goodbye=referee_pb2.Goodbye(reason="scripted"))

    rc, err = hostile_run(node, tmp_path, script)
    assert rc == 0, ascii(err[-2000:])
    assert [(a.turn_id, a.card) for a in answers] == [(9, C.CARD_3)]
    assert "the referee's turn 7 of match m1 offers no legal card; not answered" in err
    assert "the referee's turn 8 of match m1 puts the bot at seat 2 of 2; not answered" in err
