"""``arena bench referee``: the referee's per-turn cost against the bare gRPC floor.

Both halves run in this process on the same transport (a unix socket by default):

* bare: a servicer that writes a TurnRequest-sized message on a Play stream and waits
  for the answer, to client processes that answer at once over the Python SDK's
  transport (grpc.aio in one thread: ``arena.bench.pingpong_client``);
* referee: full matches between two ``bots/random`` processes on the real referee.

Round trips are measured the same way in both: from just before the write to the
answer's arrival. Every client and bot is started once; then the four runs (bare with 1
stream, referee with 1 match, bare with 8 streams, referee with 8 matches in flight) take
turns in short slices for several rounds, so that the machine's drift (a shared VM's
speed moves by 20% from minute to minute) weighs on all four alike.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ono99.transport import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc

from arena.bots.launcher import LocalBot
from arena.bots.manifest import load_manifest
from arena.referee.results import MatchSpec, TimeControl
from arena.referee.listeners import MatchListener
from arena.referee.runner import MatchRunner
from arena.referee.server import RefereeServer, socket_folder
from arena.referee.wire import EventEncoder, SeatStatesCache, turn_request
from arena.rules.game import Game
from arena.rules.rulesets import make_config

ROOT = Path(__file__).resolve().parents[2]
STREAMS = 8
RUNS = ("bare-1", "referee-1", "bare-8", "referee-8")


@dataclass
class Figures:
    """Round trips of one run, pooled over its slices."""

    latencies_us: list[int] = field(default_factory=list)
    seconds: float = 0.0
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
    events = EventEncoder().update(game.events)[-2:]
    return turn_request("bench-0000000000-g1", 12345, view, SeatStatesCache(), events,
                        1000, 10000, 321)


class _Gate:
    """Which run may work now, and where its round trips go."""

    def __init__(self) -> None:
        self.run: str | None = None
        self.sink: list[int] | None = None
        self.changed = asyncio.Event()

    def open(self, run: str | None, sink: list[int] | None) -> None:
        self.run, self.sink = run, sink
        self.changed.set()
        self.changed = asyncio.Event()

    async def wait(self, runs: tuple[str, ...]) -> None:
        while self.run not in runs:
            await self.changed.wait()


class _PingServicer(referee_pb2_grpc.RefereeServicer):
    """Streams ping-pong while their run is open (stream 0 in both runs, 1-7 in bare-8)."""

    def __init__(self, gate: _Gate) -> None:
        self.gate = gate
        self.msg = sample_turn()
        self.connected = 0
        self.stop = False

    async def Play(self, request_iterator, context):  # noqa: N802
        await context.read()  # hello
        index = self.connected
        self.connected += 1
        runs = ("bare-1", "bare-8") if index == 0 else ("bare-8",)
        msg, gate, perf = self.msg, self.gate, time.perf_counter_ns
        while not self.stop:
            await gate.wait(runs + ("stop",))
            if gate.run == "stop":
                break
            sink = gate.sink
            while gate.run in runs:
                t0 = perf()
                await context.write(msg)
                if await context.read() is grpc.aio.EOF:
                    return
                sink.append((perf() - t0) // 1000)
        await context.write(referee_pb2.RefereeMessage(goodbye=referee_pb2.Goodbye(reason="done")))


class _Latencies(MatchListener):
    def __init__(self, gate: _Gate, run: str) -> None:
        self.gate = gate
        self.run = run

    def frame(self, frame) -> None:
        if frame.latency_us is not None and self.gate.run == self.run:
            self.gate.sink.append(frame.latency_us)


def _address(server: grpc.aio.Server, listen: str, name: str) -> str:
    if listen == "unix":   # in a folder as the referee's (a short path), removed after
        address = f"unix:{socket_folder()}/{name}.sock"
        server.add_insecure_port(address)
        return address
    return f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"


async def measure(seconds: float, listen: str, rounds: int = 4) -> dict[str, Figures]:
    """Each run gets ``seconds`` in all, in ``rounds`` slices."""
    gate = _Gate()
    figures = {run: Figures() for run in RUNS}
    matches = {run: 0 for run in RUNS}

    bare = grpc.aio.server()
    pinger = _PingServicer(gate)
    referee_pb2_grpc.add_RefereeServicer_to_server(pinger, bare)
    bare_address = _address(bare, listen, "bare")
    await bare.start()
    # each client in a session of its own, as each bot is: the scheduler then weighs the
    # two runs' processes alike. In this process's session, the clients and the bare
    # server shared one autogroup, which other load on the machine squeezed, and the ratio
    # rose with that load (59-77% against 50-54% in alternated runs beside a test suite)
    clients = [await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena.bench.pingpong_client", bare_address, cwd=ROOT,
        start_new_session=True) for _ in range(STREAMS)]

    referee = await RefereeServer.start(listen)
    manifest = load_manifest(ROOT / "bots" / "random")
    pairs = [[LocalBot(manifest, referee.lobby, referee.address, f"random-{i}-{s}",
                       open_socket=referee.bot_socket) for s in range(2)]
             for i in range(STREAMS)]
    config = make_config("modern", None, 2)

    async def play(i: int, pair: list[LocalBot]) -> None:
        runs = ("referee-1", "referee-8") if i == 0 else ("referee-8",)
        listeners = {run: [_Latencies(gate, run)] for run in runs}
        seed = i * 1_000_000_000
        while True:
            await gate.wait(runs + ("stop",))
            run = gate.run
            if run == "stop":
                return
            seed += 1
            spec = MatchSpec(f"bench-{i}-{seed}", config, seed, ("random", "random"),
                             TimeControl(5000, 10000))
            await MatchRunner(spec, [b.session for b in pair], listeners[run]).run()
            if gate.run == run:
                matches[run] += 1

    try:
        await asyncio.gather(*(b.start() for pair in pairs for b in pair))
        while pinger.connected < STREAMS:
            await asyncio.sleep(0.01)
        players = [asyncio.create_task(play(i, pair)) for i, pair in enumerate(pairs)]
        for run in RUNS:  # warm-up: every path once
            gate.open(run, [])
            await asyncio.sleep(0.3)
        for _ in range(rounds):
            for run in RUNS:
                fig = figures[run]
                before = matches[run]
                start = time.perf_counter()
                gate.open(run, fig.latencies_us)
                await asyncio.sleep(seconds / rounds)
                gate.open(None, None)
                fig.seconds += time.perf_counter() - start
                await asyncio.sleep(0.05)  # let the last round trips of the slice land
                fig.matches += matches[run] - before
        gate.open("stop", None)
        await asyncio.gather(*players)
    finally:
        pinger.stop = True
        gate.open("stop", None)
        await asyncio.gather(*(c.wait() for c in clients))
        await bare.stop(0)
        if bare_address.startswith("unix:"):
            shutil.rmtree(os.path.dirname(bare_address.removeprefix("unix:")), ignore_errors=True)
        await referee.stop()
        await asyncio.gather(*(b.stop() for pair in pairs for b in pair))
    return figures


def run(seconds: float, listen: str, console, rounds: int = 4) -> dict[str, Figures]:
    from rich.table import Table

    figs = asyncio.run(measure(seconds, listen, rounds))
    table = Table(title=f"referee vs bare gRPC ping-pong ({listen} socket, {seconds:g} s per run "
                        f"in {rounds} interleaved slices)")
    for col in ("run", "round trips", "p50 us", "p99 us", "round trips/s", "matches/s"):
        table.add_column(col, justify="left" if col == "run" else "right")
    labels = {"bare-1": "bare, 1 stream", "referee-1": "referee, 1 match",
              "bare-8": "bare, 8 streams", "referee-8": "referee, 8 matches in flight"}
    for key, fig in figs.items():
        table.add_row(labels[key], f"{len(fig.latencies_us):,}", f"{fig.p50:.0f}", f"{fig.p99:.0f}",
                      f"{fig.rate:,.0f}",
                      f"{fig.matches / fig.seconds:.1f}" if key.startswith("referee") else "")
    console.print(table)
    b1, r1, b8, r8 = (figs[k] for k in RUNS)
    console.print(f"referee: turn p50 {r1.p50:.0f} us = {r1.p50 / b1.p50:.2f} x bare p50 {b1.p50:.0f} us; "
                  f"8 in flight: {100 * r8.rate / b8.rate:.0f}% of bare throughput", highlight=False)
    return figs
