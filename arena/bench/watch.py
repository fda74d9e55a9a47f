"""``arena bench watch``: what spectators cost a tournament, and how late they see it.

The tournament of ``arena bench tournament`` (4 random bots, 2 seats, duplicate deals, real
referee processes, real bot processes, a real SQLite file) at concurrency 2, run
alternately without a spectator service and with one that 20 spectators follow, each a
gRPC client in a separate process (as they would be): 10 on TV, 10 each following a
live match picked from the list (a new one when theirs ends). The first tenth of each
run, while bot processes start, is not timed.

Throughput is the median matches/s of each kind of run; their ratio is what watching
keeps. Latency is, for every frame a spectator received live (not in a snapshot), the
time from the referee making it (``MatchFrame.time``) to the spectator reading it, on
this machine's clock.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import queue
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.bench.tournament import _bots
from arena.store.sqlite import SQLiteStore
from arena.tournament.standings import Played
from arena.tournament.tournament import Settings, Tournament
from arena.watch.bus import Bus
from arena.watch.hub import SpectatorHub
from arena.watch.server import SpectatorServer

SPECTATORS = 20
FOLLOW_PAUSE_S = 1.0   # a follower's pause between two matches (TV pauses 2 s)


@dataclass
class WatchRun:
    watched: bool
    matches: int
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    frames: int = 0
    snapshots: int = 0
    cpu_s: float = 0.0          # this (the serving) process's CPU over the timed part

    @property
    def rate(self) -> float:
        return self.matches / self.seconds


def _spectators_main(address: str, n: int, out, stop) -> None:
    """A process of ``n`` spectators; sends back their latencies when told to stop."""
    asyncio.run(_spectators(address, n, out, stop))


async def _spectators(address: str, n: int, out, stop) -> None:
    from ono99.transport import grpc
    from ono99.v1 import spectator_pb2 as pb, spectator_pb2_grpc

    from arena.watch import wire

    latencies: list[float] = []
    counts = {"frames": 0, "snapshots": 0}

    def take(msg) -> None:
        now = time.time()
        if msg.HasField("snapshot"):
            counts["snapshots"] += 1
            return
        frames = [msg.frame] if msg.HasField("frame") else msg.frames.frames
        for f in frames:
            counts["frames"] += 1
            if f.time:
                latencies.append((now - f.time) * 1000)

    async def tv(stub) -> None:
        async for msg in stub.WatchTV(wire.watch_tv_request()):
            take(msg)

    async def follower(stub, rng: random.Random) -> None:
        while True:
            listed = await stub.ListMatches(wire.list_request(recent=1))
            live = [m.match_id for m in listed.matches if m.status == pb.MATCH_STATUS_LIVE]
            if not live:
                await asyncio.sleep(0.01)
                continue
            try:
                async for msg in stub.WatchMatch(wire.watch_match_request(rng.choice(live))):
                    take(msg)
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(FOLLOW_PAUSE_S)   # a person looks at the result, then picks

    async with grpc.aio.insecure_channel(address) as channel:
        stub = spectator_pb2_grpc.SpectatorStub(channel)
        rng = random.Random(1)
        tasks = [asyncio.create_task(tv(stub) if i % 2 == 0 else follower(stub, rng))
                 for i in range(n)]
        while stop.empty():
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    out.put((latencies, counts["frames"], counts["snapshots"]))


def measure(watched: bool, games: int, folder: Path, rep: int) -> WatchRun:
    db = folder / f"watch-{watched}-{rep}.db"
    store = SQLiteStore(db)
    settings = Settings(bot_dirs=tuple(_bots(folder / f"{watched}-{rep}")), table_size=2,
                        games=games, seed=7, move_ms=5000, bank_ms=10_000)
    t = Tournament.create(store, f"bench-watch-{watched}", settings)
    total = len(t.plan)
    warmup = max(1, total // 10)
    done = [0]
    marks: dict[str, float] = {}
    run = WatchRun(watched, total - warmup, 0.0)

    async def go() -> None:
        hub = server = proc = None
        ctx = multiprocessing.get_context("spawn")
        out, stop = ctx.Queue(), ctx.Queue()
        bus = None
        if watched:
            hub = SpectatorHub()
            server = await SpectatorServer.start(hub)
            hub.tournament(t.name, t.names, total)
            bus = Bus(hub, t.name)
            proc = ctx.Process(target=_spectators_main, args=(server.address, SPECTATORS, out, stop),
                               daemon=True)
            proc.start()

        def on_result(plan, result) -> None:
            done[0] += 1
            if done[0] == warmup:
                marks["start"] = time.perf_counter()
                marks["cpu"] = time.process_time()
            if hub is not None:
                played = Played.of_result(plan.key, plan.sample, result)
                if played is not None:
                    hub.tournament_result(t.name, played, result.match_id)

        try:
            await t.run(2, on_result, log_dir=folder / "logs", bus=bus)
            marks["end"] = time.perf_counter()
            run.cpu_s = time.process_time() - marks["cpu"]
        finally:
            if proc is not None:
                stop.put(True)
                try:
                    latencies, frames, snapshots = await asyncio.to_thread(out.get, True, 30)
                    run.latencies_ms, run.frames, run.snapshots = latencies, frames, snapshots
                except queue.Empty:
                    pass
                proc.join(5)
                if proc.is_alive():
                    proc.terminate()
            if server is not None:
                await server.stop()

    asyncio.run(go())
    run.seconds = marks["end"] - marks["start"]
    store.close()
    return run


def run(console, games: int = 60, repeats: int = 3) -> tuple[float, float, float]:
    folder = Path(tempfile.mkdtemp(prefix="ono99-bench-watch-"))
    try:   # alternated, so that the machine's drift weighs on both alike
        runs = [measure(watched, games, folder, r) for r in range(repeats)
                for watched in (False, True)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    console.print("matches/s of every run, in order (and the serving process's CPU ms per "
                  "match): " + ", ".join(
                      f"{'watched' if r.watched else 'unwatched'} {r.rate:.1f} "
                      f"({1000 * r.cpu_s / r.matches:.2f})" for r in runs), highlight=False)
    plain = statistics.median(r.rate for r in runs if not r.watched)
    watched = statistics.median(r.rate for r in runs if r.watched)
    latencies = sorted(x for r in runs if r.watched for x in r.latencies_ms)
    frames = sum(r.frames for r in runs if r.watched)
    snapshots = sum(r.snapshots for r in runs if r.watched)
    p50 = latencies[len(latencies) // 2] if latencies else float("nan")
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan")
    console.print(f"{SPECTATORS} spectators (10 TV, 10 following a live match) received "
                  f"{frames} frames live and {snapshots} snapshots over {repeats} runs; "
                  f"{runs[0].matches} timed matches per run", highlight=False)
    keep = 100 * watched / plain
    console.print(f"watch: {SPECTATORS} spectators keep {keep:.0f}% of unwatched throughput; "
                  f"event latency p50 {p50:.1f} ms, p99 {p99:.1f} ms", highlight=False, soft_wrap=True)
    return keep, p50, p99
