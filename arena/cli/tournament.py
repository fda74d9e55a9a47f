"""``arena tournament``: run (or resume) a round-robin tournament, live, into the database."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import shlex
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.bots.launcher import BotStartError
from arena.bots.process import ArenaStartError
from arena.cli import output
from arena.cli.database import add_db_option, missing_file, shown
from arena.cli.match import add_match_options, time_control
from arena.cli.prepare import bot_factory, check_addresses, sandbox_config, set_up
from arena.cli.records import LOS_TABLE_BOTS, print_standings, remote_standings
from arena.cli.serve import add_server_options, client
from arena.cli.spectators import add_watch_option, add_web_option, spectators
from arena.referee.results import MatchResult, Status
from arena.rules.errors import ConfigError
from arena.rules.events import describe_ranking
from arena.rules.rulesets import parse_option_args
from arena.server.client import ServerError
from arena.store import StoreError, open_store
from arena.store.base import TournamentExistsError
from arena.tournament.executors import EXECUTORS, check_address, joined
from arena.tournament.ratings import OnlineElo, Placing
from arena.tournament.schedule import PlannedMatch
from arena.tournament.standings import BotLine, Played, count_match, standings
from arena.watch.bus import Bus
from arena.watch.records import StoreRecords
from arena.tournament.tournament import (
    Settings, Tournament, counted, default_concurrency, name_problem,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--retire-after", type=int, default=3, metavar="N",
                   help="retire a bot after N crashes or failed starts (default: 3); its "
                        "remaining matches are forfeits")
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


# ------------------------------------------------------------------------ tournament

_SETTING_FLAGS = ("table_size", "games", "duplicate", "seed", "phases", "ruleset", "option",
                  "move_time", "bank", "on_fault", "max_rejections", "retire_after", "sandbox",
                  "limit")


#: what a tournament on a server takes from the command line (its TournamentRequest, and
#: how to reach and follow it); every other flag is for one played here
_SERVER_FLAGS = ("help", "table_size", "games", "duplicate", "seed", "name", "resume",
                 "cancel", "ruleset", "option", "move_time", "bank", "quiet", "web", "server",
                 "token", "tls", "tls_ca")


def given_options(args: argparse.Namespace, dests: Sequence[str]) -> list[str]:
    """The options among ``dests`` given on the command line, whatever their value (one
    equal to its default too): the subcommand's arguments parsed again with a marker for
    their defaults."""
    saved, markers = {}, {}
    for action in args.parser._actions:
        if action.dest in dests:
            saved[action] = action.default
            # a repeatable option appends to a copy of its default, so its marker is a
            # list (an object() was a traceback: --resume NAME --option K=V)
            action.default = markers[action.dest] = (
                [] if isinstance(action, argparse._AppendAction) else object())
    try:
        tokens = args.argv[args.argv.index(args.command) + 1:]
        again, _ = args.parser.parse_known_args(tokens)
    finally:
        for action, default in saved.items():
            action.default = default
    flag = {a.dest: a.option_strings[0] for a in args.parser._actions if a.option_strings}
    return [flag[d] for d in dests if getattr(again, d) is not markers[d]]


def run_tournament(args: argparse.Namespace) -> int:
    if args.server:
        return run_on_server(args)
    if args.cancel is not None:
        raise ConfigError("--cancel NAME stops a tournament on a server: give --server "
                          "HOST:PORT (one played here stops with Ctrl-C)")
    if args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    if args.retire_after < 1:
        raise ConfigError("--retire-after must be at least 1")
    # as arena match checks them (0 s: every bot failed to connect; -1 accepted)
    if not 0 < args.connect_timeout < math.inf:
        raise ConfigError("--connect-timeout must be positive (finite seconds)")
    if args.max_rejections < 0:
        raise ConfigError("--max-rejections must be at least 0")
    check_address(args.executor, args.ray_address)
    check_addresses(args)
    console = output.console()
    err = output.console(stderr=True)
    # Everything is checked before the database is opened (or created): a refused
    # tournament stores nothing.
    if args.resume:
        if args.bots:
            raise ConfigError("--resume takes the bots and settings stored with the "
                              "tournament; give no bot folders")
        if args.name is not None:
            raise ConfigError("--resume NAME names the tournament; drop --name")
        changed = given_options(args, _SETTING_FLAGS)
        if changed:
            raise ConfigError(f"--resume keeps the stored settings; drop {', '.join(changed)}")
        if missing_file(args.db):
            raise ConfigError(f"no database at {args.db} (give the --db of the tournament to resume)")
        logs_folder(args.logs or default_logs(args.resume))
    else:
        tc = time_control(args)
        settings = Settings(
            bot_dirs=tuple(args.bots), table_size=args.table_size, games=args.games,
            ruleset=args.ruleset, options=parse_option_args(args.option),
            duplicate=args.duplicate, seed=args.seed, phases=args.phases,
            move_ms=tc.move_ms, bank_ms=tc.bank_ms,
            on_fault=args.on_fault, max_rejections=args.max_rejections,
            retire_after=args.retire_after, sandbox=args.sandbox, limits=tuple(args.limit))
        if len(settings.bot_dirs) < 2:
            raise ConfigError(f"a tournament needs at least 2 bot folders, got {len(settings.bot_dirs)}")
        manifests = Tournament.check(settings)
        if args.name is not None and (why := name_problem(args.name)) is not None:
            raise ConfigError(f"--name {args.name!r} is not allowed: {why}")
        name = args.name or time.strftime("t-%Y%m%d-%H%M%S")
        logs_folder(args.logs or default_logs(name))   # before any setup runs
        set_up(manifests, args, bot_factory(args))
    store = open_store(args.db, durable=args.durable)
    claim = None   # one process plays a tournament at a time
    try:
        if args.resume:
            tournament = Tournament.resume(store, args.resume)
            if tournament.settings.sandbox is not None:
                # its bots run as in its first part: sandboxed alike, with the same limits
                args.sandbox, args.limit = tournament.settings.sandbox, list(tournament.settings.limits)
            claim = store.claim_tournament(tournament.record)   # before its setups run
            set_up(tournament.manifests, args, bot_factory(args))
        else:
            if args.name is None:
                # the default name, numbered where taken: two tournaments started in one
                # second into one database (the second was refused, and told to resume
                # the first, which another process was playing)
                tournament = _create_unnamed(store, name, settings)
            else:
                if store.has_tournament(name):
                    # before Tournament.create stores the bots' versions for nothing
                    raise ConfigError(f"a tournament called {name!r} already exists in {shown(args.db)} "
                                      f"(resume it with --resume {shlex.quote(name)}, or choose another --name)")
                tournament = Tournament.create(store, name, settings)
            claim = store.claim_tournament(tournament.record)
    except BaseException:
        if claim is not None:
            claim.release()
        store.close()
        raise
    try:
        return _run(tournament, args, console, err)
    finally:
        claim.release()
        store.close()


def _create_unnamed(store, base: str, settings: Settings) -> Tournament:
    """A new tournament under ``base``, or ``base-2``, ``base-3``, ... where taken (also
    by another process between the look and the write)."""
    for n in itertools.count(1):
        name = base if n == 1 else f"{base}-{n}"
        if store.has_tournament(name):
            continue
        try:
            return Tournament.create(store, name, settings)
        except TournamentExistsError:
            continue
    raise AssertionError("unreachable")


def default_logs(name: str) -> Path:
    """Where a tournament's bots write their stderr without --logs."""
    return Path("runs") / name.replace("/", "_")


