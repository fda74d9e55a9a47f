"""The bots entered on a server: remote ones (a token), hosted ones (a folder it keeps).

A remote bot gets a fresh token, shown once; the store and the lobby keep only its hash.
A hosted bot arrives as a gzipped tar: it is unpacked under the server's data folder
(refusing links, paths out of the folder, special files, and more than the size limits),
set up and checked with check-bot (in the sandbox, like every bot the server launches); a
version that fails is kept with its report, as ``failed``, and never plays. A name entered
again is its next version, rated on its own.

The registry is the one writer of its store's registered bots (a second server on the same
database is refused), so it keeps them in memory too: the ladder asks which bots are
active at every pick, many times a second, and on PostgreSQL each read from the store was a
round trip in the event loop.

What the server does with a bot depends on its kind, and only the classes of
:data:`KINDS` (one per kind, chosen by the kind's name) know it: the ladder, the
tournaments and the organiser ask the registry, never which kind a bot is.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import gzip
import io
import logging
import os
import shutil
import tarfile
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar

from arena.bots.check import Report, check_bot
from arena.bots.process import ArenaStartError, file_stem, is_log_of
from arena.bots.manifest import (NAME, NAME_RULE, BotManifest, ManifestError, load_manifest,
                                 read_alike)
from arena.bots.sandbox import ProcessFactory, SandboxConfig, readable_by_all
from arena.referee.lobby import Lobby, new_token, token_hash
from arena.referee.server import RefereeServer
from arena.rules.errors import ConfigError
from arena.store.base import RegisteredBot, Store
from arena.tournament.seats import ProcessSeats, RemoteSeats, RetiredSeats, SeatProvider

log = logging.getLogger("arena.server")

MAX_UPLOAD = 32 * 2**20        # a hosted bot's archive, gzipped
MAX_UNPACKED = 256 * 2**20     # ... and unpacked
MAX_FILES = 20_000
#: The tar itself, unzipped: its files' bytes, and for each member a header and a long
#: name's (pax or GNU) header, each padded to 512 bytes, with room to spare. tarfile reads
#: a pax header's data whole before it yields the member it describes, and no member's
#: size tells of it: an archive of 1 MB holding a pax header of 1 GiB took 1 GiB of the
#: server's memory and held its loop 24 s (32 MiB of upload, 32 GiB), and was accepted.
MAX_TAR = MAX_UNPACKED + MAX_FILES * 4096
LOG_TAIL = 64 * 1024
#: the reason every seat of a removed bot forfeits with
REMOVED = "removed from the server"


class RegistryError(ConfigError):
    """A request about bots cannot be met; the message says why."""


class UnknownBotError(RegistryError):
    """No bot (version) of that name is entered on this server."""


class NotHostedError(RegistryError):
    """The bot is a remote one: the server does not have what was asked (its output)."""


@dataclass
class Upload:
    """What a hosted bot's upload came to."""

    bot: RegisteredBot
    report: Report


