"""``arena standings``, ``arena matches``, ``arena show``: reading the database."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections import Counter
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arena.cli import output
from arena.cli.database import DEFAULT_DB, add_db_option, open_existing
from arena.cli.organizer import add_server_options, client
from arena.rules.errors import ConfigError
from arena.rules.events import describe_event, describe_ranking, event_from_dict
from arena.store.base import NotFoundError
from arena.server.wire import standings_dict
from arena.tournament.standings import (ABSENT_S, ESTABLISHED, BotLine, Standings, Stored,
                                        faults_text, interval_text, ranked, standings_of)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena standings``, ``arena matches`` and ``arena show`` to ``sub``: what a
    database (or a server) holds."""
    s = sub.add_parser("standings", help="print a tournament's standings from the database",
                       description="Elo standings of a stored tournament (the latest if no "
                                   "name): a batch Bradley-Terry fit with 95% intervals and "
                                   "the likelihood-of-superiority matrix.")
    s.add_argument("name", nargs="?", help="tournament name (default: the latest)")
    add_db_option(s, "the database of the tournament")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    add_server_options(s, required=False)
    s.set_defaults(run=run_standings)

    m = sub.add_parser("matches", help="list a tournament's matches from the database",
                       description="The matches of a stored tournament (the latest if no "
                                   "name), one line each: its number, bots, result and "
                                   "verdicts; 'arena show N' shows one, 'arena replay N' "
                                   "replays it.")
    m.add_argument("name", nargs="?", help="tournament name (default: the latest)")
    add_db_option(m, "the database of the tournament")
    m.add_argument("--json", action="store_true", help="machine-readable output")
    m.add_argument("--limit", type=int, default=None, metavar="N",
                   help="only the last N matches (at least 1)")
    m.set_defaults(run=run_matches)

    w = sub.add_parser("show", help="show one stored match and its event log",
                       description="One stored match: its bots, seed, rules and result, then "
                                   "every event of its log, one line each (--json: the record "
                                   "and its events).")
    w.add_argument("match", metavar="MATCH",
                   help="the match's number (see 'arena matches') or the match id spectators "
                        "see (16 hex digits, as arena watch prints it)")
    add_db_option(w, "the database of the match")
    w.add_argument("--json", action="store_true", help="machine-readable output")
    w.set_defaults(run=run_show)


#: The largest field whose likelihood-of-superiority table is printed (one column a bot).
LOS_TABLE_BOTS = 12


#: Printed under a ladder's standings: its order is not the Elo's.
LADDER_ORDER = (f"the ladder ranks by the low end of each 95% interval (what a bot has shown), "
                f"bots of fewer than {ESTABLISHED} matches (provisional) below, then bots "
                f"with no match in the {ABSENT_S // 86400} days before the ladder's last "
                "(absent); removed bots are listed last, not ranked")


def print_standings(console: Console, board: Standings, title: str,
                    ladder: bool = False) -> None:
    """The standings table (a ``ladder``'s with its marks and how it ranks), then (for a
    rated field of at most LOS_TABLE_BOTS bots) the likelihood of superiority of every bot
    over every other."""
    # the titles are lines of their own: a table's title wraps at the table's width
    console.print(title, soft_wrap=True)
    table = Table()
    columns = ("rank", "bot", "Elo", "95%", "matches", "wins", "avg place", "faults")
    for col in (*columns, "mark") if ladder else columns:
        table.add_column(col, justify="left" if col in ("bot", "faults", "mark") else "right")
    for rank, line in zip(board.ranks(), board.lines):
        table.add_row(str(rank) if rank else "-", escape(line.bot), f"{line.elo:.0f}",
                      interval_text(line.elo, line.low, line.high, line.interval)
                      if board.rated and line.matches else "-", str(line.matches),
                      str(line.wins), f"{line.average_place:.2f}" if line.matches else "-",
                      faults_text(line.faults), *([line.mark] if ladder else []))
    console.print(table)
    if ladder:
        console.print(LADDER_ORDER, soft_wrap=True)
    if not board.rated or len(board.lines) > LOS_TABLE_BOTS:
        return
    # the columns are headed by rank: a name cut to fit a column ("greedy-ran") could be
    # two bots', and a whole one made the table as wide as the longest name times n
    console.print("likelihood of superiority (row stronger than column), %", soft_wrap=True)
    los = Table()
    los.add_column("rank", justify="right")
    los.add_column("bot")
    # the ranked bots only: a bot removed from a ladder has no rank to head a column
    ranked = [i for i, rank in enumerate(board.ranks()) if rank]
    for rank in range(1, len(ranked) + 1):
        los.add_column(str(rank), justify="right")
    matrix = board.los_matrix()
    for rank, i in enumerate(ranked, 1):
        los.add_row(str(rank), escape(board.lines[i].bot),
                    *("" if j == i else f"{100 * matrix[i][j]:.0f}" for j in ranked))
    console.print(los)


