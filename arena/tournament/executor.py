"""The executor: takes planned matches, plays them, hands back results.

One small interface (:class:`Executor`), so that no tournament, schedule or rating code
knows where matches run; :mod:`arena.tournament.executors` chooses one by name (this
process, a referee process per core, a Ray cluster). :class:`LocalExecutor` is the
building block of them all: it plays matches in this process: one referee,
``concurrency`` matches at once (asyncio tasks), each seat leased from its bot's seat
provider (:mod:`arena.tournament.seats`: a process the arena launches, or a remote
connection) and given back after the match with the seat's verdict. When the first match
of a new phase of the schedule starts, every provider hears of it (processes of the
earlier phase are stopped: no process plays two rotations of one deal). Plans arrive
phase by phase, but a lane may still be leasing the seats of a match of the earlier
phase as another begins the next one, and a match whose referee was lost comes back,
dealt again: so each seat is leased for its match's own phase, and a process plays the
matches of one phase only.
"""

from __future__ import annotations

import abc
import asyncio
import bisect
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path

from arena.aio import to_the_end
from arena.bots.manifest import BotManifest
from arena.bots.sandbox import SandboxConfig
from arena.referee.listeners import MatchListener
from arena.referee.results import MatchResult, MatchSpec
from arena.referee.runner import MatchRunner
from arena.referee.server import RefereeServer
from arena.tournament.schedule import PlannedMatch
from arena.tournament.seats import ProcessSeats, Retirements, Seat, SeatProvider

#: Awaited with each finished match, in the executor's event loop (one result at a time
#: per lane; the sink stores it off the loop, see :class:`arena.store.writer.StoreWriter`).
ResultSink = Callable[[PlannedMatch, MatchResult], Awaitable[None]]


class Executor(abc.ABC):
    """Plays planned matches and reports each result as it finishes."""

    @abc.abstractmethod
    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        """Play every plan (``spec_of`` makes its MatchSpec); call ``on_result`` for each."""

    def retire(self, bot: int, reason: str) -> None:
        """Retire bot ``bot`` (its index in the bot list) from outside the run, as a server
        does with a bot removed from it: from now on its seats forfeit with ``reason``,
        wherever its matches are played (this run's, and any later one's)."""
        raise NotImplementedError(f"{type(self).__name__} cannot retire a bot")


#: A match is played again after the referee playing it died (a worker process, a Ray
#: actor or node), up to this many referees in all, the last of them playing it alone;
#: then the run stops with an error naming it (something in it kills referees). One rule
#: for every executor that re-deals (:class:`Deals`).
MAX_ATTEMPTS = 3


class Deals:
    """What is left to deal of a run's matches (by their index in its plan), and the rule
    for the matches a referee had when it died.

    Such matches are dealt again, first. A death counts against a match only if its bots
    were seated (``begun``). But a referee plays several matches at once, so a death names
    no one of them: the match that killed it, or one that was only there (a slow match is
    in flight at many deaths of referees killed for other reasons: a lost node, kill -9,
    a match beside it). A match with MAX_ATTEMPTS - 1 deaths is therefore played alone
    (:attr:`alone`), on a referee given nothing else until it is done: a death there is its
    own, and the MAX_ATTEMPTS-th stops the run.
    """

    def __init__(self, keys: Sequence[str], referees: str) -> None:
        """``keys``: the plan's matches' keys; ``referees``: what the referees are, in the
        error that stops a run ("workers", "actors")."""
        self._keys = keys
        self._referees = referees
        #: to deal, in order
        self.pending: deque[int] = deque(range(len(keys)))
        #: to deal, each to a referee playing nothing else, in the plan's order (whichever
        #: lane of a lost referee tells of its match first)
        self.alone: list[int] = []
        self._deaths: dict[int, int] = {}

    def __bool__(self) -> bool:
        return bool(self.pending or self.alone)

    def died(self, dealt: Sequence[int], begun: Collection[int]) -> RuntimeError | None:
        """A referee died with the matches ``dealt`` not yet reported (``begun``: those of
        them whose bots were seated): they go back, first. Returns the error that stops
        the run, naming a match that has now killed MAX_ATTEMPTS referees, the last while
        it played alone; else None."""
        again: list[int] = []
        for index in dealt:
            if index in begun:
                self._deaths[index] = deaths = self._deaths.get(index, 0) + 1
                if deaths >= MAX_ATTEMPTS:
                    return RuntimeError(
                        f"match {self._keys[index]} was in flight in {MAX_ATTEMPTS} referee "
                        f"{self._referees} that died, the last playing it alone; the run "
                        "stops (--resume plays what is left)")
            if self._deaths.get(index, 0) >= MAX_ATTEMPTS - 1:
                bisect.insort(self.alone, index)
            else:
                again.append(index)
        self.pending.extendleft(reversed(again))
        return None


