"""Schema migrations as SQL files, one folder per backend, under one scheme.

``migrations/<backend>/NNNN_<what>.sql`` takes a database from version NNNN - 1 to NNNN;
every backend has the same numbers for the same logical change (``sqlite/0002_server.sql``
and ``postgresql/0002_server.sql`` both add a server's own tables), so one version number
means one schema everywhere. Adding a change means adding the next file to every folder.

The rule every backend's runner follows (each in its own module, since the locking is
the backend's own):

* a database newer than the files is refused (:func:`refuse_newer`), never touched;
* each migration runs in its own transaction, and the new version is recorded in that
  same transaction: a crash leaves the database at one version or the next, never between;
* openers at once are safe: each takes the database's write lock (SQLite: ``BEGIN
  IMMEDIATE``; PostgreSQL: an advisory transaction lock), then reads the version again,
  and runs a migration only if no one ran it while it waited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from arena.store.base import StoreError, UnusableDatabaseError

_FILE = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


@dataclass(frozen=True)
class Migration:
    """One file: the version it brings a database to, its name, its SQL."""

    version: int
    name: str
    sql: str


@cache
def migrations(backend: str) -> tuple[Migration, ...]:
    """The backend's migrations, version 1 first. The numbering must run 1, 2, ... with
    no gap: a missing file is a packaging error, caught here rather than as a schema
    half built."""
    folder = resources.files(__package__) / backend
    if not folder.is_dir():
        raise StoreError(f"no migrations for a {backend!r} store (arena/store/migrations/{backend})")
    found = []
    for entry in folder.iterdir():
        m = _FILE.fullmatch(entry.name)
        if m:
            found.append(Migration(int(m[1]), m[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    numbers = [m.version for m in found]
    if numbers != list(range(1, len(found) + 1)):
        raise StoreError(f"the {backend} migrations are numbered {numbers}, not 1 to {len(found)}")
    return tuple(found)


def schema_version(backend: str) -> int:
    """The version the backend's files bring a database to."""
    return len(migrations(backend))


def refuse_newer(where: str, version: int, backend: str) -> None:
    """:class:`StoreError` if the database ``where`` is at a version this arena has no
    files for: a newer arena wrote it, and this one would misread it."""
    known = schema_version(backend)
    if version > known:
        raise UnusableDatabaseError(f"{where} has schema version {version}, newer than this arena's "
                         f"{known}: upgrade the arena")
