"""An executor on a Ray cluster: a referee actor per core, on every node.

Each actor (:class:`RefereeNode`, one CPU of Ray's) is a long-lived process that runs its
own referee and keeps its bots' processes warm between matches (a
:class:`~arena.tournament.executor.LocalExecutor` with ``lanes`` matches at once), in the
bot sandbox of the node it lands on: bots play many matches per process, as on one
machine, and phases still start fresh processes. Actors are spread over the nodes.

The driver (this process) deals the matches, one per free lane, keeps the one ledger of
retirements (:class:`~arena.tournament.seats.Retirements`; the bots retired so far go
with every match dealt, so no actor starts a match with a bot retired before it was
dealt), and reports each match once: a result is taken for the first attempt that
finishes, by the match's index in the plan, and the store below keys it by the schedule's
key. An actor that dies (its node lost, kill -9) has its matches dealt again, first, to
the others and to a replacement that Ray places where there is room; so does one that
holds matches and does not answer for STALL_S (stopped or stuck), killed first. A match
counts a loss only if the actor had begun it (its bots seated: the actor says so as it
begins it, before the result); one that MAX_ATTEMPTS actors had begun when they died, the
last of them playing it alone, stops the run with an error naming it
(:class:`~arena.tournament.executor.Deals`), and so do more than MAX_ATTEMPTS actors per
lane of the cluster lost with no match played in between (a cluster that loses actors as
fast as it places them). A long run on nodes that come and go goes on as long as it makes
progress.

Bot folders must be at the same path on every node (a shared file system, or copied
there with their setup run); :doc:`docs/scale.md` says how.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import os
import signal
import socket
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import grpc
import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

from arena.bots.manifest import BotManifest
from arena.bots.sandbox import SandboxConfig, SandboxFactory
from arena.referee.listeners import END, Broadcast, ListenerTap, MatchListener, MatchOver
from arena.referee.results import MatchResult, MatchSpec
from arena.rpc import port_out_of_range, socket_root
from arena.rules.errors import ConfigError
from arena.tournament.executor import (MAX_ATTEMPTS, Deals, Executor, LocalExecutor, ResultSink,
                                       process_seats)
from arena.tournament.executors import ClusterError, ExecutorSetup
from arena.tournament.schedule import PlannedMatch

log = logging.getLogger("arena.executor")

#: How long the run waits with no actor placed (no node with a free CPU) before it stops.
PLACEMENT_TIMEOUT_S = 120.0
#: ... and with no actor placed and no live node in the cluster (its raylets lost): the
#: run said so only at the placement limit, 2.5 minutes after, as "no free CPU".
NODELESS_S = 10.0
#: Matches dealt to an actor beyond its lanes, waiting there for the next free one.
QUEUED = 1
#: How long a stopping actor may take to say goodbye to its bots.
STOP_TIMEOUT_S = 15.0

#: An actor with matches in flight that does not answer a call on its event loop for this
#: long (stopped: SIGSTOP, a frozen cgroup; or stuck) is killed, and its matches dealt
#: again as a lost actor's are: Ray saw it alive, and the run waited for it for good.
STALL_S = 30.0
#: How often such an actor is asked, in seconds; and how often an actor looks whether
#: its raylet is still there.
LOOK_S = 1.0

_LOST = (RayActorError, ActorDiedError, ActorUnavailableError)


@dataclass(frozen=True)
class NodeSetup:
    """What an actor needs of the executor's setup (picklable: no callbacks, no bus)."""

    manifests: Sequence[BotManifest]
    labels: Sequence[str]
    listen: str
    log_dir: Path | None
    connect_timeout: float
    sandbox: SandboxConfig
    tap: ListenerTap | None

    @classmethod
    def of(cls, setup: ExecutorSetup) -> NodeSetup:
        """What every node is sent. ``--sandbox auto`` where this machine has the sandbox
        is ``bwrap`` on the nodes: a node where bubblewrap is missing or cannot work (a pod
        without user namespaces) fell back to plain processes, its notice seen by no one,
        and strangers' bots ran there with the node's files, processes and network (the
        cluster's own job API among them). Such a node now refuses to start, saying why."""
        sandbox = setup.sandbox
        if sandbox.mode == "auto" and SandboxFactory.unavailable() is None:
            sandbox = replace(sandbox, mode="bwrap")
        return cls(tuple(setup.manifests), tuple(setup.labels), setup.listen, setup.log_dir,
                   setup.connect_timeout, sandbox,
                   None if setup.bus is None else setup.bus.tap)


