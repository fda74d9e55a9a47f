"""``arena tournament``: run (or resume) a round-robin tournament, live, into the database.

This module holds the command's arguments and hands them to the run they are for: one
played here (:mod:`arena.cli.tournament_here`) or on a server
(:mod:`arena.cli.tournament_server`); both show it with :mod:`arena.cli.live_view`."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.cli.database import add_db_option
from arena.cli.match import add_match_options
from arena.cli.organizer import add_server_options
from arena.cli.spectators import add_watch_option, add_web_option
from arena.cli.tournament_here import run_here
from arena.cli.tournament_server import run_on_server
from arena.tournament.executors import EXECUTORS
from arena.tournament.seats import RETIRE_AFTER
from arena.tournament.tournament import default_concurrency


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena tournament`` to ``sub``: the options of a run here and of one on a server."""
    p = sub.add_parser(
        "tournament",
        help="run a round-robin tournament, live, with standings saved to its database",
        description="Round-robin for any table size: every combination of K bots is a table and "
                    "every table plays the same number of deals, each table its own. With "
                    "duplicate deals (the default) each deal is played once per rotation of the "
                    "seats, so every bot holds every seat's cards and luck cancels; each "
                    "rotation is a phase, played by fresh bot processes (each reused for many "
                    "matches within it). Results go to the database (a SQLite file, or "
                    "PostgreSQL by URL) as each match finishes, so an interrupted tournament "
                    "resumes with --resume NAME.",
    )
    p.add_argument("bots", nargs="*", metavar="BOT_DIR", help="bot folders (bot.toml), 2 or more")
    p.add_argument("--table-size", type=int, default=2, metavar="K",
                   help="seats per table, 2-8 (default: 2)")
    p.add_argument("--games", type=int, default=10, metavar="N",
                   help="deals per table (default: 10); with duplicate deals each is played K "
                        "times, once per seat rotation")
    p.add_argument("--no-duplicate", dest="duplicate", action="store_false",
                   help="one match per deal (seats still rotate from deal to deal)")
    p.add_argument("--concurrency", type=int, default=default_concurrency(), metavar="C",
                   help=f"matches at once (default: the number of cores, {default_concurrency()})")
    p.add_argument("--seed", type=int, default=None, metavar="N",
                   help="master seed of every deal and bot seed, for a run that replays exactly "
                        "(default: a fresh secret, stored in the database for --resume). A known "
                        "seed lets a bot compute every deal: use it with trusted bots only")
    p.add_argument("--no-phases", dest="phases", action="store_false",
                   help="let one bot process play every rotation of a deal (fewer process "
                        "starts); a bot that remembers its cards then knows, in the next "
                        "rotation, what another seat holds: trusted bots only")
    add_db_option(p, "where results go")
    p.add_argument("--name", default=None, help="tournament name (default: t-<date>-<time>)")
    p.add_argument("--resume", default=None, metavar="NAME",
                   help="continue the interrupted tournament NAME with its stored settings")
    p.add_argument("--cancel", default=None, metavar="NAME",
                   help="with --server: stop the server's tournament NAME (matches in "
                        "flight are dropped, those played stay; it is not resumed when the "
                        "server restarts, but --resume NAME plays what is left)")
    p.add_argument("--retire-after", type=int, default=RETIRE_AFTER, metavar="N",
                   help="retire a bot after N crashes or failed starts (default: "
                        f"{RETIRE_AFTER}); its remaining matches are forfeits")
    p.add_argument("--executor", default="auto", choices=list(EXECUTORS), metavar="NAME",
                   help="where the matches run: "
                        + "; ".join(f"{e.name}: {e.help}" for e in EXECUTORS.values())
                        + " (default: auto). Results are stored here whichever runs them")
    p.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="with --executor ray: the cluster to join (the address 'ray start "
                        "--head' printed, e.g. 10.0.0.5:6379, or 'auto' for the one running "
                        "on this machine); default: start a local one on this machine's cores")
    p.add_argument("--durable", action="store_true",
                   help="fsync every stored match (survives power loss, slower; PostgreSQL: "
                        "synchronous_commit = on, whatever the server's default)")
    p.add_argument("--logs", type=Path, default=None, metavar="DIR",
                   help="folder for the bots' stderr (default: runs/<name>)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no live view: only the schedule and the final standings")
    add_match_options(p)
    add_watch_option(p)
    add_web_option(p)
    add_server_options(p, required=False)
    p.set_defaults(run=run_tournament, parser=p)


def run_tournament(args: argparse.Namespace) -> int:
    """Play the tournament here, or on the server ``--server`` names."""
    if args.server:
        return run_on_server(args)
    return run_here(args)
