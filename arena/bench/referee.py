"""``arena bench referee``: the referee's per-turn cost against the bare gRPC floor.

Both halves run in this process on the same transport (a unix socket by default):

* bare: a servicer that writes a TurnRequest-sized message on a Play stream and waits
  for the answer, to a client process that answers at once (the Python SDK's transport);
* referee: full matches between two ``bots/random`` processes on the real referee.

Per-turn round trips are measured the same way in both (from just before the write to
the answer's arrival), with 1 stream / 1 match, then 8 streams / 8 matches in flight.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc

from arena.bots.launcher import LocalBot
from arena.bots.manifest import load_manifest
from arena.referee.results import MatchSpec, TimeControl
from arena.referee.runner import MatchListener, MatchRunner
from arena.referee.server import RefereeServer
from arena.referee.wire import SeatStatesCache, cards_to_wire, event_to_wire, view_to_wire
from arena.rules.game import Game
from arena.rules.rulesets import make_config

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Figures:
    """Round trips of one half of the benchmark."""

    latencies_us: list[int]
    seconds: float
    matches: int = 0

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_us)

    @property
    def p99(self) -> float:
        lat = sorted(self.latencies_us)
        return lat[min(len(lat) - 1, int(len(lat) * 0.99))]

    @property
    def rate(self) -> float:
        return len(self.latencies_us) / self.seconds


def sample_turn() -> referee_pb2.RefereeMessage:
    """A TurnRequest like the referee sends in a 2-seat modern match."""
    game = Game.new("modern", seats=2, seed=3)
    for _ in range(3):
        game.play(game.to_act, game.legal_cards()[0])
    view = game.view(game.to_act)
    return referee_pb2.RefereeMessage(turn=referee_pb2.TurnRequest(
        match_id="bench-0000000000-g1", turn_id=12345, view=view_to_wire(view, SeatStatesCache().get(view.table)),
        legal=cards_to_wire(view.legal), events=[event_to_wire(e) for e in game.events[-2:]],
        move_ms=1000, bank_ms=10000, previous_latency_us=321))


class _PingServicer(referee_pb2_grpc.RefereeServicer):
    def __init__(self, rounds: float, deadline: float, sink: list[int]) -> None:
        self.deadline = deadline
        self.sink = sink
        self.msg = sample_turn()

    async def Play(self, request_iterator, context):  # noqa: N802
        await context.read()  # hello
        msg = self.msg
        sink = self.sink
        perf = time.perf_counter_ns
        while time.perf_counter() < self.deadline:
            t0 = perf()
            await context.write(msg)
            if await context.read() is grpc.aio.EOF:
                return
            sink.append((perf() - t0) // 1000)
        await context.write(referee_pb2.RefereeMessage(goodbye=referee_pb2.Goodbye(reason="done")))


async def bare(streams: int, seconds: float, listen: str) -> Figures:
    """Ping-pong on ``streams`` Play streams from as many client processes."""
    sink: list[int] = []
    server = grpc.aio.server()
    warmup = 0.5
    servicer = _PingServicer(0, 0.0, sink)
    referee_pb2_grpc.add_RefereeServicer_to_server(servicer, server)
    if listen == "unix":
        import tempfile
        address = f"unix:{tempfile.mkdtemp(prefix='ono99-bench-')}/bare.sock"
        server.add_insecure_port(address)
    else:
        address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    await server.start()
    clients = [await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena.bench.pingpong_client", address, cwd=ROOT)
        for _ in range(streams)]
    # clients take a while to import grpc: start the clock once they are all streaming
    servicer.deadline = time.perf_counter() + 120
    while len(sink) < streams * 50:
        await asyncio.sleep(0.01)
    await asyncio.sleep(warmup)
    sink.clear()
    start = time.perf_counter()
    servicer.deadline = start + seconds
    await asyncio.gather(*(c.wait() for c in clients))
    elapsed = time.perf_counter() - start
    await server.stop(0)
    return Figures(list(sink), elapsed)


class _Latencies(MatchListener):
    def __init__(self) -> None:
        self.sink: list[int] = []
        self.recording = False

    def events(self, spec, game, events, seat, latency_us) -> None:
        if latency_us is not None and self.recording:
            self.sink.append(latency_us)


async def referee(in_flight: int, seconds: float, listen: str) -> Figures:
    """Matches between pairs of random bots, ``in_flight`` matches at once."""
    server = await RefereeServer.start(listen)
    manifest = load_manifest(ROOT / "bots" / "random")
    pairs = [[LocalBot(manifest, server.lobby, server.address, f"random-{i}-{s}") for s in range(2)]
             for i in range(in_flight)]
    await asyncio.gather(*(b.start() for pair in pairs for b in pair))
    config = make_config("modern", None, 2)
    listener = _Latencies()
    matches = [0]
    deadline = [float("inf")]

    async def loop(i: int, pair: list[LocalBot]) -> None:
        seed = i * 1_000_000
        while time.perf_counter() < deadline[0]:
            seed += 1
            spec = MatchSpec(f"bench-{i}-{seed}", config, seed, ("random", "random"),
                             TimeControl(5000, 10000))
            await MatchRunner(spec, [b.session for b in pair], [listener]).run()
            if listener.recording:
                matches[0] += 1

    try:
        deadline[0] = time.perf_counter() + 0.5 + seconds
        tasks = [asyncio.create_task(loop(i, pair)) for i, pair in enumerate(pairs)]
        await asyncio.sleep(0.5)  # warm-up
        listener.recording = True
        start = time.perf_counter()
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    finally:
        await server.stop()
        await asyncio.gather(*(b.stop() for pair in pairs for b in pair))
    return Figures(listener.sink, elapsed, matches[0])


async def measure(seconds: float, listen: str) -> dict[str, Figures]:
    out = {}
    out["bare-1"] = await bare(1, seconds, listen)
    out["referee-1"] = await referee(1, seconds, listen)
    out["bare-8"] = await bare(8, seconds, listen)
    out["referee-8"] = await referee(8, seconds, listen)
    return out


def run(seconds: float, listen: str, console) -> dict[str, Figures]:
    from rich.table import Table

    figs = asyncio.run(measure(seconds, listen))
    table = Table(title=f"referee vs bare gRPC ping-pong ({listen} socket, {seconds:g} s each)")
    for col in ("run", "round trips", "p50 us", "p99 us", "round trips/s", "matches/s"):
        table.add_column(col, justify="left" if col == "run" else "right")
    labels = {"bare-1": "bare, 1 stream", "referee-1": "referee, 1 match",
              "bare-8": "bare, 8 streams", "referee-8": "referee, 8 matches in flight"}
    for key, fig in figs.items():
        table.add_row(labels[key], f"{len(fig.latencies_us):,}", f"{fig.p50:.0f}", f"{fig.p99:.0f}",
                      f"{fig.rate:,.0f}", f"{fig.matches / fig.seconds:.1f}" if key.startswith("referee") else "")
    console.print(table)
    b1, r1, b8, r8 = figs["bare-1"], figs["referee-1"], figs["bare-8"], figs["referee-8"]
    console.print(f"referee: turn p50 {r1.p50:.0f} us = {r1.p50 / b1.p50:.2f} x bare p50 {b1.p50:.0f} us; "
                  f"8 in flight: {100 * r8.rate / b8.rate:.0f}% of bare throughput", highlight=False)
    return figs