class RefereeNode:
    """A Ray actor: a referee and its bots' processes, playing the matches dealt to it."""

    def __init__(self, node: NodeSetup, lanes: int, name: str) -> None:
        self.node = node
        self.lanes = lanes
        self.name = name
        self.executor = None
        self.dealt: asyncio.Queue | None = None
        #: per match dealt and not finished: its spec, its result, and whether it has begun
        self.waiting: dict[tuple, tuple[MatchSpec, asyncio.Future, asyncio.Future]] = {}
        self.watched: asyncio.Queue = asyncio.Queue()
        #: per match ended here: how, until its play takes it
        self.ends: dict[str, MatchOver] = {}
        self.task: asyncio.Task | None = None
        self.watching: asyncio.Task | None = None

    async def start(self) -> dict:
        """Start the referee and its lanes; where this actor runs."""
        node = self.node
        listeners = [] if node.tap is None else [node.tap.listener(self.watched.put_nowait),
                                                 _EndsKept(self.ends)]
        log_dir = None if node.log_dir is None else node.log_dir / self.name
        seats = process_seats(node.manifests, node.labels, node.sandbox, log_dir,
                              node.connect_timeout)
        # no ledger here: the driver retires bots everywhere
        self.executor = LocalExecutor(seats, self.lanes, node.listen, listeners)
        self.dealt = asyncio.Queue()
        self.task = asyncio.create_task(self.executor.play(
            self.dealt.get, self._begin, self._finished))
        self.task.add_done_callback(self._stopped)
        if (parent := os.getppid()) != 1:
            self.watching = asyncio.create_task(self._orphaned(parent))
        ctx = ray.get_runtime_context()
        return {"node": ctx.get_node_id(), "pid": os.getpid(), "name": self.name}

    async def _orphaned(self, parent: int) -> None:
        """The actor's raylet (its parent) lost, it ends, and its bots with it. Ray's own
        worker ends when its raylet is gone, but it takes a raylet that has died and not
        been reaped (its parent, a driver that started a cluster of its own, still
        running) for alive: the actor and its bots stayed, playing for nobody. It ends as
        the driver ends a lost actor (``ray.kill``), at once: its bots die with it (see
        arena.bots.sandbox), and its matches are the driver's to deal again. (Stopped in
        order, its matches failed as a bug's would, and the run stopped.)"""
        while os.getppid() == parent:
            await asyncio.sleep(LOOK_S)
        log.warning("referee actor %s lost its raylet; it ends, and its bots", self.name)
        os._exit(1)

    def _begin(self, plan: PlannedMatch) -> MatchSpec:
        """A lane begins ``plan``, its bots seated: its spec (and :meth:`play` says so)."""
        spec, _, begun = self.waiting[plan.key]
        if not begun.done():
            begun.set_result(None)
        return spec

    async def _finished(self, plan: PlannedMatch, result: MatchResult) -> None:
        _, future, _ = self.waiting.pop(plan.key)
        if not future.done():
            future.set_result(result)

    def _stopped(self, task: asyncio.Task) -> None:
        """The lanes ended: every match still waiting fails with why."""
        error = (RuntimeError("the referee actor stopped") if task.cancelled()
                 else task.exception() or RuntimeError("the referee actor stopped"))
        for _, future, begun in self.waiting.values():
            waited = future if begun.done() else begun   # what its play waits for now
            if not waited.done():
                waited.set_exception(error)

    async def play(self, plan: PlannedMatch, spec: MatchSpec, retired: dict[int, str]):
        """Play one match (after retiring ``retired``), streamed: None once its bots are
        seated, then its result, how long this actor held it (in seconds) and how it
        ended for spectators (None without them)."""
        t0 = time.perf_counter()
        if self.task is None or self.task.done():
            raise RuntimeError(f"referee actor {self.name} is not playing")
        for bot, reason in retired.items():
            self.executor.retire(bot, reason)
        loop = asyncio.get_running_loop()
        future, begun = loop.create_future(), loop.create_future()
        self.waiting[plan.key] = (spec, future, begun)
        self.dealt.put_nowait(plan)
        await begun
        yield None
        result = await future
        yield result, time.perf_counter() - t0, self.ends.pop(spec.match_id, None)

    async def alive(self) -> None:
        """Answered by this actor's event loop, which a stopped or stuck actor does not run."""

    async def watch(self):
        """What this actor's spectator tap sends, batch after batch, until it stops."""
        while (batch := await self.watched.get()) is not None:
            yield batch

    async def stop(self) -> None:
        """Goodbye to the bots, every process stopped; the spectator stream ends after
        what was sent before."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        self.watched.put_nowait(None)


class _EndsKept(MatchListener):
    """Keeps how each match ended, in ``ends`` (by id)."""

    def __init__(self, ends: dict[str, MatchOver]) -> None:
        self.ends = ends

    def match_ended(self, over: MatchOver) -> None:
        self.ends[over.match_id] = over


class RayExecutor(Executor):
    """Matches on referee actors of a Ray cluster, ``concurrency`` at once in all."""

    def __init__(self, setup: ExecutorSetup) -> None:
        self.setup = setup
        self.retirements = setup.retirements()
        #: actors that died and were replaced, in this executor's runs
        self.replaced = 0
        #: matches dealt again because the actor playing them was lost
        self.replayed = 0
        #: per match: the driver's round trip minus the actor's time with it (seconds)
        self.overheads: list[float] = []
        #: where the actors ran: node id -> matches played there
        self.nodes: Counter[str] = Counter()
        self._names = itertools.count()

    def retire(self, bot: int, reason: str) -> None:
        self.retirements.retire(bot, reason)   # the bots retired go with every match dealt

    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        if not plans:
            return
        connect(self.setup.address)
        try:
            await self._run(plans, spec_of, on_result)
        finally:
            disconnect()

    async def _run(self, plans, spec_of, on_result: ResultSink) -> None:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:
            raise RuntimeError("the Ray cluster has no CPU to place a referee on")
        n = max(1, min(self.setup.concurrency, cpus, len(plans)))
        lanes = math.ceil(self.setup.concurrency / n)
        actor_class = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(RefereeNode)
        await _RayRun(self, plans, spec_of, on_result, n, lanes, actor_class,
                      NodeSetup.of(self.setup)).play()


class _RayRun:
    """One run of a :class:`RayExecutor`: its ``n`` actors of ``lanes`` lanes each, the
    matches dealt to them, and the wait for every result kept. The executor's counters
    and ledger of retirements are the executor's, updated through it."""

    def __init__(self, executor: RayExecutor, plans: Sequence[PlannedMatch],
                 spec_of: Callable[[PlannedMatch], MatchSpec], on_result: ResultSink, n: int,
                 lanes: int, actor_class, node_setup: NodeSetup) -> None:
        self.executor = executor
        self.plans = plans
        self.spec_of = spec_of
        self.on_result = on_result
        self.n = n
        self.lanes = lanes
        self.actor_class = actor_class
        self.node_setup = node_setup
        self.deals = Deals([p.key for p in plans], "actors")
        self.busy: Counter[str] = Counter()       # actor -> matches dealt to it, not yet back
        self.alone_actor: str | None = None   # the actor kept for the matches to play alone
        self.reported: set[int] = set()   # results taken from an actor (each match once)
        self.stored = 0                   # ... of them that on_result has kept
        self.changed = asyncio.Condition()
        self.tasks: set[asyncio.Task] = set()
        self.actors: dict[str, object] = {}       # name -> handle, alive as far as we know
        self.ready: set[str] = set()
        self.failure: list[BaseException] = []
        self.stopping = False   # actors ending because the run does: not lost
        self.lost_since = 0     # actors lost since the last match reported
        self.relays: dict[str, asyncio.Task] = {}   # actor -> its spectator stream, relayed
        self.match_ids: dict[int, str] = {}          # match dealt -> its id
        # actor lost -> the ids of the matches it held, dealt again: what its stream still
        # brings of them is a lost attempt's, not the attempt played in its place
        self.disowned: dict[str, set[str]] = {}
        # per actor: how the matches whose results were taken ended, while its stream has
        # not brought their ends (the two come apart), and the ends it brought first. An
        # actor lost in between lost what its stream had not sent: its match live for ever
        # for spectators, the result kept. Its end came with the result: heard from here.
        self.unheard: dict[str, dict[str, MatchOver]] = defaultdict(dict)
        self.heard: dict[str, set[str]] = defaultdict(set)

    def ended(self, name: str, end: MatchOver | None) -> None:
        """The result of a match of actor ``name`` was taken, with its ``end``."""
        if end is None:
            return
        if end.match_id in self.heard[name]:
            self.heard[name].discard(end.match_id)
        elif (relayed := self.relays.get(name)) is None or relayed.done():
            self.bring(end)   # its stream is over: it will not bring it
        else:
            self.unheard[name][end.match_id] = end

    def bring(self, *ends: MatchOver) -> None:
        """Spectators hear ``ends`` from here, their actor's stream gone without them
        (a failure of the hub logged, as the bus logs one, and the run goes on)."""
        listener = Broadcast([self.executor.setup.bus.listener()])
        for end in ends:
            listener.match_ended(end)

    def spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def guarded(self, coro) -> None:
        """An actor's serving: whatever escapes it stops the run, said (it was an
        exception nobody retrieved, its lanes gone and the run waiting for them)."""
        try:
            await coro
        except Exception as exc:   # noqa: BLE001 - raised by the run, below
            async with self.changed:
                self.failure.append(exc)
                self.changed.notify_all()

    def add_actor(self) -> None:
        name = f"ray{next(self.executor._names)}"
        handle = self.actor_class.options(scheduling_strategy="SPREAD").remote(
            self.node_setup, self.lanes, name)
        self.actors[name] = handle
        self.spawn(self.guarded(self.serve(name, handle)))
        if self.executor.setup.bus is not None:
            self.relays[name] = asyncio.create_task(self.relay(name, handle))

    async def lost(self, name: str, indices: Sequence[int], begun: bool = True) -> None:
        """Actor ``name`` died: its matches go back first, a replacement is asked for;
        ``begun``: they count the loss (their bots were seated)."""
        if self.stopping:
            return
        async with self.changed:
            again = [i for i in indices if i not in self.reported]
            # before they are dealt again
            self.disowned.setdefault(name, set()).update(self.match_ids[i] for i in again)
            self.executor.replayed += len(again)
            if (stop := self.deals.died(again, again if begun else ())) is not None:
                self.failure.append(stop)
            if (handle := self.actors.pop(name, None)) is not None:
                # dead, or only unreachable for now (ActorUnavailableError): then it
                # would go on playing the matches dealt again to the others, under the
                # same ids, and never be stopped
                with contextlib.suppress(Exception):
                    ray.kill(handle)
                self.ready.discard(name)
                self.executor.replaced += 1
                self.lost_since += 1
                if self.lost_since > self.n * MAX_ATTEMPTS:
                    self.failure.append(RuntimeError(
                        f"{self.lost_since} referee actors died on the Ray cluster with no match "
                        "played in between; the run stops (--resume plays what is left)"))
                log.warning("referee actor %s was lost; its matches are played again on "
                            "the others and a replacement", name)
                self.add_actor()
            self.changed.notify_all()

    async def serve(self, name: str, handle) -> None:
        try:
            where = await handle.start.remote()
        except _LOST:
            await self.lost(name, [])
            return
        except Exception as exc:   # noqa: BLE001 - it cannot start: say why, stop
            async with self.changed:
                self.failure.append(RuntimeError(f"referee actor {name} could not start: {exc}"))
                self.changed.notify_all()
            return
        self.ready.add(name)
        # one match more than the actor's lanes: the next one waits in the actor, so a
        # lane that frees starts it at once instead of idling for a round trip
        await asyncio.gather(self.watchdog(name, handle),
                             *(self.lane(name, handle, where["node"])
                               for _ in range(self.lanes + QUEUED)))

    async def watchdog(self, name: str, handle) -> None:
        """Kill actor ``name`` once it holds matches and has not answered for STALL_S:
        its lanes then meet a lost actor. Counted in slices of LOOK_S, each at most
        twice its length, so a pause of this process (Ctrl-Z stops the whole group)
        is not held against an actor that answered meanwhile, unread."""
        while name in self.actors and not self.stopping:
            await asyncio.sleep(LOOK_S)
            if not self.busy[name]:
                continue
            answer = asyncio.ensure_future(handle.alive.remote())   # an ObjectRef: awaitable
            silent = 0.0
            while not answer.done() and silent <= STALL_S:
                t0 = time.monotonic()
                await asyncio.wait({answer}, timeout=LOOK_S)
                silent += min(time.monotonic() - t0, 2 * LOOK_S)
            if not answer.done():
                answer.cancel()
                if name in self.actors and not self.stopping:
                    log.warning("referee actor %s said nothing for %g s with a match in "
                                "flight; it is stopped", name, STALL_S)
                    ray.kill(handle)
                return
            if answer.exception() is not None:    # lost: its lanes say so
                return

    def take(self, name: str) -> int | None:
        """The next match for a lane of actor ``name``, or None for now. One actor at a
        time is kept for the matches to play alone: it is dealt nothing else while
        there are any, and each when it has nothing else in flight."""
        if self.deals.alone and self.alone_actor not in self.actors:
            self.alone_actor = name
        if self.alone_actor == name:
            if self.busy[name]:
                return None
            if self.deals.alone:
                index = self.deals.alone.pop(0)
                self.busy[name] += 1
                return index
            self.alone_actor = None
        if not self.deals.pending:
            return None
        self.busy[name] += 1
        return self.deals.pending.popleft()

    async def lane(self, name: str, handle, node: str) -> None:
        while True:
            async with self.changed:
                # a lane waits while nothing is left to deal: a lost actor's matches
                # may come back
                while True:
                    if (self.failure or name not in self.actors
                            or len(self.reported) == len(self.plans)):
                        return
                    if (index := self.take(name)) is not None:
                        break
                    await self.changed.wait()
            plan = self.plans[index]
            t0 = time.perf_counter()
            begun = False
            spec = self.spec_of(plan)
            self.match_ids[index] = spec.match_id
            try:
                stream = handle.play.options(num_returns="streaming").remote(
                    plan, spec, dict(self.executor.retirements.retired))
                await (await stream.__anext__())        # its bots are seated
                begun = True
                result, held, end = await (await stream.__anext__())
            except _LOST:
                await self.lost(name, [index], begun)
                return
            except Exception as exc:   # the match raised in the actor: a bug, not a loss
                async with self.changed:
                    self.failure.append(RuntimeError(f"match {plan.key} failed on referee actor "
                                                     f"{name}: {exc}"))
                    self.changed.notify_all()
                return
            self.busy[name] -= 1
            if self.alone_actor == name and not self.busy[name]:   # its lanes wait for it to empty
                async with self.changed:
                    self.changed.notify_all()
            self.ended(name, end)
            if index in self.reported:
                continue   # played again after a loss that was not one
            self.reported.add(index)
            self.lost_since = 0
            self.executor.overheads.append(time.perf_counter() - t0 - held)
            self.executor.nodes[node] += 1
            self.executor.retirements.observe(plan.seats, result)
            try:
                await self.on_result(plan, result)
            except Exception as exc:   # noqa: BLE001 - the store, or the output, failed
                # the run stops and says so (--resume plays it): a lane that died here
                # lost the match with no word, or left the run waiting for good (the
                # store could not keep it, or the live view's output was closed)
                async with self.changed:
                    self.failure.append(exc)
                    self.changed.notify_all()
                return
            async with self.changed:
                self.stored += 1
                self.changed.notify_all()

    async def relay(self, name: str, handle) -> None:
        owed = self.unheard[name]
        try:
            async for ref in handle.watch.options(num_returns="streaming").remote():
                batch = await ref
                if gone := self.disowned.get(name):
                    batch = [m for m in batch if m[1] not in gone]
                for message in batch:
                    if message[0] == END and owed.pop(message[1], None) is None:
                        self.heard[name].add(message[1])
                self.executor.setup.bus.deliver(batch)
        except _LOST:
            pass
        finally:
            # lost (or cut short at the end): the ends that came with its results
            self.bring(*owed.values())
            owed.clear()

    async def play(self) -> None:
        """The run: its actors placed, until every result is kept or the run fails (its
        first failure raised); its actors and tasks stopped either way."""
        for _ in range(self.n):
            self.add_actor()
        placed = time.monotonic()   # the last time an actor was ready to play
        probe: asyncio.Future | None = None   # a look at the cluster's live nodes, under way
        here = None   # the node this process joined the cluster through, if it has one
        with contextlib.suppress(Exception):   # (a Ray Client's proxy may not say)
            here = ray.get_runtime_context().get_node_id()
        try:
            async with self.changed:
                # until every result is kept, not only taken: a run that ended as soon as
                # the last one was taken could cancel its store under way
                while self.stored < len(self.plans) and not self.failure:
                    try:
                        async with asyncio.timeout(1.0):
                            await self.changed.wait()
                    except TimeoutError:
                        pass
                    if self.ready & self.actors.keys():
                        placed = time.monotonic()
                        if probe is not None:   # a look from before: no longer the news
                            probe.cancel()
                            probe = None
                    elif time.monotonic() - placed > NODELESS_S:
                        # one look at a time, in a thread, read on a later pass: the loop
                        # does not wait for it (holding the lock the lanes need)
                        if probe is None:
                            probe = asyncio.ensure_future(asyncio.to_thread(_live_nodes, here))
                        elif probe.done():
                            alive = None if probe.exception() is not None else probe.result()
                            probe = None
                            if alive is not None and alive[0] == 0:
                                self.failure.append(RuntimeError(
                                    "the Ray cluster has no live node left (its raylets were "
                                    "lost); --resume plays what is left on a cluster that has one"))
                            elif alive is not None and not alive[1]:
                                # every actor is lost to this process, and none is placed
                                # again: it waited for the placement limit, then blamed the
                                # cluster's CPUs (the twenty-seventh review)
                                self.failure.append(RuntimeError(
                                    "the Ray node this process joined the cluster through was "
                                    "lost (its raylet); --resume plays what is left"))
                    if not self.failure and time.monotonic() - placed > PLACEMENT_TIMEOUT_S:
                        self.failure.append(RuntimeError(
                            f"no referee actor could be placed on the Ray cluster for "
                            f"{PLACEMENT_TIMEOUT_S:.0f} s (no node with a free CPU)"))
            if self.failure:
                raise self.failure[0]
        finally:
            self.stopping = True
            if probe is not None:
                probe.cancel()    # its thread ends with its call; nobody reads it now
            await self._stop()
            for task in [*self.tasks, *self.relays.values()]:
                task.cancel()
            await asyncio.gather(*self.tasks, *self.relays.values(), return_exceptions=True)

    async def _stop(self) -> None:
        """Each actor says goodbye to its bots and its spectator stream ends, then the
        actor ends. Killed as soon as it had stopped, an actor lost the last batches it
        had not yet streamed: spectators (and the hub's list) never heard those matches
        end."""
        async def stop(name: str, handle) -> None:
            try:
                async with asyncio.timeout(STOP_TIMEOUT_S):
                    await handle.stop.remote()
                    if (relayed := self.relays.get(name)) is not None:
                        await asyncio.wait({relayed})   # the stream ends after its last batch
            except BaseException:   # noqa: BLE001 - lost or slow: killed below either way
                pass
            ray.kill(handle)
        await asyncio.gather(*(stop(name, h) for name, h in self.actors.items()),
                             return_exceptions=True)


