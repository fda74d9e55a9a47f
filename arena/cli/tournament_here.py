"""``arena tournament BOT_DIR...`` played here: its checks, its row in the database, the
run of its matches (by whichever executor), and the lines it prints around them."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import shlex
import time
from collections.abc import Awaitable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from arena.bots.launcher import BotStartError
from arena.bots.process import ArenaStartError
from arena.cli import signals
from arena.cli import output
from arena.cli.database import missing_file, shown
from arena.cli.live_view import LiveView, played_line
from arena.cli.match import check_match_options, time_control
from arena.cli.prepare import bot_factory, sandbox_config, set_up
from arena.cli.records import print_standings
from arena.cli.spectators import spectators
from arena.cli.tournament_flags import SETTING_FLAGS, given_options
from arena.referee.results import MatchResult
from arena.rules.errors import ConfigError
from arena.rules.rulesets import parse_option_args
from arena.store import StoreError, open_store
from arena.store.base import Claim, TournamentExistsError, TournamentInPlayError
from arena.tournament.executors import check_address, check_listen, joined
from arena.tournament.schedule import PlannedMatch
from arena.tournament.standings import Played, standings_of, stored_played
from arena.tournament.tournament import Settings, Tournament, name_problem
from arena.watch.bus import Bus
from arena.watch.records import StoreRecords


def run_here(args: argparse.Namespace) -> int:
    """``arena tournament BOT_DIR...`` (or ``--resume NAME``) without ``--server``: check
    everything, store the tournament (or claim the stored one) and play it here."""
    if args.cancel is not None:
        raise ConfigError("--cancel NAME stops a tournament on a server: give --server "
                          "HOST:PORT (one played here stops with Ctrl-C)")
    if args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    if args.retire_after < 1:
        raise ConfigError("--retire-after must be at least 1")
    check_match_options(args)       # as arena match checks them
    check_address(args.executor, args.ray_address)
    check_listen(args.executor, args.listen)
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
        changed = given_options(args, SETTING_FLAGS)
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
        if args.name is not None and not missing_file(args.db):
            # a name taken, before the cluster is joined below: it started a local Ray
            # cluster for nothing (14 s before the error line). A database not made yet
            # holds no name, and is made once the cluster is joined
            store = open_store(args.db, durable=args.durable)
            try:
                _refuse_taken(store, name, args.db)
            finally:
                store.close()
    # A new tournament joins its executor's cluster before it is stored (a resume joins in
    # _run, and only with matches to play): a cluster that refused this process (a token
    # it did not send, another Ray version) left an empty tournament, then the latest for
    # `arena standings`. After the setups, which run here before any cluster's threads.
    with contextlib.nullcontext() if args.resume else joined(args.executor, args.ray_address):
        return _store_and_run(args, None if args.resume else (name, settings), console, err)


def _store_and_run(args: argparse.Namespace, new: tuple[str, Settings] | None,
                   console: Console, err: Console) -> int:
    """Store the ``new`` tournament (a name and settings) or take up ``args.resume``,
    claimed for this process, and play it."""
    store = open_store(args.db, durable=args.durable)
    claim = None   # one process plays a tournament at a time
    try:
        if args.resume:
            tournament = Tournament.resume(store, args.resume)
            if tournament.settings.bots:
                # its bots are a server's registered ones, with no folder here: the run
                # failed in a worker ("IndexError: list index out of range"), then said
                # to run the same command again
                raise ConfigError(
                    f"tournament {tournament.name!r} is an arena serve's, of the bots "
                    "registered there: it resumes by itself when the server starts on this "
                    f"database (follow it with arena tournament --resume "
                    f"{shlex.quote(tournament.name)} --server ADDR)")
            if tournament.settings.sandbox is not None:
                # its bots run as in its first part: sandboxed alike, with the same limits
                args.sandbox, args.limit = tournament.settings.sandbox, list(tournament.settings.limits)
            claim = store.claim_tournament(tournament.record)   # before its setups run
            set_up(tournament.manifests, args, bot_factory(args))
        else:
            name, settings = new
            if args.name is None:
                # the default name, numbered where taken: two tournaments started in one
                # second into one database (the second was refused, and told to resume
                # the first, which another process was playing)
                tournament = _create_unnamed(store, name, settings)
            else:
                _refuse_taken(store, name, args.db)   # taken meanwhile
                tournament = Tournament.create(store, name, settings)
            claim = store.claim_tournament(tournament.record)
    except BaseException:
        if claim is not None:
            claim.release()
        store.close()
        raise
    try:
        return _run(tournament, args, console, err, claim)
    finally:
        claim.release()
        store.close()


def _refuse_taken(store, name: str, db: str) -> None:
    """:class:`ConfigError` where tournament ``name`` is in ``store`` already: said before
    Tournament.create stores the bots' versions for nothing."""
    if store.has_tournament(name):
        raise ConfigError(f"a tournament called {name!r} already exists in {shown(db)} "
                          f"(resume it with --resume {shlex.quote(name)}, or choose another --name)")


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


