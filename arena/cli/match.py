"""``arena match BOT_DIR BOT_DIR [...]``: start a referee, launch the bots, play, report."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import secrets
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table

from arena.cli import signals
from arena.cli import output
from arena.cli.match_log import event_lines, result_text, verdict_line
from arena.bots.launcher import BotStartError
from arena.bots.manifest import load_manifest
from arena.cli.prepare import (
    add_sandbox_options, add_setup_options, bot_factory, check_addresses, fresh_out,
    sandbox_config, set_up,
)
from arena.local import LocalArena
from arena.referee.results import (
    MAX_CLOCK_S, FaultPolicy, MatchResult, MatchSpec, TimeControl, Verdict, VerdictKind,
)
from arena.cli.spectators import add_watch_option, add_web_option, spectators
from arena.referee.listeners import Frame, MatchInfo, MatchListener
from arena.rules.errors import ConfigError
from arena.rules.events import event_to_dict
from arena.rules.rulesets import DEFAULT_RULESET, RULESETS, make_config, parse_option_args
from arena.seeds import Seeds


def add_match_options(p: argparse.ArgumentParser) -> None:
    """Options shared by commands that play matches."""
    p.add_argument("--ruleset", default=DEFAULT_RULESET, choices=list(RULESETS),
                   help="rules to play (default: modern)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a ruleset option, e.g. --option max_total=99 (repeatable)")
    p.add_argument("--move-time", type=float, default=1.0, metavar="SECONDS",
                   help="time allowed per move before the bank is used (default: 1)")
    p.add_argument("--bank", type=float, default=10.0, metavar="SECONDS",
                   help="extra time a bot may spend over the whole match (default: 10)")
    p.add_argument("--on-fault", choices=list(FaultPolicy), default=FaultPolicy.FORFEIT,
                   type=FaultPolicy,
                   help="what happens to a bot that times out, crashes, disconnects or keeps "
                        "sending refused actions: 'forfeit' (default) removes its seat as if it "
                        "had lost; 'play' records the verdict and plays a legal card at random "
                        "for it from then on")
    p.add_argument("--max-rejections", type=int, default=5, metavar="N",
                   help="refused actions a bot may send in one match before an 'illegal' "
                        "verdict (default: 5)")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long a launched bot has to connect (default: 10)")
    p.add_argument("--listen", default="unix", metavar="ADDR",
                   help="where the referee listens: 'unix' (a private socket, default), 'tcp' "
                        "(a free loopback port), an address such as 0.0.0.0:50051, or "
                        "unix:PATH; a tournament played in several processes (--executor) "
                        "needs one per process: not one port or one socket")
    add_setup_options(p)
    add_sandbox_options(p)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena match BOT_DIR...`` to ``sub``, with the options a tournament shares."""
    p = sub.add_parser(
        "match",
        help="play matches between bots, with a live log",
        description="Start a referee, launch each bot from its folder (bot.toml), play N games "
                    "and print every turn live, then the results. The same folder may be given "
                    "twice. Every game gets a fresh secret seed, printed with its result once "
                    "it is over: --seed S --games 1 replays that game exactly. With --seed S, "
                    "game i uses seed S+i-1. Event logs go to OUT/game-<i>.jsonl.",
    )
    p.add_argument("bots", nargs="+", metavar="BOT_DIR", help="bot folder with a bot.toml (2-8)")
    add_match_options(p)
    p.add_argument("--seed", type=int, default=None, metavar="S",
                   help="seed of the first game, for games that replay exactly (default: a fresh "
                        "secret per game). A known seed lets a bot compute the cards: use it "
                        "with trusted bots only")
    p.add_argument("--games", type=int, default=1, help="number of games (default: 1)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="folder for event logs and bot stderr (default: a new runs/match-<time>; "
                        "a folder holding another run's event logs is refused)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only each game's result")
    add_watch_option(p)
    add_web_option(p)
    p.set_defaults(run=run)


def game_spec(args: argparse.Namespace, i: int, config, names: Sequence[str],
              tc: TimeControl) -> MatchSpec:
    """Game ``i`` (from 0): seed S+i with ``--seed S``, else a secret drawn for it alone
    (no game's seed tells anything of another's). Its bot seeds and its match id are keyed
    by its seed (:class:`MatchSpec`), so the seed alone replays it."""
    seed = args.seed + i if args.seed is not None else secrets.randbits(63)
    return MatchSpec(Seeds(seed).match_id("game"), config, seed, tuple(names), tc,
                     on_fault=args.on_fault, max_rejections=args.max_rejections)


def check_match_options(args: argparse.Namespace) -> None:
    """Refuse the values of :func:`add_match_options` no match can be played with (0 s to
    connect: every bot failed to; -1 was accepted), and listen addresses that are none."""
    if not 0 < args.connect_timeout < math.inf:
        raise ConfigError("--connect-timeout must be positive (finite seconds)")
    if args.max_rejections < 0:
        raise ConfigError("--max-rejections must be at least 0")
    check_addresses(args)


def time_control(args: argparse.Namespace) -> TimeControl:
    """The move time and bank asked for, checked (up to a day each), in milliseconds."""
    if not 0.001 <= args.move_time <= MAX_CLOCK_S:
        raise ConfigError(f"--move-time must be from 0.001 to {MAX_CLOCK_S:,} seconds (a day)")
    if not 0 <= args.bank <= MAX_CLOCK_S:
        raise ConfigError(f"--bank must be from 0 to {MAX_CLOCK_S:,} seconds (a day)")
    return TimeControl(round(args.move_time * 1000), round(args.bank * 1000))


class LiveLog(MatchListener):
    """Prints every turn of a match as it happens (plain text when not a terminal), in
    the lines of :mod:`arena.cli.match_log`."""

    def __init__(self, console: Console, quiet: bool = False,
                 output_of: Callable[[int], str] = lambda seat: "") -> None:
        self.console = console
        self.quiet = quiet
        self.output_of = output_of
        self.names: tuple[str, ...] = ()

    def match_started(self, info: MatchInfo) -> None:
        """Keep the seats' names for the lines that follow."""
        self.names = info.names

    def frame(self, frame: Frame) -> None:
        """Print a decision's events (nothing with --quiet)."""
        if self.quiet:
            return
        for line in event_lines(frame.events, self.names, frame.seat, frame.latency_us):
            self.console.print(line)

    def verdict(self, match_id: str, verdict: Verdict) -> None:
        """Print a seat's verdict as it happens, inside its game's lines. With --quiet,
        :func:`print_result` prints it under its game's line instead: printed as it
        happened, before that line, it read as the game before's."""
        if not self.quiet:
            self.console.print(own_verdict_line(self.names, verdict, self.output_of),
                               highlight=False)


def own_verdict_line(names: Sequence[str], verdict: Verdict,
                     output_of: Callable[[int], str]) -> str:
    """A verdict's line, for whoever runs the bots: a crash's with the last lines of the
    bot's stderr (``output_of(seat)``), which the verdict itself no longer quotes (it is
    public: see :meth:`arena.bots.process.BotProcess.describe_exit`)."""
    line = verdict_line(names, verdict)
    if verdict.kind == VerdictKind.CRASHED:
        line += escape(output_of(verdict.seat))
    return line


def print_result(console: Console, number: int, result: MatchResult, quiet: bool,
                 output_of: Callable[[int], str] = lambda seat: "") -> None:
    """A game's closing line, with its seed; with ``quiet``, its verdicts under it."""
    console.print(f"game {number} (seed {result.spec.seed}): {escape(describe_result(result))}",
                  soft_wrap=True)
    if quiet:
        for verdict in result.verdicts:
            console.print(own_verdict_line(result.spec.names, verdict, output_of),
                          highlight=False)


def describe_result(result: MatchResult) -> str:
    """A match's result as its closing line: ranking, how it ended, turns, time."""
    return result_text(result.spec.names, result.ranking, result.status, result.termination,
                       result.turns, result.duration_s)


def write_log(path: Path, result: MatchResult) -> None:
    """The match as JSON lines: a header, one line per public event, the result."""
    with path.open("w", encoding="utf-8") as out:
        header = {"type": "match", **{k: v for k, v in result.to_dict().items()
                                       if k in ("match_id", "ruleset", "options", "seats", "seed",
                                                "time_control", "on_fault", "started_at")}}
        out.write(json.dumps(header) + "\n")
        for e in result.events:
            out.write(json.dumps({"type": "event", **event_to_dict(e)}) + "\n")
        out.write(json.dumps({"type": "result", **result.to_dict()}) + "\n")


def run(args: argparse.Namespace) -> int:
    """Check everything, set the bots up, then play the games with a live log and print
    the closing table; 1 if the run stopped on an error it printed."""
    if not 2 <= len(args.bots) <= 8:
        raise ConfigError(f"a match needs 2 to 8 bot folders, got {len(args.bots)}")
    if args.games < 1:
        raise ConfigError("--games must be at least 1")
    check_match_options(args)
    manifests = [load_manifest(folder) for folder in args.bots]
    config = make_config(args.ruleset, parse_option_args(args.option), len(manifests))
    tc = time_control(args)
    set_up(manifests, args, bot_factory(args))
    console = output.console()
    out = run_folder(args.out)
    try:
        return signals.run(_play(args, manifests, config, tc, console, out))
    except KeyboardInterrupt:
        print(f"arena match: interrupted; the game in progress, if any, is logged as aborted; "
              f"event logs: {out}", file=sys.stderr)
        return 130


def run_folder(given: Path | None) -> Path:
    """Where a run's event logs go: ``given`` (made if missing; refused if it holds
    another run's logs, which this run's would overwrite in part), or a new folder
    runs/match-DATE-TIME, numbered -2, -3, ... where that one is taken (two runs started
    in one second wrote into one folder, the second's logs over the first's)."""
    if given is not None:
        return fresh_out(given, lambda out: next(out.glob("game-*.jsonl"), None),
                         "the event logs", "overwrite")
    base = Path("runs") / time.strftime("match-%Y%m%d-%H%M%S")
    for n in itertools.count(1):
        out = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            out.mkdir(parents=True)
            return out
        except FileExistsError:
            continue
        except OSError as exc:
            raise ConfigError(f"cannot create the folder {out}: {exc.strerror}") from None
    raise AssertionError("unreachable")


async def _play(args, manifests, config, tc, console: Console, out: Path) -> int:
    try:
        # spectators first: a port that cannot be had is found before a bot is launched
        async with spectators(args.watch, console, web=args.web) as hub, \
                LocalArena.open(manifests, args.listen, out, args.connect_timeout,
                                sandbox_config(args)) as local:
            console.print(f"referee at {local.server.address}; {config.describe()}; {tc.describe()}")
            for seat, error in local.start_errors.items():   # one line each, never wrapped
                print(f"arena match: warning: {error}; its seat gets a verdict in each game "
                      "until it starts", file=sys.stderr)
            listeners = [LiveLog(console, args.quiet, local.output_of)] + (
                [hub.listener()] if hub else [])
            summary = Summary(local.labels)
            try:
                for i in range(args.games):
                    spec = game_spec(args, i, config, local.labels, tc)
                    if not args.quiet:  # the seed is shown once the game is over
                        console.print(Rule(f"game {i + 1} of {args.games}"),
                                      width=None if console.is_terminal else 80)
                    result = await local.play(spec, listeners)
                    summary.add(result)
                    write_log(out / f"game-{i + 1}.jsonl", result)
                    print_result(console, i + 1, result, args.quiet, local.output_of)
            except asyncio.CancelledError:
                runner = local.runner
                if runner is not None and runner.result is not None:
                    write_log(out / f"game-{i + 1}.jsonl", runner.result)
                    print_result(console, i + 1, runner.result, args.quiet,
                                 local.output_of)
                raise
    except BrokenPipeError:
        raise   # the reader of its output went (| head): a quiet exit 1, as every command's
    except (BotStartError, OSError) as exc:  # one line on stderr, never wrapped
        print(f"arena match: error: {exc}", file=sys.stderr)
        return 1
    console.print(summary.table())
    console.print(f"event logs: {out}")
    return 0


class Summary:
    """The closing table's figures, added up game by game as each is logged: a run of
    many games keeps no game's result, nor its event record, in memory (a list of the
    results grew by about 10 KB a game, 300 MB in 30,000 games)."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = tuple(labels)
        self.games = 0
        seats = range(len(self.labels))
        self.place_sum = [0 for _ in seats]
        self.ranked = 0                    # games with a ranking (an aborted one has none)
        self.wins = [0 for _ in seats]
        self.faults = [Counter() for _ in seats]   # verdict kind -> count
        self.moves = [0 for _ in seats]
        self.latency_us = [0 for _ in seats]

    def add(self, result: MatchResult) -> None:
        """Count one game into the places, wins, faults, moves and latency of each seat."""
        self.games += 1
        if result.ranking:
            self.ranked += 1
            for seat, place in enumerate(result.places()):
                self.place_sum[seat] += place
            if len(result.ranking[0]) == 1:
                self.wins[result.ranking[0][0]] += 1
        for verdict in result.verdicts:
            self.faults[verdict.seat][verdict.kind] += 1
        for seat, stats in enumerate(result.stats):
            self.moves[seat] += stats.moves
            self.latency_us[seat] += stats.latency_us_total

    def table(self) -> Table:
        """One row a seat: wins (alone in first place), average place, faults by kind
        (``timeout x3``, in the order first seen), mean move time."""
        table = Table(title=f"{self.games} game(s)")
        for col in ("seat", "bot", "wins", "avg place", "faults", "mean move"):
            table.add_column(col, justify="left" if col == "bot" else "right")
        for seat, label in enumerate(self.labels):
            faults = ", ".join(kind if n == 1 else f"{kind} x{n}"
                               for kind, n in self.faults[seat].items())
            moves = self.moves[seat]
            table.add_row(str(seat), label, str(self.wins[seat]),
                          f"{self.place_sum[seat] / self.ranked:.2f}" if self.ranked else "-",
                          faults or "0",
                          f"{self.latency_us[seat] / moves / 1000:.2f} ms" if moves else "-")
        return table