def _live_nodes(here: str | None) -> tuple[int, bool]:
    """How many live nodes the cluster's control store knows, and whether node ``here`` is
    one (None: not known, taken as alive) (a blocking call: run in a thread; an error, or
    no answer, proves nothing: the placement limit then decides)."""
    alive = {node.get("NodeID") for node in ray.nodes() if node.get("Alive")}
    return len(alive), here is None or here in alive


def check_address(address: str | None, timeout: float = 5.0) -> None:
    """Refuse at once a cluster address nothing answers at (Ray itself retries for
    minutes): :class:`ClusterError` saying so (:class:`ConfigError` for an address that is
    not HOST:PORT). ``None``, ``auto`` and ``ray://`` client addresses are left to Ray."""
    if address in (None, "auto", "local") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or port_out_of_range(address):
        raise ConfigError(f"--ray-address {address!r} is not HOST:PORT (the address 'ray start "
                          "--head' printed, e.g. 10.0.0.5:6379), 'auto' or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout).close()
    except OSError as exc:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: "
                          f"{exc.strerror or exc} (is 'ray start --head' running there?)") from None
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("0", "false", ""):
        # a Ray head's GCS speaks gRPC: a port where something else answers (a database,
        # a web server) held Ray's connection attempts for minutes
        channel = grpc.insecure_channel(address, options=[("grpc.enable_http_proxy", 0)])
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout)
            # and answers the GCS's cheapest question: another gRPC server (a referee, an
            # arena server) held ray.init for 13 minutes, the tournament already stored
            channel.unary_unary(GCS_PROBE)(b"", timeout=timeout)
        except grpc.FutureTimeoutError:
            raise ClusterError(f"{address} answers, but not as a Ray cluster (no gRPC there "
                              f"within {timeout:g} s): give the address 'ray start --head' "
                              "printed (its GCS port, 6379 by default)") from None
        except grpc.RpcError as exc:
            _probe_refused(address, exc)
        finally:
            channel.close()


