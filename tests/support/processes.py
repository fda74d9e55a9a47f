"""Finding a test's leftover processes: every run gets a unique environment variable,
which the arena and its bots inherit, and /proc is searched for it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

MARK = "ARENA_TEST_MARK"
#: what tests pass their bots besides the mark (the rogue bot's settings)
_BOT_ENV = (MARK, "ROGUE_SLEEP", "ROGUE_FLOOD", "ROGUE_PAD")
#: ONO99_BOT_ENV as the test run was started, before conftest set it
_RUNNER_BOT_ENV = os.environ.get("ONO99_BOT_ENV", "")


def bot_env_names() -> str:
    """ONO99_BOT_ENV for the tests' arenas: the mark and the rogue bot's settings, and
    the variables the runner already named (``ONO99_BOT_ENV=PYTHONPATH`` where the SDK is
    found through PYTHONPATH, as in a git worktree)."""
    names = [n.strip() for n in _RUNNER_BOT_ENV.split(",") if n.strip()]
    return ",".join(dict.fromkeys([*_BOT_ENV, *names]))


def new_mark() -> str:
    return uuid.uuid4().hex


def env_for(value: str) -> dict[str, str]:
    """This process's environment plus the mark ``value``, which the arena passes on to
    its bots (they get no other variable of the arena's: ONO99_BOT_ENV names it)."""
    return {**os.environ, MARK: value, "ONO99_BOT_ENV": bot_env_names()}


def processes_marked(value: str) -> list[int]:
    """Pids of live processes whose environment carries ``MARK=value``."""
    needle = f"{MARK}={value}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:  # gone, or not ours
            pass
    return pids


def marked_running(value: str, module: bytes) -> list[int]:
    """Pids of live processes marked ``value`` whose command line holds ``module``; one
    that ends while they are looked at is not among them (short-lived marked processes,
    a sandbox's probes and its shell's steps, end at any moment)."""
    pids = []
    for pid in processes_marked(value):
        try:
            if module in Path(f"/proc/{pid}/cmdline").read_bytes():
                pids.append(pid)
        except OSError:  # gone
            pass
    return pids


def process_names(pids: list[int]) -> list[str]:
    """The command names (``comm``) of the processes ``pids`` still running."""
    names = []
    for pid in pids:
        try:
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
        except OSError:  # gone
            pass
    return names


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_marked(value: str) -> None:
    for pid in processes_marked(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_unmarked(value: str, seconds: float) -> list[int]:
    """Wait up to ``seconds`` for every marked process to end; the pids still running."""
    deadline = time.monotonic() + seconds
    while (left := processes_marked(value)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def mark():
    """A marker for this test's processes; at teardown, any still running are killed."""
    value = new_mark()
    yield value
    kill_marked(value)


@contextmanager
def reaped(proc: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """``proc``, killed and waited for on leaving if it still runs: a test that fails
    half way leaves no arena behind."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@contextmanager
def killed_on_leaving(pids: list[int]) -> Iterator[list[int]]:
    """``pids`` (filled as the block runs: processes a test stopped, SIGSTOP) killed on
    leaving: a test that failed half way leaves no stopped process behind."""
    try:
        yield pids
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
