"""A bot's ``setup`` (``bot.toml``): run once per version of the bot, before its first launch.

A version is the content of the bot's *sources*: every file of its folder except what its
setup produced (a build folder, ``node_modules``) and the arena's own ``.arena*`` files.
After a setup succeeds, the files it created or changed are recorded with the sources'
hash in ``.arena-setup.json``; the next launch with the same sources finds that record
and skips the setup, and a changed source file (or a changed setup command, or, for a
C++ bot, a change to what the arena lends its build: :data:`LENT`) runs it again. The
setup's output goes to ``.arena-setup.log`` in the bot folder; it runs in the bot folder
with a time limit and a limit on what it adds to the folder (:data:`DISK_MB`,
:data:`DISK_FILES`), and a failure (non-zero exit, time out, a limit passed, a command
that does not start, or a bot program still missing afterwards) is a :class:`SetupError`
that names the bot and the log. A lock file keeps two arenas from setting up one folder
at once. The setup runs through the bot's process factory: in the sandbox, in a writable
copy of its folder on a file system of its own, which comes back once it succeeds
(:func:`_take_folder`), and with the network where the organiser allows it
(--setup-network).

The arena writes those three files in a folder the bot's own code could write, and runs
with more rights than the bot: each is written only as a new regular file of its own
(whatever stands at its name, a link to anywhere or a pipe, is removed, never followed),
and read only if it is one (:func:`_fresh`, :func:`_read_own`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import functools
import hashlib
import json
import logging
import os
import shlex
import shutil
import signal
import stat
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arena.bots.manifest import BotManifest, missing_program
from arena.bots.sandbox import REPO, ProcessFactory, SandboxConfig, readable_by_all
from arena.rules.errors import ConfigError

log = logging.getLogger(__name__)

STATE = ".arena-setup.json"
LOG = ".arena-setup.log"
LOCK = ".arena-setup.lock"
DEFAULT_TIMEOUT_S = 600.0
STOP_POLL_S = 0.1          # how often a setup under way looks whether it is to stop
#: What a setup may add to its folder, the one place of the host's disk it writes (its
#: /tmp and HOME are in memory, capped), where a stranger's setup on a server could fill
#: the disk in its 600 s, 1 GiB a file. In the sandbox it works in a copy of its folder on
#: a file system of its own, that much larger than the folder (the kernel holds it to
#: that, whatever it does), and the folder comes back once it succeeds, with at most
#: DISK_FILES entries more, nested at most DISK_DEPTH deep. Without the sandbox (which
#: trusts the bot) it writes the folder itself, with no limit.
DISK_MB = 4096
DISK_FILES = 200_000
#: Folders within folders: a folder nested deeper before a setup cannot be measured, and
#: one a setup nests deeper is refused (the arena's walks of the folder go no deeper).
DISK_DEPTH = 256
_STATE_VERSION = 1


class SetupError(ConfigError):
    """A bot's setup failed; the message names the bot, what happened and the log."""


@dataclass(frozen=True)
class SetupResult:
    """What :func:`ensure_setup` did: ``ran`` (False: up to date, or no setup), how long."""

    bot: str
    ran: bool
    seconds: float = 0.0
    log: Path | None = None


