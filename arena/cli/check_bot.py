"""``arena check-bot DIR``: a compliance run for one bot folder, in any language."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from arena.bots.check import GOODBYE_S, check_bot
from arena.bots.manifest import load_manifest
from arena.bots.process import is_log_of, log_name
from arena.bots.setup import DEFAULT_TIMEOUT_S
from arena.cli import signals
from arena.cli.prepare import (
    add_sandbox_options, announce_setup, bot_factory, fresh_out, sandbox_config,
)
from arena.referee.results import MAX_CLOCK_S
from arena.rules.errors import ConfigError


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena check-bot BOT_DIR`` and its options to ``sub``."""
    p = sub.add_parser(
        "check-bot",
        help="check that a bot keeps the protocol and the rules (a compliance run)",
        description="Run the bot's setup, launch it on a private referee and play it, over one "
                    "connection, against the referee's own house seats: every ruleset, 2 and 8 "
                    "seats, an owed pair after P2 and after DP, four 99s in a modern hand, an "
                    "over-limit turn in points scoring. Then say goodbye. One line per check, "
                    "PASS or FAIL with what was seen and how to fix it, then "
                    "'check-bot: NAME: P passed, F failed'. Exit code 0 only if every check "
                    f"passes. Checks: hello with protocol 1 in time; answers only its own turns "
                    f"with their turn ids; only legal cards; move time p99 within the allowance "
                    f"(p50 and the slowest shown; a bot that relies on its bank fails); no crash, "
                    f"disconnection, time-out or illegal verdict; exits within {GOODBYE_S:g} s of goodbye. Start-up time and "
                    "peak memory are reported.")
    p.add_argument("bot", metavar="DIR", help="the bot folder (with its bot.toml)")
    p.add_argument("--json", action="store_true", help="the report as JSON on stdout")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="keep the bot's output (stdout and stderr, DIR/NAME.stderr.log) there: a "
                        "failure quotes its last lines only (default: kept in a temporary "
                        "folder, removed at the end)")
    p.add_argument("--move-time", type=float, default=1.0, metavar="SECONDS",
                   help="the move allowance the bot is held to (default: 1)")
    p.add_argument("--connect-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long the bot has to connect after it is started (default: 10)")
    p.add_argument("--no-setup", dest="setup", action="store_false",
                   help="do not run the bot's setup")
    p.add_argument("--setup-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"time its setup may take (default: {DEFAULT_TIMEOUT_S:g})")
    add_sandbox_options(p)
    p.add_argument("--seed", type=int, default=1,
                   help="seed of the deals (default: 1; the run is the same every time)")
    p.set_defaults(run=run)


def out_dir(out: Path | None, name: str) -> Path | None:
    """``--out DIR``, made if missing; :class:`ConfigError` for one that cannot be, or
    that holds bot ``name``'s log of another run (this run's would be appended to it, as
    arena match refuses a folder holding another run's event logs)."""
    if out is None:
        return None
    return fresh_out(out, lambda at: next((p for p in at.iterdir() if is_log_of(p.name, name)),
                                          None), "the output", "be added to")


#: seconds of silence after which check-bot says how far it is
PROGRESS_S = 10.0


def progress(name: str):
    """A line on stderr once the matches have run PROGRESS_S seconds since the last one
    (a bot that takes 1.5 s a move ran 5 minutes in silence, as if hung); none for a bot
    that plays at the usual speed, the whole run taking a second or two."""
    said = [0.0]

    def on_match(played: int, of: int, seconds: float) -> None:
        if seconds - said[0] >= PROGRESS_S and played < of:
            said[0] = seconds
            print(f"bot {name}: {played} of {of} check matches played in {seconds:.0f} s",
                  file=sys.stderr, flush=True)
    return on_match


def run(args: argparse.Namespace) -> int:
    """Check the times asked for, run the compliance matches and print the report (or
    its JSON); 1 unless every check passed."""
    for flag in ("move_time", "connect_timeout", "setup_timeout"):
        if not 0 < getattr(args, flag) < math.inf:
            raise ConfigError(f"--{flag.replace('_', '-')} must be positive (finite seconds)")
    if not 0.001 <= args.move_time <= MAX_CLOCK_S:
        raise ConfigError(f"--move-time must be from 0.001 to {MAX_CLOCK_S:,} seconds (a day)")
    manifest = load_manifest(args.bot)
    bot_factory(args)   # says so once if bots cannot be sandboxed here
    report = signals.run(check_bot(
        manifest, setup=args.setup, setup_timeout=args.setup_timeout,
        move_ms=round(args.move_time * 1000), connect_timeout=args.connect_timeout, seed=args.seed,
        sandbox=sandbox_config(args), on_setup=announce_setup, log_dir=out_dir(args.out, manifest.name),
        on_match=progress(manifest.name)))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for check in report.checks:
            print(check.line(), flush=True)
        figures = []
        if report.startup_s is not None:
            figures.append(f"start-up {report.startup_s:.2f} s")
        if report.peak_memory_mb is not None:
            figures.append(f"peak memory {report.peak_memory_mb:.1f} MB")
        figures.append(f"{report.matches} matches; {report.seconds:.1f} s in all")
        print("bot: " + ", ".join(figures))
        if args.out is not None:
            print(f"bot output: {args.out / log_name(manifest.name)}")
        elif report.failed:
            print("bot output: not kept (--out DIR keeps it, where the failures quote its last "
                  "lines)")
        print(report.summary())
    return 0 if report.failed == 0 else 1
