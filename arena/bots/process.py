"""A bot process launched from its manifest: started with the referee's address and a
token in its environment, watched, and stopped cleanly."""

from __future__ import annotations

import asyncio
import collections
import os
import signal
from pathlib import Path

from ono99 import transport

from arena.bots.manifest import BotManifest

ENV_REFEREE = "ONO99_REFEREE"
ENV_TOKEN = "ONO99_TOKEN"
ENV_NAME = "ONO99_BOT_NAME"


class BotProcess:
    """One running instance of a bot."""

    def __init__(self, manifest: BotManifest, referee: str, token: str,
                 log_path: Path | None = None, label: str | None = None) -> None:
        self.manifest = manifest
        self.referee = referee
        self.token = token
        self.log_path = log_path
        self.label = label or manifest.name
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._reader: asyncio.Task | None = None

    async def start(self) -> None:
        env = dict(os.environ)
        if transport.CHOSE:   # the arena's own choice of gRPC transport is not the bot's
            env.pop("GRPC_EXPERIMENTS", None)
        env.update({ENV_REFEREE: self.referee, ENV_TOKEN: self.token, ENV_NAME: self.manifest.name,
                    "PYTHONUNBUFFERED": "1"})
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.manifest.command, cwd=self.manifest.folder, env=env,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True)  # Ctrl-C reaches the arena, which stops bots itself
        except OSError as exc:
            raise OSError(f"cannot start bot {self.label}: {' '.join(self.manifest.command)}: {exc}") from None
        self._reader = asyncio.create_task(self._read_stderr())

    async def _read_stderr(self) -> None:
        log = self.log_path.open("ab") if self.log_path else None
        try:
            assert self.proc is not None and self.proc.stderr is not None
            while line := await self.proc.stderr.readline():
                self.stderr_tail.append(line.decode(errors="replace").rstrip())
                if log:
                    log.write(line)
                    log.flush()
        finally:
            if log:
                log.close()

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.returncode

    async def wait_exit(self, timeout: float | None = None) -> int | None:
        """The exit code, waiting up to ``timeout`` s; None if it still runs."""
        if self.proc is None:
            return None
        try:
            code = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            return None
        if self._reader is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._reader), 0.5)
            except TimeoutError:
                pass
        return code

    def describe_exit(self) -> str:
        """How the process ended, with the last lines of its stderr."""
        return f"bot process {self.exit_status()}" + self.stderr_note()

    def exit_status(self) -> str:
        """``"exited with code 7"``, ``"was killed by SIGKILL"`` or ``"is still running"``."""
        code = self.returncode
        if code is None:
            return "is still running"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with code {code}"

    def stderr_note(self) -> str:
        """``"; stderr: "`` and the last lines of its stderr on one line, or ``""``."""
        tail = " | ".join(list(self.stderr_tail)[-3:])
        return f"; stderr: {tail}" if tail else ""

    async def stop(self, grace: float = 2.0, linger: float = 0.5) -> None:
        """Let the process end by itself for ``linger`` seconds (it was told goodbye),
        then ask it to (SIGTERM), then kill it after ``grace`` seconds."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            await self.wait_exit(0.5)
            return
        if linger > 0 and await self.wait_exit(linger) is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
        if await self.wait_exit(grace) is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            await self.wait_exit(2.0)
