"""Helpers for referee tests: bot folders for the rogue bot, and matches on a LocalArena."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from arena.local import LocalArena
from arena.referee.results import MatchSpec, TimeControl
from arena.rules.rulesets import make_config

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
ROGUE = ROOT / "tests" / "bots" / "rogue.py"
_ids = itertools.count(1)


@pytest.fixture
def rogue(tmp_path):
    """``rogue(mode, trigger=3, **env)`` makes a bot folder that runs tests/bots/rogue.py."""

    def make(mode: str, trigger: int = 3, name: str | None = None, extra=()) -> Path:
        folder = tmp_path / f"{name or mode}-{next(_ids)}"
        folder.mkdir()
        args = ", ".join(f'"{a}"' for a in (ROGUE, mode, trigger, *extra))
        (folder / "bot.toml").write_text(f'name = "{name or mode}"\ncommand = ["{{python}}", {args}]\n')
        return folder

    return make


def spec(names, ruleset="modern", seed=1, options=None, move_ms=1000, bank_ms=10_000, **kw):
    return MatchSpec(f"t{next(_ids)}", make_config(ruleset, options, len(names)), seed,
                     tuple(names), TimeControl(move_ms, bank_ms), **kw)


def play(bot_dirs, specs_for, listeners=()):
    """Start a LocalArena with ``bot_dirs``, play the specs ``specs_for(labels)`` returns,
    return the results."""

    async def go():
        async with LocalArena.open(bot_dirs) as local:
            return [await local.play(s, listeners) for s in specs_for(local.labels)]

    return asyncio.run(go())
