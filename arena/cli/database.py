"""The ``--db`` of every command: a SQLite file or a PostgreSQL URL, the same words in
every command's help, and opening a database that must already exist.

A URL is never checked as a path (``Path("postgresql://...").exists()`` is always
false): whether its database exists is the server's to say, when it is opened.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.rules.errors import ConfigError
from arena.store import Store, is_url, open_store, redact
from arena.store.location import HELP, METAVAR

#: Where results go when no --db is given.
DEFAULT_DB = "arena.db"


def add_db_option(parser: argparse.ArgumentParser, what: str, default: str | None = DEFAULT_DB,
                  required: bool = False) -> None:
    """``--db PATH|URL`` on ``parser``; ``what`` says what the database is for."""
    shown = f" (default: ./{default})" if default else ""
    parser.add_argument("--db", default=default, required=required, metavar=METAVAR,
                        help=f"{what}: {HELP}{shown}")


def missing_file(location: str) -> bool:
    """Whether ``location`` is a SQLite file that does not exist (a URL never is)."""
    return not is_url(location) and not Path(location).exists()


def open_existing(location: str, hint: str) -> Store:
    """The store at ``location``, which must exist: :class:`ConfigError` (with ``hint``,
    what to give instead) if it is a missing file, :class:`StoreError` if it cannot be
    opened."""
    if missing_file(location):
        raise ConfigError(f"no database at {location} ({hint})")
    return open_store(location, reading=True)


def shown(location: str) -> str:
    """``location`` as a command prints it: a URL's password hidden."""
    return redact(location)
