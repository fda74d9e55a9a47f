"""``--watch [ADDR]`` and ``--web [PORT]`` of the commands that play matches: a spectator
service for them, and the web viewer on it."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import asynccontextmanager

from rich.console import Console

from arena.referee.lobby import token_hash
from arena.server.client import ENV_TOKEN
from arena.watch.hub import SpectatorHub
from arena.watch.server import DEFAULT_LISTEN, SpectatorServer
from arena.watch.servicer import RecordSource
from arena.web import DEFAULT_HOST, DEFAULT_PORT
from arena.web.process import ViewerProcess

def add_watch_option(p: argparse.ArgumentParser) -> None:
    """--watch [HOST:PORT]: serve spectators while the command runs."""
    p.add_argument("--watch", nargs="?", const=DEFAULT_LISTEN, default=None, metavar="HOST:PORT",
                   help="serve spectators (arena watch, arena web) on HOST:PORT (or a unix "
                        "socket, unix:PATH); alone, on a free loopback port, printed at the "
                        "start. With $ONO99_ORGANIZER_TOKEN "
                        "set, that token opens the organiser view (every hand, live)")


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return port


def add_web_option(p: argparse.ArgumentParser) -> None:
    """--web [PORT]: also serve the web viewer of those spectators."""
    p.add_argument("--web", nargs="?", type=port_number, const=DEFAULT_PORT, default=None, metavar="PORT",
                   help=f"also serve the web viewer (as arena web) on {DEFAULT_HOST}:PORT "
                        f"(default: {DEFAULT_PORT}; 0: any free port), printed at the start, "
                        "following this command's spectator service (arena match and arena "
                        "tournament: --watch's, else one on a free loopback port)")


@asynccontextmanager
async def web_viewer(port: int | None, spectators_at: str, console: Console):
    """The web viewer on ``port``, following the spectators at ``spectators_at``, while
    the block runs; nothing without ``port``. :class:`WebServeError` if the port is taken."""
    if port is None:
        yield None
        return
    # in a process of its own: what pages ask of it never holds up the matches played here
    viewer = await ViewerProcess.start(spectators_at, DEFAULT_HOST, port)
    viewer.when_gone(lambda how: print(f"arena: warning: the web viewer at {viewer.url} stopped "
                                       f"({how}); the matches go on without it",
                                       file=sys.stderr, flush=True))
    try:
        # inside: a closed output (| head) stops the command with the viewer stopped
        console.print(f"web viewer at {viewer.url}", soft_wrap=True, highlight=False)
        yield viewer
    finally:
        await viewer.stop()


@asynccontextmanager
async def spectators(listen: str | None, console: Console, records: RecordSource | None = None,
                     web: int | None = None):
    """A hub and its spectator server on ``listen`` while the block runs, with the web
    viewer on port ``web`` (which needs spectators: on a free loopback port, without
    ``listen``); None without either."""
    if listen is None and web is None:
        yield None
        return
    listen = listen or DEFAULT_LISTEN
    token = os.environ.get(ENV_TOKEN) or None
    hub = SpectatorHub(organiser_view=token is not None)
    server = await SpectatorServer.start(hub, listen, records,
                                         token_hash(token) if token else None)
    try:
        console.print(f"spectators: arena watch {server.address} --tv   (or arena web --connect "
                      f"{server.address})", soft_wrap=True, highlight=False)
        async with web_viewer(web, server.address, console):
            yield hub
    finally:
        # for good: the command is done, and its viewers' streams end as finished ones
        # (arena watch --tv then ends with it), where a server's (arena serve) may be
        # restarted, and tells them it is stopping
        await server.stop(final=True)
