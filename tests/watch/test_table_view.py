"""The terminal's picture of a match and of a tournament, drawn to a recording console:
what it shows is checked against the game it was made from (replayed by the engine)."""

from __future__ import annotations

import io
import random
import re

import pytest
from ono99.v1 import referee_pb2, spectator_pb2 as pb
from rich.console import Console

from arena.cli.table_view import match_view, tournament_view
from arena.referee.results import TimeControl, Verdict
from arena.referee.wire import cards_to_wire
from arena.rules.cards import TOKENS
from arena.rules.events import FORFEIT, PLAY
from arena.rules.game import Game
from arena.rules.rulesets import make_config
from arena.tournament.standings import Played, crosstable, standings_of
from arena.watch import records, wire

NAMES = ["alice", "bob", "carol", "dave"]


def played_game(ruleset: str, seed: int, forfeit_at: int | None = None) -> Game:
    """A whole game of random legal plays (seat 3 forfeits at decision ``forfeit_at``)."""
    rng = random.Random(seed)
    game = Game.from_config(make_config(ruleset, None, len(NAMES)), seed)
    n = 0
    while not game.finished:
        n += 1
        if n == forfeit_at and game.in_game[3]:
            game.forfeit(3)
            continue
        game.play(game.to_act, rng.choice(game.view(game.to_act).legal))
    return game


def record_of(game: Game, seed: int, ruleset: str, verdicts=()) -> pb.MatchSnapshot:
    return records.replay_snapshot("m1", NAMES, make_config(ruleset, None, len(NAMES)), seed,
                                   game.events, TimeControl(1000, 10_000), "cup",
                                   verdicts=verdicts, duration_s=1.25)


def draw(renderable, width: int = 100) -> str:
    console = Console(record=True, width=width, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def replayed_to(ruleset: str, seed: int, position: int) -> Game:
    """The game after its first ``position`` decisions."""
    whole = played_game(ruleset, seed)
    game = Game.from_config(make_config(ruleset, None, len(NAMES)), seed)
    decisions = [e for e in whole.events if e[0] == PLAY]
    for e in decisions[:position]:
        game.play(e[1], e[2])
    return game


@pytest.mark.parametrize("ruleset", ["modern", "classic"])
def test_the_table_shows_names_hand_sizes_the_total_and_whose_turn(ruleset):
    seed = 4242
    record = record_of(played_game(ruleset, seed), seed, ruleset)
    for position in (0, 5, 17):
        game = replayed_to(ruleset, seed, position)
        text = draw(match_view(record, position))
        assert re.search(rf"total [█░]+ +{game.total} / {game.config.limit}\b", text), text
        direction = "→ clockwise" if game.direction == 1 else "← counter-clockwise"
        assert direction in text
        for seat, name in enumerate(NAMES):
            marker = "▶" if seat == game.to_act else " "
            size = len(game.hands[seat]) if game.hands[seat] is not None else "-"
            tokens = rf" +{game.tokens[seat]}" if ruleset == "classic" else ""
            assert re.search(rf"^ ?{marker} +{seat} +{name} +{size}{tokens}\b", text, re.M), text
        assert ("tokens" in text) == (ruleset == "classic")


def test_a_seat_owing_two_cards_is_said_so():
    seed = 77
    game = played_game("modern", seed)
    record = record_of(game, seed, "modern")
    owing = [i for i, f in enumerate(record.frames) if f.state.owed == 2]
    assert owing, "no owed pair in this game: choose another seed"
    frame = record.frames[owing[0]]
    text = draw(match_view(record, owing[0]))
    assert f"{NAMES[frame.state.to_act]} owes 2 cards" in text
    assert "owes" not in draw(match_view(record, 0))


def test_live_clocks_run_from_the_bank_once_the_move_time_is_up():
    seed = 5
    record = record_of(played_game("modern", seed), seed, "modern")
    del record.frames[8:]
    record.ClearField("over")
    frame = record.frames[-1]
    frame.bank_ms.extend([10_000, 9_000, 8_000, 7_000])
    thinking = frame.state.to_act
    text = draw(match_view(record, thinking_ms=2500))
    row = next(line for line in text.splitlines() if "▶" in line)
    assert NAMES[thinking] in row and "thinking 2.5 s" in row
    left = [10_000, 9_000, 8_000, 7_000][thinking] - 1500
    assert f"{left / 1000:.1f} s" in row
    others = [line for line in text.splitlines() if re.match(r"^ +\d +\w+ +\d+ ", line)]
    assert len(others) == 3 and not any("thinking" in line for line in others)


def test_the_end_shows_the_result_every_hand_and_the_verdicts():
    seed = 31
    game = played_game("modern", seed, forfeit_at=6)
    verdicts = [Verdict(3, "timeout", "no valid answer within 1000 ms + 0 ms of bank")]
    record = record_of(game, seed, "modern", verdicts)
    text = draw(match_view(record))
    assert "result: 1. " in text and "[last_standing" in text
    assert "verdict dave: timeout (no valid answer within 1000 ms + 0 ms of bank)" in text
    for seat in range(4):
        hand = game.hands[seat]
        if hand is not None:
            assert "ended with " + " ".join(TOKENS[c] for c in hand) in text
    forfeit = next(i for i, f in enumerate(record.frames)
                   if any(e[0] == FORFEIT for e in wire.frame_events(f)))
    assert "verdict dave" not in draw(match_view(record, forfeit - 1))
    assert "verdict dave" in draw(match_view(record, forfeit))


def test_the_organiser_view_shows_every_hand():
    seed = 12
    record = record_of(played_game("modern", seed), seed, "modern")
    del record.frames[3:]
    record.ClearField("over")
    hands = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 0]]
    record.frames[-1].hands.extend(referee_pb2.Hand(seat=s, cards=cards_to_wire(h))
                                   for s, h in enumerate(hands))
    text = draw(match_view(record))
    for seat, hand in enumerate(hands):
        row = next(line for line in text.splitlines() if re.match(rf"^ ?.? +{seat} ", line))
        assert row.rstrip().endswith("hand " + " ".join(TOKENS[c] for c in hand)), row


