"""Seat providers: where a bot's seat at a match comes from.

An executor asks each bot's :class:`SeatProvider` for a seat before a match and gives it
back after; it does not care whether the seat is a process the arena launches
(:class:`ProcessSeats`: sandboxed by default, started on demand, reused within a phase,
restarted after a crash, retired after too many) or a bot connected from elsewhere with
its token (:class:`RemoteSeats`: one match at a time, waited for a bounded time, else the
seat is *absent*). A remote bot cannot be started afresh, so its tables play plain
deals: the tournament's settings say which bots are remote, and the schedule decides
(:mod:`arena.tournament.schedule`).
"""

from __future__ import annotations

import abc
import asyncio
import time
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.bots.launcher import BotStartError, LocalBot
from arena.bots.process import ArenaStartError, BotProcess
from arena.bots.manifest import BotManifest
from arena.bots.sandbox import ProcessFactory
from arena.referee.lobby import Lobby
from arena.referee.results import MatchResult, Verdict, VerdictKind
from arena.referee.runner import Reconnect
from arena.referee.server import RefereeServer
from arena.referee.session import BotSession

#: Called with a bot's label and the reason, when it is retired.
OnRetire = Callable[[str, str], None]


@dataclass
class Seat:
    """A leased seat: the session that plays it, or why there is none (a verdict kind and
    its detail: the seat forfeits at the start of the match)."""

    session: BotSession | None
    absent: tuple[str, str] | None = None
    handle: object = field(default=None, repr=False)   # the provider's own
    reconnect: Reconnect | None = field(default=None, repr=False)   # a bot that may come back


#: Crashes (or failed starts) that retire a bot by default (``--retire-after``)
RETIRE_AFTER = 3


def retire_reason(crashes: int, last: str) -> str:
    """Why a bot was retired for its crashes, as its later seats' verdicts say."""
    return f"retired after {crashes} crashes or failed starts (last: {last})"


class Retirements:
    """The one rule for retiring a crashing bot, whichever executor plays its matches: a
    bot whose seats got ``after`` *crashed* verdicts (a crash mid-match, or a process that
    failed to start) is retired for the rest of the run, and its later seats forfeit.

    Counted from results, so it holds where the processes are not (a worker process, a
    Ray node): the executor that sees the results keeps the ledger and retires the bot on
    every provider of it. Bots are keyed by whatever names them to that executor (an
    index into the tournament's bots, a server's display name); ``label_of`` turns a key
    into the name ``on_retire`` is told."""

    def __init__(self, after: int = RETIRE_AFTER, on_retire: OnRetire | None = None,
                 label_of: Callable[[Hashable], str] = str) -> None:
        self.after = after
        self.on_retire = on_retire
        self.label_of = label_of
        self.crashes: Counter[Hashable] = Counter()
        self.retired: dict[Hashable, str] = {}

    def retire(self, bot: Hashable, reason: str) -> bool:
        """Retire ``bot`` for a reason of its own (removed from a server), not crashes;
        whether it was not retired already. ``on_retire`` is not told: whoever retired it
        says so."""
        if bot in self.retired:
            return False
        self.retired[bot] = reason
        return True

    def pardon(self, bot: Hashable) -> None:
        """Forget ``bot``'s crashes and retirement: it starts counting afresh (a ladder's
        bot back from sitting out for them)."""
        self.crashes.pop(bot, None)
        self.retired.pop(bot, None)

    def observe(self, bots: Sequence[Hashable], result: MatchResult | None) -> list[tuple[Hashable, str]]:
        """Count a finished match's crashes (``bots``: the key of each seat); the bots it
        retires, each with its reason (``on_retire`` has heard of them)."""
        newly = []
        for verdict in () if result is None else result.verdicts:
            if verdict.kind != VerdictKind.CRASHED:
                continue
            bot = bots[verdict.seat]
            self.crashes[bot] += 1
            if bot not in self.retired and self.crashes[bot] >= self.after:
                reason = retire_reason(self.crashes[bot], verdict.detail)
                self.retired[bot] = reason
                newly.append((bot, reason))
                if self.on_retire is not None:
                    self.on_retire(self.label_of(bot), reason)
        return newly


