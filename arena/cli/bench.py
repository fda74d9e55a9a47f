"""``arena bench WHAT``: the benchmarks that print the project's performance figures."""

from __future__ import annotations

import argparse
import math

from arena.cli.output import console
from arena.rules.rulesets import MAX_SEATS


def seconds(text: str) -> float:
    """A benchmark's time: a positive, finite number of seconds (nan ran for ever)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"{text} must be a positive, finite number of seconds")
    return value


def seconds_or_zero(text: str) -> float:
    """As :func:`seconds`, or 0."""
    try:
        if float(text) == 0:
            return 0.0
    except ValueError:
        pass                    # seconds() says why
    return seconds(text)


def at_least_one(text: str) -> int:
    """A count a benchmark divides by or takes a median over: a whole number, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def table_size(text: str) -> int:
    """A benchmark's seats per table: a whole number from 2 to MAX_SEATS."""
    value = at_least_one(text)
    if not 2 <= value <= MAX_SEATS:
        raise argparse.ArgumentTypeError(f"{text} is not a table size: 2 to {MAX_SEATS} seats")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena bench WHAT`` to ``sub``: one subcommand per benchmark, each with its options."""
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
    engine.add_argument("--seconds", type=seconds, default=2.0,
                        help="time per ruleset and seat count (default: 2)")
    engine.add_argument("--rlcard", action="store_true",
                        help="also measure RLCard's bare UNO engine (pip install rlcard), "
                             "alternated with ours at modern 4 seats, and end with "
                             "'engine: N decisions/s (modern, 4 seats) = R x RLCard UNO "
                             "(M decisions/s)'")
    engine.set_defaults(run=run_engine)
    referee = what.add_parser(
        "referee",
        help="referee: per-turn round trip and throughput against bare gRPC",
        description="Measure, in one run and on the same transport, a bare gRPC bidi-stream "
                    "ping-pong with a TurnRequest-sized message (the floor) and full matches "
                    "between two random bots over the referee, with 1 and 8 streams/matches in "
                    "flight. Ends with 'referee: turn p50 X us = R x bare p50 Y us; 8 in flight: "
                    "P% of bare throughput'.",
    )
    referee.add_argument("--seconds", type=seconds, default=5.0,
                         help="measuring time of each of the four runs (default: 5)")
    referee.add_argument("--rounds", type=at_least_one, default=4,
                         help="slices each run is cut into, interleaved with the others (default: 4)")
    referee.add_argument("--listen", choices=["unix", "tcp"], default="unix",
                         help="transport: unix socket (default) or loopback TCP")
    referee.set_defaults(run=run_referee)
    tournament = what.add_parser(
        "tournament",
        help="tournament: matches/s at concurrency 1 and 2, storage cost, memory",
        description="A 2-seat round-robin of 4 random bots through the real tournament code, "
                    "at concurrency 1 then 2. Ends with 'tournament: concurrency 2 = R x "
                    "concurrency 1; storage S% of match time'.",
    )
    tournament.add_argument("--games", type=at_least_one, default=40,
                            help="deals per table (default: 40, i.e. 480 matches per run)")
    tournament.add_argument("--repeats", type=at_least_one, default=3,
                            help="runs at each concurrency, alternated (default: 3)")
    tournament.set_defaults(run=run_tournament)
    scale = what.add_parser(
        "scale",
        help="scale: the same tournament on multiprocess and on Ray, same cores; a model vs nodes",
        description="The tournament benchmark's tournament (4 random bots, 2 seats, duplicate "
                    "deals, a fixed seed) on the multiprocess executor and on Ray, both with a "
                    "match in flight per core of this machine, alternated over the repeats "
                    "(medians). A local Ray cluster of this machine's cores is started once, "
                    "before any timing (or the one at --ray-address is joined); the first "
                    "tenth of each run's matches is not timed. Prints matches/s, ms and "
                    "storage ms per match, the driver's CPU and the other processes' CPU per "
                    "match, Ray's overhead per match (round trip minus the actor's time: p50, "
                    "p99, mean) and matches per node, and the throughput projected for 1 to 16 "
                    "nodes of these cores (docs/scale.md explains the model). Ends with "
                    "'scale: ray = R x multiprocess on the same cores; overhead O ms per "
                    "match'.",
    )
    scale.add_argument("--games", type=at_least_one, default=20,
                       help="deals per table (default: 20, i.e. 240 matches per run)")
    scale.add_argument("--repeats", type=at_least_one, default=3,
                       help="runs on each executor, alternated (default: 3)")
    scale.add_argument("--ray-address", metavar="ADDR", default=None,
                       help="join the Ray cluster at ADDR (HOST:PORT of 'ray start --head', or "
                            "auto) instead of starting a local one; its actors are then placed "
                            "over its nodes, so the two executors no longer share cores")
    scale.set_defaults(run=run_scale)
    ratings = what.add_parser(
        "ratings",
        help="ratings: do standings find a known order, and how fast, with and without duplicates",
        description="Round-robins of bots of known strength order (counter with 0-100% random "
                    "moves) under plain, duplicate, and duplicate + common bot seeds designs; "
                    "prints Kendall's tau and the matches needed to separate adjacent bots at "
                    "95% LOS. Ends with 'ratings: tau T_dup duplicate, T_plain plain; matches to "
                    "separate M_dup duplicate, M_plain plain'. With --coverage instead: how often "
                    "the 95% intervals hold the true rating, on placings simulated from the model "
                    "(2 and 4 seats, 10 to 300 matches per bot, by distance from the field's "
                    "mean), and the time of one fit of 20 bots x 5,000 matches. Ends with "
                    "'ratings coverage: C% overall, K/N cells in 93%-97%, farthest F% (...); fit "
                    "of 20 bots x 5,000 matches T s'.",
    )
    ratings.add_argument("--seeds", type=at_least_one, default=4, help="master seeds per design (default: 4)")
    ratings.add_argument("--table-size", type=table_size, default=2, help="seats per table (default: 2)")
    ratings.add_argument("--budget", type=at_least_one, default=8000,
                         help="matches per run (default: 8000)")
    ratings.add_argument("--coverage", action="store_true",
                         help="measure the coverage of the 95%% intervals by simulation instead")
    ratings.add_argument("--fields", type=at_least_one, default=1000,
                         help="with --coverage: simulated fields per row (default: 1000, a few "
                              "minutes)")
    ratings.set_defaults(run=run_ratings)
    watch = what.add_parser(
        "watch",
        help="watch: what 20 spectators cost a tournament, and how late they see it",
        description="The tournament benchmark's tournament at concurrency 2, alternately with no "
                    "spectator service and with 20 spectators (gRPC clients in another process: "
                    "10 on TV, 10 following live matches). Ends with 'watch: 20 spectators keep "
                    "P% of unwatched throughput; event latency p50 A ms, p99 B ms'.",
    )
    watch.add_argument("--games", type=at_least_one, default=60,
                       help="deals per table (default: 60, i.e. 720 matches per run)")
    watch.add_argument("--repeats", type=at_least_one, default=3,
                       help="runs of each kind, alternated (default: 3)")
    watch.set_defaults(run=run_watch)
    load = what.add_parser(
        "load",
        help="load: many matches through the real tournament code; lost, duplicated, memory",
        description="Cheap bots (half Python SDK, half raw protocol answering at once) at 4-seat "
                    "tables, as many matches in flight as asked, through the real tournament "
                    "code, its executor and a SQLite file. Reports matches/s, turn latency "
                    "p50/p99/max, results lost and duplicated, and every referee and worker "
                    "process's memory and open files after each fifth. Ends with 'load: N "
                    "matches, L lost, D duplicated; memory +G% from first to last fifth; turn "
                    "p99 X ms'.",
    )
    load.add_argument("--matches", type=at_least_one, default=20_000,
                      help="at least this many matches (default: 20000; rounded up to whole "
                           "rounds of the tables)")
    load.add_argument("--bots", type=int, default=8, help="bots (default: 8, i.e. 70 tables)")
    load.add_argument("--concurrency", type=int, default=None,
                      help="matches in flight (default: 4 per core)")
    load.set_defaults(run=run_load)
    fuzz = what.add_parser(
        "fuzz",
        help="fuzz: the Referee, Organizer and Spectator services under garbage, for a time",
        description="Start arena serve with two healthy bots playing tournament after "
                    "tournament, and run the fuzzer's state machines (arena/fuzz: valid, "
                    "out-of-order, repeated, foreign, extreme and undecodable messages, each "
                    "answer checked against the protocol) against it until the time is up. "
                    "Needs the test tools (pip install -e '.[dev]'). Ends with 'fuzz: S s, N "
                    "messages, E server errors, W wrong answers, M sessions disturbed; server "
                    "RSS +G%'; exits 1 if anything was found.",
    )
    fuzz.add_argument("--seconds", type=seconds_or_zero, default=60.0,
                      help="how long to fuzz (default: 60; a round is never cut short, and 0 "
                           "runs one)")
    fuzz.add_argument("--examples", type=at_least_one, default=20,
                      help="examples of each state machine per round (default: 20)")
    fuzz.add_argument("--no-healthy", action="store_true",
                      help="no healthy bots beside the fuzz")
    fuzz.set_defaults(run=run_fuzz)


def run_engine(args: argparse.Namespace) -> int:
    """Random legal games in-process by ruleset and seat count (and RLCard's UNO with
    --rlcard, refused before the table when it is not installed)."""
    from arena.bench import engine

    if args.rlcard and not engine.rlcard_available():
        from arena.rules.errors import ConfigError

        raise ConfigError(engine.RLCARD_MISSING)   # before the table, not after it
    engine.run(args.seconds, console(), args.rlcard)
    return 0


def run_referee(args: argparse.Namespace) -> int:
    """The referee's per-turn round trip and throughput beside a bare gRPC stream."""
    from arena.bench import referee

    referee.run(args.seconds, args.listen, console(), args.rounds)
    return 0