def remote_standings(msg) -> Standings:
    """A server's StandingsResponse as local Standings, for printing."""
    lines = [BotLine(s.bot, s.elo, s.ci95, s.matches, s.wins,
                     round(s.average_place * s.matches), Counter(dict(s.faults)),
                     s.elo_low, s.elo_high, s.mark)
             for s in msg.standings]
    return Standings(lines, None, {row.bot: dict(row.los) for row in msg.los} if lines else None)


# ------------------------------------------------------------------------ reading the store

def _open(args):
    return open_existing(args.db, f"give --db PATH|URL; tournaments write ./{DEFAULT_DB} by default")


def run_standings(args: argparse.Namespace) -> int:
    """A tournament's standings (or a server's ladder) as a table and the likelihood
    of superiority, or as JSON."""
    if args.server:   # a server's tournament, or its ladder ("arena standings ladder")
        with client(args) as c:
            # the likelihoods of superiority are n^2: only what will be printed
            answer = c.standings(args.name, 0 if args.json else LOS_TABLE_BOTS)
        if args.json:
            print(json.dumps(standings_dict(answer), indent=2))
            return 0
        print_standings(output.console(), remote_standings(answer),
                        f"standings of {escape(answer.tournament)} ({answer.matches} matches)",
                        # arena.server.ladder.NAME, whose module takes 0.2 s to import
                        ladder=answer.tournament == "ladder")
        return 0
    store = _open(args)
    try:
        record = store.tournament(args.name)
        stored = Stored.saved(store, record)      # a ladder's snapshot, if it has one
        stored.read(store, record)                # and a page at a time since
        # a ladder's as the server ranks it (arena.server.boards)
        removed = store.removed_bots() if record.settings.get("ladder") else None
        board = ranked(standings_of(stored.results, record.bots), removed)
        ladder = removed is not None
    finally:
        store.close()
    if args.json:
        print(json.dumps({"tournament": record.name, **board.to_dict()}, indent=2))
        return 0
    console = output.console()
    print_standings(console, board, f"standings of {escape(record.name)} "
                                    f"({sum(l.matches for l in board.lines) // max(1, record.settings['table_size'])} matches)",
                    ladder=ladder)
    return 0


def run_matches(args: argparse.Namespace) -> int:
    """A stored tournament's matches, one row each (the last --limit), or as JSON."""
    if args.limit is not None and args.limit < 1:   # 0 and -1 printed an empty table
        raise ConfigError(f"--limit must be at least 1, not {args.limit}")
    store = _open(args)
    try:
        record = store.tournament(args.name)
        # the last --limit only, else a page at a time: a ladder's millions of records
        # (4 KB each) were read whole, even for its last 20
        matches = (store.last_matches(record, args.limit) if args.limit is not None
                   else store.iter_matches(record))
        if args.json:
            _print_json_list(m.to_dict() for m in matches)
            return 0
        table = Table(title=f"matches of {escape(record.name)}", title_justify="left")
        for col in ("id", "key", "seats", "ranking", "end", "turns", "faults", "time"):
            table.add_column(col, justify="right" if col in ("id", "turns", "time") else "left")
        for m in matches:
            ranking = describe_ranking(m.ranking, m.bots) or m.status
            faults = ", ".join(f"{m.bots[v['seat']]} {v['kind']}" for v in m.verdicts)
            table.add_row(str(m.id), m.key, " ".join(m.bots), escape(ranking), m.termination,
                          str(m.turns), escape(faults), f"{m.duration_s:.2f} s")
    finally:
        store.close()
    output.console().print(table)
    return 0


def _print_json_list(items: Iterable[Any]) -> None:
    """``json.dumps(list(items), indent=2)``, printed an item at a time."""
    first = True
    for item in items:
        text = textwrap.indent(json.dumps(item, indent=2), "  ")
        sys.stdout.write(("[\n" if first else ",\n") + text)
        first = False
    sys.stdout.write("[]\n" if first else "\n]\n")


def run_show(args: argparse.Namespace) -> int:
    """One stored match's record and every event of its log, or both as JSON."""
    store = _open(args)
    try:
        match = store.find_match(args.match)
        if match is None:
            raise NotFoundError(f"no match {args.match!r} in {store.describe()} (give "
                                "the number arena matches shows, or the match id spectators see)")
        events = store.events(match.id)
    finally:
        store.close()
    if args.json:
        print(json.dumps({**match.to_dict(), "events": events}, indent=2))
        return 0
    console = output.console()
    console.print(f"match {match.id} ({match.key}) of {escape(match.tournament)}: {match.ruleset}, "
                  f"seed {match.seed}, seats: " + escape(", ".join(f"{i} {b}" for i, b in enumerate(match.bots))),
                  soft_wrap=True)
    for e in events:
        console.print("  " + escape(describe_event(event_from_dict(e), match.bots)), soft_wrap=True)
    ranking = describe_ranking(match.ranking, match.bots)
    console.print(f"result: {escape(ranking)} ({match.termination}, {match.turns} turns, "
                  f"{match.duration_s:.3f} s)", soft_wrap=True)
    for v in match.verdicts:
        console.print(f"verdict: {escape(match.bots[v['seat']])} {v['kind']}: {escape(v['detail'])}",
                      soft_wrap=True)
    return 0