def logs_folder(path: Path) -> None:
    """Refuse, before anything is stored, a logs folder that cannot be made: a file there
    stopped the tournament once its bots started, its row already stored."""
    there = path
    while not there.exists() and not there.is_symlink() and there != there.parent:
        there = there.parent
    if not there.is_dir():
        raise ConfigError(f"the bots' logs cannot go in {path}: {there} is not a folder "
                          "(give --logs DIR)")
    if not os.access(there, os.W_OK | os.X_OK):
        raise ConfigError(f"the bots' logs cannot go in {path}: {there} is not writable "
                          "(give --logs DIR)")


def _run(t: Tournament, args, console: Console, err: Console) -> int:
    for warning in t.warnings:
        err.print(f"warning: {escape(warning)}", soft_wrap=True)
    total = len(t.plan)
    pending = t.pending()
    done_before = total - len(pending)
    # soft_wrap: a line is never broken (a test or a log reads it whole; a terminal wraps it)
    schedule_line, clock, integrity = t.describe()
    console.print(f"tournament [bold]{escape(t.name)}[/bold] in {escape(shown(args.db))}: {schedule_line}")
    console.print(f"{clock}; concurrency {args.concurrency}; {integrity}"
                  + (f"; resuming: {done_before} of {total} already played" if done_before else ""))
    view = LiveView(t.names, total, done_before, console, args.quiet)
    if done_before:   # a resume: the standings start from what is stored
        view.earlier([Played.of(m) for m in t.store.matches(t.record)
                      if m.status == Status.FINISHED and m.ranking])
    logs = args.logs or default_logs(t.name)
    # the end of every line that stops the run early (interrupted, an error, a closed output)
    # where it ran too, when that was asked for: the resume line pasted as printed played
    # a Ray tournament on this machine's cores
    asked = given_options(args, ["executor", "ray_address"])
    where = "".join(f" {flag} {shlex.quote(str(getattr(args, dest)))}"
                    for flag, dest in (("--executor", "executor"), ("--ray-address", "ray_address"))
                    if flag in asked)
    resume = (f"Resume with:\n  arena tournament --resume {escape(shlex.quote(t.name))} "
              f"--db {escape(shlex.quote(shown(args.db)))}{escape(where)}")
    try:
        # the executor's cluster first: the live view and the listener bus start threads
        with joined(args.executor if pending else "local", args.ray_address), view:
            asyncio.run(_play(t, args, view, logs, console))
    except KeyboardInterrupt:
        stored = len(t.store.finished_keys(t.record))
        err.print(f"interrupted: {stored} of {total} matches are stored; the matches in flight "
                  f"will be played again from their seeds. {resume}", soft_wrap=True)
        return 130
    except (StoreError, RuntimeError, ConfigError, ArenaStartError) as exc:
        # a result could not be stored (a lock held too long), or the executor could not go
        # on (a Ray cluster with no CPU for a referee, actors lost again and again, or none
        # at the address 'auto' once the tournament was stored), or this process could not
        # start a bot's (out of open files): no bot is charged with it
        try:
            stored = f"{len(t.store.finished_keys(t.record))} of {total} matches are stored"
        except StoreError:
            stored = "the matches stored so far are kept"
        err.print(f"arena tournament: error: {escape(str(exc))}\n{stored}; the others will be "
                  f"played again from their seeds. {resume}", soft_wrap=True)
        return 1
    except BrokenPipeError:
        # whoever read the output went (arena tournament ... | head): the run stops, as a
        # writer to a closed pipe does (stdout sent to /dev/null), and says on stderr what
        # is kept and how to go on (it stopped without a word)
        output.stdout_gone()
        stored = len(t.store.finished_keys(t.record))
        err.print(f"arena tournament: its output was closed (the reader of a pipe went): "
                  f"{stored} of {total} matches are stored; the matches in flight will be "
                  f"played again from their seeds. {resume}", soft_wrap=True)
        return 1
    except (BotStartError, OSError) as exc:
        err.print(f"arena tournament: error: {escape(str(exc))}", soft_wrap=True)
        return 1
    elapsed = time.perf_counter() - view.started
    if view.played:
        console.print(played_line(view.played, elapsed, view.faults), soft_wrap=True)
    final = standings(t.store.matches(t.record), t.names)
    print_standings(console, final, f"standings of {escape(t.name)} (batch fit)")
    console.print(f"saved in {escape(shown(args.db))}; see: arena standings {escape(shlex.quote(t.name))} "
                  f"--db {escape(shlex.quote(shown(args.db)))}", soft_wrap=True)
    return 0


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
    if args.resume and (changed := given_options(args, _SETTING_FLAGS)):
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
            err.print(f"error: lost the server while following tournament {escape(name)}: "
                      f"{escape(str(exc))}. The server resumes it when it runs again; follow it "
                      f"again with: {follow_again()}")
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
        err.print(f"error: tournament {escape(name)} stopped on the server: {escape(stopped)}. "
                  f"What is left plays with: {follow_again()}")
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


