"""An executor that spreads matches over several referee processes.

A referee is one Python process, and one process does not use two cores well: measured on
2 cores, one referee running 2 matches at once played 1.17x the matches of one running 1,
while two referee processes played 1.64-1.8x. So for concurrency C this executor starts
W = min(C, cores) worker processes; each runs its own referee and its own bot processes
(a :class:`~arena.tournament.executor.LocalExecutor` with ceil(C / W) matches at once) on
its share of the matches, and sends each result back. This process keeps the single
writer to the store and the one view of the tournament: it counts crashes from the
results and retires a bot everywhere once it fails too often (a worker may start one more
match with it before it hears). Workers ignore Ctrl-C and stop when told, or when this
process dies.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import queue
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from arena.bots.manifest import BotManifest
from arena.bots.sandbox import SandboxConfig
from arena.referee.listeners import ListenerBus
from arena.referee.results import MatchSpec, VerdictKind
from arena.tournament.executor import Executor, ResultSink
from arena.tournament.seats import retire_reason
from arena.tournament.schedule import PlannedMatch

_POLL_S = 0.2


class MultiProcessExecutor(Executor):
    """Matches on ``workers`` referee processes, ``concurrency`` at once in all."""

    def __init__(self, manifests: Sequence[BotManifest], labels: Sequence[str], concurrency: int,
                 workers: int | None = None, listen: str = "unix", log_dir: Path | None = None,
                 connect_timeout: float = 10.0, retire_after: int = 3,
                 on_retire: Callable[[str, str], None] | None = None,
                 sandbox: SandboxConfig = SandboxConfig(), bus: ListenerBus | None = None) -> None:
        """``bus``: listeners for the workers' matches (their taps run in the workers,
        what they send is delivered here)."""
        self.sandbox = sandbox
        self.bus = bus
        self.manifests = list(manifests)
        self.labels = list(labels)
        self.concurrency = concurrency
        self.workers = max(1, min(workers or os.cpu_count() or 1, concurrency))
        self.listen = listen
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.retire_after = retire_after
        self.on_retire = on_retire
        self.crashes = [0] * len(self.manifests)
        self.retired: dict[int, str] = {}

    async def run(self, plans: Sequence[PlannedMatch], spec_of: Callable[[PlannedMatch], MatchSpec],
                  on_result: ResultSink) -> None:
        if not plans:
            return
        ctx = multiprocessing.get_context("spawn")  # no fork: gRPC's threads do not survive it
        results = ctx.Queue()
        n = min(self.workers, len(plans))
        per_worker = math.ceil(self.concurrency / n)
        controls = [ctx.Queue() for _ in range(n)]
        shares = [[(i, plans[i], spec_of(plans[i])) for i in range(w, len(plans), n)] for w in range(n)]
        procs = []
        for w in range(n):
            log_dir = None if self.log_dir is None else self.log_dir / f"worker{w}"
            procs.append(ctx.Process(
                target=_worker_main, name=f"arena-worker-{w}", daemon=True,
                args=(w, os.getpid(), self.manifests, self.labels, shares[w], per_worker,
                      self.listen, log_dir, self.connect_timeout, dict(self.retired),
                      results, controls[w], self.sandbox,
                      None if self.bus is None else self.bus.tap)))
        for p in procs:
            p.start()
        loop = asyncio.get_running_loop()
        running = n
        try:
            while running:
                try:
                    msg = await loop.run_in_executor(None, results.get, True, _POLL_S)
                except queue.Empty:
                    dead = [p for p in procs if not p.is_alive() and p.exitcode not in (0, None)]
                    if dead:
                        raise RuntimeError(f"referee worker {dead[0].name} died "
                                           f"(exit code {dead[0].exitcode})")
                    continue
                kind = msg[0]
                if kind == "result":
                    _, index, result = msg
                    self._count_crashes(plans[index], result, controls)
                    outcome = on_result(plans[index], result)
                    if asyncio.iscoroutine(outcome):
                        await outcome
                elif kind == "watch":
                    self.bus.deliver(msg[1])
                elif kind == "done":
                    running -= 1
                elif kind == "error":
                    raise RuntimeError(f"referee worker {msg[1]} failed: {msg[2]}")
        finally:
            for c in controls:
                c.put(("stop",))
            await loop.run_in_executor(None, _join, procs, results)

    def _count_crashes(self, plan: PlannedMatch, result, controls) -> None:
        for verdict in result.verdicts:
            if verdict.kind != VerdictKind.CRASHED:
                continue
            bot = plan.seats[verdict.seat]
            self.crashes[bot] += 1
            if bot not in self.retired and self.crashes[bot] >= self.retire_after:
                reason = retire_reason(self.crashes[bot], verdict.detail)
                self.retired[bot] = reason
                for c in controls:
                    c.put(("retire", bot, reason))
                if self.on_retire is not None:
                    self.on_retire(self.labels[bot], reason)


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


def _worker_main(index, parent_pid, manifests, labels, share, concurrency, listen, log_dir,
                 connect_timeout, retired, results, control, sandbox, tap) -> None:
    """A worker process: its own referee and bots, playing its share of the matches."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        asyncio.run(_worker(parent_pid, manifests, labels, share, concurrency, listen, log_dir,
                            connect_timeout, retired, results, control, sandbox, tap))
    except Exception as exc:  # pragma: no cover - reported to the parent, which stops
        results.put(("error", index, f"{exc.__class__.__name__}: {exc}"))
    results.put(("done", index))


async def _worker(parent_pid, manifests, labels, share, concurrency, listen, log_dir,
                  connect_timeout, retired, results, control, sandbox, tap) -> None:
    from arena.tournament.executor import LocalExecutor, process_seats

    # the parent counts crashes and retires bots everywhere: no retirement here
    make = process_seats(manifests, labels, sandbox, log_dir, connect_timeout, retire_after=2**31)

    def seats(referee):
        made = make(referee)
        for bot, reason in retired.items():
            made[bot].retire(reason)
        return made

    listeners = [] if tap is None else [tap.listener(lambda batch: results.put(("watch", batch)))]
    executor = LocalExecutor(seats, concurrency, listen, listeners)
    by_key = {plan.key: (i, spec) for i, plan, spec in share}
    main = asyncio.current_task()

    async def watch() -> None:
        while True:
            await asyncio.sleep(_POLL_S)
            if os.getppid() != parent_pid:
                # the parent is gone: nobody will read what is queued, so do not wait at
                # exit for it to be written (a full pipe would keep this process alive)
                results.cancel_join_thread()
                main.cancel()
                return
            while True:
                try:
                    msg = control.get_nowait()
                except queue.Empty:
                    break
                if msg[0] == "stop":
                    main.cancel()
                    return
                if msg[0] == "retire":
                    retired[msg[1]] = msg[2]
                    if executor.seats:
                        executor.seats[msg[1]].retire(msg[2])

    watcher = asyncio.create_task(watch())

    def on_result(plan: PlannedMatch, result) -> None:
        results.put(("result", by_key[plan.key][0], result))

    try:
        await executor.run([plan for _, plan, _ in share], lambda p: by_key[p.key][1], on_result)
    except asyncio.CancelledError:
        pass
    finally:
        watcher.cancel()
