"""A bot process never outlives the arena that started it, even one killed with kill -9
the moment after it started the bot: before bwrap (or the bot, without a sandbox) has
asked the kernel for a signal at its parent's death, the kernel would send none, and
bwrap's --die-with-parent alone leaves that window open."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import MARK, kill_marked, new_mark, wait_unmarked
from support.requirements import missing

from arena.bots.sandbox import SandboxFactory

ROOT = Path(__file__).resolve().parents[2]

#: An arena that starts a bot (a long sleep) and dies at once, as kill -9 would end it.
_ARENA = """
import asyncio, os, sys
from pathlib import Path
from arena.bots.sandbox import SandboxConfig

async def main():
    factory = SandboxConfig(mode=sys.argv[1]).factory()
    await factory.start(["sleep", "600"], Path(sys.argv[3]), {%r: sys.argv[2]})
    os._exit(0)

asyncio.run(main())
""" % MARK


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_a_bot_started_the_moment_before_its_arena_died_does_not_outlive_it(mode, tmp_path):
    if mode == "bwrap" and (problem := SandboxFactory.unavailable()):
        missing(f"the bot sandbox: {problem}")
    left = []
    for _ in range(5):
        mark = new_mark()
        subprocess.run([sys.executable, "-c", _ARENA, mode, mark, str(tmp_path)], cwd=ROOT,
                       check=True, timeout=60)
        if pids := wait_unmarked(mark, 5):
            left.append(pids)
            kill_marked(mark)
    assert left == []
