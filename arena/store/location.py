"""Where a store lives, as the user gives it to ``--db``: a SQLite file's path, or a
PostgreSQL URL. One place decides which, and how a URL is shown (never its password:
it ends up in logs, error messages and the commands printed for ``--resume``)."""

from __future__ import annotations

import re

#: The URL schemes of a PostgreSQL server (libpq accepts both).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")

#: What a password is shown as.
HIDDEN = "***"

#: The ``--db`` metavar and the words that explain it, shared by every command.
METAVAR = "PATH|URL"
HELP = "a SQLite file, or a PostgreSQL database: postgresql://USER@HOST:PORT/DB"

# user:PASSWORD@ after the scheme (a '/' or '@' in a password must be %-encoded in a URL)
_USERINFO = re.compile(r"(://[^:/@?#\s]*):([^@/\s]*)@")
# password=PASSWORD in the query
_PARAMETER = re.compile(r"(?i)(password=)([^&\s]*)")


def is_url(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database (else it is a SQLite file's path,
    which is never parsed as a URL)."""
    return location.lower().startswith(POSTGRES_SCHEMES)


def database_name(url: str) -> str:
    """The database a PostgreSQL URL names (its path after the host), as written; '' if
    it names none."""
    path = url.split("://", 1)[1].split("?", 1)[0]
    return path.split("/", 1)[1] if "/" in path else ""


def redact(location: str) -> str:
    """``location`` as it may be shown: a URL's password (``user:PASSWORD@`` or
    ``password=`` in its query) replaced by ``***``; a path as it is. Text substitution,
    not parse-and-rebuild, so every other character stays as the user wrote it, and a
    malformed URL is redacted too."""
    return _redact_text(location) if is_url(location) else location


def scrub(message: str, location: str) -> str:
    """An error ``message`` about ``location`` with the location's password taken out,
    wherever the driver quoted it."""
    secrets = [m[2] for m in _USERINFO.finditer(location)] + [m[2] for m in _PARAMETER.finditer(location)]
    for secret in filter(None, secrets):
        message = message.replace(secret, HIDDEN)
    return _redact_text(message)


def _redact_text(text: str) -> str:
    text = _USERINFO.sub(rf"\1:{HIDDEN}@", text)
    return _PARAMETER.sub(rf"\1{HIDDEN}", text)