@pytest.mark.parametrize("width", [50, 80, 160])
def test_any_width_is_drawn_within_it(width):
    seed = 9
    record = record_of(played_game("classic", seed), seed, "classic")
    text = draw(match_view(record, 10, status="frame 10/99  1x  playing"), width)
    assert all(len(line) <= width for line in text.splitlines())
    assert "total" in text


def test_the_tournament_shows_progress_standings_and_the_crosstable():
    played = [Played(f"k{i}", ("a", "b"), (1, 2) if i % 3 else (2, 1), f"s{i}") for i in range(6)]
    played += [Played("k9", ("b", "c"), (1, 2), "s9")]
    bots = ["a", "b", "c"]
    board = standings_of(played, bots)
    snapshot = pb.TournamentSnapshot(
        name="cup", bots=bots, total=12, done=len(played),
        standings=wire.standings(board, crosstable(played, bots), len(played)))
    live = [pb.MatchSummary(match_id="abc123", names=["a", "c"], status=pb.MATCH_STATUS_LIVE,
                            turns=17, interest=0.5)]
    text = draw(tournament_view(snapshot, live, []), width=120)
    assert re.search(r"tournament cup +[█░]+ 7/12 matches", text)
    for line in board.lines:
        # the 95% interval as distances from the Elo: not symmetric for a lopsided record
        interval = f"-{line.elo - line.low:.0f} +{line.high - line.elo:.0f}"
        assert re.search(rf"│ +{line.bot} +│ +{line.elo:.0f} │ +{re.escape(interval)} │ +"
                         rf"{line.matches} │", text), text
    c_row = re.search(r"│ +3 │ c +│ +\d+ │ +-(\d+) \+(\d+) │", text)
    minus, plus = map(int, c_row.groups())
    assert minus > plus   # c lost its only match: bounded above, hardly below
    a_row = next(row for row in text.splitlines() if row.startswith("│ a "))
    assert "4-2-0" in a_row       # a against b: 4 ahead, 2 behind
    assert "abc123" in text and "a vs c" in text