def _run(t: Tournament, args, console: Console, err: Console, claim: Claim) -> int:
    """Play the stored tournament's pending matches under the live view, then print its
    standings, or, when it stopped early, what is stored and the line to resume it."""
    for warning in t.warnings:
        err.print(f"warning: {escape(warning)}", soft_wrap=True)
    total = len(t.plan)
    pending = t.pending()
    done_before = total - len(pending)
    schedule_line, clock, integrity = t.describe()
    view = LiveView(t.names, total, done_before, console, args.quiet)
    if done_before:   # a resume: the standings start from what is stored
        view.earlier(stored_played(t.store, t.record))
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
        # in the try: an output closed at once (| head -1) stops the run as one closed
        # later does, saying what is kept (it stopped without a word, exit status 1).
        # soft_wrap: a line is never broken (a test or a log reads it whole; a terminal
        # wraps it)
        console.print(f"tournament [bold]{escape(t.name)}[/bold] in {escape(shown(args.db))}: "
                      f"{schedule_line}")
        console.print(f"{clock}; concurrency {args.concurrency}; {integrity}"
                      + (f"; resuming: {done_before} of {total} already played" if done_before
                         else ""))
        # the executor's cluster first: the live view and the listener bus start threads
        with joined(args.executor if pending else "local", args.ray_address), view:
            signals.run(_play(t, args, view, logs, console, claim))
    except KeyboardInterrupt:
        stored = len(t.store.finished_keys(t.record))
        err.print(f"interrupted: {stored} of {total} matches are stored; the matches in flight "
                  f"will be played again from their seeds. {resume}", soft_wrap=True)
        return 130
    except TournamentInPlayError as exc:
        # another process plays it now: no line to resume it, which would be refused
        err.print(f"arena tournament: error: {escape(str(exc))}", soft_wrap=True)
        return 1
    except (StoreError, RuntimeError, ConfigError, ArenaStartError) as exc:
        # a result could not be stored (a lock held too long), or the executor could not go
        # on (a Ray cluster with no CPU for a referee, actors lost again and again, or, on
        # a resume, none at the address 'auto': a new tournament joins before it is
        # stored), or this process could not start a bot's (out of open files): no bot is
        # charged with it
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
    final = standings_of(stored_played(t.store, t.record), t.names)
    print_standings(console, final, f"standings of {escape(t.name)} (batch fit)")
    console.print(f"saved in {escape(shown(args.db))}; see: arena standings {escape(shlex.quote(t.name))} "
                  f"--db {escape(shlex.quote(shown(args.db)))}", soft_wrap=True)
    return 0


async def _play(t: Tournament, args, view: LiveView, logs: Path, console: Console,
                claim: Claim) -> None:
    """Play the pending matches (with ``--watch`` or ``--web``, for spectators too)."""
    async with spectators(args.watch, console, StoreRecords(t.store), args.web) as hub:
        on_result, bus = view.result, None
        if hub is not None:
            hub.tournament(t.name, t.names, len(t.plan), list(stored_played(t.store, t.record)))
            bus = Bus(hub, t.name)

            def on_result(plan: PlannedMatch, result: MatchResult) -> None:
                view.result(plan, result)
                played = Played.of_result(plan.key, plan.sample, result)
                if played is not None:
                    hub.tournament_result(t.name, played, result.match_id)

        await _while_claimed(claim, t.run(
            args.concurrency, on_result, args.executor, listen=args.listen, log_dir=logs,
            connect_timeout=args.connect_timeout, on_retire=view.retired,
            sandbox=sandbox_config(args), bus=bus, address=args.ray_address), t.name, args.db)
        if hub is not None:
            hub.tournament_finished(t.name)


async def _while_claimed(claim: Claim, run: Awaitable[None], name: str, db: str) -> None:
    """Await ``run``, stopped with a :class:`TournamentInPlayError` if this process loses
    its claim on the tournament meanwhile. A PostgreSQL claim is a session's lock, which a
    restart of the database server (or its administrator's pg_terminate_backend) ends:
    the run rode the restart out and played on without it, and a --resume then was let
    in, both playing the same matches until the resume stopped on "already stored" (the
    seventeenth review). Looked at every few seconds, the claim is taken again once the
    server is back, so a resume is refused as at any other time; one that took it first
    plays on, and this run stops."""
    playing = asyncio.ensure_future(run)
    lost = asyncio.ensure_future(claim.lost())
    try:
        await asyncio.wait((playing, lost), return_when=asyncio.FIRST_COMPLETED)
    finally:
        lost.cancel()
        playing.cancel()      # nothing, once it is done
        await asyncio.gather(playing, lost, return_exceptions=True)
    if playing.cancelled() and lost.done() and not lost.cancelled():
        raise TournamentInPlayError(
            f"this process lost its claim on tournament {name!r} in {shown(db)} (its "
            "database session ended: a restart of the database server?) and another "
            "process plays it now: this one stops, and what it stored is kept")
    playing.result()          # its own error, if it ended on one
