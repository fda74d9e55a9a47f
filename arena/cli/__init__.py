"""The ``arena`` command (:mod:`arena.cli.main`)."""

from __future__ import annotations

import sys


def run() -> int:
    """The console script: :func:`arena.cli.main.main`, whose imports (a second or so)
    are inside the Ctrl-C handling too: a Ctrl-C while they ran printed a traceback."""
    try:
        from arena.cli.main import main
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    return main()
