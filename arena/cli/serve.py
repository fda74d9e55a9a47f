"""``arena serve``: a running arena (``arena bots ...`` manages the bots entered on it)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import sys
from pathlib import Path

from arena.cli import signals
from arena.cli import output
from arena.cli.database import add_db_option, shown
from arena.cli.match import time_control
from arena.cli.prepare import add_sandbox_options, bot_factory, check_addresses, sandbox_config
from arena.cli.signals import stop_signals
from arena.cli.spectators import add_web_option, web_viewer
from arena.rules.errors import ConfigError
from arena.server.ladder import WARM
from arena.text import counted
from arena.tournament.executors import EXECUTORS
from arena.tournament.tournament import default_concurrency
from arena.watch.hub import MAX_DELAY_TURNS

DEFAULT_LISTEN = "127.0.0.1:50051"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena serve`` and its options to ``sub``."""
    p = sub.add_parser(
        "serve", help="run an arena server: remote and hosted bots, tournaments, a ladder",
        description="Serve, on one port, the Referee (bots connect here, from anywhere, with "
                    "their tokens) and the Organizer service (arena bots, arena tournament "
                    "--server, arena standings --server), with the Spectator service on a port of "
                    "its own (--watch), over one database, until Ctrl-C, SIGTERM or SIGHUP "
                    "(exit status 0). A new database gets an organiser token, printed once "
                    "('organizer token: T'); only its hash is kept. Started again on the same "
                    "database, the server goes on where it was.")
    add_db_option(p, "the server's database", default=None, required=True)
    p.add_argument("--data", type=Path, default=None, metavar="DIR",
                   help="hosted bots' folders and logs (default: DB.d beside a SQLite file; "
                        "DBNAME.d here for a PostgreSQL database)")
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help=f"where to serve (default: {DEFAULT_LISTEN}; port 0: any free port; "
                        "unix:PATH: a unix socket, for this machine or a proxy)")
    p.add_argument("--tls-cert", default=None, metavar="FILE", help="TLS certificate (PEM)")
    p.add_argument("--tls-key", default=None, metavar="FILE", help="TLS private key (PEM)")
    p.add_argument("--ladder", action="store_true",
                   help="keep scheduling ladder matches among the bots that are there")
    p.add_argument("--table-size", type=int, default=2, metavar="K",
                   help="seats per ladder table and default for tournaments (default: 2)")
    p.add_argument("--ladder-concurrency", type=int, default=default_concurrency(), metavar="C",
                   help=f"ladder matches at once, each bot in one at a time (default: the "
                        f"number of cores, {default_concurrency()})")
    p.add_argument("--ladder-warm", type=int, default=WARM, metavar="N",
                   help=f"hosted bots whose processes the ladder keeps running between their "
                        f"matches, those seated last; the others are stopped, and started "
                        f"again when next seated (default: {WARM}; each is a sandbox and an "
                        f"interpreter, about 40 MB for a Python bot)")
    p.add_argument("--ladder-rest", type=float, default=0.0, metavar="SECONDS",
                   help="how long a bot rests after each ladder match before it is seated "
                        "again (default: 0, the ladder plays as fast as the bots and "
                        "--ladder-concurrency allow; a day's matches and the database grow "
                        "with it)")
    p.add_argument("--move-time", type=float, default=1.0, metavar="SECONDS",
                   help="time per move (default: 1)")
    p.add_argument("--bank", type=float, default=10.0, metavar="SECONDS",
                   help="extra time over a match (default: 10)")
    p.add_argument("--duplicate-remote", action="store_true",
                   help="duplicate deals even at tables with a remote bot (its memory cannot "
                        "be reset between rotations: it could know the cards of an earlier one)")
    p.add_argument("--absent-after", type=float, default=30.0, metavar="SECONDS",
                   help="how long a remote bot due at a match is waited for before its seat is "
                        "absent (default: 30)")
    p.add_argument("--watch", default=None, metavar="HOST:PORT",
                   help="where spectators connect (arena watch, arena web): the Spectator "
                        "service, on a port of its own (default: --listen's host, the next "
                        "port; any free port when --listen's is 0; beside a unix:PATH, "
                        "unix:PATH.spectators)")
    p.add_argument("--spectator-delay", type=int, default=0, metavar="TURNS",
                   help="hold every spectator but the organiser this many turns behind a "
                        "live match (default: 0; what spectators see is public to the bots "
                        "at the table anyway)")
    add_web_option(p)
    p.add_argument("--reconnect-grace", type=float, default=10.0, metavar="SECONDS",
                   help="how long a remote bot whose connection drops mid-match may take to "
                        "come back and go on, on its own clock (default: 10)")
    p.add_argument("--executor", default="local", choices=list(EXECUTORS), metavar="NAME",
                   help="where tournaments of hosted bots only play: "
                        + "; ".join(f"{e.name}: {e.help}" for e in EXECUTORS.values())
                        + " (default: local, this server's referee). Tables with a remote "
                          "bot, and the ladder, play on this server's referee, where remote "
                          "bots connect")
    p.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="with --executor ray: the cluster to join (HOST:PORT of 'ray start "
                        "--head', or 'auto'); default: a local one on this machine's cores")
    add_sandbox_options(p)
    p.set_defaults(run=run_serve)


# ---------------------------------------------------------------- arena serve


