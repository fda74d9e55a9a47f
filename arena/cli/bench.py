"""``arena bench WHAT``: the benchmarks that print the project's performance figures."""

from __future__ import annotations

import argparse

from rich.console import Console


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run a benchmark and print its figures",
        description="Benchmarks. Each prints a table and ends with one summary line.",
    )
    what = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    engine = what.add_parser(
        "engine",
        help="rules engine: decisions/s of random legal games, views included",
        description="Play random legal games in-process for each ruleset at 2, 4 and 8 seats, "
                    "building the acting seat's view at every decision, and print decisions/s "
                    "and games/s. Ends with 'engine: N decisions/s (modern, 4 seats)'.",
    )
    engine.add_argument("--seconds", type=float, default=2.0,
                        help="time per ruleset and seat count (default: 2)")
    engine.set_defaults(run=run_engine)


def run_engine(args: argparse.Namespace) -> int:
    from arena.bench import engine

    engine.run(args.seconds, Console())
    return 0
