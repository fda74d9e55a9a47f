"""The web viewer of ``--web`` (``arena match``, ``arena tournament``, ``arena serve``) in a
process of its own.

In the process that plays the matches, the viewer's work took the event loop and the GIL
the referee needs: JSON for every page and every record, every request's HTTP. Eight
loops of ``GET /api/record/ID`` on one finished 8-seat match (0.7 MB of JSON, 100 ms of
Python each) held `arena match --web`'s games to a thirtieth of their pace (one game in
60 s, where one took 1.5 to 4 s), and any client may send them. In a process of its own,
at a lower priority, the viewer follows the spectator service over gRPC as ``arena web``
does: a page costs the matches what its spectator stream costs that service, whatever it
asks of the viewer.

The child (``python -P -m arena.web.process CONNECT HOST PORT``) prints one line on stdout:
``web viewer at URL``, or ``error: WHY`` (and exits 1) when it cannot listen there. It
stops on SIGTERM, and when its stdin ends: its parent is gone, however it went (kill -9
included), and no viewer outlives the arena it shows.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable

from arena.web import WebServeError

NICE = 10          # below the referee and the bots: spectators wait, clocks do not
START_S = 60.0     # for its first line (imports on a loaded machine take seconds)
STOP_S = 5.0       # for it to close its pages and exit, before it is killed
_READY = "web viewer at "
_ERROR = "error: "


class ViewerProcess:
    """A web viewer running in a child process (see the module's docstring)."""

    def __init__(self, process: asyncio.subprocess.Process, url: str) -> None:
        self.process = process
        self.url = url
        self.stopping = False
        self._watch: asyncio.Future | None = None

    def when_gone(self, tell: Callable[[str], None]) -> None:
        """Call ``tell`` with how the viewer's process ended ("killed by signal 9"), should
        it end before :meth:`stop`: a process of its own may (the out-of-memory killer's
        choice), and the address its arena printed then leads nowhere."""
        def ended(wait: asyncio.Future) -> None:
            if self.stopping or wait.cancelled():
                return
            code = wait.result()
            tell(f"killed by signal {-code}" if code < 0 else f"exit status {code}")
        self._watch = asyncio.ensure_future(self.process.wait())
        self._watch.add_done_callback(ended)

    @classmethod
    async def start(cls, connect: str, host: str, port: int) -> ViewerProcess:
        """A viewer of the spectator service at ``connect`` on ``host:port`` (0: any free
        port), once it listens; :class:`WebServeError` (its own line) if it cannot."""
        # -P: `python -m` puts the working folder first on the module path, and the arena
        # may be started in any folder (a bot's): a module there named as one the viewer
        # imports (aiohttp, asyncio) was imported in its place, outside the sandbox
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-P", "-m", __name__, connect, host, str(port),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            # its own session: a Ctrl-C at the terminal is for the arena, which stops it
            # in its turn (a KeyboardInterrupt in the child would print a traceback)
            start_new_session=True)
        try:
            async with asyncio.timeout(START_S):
                line = (await process.stdout.readline()).decode(errors="replace").rstrip("\n")
        except TimeoutError:
            line = f"{_ERROR}the web viewer did not start within {START_S:g} s"
        except BaseException:
            await _stopped(process)
            raise
        if not line.startswith(_READY):
            await _stopped(process)
            raise WebServeError(line.removeprefix(_ERROR) if line.startswith(_ERROR) else
                                f"the web viewer's process ended (status {process.returncode}) "
                                "before it listened")
        return cls(process, line.removeprefix(_READY))

    async def stop(self) -> None:
        self.stopping = True
        await _stopped(self.process)
        if self._watch is not None:
            await self._watch


async def _stopped(process: asyncio.subprocess.Process) -> None:
    """``process`` ended: asked (SIGTERM), then killed after STOP_S."""
    if process.returncode is None:
        process.terminate()
        try:
            async with asyncio.timeout(STOP_S):
                await process.wait()
        except TimeoutError:
            process.kill()
            await process.wait()


# ---------------------------------------------------------------- the child


async def _serve(connect: str, host: str, port: int) -> int:
    from arena.web.server import WebViewer   # aiohttp: imported only in the child

    try:
        viewer = await WebViewer.start(connect, host, port)
    except WebServeError as exc:
        print(f"{_ERROR}{exc}", flush=True)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def parent_gone() -> None:   # stdin readable: its end (the parent writes nothing)
        loop.remove_reader(sys.stdin.fileno())
        stop.set()

    loop.add_reader(sys.stdin.fileno(), parent_gone)
    print(f"{_READY}{viewer.url}", flush=True)
    try:
        await stop.wait()
    finally:
        await viewer.stop()
    return 0


def main(argv: list[str]) -> int:
    connect, host, port = argv
    os.nice(NICE)
    return asyncio.run(_serve(connect, host, int(port)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
