"""A referee with locally launched bots: what ``arena match`` and the tests play on.

    async with LocalArena.open(["bots/counter", "bots/random"]) as local:
        result = await local.play(spec)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from arena.bots.launcher import BotStartError, LocalBot
from arena.bots.manifest import BotManifest, load_manifest
from arena.bots.sandbox import SandboxConfig
from arena.referee.results import MatchResult, MatchSpec
from arena.referee.listeners import MatchListener
from arena.referee.runner import MatchRunner
from arena.referee.server import RefereeServer


def seat_labels(names: Sequence[str]) -> list[str]:
    """Names for seats; a bot sitting more than once gets #2, #3..."""
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return labels


class LocalArena:
    """A running referee and one launched bot per seat (fixed seating)."""

    def __init__(self, server: RefereeServer, bots: list[LocalBot]) -> None:
        self.server = server
        self.bots = bots
        self.labels = [b.label for b in bots]
        self.runner: MatchRunner | None = None   # the match in flight, if any

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, bots: Sequence[str | Path | BotManifest], listen: str = "unix",
                   log_dir: Path | None = None, connect_timeout: float = 10.0,
                   sandbox: SandboxConfig = SandboxConfig()) -> AsyncIterator[LocalArena]:
        """Start a referee and every bot, wait until all are connected; stop all on exit.
        Raises :class:`BotStartError` if a bot fails to start or connect, :class:`OSError`
        if the referee cannot listen on ``listen``."""
        manifests = [b if isinstance(b, BotManifest) else load_manifest(b) for b in bots]
        server = await RefereeServer.start(listen)   # OSError if it cannot listen there
        labels = seat_labels([m.name for m in manifests])
        factory = sandbox.factory()
        local = cls(server, [LocalBot(m, server.lobby, server.address, label, log_dir,
                                      connect_timeout, factory=factory,
                                      referee_socket=server.socket_path)
                             for m, label in zip(manifests, labels)])
        try:
            for bot in local.bots:
                await bot.start()
            yield local
        finally:
            await local.close()

    async def play(self, spec: MatchSpec, listeners: Sequence[MatchListener] = ()) -> MatchResult:
        """Play one match; a bot that died since the last match is restarted first (if it
        cannot be, its seat starts with a ``disconnected`` verdict). Cancelled, the match
        has ended (``self.runner.result``, ``aborted`` unless it was over) when this raises."""
        sessions = []
        for bot in self.bots:
            try:
                sessions.append(await bot.ensure())
            except BotStartError:
                sessions.append(None)
        self.runner = MatchRunner(spec, sessions, listeners)
        result = await self.runner.run()
        self.runner = None
        return result

    async def close(self) -> None:
        await self.server.stop("the match is over")
        await asyncio.gather(*(bot.stop() for bot in self.bots), return_exceptions=True)