class SeatProvider(abc.ABC):
    """The seats of one bot."""

    label: str = ""
    #: whether crashes retire it (:class:`Retirements`): a process the arena starts, yes;
    #: a remote bot's dropped connection is its author's to fix, and it is absent instead
    retires_on_crashes: bool = True
    #: whether it runs processes of its own, which hold memory between matches (a ladder
    #: keeps only so many warm); a remote bot's run on its author's machine
    runs_processes: bool = False
    retired: bool = False
    retire_reason: str = ""

    def retire(self, reason: str) -> None:
        """No more matches for this bot: its seats are forfeited with ``reason``."""
        self.retired = True
        self.retire_reason = reason

    def enter_phase(self, phase: int) -> None:
        """The first match of ``phase`` is starting (plans come phase by phase)."""

    @abc.abstractmethod
    async def lease(self, phase: int = 0) -> Seat:
        """A seat for the next match, a match of ``phase`` (of the schedule's phases)."""

    @abc.abstractmethod
    def release(self, seat: Seat, verdict: Verdict | None) -> None:
        """The match is over; ``verdict`` is this seat's, if it got one."""

    @abc.abstractmethod
    async def close(self, goodbye: str | None = None) -> None:
        """Nothing of this bot left running; ``goodbye``: its processes are told that
        first, and so end at once by themselves."""


def _cpu_watched(process: BotProcess) -> bool:
    """Whether its CPU time is worth reading: a walk of its processes in /proc costs about
    0.2 ms (twice a match, in the referee's event loop), and a process that could not have
    used a third of its CPU time limit with every core for its whole life is not near it
    (half of it, or its most in one match twice over: see ProcessSeats._worn)."""
    return (process.cpu_limit is not None
            and 3 * process.cpu_seconds_at_most() >= process.cpu_limit)


_WORN = ("this process has used much of its output or CPU time limit: a new one plays the "
         "next match")


def _output_worn(bot: LocalBot) -> bool:
    """Whether its process has written half its output limit (as ProcessSeats._worn
    judges at a match's end; checked again as a free process is leased, for what it
    wrote while idle)."""
    process = bot.process
    limit = None if process is None else process.output_limit
    return limit is not None and 2 * process.output_written >= limit


