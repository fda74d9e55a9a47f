"""A bot process launched from its manifest: started through a process factory (a sandbox,
by default) with the referee's address and a token in its environment, its output kept
in a capped log, watched, and stopped so that nothing it started is left."""

from __future__ import annotations

import asyncio
import collections
import errno
import os
import re
import resource
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from stat import S_ISREG
from typing import Protocol

from arena.bots.manifest import BotManifest
from arena.bots.sandbox import Jail, ProcessFactory, SandboxConfig
from arena.text import printable

ENV_REFEREE = "ONO99_REFEREE"
ENV_TOKEN = "ONO99_TOKEN"
ENV_NAME = "ONO99_BOT_NAME"
# A bot the arena launches talks to it over a socket that dies with it: it has nothing to
# reconnect to, and must not linger trying.
ENV_RECONNECT = "ONO99_RECONNECT_TIMEOUT"
_CHUNK = 65536
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")   # the unit of /proc/PID/stat's CPU times
_CORES = os.cpu_count() or 1   # (read once: glibc reads a file of /sys for it, 6 us a call)
_LINE_CAP = 1000   # characters of one output line kept in memory for error messages
NOTE_LINE = 200    # ... of which a verdict's note of its last lines shows each line's end
#: a line that names an error: "Error: Cannot find module", "TypeError: x",
#: "Exception in thread "main" java.lang.IllegalStateException: x", "error: the bot failed"
_ERROR = re.compile(r"(error|exception)\b.*:", re.IGNORECASE)
#: Python's marks under the failing expression of a traceback line (3.11+): they say
#: nothing alone, and took the note's place of the line naming the file and line
_MARKS = re.compile(r"\s*[~^]+[\s~^]*")


class OwnSocket(Protocol):
    """A unix socket to the referee of one bot process's own (the referee's
    :class:`~arena.referee.server.BotSocket`)."""

    path: str

    async def close(self) -> None: ...


#: Makes a socket of one bot process's own (the referee's ``RefereeServer.bot_socket``).
SocketOpener = Callable[[], Awaitable[OwnSocket]]


#: A bot's logs in one folder (the files of all its processes there) are kept within this
#: many times its output limit: a bot that keeps being restarted, each process writing up
#: to its limit, would otherwise fill the disk of a server that runs for days.
LOG_KEEP = 4


def file_stem(label: str) -> str:
    """A bot's label as a file or folder name, one per label: the space before a version
    (``alpha v2``) and the ``#`` before a process's number (``alpha#2``) become ``+``,
    which no bot's name may hold (``manifest.NAME``). With ``-`` there, ``alpha v2`` and a
    bot called ``alpha-v2`` shared a log folder, and process 2 of ``x`` a log file with a
    bot called ``x-2``, whose logs ``x``'s own trimming then deleted."""
    return label.replace("/", "_").replace(" ", "+").replace("#", "+")


def log_name(label: str) -> str:
    """The file a launched bot's stderr goes to in its log folder (a tournament's K-th
    process of a bot is labelled ``NAME#K``: ``NAME+K.stderr.log``)."""
    return f"{file_stem(label)}.stderr.log"


def is_log_of(filename: str, name: str) -> bool:
    """Whether ``filename`` is the log of a process of the bot labelled ``name``: its
    first (:func:`log_name` of ``name``) or its K-th (of ``name#K``)."""
    first = log_name(name)
    stem = first.removesuffix(".stderr.log")
    return filename == first or re.fullmatch(re.escape(stem) + r"\+\d+\.stderr\.log",
                                             filename) is not None