def run_serve(args: argparse.Namespace) -> int:
    """Check every option before the database is opened, then serve until Ctrl-C or
    SIGTERM."""
    from arena.rpc import listen_problem
    from arena.server.app import ServeOptions, default_spectators
    from arena.tournament.executors import check_address, joined

    tc = time_control(args)
    if not 2 <= args.table_size <= 8:
        raise ConfigError(f"--table-size {args.table_size} is not allowed; tables seat 2 to 8")
    if args.ladder_concurrency < 1:
        raise ConfigError("--ladder-concurrency must be at least 1")
    if args.ladder_warm < 0:
        raise ConfigError("--ladder-warm must be at least 0")
    if not 0 <= args.spectator_delay <= MAX_DELAY_TURNS:
        raise ConfigError(f"--spectator-delay must be from 0 to {MAX_DELAY_TURNS:,} (turns)")
    for flag in ("absent_after", "reconnect_grace", "ladder_rest"):
        if not 0 <= getattr(args, flag) < math.inf:
            raise ConfigError(f"--{flag.replace('_', '-')} must be at least 0 (finite seconds)")
    tls = None
    if bool(args.tls_cert) != bool(args.tls_key):
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    if args.tls_cert and args.web is not None:
        raise ConfigError("--web follows the spectators in plain gRPC; with TLS, run arena web "
                          "--connect HOST:PORT --tls-ca CERT beside the server instead")
    if args.tls_cert:
        try:
            tls = (Path(args.tls_key).read_bytes(), Path(args.tls_cert).read_bytes())
        except OSError as exc:
            raise ConfigError(f"cannot read {exc.filename}: {exc.strerror}") from None
    if args.listen in ("unix", "tcp"):      # arena match's words: a private socket, a port
        raise ConfigError(f"arena serve listens where bots and organisers reach it: --listen "
                          f"HOST:PORT or unix:PATH, not {args.listen!r}")
    check_addresses(args)   # before the database: a new one's token is printed once
    beside = default_spectators(args.listen)
    if args.watch is None and (why := listen_problem(beside)):
        raise ConfigError(f"spectators cannot be served on {beside!r} "
                          f"(the default beside --listen; --watch chooses): {why}")
    check_address(args.executor, args.ray_address)
    bot_factory(args)   # says so once if bots cannot be sandboxed here
    log_errors()
    options = ServeOptions(listen=args.listen, tls=tls, ladder=args.ladder,
                           table_size=args.table_size, move_ms=tc.move_ms, bank_ms=tc.bank_ms,
                           sandbox=sandbox_config(args), duplicate_remote=args.duplicate_remote,
                           absent_after=args.absent_after, reconnect_grace=args.reconnect_grace,
                           watch=args.watch, spectator_delay=args.spectator_delay,
                           executor=args.executor, executor_address=args.ray_address,
                           ladder_concurrency=args.ladder_concurrency,
                           ladder_warm=args.ladder_warm, ladder_rest=args.ladder_rest,
                           data_dir=args.data)
    with joined(args.executor, args.ray_address):   # before the server's threads start
        return signals.run(_serve(args.db, options, args.web))


def log_errors() -> None:
    """Print warnings and errors of gRPC and the arena on stderr. gRPC reports an exception
    raised out of a handler only through its logger, which has nothing but a NullHandler
    unless the program configures logging: a server would fail calls without a trace. The
    server's own journal (bots entered and removed, tournaments started and ended) too."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("arena.server").setLevel(logging.INFO)


async def _serve(db: str, options, web: int | None) -> int:
    from arena.server.app import ArenaServer

    app = await ArenaServer.start(db, options)
    # the handlers first: a stop sent as soon as the address is printed (a service
    # manager, a test) stops the server as Ctrl-C does, its bots and referee with it
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in stop_signals():
        loop.add_signal_handler(sig, stop.set)
    console = output.console()
    # a PostgreSQL restart ends the session that holds the database: if another server
    # takes it before this one can again, this one stops (two would play the same ladder
    # and tournaments, each refusing the other's results)
    lost = asyncio.ensure_future(app.claim_lost())
    stopped = asyncio.ensure_future(stop.wait())
    try:
        # printed inside: a closed output (| head) stops the server in order
        if app.new_token:
            print(f"organizer token: {app.new_token}", flush=True)
        console.print(f"arena server at {app.address}{' (TLS)' if options.tls else ''}, database "
                      f"{shown(db)}; {counted(len(app.registry.active()), 'bot')} entered; ladder "
                      f"{'on' if options.ladder else 'off'}; Ctrl-C stops it", soft_wrap=True)
        # with TLS the spectators speak it too: the command as printed must say so, or it
        # fails after 5 s with 'no spectator service'
        trust = " --tls-ca CERT   (or --tls: a public authority's certificate)" if options.tls else ""
        console.print(f"spectators at {app.spectators.address}: arena watch "
                      f"{app.spectators.address} --tv{trust}", soft_wrap=True, highlight=False)
        async with web_viewer(web, app.spectators.address, console):
            sys.stdout.flush()
            await asyncio.wait((stopped, lost), return_when=asyncio.FIRST_COMPLETED)
    finally:   # a WebServeError (its --web port taken since it was checked) ends as main says
        for task in (lost, stopped):
            task.cancel()
        await asyncio.gather(lost, stopped, return_exceptions=True)
        await app.stop()
    if lost.done() and not lost.cancelled() and lost.exception() is None:
        print(f"arena serve: error: another arena serve holds {shown(db)} now: this one lost "
              "its hold when its connection to the database ended (a restart of the database "
              "server?), and stops", file=sys.stderr)
        return 1
    console.print("arena server stopped")
    return 0
