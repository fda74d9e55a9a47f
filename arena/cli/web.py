"""``arena web``: a web page to watch an arena's matches, tournaments and replays."""

from __future__ import annotations

import argparse
import asyncio
import sys

from arena.cli import signals
from arena.cli.spectators import port_number
from arena.watch.client import DEFAULT_ADDRESS, ENV_ADDRESS, spectator_address
from arena.web import DEFAULT_HOST, DEFAULT_PORT


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena web`` and its options to ``sub``."""
    p = sub.add_parser(
        "web", help="a web page to watch matches, tournaments and replays",
        description="Serve a web page that follows a spectator service (arena serve, or arena "
                    "match or arena tournament with --watch): the live and recent matches, a "
                    "live table, TV, tournament standings, and replays you can step through, "
                    "link to at a turn, embed and download. It runs until Ctrl-C; if the "
                    "spectator service is not there, the page says so and keeps trying.")
    p.add_argument("--connect", default=None, metavar="HOST:PORT",
                   help=f"the spectator service, HOST:PORT or unix:PATH (default: "
                        f"${ENV_ADDRESS}, else {DEFAULT_ADDRESS})")
    p.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                   help=f"the page's port (default: {DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"the page's address (default: {DEFAULT_HOST}, this machine only; "
                        "0.0.0.0 for every network)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a host name the viewer answers to, besides IP addresses and "
                        "localhost (its public name, or a proxy's in front that passes its "
                        "own name on; repeatable). On a loopback --host, and on any --host "
                        "once one is given, other names are refused: a site whose name leads "
                        "to this machine cannot use the viewer through its visitors' browsers")
    p.add_argument("--tls", action="store_true",
                   help="speak TLS to the spectator service, trusting the system's certificates")
    p.add_argument("--tls-ca", default=None, metavar="FILE",
                   help="speak TLS, trusting this certificate (default: $ONO99_TLS_CA)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve the web viewer until Ctrl-C."""
    return signals.run(_serve(spectator_address(args.connect), args.host, args.port,
                              args.tls, args.tls_ca, args.allow_host))


async def _serve(connect: str, host: str, port: int, tls: bool, tls_ca: str | None,
                 allow_hosts: list[str]) -> int:
    from arena.web.server import WebViewer   # aiohttp: imported only when serving

    # a WebServeError (no port to be had there) ends as arena.cli.main says
    viewer = await WebViewer.start(connect, host, port, tls, tls_ca, allow_hosts)
    print(f"web viewer at {viewer.url}", flush=True)
    problem = await viewer.spectators.check()
    if problem is not None:
        print(f"arena web: warning: {problem}; the page says so and keeps trying",
              file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in signals.stop_signals():
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await viewer.stop()
    return 0
