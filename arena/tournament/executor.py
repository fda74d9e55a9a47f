"""The executor: takes planned matches, plays them, hands back results.

One small interface (:class:`Executor`) so that a distributed engine can run matches on
many machines later. :class:`LocalExecutor` plays them in this process: one referee,
``concurrency`` matches at once (asyncio tasks), and for each bot a pool of processes
started on demand (at most one per match in flight) and reused across matches. A bot
whose process crashes is restarted before its next match and the crash is counted; a bot
that crashes (or fails to start) ``retire_after`` times is retired: its remaining matches
are played without it, its seat forfeited with a ``retired`` verdict.

Processes belong to a phase of the schedule (see :mod:`arena.tournament.schedule`): when
the first match of a new phase starts, every process of the earlier one is told goodbye
and stopped (at once if idle, else as its match ends), and the new phase's matches get
fresh processes, so no process plays two rotations of one deal. Plans arrive phase by
phase, so an earlier phase never comes back.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.bots.launcher import BotStartError, LocalBot
from arena.bots.manifest import BotManifest
from arena.bots.sandbox import SandboxConfig
from arena.referee.results import MatchResult, MatchSpec, VerdictKind
from arena.referee.runner import MatchListener, MatchRunner
from arena.referee.server import RefereeServer
from arena.tournament.schedule import PlannedMatch

#: Called with each finished match, in the executor's event loop.
ResultSink = Callable[[PlannedMatch, MatchResult], Awaitable[None] | None]


class Executor(abc.ABC):
    """Plays planned matches and reports each result as it finishes."""

    @abc.abstractmethod
    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        """Play every plan (``spec_of`` makes its MatchSpec); call ``on_result`` for each."""


@dataclass
class BotPool:
    """The processes of one bot, started on demand and reused within a phase."""

    manifest: BotManifest
    label: str
    instances: list[LocalBot] = field(default_factory=list)   # every process not stopped
    free: list[LocalBot] = field(default_factory=list)        # idle, of the current phase
    phase: int = 0
    started: int = 0                   # processes made so far (they are numbered in logs)
    crashes: int = 0                   # crashes mid-match and failed (re)starts
    retired: bool = False
    retire_reason: str = ""
    _phase_of: dict[LocalBot, int] = field(default_factory=dict)   # process -> its phase

    def retire(self, reason: str) -> None:
        """No more matches for this bot: its seats are forfeited with ``reason``."""
        self.retired = True
        self.retire_reason = reason

    def add(self, bot: LocalBot) -> None:
        """A new process, of the current phase."""
        self.instances.append(bot)
        self._phase_of[bot] = self.phase

    def enter_phase(self, phase: int) -> list[LocalBot]:
        """Move to ``phase``; returns the idle processes of the earlier one, to stop
        (processes in a match are stopped when :meth:`release` gets them back)."""
        self.phase = phase
        idle, self.free = self.free, []
        for bot in idle:
            self.drop(bot)
        return idle

    def release(self, bot: LocalBot) -> bool:
        """A process is back from a match: True if it may play again (its phase is
        current), False if it must be stopped."""
        if self._phase_of.get(bot) == self.phase:
            self.free.append(bot)
            return True
        self.drop(bot)
        return False

    def drop(self, bot: LocalBot) -> None:
        if bot in self.instances:
            self.instances.remove(bot)
        self._phase_of.pop(bot, None)


def retire_reason(crashes: int, last: str) -> str:
    return f"retired after {crashes} crashes or failed starts (last: {last})"


class LocalExecutor(Executor):
    """Matches in this process, ``concurrency`` at once, on one referee."""

    def __init__(self, manifests: Sequence[BotManifest], labels: Sequence[str], concurrency: int,
                 listen: str = "unix", log_dir: Path | None = None, connect_timeout: float = 10.0,
                 retire_after: int = 3, listeners: Sequence[MatchListener] = (),
                 on_retire: Callable[[str, str], None] | None = None,
                 sandbox: SandboxConfig = SandboxConfig()) -> None:
        self.pools = [BotPool(m, label) for m, label in zip(manifests, labels)]
        self.factory = sandbox.factory()
        self.concurrency = concurrency
        self.listen = listen
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.retire_after = retire_after
        self.listeners = list(listeners)
        self.on_retire = on_retire
        self.server: RefereeServer | None = None
        self.runners: set[MatchRunner] = set()
        self.phase = 0
        self._stopping: set[asyncio.Task] = set()   # processes of past phases being stopped

    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        self.server = await RefereeServer.start(self.listen)
        queue: asyncio.Queue[PlannedMatch] = asyncio.Queue()
        for plan in plans:
            queue.put_nowait(plan)
        try:
            workers = [asyncio.create_task(self._worker(queue, spec_of, on_result))
                       for _ in range(max(1, min(self.concurrency, len(plans))))]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                raise
        finally:
            await self.server.stop("the tournament is over")
            await asyncio.gather(*(b.stop() for pool in self.pools for b in pool.instances),
                                 *self._stopping, return_exceptions=True)

    async def _worker(self, queue: asyncio.Queue, spec_of, on_result: ResultSink) -> None:
        while not queue.empty():
            plan = queue.get_nowait()
            if plan.phase != self.phase:
                self._enter_phase(plan.phase)
            spec = spec_of(plan)
            seats = [self.pools[b] for b in plan.seats]
            leased: list[tuple[BotPool, LocalBot]] = []
            sessions = []
            absent: dict[int, tuple[str, str]] = {}
            try:
                for seat, pool in enumerate(seats):
                    if pool.retired:
                        sessions.append(None)
                        absent[seat] = (VerdictKind.RETIRED, pool.retire_reason)
                        continue
                    bot = await self._lease(pool)
                    leased.append((pool, bot))
                    try:
                        sessions.append(await bot.ensure())
                    except BotStartError as exc:
                        self._crash(pool, str(exc))
                        sessions.append(None)
                        absent[seat] = ((VerdictKind.RETIRED, pool.retire_reason) if pool.retired
                                        else (VerdictKind.CRASHED, str(exc)))
                runner = MatchRunner(spec, sessions, self.listeners, absent)
                self.runners.add(runner)
                try:
                    result = await runner.run()
                finally:
                    self.runners.discard(runner)
                for verdict in result.verdicts:
                    if verdict.kind == VerdictKind.CRASHED and verdict.seat not in absent:
                        self._crash(seats[verdict.seat], verdict.detail)
            finally:
                for pool, bot in leased:
                    if not pool.release(bot):
                        self._stop(bot)
            outcome = on_result(plan, result)
            if asyncio.iscoroutine(outcome):
                await outcome

    async def _lease(self, pool: BotPool) -> LocalBot:
        """A free process of the bot, or a new one (each worker holds at most one per bot)."""
        if pool.free:
            return pool.free.pop()
        pool.started += 1
        n = pool.started
        label = pool.label if n == 1 else f"{pool.label}#{n}"
        bot = LocalBot(pool.manifest, self.server.lobby, self.server.address, label,
                       self.log_dir, self.connect_timeout, name=pool.manifest.name,
                       factory=self.factory, referee_socket=self.server.socket_path)
        pool.add(bot)
        return bot

    def _enter_phase(self, phase: int) -> None:
        """The first match of ``phase`` is starting: no process of an earlier one plays again."""
        self.phase = phase
        for pool in self.pools:
            for bot in pool.enter_phase(phase):
                self._stop(bot)

    def _stop(self, bot: LocalBot) -> None:
        """Say goodbye to a process of a past phase and stop it, without holding up the
        matches (its shutdown grace runs in the background)."""
        task = asyncio.create_task(bot.stop(goodbye="this phase of the tournament is over"))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def _crash(self, pool: BotPool, detail: str) -> None:
        pool.crashes += 1
        if not pool.retired and pool.crashes >= self.retire_after:
            pool.retire(retire_reason(pool.crashes, detail))
            if self.on_retire is not None:
                self.on_retire(pool.label, pool.retire_reason)
