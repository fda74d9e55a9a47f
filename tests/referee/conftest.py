"""Helpers for referee tests: bot folders for the rogue bot, and matches on a LocalArena."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

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
        shutil.copy(ROGUE, folder / "rogue.py")   # a sandboxed bot sees only its folder
        args = ", ".join(f'"{a}"' for a in ("rogue.py", mode, trigger, *extra))
        (folder / "bot.toml").write_text(f'name = "{name or mode}"\ncommand = ["{{python}}", {args}]\n')
        return folder

    return make
