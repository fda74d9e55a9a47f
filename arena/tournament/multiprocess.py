"""An executor that spreads matches over several referee processes.

A referee is one Python process, and one process does not use two cores well: measured on
2 cores, one referee running 2 matches at once played 1.17x the matches of one running 1,
while two referee processes played 1.64-1.8x. So for concurrency C this executor starts
W = min(C, cores) worker processes; each runs its own referee and its own bot processes
(a :class:`~arena.tournament.executor.LocalExecutor` with ceil(C / W) lanes).

This process deals the matches out one at a time, to a worker with a free lane, and keeps
the single writer to the store and the one view of the tournament: it counts crashes from
the results and retires a bot everywhere once it fails too often. A worker hears of a
retirement before the next match dealt to it (both travel on one queue, in order), so it
never starts another match with a bot retired before that match was dealt.

A worker that dies (kill -9, out of memory) is replaced: the matches it had in flight are
dealt again, first, and a result it may still have sent for one of them is ignored, so
each match is reported exactly once. A match in flight in MAX_ATTEMPTS workers that all
died stops the run with an error naming it (something in it kills referees). Workers
ignore Ctrl-C and stop when told, or when this process dies.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.referee.results import MatchSpec
from arena.tournament.executor import MAX_ATTEMPTS, Executor, ResultSink
from arena.tournament.executors import ExecutorSetup
from arena.tournament.schedule import PlannedMatch

log = logging.getLogger("arena.executor")

_POLL_S = 0.2


@dataclass
class _Worker:
    """A worker process as this process sees it: what it was dealt and has not reported."""

    process: multiprocessing.process.BaseProcess
    control: multiprocessing.queues.Queue
    in_flight: set[int] = field(default_factory=set)


class MultiProcessExecutor(Executor):
    """Matches on ``workers`` referee processes, ``concurrency`` at once in all."""

    def __init__(self, setup: ExecutorSetup) -> None:
        """``setup.bus``: listeners for the workers' matches (their taps run in the
        workers, what they send is delivered here)."""
        self.setup = setup
        self.concurrency = setup.concurrency
        self.workers = max(1, min(setup.workers or os.cpu_count() or 1, setup.concurrency))
        self.retirements = setup.retirements()
        #: workers that died and were replaced, in this executor's runs
        self.replaced = 0
        self._started = 0
        self._workers: dict[int, _Worker] = {}

    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        if not plans:
            return
        ctx = multiprocessing.get_context("spawn")  # no fork: gRPC's threads do not survive it
        results = ctx.Queue()
        n = min(self.workers, len(plans))
        lanes = math.ceil(self.concurrency / n)
        pending = deque(range(len(plans)))
        attempts: Counter[int] = Counter()
        workers = self._workers = {}
        gone: list[_Worker] = []

        def start() -> None:
            wid = self._started
            self._started += 1
            control = ctx.Queue()
            setup = self.setup
            log_dir = None if setup.log_dir is None else setup.log_dir / f"worker{wid}"
            process = ctx.Process(
                target=_worker_main, name=f"arena-worker-{wid}", daemon=True,
                args=(wid, os.getpid(), setup.manifests, setup.labels, lanes, setup.listen,
                      log_dir, setup.connect_timeout, dict(self.retirements.retired), results,
                      control, setup.sandbox, None if setup.bus is None else setup.bus.tap))
            process.start()
            workers[wid] = _Worker(process, control)

        def deal() -> None:
            for worker in workers.values():
                while pending and len(worker.in_flight) < lanes:
                    index = pending.popleft()
                    worker.control.put(("play", index, plans[index], spec_of(plans[index])))
                    worker.in_flight.add(index)

        def replace_dead() -> None:
            for wid, worker in list(workers.items()):
                if worker.process.is_alive():
                    continue
                del workers[wid]
                gone.append(worker)
                lost = sorted(worker.in_flight)
                for index in lost:
                    attempts[index] += 1
                    if attempts[index] >= MAX_ATTEMPTS:
                        raise RuntimeError(
                            f"match {plans[index].key} was in flight in {MAX_ATTEMPTS} referee "
                            "workers that died; the run stops (--resume plays what is left)")
                pending.extendleft(reversed(lost))
                self.replaced += 1
                log.warning("referee worker %s died (exit code %s); its %d match(es) in flight "
                            "are played again on a new worker", worker.process.name,
                            worker.process.exitcode, len(lost))
                start()

        for _ in range(n):
            start()
        loop = asyncio.get_running_loop()
        next_check = time.monotonic() + _POLL_S
        try:
            while True:
                deal()
                if not pending and not any(w.in_flight for w in workers.values()):
                    break
                if time.monotonic() >= next_check:   # even while others' results flow
                    next_check = time.monotonic() + _POLL_S
                    replace_dead()
                    deal()
                try:
                    msg = await loop.run_in_executor(None, results.get, True, _POLL_S)
                except queue.Empty:
                    continue
                kind = msg[0]
                if kind == "result":
                    _, wid, index, result = msg
                    worker = workers.get(wid)
                    if worker is None or index not in worker.in_flight:
                        continue   # from a worker given up for dead: dealt again already
                    worker.in_flight.discard(index)
                    for bot, reason in self.retirements.observe(plans[index].seats, result):
                        for other in workers.values():   # before any match dealt after this
                            other.control.put(("retire", bot, reason))
                    await on_result(plans[index], result)
                elif kind == "watch":
                    self.setup.bus.deliver(msg[1])
                elif kind == "error":
                    raise RuntimeError(f"referee worker {msg[1]} failed: {msg[2]}")
        finally:
            self._workers = {}
            for worker in workers.values():
                worker.control.put(("stop",))
            await loop.run_in_executor(None, _join, [w.process for w in (*workers.values(), *gone)],
                                       results)

    def retire(self, bot: int, reason: str) -> None:
        if self.retirements.retire(bot, reason):
            # a worker hears of it before any match dealt to it from now on (one queue);
            # one started later gets it with the bots retired so far
            for worker in self._workers.values():
                worker.control.put(("retire", bot, reason))


def _join(procs, results, timeout: float = 10.0) -> None:
    """Wait for the workers to stop, draining what they still send (a worker cannot exit
    while its queue holds unsent data); terminate any that overstay."""
    deadline = time.monotonic() + timeout
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        try:
            while True:
                results.get_nowait()
        except queue.Empty:
            pass
        for p in procs:
            p.join(timeout=0.05)
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(timeout=5)


def _worker_main(wid, parent_pid, manifests, labels, lanes, listen, log_dir, connect_timeout,
                 retired, results, control, sandbox, tap) -> None:
    """A worker process: its own referee and bots, playing the matches dealt to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        asyncio.run(_worker(wid, parent_pid, manifests, labels, lanes, listen, log_dir,
                            connect_timeout, retired, results, control, sandbox, tap))
    except Exception as exc:  # pragma: no cover - reported to the parent, which stops
        results.put(("error", wid, f"{exc.__class__.__name__}: {exc}"))


