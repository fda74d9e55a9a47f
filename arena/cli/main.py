"""The ``arena`` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Sequence

from arena import __version__, files
from arena.cli.signals import as_ctrl_c, note_terminals, stop_signals

#: Each command, and the module of arena.cli that adds its parser and runs it, in the
#: order ``arena --help`` lists them. Only the module of the command given is imported:
#: with every one imported (the whole arena, numpy, aiohttp's viewer), each command spent
#: 0.45 s of CPU before it began, 0.5 s in all for an `arena standings` of a few rows.
COMMANDS = {
    "tournament": "tournament", "standings": "records", "matches": "records",
    "show": "records", "match": "match", "serve": "serve", "bots": "bots", "watch": "watch",
    "web": "web", "replay": "replay", "new-bot": "new_bot", "check-bot": "check_bot",
    "conformance": "conformance", "bench": "bench",
}

# The exit status of every command (the README's "Exit status" says the same):
OK = 0            # done
FAILED = 1        # it ran, or tried to, and failed: a server or database that does not
                  # answer or fails, a match not played, a check or a vector that fails,
                  # a run stopped on an error (its resume line printed)
USAGE = 2         # refused as asked, nothing done: a bad option or value (argparse's own
                  # code), a file, folder, bot, tournament or match that is not there or
                  # not what it should be, a wrong token, a port or a database (or its
                  # tournament) another process holds
INTERRUPTED = 130  # Ctrl-C, SIGTERM or SIGHUP (serve, web, watch and replay return 0
                   # themselves: being stopped is how they end)


def exit_status(exc: BaseException) -> int | None:
    """USAGE or FAILED for an error a command ends on, whose message is the one line to
    print; None for any other (a bug: its traceback is printed).

    A command returns FAILED itself where it says more than one line (a tournament's
    resume line, check-bot's report)."""
    # here, not at the top: most commands import few of these modules (the class of an
    # error raised is in one already imported)
    from arena.rules.errors import ConfigError
    from arena.server.client import ServerError
    from arena.store import RefusedError, StoreError
    from arena.tournament.executors import ClusterError
    from arena.watch.client import WatchError
    from arena.web import WebServeError

    if isinstance(exc, WatchError):
        return USAGE if exc.refused else FAILED
    if isinstance(exc, (ConfigError, RefusedError, WebServeError)):
        return USAGE
    if isinstance(exc, (StoreError, ServerError, ClusterError)):
        return FAILED
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``arena`` parser: with ``command`` (a name in COMMANDS), only its module's
    subcommands; else every module's."""
    parser = argparse.ArgumentParser(
        prog="arena",
        description="ONO 99 Arena: referee matches between bots, run tournaments, rate bots.",
        epilog="Exit status: 0 done; 1 failed (a server or database that does not answer or "
               "fails, a match not played, a check or vector that fails, a run stopped on an "
               "error); 2 refused as asked, nothing done (a bad option, a file, bot, tournament "
               "or match that is not there, a wrong token, a port or database another process "
               "holds); 130 stopped by Ctrl-C or a signal (arena serve, web, watch and replay, "
               "which end that way, exit 0). 'arena COMMAND --help' explains a command.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    names = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for name in names:
        importlib.import_module(f"arena.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run the command and return its exit status: a known error as one
    line on stderr (:func:`exit_status`), Ctrl-C and the stop signals as 130."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # the command is the first word (arena's own options are --help and --version): a
    # word that names none, or none at all, gets every command's parser, and its message
    parser = build_parser(argv[0] if argv else None)
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
    except KeyboardInterrupt:
        print(f"arena {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # whoever read the output has gone (arena matches --json | head): stop quietly,
        # exit status 1; stdout goes to /dev/null so that
        # the flush at exit cannot fail again
        from arena.cli import output
        output.stdout_gone()
        return FAILED
    except Exception as exc:
        status = exit_status(exc)
        if status is None:
            raise
        print(f"arena {args.command}: error: {exc}", file=sys.stderr)
        return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
