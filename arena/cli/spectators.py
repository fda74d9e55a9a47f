"""``--watch [ADDR]`` of the commands that play matches: a spectator service for them."""

from __future__ import annotations

import argparse
import os
from contextlib import asynccontextmanager

from rich.console import Console

from arena.referee.lobby import token_hash
from arena.watch.hub import SpectatorHub
from arena.watch.server import DEFAULT_LISTEN, SpectatorServer
from arena.watch.servicer import RecordSource

ENV_ORGANIZER_TOKEN = "ONO99_ORGANIZER_TOKEN"


def add_watch_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--watch", nargs="?", const=DEFAULT_LISTEN, default=None, metavar="HOST:PORT",
                   help="serve spectators (arena watch, arena web) on HOST:PORT; alone, on a "
                        "free loopback port, printed at the start. With $ONO99_ORGANIZER_TOKEN "
                        "set, that token opens the organiser view (every hand, live)")


@asynccontextmanager
async def spectators(listen: str | None, console: Console, records: RecordSource | None = None):
    """A hub and its spectator server on ``listen`` while the block runs; (None, None)
    without ``listen``."""
    if listen is None:
        yield None
        return
    token = os.environ.get(ENV_ORGANIZER_TOKEN) or None
    hub = SpectatorHub(organiser_view=token is not None)
    server = await SpectatorServer.start(hub, listen, records,
                                         token_hash(token) if token else None)
    console.print(f"spectators: arena watch {server.address} --tv   (or arena web --connect "
                  f"{server.address})", soft_wrap=True, highlight=False)
    try:
        yield hub
    finally:
        await server.stop()
