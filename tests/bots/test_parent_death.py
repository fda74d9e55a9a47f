"""A bot process never outlives the arena that started it, even one killed with kill -9
the moment after it started the bot: before bwrap (or the bot, without a sandbox) has
asked the kernel for a signal at its parent's death, the kernel would send none, and
bwrap's --die-with-parent alone leaves that window open. Nor does it outlive a bwrap
killed while it sets the sandbox up (by the arena's death or by the arena)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import MARK, kill_marked, new_mark, wait_unmarked
from support.requirements import missing

from arena.bots.sandbox import SandboxFactory

ROOT = Path(__file__).resolve().parents[2]

#: An arena that starts a bot (a long sleep, beside a child of its own) and dies at once
#: or once the bot has started its child, as kill -9 would end it.
_ARENA = """
import asyncio, os, sys, time
from pathlib import Path
from arena.bots.sandbox import SandboxConfig

async def main():
    factory = SandboxConfig(mode=sys.argv[1]).factory()
    await factory.start(["sh", "-c", "sleep 600 & exec sleep 601"], Path(sys.argv[3]),
                        {%r: sys.argv[2]})
    time.sleep(float(sys.argv[4]))
    os._exit(0)

asyncio.run(main())
""" % MARK


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_bot_started_the_moment_before_its_arena_died_does_not_outlive_it(mode, tmp_path):
    if mode == "bwrap" and (problem := SandboxFactory.unavailable()):
        missing(f"the bot sandbox: {problem}")
    assert _left_by_dying_arenas(mode, tmp_path, after=0, runs=5) == []


#: The same arena, its bots' watchdog made slow to start (a pause before its trap, as a
#: loaded machine may make it), the arena dying in that pause.
_ARENA_SLOW_WATCHDOG = """
import asyncio, os, sys, time
from pathlib import Path
from arena.bots.sandbox import SandboxConfig, spawn

watchdog = list(spawn._WATCHDOG)
watchdog[6] = "sleep 0.3; " + watchdog[6]
spawn._WATCHDOG = tuple(watchdog)

async def main():
    factory = SandboxConfig(mode="none").factory()
    await factory.start(["sh", "-c", "sleep 600 & exec sleep 601"], Path(sys.argv[2]),
                        {%r: sys.argv[1]})
    time.sleep(0.05)
    os._exit(0)

