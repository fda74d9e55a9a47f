"""Standings as a server sends them: every bot's 95% interval travels whole (its bounds, not
only a half-width), and ``arena standings --server`` prints and writes what the local
command does."""

from __future__ import annotations

from rich.console import Console

from arena.cli.records import print_standings, remote_standings
from arena.server import wire
from arena.tournament.standings import Played, interval_text, standings_of


def lopsided_board():
    """b wins most of its matches with a; c lost its only match: asymmetric intervals."""
    played = [Played(f"k{i}", ("a", "b"), (2, 1) if i % 4 else (1, 2), f"s{i}") for i in range(8)]
    played.append(Played("k9", ("b", "c"), (1, 2), "s9"))
    return standings_of(played, ["a", "b", "c"])


def printed(board) -> str:
    console = Console(record=True, width=120)
    print_standings(console, board, "standings")
    return console.export_text()


def test_the_interval_bounds_travel_and_print_as_the_local_ones():
    board = lopsided_board()
    msg = wire.standings("cup", board, 9)
    local = board.to_dict()["standings"]
    sent = wire.standings_dict(msg)["standings"]
    assert [set(row) for row in sent] == [set(row) for row in local]
    for got, want in zip(sent, local):
        for key in ("elo", "ci95", "elo_low", "elo_high"):
            assert abs(got[key] - want[key]) < 1e-9, key
    remote = remote_standings(msg)
    for got, line in zip(remote.lines, board.lines):
        assert abs(got.low - round(line.low, 1)) < 1e-9
        assert abs(got.high - round(line.high, 1)) < 1e-9
    assert printed(remote).splitlines()[:6] == printed(board).splitlines()[:6]


def test_the_interval_prints_as_distances_from_the_elo_and_need_not_be_symmetric():
    board = lopsided_board()
    c = next(line for line in board.lines if line.bot == "c")
    assert c.elo - c.low > 2 * (c.high - c.elo)            # bounded above, hardly below
    assert f"-{c.elo - c.low:.0f} +{c.high - c.elo:.0f}" in printed(board)
    # the one number for a display with +-: it holds the whole interval
    assert c.interval == max(c.elo - c.low, c.high - c.elo)
    # a source that sends no bounds (an older server) still shows its half-width
    assert interval_text(1500.0, 0.0, 0.0, 87.4) == "±87"
    assert interval_text(1500.0, 1380.2, 1710.6, 210.6) == "-120 +211"


def test_a_bot_that_has_not_played_is_ranked_below_every_bot_that_has():
    """A bot entered on a ladder that has not played yet (a remote bot not connected) has
    the prior's 1500 only: it stood third of six, above bots rated below 1500 over 378
    matches each."""
    played = [Played(f"k{i}", ("a", "b"), (1, 2) if i % 4 else (2, 1), f"s{i}") for i in range(8)]
    board = standings_of(played, ["a", "b", "idle"])
    b = next(line for line in board.lines if line.bot == "b")
    assert b.elo < 1500 and b.matches == 8
    assert [line.bot for line in board.lines] == ["a", "b", "idle"]


def test_the_likelihood_table_names_each_column_by_rank_so_two_long_names_stay_apart():
    """Its columns were headed by names cut to 10 characters: "greedy-random-20" and
    "greedy-random-40" were both "greedy-ran". Its title (and the standings') was a
    table's, wrapped at the table's width."""
    names = ["greedy-random-20", "greedy-random-40", "counter"]
    played = [Played(f"k{i}{j}", (a, b), (1, 2) if i % 4 else (2, 1), f"s{i}{j}")
              for i in range(12) for j, (a, b) in enumerate([names[:2], names[1:], names[::2]])]
    board = standings_of(played, names)
    text = printed(board)
    assert "\nlikelihood of superiority (row stronger than column), %\n" in text
    los = text[text.index("likelihood of superiority"):].splitlines()
    header = next(line for line in los if "rank" in line)
    assert header.split()[1:] == ["rank", "┃", "bot", "┃", "1", "┃", "2", "┃", "3", "┃"]
    rows = [line for line in los if line.startswith("│")]
    assert [row.split("│")[2].strip() for row in rows] == [line.bot for line in board.lines]
    assert [row.split("│")[1].strip() for row in rows] == ["1", "2", "3"]
    for i, row in enumerate(rows):
        cells = [c.strip() for c in row.split("│")[3:-1]]
        assert cells[i] == "" and all(c.isdigit() for j, c in enumerate(cells) if j != i)
