"""arena serve prints what gRPC logs (a handler that raised), which gRPC alone keeps silent."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("configure", [False, True])
def test_arena_serve_prints_what_grpc_logs(configure):
    """gRPC reports an exception raised out of a handler only through its logger: arena
    serve configures logging, so that it reaches the server's output."""
    code = ("import logging\n"
            "from ono99.transport import grpc\n"
            "from arena.cli.serve import log_errors\n"
            + ("log_errors()\n" if configure else "")
            + "logging.getLogger('grpc._cython.cygrpc').error('Unexpected [X] raised by servicer method')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert ("raised by servicer method" in proc.stderr) == configure, proc.stderr