def make_room(log: Path, label: str, cap_bytes: int) -> None:
    """Before a process of the bot labelled ``label`` appends to ``log``: cut the bot's
    logs in that folder to (LOG_KEEP - 1) times ``cap_bytes`` in all, so that with this
    process's own output they stay within LOG_KEEP times. The oldest files go first; a
    file still too large keeps its newest part. A log that cannot be read or cut is left
    as it is: its bot plays on."""
    numbered = re.fullmatch(r"(.+)#\d+", label)
    name = numbered.group(1) if numbered else label
    room = (LOG_KEEP - 1) * cap_bytes
    try:
        found = [(p, p.stat()) for p in log.parent.iterdir() if is_log_of(p.name, name)]
    except OSError:
        return
    logs = sorted((st.st_mtime_ns, st.st_size, p) for p, st in found if S_ISREG(st.st_mode))
    total = sum(size for _, size, _ in logs)
    for _, size, path in logs:            # oldest first
        if total <= room:
            return
        try:
            if total - size >= room:
                path.unlink()
                total -= size
                continue
            keep = size - (total - room)
            with path.open("rb") as f:
                f.seek(size - keep)
                tail = f.read()
            tail = tail[tail.find(b"\n") + 1:]    # from the start of a line
            path.write_bytes(f"[arena: earlier output cut: this bot's logs here are kept "
                             f"within {LOG_KEEP * cap_bytes // 2**20} MiB]\n".encode() + tail)
            return
        except OSError:
            return


class ArenaStartError(OSError):
    """The arena itself could not start a process for a bot (or its setup): it ran out of
    open files, processes or memory of its own. Not the bot's doing, so never a verdict
    against it: whatever plays the match stops and says so (a tournament with its resume
    line), where a bot charged with it would have been retired and its matches forfeited."""


def _arena_start_error(label: str, exc: OSError) -> ArenaStartError:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        reason += (f" (the arena's open-files limit, ulimit -n, is {soft}: raise it, or play "
                   "fewer matches at once)")
    elif exc.errno in (errno.EAGAIN, errno.ENOMEM):
        reason += " (the machine or the arena's limits are out of processes or memory)"
    return ArenaStartError(f"the arena cannot start a process for bot {label}: {reason}")


