"""Starter bot folders, one per language, from the templates shipped in arena/templates.

Each starter plays legal, sensible cards (it deflects owed pairs and pushes the total up)
and passes ``arena check-bot`` as generated. The Node.js and C++ starters use the SDKs in
this arena's repository (clients/node, clients/cpp) by their path: relative when the new
folder is inside the repository (it moves with it), absolute otherwise.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from arena.bots.manifest import NAME, NAME_RULE
from arena.rules.errors import ConfigError

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
REPO = Path(__file__).resolve().parents[2]
LANGUAGES = {"python": None, "node": REPO / "clients" / "node", "cpp": REPO / "clients" / "cpp"}


def new_bot(folder: str | Path, lang: str, name: str | None = None) -> list[Path]:
    """Write a starter bot in ``lang`` to ``folder`` (new, or empty); the files written.
    :class:`ConfigError` says what is wrong (a taken folder, a bad name, no SDK)."""
    if lang not in LANGUAGES:
        raise ConfigError(f"--lang {lang!r} is not known; choose one of {', '.join(LANGUAGES)}")
    folder = Path(folder).resolve()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ConfigError(f"{folder} already exists and is not an empty folder; choose a new one")
    name = name if name is not None else folder.name
    if not NAME.fullmatch(name):
        raise ConfigError(f"bot name {name!r} is not allowed: {NAME_RULE}")
    sdk = LANGUAGES[lang]
    if sdk is not None and not (sdk / ("package.json" if lang == "node" else "CMakeLists.txt")).exists():
        raise ConfigError(f"the {lang} SDK is not at {sdk}: a {lang} bot needs the arena's "
                          "repository (clients/), not only the installed package")
    # the sample bots to play it against, as they are reached from here (the repository's
    # root, or a folder elsewhere)
    samples = REPO / "bots"
    # the interpreter by its whole path: a Python bot run by hand needs the SDK, which is
    # installed with the arena, not in whatever `python` the shell finds
    values = {"NAME": name, "DIR": _shown(folder),
              "BOTS": _shown(samples) if samples.is_dir() else "bots", "PYTHON": shlex.quote(sys.executable)}
    if sdk is not None:
        try:
            inside = folder.is_relative_to(REPO)
        except ValueError:
            inside = False
        path = os.path.relpath(sdk, folder) if inside else str(sdk)
        values.update(SDK=path, SDK_JS=json.dumps(path if path.startswith(("/", ".")) else f"./{path}"))
        target = re.sub(r"[^A-Za-z0-9_-]", "-", name)
        values.update(TARGET=target, TARGET_ID=re.sub(r"[^A-Za-z0-9_]", "_", target))
    if lang == "node":
        _install_node_sdk(sdk)
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for template in sorted((TEMPLATES / lang).iterdir()):
            if not template.is_file():     # a __pycache__ compileall made beside bot.py
                continue
            text = template.read_text(encoding="utf-8")
            for key, value in values.items():
                text = text.replace("{{" + key + "}}", value)
            out = folder / template.name
            out.write_text(text, encoding="utf-8")
            written.append(out)
    except OSError as exc:   # a folder that cannot be made or written (/proc, read-only, full)
        raise ConfigError(f"cannot write the bot to {folder}: "
                          f"{(exc.strerror or str(exc)).lower()}") from None
    return written


def _install_node_sdk(sdk: Path) -> None:
    """The Node.js SDK's dependencies, installed once for the arena (``npm ci`` from its
    lockfile) when they are missing: a bot's own setup may not write outside its folder."""
    if (sdk / "node_modules" / ".package-lock.json").exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise ConfigError("a Node.js bot needs node 20+ and npm (Debian: apt-get install nodejs npm)")
    print(f"installing the Node.js SDK's dependencies: npm ci --prefix {sdk}", flush=True)
    proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=sdk, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise ConfigError(f"npm ci in {sdk} failed: {proc.stderr.strip().splitlines()[-1:]}")


def _shown(folder: Path) -> str:
    """The folder as a user would type it from here."""
    try:
        return str(folder.relative_to(Path.cwd()))
    except ValueError:
        return str(folder)