#: A question every Ray GCS answers (the cluster's id), asked with no arguments.
GCS_PROBE = "/ray.rpc.NodeInfoGcsService/GetClusterId"


def _probe_refused(address: str, exc: grpc.RpcError) -> None:
    """:class:`ClusterError` where the answer to :data:`GCS_PROBE` says Ray cannot join:
    a gRPC server that is not Ray's, or a cluster that asks for a token this process will
    not send (Ray sends one only under RAY_AUTH_MODE=token, for an address given; it was
    refused after 20 s of retries, the tournament stored). Any other answer is Ray's to
    take up."""
    code = exc.code()
    if code == grpc.StatusCode.UNIMPLEMENTED:
        raise ClusterError(f"{address} answers gRPC, but not as a Ray cluster (another "
                          "service): give the address 'ray start --head' printed (its GCS "
                          "port, 6379 by default)") from None
    if code == grpc.StatusCode.UNAUTHENTICATED and not _sends_token():
        raise ClusterError(f"the Ray cluster at {address} asks for a token (it was started "
                          "with token authentication): set RAY_AUTH_MODE=token here, with "
                          "the cluster's token in ~/.ray/auth_token or RAY_AUTH_TOKEN") from None


def _sends_token() -> bool:
    """Whether Ray sends its token to an address given: only where RAY_AUTH_MODE says
    ``token`` (in any case, as Ray reads it). Set otherwise, ``disabled`` as Ray's own
    notice at every local start suggests, it sends none, and a cluster with token
    authentication refused it after 20 s of retries, without the hint."""
    return os.environ.get("RAY_AUTH_MODE", "").lower() == "token"


