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
from arena.referee.results import MatchResult, MatchSpec, VerdictKind
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


#: A bot that fails to start this many times in a row is not tried again: its seat gets
#: its verdict at once in the games left (each try waits up to the connect timeout).
MAX_START_FAILURES = 3


class LocalArena:
    """A running referee and one launched bot per seat (fixed seating)."""

    def __init__(self, server: RefereeServer, bots: list[LocalBot]) -> None:
        self.server = server
        self.bots = bots
        self.labels = [b.label for b in bots]
        self.runner: MatchRunner | None = None   # the match in flight, if any
        #: per seat: why its bot last failed to start (absent: it is running), said in
        #: full for whoever runs it (str) and in a verdict's words (``public``)
        self.start_errors: dict[int, BotStartError] = {}
        self._failures = [0] * len(bots)
        self._just_opened = True   # the first game does not try again a bot just failed

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, bots: Sequence[str | Path | BotManifest], listen: str = "unix",
                   log_dir: Path | None = None, connect_timeout: float = 10.0,
                   sandbox: SandboxConfig = SandboxConfig()) -> AsyncIterator[LocalArena]:
        """Start a referee and every bot (all at once), wait until each is connected or has
        failed; stop all on exit. A bot that fails to start or connect is in
        :attr:`start_errors` and its seat gets a verdict (see :meth:`play`); only when no
        bot starts at all is that a :class:`BotStartError`. :class:`OSError` if the referee
        cannot listen on ``listen``."""
        manifests = [b if isinstance(b, BotManifest) else load_manifest(b) for b in bots]
        server = await RefereeServer.start(listen)   # OSError if it cannot listen there
        labels = seat_labels([m.name for m in manifests])
        factory = sandbox.factory()
        local = cls(server, [LocalBot(m, server.lobby, server.address, label, log_dir,
                                      connect_timeout, factory=factory,
                                      open_socket=server.bot_socket)
                             for m, label in zip(manifests, labels)])
        try:
            await local._ensure_all(start=True)
            if len(local.start_errors) == len(local.bots):
                raise BotStartError("; ".join(map(str, local.start_errors.values())))
            yield local
        finally:
            await local.close()

    async def _ensure_all(self, start: bool = False) -> list:
        """Each seat's live session, starting (or restarting) bots at once; None for a seat
        whose bot failed to start (its reason in :attr:`start_errors`) or has failed too
        often to be tried again."""
        async def one(seat: int, bot: LocalBot):
            if self._failures[seat] >= MAX_START_FAILURES or (
                    self._failures[seat] and self._just_opened):
                return None
            try:
                session = await (bot.start() if start else bot.ensure())
            except BotStartError as exc:
                self._failures[seat] += 1
                self.start_errors[seat] = exc
                return None
            self._failures[seat] = 0
            self.start_errors.pop(seat, None)
            return session

        return list(await asyncio.gather(*(one(i, b) for i, b in enumerate(self.bots))))

    async def play(self, spec: MatchSpec, listeners: Sequence[MatchListener] = ()) -> MatchResult:
        """Play one match; a bot that died since the last match is restarted first. A seat
        whose bot cannot be (re)started starts with a ``disconnected`` verdict that says
        why, and the others play. Cancelled, the match has ended (``self.runner.result``,
        ``aborted`` unless it was over) when this raises."""
        given_up = [f >= MAX_START_FAILURES for f in self._failures]
        sessions = await self._ensure_all()
        self._just_opened = False
        absent = {}
        for seat, session in enumerate(sessions):
            if session is None:
                note = (f" (not tried again after {self._failures[seat]} failures)"
                        if given_up[seat] else "")
                absent[seat] = (VerdictKind.DISCONNECTED,
                                f"could not start{note}: {self.start_errors[seat].public}")
        self.runner = MatchRunner(spec, sessions, listeners, absent)
        result = await self.runner.run()
        self.runner = None
        return result

    def output_of(self, seat: int) -> str:
        """The last lines of the stderr of ``seat``'s bot (its last process), for whoever
        runs it: ``"; stderr: ..."``, or ``""``."""
        process = self.bots[seat].process
        return "" if process is None else process.stderr_note()

    async def close(self) -> None:
        """Stop the referee (its bots told the match is over) and every bot's process."""
        await self.server.stop("the match is over")
        await asyncio.gather(*(bot.stop() for bot in self.bots), return_exceptions=True)
