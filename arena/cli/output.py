"""The terminal output of every command: one way to make a console.

Lines are never wrapped (``soft_wrap``): a summary or a log line stays one line whatever
the terminal's width, and off a terminal (where rich would assume 80 columns) a script or
a test reads it whole. Tables still fit the width.
"""

from __future__ import annotations

from rich.console import Console


def console(stderr: bool = False) -> Console:
    return Console(highlight=False, soft_wrap=True, stderr=stderr)