def _token_hint() -> str:
    """Why joining a cluster may have failed: Ray asks for its token only where this
    process is told to (RAY_AUTH_MODE=token), which it is not for an address given; a
    cluster started with token authentication then refuses it, after 20 s of retries."""
    if not _sends_token() and (
            os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
            or (Path.home() / ".ray" / "auth_token").exists()):
        return (". This machine has a Ray token: a cluster started with token "
                "authentication ('ray start' says so) needs RAY_AUTH_MODE=token here too")
    return ""


#: Runs using the connection this module made (several tournaments of a server at once).
_users = 0
#: Whether this module called ``ray.init`` (else whoever did shuts Ray down).
_owned = False


#: How far below its temporary folder a local Ray cluster makes its deepest unix socket
#: (``ray/session_2026-12-05_01-18-49_400215_3075112/sockets/plasma_store``: a pid of 7
#: digits, as systemd's pid_max allows).
RAY_SOCKET_DEPTH = 68


def _short_temp() -> dict:
    """Where a local cluster keeps its sessions: Ray's default ($TMPDIR/ray), unless that
    is too deep for its sockets, then /tmp/ray (:func:`arena.rpc.socket_root`). Under a
    deep TMPDIR, Ray failed to start: "AF_UNIX path length cannot exceed 107 bytes"."""
    try:
        root = socket_root(RAY_SOCKET_DEPTH)
    except OSError:
        return {}    # Ray says why it cannot start
    return {} if root == tempfile.gettempdir() else {"_temp_dir": os.path.join(root, "ray")}


