"""The signals that stop a command as Ctrl-C does: SIGINT itself, SIGTERM (a service
manager, a container stopping, kill) and SIGHUP (the terminal closed: an SSH connection
dropped), unless SIGHUP is ignored (``nohup``). Before, SIGHUP ended a command as kill -9
does: no bot told goodbye, no line to resume it."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def stop_signals() -> tuple[signal.Signals, ...]:
    """SIGINT first, then the others that stop a command the same way here."""
    hangup = () if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else (signal.SIGHUP,)
    return (signal.SIGINT, signal.SIGTERM, *hangup)


def as_ctrl_c(signum, frame) -> None:
    """A handler: the signal delivered as SIGINT, so that asyncio.run's own Ctrl-C handling
    (cancel the main task, clean up, then KeyboardInterrupt) applies wherever the command
    is. Where SIGINT is ignored (a script's background job, which a Ctrl-C at its terminal
    must not stop), it raises KeyboardInterrupt itself, as Python's own SIGINT handler does:
    asyncio.run then cancels every task, each cleans up, and the command stops as after
    Ctrl-C. (Before, the signal did what it does by default: the arena died at once, with
    no goodbye to its bots and no line to resume it.)

    A hangup means the terminal is gone: whatever is written to it fails (EIO), and a
    failed write replaced the stop with an error. So the standard streams that were a
    terminal at the start (:func:`note_terminals`) are pointed at /dev/null first."""
    if signum == signal.SIGHUP:
        _silence_terminals()
    if signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.SIG_DFL, None):
        os.kill(os.getpid(), signal.SIGINT)
        return
    # SIGINT ignored: asyncio.run installs no handler of its own for it. A KeyboardInterrupt
    # raised here, in the middle of the event loop, cut the referee's stop short (its bots'
    # sockets and folder left in /tmp), and gRPC's servers were finalized after the loop
    # closed: a segmentation fault, 3 runs of 3 of `arena match` stopped by SIGTERM as a
    # script's background job. The main task of :func:`run` is cancelled instead, as
    # asyncio.run does at Ctrl-C (a second signal, or none running, still raises).
    global _interrupted
    task = _main_task
    if task is None or task.done() or _interrupted:
        raise KeyboardInterrupt
    _interrupted = True
    task.get_loop().call_soon_threadsafe(task.cancel)


_main_task: asyncio.Task | None = None
_interrupted = False


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, whose main task a stop signal cancels where SIGINT is ignored
    (see :func:`as_ctrl_c`): KeyboardInterrupt once it and every other task have cleaned
    up, as after Ctrl-C."""
    global _main_task, _interrupted

    async def main() -> T:
        global _main_task
        _main_task = asyncio.current_task()
        return await coro

    _interrupted = False
    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if _interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        _main_task = None


_terminals: list[int] = []


def note_terminals() -> None:
    """Remember which of stdout and stderr are a terminal now (after a hangup, isatty no
    longer says)."""
    _terminals[:] = [fd for fd in (1, 2) if os.isatty(fd)]


def _silence_terminals() -> None:
    if not _terminals:
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in _terminals:
            os.dup2(devnull, fd)
    finally:
        os.close(devnull)
