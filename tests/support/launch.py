"""Start a command as a test needs it started, without subprocess's ``preexec_fn``.

``preexec_fn`` makes subprocess fork rather than vfork. In a test process that runs
gRPC (a spectator service, a client), gRPC's fork handlers then start its poller again
in the child, and when subprocess closes the descriptors it does not pass on, before
exec, that poller aborts the child (SIGABRT, "epoll_wait error: Bad file descriptor"):
the command never runs. On a loaded machine that was about one start in thirteen. So
the command runs under this script instead, which does in its own process what the
test asks and then execs the command (the pid stays the command's):

    python launch.py [--ctty] [--nofile SOFT:HARD] -- COMMAND...

It always gives the command SIGINT's default action, as at a terminal, even where the
tests run with SIGINT ignored (a shell's background job).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import resource
import signal
import sys
import termios
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__)


def launched(command: Sequence, *, ctty: bool = False,
             nofile: tuple[int, int] | None = None) -> list[str]:
    """``command`` to be started through this script. ``ctty``: in a session of its own
    whose controlling terminal is its stdout (a pseudo-terminal); ``nofile``: its open
    files limit (soft, hard)."""
    options = ["--ctty"] if ctty else []
    if nofile is not None:
        options += ["--nofile", f"{nofile[0]}:{nofile[1]}"]
    return [sys.executable, str(HERE), *options, "--", *map(str, command)]


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ctty", action="store_true")
    parser.add_argument("--nofile")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if args.nofile:
        soft, hard = map(int, args.nofile.split(":"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    if args.ctty:
        os.setsid()
        fcntl.ioctl(1, termios.TIOCSCTTY, 0)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
