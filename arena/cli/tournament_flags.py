"""The flags of ``arena tournament`` that a run here and a run on a server both check: a
tournament's stored settings, and which options a command line gave at all."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

#: the options that are a tournament's settings, stored with it: --resume takes them from
#: the store, so giving one again is refused
SETTING_FLAGS = ("table_size", "games", "duplicate", "seed", "phases", "ruleset", "option",
                 "move_time", "bank", "on_fault", "max_rejections", "retire_after", "sandbox",
                 "limit")


def given_options(args: argparse.Namespace, dests: Sequence[str]) -> list[str]:
    """The options among ``dests`` given on the command line, whatever their value (one
    equal to its default too): the subcommand's arguments parsed again with a marker for
    their defaults."""
    saved, markers = {}, {}
    for action in args.parser._actions:
        if action.dest in dests:
            saved[action] = action.default
            # a repeatable option appends to a copy of its default, so its marker is a
            # list (an object() was a traceback: --resume NAME --option K=V)
            action.default = markers[action.dest] = (
                [] if isinstance(action, argparse._AppendAction) else object())
    try:
        tokens = args.argv[args.argv.index(args.command) + 1:]
        again, _ = args.parser.parse_known_args(tokens)
    finally:
        for action, default in saved.items():
            action.default = default
    flag = {a.dest: a.option_strings[0] for a in args.parser._actions if a.option_strings}
    return [flag[d] for d in dests if getattr(again, d) is not markers[d]]
