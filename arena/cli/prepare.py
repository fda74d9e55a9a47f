"""Getting bots ready to launch, for every command that launches them: their setup."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

from arena.bots.manifest import BotManifest, missing_program
from arena.bots.setup import DEFAULT_TIMEOUT_S, SetupError, ensure_setup
from arena.rules.errors import ConfigError


def add_setup_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-setup", dest="setup", action="store_false",
                   help="do not run the bots' setup (bot.toml), even for a new version")
    p.add_argument("--setup-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"time a bot's setup may take (default: {DEFAULT_TIMEOUT_S:g})")


def set_up(manifests: Sequence[BotManifest], args: argparse.Namespace) -> None:
    """Run each bot's setup once per version (skipped when up to date), before anything is
    launched or stored; with ``--no-setup``, only check that each bot can start. A failure
    is a :class:`ConfigError` naming the bot and its setup log."""
    if not 0 < args.setup_timeout < math.inf:
        raise ConfigError("--setup-timeout must be positive (finite seconds)")
    seen = set()
    for m in manifests:
        if m.folder in seen:
            continue
        seen.add(m.folder)
        if not args.setup:
            problem = missing_program(m)
            if problem:
                raise ConfigError(f"bot {m.name} ({m.folder}): {problem}; its setup has not run "
                                  "(drop --no-setup)")
            continue
        result = ensure_setup(m, args.setup_timeout, on_start=_announce)
        if result.ran:
            print(f"bot {m.name}: set up in {result.seconds:.1f} s", file=sys.stderr, flush=True)


def _announce(m: BotManifest, log) -> None:
    print(f"bot {m.name}: running its setup ({' '.join(m.setup)}), output in {log}",
          file=sys.stderr, flush=True)


__all__ = ["SetupError", "add_setup_options", "set_up"]
