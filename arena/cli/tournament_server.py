"""``arena tournament NAMES... --server ADDR``: a tournament played by a server, started or
followed from here, and ``--cancel NAME`` to stop one."""

from __future__ import annotations

import argparse
import shlex
from collections import Counter

from rich.markup import escape

from arena.cli import output
from arena.cli.live_view import LiveView, played_line
from arena.cli.match import time_control
from arena.cli.organizer import client
from arena.cli.records import LOS_TABLE_BOTS, print_standings, remote_standings
from arena.cli.tournament_flags import SETTING_FLAGS, given_options
from arena.rules.errors import ConfigError
from arena.rules.rulesets import parse_option_args
from arena.server.client import ServerError


#: what a tournament on a server takes from the command line (its TournamentRequest, and
#: how to reach and follow it); every other flag is for one played here
_SERVER_FLAGS = ("help", "table_size", "games", "duplicate", "seed", "name", "resume",
                 "cancel", "ruleset", "option", "move_time", "bank", "quiet", "web", "server",
                 "token", "tls", "tls_ca")


def run_on_server(args: argparse.Namespace) -> int:
    """``arena tournament NAMES... --server ADDR``: the bots are names registered on the
    server, which runs the tournament; this shows its progress as a local one would."""
    if args.cancel is not None:
        return cancel_on_server(args)
    if args.resume and args.bots:
        raise ConfigError("--resume NAME follows the server's tournament; give no bot names")
    if args.resume and args.name is not None:
        raise ConfigError("--resume NAME names the tournament; drop --name")
    if args.web is not None:
        raise ConfigError("--web shows a tournament played here; watch the server's with arena "
                          "web --connect HOST:PORT (its spectators' address)")
    # the server plays with its own database, referee, sandbox and limits: a flag of those
    # was ignored without a word
    here = given_options(args, [a.dest for a in args.parser._actions
                                if a.option_strings and a.dest not in _SERVER_FLAGS])
    if here:
        raise ConfigError(f"{', '.join(here)} {'is' if len(here) == 1 else 'are'} for a "
                          "tournament played here; the server plays with its own: drop "
                          f"{'it' if len(here) == 1 else 'them'}")
    if args.resume and (changed := given_options(args, SETTING_FLAGS)):
        raise ConfigError(f"--resume follows the server's tournament with its stored settings; "
                          f"drop {', '.join(changed)}")
    if not args.resume and len(args.bots) < 2:
        raise ConfigError(f"a tournament needs at least 2 bots, got {len(args.bots)}")
    parser = args.parser
    tc = time_control(args)
    # the request's fields (int32 games, uint64 seed): out of range was a traceback here,
    # and --games 0 a default the server filled in
    if not 1 <= args.games < 2**31:
        raise ConfigError(f"--games {args.games} is not allowed on a server: 1 to {2**31 - 1:,}")
    if args.seed is not None and not 0 <= args.seed < 2**64:
        raise ConfigError(f"--seed {args.seed} is not allowed on a server: 0 to 2**64 - 1 "
                          "(0: a secret one)")
    changed = {f: getattr(args, f) != parser.get_default(f) for f in ("move_time", "bank")}
    settings = dict(
        name=args.resume or args.name or "", bots=args.bots, games=args.games,
        table_size=args.table_size, ruleset=args.ruleset, options=parse_option_args(args.option),
        move_ms=tc.move_ms if changed["move_time"] else 0,
        bank_ms=tc.bank_ms if changed["bank"] else 0,
        duplicate=args.duplicate, seed=args.seed or 0)
    console, err = output.console(), output.console(stderr=True)
    view, stopped = None, ""

    def follow_again() -> str:
        return (f"arena tournament --resume {escape(shlex.quote(name))} "
                f"--server {escape(args.server)}")

    with client(args) as c:
        try:
            for progress in c.tournament(**settings):
                kind = progress.WhichOneof("kind")
                if kind == "started":
                    s = progress.started
                    console.print(f"tournament [bold]{escape(s.name)}[/bold] on {escape(args.server)}: "
                                  f"{s.lines[0]}")
                    console.print(escape(s.lines[1]) + (f"; resuming: {s.done} of {s.total} already "
                                                        "played" if s.done else ""))
                    name = s.name
                    view = LiveView(list(s.bots), s.total, s.done, console, args.quiet).__enter__()
                elif kind == "match" and view is not None:
                    m = progress.match
                    view.match(m.key, m.sample, list(m.bots), list(m.places), m.termination,
                               m.turns, [(v.seat, v.kind) for v in m.verdicts])
                elif kind == "retired" and view is not None:
                    view.retired(progress.retired.bot, progress.retired.reason)
                elif kind == "finished":
                    if view is not None:
                        view.__exit__(None, None, None)
                    f = progress.finished
                    if f.played:
                        console.print(played_line(f.played, f.seconds,
                                                  view.faults if view else Counter()))
                    stopped = f.error
        except KeyboardInterrupt:
            if view is None:       # before the server said which tournament it plays
                err.print("no longer following; a tournament the server has started goes on "
                          f"there: arena standings --server {escape(args.server)} shows the "
                          "latest")
                return 130
            view.__exit__(None, None, None)
            err.print(f"no longer following; the tournament goes on on the server. Follow it "
                      f"again with: {follow_again()}")
            return 130
        except (ConfigError, ServerError) as exc:
            if view is None:       # refused, or no server: nothing was followed yet
                raise
            # the stream broke: the server was killed, or the network between went away
            view.__exit__(None, None, None)
            err.print(f"arena tournament: error: lost the server while following tournament "
                      f"{escape(name)}: {escape(str(exc))}. The server resumes it when it runs "
                      f"again; follow it again with: {follow_again()}")
            return 1
        try:
            final = c.standings(name, LOS_TABLE_BOTS)
        except (ConfigError, ServerError):
            if not stopped:
                raise
            final = None           # a server that stopped: the error below says it all
    if final is not None:
        print_standings(console, remote_standings(final), f"standings of {escape(name)} (batch fit)")
    if stopped:
        err.print(f"arena tournament: error: tournament {escape(name)} stopped on the server: "
                  f"{escape(stopped)}. What is left plays with: {follow_again()}")
        return 1
    return 0


def cancel_on_server(args: argparse.Namespace) -> int:
    """``arena tournament --cancel NAME --server ADDR``: stop the server's tournament."""
    others = given_options(args, [a.dest for a in args.parser._actions if a.option_strings
                                  and a.dest not in ("help", "cancel", "server", "token", "tls",
                                                     "tls_ca")])
    if others or args.bots:
        raise ConfigError("--cancel NAME takes only how to reach the server: drop "
                          + ", ".join(others + (["the bot names"] if args.bots else [])))
    with client(args) as c:
        done = c.cancel(args.cancel)
    output.console().print(
        f"tournament {escape(done.name)} cancelled on {escape(args.server)} after "
        f"{done.played} of {done.total} matches; it is not resumed when the server restarts. "
        f"What is left plays with: arena tournament --resume {escape(shlex.quote(done.name))} "
        f"--server {escape(args.server)}")
    return 0
