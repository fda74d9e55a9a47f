"""A real spectator service for tests of its clients: a SpectatorHub and its gRPC server on
a free loopback port, in an event loop of their own (a thread), fed by matches the real
runner plays between house seats that follow a script: think a little before each move,
hold the match at a chosen move until the test lets it go (so a viewer surely joins in
the middle), and fail to answer at a chosen move (a timeout verdict). Each match is also
followed by `arena match`'s own live log, printed to a string: what the viewer prints is
compared with it."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable

from rich.console import Console

from arena.cli.match import LiveLog
from arena.fuzz.client import Loop
from arena.referee.house import FirstLegal, HouseSession
from arena.referee.lobby import token_hash
from arena.referee.runner import MatchRunner
from arena.watch.hub import SpectatorHub
from arena.watch.server import SpectatorServer

ORGANISER_TOKEN = "the-organiser-token"


class CountingHub(SpectatorHub):
    """The spectator hub (with the organiser's view), counting the matches it hears start
    and end, and the frames."""

    def __init__(self) -> None:
        super().__init__(organiser_view=True)
        self.started: set[str] = set()
        self.ended: set[str] = set()
        self.frames = 0

    def match_started(self, summary) -> None:
        self.started.add(summary.match_id)
        super().match_started(summary)

    def frame(self, match_id, frame, hands=None) -> None:
        self.frames += 1
        super().frame(match_id, frame, hands)

    def match_ended(self, match_id, over) -> None:
        self.ended.add(match_id)
        super().match_ended(match_id, over)


class Script:
    """How a match's house seats behave: ``think`` s before each move; at the match's
    ``hold``-th move, wait until :meth:`release`; a seat of ``fail`` gives no answer at
    its own move given there (``{seat: n}``)."""

    def __init__(self, think: float = 0.005, hold: int | None = None,
                 fail: dict[int, int] | None = None) -> None:
        self.think = think
        self.hold = hold
        self.fail = fail or {}
        self.moves = 0
        self.held = False
        self._go: asyncio.Event | None = None

    def release(self) -> None:
        """Let a held match go on (from the loop's thread)."""
        if self._go is not None:
            self._go.set()
        self.hold = None


class ScriptedSeat(HouseSession):
    def __init__(self, seat: int, script: Script) -> None:
        super().__init__(FirstLegal())
        self.seat = seat
        self.script = script
        self.own_moves = 0

    async def next_action(self, timeout):
        script = self.script
        script.moves += 1
        self.own_moves += 1
        await asyncio.sleep(script.think)
        if script.hold is not None and script.moves == script.hold:
            script._go = asyncio.Event()
            script.held = True
            await script._go.wait()
        if script.fail.get(self.seat) == self.own_moves:
            raise TimeoutError      # as a bot that never answers: a timeout verdict
        return await super().next_action(timeout)


class PlayedMatch:
    """A match under way in the service's loop: its runner, its end, and what `arena
    match` printed of it."""

    def __init__(self, runner: MatchRunner, log: io.StringIO, future) -> None:
        self.runner = runner
        self.log = log
        self.future = future

    @property
    def match_id(self) -> str:
        return self.runner.spec.match_id

    def result(self, timeout: float = 60):
        return self.future.result(timeout)

    def log_lines(self) -> list[str]:
        return self.log.getvalue().splitlines()


class BackgroundService(Loop):
    """The hub and its server, in a thread's event loop; :meth:`close` stops them."""

    def __init__(self, organiser: bool = False, min_delay: int = 0) -> None:
        super().__init__()
        self.organiser = organiser
        self.hub: SpectatorHub = self.call(lambda: SpectatorHub(organiser, min_delay))
        self.server: SpectatorServer | None = None
        self.start_server("127.0.0.1:0")

    @property
    def address(self) -> str:
        return self.server.address

    def run(self, coro, timeout: float = 60):
        """Run a coroutine in the service's loop; its result."""
        return super().run(coro, timeout)

    def call(self, fn: Callable):
        """Call ``fn`` in the service's loop (the hub is not for other threads); its result."""
        async def go():
            return fn()
        return self.run(go())

    def start_server(self, listen: str) -> None:
        hashed = token_hash(ORGANISER_TOKEN) if self.organiser else None
        self.server = self.run(SpectatorServer.start(self.hub, listen, organizer_hash=hashed))

    def stop_server(self) -> None:
        self.run(self.server.stop(0))

    def play(self, spec, script: Script, tournament: str = "") -> PlayedMatch:
        """Start playing ``spec`` (each seat following ``script``)."""
        log = io.StringIO()
        console = Console(file=log, highlight=False, soft_wrap=True)   # arena match's, to a string
        sessions = [ScriptedSeat(s, script) for s in range(len(spec.names))]
        runner = MatchRunner(spec, sessions, [LiveLog(console), self.hub.listener(tournament)])
        future = self.spawn(runner.run())
        return PlayedMatch(runner, log, future)

    def viewers(self, match_id: str) -> int:
        return self.call(lambda: len(self.hub.matches[match_id].viewers)
                         if match_id in self.hub.matches else 0)

    def wait_until(self, condition: Callable[[], bool], timeout: float = 30, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"waited {timeout} s for {what or condition}"
            time.sleep(0.02)

    def close(self) -> None:
        if self.server is not None:
            self.run(self.server.stop(0))
        super().close()     # cancels what is left (a match a test left held), then stops
        self.loop.close()
