"""``bot.toml``: how the arena launches a bot from its folder.

    name = "random"                      # required: the name shown in logs and standings
    command = "{python} bot.py"          # required: string (split like a shell) or list
    setup = "make"                       # optional: run once per version, before launch
    description = "uniform legal card"   # optional

``{python}`` is the interpreter running the arena (which has the Python SDK installed);
``{dir}`` is the bot folder. The command and the setup run in the bot folder (see
:mod:`arena.bots.setup`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from arena.rules.errors import ConfigError

MANIFEST = "bot.toml"
#: A bot's name: shown in tables, sent in its hello, part of its log files' names.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64"

#: Of what a name may hold, what reads as something else in a list of names: the digits
#: and capital that Unicode's confusables (UTS #39) give as a letter's look-alikes, and
#: the separators, one for another ('my-bot' beside 'my_bot')
_READS_AS = str.maketrans({"0": "o", "1": "l", "I": "l", ".": "-", "_": "-"})


def read_alike(a: str, b: str) -> bool:
    """Whether two names are one bot to a reader of standings: the same but for case, or
    for look-alike characters (:func:`reads_as`)."""
    return a.casefold() == b.casefold() or reads_as(a) == reads_as(b)


def reads_as(name: str) -> str:
    """What ``name`` reads as in a table of names: two names with the same (``c0unter``
    and ``counter``, ``aIpha`` and ``alpha``, ``Alpha`` and ``alpha``, ``rnax`` and
    ``max``, ``my_bot`` and ``my-bot``, ``fresh.`` and ``fresh``) are one bot to a reader
    of standings, so a server takes only the first. (Not all that differ only in case
    read the same here, ``Ilya`` and ``ilya``: :func:`read_alike` takes both.)"""
    read = name.translate(_READS_AS).casefold().replace("rn", "m").replace("vv", "w")
    return re.sub("-+", "-", read).rstrip("-")


class ManifestError(ConfigError):
    """A bot folder or its manifest is missing or malformed; the message says what and where."""


@dataclass(frozen=True)
class BotManifest:
    """A bot as its folder describes it."""

    name: str
    folder: Path
    command: tuple[str, ...]
    setup: tuple[str, ...] | None
    description: str



#: what a command may name in braces: ``{python}`` and ``{dir}``; any other ``{word}``
#: that begins an argument is a misspelling ("{pyhton}" was looked for as a program on
#: PATH). Inside one it may be a shell's or a script's own (``${HOME}``, awk's
#: ``'{print}'``, an f-string's ``{__name__}``): left alone.
PLACEHOLDERS = ("{python}", "{dir}")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_]+\}")
#: a command's first argument with one of these ends names a script in the bot folder
#: ("{python} bto.py" failed only at its start, as a bot that never said hello)
SCRIPTS = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".lua", ".php", ".jar")


def _expand(parts: list[str], folder: Path) -> tuple[str, ...]:
    return tuple(p.replace("{python}", sys.executable).replace("{dir}", str(folder)) for p in parts)


def _command(value: object, key: str, path: Path, folder: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            parts = shlex.split(value)
        except ValueError as exc:
            raise ManifestError(f"{path}: {key} = {value!r} cannot be split: {exc}") from None
    elif isinstance(value, list) and all(isinstance(p, str) for p in value):
        parts = list(value)
    else:
        raise ManifestError(f"{path}: {key} must be a string or a list of strings")
    if not parts:
        raise ManifestError(f"{path}: {key} is empty")
    if any("\0" in p for p in parts):
        raise ManifestError(f"{path}: {key} holds a NUL character")
    unknown = [m.group() for p in parts if (m := _PLACEHOLDER.match(p))
               and m.group() not in PLACEHOLDERS]
    if unknown:
        raise ManifestError(f"{path}: {key} names {unknown[0]}, which is not known: a command "
                            "may name {python} (the Python running the arena, with the SDK) "
                            "and {dir} (the bot folder)")
    return _expand(parts, folder)


def load_manifest(folder: str | Path) -> BotManifest:
    """Read and check ``folder/bot.toml``; :class:`ManifestError` says what is wrong."""
    try:
        folder = Path(folder).resolve(strict=False)
        is_dir = folder.is_dir()
    except (OSError, RuntimeError) as exc:   # a name too long, a loop of links
        raise ManifestError(f"bot folder {folder} cannot be read: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
    if not is_dir:
        raise ManifestError(f"bot folder {folder} "
                            f"{'is a file, not a folder' if folder.exists() else 'does not exist'}")
    path = folder / MANIFEST
    if not path.is_file():
        raise ManifestError(f"{folder} has no {MANIFEST} (a bot folder needs one: name and command)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ManifestError(f"{path} is not valid TOML: its values nest too deeply") from None
    except OSError as exc:
        raise ManifestError(f"cannot read {path}: {exc.strerror}") from None
    unknown = set(data) - {"name", "command", "setup", "description"}
    if unknown:
        raise ManifestError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}; "
                            "known: name, command, setup, description")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise ManifestError(f"{path}: 'name' must be a string, not {type(name).__name__}")
    if not isinstance(name, str) or not name.strip():
        raise ManifestError(f"{path}: 'name' is required (a non-empty string)")
    if not NAME.fullmatch(name.strip()):
        raise ManifestError(f"{path}: name {name!r} is not allowed: {NAME_RULE}")
    if "command" not in data:
        raise ManifestError(f"{path}: 'command' is required (how to start the bot)")
    command = _command(data["command"], "command", path, folder)
    setup = _command(data["setup"], "setup", path, folder) if "setup" in data else None
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ManifestError(f"{path}: 'description' must be a string")
    manifest = BotManifest(name.strip(), folder, command, setup, description)
    problem = missing_program(manifest)
    if problem and setup is None:   # a setup may build it: checked again after the setup
        raise ManifestError(f"{path}: {problem}")
    return manifest


def missing_program(manifest: BotManifest) -> str | None:
    """Why the bot's command cannot start (its program, or the script in a subfolder that
    an interpreter is given first, is missing), or None."""
    program, *args = manifest.command
    if os.sep in program:
        if not (manifest.folder / program).exists():
            return f"the command's program {program} does not exist"
    elif shutil.which(program) is None and not (manifest.folder / program).exists():
        return f"the command's program {program!r} is not found on PATH"
    script = args[0] if args else ""
    # an interpreter's script in a subfolder of the bot ("build/bot.py", "dist/main.js"),
    # typically what a setup builds, or in the folder itself ("bot.py"): it must exist too
    if (not os.path.isabs(script) and not script.startswith("-")
            and not any(c.isspace() for c in script)
            and (os.sep in script or script.endswith(SCRIPTS))
            and not (manifest.folder / script).exists()):
        return f"the command's file {script} does not exist"
    return None