def _cluster_errors_logged(logged: bool) -> None:
    """What the cluster reports as errors goes to the log (``logged``), or is printed by
    Ray again: Ray's driver prints it on this process's stdout whatever ``log_to_driver``
    says, into the arena's own output, some 25 lines of a raylet's state dump for every
    node lost (the twenty-seventh review), the arena's own line having said it (see
    :func:`_cluster_said`). Ray's thread that reads these messages calls its module's
    ``print_to_stdstream``, which only the workers' logs use besides (those are not sent
    here): it is replaced while this module's connection lasts, then put back."""
    global _ray_printed
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    if logged and _ray_printed is None and callable(getattr(worker, "print_to_stdstream", None)):
        _ray_printed, worker.print_to_stdstream = worker.print_to_stdstream, _cluster_said
    elif not logged and _ray_printed is not None:
        worker.print_to_stdstream, _ray_printed = _ray_printed, None


def _cluster_said(data: dict, ignore_prefix: bool = False) -> None:
    """Ray's printing of what the cluster reports, logged: each message whole at DEBUG,
    and at WARNING its first line, with its last where it is a traceback or an error it
    introduces (a worker of another Ray version, the autoscaler: the last line says
    what; the twenty-ninth review)."""
    for message in data.get("lines", ()):
        lines = [line.strip() for line in str(message).strip().splitlines() if line.strip()]
        if not lines:
            continue
        log.debug("the Ray cluster says: %s", message)
        said = lines[0]
        if len(lines) > 1 and (said.startswith("Traceback") or said.endswith("error:")):
            said += f" ... {lines[-1]}"
        log.warning("the Ray cluster says: %s", said)