def run_tournament(args: argparse.Namespace) -> int:
    """Matches/s of a small round-robin through the real tournament code."""
    from arena.bench import tournament

    tournament.run(console(), args.games, args.repeats)
    return 0


def run_scale(args: argparse.Namespace) -> int:
    """One tournament on the multiprocess and Ray executors; 1 if a run stored fewer
    matches than it planned."""
    from arena.bench import scale

    figures = scale.run(console(), args.games, args.repeats, args.ray_address)
    return 0 if all(r.stored == r.planned for r in figures.runs) else 1


def run_ratings(args: argparse.Namespace) -> int:
    """Whether and how fast standings find a known strength order (--coverage: how
    often the 95% intervals hold the truth)."""
    if args.coverage:
        from arena.bench import rating_coverage

        rating_coverage.run(console(), args.fields)
        return 0
    from arena.bench import ratings

    ratings.run(console(), args.seeds, args.table_size, args.budget)
    return 0


def run_watch(args: argparse.Namespace) -> int:
    """What 20 spectators cost a tournament, and how late they see it."""
    from arena.bench import watch

    watch.run(console(), args.games, args.repeats)
    return 0


def run_load(args: argparse.Namespace) -> int:
    """Many cheap matches through the tournament code; 1 if one was lost or stored twice."""
    from arena.bench import load
    from arena.rules.errors import ConfigError

    if args.matches < 1 or args.bots < 4 or (args.concurrency is not None and args.concurrency < 1):
        raise ConfigError("--matches and --concurrency must be at least 1, --bots at least 4")
    figures = load.run(console(), args.matches, args.bots, args.concurrency)
    return 0 if figures["lost"] == figures["duplicated"] == 0 else 1


def run_fuzz(args: argparse.Namespace) -> int:
    """Garbage at a running server's services for a time; 1 if anything was found."""
    from arena.bench import fuzz

    report = fuzz.run(console(), args.seconds, args.examples, healthy=not args.no_healthy)
    return 0 if report.clean else 1
