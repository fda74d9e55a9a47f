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
each match is reported exactly once. So is a worker that holds matches and says nothing
for STALL_S (stopped or stuck: its event loop beats every second), killed first. A match
that MAX_ATTEMPTS workers had begun when they died, the last of them playing it alone,
stops the run with an error naming it (something
in it kills referees: :class:`~arena.tournament.executor.Deals`); a match dealt to a worker
that died before beginning it is only dealt again. So do W x MAX_ATTEMPTS
workers that die before they are ready, with no match reported in between (workers cannot
start here). Workers ignore Ctrl-C and SIGHUP and stop when told, or when this process
dies.

Each worker sends to this process on a pipe of its own, whose writing end only that worker
holds. A worker killed in the middle of a message then costs nothing but its own pipe (this
process reads its end to EOF); on one queue shared by all workers, it would have died
holding the queue's lock, or left half a message in it, and stopped every other worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.referee.results import MatchSpec
from arena.tournament.executor import MAX_ATTEMPTS, ArenaPaused, Deals, Executor, ResultSink
from arena.tournament.executors import ExecutorSetup
from arena.tournament.schedule import PlannedMatch

log = logging.getLogger("arena.executor")

_POLL_S = 0.2

#: A worker's event loop says it is alive this often, in seconds.
BEAT_S = 1.0
#: A worker with matches in flight that says nothing for this long (stopped: SIGSTOP, a
#: debugger, a frozen cgroup; or stuck) is killed and replaced, as a dead one is: alive
#: to this process, it held its matches, and the run waited for it for good. Its bots
#: gave up on it long before (the SDKs' pings time out in 20 s), so it plays nothing.
STALL_S = 30.0

#: How long a run that ends waits for its workers to stop (and reads what they send
#: meanwhile) before it terminates them.
STOP_S = 10.0


