"""A real PostgreSQL server for tests: Debian's ``initdb`` and ``pg_ctl`` (package
``postgresql``), one cluster per test session in a temporary folder, a fresh database per
test.

The cluster listens on 127.0.0.1 at a free port with trust authentication (nothing but
this machine reaches it; no password to handle), keeps its unix socket in its own folder
(not /var/run/postgresql, which may not exist or may belong to a system cluster), and runs
with ``fsync=off``: a test never survives a power cut, and fsync is the slow part. It is
stopped with ``-m immediate`` at the end of the session, its folder removed.

``initdb`` refuses to run as root, and tests run as root in CI: then the folder belongs to
the ``postgres`` user that Debian's package creates, and initdb and pg_ctl run as that
user (``runuser``).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from support.requirements import missing

#: The cluster's superuser: the USER of every URL the fixtures hand out.
USER = "arena"
INSTALL = "install Debian's postgresql package (apt-get install postgresql)"


def server_binaries() -> Path | None:
    """The newest installed server's bin folder (``/usr/lib/postgresql/<major>/bin``)."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found = [b for b in found if (b / "pg_ctl").exists()]
    if not found:
        return None
    return max(found, key=lambda b: int(b.parent.name) if b.parent.name.isdigit() else 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """A PostgreSQL cluster of our own, started in ``folder``."""

    def __init__(self, bindir: Path, folder: Path, as_user: list[str]) -> None:
        self.bindir = bindir
        self.folder = folder
        self.data = folder / "data"
        self.log = folder / "server.log"
        self.as_user = as_user            # the command prefix that runs as the folder's owner
        self.port = 0

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_user, *args], capture_output=True, text=True,
                              timeout=timeout, check=False, stdin=subprocess.DEVNULL)

    def init(self) -> None:
        proc = self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", USER,
                         "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync")
        assert proc.returncode == 0, f"initdb failed:\n{proc.stdout}\n{proc.stderr}"

    def start(self, port: int | None = None) -> None:
        """Start on ``port``, or on a free port (another, if that one was taken meanwhile)."""
        for _ in range(1 if port else 3):
            self.port = port or free_port()
            options = (f"-c listen_addresses=127.0.0.1 -p {self.port} "
                       f"-c unix_socket_directories={self.folder} -c fsync=off "
                       "-c full_page_writes=off -c shared_buffers=16MB -c max_connections=60")
            proc = self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                             "-w", "-t", "60", "-o", options, "start")
            if proc.returncode == 0:
                return
        log = self.log.read_text() if self.log.exists() else ""
        raise AssertionError(f"pg_ctl start failed:\n{proc.stdout}\n{proc.stderr}\n{log}")

    def stop(self, mode: str = "immediate") -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, down: float) -> None:
        """Stop as an administrator would (``fast``: every session is ended), stay down
        ``down`` seconds, and start again on the same port."""
        self.stop("fast")
        time.sleep(down)
        self.start(self.port)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, encoding: str | None = None) -> str:
        """A new, empty database; its URL. ``encoding``: other than the cluster's (UTF8),
        e.g. SQL_ASCII, what a cluster made under the C locale gives every database."""
        import psycopg  # a test dependency only where a server is used

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            # FILE_COPY: a plain copy of the small template, faster than WAL_LOG's page logging
            if encoding is None:
                conn.execute(f"CREATE DATABASE {name} STRATEGY FILE_COPY")
            else:                    # another encoding: copied from template0, as it must be
                conn.execute(f"CREATE DATABASE {name} STRATEGY FILE_COPY TEMPLATE template0 "
                             f"ENCODING '{encoding}' LC_COLLATE 'C' LC_CTYPE 'C'")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _owner_prefix(folder: Path) -> list[str]:
    """As root: hand ``folder`` to the postgres user and run as it; else run as we are."""
    if os.geteuid() != 0:
        return []
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        missing(f"tests run as root, and initdb needs another user: no 'postgres' user ({INSTALL})")
    runuser = shutil.which("runuser")
    if runuser is None:
        missing("tests run as root, and initdb needs another user: runuser (util-linux) is missing")
    os.chown(folder, user.pw_uid, user.pw_gid)
    return [runuser, "-u", "postgres", "--"]


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL server for the session (skipped, or failed under ONO99_TEST_ALL, where
    Debian's server binaries are missing)."""
    bindir = server_binaries()
    if bindir is None:
        missing(f"PostgreSQL's initdb and pg_ctl are not installed: {INSTALL}")
    # under /tmp, not pytest's tmp folder: that one is root's, mode 0700, out of the
    # postgres user's reach
    folder = Path(tempfile.mkdtemp(prefix="ono99-pg-"))
    server = None
    try:
        server = PostgresServer(bindir, folder, _owner_prefix(folder))
        server.init()
        server.start()
        yield server
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The URL of a fresh, empty database (``postgresql://arena@127.0.0.1:PORT/t_...``),
    dropped after the test."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


@pytest.fixture
def postgres_ascii_url(postgres_server) -> str:
    """The same, in a database whose encoding is SQL_ASCII (a cluster made under the C or
    POSIX locale, as in many containers, makes every database so; libpq's text then comes
    back as bytes unless the client asks for UTF-8)."""
    url = postgres_server.create_database("SQL_ASCII")
    yield url
    postgres_server.drop_database(url)
