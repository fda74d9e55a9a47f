"""``arena bench scale``: the same tournament on the multi-process executor and on Ray.

The tournament of ``arena bench tournament`` (4 copies of ``bots/random``, 2 seats,
duplicate deals, a fixed seed, real referees, real bot processes, a real SQLite file) is
played through the executor registry on ``multiprocess`` and on ``ray``, both with as many
matches in flight as this machine has cores, on those cores: a local Ray cluster started
once before any timing (or the one at ``--ray-address``). The executors alternate, in
turn order too, over the repeats, and each figure is the median over its runs, so that
the drift of a shared machine weighs on both alike. The first tenth of each run's matches
(bot processes and Ray's actors starting) is not timed, nor is anything after its last
result (stopping the processes).

Reported per executor: matches/s, ms per match, storage ms per match (the store writer's
transaction), this process's CPU per match (the driver: dealing, ledger, store writer,
and for Ray its core worker), and the CPU per match of every other process of the run
(referees, bots, Ray's own); for Ray also the overhead of each match (the driver's round
trip minus the actor's time with it: p50, p99, mean) and the matches per node. Then the
model ``docs/scale.md`` uses: throughput against nodes of this machine's cores, the least
of what the nodes play (cores / CPU seconds per match on the nodes), what one driver
deals (1 / its CPU per match) and what one store writer writes (1 / its time per match).
Ends with ``scale: ray = R x multiprocess on the same cores; overhead O ms per match``.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from arena.bench import procs
from arena.bench.load import _percentile
from arena.bench.tournament import _bots, statistics_of
from arena.store.sqlite import SQLiteStore
from arena.tournament.executors import make_executor
from arena.tournament.tournament import Settings, Tournament

EXECUTORS = ("multiprocess", "ray")
#: Nodes of the projection (each with this machine's cores).
NODES = (1, 2, 4, 8, 16)


@dataclass
class ScaleRun:
    """One run of the tournament on one executor, its timed part."""

    executor: str
    matches: int                  # timed (the first tenth is not)
    seconds: float
    storage_seconds: float        # the store writer's transactions
    driver_cpu: float             # this process (all its threads)
    others_cpu: float             # every process this one started, and theirs
    stored: int = 0               # matches in the store after the run (all of them)
    planned: int = 0
    overheads: list[float] = field(default_factory=list)   # ray: timed matches, seconds
    nodes: Counter[str] = field(default_factory=Counter)   # ray: matches per node id

    @property
    def rate(self) -> float:
        return self.matches / self.seconds


@dataclass
class ScaleFigures:
    """What ``arena bench scale`` found, run by run and in summary."""

    cores: int
    runs: list[ScaleRun]
    median: dict[str, ScaleRun]   # per executor: its run of median rate
    ratio: float                  # R: ray's median rate / multiprocess's
    overhead_ms: float            # O: the mean overhead per match of every timed Ray match
    overhead_p50_ms: float
    overhead_p99_ms: float
    core_s: float                 # seconds of core time per match on Ray: cores / rate
    node_cpu_s: float             # CPU per match of the processes that would be on the nodes
    driver_cpu_s: float           # CPU per match of the driver (Ray)
    store_s: float                # the store writer's time per match (Ray)
    projection: list[tuple[int, float, float, float, float]]   # nodes, node/driver/store bound, least

    def line(self) -> str:
        return (f"scale: ray = {self.ratio:.2f} x multiprocess on the same cores; "
                f"overhead {self.overhead_ms:.2f} ms per match")


def measure(executor: str, games: int, folder: Path, rep: int, cores: int) -> ScaleRun:
    """The tournament on ``executor`` with ``cores`` matches in flight, timed after its
    first tenth of matches and up to its last result."""
    tag = f"{executor}-{rep}"
    store = SQLiteStore(folder / f"{tag}.db")
    settings = Settings(bot_dirs=tuple(_bots(folder / tag)), table_size=2, games=games, seed=7,
                        move_ms=5000, bank_ms=10_000)
    t = Tournament.create(store, f"bench-{tag}", settings)
    ex = make_executor(executor, t.setup(cores, log_dir=folder / "logs" / tag))
    total = len(t.plan)
    warmup = max(1, total // 10)   # bot processes and actors start during these: not timed
    done = [0]
    marks: dict[str, tuple[float, float, float, float]] = {}

    def sample() -> tuple[float, float, float, float]:
        others = sum(procs.cpu_seconds(pid) for pid, _ in procs.descendants())
        return time.perf_counter(), t.write_seconds, time.process_time(), others

    def on_result(plan, result) -> None:
        done[0] += 1
        if done[0] == warmup:
            marks["start"] = sample()
        if done[0] == total:
            marks["end"] = sample()

    asyncio.run(t.play(ex, on_result))
    (t0, w0, d0, o0), (t1, w1, d1, o1) = marks["start"], marks["end"]
    keys = {m.key for m in store.matches(t.record)}
    run = ScaleRun(executor, total - warmup, t1 - t0, w1 - w0, d1 - d0, o1 - o0,
                   stored=len(keys), planned=total)
    if executor == "ray":
        run.overheads = list(ex.overheads[warmup:])
        run.nodes = Counter(ex.nodes)
    store.close()
    return run


def summarise(runs: list[ScaleRun], cores: int) -> ScaleFigures:
    median = {name: statistics_of([r for r in runs if r.executor == name]) for name in EXECUTORS}
    on_ray = [r for r in runs if r.executor == "ray"]
    overheads = sorted(o for r in on_ray for o in r.overheads)
    ray_run = median["ray"]
    per = ray_run.matches
    node_cpu = ray_run.others_cpu / per          # referees, bots, Ray's own processes
    driver_cpu = ray_run.driver_cpu / per
    store_s = ray_run.storage_seconds / per
    projection = []
    for n in NODES:
        # a joined cluster's actors are not this process's children: their CPU is not
        # counted (0), so the nodes set no bound the model knows (it was a ZeroDivisionError)
        nodes_bound = n * cores / node_cpu if node_cpu > 0 else math.inf
        bounds = (nodes_bound, 1 / driver_cpu, 1 / store_s)
        projection.append((n, *bounds, min(bounds)))
    return ScaleFigures(
        cores, runs, median, ray_run.rate / median["multiprocess"].rate,
        1000 * statistics.fmean(overheads) if overheads else 0.0,
        1000 * _percentile(overheads, 0.5), 1000 * _percentile(overheads, 0.99),
        cores / ray_run.rate, node_cpu, driver_cpu, store_s, projection)


def run(console, games: int = 40, repeats: int = 3, address: str | None = None) -> ScaleFigures:
    from rich.table import Table

    cores = os.cpu_count() or 1
    folder = Path(tempfile.mkdtemp(prefix="ono99-bench-scale-"))
    from arena.tournament.ray_executor import connect, disconnect   # ray: only here

    # joined (or started) once, before any timing: the runs' executors reuse it
    connect(address, cores)
    try:   # alternated, in turn order too, so that the machine's drift weighs on both alike
        runs = [measure(name, games, folder, r, cores) for r in range(repeats)
                for name in (EXECUTORS if r % 2 == 0 else EXECUTORS[::-1])]
    finally:
        disconnect()
        shutil.rmtree(folder, ignore_errors=True)
    figs = summarise(runs, cores)
    console.print("matches/s of every run, in order: " + ", ".join(
        f"{r.executor} {r.rate:.1f}" for r in runs))
    table = Table(title=f"scale: 4 random bots, 2 seats, duplicate deals, {runs[0].matches} timed "
                        f"matches per run, {cores} in flight on {cores} cores, median of "
                        f"{repeats} runs each, alternated (real referees, bot processes, SQLite)")
    # per match; "others": every process of the run but this one (referees, bots, Ray's)
    for col in ("executor", "matches/s", "ms/match", "storage ms/match", "driver CPU ms/match",
                "others' CPU ms/match", "stored"):
        table.add_column(col, justify="right")
    for name, r in figs.median.items():
        table.add_row(name, f"{r.rate:.1f}", f"{1000 / r.rate:.2f}",
                      f"{1000 * r.storage_seconds / r.matches:.3f}",
                      f"{1000 * r.driver_cpu / r.matches:.2f}",
                      f"{1000 * r.others_cpu / r.matches:.2f}", f"{r.stored}/{r.planned}")
    console.print(table)
    nodes = Counter()
    for r in runs:
        nodes.update(r.nodes)
    console.print(f"ray overhead per match (driver round trip minus the actor's time), every "
                  f"timed match: p50 {figs.overhead_p50_ms:.2f} ms, p99 "
                  f"{figs.overhead_p99_ms:.2f} ms, mean {figs.overhead_ms:.2f} ms; matches per "
                  "node: " + ", ".join(f"node {node[:8]}: {n}" for node, n in nodes.most_common()))
    node_cpu = f"{1000 * figs.node_cpu_s:.2f} ms CPU" if figs.node_cpu_s else "no CPU measured"
    console.print(f"per match on ray: {1000 * figs.core_s:.2f} ms of core time ({cores} cores / "
                  f"rate), {node_cpu} on the nodes (referees, bots, "
                  f"Ray's processes), {1000 * figs.driver_cpu_s:.2f} ms CPU in the driver, "
                  f"{1000 * figs.store_s:.3f} ms in the store writer")
    model = Table(title=f"projected matches/s against nodes of {cores} cores: the least of the "
                        "nodes' (cores / node CPU per match), one driver's (1 / its CPU per "
                        "match), one store writer's (1 / its time per match)")
    for col in ("nodes", "cores", "nodes' bound", "driver's bound", "store's bound", "projected"):
        model.add_column(col, justify="right")
    for n, nodes_bound, driver_bound, store_bound, least in figs.projection:
        unmeasured = math.isinf(nodes_bound)
        model.add_row(str(n), str(n * cores), "-" if unmeasured else f"{nodes_bound:.0f}",
                      f"{driver_bound:.0f}", f"{store_bound:.0f}",
                      f"at most {least:.0f}" if unmeasured else f"{least:.0f}")
    console.print(model)
    if figs.node_cpu_s == 0:
        console.print("the nodes' CPU is not measured: the joined cluster's processes are not "
                      "this machine's children (--ray-address), so the nodes set no bound here")
    console.print(figs.line())
    return figs