class ProcessSeats(SeatProvider):
    """A bot launched by the arena from its folder: a process per concurrent match, started
    on demand (through ``factory``: the sandbox by default), reused within a phase and
    told goodbye at the next, restarted after a crash. Its seat after a failed start
    forfeits as *crashed*; whoever sees the results retires it (:class:`Retirements`)."""

    runs_processes = True

    def __init__(self, manifest: BotManifest, label: str, referee: RefereeServer,
                 factory: ProcessFactory, log_dir: Path | None = None,
                 connect_timeout: float = 10.0) -> None:
        self.manifest = manifest
        self.label = label
        self.referee = referee
        self.factory = factory
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.instances: list[LocalBot] = []      # every process not stopped
        self.free: list[LocalBot] = []           # idle, of the current phase
        self.phase = 0
        self.started = 0                          # processes made (numbered in their logs)
        self._phase_of: dict[LocalBot, int] = {}
        self._stopping: set[asyncio.Task] = set()
        #: output its process had written when its seat was leased, and the most it wrote
        #: in one seat: see _worn
        self._output_at_lease: dict[LocalBot, int] = {}
        self._most_output: dict[LocalBot, int] = {}
        #: the same for the CPU time of its busiest process
        self._cpu_at_lease: dict[LocalBot, float] = {}
        self._most_cpu: dict[LocalBot, float] = {}

    async def lease(self, phase: int = 0) -> Seat:
        if self.retired:
            return Seat(None, (VerdictKind.RETIRED, self.retire_reason))
        # a process plays the matches of one phase: the match's, not the provider's now.
        # They differ where another lane began the next phase while this match's seats
        # were being leased (a lease that starts a process waits for it), or where a
        # match of an earlier phase is dealt again (its referee was lost): a process
        # tagged with the new phase played the old phase's rotation of a deal, was kept,
        # and met that deal's next rotation later in the phase
        bot = None
        while phase == self.phase and self.free and bot is None:
            bot = self.free.pop()
            if _output_worn(bot):   # it wrote while idle (a thread of its own): not reused
                self._drop(bot)
                self._stop(bot, _WORN)
                bot = None
        if bot is None:
            bot = self._new(phase)
        try:
            session = await bot.ensure()
        except BotStartError as exc:
            self._back(bot)
            return Seat(None, (VerdictKind.CRASHED, exc.public))
        except ArenaStartError:
            self._back(bot)        # tried again when the arena can start processes
            raise
        if bot.process is not None:
            self._output_at_lease[bot] = bot.process.output_at_match = bot.process.output_written
            if _cpu_watched(bot.process):
                self._cpu_at_lease[bot] = bot.process.cpu_seconds()
        return Seat(session, handle=bot)

    def release(self, seat: Seat, verdict: Verdict | None) -> None:
        if seat.handle is not None:
            self._back(seat.handle)

    def enter_phase(self, phase: int) -> None:
        """No process of an earlier phase plays again: idle ones are stopped now, busy ones
        when they come back."""
        self.phase = phase
        idle, self.free = self.free, []
        for bot in idle:
            self._drop(bot)
            self._stop(bot)

    async def close(self, goodbye: str | None = None) -> None:
        await asyncio.gather(*(b.stop(goodbye) for b in self.instances), *self._stopping,
                             return_exceptions=True)

    def _new(self, phase: int) -> LocalBot:
        self.started += 1
        label = self.label if self.started == 1 else f"{self.label}#{self.started}"
        bot = LocalBot(self.manifest, self.referee.lobby, self.referee.address, label,
                       self.log_dir, self.connect_timeout, name=self.manifest.name,
                       factory=self.factory, open_socket=self.referee.bot_socket)
        self.instances.append(bot)
        self._phase_of[bot] = phase
        return bot

    def _worn(self, bot: LocalBot) -> bool:
        """Whether its process has written so much of its output limit, or used so much
        of its CPU time limit (both hold for its whole life), that another match might
        take it past: half of it, or more than the limit less twice the most it took in
        one match. A server's ladder keeps a process between matches for days: one
        writing a little each move was stopped in the middle of a match once it had
        written the limit, a *crashed* verdict. (The output limit now stops a process
        only for a match's own output, BotProcess.output_at_match: a match longer than
        twice its longest one takes it past the limit, and the process plays on, unlogged,
        to its end.)"""
        process = bot.process
        start = self._output_at_lease.pop(bot, None)
        cpu_start = self._cpu_at_lease.pop(bot, None)
        if process is None:
            return False
        return (self._past_half(bot, self._most_output, start, process.output_written,
                                process.output_limit)
                # the CPU limit too holds for each process's whole life: a thinking bot
                # reused match after match was stopped mid-match once it had used it up,
                # a *crashed* verdict (retired after 3) on a long phase or a ladder
                or (_cpu_watched(process) and self._past_half(
                    bot, self._most_cpu, cpu_start, process.cpu_seconds(), process.cpu_limit)))

    @staticmethod
    def _past_half(bot: LocalBot, most: dict, start: float | None, used: float,
                   limit: float | None) -> bool:
        """Whether ``used`` of a lifetime ``limit`` is half of it, or too near it for
        twice the most one seat took (``most``, updated from ``start``)."""
        if limit is None:
            return False
        if start is not None and used >= start:
            most[bot] = max(most.get(bot, 0), used - start)
        return 2 * used >= limit or used + 2 * most.get(bot, 0) > limit

    def _back(self, bot: LocalBot) -> None:
        if self._worn(bot):   # a fresh process plays its next match
            self._drop(bot)
            self._stop(bot, _WORN)
        elif self._phase_of.get(bot) == self.phase:
            self.free.append(bot)
        else:
            self._drop(bot)
            self._stop(bot)

    def _drop(self, bot: LocalBot) -> None:
        if bot in self.instances:
            self.instances.remove(bot)
        self._phase_of.pop(bot, None)
        self._output_at_lease.pop(bot, None)
        self._most_output.pop(bot, None)
        self._cpu_at_lease.pop(bot, None)
        self._most_cpu.pop(bot, None)

    def _stop(self, bot: LocalBot, goodbye: str = "this phase of the tournament is over") -> None:
        """Say goodbye to a process of a past phase (or a worn one) and stop it, without
        holding up the matches (its shutdown grace runs in the background)."""
        task = asyncio.create_task(bot.stop(goodbye=goodbye))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)


