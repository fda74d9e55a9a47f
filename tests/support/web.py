"""The web viewer under test: a real spectator service fed by real matches (the match
runner with house seats that think a set time, so a match lasts as long as a test needs),
the viewer on it, all in an event loop on a thread of its own (selenium blocks the
test's thread); and a headless Chromium driven by selenium."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from pathlib import Path

from arena.referee.house import FirstLegal, HouseSession
from arena.referee.runner import MatchRunner
from arena.tournament.standings import Played
from arena.watch.hub import SpectatorHub
from arena.watch.server import SpectatorServer
from arena.web.server import WebViewer
from support.matches import spec
from support.requirements import missing

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1200, 800)


class Thinker(HouseSession):
    """A house seat that thinks ``seconds`` before each move."""

    def __init__(self, seconds: float) -> None:
        super().__init__(FirstLegal())
        self.seconds = seconds

    async def next_action(self, timeout):
        await asyncio.sleep(self.seconds)
        return await super().next_action(timeout)


class LiveArena:
    """A hub, its spectator service and the web viewer on it (``url``), on a thread's
    event loop until :meth:`close`."""

    def __init__(self, spectators_at: str | None = None) -> None:
        # the spectator service on a unix socket of its own by default: on a TCP port,
        # another test's client still reconnecting to a port it had (another worker's)
        # would reach this arena's service, and count among its viewers
        self.folder = None if spectators_at else tempfile.mkdtemp(prefix="ono99-web-")
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.hub = SpectatorHub()
        self.server: SpectatorServer | None = None
        self.viewer: WebViewer | None = None
        self.results: dict[str, asyncio.Future] = {}
        self.spectators_at = spectators_at or f"unix:{self.folder}/spectators.sock"

    def run(self, coro, timeout: float = 60):
        """Run ``coro`` on the arena's loop; its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def serve_spectators(self, listen: str | None = None, records=None) -> str:
        """Serve the hub's spectator service (with ``records``: a stored matches' source,
        as `arena serve` has); its address."""
        async def go():
            self.server = await SpectatorServer.start(self.hub, listen or self.spectators_at,
                                                      records)
            return self.server.address
        self.spectators_at = self.run(go())
        return self.spectators_at

    def serve_web(self, port: int = 0) -> str:
        async def go():
            self.viewer = await WebViewer.start(self.spectators_at, port=port)
            return self.viewer.url
        return self.run(go())

    def stop_web(self) -> int:
        """Stop the viewer (as if its process had ended); the port it had."""
        port = int(self.viewer.url.rstrip("/").rsplit(":", 1)[1])
        self.run(self.viewer.stop())
        self.viewer = None
        return port

    @property
    def url(self) -> str:
        return self.viewer.url

    def play(self, names, seconds: float, ruleset: str = "modern", seed: int = 1,
             tournament: str = "") -> str:
        """Start a match whose seats think ``seconds`` a move; its id (it runs on)."""
        the_spec = spec(list(names), ruleset, seed=seed)

        async def go():
            sessions = [Thinker(seconds) for _ in names]
            runner = MatchRunner(the_spec, sessions, [self.hub.listener(tournament)])
            task = asyncio.create_task(runner.run())
            if tournament:
                task.add_done_callback(lambda t: self._record(tournament, t.result()))
            return task
        self.results[the_spec.match_id] = self.run(go())
        return the_spec.match_id

    def _record(self, tournament: str, result) -> None:
        played = Played.of_result(result.match_id, result.match_id, result)
        if played is not None:
            self.hub.tournament_result(tournament, played, result.match_id)

    def tournament(self, name: str, bots, total: int) -> None:
        async def go():
            self.hub.tournament(name, bots, total)
        self.run(go())

    def wait(self, match_id: str, timeout: float = 120):
        """The match's result, once it is over."""
        async def go():
            return await asyncio.wait_for(asyncio.shield(self.results[match_id]), timeout)
        return self.run(go(), timeout + 5)

    def close(self) -> None:
        async def go():
            for task in self.results.values():
                task.cancel()
            await asyncio.gather(*self.results.values(), return_exceptions=True)
            if self.viewer is not None:
                await self.viewer.stop()
            if self.server is not None:
                await self.server.stop()
            # as asyncio.run ends (the viewer's own process, `arena web`): what aiohttp's
            # shutdown cancelled (a request handler whose connection it closed) still has
            # to run to its end, or closing the loop destroys it pending, with a warning
            # at the worker's exit (seen once in four CI runs)
            left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
        try:
            self.run(go())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()
            if self.folder:
                shutil.rmtree(self.folder, ignore_errors=True)


def chromium():
    """A headless Chromium under selenium (skipped, or failed under ONO99_TEST_ALL, where
    selenium, Chromium or its driver is missing)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing("selenium is not installed (pip install -e '.[dev]')")
    for program in (CHROMIUM, CHROMEDRIVER):
        if not Path(program).exists() and shutil.which(Path(program).name) is None:
            missing(f"{program} is missing (Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", f"--window-size={WINDOW[0]},{WINDOW[1]}"):
        options.add_argument(argument)
    options.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER if Path(CHROMEDRIVER).exists()
                                              else shutil.which("chromedriver")),
                              options=options)
    # the page itself WINDOW big (the window's frame, if any, around it)
    frame = driver.execute_script("return [outerWidth - innerWidth, outerHeight - innerHeight]")
    driver.set_window_size(WINDOW[0] + frame[0], WINDOW[1] + frame[1])
    return driver