async def _play(t: Tournament, args, view: LiveView, logs: Path, console: Console) -> None:
    """Play the pending matches (with ``--watch`` or ``--web``, for spectators too)."""
    async with spectators(args.watch, console, StoreRecords(t.store), args.web) as hub:
        on_result, bus = view.result, None
        if hub is not None:
            hub.tournament(t.name, t.names, len(t.plan),
                           [Played.of(m) for m in t.store.matches(t.record)
                            if m.status == Status.FINISHED and m.ranking])
            bus = Bus(hub, t.name)

            def on_result(plan: PlannedMatch, result: MatchResult) -> None:
                view.result(plan, result)
                played = Played.of_result(plan.key, plan.sample, result)
                if played is not None:
                    hub.tournament_result(t.name, played, result.match_id)

        await t.run(args.concurrency, on_result, args.executor, listen=args.listen, log_dir=logs,
                    connect_timeout=args.connect_timeout, on_retire=view.retired,
                    sandbox=sandbox_config(args), bus=bus, address=args.ray_address)
        if hub is not None:
            hub.tournament_finished(t.name)


def played_line(played: int, seconds: float, faults: Counter) -> str:
    """The line after a tournament's matches: how many were played, how fast, and the
    faults seen (by kind)."""
    said = ", ".join(f"{n} {kind}" for kind, n in sorted(faults.items())) or "none"
    return (f"{played} matches played in {seconds:.1f} s ({played / max(seconds, 1e-9):.1f}/s); "
            f"faults: {said}")


