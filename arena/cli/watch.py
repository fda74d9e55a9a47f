"""``arena watch [ADDR]``: follow the matches of an arena's spectator service.

On a terminal, a live table (:mod:`arena.cli.table_view`) redrawn a few times a second,
so the clock of the seat thinking runs and a resized terminal is drawn at its new size.
Elsewhere (a pipe, a file), a log: one line per event, as `arena match` prints it
(:mod:`arena.cli.match_log`), each flushed as it is printed, so ``arena watch --tv |
grep`` reads it live.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from rich.console import Console, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from arena.cli import output
from arena.cli.match_log import MatchLogPrinter, summary_text
from arena.cli.signals import stop_signals
from arena.cli.table_view import match_view, matches_table, standings_table, tournament_view
from arena.rules.errors import ConfigError
from arena.server.client import ENV_TOKEN
from arena.text import counted
from arena.watch.client import (
    DEFAULT_ADDRESS, ENV_ADDRESS, Feed, Reconnecting, SpectatorClient, spectator_address,
)
from arena.watch.hub import MAX_DELAY_TURNS
from arena.watch.viewer import WatchedMatch, WatchedTournament

TICK_S = 0.25                             # the live table's redraws
#: the least time between two redraws while messages keep coming (a busy ladder sends
#: about 80 a second, each redraw of the whole terminal took a core's 23% at that rate)
DRAW_EVERY_S = 0.1


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena watch [ADDR]`` and its options to ``sub``."""
    p = sub.add_parser(
        "watch", help="follow an arena's matches live: a table on a terminal, a log elsewhere",
        description="Follow the matches of a spectator service (arena match --watch, arena "
                    "tournament --watch and arena serve print its address). With no mode, "
                    "list its live and recent matches. On a terminal: a live table of the "
                    "match (or the tournament); Ctrl-C leaves. Elsewhere: one line per event, "
                    "as arena match prints them, with a line when each match starts and ends. "
                    "If the server goes away, it is looked for again for 10 s.")
    p.add_argument("address", nargs="?", default=None, metavar="ADDR",
                   help=f"HOST:PORT or unix:PATH of the spectator service (default: "
                        f"${ENV_ADDRESS}, else {DEFAULT_ADDRESS})")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--match", default=None, metavar="ID", help="follow this match")
    mode.add_argument("--tournament", nargs="?", const="", default=None, metavar="NAME",
                      help="follow a tournament: progress, standings, crosstable (NAME: "
                           "'ladder' for a server's ladder; none: the one running)")
    mode.add_argument("--tv", action="store_true",
                      help="follow the most interesting live match, and the next when it ends")
    p.add_argument("--delay", type=int, default=0, metavar="N",
                   help="with --match or --tv: stay N turns behind the match (the server may "
                        "hold every viewer further behind)")
    p.add_argument("--token", default=None,
                   help=f"with --match: the organiser token, for the organiser view (every "
                        f"hand, live) (default: ${ENV_TOKEN})")
    p.add_argument("--tls", action="store_true",
                   help="speak TLS to the server (arena serve --tls-cert), trusting the system's "
                        "certificates")
    p.add_argument("--tls-ca", default=None, metavar="FILE",
                   help="speak TLS, trusting this certificate (default: $ONO99_TLS_CA)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List the service's matches, or follow one match, the TV or a tournament, until
    it ends or Ctrl-C."""
    address = spectator_address(args.address)
    if not 0 <= args.delay <= MAX_DELAY_TURNS:
        raise ConfigError(f"--delay must be from 0 to {MAX_DELAY_TURNS:,} (turns)")
    if args.delay and args.match is None and not args.tv:
        raise ConfigError("--delay is for --match and --tv")
    token = (args.token or os.environ.get(ENV_TOKEN) or None) if args.match is not None else None
    console = output.console()
    client = SpectatorClient(address, token, args.tls, args.tls_ca)
    # Ctrl-C and SIGTERM ask the client to stop (see SpectatorClient.stop), until the
    # channel is closed: watching ends as it always did, exit status 0
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, lambda *_: client.stop())
                    for sig in stop_signals()}
    try:
        client.connect()
        if args.match is not None:
            return follow_match(console, client.watch_match(args.match, args.delay, bool(token)),
                                "organiser view" if token else "")
        if args.tv:
            return follow_match(console, client.watch_tv(delay=args.delay), "TV")
        if args.tournament is not None:
            return follow_tournament(console, client.watch_tournament(args.tournament))
        return list_matches(console, client)   # a WatchError ends as arena.cli.main says
    except KeyboardInterrupt:     # the way to stop watching: not an error
        return 0
    except BrokenPipeError:       # the reader of our output left (| head)
        output.stdout_gone()
        return 0
    finally:
        client.close()
        # watching is over and the process only exits now: a later Ctrl-C (the third of
        # three pressed) is ignored, where the handlers restored let it kill the viewer
        # as it exited (status -2, not 0)
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)


# ---------------------------------------------------------------- matches

def follow_match(console: Console, feed: Feed, label: str) -> int:
    """One match to its end, or TV's matches one after another."""
    watched = WatchedMatch()
    with feed:
        if not console.is_terminal:
            printer = MatchLogPrinter(console)
            for item in feed.messages():
                if isinstance(item, Reconnecting):
                    _reconnecting(feed, item)
                    continue
                update = watched.apply(item, time.monotonic())
                printer.print(watched.record, update)
            return 0

        def view(notice: str) -> RenderableType:
            record = watched.record
            if record is None:
                return Text(notice or "waiting for a match...", style="dim")
            now = time.monotonic()
            status = " ".join(filter(None, (label, _match_status(record), notice)))
            delayed = record.delayed
            return match_view(record, thinking_ms=None if delayed else watched.thinking_ms(now),
                              status=status, log_lines=_log_lines(console, record))

        _live(console, feed, view, lambda item: watched.apply(item, time.monotonic()))
        if watched.record is not None:
            console.print(view(""))
    return 0


def _match_status(record) -> str:
    if record.HasField("over"):
        return "over"
    if record.delayed:
        return f"live, {record.delayed} turns behind"
    return "live"


def _log_lines(console: Console, record) -> int:
    """As many of the last plays as the terminal's height leaves room for."""
    used = len(record.match.names) + len(record.verdicts) + 12
    return max(3, console.height - used)


# ---------------------------------------------------------------- tournaments

def follow_tournament(console: Console, feed: Feed) -> int:
    """A tournament (or the ladder) until it is over."""
    watched = WatchedTournament()
    with feed:
        if not console.is_terminal:
            for item in feed.messages():
                if isinstance(item, Reconnecting):
                    _reconnecting(feed, item)
                    continue
                update = watched.apply(item)
                _print_tournament(console, watched, update)
                if update.over:
                    break
            return 0

        def view(notice: str) -> RenderableType:
            if watched.snapshot is None:
                return Text(notice or "waiting for the tournament...", style="dim")
            return tournament_view(watched.snapshot, list(watched.live.values()),
                                   list(watched.recent), notice)

        _live(console, feed, view, watched.apply)
        if watched.snapshot is not None:
            console.print(view(""))
    return 0


def _print_tournament(console: Console, watched: WatchedTournament, update) -> None:
    """The tournament's lines: a header when joined, one line per finished match, the
    final standings when it is over."""
    t = watched.snapshot
    of = f"/{t.total}" if t.total else ""
    if update.joined:
        planned = f"{t.done} of {t.total} matches played" if t.total else f"{counted(t.done, 'match', 'matches')} played"
        console.print(escape(f"tournament {t.name}: {planned}; bots: {', '.join(t.bots)}"))
    for m in update.finished:
        console.print(escape(f"[{t.done}{of}] match {m.match_id}: {summary_text(m)}"))
    if update.over:
        console.print(standings_table(t.standings, f"standings of {escape(t.name)}"))


# ---------------------------------------------------------------- a list

def list_matches(console: Console, client: SpectatorClient) -> int:
    """The live matches, then the recent ones, and exit."""
    matches = client.matches()
    if console.is_terminal:
        console.print(matches_table(matches, f"matches at {client.address}"))
        return 0
    for m in matches:
        console.print(escape(f"{m.match_id}  {m.tournament or '-'}  {' vs '.join(m.names)}: "
                             f"{summary_text(m)}"))
    if not matches:   # on stderr: stdout stays one line a match (it printed nothing)
        print(f"arena watch: no live or recent matches at {client.address}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- helpers

def _live(console: Console, feed: Feed, view: Callable[[str], RenderableType],
          apply: Callable) -> None:
    """Draw ``view`` on the whole terminal after messages, at most every DRAW_EVERY_S
    (those in between are applied and drawn with the next draw, within DRAW_EVERY_S of
    the quiet after them), and every TICK_S without one (the clocks), until the feed
    ends (or Ctrl-C)."""
    notice = ""
    drawn = 0.0
    pending = False
    with Live(view(notice), console=console, screen=True, auto_refresh=False) as live:
        for item in feed.messages(tick=DRAW_EVERY_S):
            since = time.monotonic() - drawn
            if isinstance(item, Reconnecting):
                notice = f"the server went away ({item.reason}); reconnecting..."
            elif item is not None:
                apply(item)
                notice = ""
                pending = True
                if since < DRAW_EVERY_S:
                    continue      # drawn soon: with the next message, or at the quiet
            elif not pending and since < TICK_S:
                continue          # quiet: the clocks are redrawn every TICK_S
            live.update(view(notice), refresh=True)
            drawn = time.monotonic()
            pending = False
        live.update(view(notice), refresh=True)   # the end, as it was


def _reconnecting(feed: Feed, item: Reconnecting) -> None:
    print(f"arena watch: the spectator service at {feed.client.address} went away "
          f"({item.reason}); reconnecting...", file=sys.stderr, flush=True)