@dataclass
class _Worker:
    """A worker process as this process sees it: what it was dealt and has not reported."""

    process: multiprocessing.process.BaseProcess
    control: multiprocessing.queues.Queue
    #: dealt to it and not reported
    in_flight: set[int] = field(default_factory=set)
    #: of those, the ones its referee has begun
    begun: set[int] = field(default_factory=set)
    #: its referee and bots are set up
    ready: bool = False
    #: kept for the matches to play alone: dealt nothing else while there are any
    alone: bool = False
    #: when it last said anything (this process's monotonic clock)
    heard: float = field(default_factory=time.monotonic)


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
        #: results dropped as they came from a worker given up for dead (its matches dealt
        #: again), in this executor's runs
        self.late = 0
        self._started = 0
        self._workers: dict[int, _Worker] = {}

    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        if not plans:
            return
        ctx = multiprocessing.get_context("spawn")  # no fork: gRPC's threads do not survive it
        _start_tracker()
        inbox: queue.SimpleQueue = queue.SimpleQueue()   # every worker's messages, as read
        n = min(self.workers, len(plans))
        lanes = math.ceil(self.concurrency / n)
        deals = Deals([p.key for p in plans], "workers")
        workers = self._workers = {}
        gone: list[_Worker] = []
        stillborn = 0   # workers that died before they were ready, since the last progress

        def start() -> None:
            wid = self._started
            self._started += 1
            control = ctx.Queue()
            reader, writer = ctx.Pipe(duplex=False)
            setup = self.setup
            log_dir = None if setup.log_dir is None else setup.log_dir / f"worker{wid}"
            process = ctx.Process(
                target=_worker_main, name=f"arena-worker-{wid}", daemon=True,
                args=(wid, os.getpid(), setup.manifests, setup.labels, lanes, setup.listen,
                      log_dir, setup.connect_timeout, dict(self.retirements.retired), writer,
                      control, setup.sandbox, None if setup.bus is None else setup.bus.tap))
            process.start()
            writer.close()   # the worker's copy is the only one: its death is EOF here
            threading.Thread(target=_read, args=(wid, reader, inbox), name=f"results-{wid}",
                             daemon=True).start()
            workers[wid] = _Worker(process, control)

        def give(worker: _Worker, index: int) -> None:
            worker.control.put(("play", index, plans[index], spec_of(plans[index])))
            worker.in_flight.add(index)

        def deal() -> None:
            if deals.alone and workers and not any(w.alone for w in workers.values()):
                # the worker with the fewest in flight: dealt nothing more, once it has
                # emptied it plays them one at a time
                min(workers.values(), key=lambda w: len(w.in_flight)).alone = True
            for worker in workers.values():
                if worker.alone and not worker.in_flight:
                    if deals.alone:
                        give(worker, deals.alone.pop(0))
                    else:
                        worker.alone = False
                if not worker.alone:
                    while deals.pending and len(worker.in_flight) < lanes:
                        give(worker, deals.pending.popleft())

        def stop_stalled(now: float) -> None:
            for worker in workers.values():
                if worker.in_flight and now - worker.heard > STALL_S and worker.process.is_alive():
                    log.warning("referee worker %s said nothing for %g s with a match in flight; "
                                "it is stopped", worker.process.name, STALL_S)
                    worker.process.kill()      # replace_dead deals its matches again
                    worker.process.join(1.0)

        def replace_dead() -> None:
            nonlocal stillborn
            for wid, worker in list(workers.items()):
                if worker.process.is_alive():
                    continue
                del workers[wid]
                gone.append(worker)
                lost = sorted(worker.in_flight)
                if (stop := deals.died(lost, worker.begun)) is not None:
                    raise stop
                if not worker.ready:
                    stillborn += 1
                    if stillborn >= n * MAX_ATTEMPTS:
                        raise RuntimeError(
                            f"{stillborn} referee workers died before they were ready, with no "
                            "match played in between (the last with exit code "
                            f"{worker.process.exitcode}); the run stops (--resume plays what "
                            "is left)")
                self.replaced += 1
                log.warning("referee worker %s died (exit code %s); its %d match(es) in flight "
                            "are played again on a new worker", worker.process.name,
                            worker.process.exitcode, len(lost))
                start()

        for _ in range(n):
            start()
        loop = asyncio.get_running_loop()
        next_check = looked = time.monotonic() + _POLL_S
        # the inbox's read under way, in a thread: kept across a cancel (its thread takes a
        # message all the same, which a new read would never see)
        reading: asyncio.Future | None = None
        ended: set[int] = set()   # workers whose pipe has ended (their EOF read)
        try:
            while True:
                deal()
                if not deals and not any(w.in_flight for w in workers.values()):
                    break
                if (now := time.monotonic()) >= next_check:   # even while others' results flow
                    next_check = now + _POLL_S
                    if now - looked > BEAT_S:
                        # this process was stopped too (Ctrl-Z stops the whole group) or
                        # held up (a slow write): what its workers said meanwhile is unread
                        for worker in workers.values():
                            worker.heard = max(worker.heard, now)
                    looked = now
                    stop_stalled(now)
                    replace_dead()
                    deal()
                if reading is None:
                    reading = loop.run_in_executor(None, inbox.get, True, _POLL_S)
                try:
                    msg = await asyncio.shield(reading)
                except queue.Empty:
                    reading = None
                    continue
                reading = None
                kind = msg[0]
                if kind in ("begun", "result", "ready", "beat") and msg[1] in workers:
                    workers[msg[1]].heard = time.monotonic()
                if kind == "begun":
                    worker = workers.get(msg[1])
                    if worker is not None and msg[2] in worker.in_flight:
                        worker.begun.add(msg[2])
                elif kind == "result":
                    _, wid, index, result = msg
                    worker = workers.get(wid)
                    if worker is None or index not in worker.in_flight:
                        self.late += 1
                        continue   # from a worker given up for dead: dealt again already
                    worker.in_flight.discard(index)
                    worker.begun.discard(index)
                    stillborn = 0
                    for bot, reason in self.retirements.observe(plans[index].seats, result):
                        for other in workers.values():   # before any match dealt after this
                            other.control.put(("retire", bot, reason))
                    await on_result(plans[index], result)
                elif kind == "watch":
                    if msg[1] in workers:   # not a worker's given up for dead: its matches
                        self.setup.bus.deliver(msg[2])   # are another attempt's now
                elif kind == "ready":
                    if (worker := workers.get(msg[1])) is not None:
                        worker.ready = True
                        stillborn = 0
                elif kind == "eof":   # it is dying or dead: replace it now, not at the next poll
                    ended.add(msg[1])
                    if (worker := workers.get(msg[1])) is not None:
                        await loop.run_in_executor(None, worker.process.join, _POLL_S)
                        replace_dead()
                elif kind == "paused":   # not the worker's failure: said as it is
                    raise ArenaPaused(msg[2])
                elif kind == "error":
                    raise RuntimeError(f"referee worker {msg[1]} failed: {msg[2]}")
        finally:
            self._workers = {}
            for worker in workers.values():
                worker.control.put(("stop",))
            # what the workers send as they stop (the ends of the matches they abort), read
            # until each has ended: unread, those matches stayed live for the spectators
            deadline = time.monotonic() + STOP_S
            try:
                taken = []
                if reading is not None:   # within the poll: its read has a timeout
                    with contextlib.suppress(queue.Empty):
                        taken.append(await reading)
                batches = await loop.run_in_executor(None, _drain, inbox, taken,
                                                     set(workers) - ended, deadline)
                if self.setup.bus is not None:
                    for batch in batches:
                        self.setup.bus.deliver(batch)
            finally:   # even cancelled again meanwhile (a server stopping during a cancel)
                await loop.run_in_executor(
                    None, _join, [w.process for w in (*workers.values(), *gone)],
                    max(1.0, deadline - time.monotonic()))

    def retire(self, bot: int, reason: str) -> None:
        if self.retirements.retire(bot, reason):
            # a worker hears of it before any match dealt to it from now on (one queue);
            # one started later gets it with the bots retired so far
            for worker in self._workers.values():
                worker.control.put(("retire", bot, reason))


