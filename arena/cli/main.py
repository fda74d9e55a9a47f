"""The ``arena`` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from arena import __version__, files
from arena.cli import (
    bench, check_bot, conformance, match, new_bot, output, records, replay, serve, tournament,
    watch, web,
)
from arena.cli.signals import as_ctrl_c, note_terminals, stop_signals
from arena.rules.errors import ConfigError

COMMANDS = (tournament, records, match, serve, watch, web, replay, new_bot, check_bot,
            conformance, bench)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="ONO 99 Arena: referee matches between bots, run tournaments, rate bots.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv   # for a command that asks which options were given at all
    files.raise_limit()   # ulimit -n up to what the system allows (arena.files)
    # SIGTERM (a service manager, a container stopping, kill) and SIGHUP (its terminal
    # closed) stop a command as Ctrl-C does: its bots stopped, what is played kept, the
    # line to resume it printed (a command may set its own handlers)
    if threading.current_thread() is threading.main_thread():
        note_terminals()
        for sig in stop_signals()[1:]:
            signal.signal(sig, as_ctrl_c)
    try:
        return args.run(args)
    except ConfigError as exc:
        print(f"arena {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"arena {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # whoever read the output has gone (arena matches --json | head): stop quietly,
        # exit status 1; stdout goes to /dev/null so that
        # the flush at exit cannot fail again
        output.stdout_gone()
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