class LiveView:
    """Progress and provisional standings while a tournament runs (plain lines when the
    output is not a terminal)."""

    def __init__(self, names: list[str], total: int, done: int, console: Console,
                 quiet: bool) -> None:
        self.names = list(names)
        self.total = total
        self.done = done
        self.console = console
        self.quiet = quiet
        self.elo = OnlineElo(names)
        self.faults = Counter()
        self.lines = {b: BotLine(b) for b in names}
        self.started = time.perf_counter()
        self.played = 0
        self.live = console.is_terminal and not quiet
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), TextColumn("{task.fields[faults]}"),
            console=console)
        self.task = self.progress.add_task("matches", total=total, completed=done,
                                           rate="", faults="faults 0")
        self._live: Live | None = None
        self._next_report = 0.1

    def __enter__(self) -> LiveView:
        if self.live:
            self._live = Live(Group(self.progress, _Renderable(self._table)), console=self.console,
                              refresh_per_second=4, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        """Stop the live display (again: nothing); what is printed after goes to the
        console as plain lines."""
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None

    def earlier(self, matches: list[Played]) -> None:
        """Matches stored before this run (a resume): counted in the provisional standings
        and faults, not in this run's rate (they showed every bot at 0 matches and 1500,
        and the Elo line reported after each new match until it caught up)."""
        for m in matches:
            self._count(list(m.bots), list(m.places), m.sample, m.verdicts)
        self.progress.update(self.task, faults=f"faults {sum(self.faults.values())}")
        self._next_report = (int(self.done / self.total * 10) + 1) / 10

    def _count(self, names: list[str], places: list[int], sample: str, verdicts) -> None:
        """One finished match into the online Elo, the bots' lines and the faults."""
        self.elo.update(Placing(names, places, sample))
        count_match(self.lines, names, places, verdicts)
        for _, kind in verdicts:
            self.faults[kind] += 1

    def retired(self, bot: str, reason: str) -> None:
        # the reason may say it ("retired after 3 crashes ..."): once is enough
        msg = f"[bold red]{escape(bot)} is retired:[/bold red] {escape(reason.removeprefix('retired '))}"
        (self._live.console if self._live else self.console).print(msg, soft_wrap=True)

    def result(self, plan: PlannedMatch, result: MatchResult) -> None:
        """A match of this machine's tournament has ended."""
        self.match(plan.key, plan.sample, list(result.spec.names), result.places(),
                   result.termination, result.turns, [(v.seat, v.kind) for v in result.verdicts])

    def match(self, key: str, sample: str, names: list[str], places: list[int], termination: str,
              turns: int, verdicts: list[tuple[int, str]]) -> None:
        """A match has ended (here, or on a server)."""
        self.done += 1
        self.played += 1
        self._count(names, places, sample, verdicts)
        elapsed = time.perf_counter() - self.started
        rate = self.played / elapsed if elapsed > 0 else 0.0
        self.progress.update(self.task, completed=self.done, rate=f"{rate:.1f} matches/s",
                             faults=f"faults {sum(self.faults.values())}")
        if self.live or self.quiet:
            return
        ranking = [tuple(s for s, p in enumerate(places) if p == place)
                   for place in sorted(set(places)) if place]
        order = describe_ranking(ranking, names)
        said = "".join(f"; {names[seat]} {kind}" for seat, kind in verdicts)
        self.console.print(f"[{self.done:>{len(str(self.total))}}/{self.total}] {key}: "
                           f"{escape(order)} ({termination}, {turns} turns{escape(said)})",
                           soft_wrap=True)
        if self.done / self.total >= self._next_report or self.done == self.total:
            self._next_report += 0.1
            board = ", ".join(f"{b} {r:.0f}" for b, r in
                              sorted(self.elo.ratings.items(), key=lambda kv: -kv[1]))
            self.console.print(f"  provisional Elo after {counted(self.done, 'match', 'matches')} "
                               f"({rate:.1f}/s): {escape(board)}",
                               soft_wrap=True)

    def _table(self) -> Table:
        table = Table(title="provisional standings (online Elo, updated live)", title_justify="left")
        for col in ("rank", "bot", "Elo*", "matches", "wins", "avg place"):
            table.add_column(col, justify="left" if col == "bot" else "right")
        ranked = sorted(self.names, key=lambda b: -self.elo.ratings[b])
        for i, bot in enumerate(ranked, 1):
            line = self.lines[bot]
            table.add_row(str(i), escape(bot), f"{self.elo.ratings[bot]:.0f}", str(line.matches),
                          str(line.wins), f"{line.average_place:.2f}" if line.matches else "-")
        return table


class _Renderable:
    def __init__(self, build) -> None:
        self.build = build

    def __rich__(self):
        return self.build()