#: Ray's own printing of what the cluster reports, while the log stands in for it
_ray_printed: Callable | None = None


def connect(address: str | None, num_cpus: int | None = None) -> None:
    """Join the cluster at ``address`` (None: start a local one, of ``num_cpus`` CPUs or
    all of this machine's), unless this process is connected already; :func:`disconnect`
    when done."""
    global _users, _owned
    if not ray.is_initialized():
        check_address(address)
        _cluster_errors_logged(True)
        try:
            with _signals_kept(), _quiet_token_notice(address is None):
                # "local": a cluster of its own, even where 'ray start' left one running
                # on this machine (no address would join that one)
                ray.init(address=address or "local",
                         num_cpus=num_cpus if address is None else None,
                         include_dashboard=False, log_to_driver=False, configure_logging=False,
                         **({} if address is not None else _short_temp()))
        except BaseException as exc:
            _cluster_errors_logged(False)
            if isinstance(exc, ConnectionError):
                # a failure (exit 1), as the check's: the cluster may answer later
                raise ClusterError(f"cannot reach the Ray cluster at {address}: {exc}"
                                  f"{_token_hint() if address is not None else ''}") from None
            raise
        _owned = True
    _users += 1


def disconnect() -> None:
    """A run is done with Ray: the last one disconnects (and stops a local cluster it
    started) if this module connected."""
    global _users, _owned
    _users -= 1
    if _users == 0 and _owned:
        with _signals_kept():
            ray.shutdown()
        _owned = False
        _cluster_errors_logged(False)


@contextlib.contextmanager
def _quiet_token_notice(local: bool):
    """A new local cluster turns Ray's token authentication on (its default), and Ray
    warns of it on stderr at every start: not a word the arena's user needs. A cluster
    given by address keeps Ray's notices (a token missing or refused is the operator's
    to see)."""
    log = logging.getLogger("ray._private.authentication.authentication_token_setup")
    level = log.level
    if local:
        log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


@contextlib.contextmanager
def _signals_kept():
    """Ray's driver sets handlers of its own for SIGINT and SIGTERM (and its shutdown
    resets them to the default): the arena's (Ctrl-C stops a tournament cleanly, SIGTERM
    stops a server cleanly) are put back."""
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            if handler is not None:
                signal.signal(sig, handler)
