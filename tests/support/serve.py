"""A real `arena serve` in a subprocess, and the organiser's and bot authors' commands
against it, as a user runs them."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from support.launch import launched
from support.processes import env_for

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"


def command(*args) -> list[str]:
    return [sys.executable, "-m", "arena.cli.main", *map(str, args)]


class Served:
    """``arena serve --db DB --listen 127.0.0.1:0 FLAGS`` until :meth:`stop`. Its output
    goes to a file (nothing can block on a full pipe); ``token`` is the organiser token it
    printed (None on a database it already knew)."""

    def __init__(self, db: Path | str, mark: str, *flags: str, token: str | None = None,
                 listen: str = "127.0.0.1:0", out: Path | None = None,
                 env: dict[str, str] | None = None,
                 nofile: tuple[int, int] | None = None,
                 next_port_spectators: bool = False) -> None:
        """``db``: a SQLite file, or a PostgreSQL URL with ``out`` (where the server's output
        goes; beside a SQLite file by default). ``env``: more of the server's environment;
        ``nofile``: its open files limit (soft, hard). Spectators are served on a port the
        system chooses unless ``flags`` say where, or ``next_port_spectators`` leaves them
        at serve's own default (the port after ``listen``'s, which nothing reserved)."""
        self.db = db
        self.mark = mark
        self.flags = flags
        self.out = out or db.with_suffix(f".serve{int(time.monotonic() * 1000)}.log")
        if not (listen.startswith("unix") or "--watch" in flags or next_port_spectators):
            # the spectators' default beside a port is the next one, which nobody reserved:
            # a restart on a port the system chose found it held by a client's socket (any
            # connection's own port on the machine; a TIME_WAIT holds it a minute) and exited
            flags = (*flags, "--watch", f"{listen.rpartition(':')[0]}:0")
        self.proc = subprocess.Popen(
            launched(command("serve", "--db", db, "--listen", listen, *flags), nofile=nofile), cwd=ROOT,
            env=env_for(mark) | (env or {}), stdout=self.out.open("w"), stderr=subprocess.STDOUT,
            text=True)
        # its last line at the start (printed apart from the first: a test that read the
        # spectators' address once the server's line was there found none, once in CI)
        text = self._wait_for(r"spectators at \S+: arena watch")
        self.address = re.search(r"arena server at ([^\s,]+)", text).group(1)
        found = re.search(r"organizer token: (\S+)", text)
        self.token = found.group(1) if found else token

    def _wait_for(self, pattern: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.out.read_text()
            if re.search(pattern, text):
                return text
            if self.proc.poll() is not None:
                raise AssertionError(f"arena serve exited {self.proc.returncode}:\n{text}")
            time.sleep(0.05)
        raise AssertionError(f"arena serve did not print {pattern!r} in {timeout} s:\n"
                             f"{self.out.read_text()}")

    @property
    def output(self) -> str:
        return self.out.read_text()

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in env_for(self.mark).items() if not k.startswith("ONO99_")}
        env["ONO99_BOT_ENV"] = env_for(self.mark)["ONO99_BOT_ENV"]
        if self.token:
            env["ONO99_ORGANIZER_TOKEN"] = self.token
        env.update(extra)
        return env

    def arena(self, *args, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
        """``arena ARGS --server ADDR`` with the organiser token in the environment."""
        proc = subprocess.run(command(*args, "--server", self.address), cwd=ROOT,
                              env=self.env(**env), capture_output=True, text=True, timeout=timeout)
        assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
        return proc

    def ok(self, *args, **kw) -> subprocess.CompletedProcess:
        proc = self.arena(*args, **kw)
        assert proc.returncode == 0, (proc.stdout + proc.stderr
                                      + "\n--- the server's log, its end:\n" + self.output[-4000:])
        return proc

    def json(self, *args, **kw):
        return json.loads(self.ok(*args, "--json", **kw).stdout)

    def add_remote(self, name: str, **env: str) -> str:
        """Register a remote bot; its token."""
        out = self.ok("bots", "add", name, **env).stdout
        return re.search(r"^bot token: (\S+)$", out, re.M).group(1)

    def bot(self, name: str) -> dict:
        [row] = [b for b in self.json("bots", "list") if b["name"] == name]
        return row

    def wait_connected(self, name: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.bot(name)["connected"]:
            assert time.monotonic() < deadline, f"{name} did not connect in {timeout} s"
            time.sleep(0.2)

    def remote_bot(self, script: str, token: str, *args: str, **env: str) -> subprocess.Popen:
        """A bot of the repository run by its author, elsewhere: its own process, reaching the
        server by ``ONO99_REFEREE`` and ``ONO99_TOKEN``. Its stderr is kept in a file."""
        err = self.db.parent / f"{Path(script).parent.name}-{token[:6]}.stderr"
        program = ["node"] if script.endswith(".js") else [sys.executable]
        proc = subprocess.Popen([*program, str(BOTS / script), *args], cwd=ROOT,
                                env=self.env(ONO99_REFEREE=self.address, ONO99_TOKEN=token, **env),
                                stdout=subprocess.DEVNULL, stderr=err.open("w"))
        proc.stderr_path = err
        return proc

    @staticmethod
    def bot_stderr(proc: subprocess.Popen) -> str:
        return proc.stderr_path.read_text()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)
