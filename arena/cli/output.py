"""The terminal output of every command: one way to make a console.

Lines are never wrapped (``soft_wrap``): a summary or a log line stays one line whatever
the terminal's width, and off a terminal (where rich would assume 80 columns) a script or
a test reads it whole. Tables still fit the width: a terminal's, else OFF_TERMINAL_WIDTH.
"""

from __future__ import annotations

import os
import sys

from rich.console import Console


#: The width tables may take off a terminal (a pipe, a file), where rich would assume 80
#: columns and cut names and numbers short (`arena matches | grep` lost them): a table is
#: only as wide as what it holds. $COLUMNS still rules where it is set.
OFF_TERMINAL_WIDTH = 240


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr) that never wraps a line, its tables as wide as
    the terminal, else OFF_TERMINAL_WIDTH."""
    made = _Console(highlight=False, soft_wrap=True, stderr=stderr)
    if not made.is_terminal and not os.environ.get("COLUMNS"):
        made.width = OFF_TERMINAL_WIDTH
    return made


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """rich sends stdout to /dev/null and raises SystemExit(1). Raised inside an
        asyncio task (a tournament's live lines are printed by the lane that played the
        match), SystemExit stops the event loop where it stands, and asyncio.run's
        cleanup then threw a cancellation into a coroutine whose frame was gone: a
        segmentation fault in CPython 3.11 (2 runs in 3 of `arena tournament --executor
        local | head -3`). A BrokenPipeError unwinds as any error does: the run's
        cleanup (its referee, its bots) runs in order, and the command says what is kept."""
        if self.quiet:
            return
        stdout_gone()
        raise BrokenPipeError(32, "the output was closed (the reader of a pipe went)")


def stdout_gone() -> None:
    """After a BrokenPipeError (whoever read our output left, as ``| head`` does): send
    what is left to /dev/null, so that Python's flush at exit is not another error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
