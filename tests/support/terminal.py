"""A command run on a pseudo-terminal, as at a user's terminal: its output is read back,
keys can be typed into it, and its terminal settings are checked to be left as they were."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Sequence

from support.launch import launched

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][A-Za-z0-9]|[=>78DEHMc])")


def plain(output: bytes) -> str:
    """The text in a terminal's output, its control sequences removed."""
    return ANSI.sub("", output.decode("utf-8", "replace")).replace("\r", "")


class Terminal:
    """``command`` on a new pseudo-terminal of ``rows`` x ``cols``, until :meth:`wait`
    (its input from the terminal too, unless ``stdin`` says otherwise)."""

    def __init__(self, command: Sequence[str], cwd, env, rows: int = 40, cols: int = 110,
                 stdin=None) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.settings = termios.tcgetattr(slave)
        self.slave = slave
        self.output = b""
        env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
        self.proc = subprocess.Popen(
            launched(command, ctty=True), cwd=cwd, env={**env, "TERM": "xterm-256color"},
            stdin=slave if stdin is None else stdin, stdout=slave, stderr=slave)

    def read(self, seconds: float) -> str:
        """Read what it prints for ``seconds``; all of its output so far, as plain text."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                break
            try:
                data = os.read(self.master, 65536)
            except OSError:       # the command has exited and closed the terminal
                break
            if not data:
                break
            self.output += data
        return plain(self.output)

    def wait_for(self, pattern: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.read(0.2)
            if re.search(pattern, text):
                return text
            if self.proc.poll() is not None:
                break
        raise AssertionError(f"{pattern!r} did not appear on the terminal:\n{self.read(0.1)}")

    def type(self, keys: str | bytes) -> None:
        os.write(self.master, keys.encode() if isinstance(keys, str) else keys)

    def interrupt(self) -> None:
        """Ctrl-C, as the terminal sends it: SIGINT to its foreground process group."""
        os.killpg(self.proc.pid, signal.SIGINT)

    def wait(self, timeout: float = 15) -> int:
        """Its exit code, once it has exited (its output read to the end)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self.read(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"still running after {timeout} s:\n{self.read(0.1)}")
        self.read(0.2)
        return self.proc.returncode

    def settings_restored(self) -> bool:
        """Whether the terminal is back in the mode it was given in (echo, lines)."""
        return termios.tcgetattr(self.slave) == self.settings

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
        os.close(self.slave)
