"""The signals that stop a command as Ctrl-C does: SIGINT itself, SIGTERM (a service
manager, a container stopping, kill) and SIGHUP (the terminal closed: an SSH connection
dropped), unless SIGHUP is ignored (``nohup``). Before, SIGHUP ended a command as kill -9
does: no bot told goodbye, no line to resume it."""

from __future__ import annotations

import os
import signal


def stop_signals() -> tuple[signal.Signals, ...]:
    """SIGINT first, then the others that stop a command the same way here."""
    hangup = () if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else (signal.SIGHUP,)
    return (signal.SIGINT, signal.SIGTERM, *hangup)


def as_ctrl_c(signum, frame) -> None:
    """A handler: the signal delivered as SIGINT, so that asyncio.run's own Ctrl-C handling
    (cancel the main task, clean up, then KeyboardInterrupt) applies wherever the command
    is. Where SIGINT is ignored (started in the background by a shell), the signal does
    what it always does."""
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    os.kill(os.getpid(), signal.SIGINT)
