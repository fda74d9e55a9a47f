"""Helpers for the tests of clients in other languages: the Node.js SDK's dependencies,
and matches on a LocalArena (as tests/referee/conftest.py plays them)."""

from __future__ import annotations

import asyncio
import itertools
import shutil
import subprocess
from pathlib import Path

import pytest
from support.requirements import missing

from arena.local import LocalArena
from arena.referee.results import MatchSpec, TimeControl
from arena.rules.events import decisions as event_decisions
from arena.rules.game import replay
from arena.rules.rulesets import make_config

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
NODE_SDK = ROOT / "clients" / "node"
_ids = itertools.count(1)


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` program, with clients/node's dependencies installed (``npm ci`` once,
    when node_modules is missing or older than package-lock.json). Skips only when node
    itself is missing."""
    program = shutil.which("node")
    if program is None:
        missing("node is not installed: the Node.js SDK (clients/node) needs node >= 20")
    version = subprocess.run([program, "--version"], capture_output=True, text=True, check=True).stdout
    major = int(version.strip().lstrip("v").split(".")[0])
    assert major >= 20, f"clients/node needs node >= 20, this is {version.strip()}"
    installed = NODE_SDK / "node_modules" / ".package-lock.json"
    lock = NODE_SDK / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        npm = shutil.which("npm")
        assert npm is not None, "npm is needed to install clients/node's dependencies (npm ci)"
        proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_SDK,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"npm ci in {NODE_SDK} failed:\n{proc.stdout}\n{proc.stderr}"
    return program


def spec(names, ruleset="modern", seed=1, options=None, move_ms=1000, bank_ms=10_000, **kw):
    return MatchSpec(f"n{next(_ids)}", make_config(ruleset, options, len(names)), seed,
                     tuple(names), TimeControl(move_ms, bank_ms), **kw)


def play(bot_dirs, specs_for, listeners=()):
    """Start a LocalArena with ``bot_dirs``, play the specs ``specs_for(labels)`` returns,
    return the results."""

    async def go():
        async with LocalArena.open(bot_dirs) as local:
            return [await local.play(s, listeners) for s in specs_for(local.labels)]

    return asyncio.run(go())


def replays(result) -> bool:
    """Whether the referee's event record is a real game: it replays from the seed with
    the decisions it records."""
    decisions = event_decisions(result.events)
    return replay(result.spec.config, result.spec.seed, decisions).events == result.events