def _read(wid: int, reader, inbox: queue.SimpleQueue) -> None:
    """A thread of this process: worker ``wid``'s messages into the inbox, until its pipe
    ends (it stopped or died); then ``("eof", wid)``. It keeps reading after the run, so a
    stopping worker is never stuck on a full pipe."""
    try:
        while True:
            inbox.put(reader.recv())
    except (EOFError, OSError):
        pass   # EOFError: the worker's end is closed; OSError: half a message, then death
    finally:
        reader.close()
        inbox.put(("eof", wid))


def _drain(inbox: queue.SimpleQueue, taken: list, wids: set[int], deadline: float) -> list:
    """The spectator batches workers ``wids`` sent (in ``taken``, already read, then in
    ``inbox``) until each has ended (its EOF) or the monotonic clock reaches ``deadline``;
    their results are left: a stopped run keeps none. In a thread."""
    batches: list = []
    taken = list(taken)
    while wids:
        try:
            msg = taken.pop(0) if taken else inbox.get(True, max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if msg[0] == "watch" and msg[1] in wids:
            batches.append(msg[2])
        elif msg[0] == "eof":
            wids.discard(msg[1])
    return batches


def _join(procs, timeout: float = 10.0) -> None:
    """Wait for the workers to stop; terminate any that overstay."""
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(timeout=5)


class _Outbox:
    """A worker's messages to the parent, sent in order by a thread of their own, so that
    the worker's event loop (its referee's clocks) never waits on the pipe."""

    def __init__(self, writer) -> None:
        self._writer = writer
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._send, name="outbox", daemon=True)
        self._thread.start()

    def put(self, msg: tuple) -> None:
        self._queue.put(msg)

    def _send(self) -> None:
        while (msg := self._queue.get()) is not None:
            try:
                self._writer.send(msg)
            except OSError:   # the parent is gone
                return

    def close(self, timeout: float) -> None:
        """Send what is queued (for up to ``timeout`` s), then close the pipe."""
        self._queue.put(None)
        self._thread.join(timeout)
        self._writer.close()


def _start_tracker() -> None:
    """Start multiprocessing's resource tracker (a process of its own, which the first
    queue starts) with SIGHUP ignored, which it keeps. It ignores SIGINT and SIGTERM but
    not SIGHUP: a closed terminal, which signals the whole group, killed it, and the
    queues released after printed KeyError tracebacks from the new one started."""
    from multiprocessing import resource_tracker

    if threading.current_thread() is not threading.main_thread():
        resource_tracker.ensure_running()
        return
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, old)


def _worker_main(wid, parent_pid, manifests, labels, lanes, listen, log_dir, connect_timeout,
                 retired, writer, control, sandbox, tap) -> None:
    """A worker process: its own referee and bots, playing the matches dealt to it."""
    # the parent decides when to stop (SIGHUP: a closed terminal reaches its whole group)
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    outbox = _Outbox(writer)
    try:
        asyncio.run(_worker(wid, parent_pid, manifests, labels, lanes, listen, log_dir,
                            connect_timeout, retired, outbox, control, sandbox, tap))
    except ArenaPaused as exc:   # this process was stopped and a bot left: the parent stops
        outbox.put(("paused", wid, str(exc)))
    except Exception as exc:  # pragma: no cover - reported to the parent, which stops
        outbox.put(("error", wid, f"{exc.__class__.__name__}: {exc}"))
    finally:
        # the parent reads to the end, unless it died (then a send fails at once)
        outbox.close(timeout=10.0)


async def _worker(wid, parent_pid, manifests, labels, lanes, listen, log_dir, connect_timeout,
                  retired, outbox: _Outbox, control, sandbox, tap) -> None:
    from arena.tournament.executor import LocalExecutor, process_seats

    # the parent counts crashes and retires bots everywhere: no ledger here
    seats = process_seats(manifests, labels, sandbox, log_dir, connect_timeout)
    listeners = [] if tap is None else [tap.listener(
        lambda batch: outbox.put(("watch", wid, batch)))]
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

    def spec_of(plan: PlannedMatch) -> MatchSpec:   # as a lane begins it, its bots seated
        index, spec = specs[plan.key]
        outbox.put(("begun", wid, index))
        return spec

    async def on_result(plan: PlannedMatch, result) -> None:
        index, _ = specs.pop(plan.key)
        outbox.put(("result", wid, index, result))

    async def beat() -> None:   # from the event loop: a loop that is stuck says nothing
        while True:
            await asyncio.sleep(BEAT_S)
            outbox.put(("beat", wid))

    outbox.put(("ready", wid))
    beating = asyncio.ensure_future(beat())
    try:
        await executor.play(dealt.get, spec_of, on_result)
    except asyncio.CancelledError:
        pass
    finally:
        beating.cancel()
        done.set()
