"""The ``arena`` command (:mod:`arena.cli.main`)."""

from __future__ import annotations

import os
import sys

# gRPC (1.6x on, through absl) logs every failed TLS handshake at INFO on stderr
# ("I1205 ... Handshake failed with error SSL_ERROR_SSL ..."), one a retry: a command
# whose error is one line printed a screenful before it. ERROR is gRPC's documented
# default; set GRPC_VERBOSITY yourself to see more. Set before anything imports grpc.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


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
