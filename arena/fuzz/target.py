"""The server under fuzz: a real ``arena serve`` in a process of its own, with healthy
traffic beside the fuzz.

The server is started as organisers start it (``python -m arena.cli.main serve``) on a
fresh database, listening on ``[::]`` so that it can be reached from two "hosts": the
IPv4 loopback, where hostile clients come from (their refused hellos get that host
refused for a while, by design), and the IPv6 loopback, where the fuzzer's own bots and
the healthy bots connect. (Without IPv6 both are the IPv4 loopback, and the fuzzer keeps
its refused hellos under the limit.)

Beside the fuzz, two real bots (``bots/random``, the Python SDK, each its own process)
play one healthy tournament after another on the same server. A healthy match that ends
with a verdict, or a healthy tournament that stops making progress, is a session the
fuzz disturbed. The server's output is kept in a file and read for errors: a handler
that raised (gRPC logs ``Unexpected [...] raised by servicer method``), a task whose
exception nobody retrieved, a listener that failed, any traceback.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ono99.transport import grpc
from ono99.v1 import organizer_pb2 as opb

from arena.fuzz.client import Channels, Loop, Outcome, unary

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "bots" / "random" / "bot.py"

#: Lines of the server's output that mean a handler or a task failed.
ERROR_PATTERNS = re.compile(
    r"Traceback \(most recent call last\)|raised by servicer method|Exception calling application"
    r"|exception was never retrieved|Exception in callback|failed in (frame|match_\w+|verdict)"
    r"|Fatal error|Segmentation fault|MemoryError")

HEALTHY = ("healthy-a", "healthy-b")
HEALTHY_GAMES = 20                 # matches per healthy tournament
#: the Referee machine's two seats, a pair of these in turn from example to example: a
#: token is let in 60 times a minute (arena.referee.lobby), and each example connects its
#: pair afresh, about once a second
FUZZ_BOTS = tuple(f"fuzz-{c}" for c in "abcdefgh")
#: the fuzz tournaments' clock: no fuzz step ever times out a turn
FUZZ_MOVE_MS = 120_000
#: how long a bot whose stream ended may take to come back mid-match: the fuzzer's bots
#: reconnect at once, but a loaded machine took more than a second to notice the end
RECONNECT_GRACE = 5


def _organizer(name: str) -> str:
    return f"/ono99.v1.Organizer/{name}"


@dataclass
class Healthy:
    """What the healthy bots played while the fuzz ran."""

    matches: int = 0
    tournaments: int = 0
    disturbed: list[str] = field(default_factory=list)   # what went wrong, one line each
    last_match: float = field(default_factory=time.monotonic)


class ServedArena:
    """``arena serve`` under fuzz, its addresses and organiser token, the fuzzer's client
    loop, the registered bots' tokens, and the healthy traffic."""

    def __init__(self, folder: Path, healthy: bool = True, log: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        """Serve from ``folder`` (the database, the server's output, the healthy bots'
        stderr), with healthy traffic unless told not to; ``env``: the environment of the
        server and the healthy bots (default: this process's)."""
        self.env = dict(os.environ if env is None else env)
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.db = self.folder / "arena.db"
        self.log = log or self.folder / "serve.log"
        self.with_healthy = healthy
        self.proc: subprocess.Popen | None = None
        self.bots: list[subprocess.Popen] = []
        self.loop = Loop()
        self.channels = Channels(self.loop)
        self.tokens: dict[str, str] = {}
        self.healthy = Healthy()
        self.messages = 0               # every message and call the fuzzer sent
        self.notes: list[str] = []      # things worth a line in a report, not failures
        #: refused hellos that count against a host (arena.referee.servicer), by host
        self.refused_hellos: dict[str, list[float]] = {}
        #: what the machines' examples leave for the next (the server remembers it too):
        #: each fuzz bot's last resume key, and the last version number of each bot name
        self.resume_keys: dict[str, str] = {}
        self.admitted: dict[str, list[float]] = {}   # bot name -> when its hellos were let in
        self.examples = 0               # the Referee machine's, so far (its pair of bots)
        self.versions: dict[str, int] = {}
        self._healthy_task = None
        self._stopping = False
        self._log_seen = 0
        self.rss_start_kb = 0

    # ---------------------------------------------------------------- starting

    def start(self) -> ServedArena:
        ipv6 = _has_ipv6()
        listen = "[::]:0" if ipv6 else "127.0.0.1:0"
        env = {**self.env, "PYTHONUNBUFFERED": "1"}
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "arena.cli.main", "serve", "--db", str(self.db),
                 "--listen", listen, "--absent-after", "1", "--reconnect-grace", str(RECONNECT_GRACE)],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        text = self._wait_for(r"spectators at \S+:\d+")
        port = int(re.search(r"arena server at \S+:(\d+)", text).group(1))
        watch = int(re.search(r"spectators at \S+:(\d+)", text).group(1))
        self.organizer_token = re.search(r"organizer token: (\S+)", text).group(1)
        self.hostile = f"127.0.0.1:{port}"                 # refused hellos come from here
        self.player = f"[::1]:{port}" if ipv6 else self.hostile
        self.spectator = f"127.0.0.1:{watch}"
        self.hostile_host = "ipv4:127.0.0.1"
        self.player_host = "ipv6:%5B::1%5D" if ipv6 else self.hostile_host
        self._log_seen = 0
        for name in FUZZ_BOTS + (HEALTHY if self.with_healthy else ()):
            self.tokens[name] = self.add_bot(name)
        # a token that worked once and was withdrawn: a hello with it is a bad token
        self.withdrawn_token = self.add_bot("fuzz-gone")
        self.organize("RemoveBot", opb.RemoveBotRequest(name="fuzz-gone"))
        if self.with_healthy:
            for name in HEALTHY:
                self._launch(name)
            self._wait_connected(HEALTHY)
            self._healthy_task = self.loop.spawn(self._healthy_loop())
            self._wait_healthy_match(60)
        self.rss_start_kb = self.rss_kb()
        return self

    def _wait_for(self, pattern: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            if re.search(pattern, text):
                return text
            if self.proc.poll() is not None:
                raise RuntimeError(f"arena serve exited {self.proc.returncode}:\n{text}")
            time.sleep(0.05)
        raise RuntimeError(f"arena serve did not print {pattern!r} in {timeout} s")

    def _launch(self, name: str) -> None:
        env = {**self.env, "ONO99_REFEREE": self.player, "ONO99_TOKEN": self.tokens[name]}
        err = (self.folder / f"{name}.stderr").open("w")
        self.bots.append(subprocess.Popen([sys.executable, str(RANDOM_BOT)], cwd=ROOT, env=env,
                                          stdout=subprocess.DEVNULL, stderr=err,
                                          stdin=subprocess.DEVNULL))

    def _wait_connected(self, names, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            listed = opb.ListBotsResponse.FromString(self.organize("ListBots", opb.ListBotsRequest()).reply)
            if all(b.connected for b in listed.bots if b.name in names):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the healthy bots did not connect in {timeout} s")

    def add_bot(self, name: str) -> str:
        """Register a remote bot; its token."""
        outcome = self.organize("AddRemoteBot", opb.AddRemoteBotRequest(name=name))
        if not outcome.ok:
            raise RuntimeError(f"cannot register {name}: {outcome.code} {outcome.details}")
        return opb.AddRemoteBotResponse.FromString(outcome.reply).token

    # ---------------------------------------------------------------- calls

    @property
    def auth(self) -> tuple:
        return (("authorization", f"Bearer {self.organizer_token}"),)

    def organize(self, method: str, request, token: bool = True) -> Outcome:
        """An Organizer call with the organiser token (not counted as fuzz)."""
        data = request if isinstance(request, bytes) else request.SerializeToString()

        async def call() -> Outcome:
            return await unary(self.channels.get(self.hostile), _organizer(method), data,
                               self.auth if token else None)

        return self.loop.run(call(), 60)

    # ---------------------------------------------------------------- healthy traffic

    async def _healthy_loop(self) -> None:
        n = 0
        channel = self.channels.get(self.hostile)
        call_of = channel.unary_stream(_organizer("RunTournament"),
                                       request_serializer=lambda b: b,
                                       response_deserializer=opb.TournamentProgress.FromString)
        while not self._stopping:
            n += 1
            request = opb.TournamentRequest(name=f"healthy-{n}", bots=list(HEALTHY),
                                            games=HEALTHY_GAMES, no_duplicate=True,
                                            move_ms=5000, bank_ms=10_000)
            finished = False
            try:
                async for progress in call_of(request.SerializeToString(), metadata=self.auth):
                    kind = progress.WhichOneof("kind")
                    if kind == "match":
                        m = progress.match
                        self.healthy.matches += 1
                        self.healthy.last_match = time.monotonic()
                        if m.verdicts or m.termination not in ("last_standing", "target_reached",
                                                                "max_plays"):
                            self.healthy.disturbed.append(
                                f"healthy match {m.key} of healthy-{n}: {m.termination}, "
                                + "; ".join(f"seat {v.seat} {v.kind}: {v.detail}" for v in m.verdicts))
                    elif kind == "retired":
                        self.healthy.disturbed.append(f"healthy-{n}: {progress.retired.bot} "
                                                      f"retired: {progress.retired.reason}")
                    elif kind == "finished":
                        finished = True
            except grpc.aio.AioRpcError as exc:
                if self._stopping:
                    return
                self.healthy.disturbed.append(f"healthy-{n}: RunTournament ended with "
                                              f"{exc.code().name}: {exc.details()}")
                await asyncio.sleep(1)
            if finished:
                self.healthy.tournaments += 1
            elif not self._stopping:
                self.healthy.disturbed.append(f"healthy-{n}: its progress ended before 'finished'")

    def _wait_healthy_match(self, timeout: float) -> bool:
        start = self.healthy.matches
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.healthy.matches > start:
                return True
            time.sleep(0.05)
        return False

    def check_healthy(self, timeout: float = 60.0) -> list[str]:
        """What disturbed the healthy bots so far, plus a line if they do not finish one
        more match within ``timeout`` s (the server stopped serving them) or a healthy
        bot process exited."""
        problems = list(self.healthy.disturbed)
        if not self.with_healthy:
            return problems
        for bot in self.bots:
            if bot.poll() is not None:
                problems.append(f"a healthy bot process exited with {bot.returncode}")
        if not self._wait_healthy_match(timeout):
            problems.append(f"no healthy match finished in {timeout:g} s: the server stopped "
                            "serving the healthy bots")
        return problems

    # ---------------------------------------------------------------- the server's state

    def errors(self) -> list[str]:
        """Lines of the server's output that say a handler or a task failed (each with the
        lines after it, up to the next error)."""
        lines = self.log.read_text(errors="replace").splitlines()
        found = []
        for i, line in enumerate(lines):
            if ERROR_PATTERNS.search(line) and not line.startswith(" "):
                found.append("\n".join(lines[i:i + 30]))
        return found

    def new_errors(self) -> list[str]:
        """:meth:`errors` found since the last call."""
        found = self.errors()
        new, self._log_seen = found[self._log_seen:], len(found)
        return new

    def rss_kb(self) -> int:
        """The server process's resident memory, in KiB."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def note_refused(self, host: str) -> None:
        self.refused_hellos.setdefault(host, []).append(time.monotonic())

    def blocked(self, host: str, limit: int, window: float, margin: float = 2.0) -> bool | None:
        """Whether the referee now refuses ``host``'s hellos unread: True, False, or None
        when a refusal is within ``margin`` s of leaving the window (either may happen)."""
        now = time.monotonic()
        times = [t for t in self.refused_hellos.get(host, []) if t > now - window - margin]
        self.refused_hellos[host] = times[-limit:]
        surely = [t for t in times if t > now - window + margin]
        if len(surely) >= limit:
            return True
        if len(times) >= limit:
            return None
        return False

    # ---------------------------------------------------------------- stopping

    def stop(self) -> None:
        self._stopping = True
        if self._healthy_task is not None:
            self._healthy_task.cancel()
        try:
            self.channels.close()
        except Exception:
            pass
        self.loop.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for bot in self.bots:
            if bot.poll() is None:
                bot.terminate()
        for bot in self.bots:
            try:
                bot.wait(15)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait(10)

    def __enter__(self) -> ServedArena:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _has_ipv6() -> bool:
    """Whether this machine can listen and connect on the IPv6 loopback."""
    try:
        with socket.socket(socket.AF_INET6) as server:
            server.bind(("::1", 0))
            server.listen()
            with socket.create_connection(("::1", server.getsockname()[1]), timeout=2):
                return True
    except OSError:
        return False