def _skipped(path: Path, folder: Path) -> bool:
    return "__pycache__" in path.relative_to(folder).parts or path.name.startswith(".arena")


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file of the folder (relative path -> size, mtime in ns), arena files aside."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and not _skipped(path, folder):
            st = path.stat()
            out[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def source_hash(folder: Path, outputs: frozenset[str] = frozenset()) -> str:
    """SHA-256 of the bot's sources: names and bytes of every file but ``outputs``."""
    digest = hashlib.sha256()
    for rel in sorted(snapshot(folder)):
        if rel in outputs:
            continue
        digest.update(rel.encode() + b"\0")
        digest.update((folder / rel).read_bytes())
    return digest.hexdigest()


#: What the arena lends a C++ bot's build (a bot folder with a CMakeLists.txt) besides
#: its folder: the C++ SDK, which it compiles in, and the two protos the SDK's code is
#: generated from. A bot built against other contents kept the old SDK's behaviour after
#: the arena's changed. Other bots' setups (pip, npm) do not depend on them: an arena
#: upgrade does not run those again (one that needs --setup-network would fail offline).
LENT = (REPO / "clients" / "cpp" / "CMakeLists.txt", REPO / "clients" / "cpp" / "include",
        REPO / "clients" / "cpp" / "src", REPO / "proto" / "ono99" / "v1" / "game.proto",
        REPO / "proto" / "ono99" / "v1" / "referee.proto")


@functools.cache
def lent_hash() -> str:
    """SHA-256 of :data:`LENT`'s files, names and bytes (once per process: the arena's own
    files do not change under it)."""
    digest = hashlib.sha256()
    for root in LENT:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def lent_to(folder: Path) -> str | None:
    """:func:`lent_hash` for a C++ bot's folder (it has a CMakeLists.txt), None for others."""
    if not (folder / "CMakeLists.txt").is_file():
        return None
    try:
        return lent_hash()
    except OSError as exc:
        raise SetupError(f"cannot read the arena's C++ SDK ({exc.filename}: {exc.strerror}): "
                         "is the arena's checkout whole?") from None


def recorded_outputs(folder: Path) -> frozenset[str]:
    """The files the last successful setup produced (none if it never ran)."""
    state = _read_state(folder)
    return frozenset(state.get("outputs", ())) if state else frozenset()


def content_hash(manifest: BotManifest) -> str:
    """The bot's version: the hash of its sources, what its setup made left out (so a
    built bot is the version it was before its build)."""
    return source_hash(manifest.folder, recorded_outputs(manifest.folder))


def _read_state(folder: Path) -> dict | None:
    text = _read_own(folder / STATE)
    try:
        state = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return state if isinstance(state, dict) and state.get("version") == _STATE_VERSION else None


def _read_own(path: Path, limit: int = 2**20) -> str | None:
    """The text of ``path`` if it is a regular file (not a link, a pipe or a device);
    else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return f.read(limit).decode("utf-8", errors="replace")


def _fresh(path: Path, mode: str = "w+b"):
    """``path`` opened as a new regular file of the arena's: whatever stood at that name
    (a setup may have left a link to any file of the host there) is removed first, never
    followed. :class:`SetupError` if a folder stands there."""
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise SetupError(f"cannot write {path}: {exc.strerror} (the arena keeps its own "
                         f"file there)") from None
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    return os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"}))


def _reclaim(path: Path, f) -> None:
    """After a setup (which could write the folder): ``path`` is ``f``'s file again,
    whatever the setup put in its place."""
    own = os.fstat(f.fileno())
    try:
        now = os.stat(path, follow_symlinks=False)
        if (now.st_dev, now.st_ino) == (own.st_dev, own.st_ino):
            return
    except FileNotFoundError:
        pass
    f.seek(0)
    data = f.read()
    with _fresh(path) as copy:
        copy.write(data)


def up_to_date(manifest: BotManifest) -> bool:
    """True when the setup already ran for these sources (or the bot has none)."""
    if manifest.setup is None:
        return True
    state = _read_state(manifest.folder)
    return (state is not None and state.get("command") == list(manifest.setup)
            and state.get("lent") == lent_to(manifest.folder)
            and state.get("hash") == source_hash(manifest.folder, frozenset(state.get("outputs", ()))))


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    path, flags = folder / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        path.unlink()                      # a link in its place: never followed
        fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "r+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_setup(manifest: BotManifest, timeout: float = DEFAULT_TIMEOUT_S,
                 on_start=None, factory: ProcessFactory | None = None,
                 stop: threading.Event | None = None) -> SetupResult:
    """Run the bot's setup unless its sources are already set up; then check that the
    bot's program exists. ``on_start(manifest, log_path)`` is called before a setup runs
    (to tell the user why they wait). ``stop``, set by another thread (this runs in one
    of its own, as check-bot's does), kills a setup under way. Raises
    :class:`SetupError`."""
    folder = manifest.folder
    if manifest.setup is None:
        return SetupResult(manifest.name, False)
    log = folder / LOG
    try:
        lock = _locked(folder)
        lock.__enter__()
    except OSError as exc:
        raise SetupError(f"cannot set up bot {manifest.name}: its folder {folder} is not "
                         f"writable ({exc.strerror})") from None
    try:
        if up_to_date(manifest):
            _check_program(manifest, log)
            return SetupResult(manifest.name, False, log=log)
        if on_start is not None:
            on_start(manifest, log)
        before = snapshot(folder)
        hash_before = source_hash(folder)
        try:
            seconds = _run(manifest, log, timeout, factory or SandboxConfig().factory(), stop)
        finally:     # ended, failed or not: no process of it is left to set them again
            _drop_set_group_ids(folder)
        _check_program(manifest, log)   # before recording it: a setup that built nothing
        after = snapshot(folder)         # usable is run again next time
        outputs = frozenset(rel for rel, stat in after.items() if before.get(rel) != stat)
        with _fresh(folder / STATE, "w") as f:
            f.write(json.dumps({
                "version": _STATE_VERSION, "command": list(manifest.setup),
                "lent": lent_to(folder),
                "hash": source_hash(folder, outputs), "hash_before": hash_before,
                "outputs": sorted(outputs), "seconds": round(seconds, 3),
                "finished_at": time.time(),
            }, indent=1))
        return SetupResult(manifest.name, True, seconds, log)
    finally:
        lock.__exit__(None, None, None)


def _drop_set_group_ids(folder: Path) -> None:
    """Clear the set-group-ID (and set-user-ID) bits of every file in ``folder``: a setup
    writes it on the host as the host's uid 0 and group 0, and a program it marked so
    would run with group 0 for any user of the machine who could reach it. The sandbox's
    filter refuses set-user-ID bits, not set-group-ID ones, which folders have for good
    reasons (arena.bots.sandbox); a folder keeps its own. By descriptors (:func:`_entries`):
    os.walk, recursive in Python 3.11, raised RecursionError 1,000 folders deep, and
    skipped what a path past 4,096 bytes names, the bits there left set."""
    try:
        for parent, name, st in _entries(folder, depth=None):
            if not stat.S_ISREG(st.st_mode) or not st.st_mode & (stat.S_ISGID | stat.S_ISUID):
                continue
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
                try:
                    os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~(stat.S_ISGID | stat.S_ISUID))
                finally:
                    os.close(fd)
            except OSError as exc:   # a file that cannot be read is no program to fear
                log.warning("cannot clear the set-group-ID bit of %s in %s: %s", name, folder,
                            exc)
    except OSError as exc:
        log.warning("cannot clear the set-group-ID bits in %s: %s", folder, exc)


def _run(manifest: BotManifest, log: Path, timeout: float, factory: ProcessFactory,
         stop: threading.Event | None = None) -> float:
    """Run the setup command through ``factory`` (sandboxed, with its folder writable, and
    the network if the organiser allows it), output to ``log``; its duration, or
    :class:`SetupError`."""
    (manifest.folder / STATE).unlink(missing_ok=True)   # a setup under way is no setup
    program = manifest.setup[0]
    if (os.sep in program and not (manifest.folder / program).exists()) or (
            os.sep not in program and shutil.which(program) is None
            and not (manifest.folder / program).exists()):
        raise SetupError(f"the setup of bot {manifest.name} cannot start: {program} is not found")
    return asyncio.run(_run_jailed(manifest, log, timeout, factory, stop))


async def _run_jailed(manifest: BotManifest, log: Path, timeout: float,
                      factory: ProcessFactory, stop: threading.Event | None) -> float:
    started = time.monotonic()
    with _fresh(log) as out:
        try:
            return await _run_logged(manifest, log, out, timeout, factory, started, stop)
        finally:   # the setup has ended: the log's name is the arena's file again
            _reclaim(log, out)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _entries(folder: Path, depth: int | None = DISK_DEPTH
             ) -> Iterator[tuple[int, str, os.stat_result]]:
    """Every entry below ``folder``: its folder's descriptor (open while it is yielded),
    name and stat, no link followed. Each folder is opened by its name in the one above,
    by descriptor, never by a path: no path is too long (20 folders of 250 letters make
    one past 4,096 bytes, which a walk by paths could not read), and there is no recursion
    (os.walk's, in Python 3.11, raised RecursionError 1,000 folders deep). What is gone
    meanwhile is skipped. :class:`OSError` where a folder cannot be read, or is nested
    deeper than ``depth`` (a descriptor is open for each folder above the one read)."""
    below: list[tuple[int, list[str]]] = []   # each open folder, its folders not yet read
    fd: int | None = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        while fd is not None:
            folders = []
            with os.scandir(fd) as listing:
                entries = list(listing)
            for entry in entries:
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                yield fd, entry.name, st
                if stat.S_ISDIR(st.st_mode):
                    folders.append(entry.name)
            below.append((fd, folders))
            if depth is not None and len(below) > depth:
                raise OSError(f"folders nested more than {depth} deep")
            fd = None
            while below and fd is None:       # the next folder down, or back up
                parent, todo = below[-1]
                if todo:
                    try:
                        fd = os.open(todo.pop(), _DIR_FLAGS, dir_fd=parent)
                    except OSError as exc:   # gone, or replaced (by a file, by a link)
                        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                            raise
                else:
                    os.close(below.pop()[0])
    finally:
        for opened, _ in below:
            os.close(opened)
        if fd is not None and all(fd != opened for opened, _ in below):
            os.close(fd)


def disk_usage(folder: Path) -> tuple[int, int]:
    """The bytes ``folder`` takes on disk (its files' allocated blocks, a file with many
    links once) and the number of entries in it; links are not followed: what a setup's
    file system of its own must hold besides its room. :class:`OSError` where part of it
    cannot be measured (see :func:`_entries`): a folder that cannot be read, folders
    nested deeper than :data:`DISK_DEPTH`. What is gone meanwhile is not counted."""
    size = entries = 0
    linked: set[tuple[int, int]] = set()
    for _, _, st in _entries(folder):
        entries += 1
        if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
            if (st.st_dev, st.st_ino) in linked:
                continue
            linked.add((st.st_dev, st.st_ino))
        size += st.st_blocks * 512
    return size, entries


def _take_folder(fd: int, folder: Path, room_mb: int, most_entries: int) -> str | None:
    """In a thread: unpack into ``folder`` the setup's folder, which its sandbox sends as a
    tar stream on the pipe ``fd`` as it ends (:data:`arena.bots.sandbox._SETUP_SCRIPT`),
    as an upload is (Python's ``tar`` filter: nothing outside ``folder``, no device, no
    set-ID bit); a file found unchanged (its size and time to the nanosecond) is not
    written again, nor the arena's own files; what the setup removed is removed. The
    setup may have written anything on the pipe: more than its folder could hold, more
    than ``most_entries`` entries, folders too deep, or what is not a tar stream, is
    refused, and then nothing of it is written: the stream is kept in a file (unnamed, in
    ``folder``, on the disk its files would take) and read through once before a byte of
    it is unpacked. Only what is to be unpacked takes room there: the data of a file found
    unchanged is a hole (a spool of the whole stream failed every setup of a folder larger
    than the disk's free room). What went wrong, or None (nothing sent: a setup that
    failed)."""
    with open(fd, "rb") as pipe:
        try:
            kept = tempfile.TemporaryFile(dir=folder)
        except OSError as exc:   # out of open files, a quota: the setup's failure, said
            return f"its folder could not be taken back ({exc})"
        with kept:
            return _take_stream(pipe, kept, folder, room_mb, most_entries)


def _take_stream(pipe, kept, folder: Path, room_mb: int, most_entries: int) -> str | None:
    """:func:`_take_folder`'s work, with the stream ``pipe`` and the spool ``kept``."""
    stream = _Counted(pipe, room_mb * 2**20 + most_entries * 4096)   # and the headers
    spool = _Spooled(stream, kept)
    sent: set[str] = set()
    folders: set[str] = set()  # folders sent so far (where a member may be)
    unpack: set[int] = set()   # the members to unpack, by their place in the stream
    holes: set[str] = set()    # files found unchanged: no data in the spool
    files: set[str] = set()    # regular files sent so far (what a hard link may name)
    root = os.path.realpath(folder)

    @functools.cache
    def plain(parent: str) -> bool:
        """Whether the folders of ``parent`` (in ``folder``) are folders, no link among
        them: a file found below a link is not where the member goes (the link is
        cleared for a folder of that name), so it is unpacked."""
        path = os.path.normpath(os.path.join(root, parent))
        return os.path.realpath(path) == path

    try:
        with tarfile.open(fileobj=spool, mode="r|") as tar:
            for count, member in enumerate(tar, 1):
                if count > most_entries:
                    return f"it made more than {DISK_FILES:,} files in its folder"
                if member.name.count("/") > DISK_DEPTH + 1:   # "./" and its folders
                    return f"it nested folders more than {DISK_DEPTH} deep in its folder"
                _named_within(member)                     # tarfile.FilterError: refused
                if member.islnk() and os.path.normpath(member.linkname) not in files:
                    # tar's filter keeps a hard link to anywhere: to a file of the
                    # host's its user may write (the next setup wrote through it) or
                    # read (it came back, copied). tar links to a file it sent before.
                    raise tarfile.LinkOutsideDestinationError(member, member.linkname)
                name = os.path.normpath(member.name)
                if name in sent or (name != "." and
                                    (os.path.dirname(name) or ".") not in folders):
                    # tar sends each name once, below a folder it sent before: else
                    # a later member is refused as it is unpacked (below a link the
                    # stream made: 'outside the destination'), the folder half written
                    raise tarfile.FilterError(f"{member.name!r} sent twice, or not in "
                                              "a folder sent before it")
                sent.add(name)
                if member.isreg():
                    files.add(name)
                elif member.isdir():
                    folders.add(name)
                if name == ".":
                    pass   # the folder itself: the host's (its mode, its times)
                elif _arena_file(member) or (plain(os.path.normpath(os.path.dirname(name)))
                                             and _unchanged(folder, member)):
                    # not kept: its data is a hole in the spool (a bot's folder of
                    # 3 GiB of weights, unchanged, is not written again to the disk)
                    spool.skip = (member.offset_data, tar.offset)
                    holes.add(name)
                else:
                    unpack.add(count)
    except _Counted.TooMuch:
        return f"it sent back more than its folder may hold ({room_mb} MiB)"
    except (tarfile.TarError, OSError) as exc:
        if stream.count == 0:
            return None
        return f"its folder could not be taken back ({exc})"
    if not sent:   # (an empty stream is no folder, not one with nothing in it)
        return None
    kept.truncate(spool.pos)
    kept.seek(0)
    try:
        with tarfile.open(fileobj=kept, mode="r:") as tar:
            for count, member in enumerate(tar, 1):   # the same headers, read again
                if count not in unpack:
                    continue
                _clear_way(folder, member)
                if member.islnk() and os.path.normpath(member.linkname) in holes:
                    # a hard link to a file found unchanged: linked to it in the
                    # folder, never copied from the spool (tarfile copies where it
                    # cannot link, and there its data is a hole); refused if it fails
                    _filter(member, str(folder))
                    os.link(os.path.join(folder, member.linkname),
                            os.path.join(folder, member.name), follow_symlinks=False)
                else:
                    tar.extract(member, folder, filter=_filter)
        _remove_unsent(folder, sent, os.fstat(kept.fileno()))
    except (tarfile.TarError, OSError) as exc:
        return f"its folder could not be taken back ({exc})"
    return None


def _remove_unsent(folder: Path, sent: set[str],
                   spared: os.stat_result | None = None) -> None:
    """Remove from ``folder`` what the setup removed from its copy: each entry whose path
    (relative) is not in ``sent``, a folder with what it holds, a link as a link; the
    arena's own files stay, and the file ``spared`` is (the spool, which a file system
    without unnamed files, NFS, keeps under a name of its own while it is open). (The
    folder is at most DISK_DEPTH deep: os.walk's recursion holds.)"""
    for root, folders, files in os.walk(folder):      # links to folders are not followed
        here = os.path.relpath(root, folder)
        for name in [*folders, *files]:
            if (os.path.normpath(os.path.join(here, name)) in sent
                    or (here == "." and name.startswith(".arena-setup."))):
                continue
            path = os.path.join(root, name)
            if spared is not None and os.path.samestat(os.lstat(path), spared):
                continue
            if name in folders and not os.path.islink(path):
                folders.remove(name)
                shutil.rmtree(path)
            else:
                os.unlink(path)


class _Counted:
    """A file's reads, counted, up to ``most`` bytes (past them, :class:`TooMuch`)."""

    class TooMuch(Exception):
        pass

    def __init__(self, raw, most: int) -> None:
        self.raw = raw
        self.most = most
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        if self.count > self.most:
            raise self.TooMuch()
        return data


class _Spooled:
    """What tarfile reads of a stream, written as it is read to ``file`` at its offset in
    the stream, but for the range :attr:`skip` (the data of a member that will not be
    unpacked, known as its header is read): a hole there, no disk taken."""

    def __init__(self, raw, file) -> None:
        self.raw = raw
        self.file = file
        self.pos = 0
        self.skip = (0, 0)

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        start, end = self.pos, self.pos + len(data)
        low, high = self.skip
        for a, b in ((start, min(end, low)), (max(start, high), end)):
            if a < b:
                self.file.seek(a)
                self.file.write(data[a - start:b - start])
        self.pos = end
        return data


def _filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """Python's ``tar`` filter (no path outside ``dest``, no set-ID bit, no write bit for
    the group or others), which lets a folder keep its set-group-ID bit: a bot folder in
    a group's shared folder has it, for good reasons. Files and folders readable by all,
    owned by the arena's user. (Devices, which that filter keeps,
    are refused before: :func:`_named_within` reads every member first.)"""
    kept = tarfile.tar_filter(member, dest)
    mode = kept.mode
    if member.isdir() and member.mode & stat.S_ISGID and mode is not None:
        mode |= stat.S_ISGID
    if mode is not None and (member.isdir() or member.isreg()):
        # the bot runs as a user of its own (another than the setup's), which a file of
        # mode 0600 (a setup's umask 077, mktemp) shut out of its own build
        mode = readable_by_all(mode, member.isdir())
    # owned by the arena's user, not the sandbox's (another bot's sandbox may have its
    # uid later)
    return kept.replace(mode=mode, uid=None, gid=None, uname=None, gname=None, deep=False)


def _named_within(member: tarfile.TarInfo) -> None:
    """Refuse (:class:`tarfile.FilterError`) a member named outside its folder, or a
    device, by its header alone: read through before the folder is touched, a name is
    judged as it is written, not by what stands at it now (a link to /usr/bin/env that
    the setup made again, or a venv's python, points outside; :func:`_clear_way` removes
    it first). The filter judges again, links followed, as each is unpacked."""
    name = os.path.normpath(member.name)
    if os.path.isabs(name) or name == ".." or name.startswith("../"):
        raise tarfile.OutsideDestinationError(member, name)
    if member.ischr() or member.isblk():   # the tar filter keeps them: mknod, as root
        raise tarfile.SpecialFileError(member)


def _clear_way(folder: Path, member: tarfile.TarInfo) -> None:
    """Remove what stands at ``member``'s name in ``folder`` where it is not what the
    member will be: any file where a file comes (tarfile writes through a link, and
    through a hard link into the file's other names; for a hard link it copied, from the
    spool, the data of its target, which may be a hole there; the filter judges a link by
    where it points), a folder where a file comes (or the reverse: tarfile fails, EISDIR
    or ENOTDIR, the folder half written). Where the name's folders lead outside
    ``folder``, nothing is removed: the filter refuses it."""
    path = os.path.join(folder, member.name)
    root = os.path.realpath(folder)
    if os.path.commonpath([os.path.realpath(os.path.dirname(path)), root]) != root:
        return
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        if not member.isdir():
            shutil.rmtree(path)
    else:   # a file is written as a new one: not through another name of the one there
        os.unlink(path)


def _arena_file(member: tarfile.TarInfo) -> bool:
    """Whether ``member`` names one of the arena's own files (``./.arena-setup.*``)."""
    return member.name.removeprefix("./").startswith(".arena-setup.")


def _unchanged(folder: Path, member: tarfile.TarInfo) -> bool:
    """Whether ``member`` is a folder that ``folder`` has, or a file it has with the same
    size and time (to the nanosecond, from the pax header)."""
    try:
        st = os.lstat(folder / member.name)
    except OSError:
        return False
    if member.isdir():
        return stat.S_ISDIR(st.st_mode)
    if not member.isreg() or not stat.S_ISREG(st.st_mode) or st.st_size != member.size:
        return False
    whole, _, part = member.pax_headers.get("mtime", str(int(member.mtime))).partition(".")
    try:
        return st.st_mtime_ns == int(whole) * 10**9 + int((part + "0" * 9)[:9])
    except ValueError:
        return False


async def _stopped(stop: threading.Event | None) -> None:
    """Return once ``stop`` is set (never, for None)."""
    while stop is None or not stop.is_set():
        await asyncio.sleep(STOP_POLL_S)


async def _run_logged(manifest: BotManifest, log: Path, out, timeout: float,
                      factory: ProcessFactory, started: float,
                      stop: threading.Event | None = None) -> float:
    """The setup, its output written to ``out`` (the log's open file); its duration."""
    out.write(f"$ {shlex.join(manifest.setup)}\n".encode())   # as a shell would run it
    out.flush()
    try:
        before = await asyncio.to_thread(disk_usage, manifest.folder)
    except OSError as exc:
        raise SetupError(f"the setup of bot {manifest.name} cannot start: its folder "
                         f"cannot be measured ({exc.strerror or exc})") from None
    room_mb = -(-before[0] // 2**20) + DISK_MB
    try:
        jail, _ = await factory.start(manifest.setup, manifest.folder, {}, setup=True,
                                      room_mb=room_mb)
    except OSError as exc:
        raise SetupError(f"the setup of bot {manifest.name} cannot start: {exc}") from None
    cap = jail.limits.output_mb * 2**20 if jail.limits.output_mb else None

    async def pump() -> None:   # keep reading (a full pipe would stall the setup)
        written = 0
        while chunk := await jail.proc.stdout.read(65536):
            if cap is None or written < cap:
                out.write(chunk[:None if cap is None else cap - written])
                out.flush()
            written += len(chunk)

    # where the setup works in a copy of its folder (in the sandbox: see
    # arena.bots.sandbox._SETUP_SCRIPT), the folder comes back as it ends, taken in a thread
    taking = None
    if jail.folder_out is not None:
        taking = asyncio.ensure_future(asyncio.to_thread(
            _take_folder, jail.folder_out, manifest.folder, room_mb, before[1] + DISK_FILES))
        taking.add_done_callback(lambda f: f.cancelled() or f.exception())   # retrieved
    stopped = False
    try:
        async with asyncio.timeout(timeout):
            ended = asyncio.gather(pump(), jail.proc.wait())
            stopping = asyncio.ensure_future(_stopped(stop))
            try:
                await asyncio.wait((ended, stopping), return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
            if ended.done():
                ended.result()
            else:   # stopped (check-bot's caller went: an upload cut short)
                stopped = True
                jail.signal(signal.SIGKILL)
                await jail.proc.wait()
                ended.cancel()
    except TimeoutError:
        jail.signal(signal.SIGKILL)
        await jail.proc.wait()
        jail.close()
        if taking is not None:
            await taking    # ends as the pipe does, with the sandbox
        raise SetupError(f"the setup of bot {manifest.name} did not finish within "
                         f"{timeout:g} s and was stopped; its output is in {log}"
                         f"{_tail(out)}") from None
    except BaseException:   # Ctrl-C: leave no setup running behind
        jail.signal(signal.SIGKILL)
        jail.close()
        raise
    jail.close()
    code = jail.proc.returncode
    # the folder it sent back (only a setup that succeeded sends it): what went wrong
    refused = None if taking is None else await taking
    if stopped:
        raise SetupError(f"the setup of bot {manifest.name} was stopped: its check was "
                         "cancelled")
    if refused is not None:   # its folder's send cut short, the setup may fail with it
        raise SetupError(f"the setup of bot {manifest.name} failed: {refused}; its output is "
                         f"in {log}{_tail(out)}")
    if code != 0:
        cause = jail.cause(code)
        sig = jail.exit_signal(code)
        how = (f"was stopped: {cause}" if cause else f"was killed by signal {sig}" if sig
               else f"exited with code {code}")
        raise SetupError(f"the setup of bot {manifest.name} {how}; its output is in {log}"
                         f"{_tail(out)}")
    return time.monotonic() - started


def _tail(out, lines: int = 3) -> str:
    """The last lines of the setup's log, read from the arena's own open file (not by
    name: the setup could have put a link there)."""
    out.flush()
    out.seek(0)
    text = out.read().decode("utf-8", errors="replace").strip().splitlines()
    out.seek(0, os.SEEK_END)
    tail = " | ".join(line.strip() for line in text[1:][-lines:] if line.strip())
    return f" (last lines: {tail})" if tail else ""


def _check_program(manifest: BotManifest, log: Path) -> None:
    problem = missing_program(manifest)
    if problem:
        raise SetupError(f"bot {manifest.name}: {problem} after its setup; see {log}")
