"""The ``arena`` command (:mod:`arena.cli.main`)."""

from __future__ import annotations

import sys


def run() -> int:
    """The console script: :func:`arena.cli.main.main`, whose imports and parsing of the
    command line (a second or so, more on a busy machine) are inside the Ctrl-C handling
    too: a Ctrl-C (or ``timeout -s INT``) while they ran printed a traceback."""
    try:
        from arena.cli.main import main
        return main()
    except KeyboardInterrupt:   # the command's own run says which command it was
        print("arena: interrupted", file=sys.stderr)
        return 130
