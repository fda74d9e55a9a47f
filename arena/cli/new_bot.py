"""``arena new-bot DIR --lang python|node|cpp``: a starter bot folder."""

from __future__ import annotations

import argparse

from arena.bots.templates import LANGUAGES, new_bot


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena new-bot DIR --lang LANG`` to ``sub``."""
    p = sub.add_parser(
        "new-bot", help="write a starter bot folder (Python, Node.js or C++)",
        description="Write a starter bot to DIR (a new or empty folder): bot.toml, its source and "
                    "a README for its language (how to check, play and enter it). It plays legal, "
                    "sensible cards and passes 'arena check-bot DIR' as written.")
    p.add_argument("dir", metavar="DIR", help="the folder to create")
    p.add_argument("--lang", "--language", required=True, choices=list(LANGUAGES),
                   help="the bot's language")
    p.add_argument("--name", default=None,
                   help="the bot's name (default: the folder's name)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the starter bot and say which files it wrote and what to run next."""
    files = new_bot(args.dir, args.lang, args.name)
    folder = files[0].parent
    print(f"wrote a {args.lang} bot to {folder}: {', '.join(f.name for f in files)}")
    print(f"next: arena check-bot {args.dir}")
    return 0