class Registry:
    """The bots of one server, in its store and its lobby."""

    def __init__(self, store: Store, lobby: Lobby, data_dir: Path, sandbox: SandboxConfig,
                 absent_after: float = 30.0) -> None:
        self.store = store
        self.lobby = lobby
        self.data_dir = data_dir
        self.sandbox = sandbox
        self.factory: ProcessFactory = sandbox.factory()
        self.absent_after = absent_after
        #: each active remote bot's one connection, by display name (see :class:`RemoteBot`)
        self.remote: dict[str, RemoteSeats] = {}
        #: every version entered, removed ones too, by id (in the order entered)
        self._bots: dict[int, RegisteredBot] = {
            b.id: b for b in store.registered_bots(include_removed=True)}
        for bot in list(self._bots.values()):
            if bot.status == "active":
                self.entry(bot).admit()
            elif bot.status == "validating":
                # its check was cut short (the server stopped or was killed): it was never
                # entered, and stayed 'validating' for good
                self._update(bot.id, status="failed", report={
                    "error": "its check did not finish: the server stopped meanwhile; add it "
                             "again"})
        self._rename_old_log_folders()

    # ---------------------------------------------------------------- entering bots

    def add_remote(self, name: str) -> tuple[RegisteredBot, str]:
        """Register the next version of remote bot ``name``; its token (shown once)."""
        self._check_name(name)
        token = new_token()
        bot = self._register(name, "remote", token_hash=token_hash(token))
        self.entry(bot).admit()
        log.info("bot %s entered: remote", bot.display)
        return bot, token

    async def add_hosted(self, name: str, archive: bytes, setup_timeout: float = 600.0) -> Upload:
        """Unpack, set up and check the next version of hosted bot ``name``."""
        self._check_name(name)
        if len(archive) > MAX_UPLOAD:
            raise RegistryError(f"the upload is {len(archive) / 2**20:.1f} MiB; the limit is "
                                f"{MAX_UPLOAD // 2**20} MiB")
        bot = self._register(name, "hosted", status="validating")
        folder = self.data_dir / "hosted" / name / f"v{bot.version}"
        try:
            self._set_aside(bot, folder)
        except RegistryError as exc:
            self._update(bot.id, status="failed", report={"error": str(exc)})
            raise
        try:
            await asyncio.to_thread(_unpack, archive, folder)
            manifest = load_manifest(folder)
        except (RegistryError, ManifestError) as exc:
            shutil.rmtree(folder, ignore_errors=True)
            self._settle(bot.id, "failed", report={"error": str(exc)})
            raise RegistryError(f"{bot.display}: {exc}") from None
        except asyncio.CancelledError:
            # the upload's call ended while its thread unpacked (which goes on: its folder
            # is left to it, as a check cut short leaves its own): not entered
            self._settle(bot.id, "failed", folder=str(folder), report={
                "error": "it was not unpacked: the upload was cancelled; add it again"})
            raise
        try:
            report = await check_bot(manifest, setup_timeout=setup_timeout,
                                     sandbox=self.sandbox,
                                     log_dir=self.logs_dir(bot.display) / "check")
        except asyncio.CancelledError:
            # the upload's call ended (its client went, the server stops): not entered
            self._settle(bot.id, "failed", folder=str(folder), report={
                "error": "its check did not finish: the upload was cancelled; add it again"})
            raise
        except ArenaStartError as exc:
            # the server ran out of open files, processes or memory of its own: the
            # version is not entered (never left 'validating'), and the author is told the
            # fault is not the bot's
            self._settle(bot.id, "failed", folder=str(folder), report={"error": str(exc)})
            raise RegistryError(f"{bot.display} was not checked: {exc}; the fault is the "
                                "server's, not the bot's: add it again later") from None
        status = "active" if report.failed == 0 else "failed"
        bot = self._settle(bot.id, status, folder=str(folder), report=report.to_dict())
        if bot.status == "removed":
            log.info("bot %s not entered: removed during its check", bot.display)
            raise RegistryError(f"{bot.display} was removed while its check ran "
                                f"({report.summary()}): it does not enter")
        log.info("bot %s %s: hosted, its check %d passed, %d failed", bot.display,
                 "entered" if status == "active" else "not entered", report.passed,
                 report.failed)
        return Upload(bot, report)

    def remove(self, name: str) -> RegisteredBot:
        """Withdraw the version called ``name`` (:meth:`find`: ``alpha`` is the first
        while it is entered): a remote one is cut off here; the tournaments playing a
        hosted one retire it (``Runs.removed``)."""
        bot = self.find(name)
        bot = self._update(bot.id, status="removed")
        log.info("bot %s removed", bot.display)
        self.entry(bot).withdraw(REMOVED)
        return bot

    def disconnect(self, reason: str) -> None:
        """The server stops: every active bot's connection to it, if it has one, ends
        without a goodbye (a remote bot tries to reconnect, and a quick restart keeps it)."""
        for bot in self.active():
            self.entry(bot).disconnect(reason)

    # ---------------------------------------------------------------- looking bots up

    def bots(self, include_removed: bool = False) -> list[RegisteredBot]:
        """The versions entered, in the order entered (as the store lists them)."""
        return [b for b in self._bots.values() if include_removed or b.status != "removed"]

    def active(self) -> list[RegisteredBot]:
        """The bots entered: their check passed, and they have not been removed."""
        return [b for b in self._bots.values() if b.status == "active"]

    def find(self, name: str, active_only: bool = False,
             include_removed: bool = False) -> RegisteredBot:
        """The version called ``name`` (its display name), else the latest of base ``name``
        (``include_removed``: among removed ones too, as a tournament that resumes needs)."""
        bots = self.bots(include_removed)
        exact = [b for b in bots if b.display == name]
        found = exact or [b for b in bots if b.name == name]
        if active_only:
            found = [b for b in found if b.status == "active"]
        if not found:
            known = ", ".join(b.display for b in bots if b.status == "active") or "none yet"
            raise UnknownBotError(f"no {'active ' if active_only else ''}bot called {name!r} on "
                                f"this server (its bots: {known})")
        return found[-1]

    def _register(self, name: str, kind: str, **fields: Any) -> RegisteredBot:
        """The store's ``register_bot``, the new version kept here too."""
        return self._keep(self.store.register_bot(name, kind, **fields))

    def _update(self, bot_id: int, **fields: Any) -> RegisteredBot:
        """The store's ``update_registered_bot``, the version kept here as written."""
        return self._keep(self.store.update_registered_bot(bot_id, **fields))

    def _settle(self, bot_id: int, status: str, **fields: Any) -> RegisteredBot:
        """A checked version's outcome, ``status`` unless the organiser removed it while
        its upload was unpacked or checked (a minute's setup): a removal then was
        overwritten, and the version entered and played the ladder all the same."""
        if self._bots[bot_id].status == "removed":
            status = "removed"
        return self._update(bot_id, status=status, **fields)

    def _keep(self, bot: RegisteredBot) -> RegisteredBot:
        self._bots[bot.id] = bot
        return bot

    def entry(self, bot: RegisteredBot) -> Entered:
        """What this server does with ``bot``, by its kind (:data:`KINDS`)."""
        return KINDS[bot.kind](self, bot)

    def connected(self, bot: RegisteredBot) -> bool:
        """Whether ``bot`` can play now (as ``arena bots list`` shows it)."""
        return self.entry(bot).connected()

    def ready(self, bot: RegisteredBot) -> bool:
        """Whether a seat of ``bot`` leased now would be played at once, not waited for
        (the ladder seats only such bots)."""
        return self.entry(bot).ready()

    def provider(self, bot: RegisteredBot, referee: RefereeServer, log_dir: Path | None = None,
                 connect_timeout: float = 10.0) -> SeatProvider:
        """Where ``bot``'s seats come from, for a tournament or the ladder on ``referee``
        (see each kind's :meth:`Entered.seats`). A removed bot's seats all forfeit."""
        if bot.status == "removed":    # a tournament resumed after it was removed
            return RetiredSeats(bot.display, REMOVED)
        return self.entry(bot).seats(referee, log_dir or self.logs_dir(bot.display),
                                     connect_timeout)

    def logs_dir(self, display: str) -> Path:
        """The folder of a version's own logs: ``logs/alpha``, ``logs/alpha+v2``."""
        return self.data_dir / "logs" / file_stem(display)

    def logs(self, name: str) -> tuple[RegisteredBot, str]:
        """The end of a bot's recent output (its newest log files), at most 64 KiB;
        :class:`NotHostedError` for a bot whose output the server does not have."""
        bot = self.find(name)
        return bot, self.output(bot)

    def output(self, bot: RegisteredBot) -> str:
        """:meth:`logs` of a version found: it reads only files (the server calls it in a
        thread: a long-running server's log folders hold thousands of files)."""
        return _tail(self.entry(bot).log_files(), LOG_TAIL)

    # ---------------------------------------------------------------- helpers

    def _rename_old_log_folders(self) -> None:
        """Servers before 2026-12-05 kept ``alpha v2``'s logs in ``logs/alpha-v2``, which
        a bot called ``alpha-v2`` shared: each such folder moves to its version's own
        name, unless a bot of that name has it now (then it stays that bot's)."""
        displays = {b.display for b in self._bots.values()}
        for bot in self._bots.values():
            if bot.version > 1:
                self.entry(bot).move_old_logs(displays)

    def _set_aside(self, bot: RegisteredBot, folder: Path) -> None:
        """Move aside a new version's folder and logs left from before: the database was
        restored from an older backup, or made afresh beside its old data folder, and
        numbers this version as one it has forgotten. Every upload of such a name failed
        ("Unexpected FileExistsError"), the version left 'validating' until a restart."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for old in (folder, self.logs_dir(bot.display)):
            if not (old.exists() or old.is_symlink()):
                continue
            aside = old.with_name(f"{old.name}.orphaned-{stamp}")
            n = 1
            while aside.exists() or aside.is_symlink():
                n += 1
                aside = old.with_name(f"{old.name}.orphaned-{stamp}-{n}")
            try:
                old.rename(aside)
            except OSError as exc:
                raise RegistryError(f"{bot.display}: the server cannot move aside {old}, left "
                                    f"from a version its database does not have: "
                                    f"{exc.strerror or exc}; the fault is the server's, not "
                                    "the bot's") from None
            log.warning("%s: %s was left from a version this database does not have (restored "
                        "from an older backup?): moved to %s", bot.display, old, aside.name)

    def _check_name(self, name: str) -> None:
        if not NAME.fullmatch(name):
            raise RegistryError(f"bot name {name!r} is not allowed: {NAME_RULE}")
        # 'Alpha' beside 'alpha' reads as the same bot in every table, and on a file
        # system that ignores case (macOS's, by default) its folders are the other's; so
        # does 'c0unter' beside 'counter', a stranger's bot passing for a known one in the
        # standings. (A database that has both from before takes new versions of each.)
        names = {b.name for b in self._bots.values()}
        other = None if name in names else next(
            (n for n in names if read_alike(n, name)), None)
        if other is not None:
            how = (f"differs from the entered {other!r} only in case"
                   if other.casefold() == name.casefold() else
                   f"reads like the entered {other!r} (0 as o, 1 or I as l, rn as m, vv as "
                   "w, '.', '_' and '-' as one, a last one skipped)")
            raise RegistryError(f"bot name {name!r} {how}: use {other!r} (a new version of "
                                "it), or another name")


def _tail(paths: list[Path], size: int) -> str:
    """The last ``size`` bytes of ``paths`` as one text, the newest file last: each read
    from its end, never whole (a bot's folder holds up to 4 times its output limit, 64
    MiB by default, and reading it whole held the event loop 70 ms a call); a file gone
    meanwhile (pruned, moved aside) is passed over, where its stat ended the call with an
    unexpected error."""
    dated = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            dated.append((path.stat().st_mtime, path))
    text = b""
    for _, path in reversed(sorted(dated, key=lambda d: d[0])):   # the newest first
        with contextlib.suppress(FileNotFoundError), path.open("rb") as file:
            want = size - len(text)
            file.seek(max(0, file.seek(0, os.SEEK_END) - want))
            text = file.read(want) + text
        if len(text) >= size:
            break
    return text.decode(errors="replace")


def _cannot_hold(exc: OSError) -> RegistryError:
    """The error for an upload the server has no room to unzip (its temporary folder gone
    or full): the server's fault, not the bot's."""
    return RegistryError(f"the server cannot hold the upload to unpack it: "
                         f"{exc.strerror or exc}; the fault is the server's, not the bot's")


def _unzipped(archive: bytes) -> IO[bytes]:
    """The tar a gzipped upload holds, in a temporary file, :data:`MAX_TAR` bytes at most
    (unzipped a megabyte at a time, never past it); :class:`RegistryError` otherwise."""
    try:
        out = tempfile.TemporaryFile()
    except OSError as exc:       # no temporary folder, or a full one: the server's fault
        raise _cannot_hold(exc) from None
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(archive)) as unzipping:
            total = 0
            while True:
                try:
                    chunk = unzipping.read(2**20)
                except (OSError, EOFError, zlib.error) as exc:
                    raise RegistryError(f"the upload is not a gzipped tar: {exc}") from None
                if not chunk:
                    break
                total += len(chunk)
                if total > MAX_TAR:
                    raise RegistryError(f"the upload unpacks to more than "
                                        f"{MAX_UNPACKED // 2**20} MiB")
                try:
                    out.write(chunk)
                except OSError as exc:   # a full temporary folder: the server's fault
                    raise _cannot_hold(exc) from None
        out.seek(0)
        return out
    except BaseException:
        out.close()
        raise


class Entered(abc.ABC):
    """One entered bot version, as the server plays it: whether it can play now, where its
    seats come from, its output. One class per kind, in :data:`KINDS`; what differs
    between the kinds is said in each, so that no caller asks which kind it has."""

    #: whether a fresh process of it can play each rotation of a deal (duplicate deals);
    #: one whose memory cannot be reset plays plain deals (a tournament's ``remote``)
    resettable: ClassVar[bool] = True

    def __init__(self, registry: Registry, bot: RegisteredBot) -> None:
        self.registry = registry
        self.bot = bot

    def admit(self) -> None:
        """It is active on this server from now (entered, or found so as the server starts)."""

    @abc.abstractmethod
    def connected(self) -> bool:
        """Whether it can play now."""

    @abc.abstractmethod
    def ready(self) -> bool:
        """Whether a seat leased now would be played at once, not waited for."""

    @abc.abstractmethod
    def seats(self, referee: RefereeServer, log_dir: Path, connect_timeout: float) -> SeatProvider:
        """Where its seats come from, for a tournament or the ladder on ``referee``
        (``log_dir``: where processes of it write their output)."""

    def manifest(self) -> BotManifest | None:
        """What launches it from its folder, in any process; None for a bot with no folder
        here (it connects to this server's referee, and plays there only)."""
        return None

    def withdraw(self, reason: str) -> None:
        """It was removed: cut off here (each tournament playing it retires it itself,
        ``Runs.removed``)."""

    def disconnect(self, reason: str) -> None:
        """The server stops: its connection to it, if any, ends without a goodbye."""

    @abc.abstractmethod
    def log_files(self) -> list[Path]:
        """Every log file of its output the server has; :class:`NotHostedError` if none
        can be had here."""

    def move_old_logs(self, displays: set[str]) -> None:
        """Move its logs from where servers before 2026-12-05 kept them (see
        ``Registry._rename_old_log_folders``); ``displays``: every version's name."""


class RemoteBot(Entered):
    """A bot that connects from elsewhere with its token: its one connection (shared by
    every tournament and the ladder, one match at a time) is in the lobby while it is
    active; its output stays on its author's machine."""

    resettable = False

    def admit(self) -> None:
        self.registry.lobby.register_hash(self.bot.display, self.bot.token_hash)
        self.registry.remote[self.bot.display] = RemoteSeats(
            self.bot.display, self.registry.lobby, self.bot.token_hash, self.registry.absent_after)

    def connected(self) -> bool:
        return self.bot.token_hash is not None and self.registry.lobby.connected(self.bot.token_hash)

    def ready(self) -> bool:
        # connected, and not playing (or waiting to play) a match already
        seats = self.registry.remote.get(self.bot.display)
        return seats is not None and not seats.busy and self.connected()

    def seats(self, referee: RefereeServer, log_dir: Path, connect_timeout: float) -> SeatProvider:
        seats = self.registry.remote.get(self.bot.display)
        if seats is None:
            raise UnknownBotError(f"bot {self.bot.display} is not entered on this server")
        return seats

    def withdraw(self, reason: str) -> None:
        seats = self.registry.remote.pop(self.bot.display, None)
        if seats is not None:
            seats.retire(reason)
            self.registry.lobby.unregister_hash(self.bot.token_hash)

    def disconnect(self, reason: str) -> None:
        self.registry.lobby.drop(self.bot.token_hash, reason)

    def log_files(self) -> list[Path]:
        raise NotHostedError(f"{self.bot.display} is a remote bot: its output is on its "
                             "author's machine")


class HostedBot(Entered):
    """A bot the server keeps the folder of: always ready, seated by processes it launches
    from that folder (for each tournament its own, in the sandbox), its output in its logs."""

    def connected(self) -> bool:
        return self.bot.status == "active"

    def ready(self) -> bool:
        return True

    def seats(self, referee: RefereeServer, log_dir: Path, connect_timeout: float) -> SeatProvider:
        return ProcessSeats(self.manifest(), self.bot.display, referee, self.registry.factory,
                            log_dir, connect_timeout)

    def manifest(self) -> BotManifest:
        return load_manifest(self.bot.folder)

    def log_files(self) -> list[Path]:
        # its own folder (matches on this server's referee, its check runs) and the files
        # its processes wrote in tournaments played elsewhere (other processes, a Ray
        # cluster's nodes: logs/tournaments/NAME/WORKER/LABEL[+K].stderr.log)
        display, logs = self.bot.display, self.registry.data_dir / "logs"
        return [*self.registry.logs_dir(display).rglob("*.log"),
                *(p for p in (logs / "tournaments").rglob("*.stderr.log")
                  if is_log_of(p.name, display))]

    def move_old_logs(self, displays: set[str]) -> None:
        display = self.bot.display
        old = self.registry.data_dir / "logs" / display.replace(" ", "-")
        new = self.registry.logs_dir(display)
        if old.name in displays or not old.is_dir() or new.exists():
            return
        try:
            old.rename(new)
        except OSError as exc:
            log.warning("%s: its logs stay in %s: %s", display, old, exc)


#: The kinds of bot a server enters, by the name its store keeps.
KINDS: dict[str, type[Entered]] = {"remote": RemoteBot, "hosted": HostedBot}


def _unpack(archive: bytes, folder: Path) -> None:
    """A gzipped tar into ``folder``: regular files and folders only, inside it, within
    the limits; :class:`RegistryError` otherwise. Seconds of work for a big upload: the
    caller runs it in a thread, where the server's loop referees matches meanwhile."""
    with _unzipped(archive) as unzipped:
        try:
            tar = tarfile.open(fileobj=unzipped, mode="r:")
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise RegistryError(f"the upload is not a gzipped tar: {exc}") from None
        with tar:
            _extract(tar, folder)


def _readable(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """Python's ``data`` filter, each file and folder then readable by every user: the
    server's sandboxes run each bot as a user of its own (arena.bots.sandbox), which an
    upload's files of mode 0600 shut out of its own folder."""
    kept = tarfile.data_filter(member, dest)
    if kept.isdir():   # (the data filter leaves a folder's mode to the umask)
        return kept.replace(mode=0o755, deep=False)
    return kept.replace(mode=readable_by_all(kept.mode, folder=False), deep=False)


def _extract(tar: tarfile.TarFile, folder: Path) -> None:
    """``tar``'s members into ``folder``, checked (see :func:`_unpack`)."""
    total, members = 0, []
    try:
        for member in tar:
            if len(members) >= MAX_FILES:
                raise RegistryError(f"the upload has more than {MAX_FILES} files")
            if not (member.isfile() or member.isdir()):
                raise RegistryError(f"the upload holds {member.name!r}, which is neither a "
                                    "file nor a folder (links are not accepted)")
            parts = Path(member.name).parts
            if member.name.startswith("/") or ".." in parts:
                raise RegistryError(f"the upload holds {member.name!r}, a path out of the "
                                    "bot's folder")
            total += member.size
            if total > MAX_UNPACKED:
                raise RegistryError(f"the upload unpacks to more than {MAX_UNPACKED // 2**20} MiB")
            members.append(member)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise RegistryError(f"the upload is not a readable tar: {exc}") from None
    try:
        folder.mkdir(parents=True, exist_ok=False)
    except OSError as exc:   # a read-only or full data folder: the server's fault
        raise RegistryError(f"the server cannot store the upload in {folder.parent}: "
                            f"{exc.strerror or exc}; the fault is the server's, not the "
                            "bot's") from None
    try:
        folder.chmod(0o755)
        if hasattr(tarfile, "data_filter"):   # Python 3.11.4+: the library checks too
            tar.extractall(folder, members=members, filter=_readable)
        else:
            tar.extractall(folder, members=members)
    except (tarfile.TarError, OSError) as exc:
        raise RegistryError(f"the upload cannot be unpacked: {exc}") from None