asyncio.run(main())
""" % MARK


def test_a_watchdog_whose_bot_died_before_it_was_ready_kills_what_is_left(tmp_path):
    """The bot's watchdog (which kills its process group at the bot's death) checked its
    parent with sh's $PPID, the one it started with: a bot that died between the
    watchdog's start and its trap (the arena killed just after starting it) left the
    watchdog and the bot's children running for good (1 run in many of a CI suite; 3 of
    3 with this pause). It reads its parent from /proc after the trap now."""
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    left = []
    for _ in range(3):
        mark = new_mark()
        subprocess.run([sys.executable, "-c", _ARENA_SLOW_WATCHDOG, mark, str(folder)],
                       cwd=ROOT, check=True, timeout=60)
        if pids := wait_unmarked(mark, 5):
            left.append(pids)
            kill_marked(mark)
    assert left == []


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_nothing_a_bot_started_outlives_its_arena(mode, tmp_path):
    """Without a sandbox, the bot's child stayed: the kernel's signal reaches the bot
    alone (with one, the sandbox's PID namespace takes it)."""
    if mode == "bwrap" and (problem := SandboxFactory.unavailable()):
        missing(f"the bot sandbox: {problem}")
    assert _left_by_dying_arenas(mode, tmp_path, after=1, runs=2) == []


def _left_by_dying_arenas(mode: str, folder: Path, after: float, runs: int) -> list[list[int]]:
    """Run ``runs`` arenas that die ``after`` seconds after starting their bot (in a
    folder made in ``folder``, readable by all as a bot's folder is); the pids each left
    (killed then)."""
    folder = folder / "bot"
    folder.mkdir(mode=0o755)
    left = []
    for _ in range(runs):
        mark = new_mark()
        subprocess.run([sys.executable, "-c", _ARENA, mode, mark, str(folder), str(after)],
                       cwd=ROOT, check=True, timeout=60)
        if pids := wait_unmarked(mark, 5):
            left.append(pids)
            kill_marked(mark)
    return left


#: An arena that starts a bot and then, once bwrap holds (see _HELD_BWRAP), dies as kill
#: -9 would end it, kills bwrap alone (as asyncio does when it cancels a process's start),
#: or stops the bot, and exits.
_ARENA_HOLDING = """
import asyncio, os, signal, sys, time
from pathlib import Path
from arena.bots.sandbox import SandboxConfig
from arena.bots.sandbox.cgroups import _Cgroups

async def main():
    _Cgroups._base = {}   # as where there are none: no cgroup kill reaches the sandbox
    factory = SandboxConfig(mode="bwrap").factory()
    jail, _ = await factory.start(["sleep", "600"], Path(sys.argv[3]), {%r: sys.argv[2]})
    info, deadline = Path(sys.argv[4]), time.monotonic() + 30
    while not (info.exists() and "}" in info.read_text()):   # the clone is made
        if time.monotonic() > deadline:
            sys.exit("bwrap did not hold in 30 s (no --info-fd report)")
        time.sleep(0.01)
    if sys.argv[1] != "dies":
        if sys.argv[1] == "stops it":
            jail.signal(signal.SIGKILL)
        else:
            os.kill(jail.pid, signal.SIGKILL)
        await jail.proc.wait()
    os._exit(0)

asyncio.run(main())
""" % MARK

#: bwrap, as the arena finds it on PATH, made to hold between cloning the sandbox's first
#: process (which --info-fd then reports) and letting it go on (--userns-block-fd: it
#: reads a FIFO no one writes), the window in which its death used to leave that process
#: waiting for ever under init. (Without --disable-userns, which that option excludes.)
#: A sandbox without a user namespace (run as a user of its own) holds its first process
#: before it execs the bot instead (--block-fd).
_HELD_BWRAP = """#!/bin/sh
if [ -n "${mark}" ]; then
  exec 8>"$HOLD_INFO" 9<>"$HOLD_FIFO"   # (3 and up: the seccomp filters)
  block=--block-fd
  for a; do shift; [ "$a" = --unshare-user ] && block=--userns-block-fd
    [ "$a" = --disable-userns ] || set -- "$@" "$a"; done   # (conflicts)
  exec {bwrap} --info-fd 8 $block 9 "$@"
fi
exec {bwrap} "$@"
"""


@pytest.mark.parametrize("end", ["dies", "kills bwrap alone", "stops it"])
def test_nothing_of_a_sandbox_outlives_a_bwrap_killed_while_it_sets_it_up(end, tmp_path):
    if problem := SandboxFactory.unavailable():
        missing(f"the bot sandbox: {problem}")
    mark = new_mark()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(_HELD_BWRAP.format(
        mark=MARK, bwrap=shlex.quote(shutil.which("bwrap"))))
    (bin_dir / "bwrap").chmod(0o755)
    os.mkfifo(tmp_path / "fifo")
    info = tmp_path / "info"
    # the bot's bwrap starts with the organiser's variables ONO99_BOT_ENV names (and the
    # mark), the sandbox probe's with the arena's: only the bot's bwrap holds
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "HOLD_FIFO": str(tmp_path / "fifo"), "HOLD_INFO": str(info),
           "ONO99_BOT_ENV": "PATH,HOLD_FIFO,HOLD_INFO"}
    env.pop(MARK, None)
    folder = tmp_path / "bot"
    folder.mkdir()
    arena = subprocess.run([sys.executable, "-c", _ARENA_HOLDING, end, mark, str(folder),
                            str(info)], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=60)
    left = wait_unmarked(mark, 5)
    kill_marked(mark)
    assert arena.returncode == 0, arena.stderr
    assert left == []