class BotProcess:
    """One running instance of a bot."""

    def __init__(self, manifest: BotManifest, referee: str, token: str,
                 log_path: Path | None = None, label: str | None = None,
                 factory: ProcessFactory | None = None,
                 open_socket: SocketOpener | None = None) -> None:
        """``open_socket`` makes the socket this process reaches the referee by, where its
        factory needs one (a sandbox has no network): one of its own, which it keeps
        until it is stopped."""
        self.manifest = manifest
        self.referee = referee
        self.token = token
        self.log_path = log_path
        self.label = label or manifest.name
        self.factory = factory or SandboxConfig().factory()
        self.open_socket = open_socket
        self.socket: OwnSocket | None = None
        self.jail: Jail | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self.output_written = 0          # bytes of output read from it so far
        #: output_written as its current match began (its seats set it): past the limit,
        #: it is stopped only if that match's output alone is past it too. A process kept
        #: for match after match (a ladder's) was stopped mid-match for what it had
        #: written in earlier ones, a *crashed* verdict; now its output is no longer kept,
        #: and it is replaced once the match is over (ProcessSeats._worn)
        self.output_at_match = 0
        self._started = 0.0              # time.monotonic() as it was started
        self._reader: asyncio.Task | None = None
        self._closed = False

    @property
    def output_limit(self) -> int | None:
        """Its output limit in bytes (for its whole life), or None."""
        cap = None if self.jail is None else self.jail.limits.output_mb
        return None if cap is None else cap * 2**20

    @property
    def cpu_limit(self) -> int | None:
        """Its CPU time limit in seconds (for each of its processes' whole life), or None."""
        return None if self.jail is None else self.jail.limits.cpu_s

    def cpu_seconds_at_most(self) -> float:
        """A bound on :meth:`cpu_seconds` that reads nothing: every core, for its whole
        life so far."""
        return (time.monotonic() - self._started) * _CORES

    def cpu_seconds(self) -> float:
        """The most CPU time any one of its processes has used so far (the limit holds
        for each process), read from /proc; 0.0 where it cannot be read."""
        if self.jail is None or self.jail.proc.returncode is not None:
            return 0.0
        most, todo, seen = 0.0, [self.jail.pid], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                most = max(most, (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS)
                for tid in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{tid}/children") as f:
                        todo.extend(int(c) for c in f.read().split())
            except (OSError, ValueError, IndexError):
                continue   # gone meanwhile, or a kernel without the children lists
        return most

    @property
    def proc(self) -> asyncio.subprocess.Process | None:
        return None if self.jail is None else self.jail.proc

    async def start(self) -> None:
        try:
            await self._start()
        except BaseException:
            await self._close_socket()   # a process that did not start keeps no socket
            raise
        self._reader = asyncio.create_task(self._read_output())

    async def _start(self) -> None:
        env = {ENV_REFEREE: self.referee, ENV_TOKEN: self.token, ENV_NAME: self.manifest.name,
               ENV_RECONNECT: "0"}
        try:
            if self.open_socket is not None and self.factory.needs_socket:
                self.socket = await self.open_socket()
            self._started = time.monotonic()
            self.jail, _ = await self.factory.start(
                self.manifest.command, self.manifest.folder, env,
                None if self.socket is None else self.socket.path)
        except ValueError as exc:   # a NUL in its arguments: its manifest's doing
            raise OSError(f"cannot start bot {self.label}: {' '.join(self.manifest.command)}: "
                          f"{exc}") from None
        except OSError as exc:      # the socket, the pipe, the fork of sh, the sandbox's
            raise _arena_start_error(self.label, exc) from None   # files: the arena's

    async def _read_output(self) -> None:
        """Keep the bot's stdout and stderr (one pipe) in its log, up to the output limit;
        past it the bot is stopped. Read in chunks, so no line is too long to read."""
        jail = self.jail
        cap_bytes = self.output_limit
        if self.log_path is not None and cap_bytes is not None:
            # in a thread: cutting a log reads and writes megabytes, where the referee's
            # loop times other bots
            await asyncio.to_thread(make_room, self.log_path, self.label, cap_bytes)
        try:
            log = self.log_path.open("ab") if self.log_path else None
        except OSError:   # the bot plays on; its output is read and dropped
            log = None
        partial = b""
        try:
            assert jail.proc.stdout is not None
            while chunk := await jail.proc.stdout.read(_CHUNK):
                written = self.output_written
                kept = chunk
                if cap_bytes is not None and written + len(chunk) > cap_bytes:
                    kept = chunk[:max(0, cap_bytes - written)]
                    if written + len(chunk) - self.output_at_match > cap_bytes:
                        jail.output_exceeded = True     # in this match alone: stopped
                        chunk = kept
                    elif log and written <= cap_bytes:
                        kept += (b"\n[arena: output limit reached over this process's "
                                 b"matches; its output is no longer kept, and a new process "
                                 b"plays its next match]\n")
                if log and kept:
                    try:
                        log.write(kept)
                        log.flush()
                    except OSError:
                        # a full disk (or any write error) stops the log, never the bot:
                        # its output is still read, so it never blocks writing it
                        _close_quietly(log)
                        log = None
                self.output_written += len(chunk)
                lines = (partial + chunk).split(b"\n")
                partial = lines.pop()[-_LINE_CAP:]
                for line in lines:
                    if line.strip():
                        self.stderr_tail.append(_line(line[-_LINE_CAP:]))
                if jail.output_exceeded:
                    if log:
                        try:
                            log.write(f"\n[arena: output limit of {jail.limits.output_mb} MiB "
                                      "reached; the bot is stopped]\n".encode())
                        except OSError:
                            pass
                    jail.signal(signal.SIGKILL)
                    break
            if partial.strip():
                self.stderr_tail.append(_line(partial))
        finally:
            _close_quietly(log)

    @property
    def returncode(self) -> int | None:
        return None if self.jail is None else self.jail.proc.returncode

    async def wait_exit(self, timeout: float | None = None) -> int | None:
        """The exit code, waiting up to ``timeout`` s; None if it still runs."""
        if self.jail is None:
            return None
        try:
            async with asyncio.timeout(timeout):
                code = await self.jail.proc.wait()
        except TimeoutError:
            return None
        if self._reader is not None:
            try:
                async with asyncio.timeout(0.5):
                    await asyncio.shield(self._reader)
            except TimeoutError:
                pass
        return code

    def describe_exit(self) -> str:
        """How the process ended (the limit it broke, if one stopped it), in the arena's
        words only: this is a verdict's detail, which every seat of the match, every
        spectator and the stored record are given. It quoted the last lines of the bot's
        stderr, which made a crash the way out of the sandbox for whatever a bot could
        read (a stranger's bot printed a file it found, crashed, and the server showed
        it to the world): whoever runs the bot reads them in its log, and where they see
        the verdict (arena match, check-bot) after it (:meth:`stderr_note`)."""
        cause = (None if self.jail is None
                 else self.jail.cause(self.returncode, "\n".join(self.stderr_tail)))
        if cause:
            return f"bot process was stopped: {cause}"
        return f"bot process {self.exit_status()}"

    def exit_status(self) -> str:
        """``"exited with code 7"``, ``"was killed by SIGKILL"`` or ``"is still running"``."""
        code = self.returncode
        if code is None:
            return "is still running"
        sig = self.jail.exit_signal(code)
        if sig is not None:
            try:
                return f"was killed by {signal.Signals(sig).name}"
            except ValueError:
                return f"was killed by signal {sig}"
        return f"exited with code {code}"

    def stderr_note(self) -> str:
        """``"; stderr: "`` and the last lines of its output on one line, or ``""``: the
        end of each, NOTE_LINE characters at most (a bot that floods its stderr with one
        long line made a verdict, and the line saying it retired, 2,600 characters long).
        Where none of them names an error and an earlier line does, that line comes first:
        Node.js (and Java) print the error, then its stack, and Node its version last
        (`} | | Node.js v20.20.2` said nothing of "Cannot find module")."""
        lines = [line for line in self.stderr_tail if not _MARKS.fullmatch(line)]
        shown = [_end(line) for line in lines[-3:]]
        if not any(_ERROR.search(line) for line in lines[-3:]):
            # the last such line (an earlier one may be a log line that merely says "error")
            at = next((i for i in range(len(lines) - 4, -1, -1) if _ERROR.search(lines[i])), None)
            if at is not None:
                named = lines[at]   # its start: where it says what failed
                named = named if len(named) <= NOTE_LINE else named[:NOTE_LINE - 1] + "…"
                shown = [named, *(["…"] if at < len(lines) - 4 else []), *shown]
        tail = " | ".join(shown)
        return f"; stderr: {tail}" if tail else ""

    def peak_memory_mb(self) -> float | None:
        return None if self.jail is None else self.jail.peak_memory_mb()

    async def stop(self, grace: float = 2.0, linger: float = 0.5) -> None:
        """Let the process end by itself for ``linger`` seconds (it was told goodbye),
        then ask it to (SIGTERM), then kill it after ``grace`` seconds; then nothing it
        started is left (its sandbox, or its cgroups, go with it, and its socket)."""
        jail = self.jail
        if jail is not None:
            if jail.proc.returncode is None:
                if not (linger > 0 and await self.wait_exit(linger) is not None):
                    jail.signal(signal.SIGTERM)
                    if await self.wait_exit(grace) is None:
                        jail.signal(signal.SIGKILL)
                        await self.wait_exit(2.0)
            else:
                await self.wait_exit(0.5)
            self.close()
        await self._close_socket()

    async def _close_socket(self) -> None:
        made, self.socket = self.socket, None
        if made is not None:
            await made.close()

    def close(self) -> None:
        """Everything the process left: its other processes and cgroups."""
        if self.jail is not None and not self._closed:
            self._closed = True
            self.jail.close()


def _close_quietly(log) -> None:
    """Close a log file, whatever its state (a full disk fails the flush in close too)."""
    if log is not None:
        try:
            log.close()
        except OSError:
            pass


def _end(line: str) -> str:
    """A line's end, NOTE_LINE characters at most."""
    return line if len(line) <= NOTE_LINE else "…" + line[1 - NOTE_LINE:]


def _line(raw: bytes) -> str:
    """One line of a bot's output as verdicts and notes quote it: decoded, with no escape
    sequence or other control character left to act on a terminal (see arena.text)."""
    return printable(raw.decode(errors="replace").rstrip())