#: Makes each bot's seat provider (in the order of the bot list) for the referee an
#: executor plays on.
SeatsFactory = Callable[[RefereeServer], Sequence[SeatProvider]]


def process_seats(manifests: Sequence[BotManifest], labels: Sequence[str],
                  sandbox: SandboxConfig = SandboxConfig(), log_dir: Path | None = None,
                  connect_timeout: float = 10.0) -> SeatsFactory:
    """Seats for bots launched from their folders (as local tournaments have them)."""
    factory = sandbox.factory()

    def make(referee: RefereeServer) -> list[SeatProvider]:
        return [ProcessSeats(m, label, referee, factory, log_dir, connect_timeout)
                for m, label in zip(manifests, labels)]

    return make


class LocalExecutor(Executor):
    """Matches in this process, ``concurrency`` at once, on one referee: its own, or the
    one given (a server's)."""

    def __init__(self, seats: SeatsFactory, concurrency: int, listen: str = "unix",
                 listeners: Sequence[MatchListener] = (), referee: RefereeServer | None = None,
                 grace: float = 10.0, retirements: Retirements | None = None) -> None:
        """``grace``: how long a remote bot whose connection dropped mid-match may take to
        come back (on its own clock). ``retirements``: the ledger that retires crashing
        bots (keyed by bot index); None where another process keeps it and calls
        :meth:`retire` (a worker of a distributed executor)."""
        self.make_seats = seats
        self.retirements = retirements
        self.retired: dict[int, str] = {}
        self.grace = grace
        self.concurrency = concurrency
        self.listen = listen
        self.listeners = list(listeners)
        self.referee = referee
        self.seats: list[SeatProvider] = []
        self.runners: set[MatchRunner] = set()
        self.phase = 0

    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        waiting = deque(plans)

        async def next_plan() -> PlannedMatch | None:
            return waiting.popleft() if waiting else None

        await self.play(next_plan, spec_of, on_result, max(1, min(self.concurrency, len(plans))))

    async def play(self, next_plan: Callable[[], Awaitable[PlannedMatch | None]],
                   spec_of: Callable[[PlannedMatch], MatchSpec], on_result: ResultSink,
                   lanes: int | None = None) -> None:
        """Play plans as ``next_plan`` gives them (None: no more), ``lanes`` matches at once
        (default: the concurrency), until it has none left or this is cancelled."""
        own = self.referee is None
        server = await RefereeServer.start(self.listen) if own else self.referee
        self.seats = list(self.make_seats(server))
        self.phase = 0   # as its new providers are: phases only go forward (_lane)
        for bot, reason in self.retired.items():
            if self.seats[bot].retires_on_crashes:
                self.seats[bot].retire(reason)
        try:
            workers = [asyncio.create_task(self._lane(next_plan, spec_of, on_result))
                       for _ in range(lanes or self.concurrency)]
            try:
                await asyncio.gather(*workers)
            except BaseException:
                for w in workers:
                    w.cancel()
                await to_the_end(asyncio.gather(*workers, return_exceptions=True))
                raise
        finally:
            # to the end, even if cancelled again meanwhile (a worker told to stop while it
            # stops on an error of its own): else bot processes outlive the run
            await to_the_end(self._close(server if own else None))

    async def _close(self, server: RefereeServer | None) -> None:
        """Stop the referee (``server``, if this run owns it) and every bot process."""
        if server is not None:
            await server.stop("the tournament is over")
        await asyncio.gather(*(p.close() for p in self.seats), return_exceptions=True)

    def retire(self, bot: int, reason: str) -> None:
        self.retired[bot] = reason
        if self.seats and self.seats[bot].retires_on_crashes:
            self.seats[bot].retire(reason)

    async def _lane(self, next_plan, spec_of, on_result: ResultSink) -> None:
        while (plan := await next_plan()) is not None:
            # forward only: a match of an earlier phase dealt again (its referee lost) has
            # processes of its own phase (lease); taken for the executor's, it stopped every
            # idle process of this one, and each of its own at the next plan
            if plan.phase > self.phase:
                self.phase = plan.phase
                for provider in self.seats:
                    provider.enter_phase(plan.phase)
            leased: list[tuple[SeatProvider, Seat]] = []
            result = runner = None
            try:
                leased = await lease_in_order([self.seats[b] for b in plan.seats], plan.seats,
                                              plan.phase)
                spec = spec_of(plan)   # once its bots are seated: the match begins
                runner = seated_runner(spec, leased, self.listeners, self.grace)
                self.runners.add(runner)
                try:
                    result = await runner.run()
                finally:
                    self.runners.discard(runner)
            finally:
                release_seats(leased, result)
            if runner is not None and runner.lost_to_pause is not None:
                seat, paused = runner.lost_to_pause
                raise ArenaPaused(
                    f"this arena was stopped for {paused:.0f} s (Ctrl-Z, SIGSTOP, a paused "
                    f"machine) during match {runner.spec.match_id}, and {runner.spec.names[seat]}'s "
                    "bot was lost meanwhile (bots leave a referee that does not answer): the "
                    "run stops rather than charge it, and that match is played again on resume")
            if self.retirements is not None:
                for bot, reason in self.retirements.observe(plan.seats, result):
                    self.retire(bot, reason)
            await on_result(plan, result)