class RetiredSeats(SeatProvider):
    """A bot that plays no more (one removed from a server before its tournament resumed):
    every seat of it forfeits with ``reason``."""

    def __init__(self, label: str, reason: str) -> None:
        self.label = label
        self.retire(reason)

    async def lease(self, phase: int = 0) -> Seat:
        return Seat(None, (VerdictKind.RETIRED, self.retire_reason))

    def release(self, seat: Seat, verdict: Verdict | None) -> None:
        pass

    async def close(self, goodbye: str | None = None) -> None:
        pass


class RemoteSeats(SeatProvider):
    """A bot that connects from elsewhere with its token (registered in ``lobby`` under its
    token's hash). It plays one match at a time; a seat waits while it is busy, and up to
    ``absent_after`` seconds for it to connect, after which the seat is *absent* for that
    match; once found absent, it is not waited for again until it connects (each of its
    matches waited the whole time again, holding a slot of the tournament's concurrency:
    one bot gone offline slowed a whole tournament to a match every 30 s). Its memory
    cannot be reset: its tables play plain deals (:mod:`arena.tournament.schedule`)."""

    retires_on_crashes = False

    def __init__(self, label: str, lobby: Lobby, token_hash: str, absent_after: float = 30.0) -> None:
        self.label = label
        self.lobby = lobby
        self.token_hash = token_hash
        self.absent_after = absent_after
        self._turn = asyncio.Lock()   # one match at a time
        self._away = False            # found absent, and not connected since

    @property
    def busy(self) -> bool:
        """Playing (or waiting to play) a match now."""
        return self._turn.locked()

    async def lease(self, phase: int = 0) -> Seat:
        if self.retired:
            return Seat(None, (VerdictKind.RETIRED, self.retire_reason))
        await self._turn.acquire()
        if self.retired:   # removed while this seat waited for the bot's other match
            self._turn.release()
            return Seat(None, (VerdictKind.RETIRED, self.retire_reason))
        started = time.monotonic()
        try:
            session = await self.lobby.wait_session_hash(
                self.token_hash, 0 if self._away else self.absent_after)
        except TimeoutError:
            self._turn.release()
            if self._away:
                return Seat(None, (VerdictKind.ABSENT, "not connected since it was found "
                                   "absent from an earlier match"))
            self._away = True
            return Seat(None, (VerdictKind.ABSENT, f"not connected within "
                               f"{time.monotonic() - started:.0f} s of its match"))
        except BaseException:
            # its tournament cancelled (or the server stopping) while the bot was waited
            # for: held on, the lock kept the bot out of every later match of the server
            self._turn.release()
            raise
        self._away = False
        return Seat(session, handle=self._turn,
                    reconnect=lambda timeout: self.lobby.wait_session_hash(self.token_hash, timeout))

    def release(self, seat: Seat, verdict: Verdict | None) -> None:
        if seat.handle is not None:
            self._turn.release()

    async def close(self, goodbye: str | None = None) -> None:
        pass
