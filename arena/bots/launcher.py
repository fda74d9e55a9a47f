"""Local bots: launch a bot process from its manifest, wait for it to connect, restart it.

Used by ``arena match`` and tournaments: a bot process is started once and plays many
matches over one connection; if it dies, it is started again before its next match.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from arena.bots.manifest import BotManifest
from arena.bots.process import ArenaStartError, BotProcess, SocketOpener, log_name
from arena.bots.sandbox import ProcessFactory
from arena.referee.lobby import Lobby
from arena.referee.session import BotSession


class BotStartError(RuntimeError):
    """A bot could not be started or did not connect; the message says why, to whoever
    runs it (its folder, the last lines of its stderr). ``public`` says it for a verdict,
    which the other seats, the spectators and the stored record are given: the arena's
    words only (see :meth:`BotProcess.describe_exit`)."""

    def __init__(self, message: str, public: str | None = None) -> None:
        super().__init__(message)
        self.public = message if public is None else public


class LocalBot:
    """One seat's bot: its manifest, its token in the lobby, its process and session."""

    def __init__(self, manifest: BotManifest, lobby: Lobby, referee: str, label: str,
                 log_dir: Path | None = None, connect_timeout: float = 10.0,
                 name: str | None = None, factory: ProcessFactory | None = None,
                 open_socket: SocketOpener | None = None) -> None:
        """``label`` names this process in logs (and its stderr file); ``name`` is what the
        bot is welcomed as (default: the label). They differ in tournaments, where a bot
        runs as several processes and the number of each is nothing the bot should see."""
        self.manifest = manifest
        self.lobby = lobby
        self.referee = referee
        self.label = label
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.registration = lobby.register(name or label)
        self.factory = factory
        self.open_socket = open_socket
        self.process: BotProcess | None = None

    @property
    def session(self) -> BotSession | None:
        return self.registration.session

    @property
    def alive(self) -> bool:
        s = self.session
        return (self.process is not None and self.process.returncode is None
                and s is not None and not s.closed)

    async def start(self) -> BotSession:
        """Launch the process and wait until it connects; :class:`BotStartError` if it
        exits first or does not connect within the connect timeout."""
        if self.process is not None:
            await self.process.stop()
        log = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = self.log_dir / log_name(self.label)
        self.process = BotProcess(self.manifest, self.referee, self.registration.token, log,
                                  self.label, self.factory, self.open_socket)
        try:
            await self.process.start()
        except ArenaStartError:
            raise                               # not the bot's doing: no verdict against it
        except OSError as exc:   # its command cannot be run: its path is the organiser's
            why = f": {exc.strerror}" if exc.strerror else ""
            raise BotStartError(str(exc), f"bot {self.label}'s process could not be "
                                          f"started{why}") from None
        connect = asyncio.ensure_future(self.lobby.wait_session(self.registration.token,
                                                                self.connect_timeout))
        exited = asyncio.ensure_future(self.process.wait_exit())
        try:
            done, _ = await asyncio.wait({connect, exited}, return_when=asyncio.FIRST_COMPLETED)
            if connect in done:
                try:
                    session = connect.result()
                except TimeoutError:
                    running = self.process.returncode is None
                    await self.process.stop()  # so say "stopped", not "killed by SIGTERM"
                    how = "it was stopped" if running else self.process.describe_exit()
                    late = f"did not connect within {self.connect_timeout:g} s; {how}"
                    raise BotStartError(f"bot {self.label} ({self.manifest.folder}) {late}"
                                        f"{self.process.stderr_note()}",
                                        f"bot {self.label} {late}") from None
                session.process = self.process
                return session
            early = f"{self.process.exit_status()} before connecting"
            raise BotStartError(f"bot {self.label} ({self.manifest.folder}) {early}"
                                f"{self.process.stderr_note()}{self._sdk_hint()}",
                                f"bot {self.label} {early}")
        finally:
            connect.cancel()
            exited.cancel()

    def _sdk_hint(self) -> str:
        """What to do when a Python bot was started by a Python without the SDK
        (``command = "python3 bot.py"``: "No module named 'ono99'", and no more said)."""
        if (self.manifest.command[0] != sys.executable
                and any("No module named 'ono99'" in line for line in self.process.stderr_tail)):
            return (". The Python SDK is installed in the Python running the arena: start the "
                    "bot with {python} in bot.toml's command ({python} bot.py)")
        return ""

    async def ensure(self) -> BotSession:
        """The live session, restarting the bot if its process or stream died."""
        if self.alive:
            return self.session
        return await self.start()

    async def stop(self, goodbye: str | None = None) -> None:
        """Stop the process; with ``goodbye``, first tell its session (if live) that the
        referee is done with it, so it can exit by itself. Its token is then void."""
        session = self.session
        if goodbye is not None and session is not None:
            await session.say_goodbye(goodbye)
        if self.process is not None:
            await self.process.stop()
        self.lobby.unregister(self.registration.token)
