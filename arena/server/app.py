"""A running arena: one port serving the Referee (bots) and the Organizer (the organiser),
over one database, with tournaments on demand and, optionally, a ladder.

Everything lasting lives in the database (the organiser token's hash, the bots entered,
tournaments and their matches, the ladder's matches), so a server started again on the
same database goes on where it was: remote bots reconnect with their tokens, unfinished
tournaments resume, the ladder's ratings are fitted again from its matches. Hosted bots'
folders and logs live in a data folder (:func:`data_dir_for`): beside a SQLite database
(``DB.d/``), or named after a PostgreSQL database in the working directory.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.bots.sandbox import SandboxConfig
from arena.referee.lobby import Lobby, new_token, token_hash
from arena.referee.server import RefereeServer
from arena.rules.errors import ConfigError
from arena.server import ladder as ladder_module
from arena.server.boards import Board, Boards
from arena.server.ladder import Ladder
from arena.server.organizer import add_to
from arena.server.registry import Registry
from arena.server.runs import Runs
from arena.store import StoreError, is_url, open_store
from arena.store.location import database_name
from arena.store.base import Claim, NotFoundError, Store, not_found
from arena.tournament.standings import Standings, standings
from arena.tournament.tournament import Settings
from arena.watch.hub import SpectatorHub
from arena.watch.records import StoreRecords
from arena.watch.server import SpectatorServer

log = logging.getLogger("arena.server")
#: How often a server checks that it still holds its database (see ArenaServer.claim_lost).
CLAIM_CHECK_S = 2.0


@dataclass(frozen=True)
class ServeOptions:
    """How a server runs (``arena serve`` flags)."""

    listen: str = "127.0.0.1:0"
    tls: tuple[bytes, bytes] | None = None      # PEM key and certificate
    ladder: bool = False
    table_size: int = 2
    move_ms: int = 1000
    bank_ms: int = 10_000
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    duplicate_remote: bool = False
    absent_after: float = 30.0                  # a remote bot due at a match: wait this long
    reconnect_grace: float = 10.0               # a remote bot that drops mid-match: its window
    watch: str | None = None                    # the spectators' HOST:PORT (None: --listen's port + 1)
    spectator_delay: int = 0                    # frames every non-organiser spectator is held back
    setup_timeout: float = 600.0
    concurrency: int | None = None              # matches at once per tournament
    executor: str = "local"                     # where tournaments of hosted bots play
    executor_address: str | None = None         # its cluster (ray)
    ladder_concurrency: int = 1
    ladder_warm: int = ladder_module.WARM       # hosted bots' processes kept between matches
    ladder_rest: float = 0.0                    # seconds a bot rests after a ladder match
    data_dir: Path | None = None                # hosted bots' folders and logs (None: data_dir_for)


def data_dir_for(location: str) -> Path:
    """Where a server on the database ``location`` keeps hosted bots' folders and logs by
    default: ``DB.d`` beside a SQLite file; for a PostgreSQL database, which has no folder
    of ours, ``DBNAME.d`` in the working directory (give ``--data`` to put it elsewhere)."""
    if not is_url(location):
        return Path(f"{location}.d")
    name = database_name(location)
    return Path(f"{re.sub(r'[^A-Za-z0-9._-]', '_', name) or 'arena'}.d")


class ArenaServer:
    """The server: its store, lobby, registry, referee and organiser services, runs, ladder."""

    def __init__(self, store: Store, data_dir: Path, options: ServeOptions) -> None:
        self.store = store
        self.options = options
        self.data_dir = data_dir
        self.lobby = Lobby()
        self.registry = Registry(store, self.lobby, self.data_dir, options.sandbox,
                                 options.absent_after)
        self.referee: RefereeServer | None = None
        self.runs: Runs | None = None
        self.ladder: Ladder | None = None
        self.hub = SpectatorHub(organiser_view=True, min_delay=options.spectator_delay)
        self.boards = Boards(store)
        self.spectators: SpectatorServer | None = None
        self._ladder_task: asyncio.Task | None = None
        self._claim: Claim | None = None       # the database, held while serving
        self.organizer_hash = ""
        self.new_token: str | None = None   # shown once, when the database was created

    @classmethod
    async def start(cls, db: str | Path, options: ServeOptions = ServeOptions()) -> ArenaServer:
        """Open (or create) the database (a SQLite file or a PostgreSQL URL) and serve.
        :class:`StoreError` if the database cannot be had (a :class:`RefusedError` where
        it is none to serve, or another server's), :class:`ConfigError` if the rest
        cannot."""
        location = str(db)
        data_dir = options.data_dir or data_dir_for(location)
        try:   # made now: a file there made every hosted upload fail with a traceback
            # and its owner's alone: strangers' uploaded bots and their output (an
            # existing folder keeps its mode)
            data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"the data folder {data_dir} cannot be made: "
                              f"{exc.strerror or exc}") from None
        # its schema brought up to date only once it is this server's: a newer arena
        # started beside a running server (an upgrade) was refused, but had migrated
        # the database under it, and the older arena could then not open it again
        store = open_store(location, migrate=False)
        try:
            claim = store.claim()              # one server at a time on a database
        except StoreError:
            store.close()
            raise
        try:
            store.migrate()
            if options.ladder:    # before anything listens
                ladder_module.check_settings(store, options.table_size, options.move_ms,
                                             options.bank_ms)
        except (StoreError, ConfigError):
            claim.release()
            store.close()
            raise
        app = cls(store, data_dir, options)
        app._claim = claim
        token = new_token()
        if store.set_server_value("organizer_token_hash", token_hash(token)):
            app.new_token = token
        app.organizer_hash = store.server_value("organizer_token_hash")
        try:
            app.referee = await RefereeServer.start(options.listen, [lambda s: add_to(s, app)],
                                                    options.tls, app.lobby)
            app.spectators = await SpectatorServer.start(
                app.hub, options.watch or default_spectators(options.listen),
                StoreRecords(store), app.organizer_hash, options.tls)
        except (OSError, ConfigError) as exc:
            if app.referee is not None:
                await app.referee.stop()
            store.close()
            claim.release()
            raise ConfigError(str(exc)) from None
        defaults = Settings(table_size=options.table_size, move_ms=options.move_ms,
                            bank_ms=options.bank_ms, duplicate_remote=options.duplicate_remote)
        app.runs = Runs(store, app.registry, app.referee, defaults, options.concurrency,
                        options.reconnect_grace, app.hub, options.executor,
                        options.executor_address)
        app.runs.resume_unfinished()
        if options.ladder:
            app.ladder = Ladder(store, app.registry, app.referee, options.table_size,
                                options.move_ms, options.bank_ms, options.ladder_concurrency,
                                grace=options.reconnect_grace, hub=app.hub,
                                warm=options.ladder_warm, rest=options.ladder_rest)
            app._ladder_task = asyncio.create_task(app.ladder.run())
            app._ladder_task.add_done_callback(_said_if_failed)
        return app

    @property
    def address(self) -> str:
        return self.referee.address

    def ladder_wakeup(self) -> None:
        if self.ladder is not None:
            self.ladder.wakeup()

    def new_tournament_name(self) -> str:
        """A name from the time, numbered when it is taken (two tournaments started in one
        second: "t-20250301-120000", then "t-20250301-120000-2")."""
        base = time.strftime("t-%Y%m%d-%H%M%S")
        name, n = base, 1
        while name in self.runs.runs or self.store.has_tournament(name):
            n += 1
            name = f"{base}-{n}"
        return name

    async def ladder_standings(self) -> Standings:
        """The ladder's standings, as last made (made again meanwhile)."""
        if not self._has_ladder():
            return standings([], [])
        return (await self.boards.board(ladder_module.NAME, fresh=False))[1]

    def _has_ladder(self) -> bool:
        return self.store.has_tournament(ladder_module.NAME)

    async def standings(self, name: str | None) -> Board:
        """A tournament's (the latest, without a name) or the ladder's standings, made off
        the event loop (:class:`Boards`): a tournament's over every match stored; the
        ladder's, which never ends, as last made (over the matches it says) when there is
        one, the next made meanwhile."""
        try:
            return await self.boards.board(name, fresh=name != ladder_module.NAME)
        except NotFoundError:
            if name is None:
                raise NotFoundError("no tournament on this server yet") from None
            # the store's error names the database's path, the organiser's business not
            raise not_found(name, "on this server", self.store) from None

    async def claim_lost(self) -> None:
        """Return once this server no longer holds its database (see :meth:`Claim.held`):
        a PostgreSQL restart ended the session that held it, and another arena serve
        took it before this one could again. Two servers would deal the same ladder
        matches and resume the same tournaments, each refusing the other's results."""
        if self._claim is not None:
            await self._claim.lost(CLAIM_CHECK_S)

    async def stop(self) -> None:
        """Stop the ladder and the tournaments (they resume at the next start), say goodbye
        to the hosted bots, close the database. Remote bots are not told goodbye: their
        streams just end, and they try to reconnect for a while (the SDKs for 10 s), so a
        quick restart keeps them."""
        if self._ladder_task is not None:
            self._ladder_task.cancel()
            await asyncio.gather(self._ladder_task, return_exceptions=True)
        if self.runs is not None:
            await self.runs.stop()
        if self.spectators is not None:
            await self.spectators.stop()
        if self.referee is not None:
            self.registry.disconnect("the server is stopping; it may be back soon")
            await self.referee.stop("the server is stopping")
        await asyncio.get_running_loop().run_in_executor(None, self.boards.close)
        self.store.close()
        if self._claim is not None:
            self._claim.release()



def default_spectators(listen: str) -> str:
    """Spectators' default address: the referee's host, the next port (any free port when
    the referee's was chosen by the system); beside a unix socket, one named as it and
    ``.spectators``."""
    if listen.startswith(("unix:", "unix-abstract:")):
        return f"{listen}.spectators"
    host, port = listen.rsplit(":", 1)
    return f"{host}:{int(port) + 1}" if int(port) else f"{host}:0"


__all__ = ["ArenaServer", "ServeOptions"]


def _said_if_failed(task: asyncio.Task) -> None:
    """A ladder that stops on an error says so (its task's error was seen by no one)."""
    exc = None if task.cancelled() else task.exception()
    if exc is not None:
        log.error("the ladder stopped: %s", exc, exc_info=exc)