class ArenaPaused(RuntimeError):
    """A bot was lost while the arena itself was stopped (:attr:`MatchRunner.lost_to_pause`):
    the run stops before its result is stored or counted, and a resume plays the match
    again from its seed, every seat with a fresh process. Played again at once, the other
    seats' processes, which had seen part of the deal (all of it, at its end), would have
    played it again."""


async def lease_in_order(providers: Sequence[SeatProvider], order: Sequence,
                         phase: int = 0) -> list[tuple[SeatProvider, Seat]]:
    """Lease each seat's provider for a match of ``phase``, in the order of ``order`` (a
    key per seat, e.g. the bot's index), not the seats': a provider that plays one match
    at a time (a remote bot) is waited for while the seats already leased are held, and
    two matches leasing the same bots in opposite seat orders would wait for each other
    forever. Returned by seat. On an error, the seats leased so far are released."""
    got: dict[int, tuple[SeatProvider, Seat]] = {}
    try:
        for i in sorted(range(len(providers)), key=lambda i: order[i]):
            got[i] = (providers[i], await providers[i].lease(phase))
    except BaseException:
        for provider, seat in got.values():
            provider.release(seat, None)
        raise
    return [got[i] for i in range(len(providers))]


def seated_runner(spec: MatchSpec, leased: Sequence[tuple[SeatProvider, Seat]],
                  listeners: Sequence[MatchListener], grace: float) -> MatchRunner:
    """The referee of ``spec`` on the seats :func:`lease_in_order` leased: the sessions,
    the seats found absent, and how a seat whose bot may reconnect is waited for. Whoever
    runs it decides what a bot lost while this process stood still means
    (:attr:`MatchRunner.lost_to_pause`)."""
    return MatchRunner(spec, [seat.session for _, seat in leased], listeners,
                       {i: seat.absent for i, (_, seat) in enumerate(leased) if seat.absent},
                       {i: seat.reconnect for i, (_, seat) in enumerate(leased) if seat.reconnect},
                       grace)


def release_seats(leased: Sequence[tuple[SeatProvider, Seat]], result: MatchResult | None) -> None:
    """Give each seat back to its provider with its verdict in ``result`` (an absent seat,
    or a match that did not end, with none)."""
    verdicts = {} if result is None else {v.seat: v for v in result.verdicts}
    for i, (provider, seat) in enumerate(leased):
        provider.release(seat, None if seat.absent else verdicts.get(i))