async def _worker(wid, parent_pid, manifests, labels, lanes, listen, log_dir, connect_timeout,
                  retired, results, control, sandbox, tap) -> None:
    from arena.tournament.executor import LocalExecutor, process_seats

    # the parent counts crashes and retires bots everywhere: no ledger here
    seats = process_seats(manifests, labels, sandbox, log_dir, connect_timeout)
    listeners = [] if tap is None else [tap.listener(lambda batch: results.put(("watch", batch)))]
    executor = LocalExecutor(seats, lanes, listen, listeners)
    for bot, reason in retired.items():
        executor.retire(bot, reason)
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    dealt: asyncio.Queue[PlannedMatch] = asyncio.Queue()
    specs: dict[tuple, tuple[int, MatchSpec]] = {}
    done = threading.Event()

    def on_control(msg) -> None:   # in the event loop, in the order sent
        if msg[0] == "play":
            _, index, plan, spec = msg
            specs[plan.key] = (index, spec)
            dealt.put_nowait(plan)
        elif msg[0] == "retire":
            executor.retire(msg[1], msg[2])
        elif msg[0] == "orphaned":
            # nobody will read what is queued: do not wait at exit for it to be written
            # (a full pipe would keep this process alive)
            results.cancel_join_thread()
            main.cancel()
        else:   # stop
            main.cancel()

    def read_control() -> None:
        """A thread: each control message into the loop as it comes (no polling delay
        between a free lane and its next match); the parent's death noticed."""
        while not done.is_set():
            try:
                msg = control.get(timeout=_POLL_S)
            except queue.Empty:
                if os.getppid() == parent_pid:
                    continue
                msg = ("orphaned",)
            try:
                loop.call_soon_threadsafe(on_control, msg)
            except RuntimeError:   # the loop is closed
                return
            if msg[0] in ("stop", "orphaned"):
                return

    reader = threading.Thread(target=read_control, name="control", daemon=True)
    reader.start()

    async def on_result(plan: PlannedMatch, result) -> None:
        index, _ = specs.pop(plan.key)
        results.put(("result", wid, index, result))

    try:
        await executor.play(dealt.get, lambda p: specs[p.key][1], on_result)
    except asyncio.CancelledError:
        pass
    finally:
        done.set()
