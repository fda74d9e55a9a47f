"""A folder for the hostile test bot (tests/bots/hostile.py) in one of its modes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

HOSTILE = Path(__file__).resolve().parents[1] / "bots" / "hostile.py"


def hostile(folder: Path, *args) -> Path:
    """``folder``, made, holding the hostile bot run as ``hostile.py ARGS...``."""
    folder.mkdir(parents=True)
    shutil.copy(HOSTILE, folder / "hostile.py")
    argv = ", ".join(json.dumps(str(a)) for a in args)
    (folder / "bot.toml").write_text(f'name = "hostile"\ncommand = ["{{python}}", "hostile.py", {argv}]\n')
    return folder
