"""Where a bot process runs: a sandbox (bubblewrap, cgroups, rlimits) or a plain child.

The arena runs strangers' programs, so by default every bot runs in a bubblewrap sandbox
(Debian's ``bubblewrap``, the sandbox Flatpak is built on): new PID, network, IPC, UTS
and mount namespaces; run by root, as a user of its own (USER_BASE), else in a user
namespace of its own; no capabilities (bwrap run by root keeps them unless told: with
CAP_SYS_ADMIN a bot could remount its read-only mounts writable) and no further user
namespaces; no kernel keyring, no exact probe of the page cache, no lock or watch on the
files every sandbox shares (a seccomp filter: all are shared beyond every namespace, so
what one process leaves there, a later or a concurrent one could read) and no
set-user-ID bit; the system and its kernel settings (/proc/sys) read-only; its own
folder read-only; a fresh scratch ``HOME`` and a private ``/tmp``, both size-capped
in-memory file systems; the Python, Node.js and
C++ runtimes and SDKs read-only; the referee's unix socket bound in; and nothing else of
the host (no database, no other bots, no organiser files, no network, no other process).
Its environment holds only what a bot needs. Limits come from cgroups where the arena may
write them (memory, processes and threads: root ignores RLIMIT_NPROC, so a count of
processes needs the pids controller, or a sandbox's own user; and a share of the cores: each
bot's own cpu group weighs as one thread, however many processes it spins, so it cannot
starve the bot whose turn it is), and from rlimits (CPU time, open files, file size); the
arena caps its output. When the sandbox's first process ends, or the arena dies, the PID
namespace dies with it: nothing it started survives.

:class:`ProcessFactory` is the seam: :class:`SandboxFactory` and :class:`PlainFactory`
start a command and return a :class:`Jail` that stops it, names the limit it broke, and
cleans up. Setup steps run sandboxed too, with their folder writable (and, where the
organiser allows it, a network of their own that reaches the internet alone:
:class:`_SetupNetwork`).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import errno
import os
import shutil
import signal
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.bots.sandbox.bwrap import (REPO, SCRATCH, SOCKET_DIR, USER_BASE, _PROC_MASKS,
                                      _PROC_SYS, _SETUP_ETC, _names, _namespaces,
                                      _probe_bwrap, _runtime_paths, _system_mounts, _Tree,
                                      _user, readable_by_all, runs_as_user, uid_0_notice)
from arena.bots.sandbox.cgroups import _Cgroups
from arena.bots.sandbox.limits import SETUP_LIMITS, Limits
from arena.bots.sandbox.network import _SetupNetwork
from arena.bots.sandbox.seccomp import _seccomp, _seccomp_program
from arena.bots.sandbox.spawn import DIE_WITH_PARENT, _prelude, _spawn, setpriv_works
from arena.rules.errors import ConfigError

__all__ = ["DIE_WITH_PARENT", "MODES", "PASS_ENV", "REPO", "SCRATCH", "SDK_ENV", "SETUP_LIMITS",
           "SOCKET_DIR", "USER_BASE", "Jail", "Limits", "PlainFactory", "ProcessFactory",
           "SandboxConfig", "SandboxFactory", "bot_env", "readable_by_all", "runs_as_user",
           "setpriv_works", "uid_0_notice"]

MODES = ("auto", "bwrap", "none")
#: Organiser variables named here (comma-separated) are passed to every bot.
PASS_ENV = "ONO99_BOT_ENV"


@dataclass(frozen=True)
class SandboxConfig:
    """How bots are run (``--sandbox``, ``--limit``, ``--setup-network``): picklable, for
    worker processes."""

    mode: str = "auto"
    limits: Limits = Limits()
    #: Setup steps get a network (to download dependencies): the internet, never this
    #: machine's own services nor its private network, where slirp4netns can carry it
    #: (:class:`_SetupNetwork`); elsewhere the host's network, with a notice.
    setup_network: bool = False

    def factory(self) -> ProcessFactory:
        """The factory for this mode: ``auto`` is bwrap where it works, else plain."""
        if self.mode not in MODES:
            raise ConfigError(f"--sandbox {self.mode!r} is not one of {', '.join(MODES)}")
        if self.mode == "none":
            return PlainFactory(self.limits)
        problem = SandboxFactory.unavailable()
        if problem is None:
            return SandboxFactory(self.limits, self.setup_network)
        if self.mode == "bwrap":
            raise ConfigError(f"--sandbox bwrap: {problem}")
        return PlainFactory(self.limits, notice=f"bots run without a sandbox: {problem}")


# ---------------------------------------------------------------- a running process


class Jail:
    """One started process (sandboxed or plain): stop it, say which limit ended it, clean
    up after it."""

    def __init__(self, proc: asyncio.subprocess.Process, cgroups: _Cgroups | None,
                 limits: Limits, sandboxed: bool) -> None:
        self.proc = proc
        self.cgroups = cgroups
        self.limits = limits
        self.sandboxed = sandboxed
        self.output_exceeded = False
        #: a setup's folder as it ends, where it worked in a copy of its own: the read end
        #: of a pipe carrying it as a tar stream (:data:`_SETUP_SCRIPT`), else None
        self.folder_out: int | None = None
        #: a setup's network, which ends with it (close)
        self.network: _SetupNetwork | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def signal(self, sig: int) -> None:
        """Send ``sig`` to everything the process started: its process group, which holds
        a sandbox's bwrap and the first process inside (whose death takes the whole PID
        namespace with it), even while bwrap is still setting the sandbox up."""
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        if sig == signal.SIGKILL and self.cgroups is not None:
            self.cgroups.kill_all()

    def exit_signal(self, returncode: int) -> int | None:
        """The signal that ended the process (bwrap reports it as 128 + the signal)."""
        if returncode < 0:
            return -returncode
        if self.sandboxed and returncode > 128:
            return returncode - 128
        return None

    def cause(self, returncode: int | None, last_output: str = "") -> str | None:
        """The limit the process broke, in words, if one ended it (``last_output``: its last
        lines, where a program that ignores SIGXFSZ, as Python does, says EFBIG)."""
        lim = self.limits
        if self.output_exceeded:
            return f"it wrote more than its output limit ({lim.output_mb} MiB)"
        if self.cgroups is not None and self.cgroups.oom_killed():
            return f"it exceeded its memory limit ({lim.memory_mb} MiB)"
        if (lim.memory_mb is not None and returncode and (self.cgroups is None or "memory"
                not in self.cgroups.dirs) and any(w in last_output for w in _OUT_OF_MEMORY)):
            return f"it exceeded its memory limit ({lim.memory_mb} MiB)"   # under ulimit -d
        sig = self.exit_signal(returncode) if returncode is not None else None
        if sig == signal.SIGXCPU:
            return f"it exceeded its CPU time limit ({lim.cpu_s} s)"
        if sig == signal.SIGXFSZ or (lim.file_size_mb is not None and returncode
                                     and "File too large" in last_output):
            return f"it exceeded its file size limit ({lim.file_size_mb} MiB)"
        return None

    def peak_memory_mb(self) -> float | None:
        return None if self.cgroups is None else self.cgroups.peak_memory_mb()

    def close(self) -> None:
        """After the process ended: nothing of it left (its processes, cgroups). A
        sandbox's file systems went with it."""
        if self.cgroups is not None:
            self.cgroups.kill_all()
            self.cgroups.remove()
        if self.network is not None:
            self.network.close()


#: What programs say when an allocation fails (Python, V8, C++, C).
_OUT_OF_MEMORY = ("MemoryError", "out of memory", "std::bad_alloc", "Cannot allocate memory")


class ProcessFactory(abc.ABC):
    """Starts bot processes (and setup steps) one way."""

    name: str = ""
    notice: str | None = None        # one line for the user, when the choice needs saying
    #: whether its bots reach the referee only by a unix socket given them (``referee_socket``
    #: of :meth:`start`): one of their own, which no other bot shares
    needs_socket: bool = False

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    @abc.abstractmethod
    async def start(self, argv: Sequence[str], folder: Path, env: dict[str, str],
                    referee_socket: str | None = None, setup: bool = False,
                    room_mb: int | None = None) -> tuple[Jail, dict[str, str]]:
        """Start ``argv`` in ``folder`` with ``env`` (stdin closed, stdout and stderr merged
        into one pipe). ``referee_socket`` is the path of the referee's unix socket, made
        reachable; ``setup`` runs a setup step (its folder writable, :data:`SETUP_LIMITS`,
        and the network where the organiser allows it), which may make its folder hold
        ``room_mb`` MiB in all where the factory can hold it to that (the jail's
        :attr:`Jail.folder_out` then brings the folder back). Returns the jail and the
        environment the process got."""

    def describe(self) -> str:
        return f"{self.name}: {self.limits.describe()}"


#: Where this arena's Node.js and C++ SDKs are, told to every bot process and setup step
#: (the sandbox shows them at the same paths, read-only): a bot made on one machine finds
#: them on the machine that runs it (a server it was uploaded to), where a path into its
#: author's copy of the repository does not lead. Python bots ``import ono99``.
SDK_ENV = {"ONO99_NODE_SDK": REPO / "clients" / "node", "ONO99_CPP_SDK": REPO / "clients" / "cpp"}


def bot_env(extra: dict[str, str], home: str) -> dict[str, str]:
    """A bot's whole environment: the basics, where the SDKs are, ``extra`` (its referee,
    token, name), and the organiser's variables named in ``$ONO99_BOT_ENV``; nothing else
    of the arena's."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": os.environ.get("LANG", "C.UTF-8"),
           "HOME": home, "TMPDIR": "/tmp", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.update({name: str(path) for name, path in SDK_ENV.items() if path.is_dir()})
    for name in filter(None, (n.strip() for n in os.environ.get(PASS_ENV, "").split(","))):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra)
    return env


class PlainFactory(ProcessFactory):
    """A plain child process in its own process group (``--sandbox none``): no namespaces,
    but a clean environment, the limits cgroups and rlimits can give, and its output capped."""

    name = "no sandbox"

    def __init__(self, limits: Limits, notice: str | None = None) -> None:
        super().__init__(limits)
        self.notice = notice

    async def start(self, argv, folder, env, referee_socket=None, setup=False, room_mb=None):
        limits = SETUP_LIMITS if setup else self.limits
        env = bot_env(env, os.environ.get("HOME", str(folder)))
        cgroups = _Cgroups.make(limits)
        proc = await _spawn(_prelude(limits, cgroups), argv, folder, env)
        return Jail(proc, cgroups, limits, sandboxed=False), env


class SandboxFactory(ProcessFactory):
    """bubblewrap: namespaces, a read-only system, the bot's folder read-only, a scratch
    HOME, no network, the referee's socket, limits."""

    name = "bwrap sandbox"
    needs_socket = True     # it has no network

    def __init__(self, limits: Limits, setup_network: bool = False) -> None:
        super().__init__(limits)
        self.setup_network = setup_network
        notices = []
        if _seccomp_program() is None:
            notices.append("the sandbox leaves the kernel keyring and the page cache's probes "
                           "open to bots (channels between their processes): libseccomp "
                           "(Debian: libseccomp2) is missing or failed")
        if (uid_0 := uid_0_notice()) is not None:
            notices.append(uid_0)
        #: whether a setup with the network gets one of its own (_SetupNetwork)
        self.own_network = False
        if setup_network:
            if (why := _SetupNetwork.missing()) is not None:
                notices.append("setups get this machine's network, its own services and "
                               f"private network too, not the internet alone: {why}")
            self.own_network = why is None
        self.notice = "; ".join(notices) or None

    @staticmethod
    def unavailable() -> str | None:
        """Why bwrap cannot be used here, or None."""
        if shutil.which("bwrap") is None:
            return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
        probe = _probe_bwrap()
        return None if probe is None else f"bubblewrap does not work here ({probe})"

    async def start(self, argv, folder, env, referee_socket=None, setup=False, room_mb=None):
        limits = SETUP_LIMITS if setup else self.limits
        if runs_as_user() and (mode := os.stat(folder).st_mode) & 0o005 != 0o005:
            raise OSError(errno.EACCES, f"the bot's folder {folder} is shut to other users "
                          f"(mode {stat.S_IMODE(mode):04o}), and the sandbox runs each bot as "
                          "a user of its own: make it readable by all (chmod -R a+rX)")
        env = bot_env(env, SCRATCH)
        if referee_socket is not None and "ONO99_REFEREE" in env:
            env["ONO99_REFEREE"] = f"unix:{SOCKET_DIR}/referee.sock"
        # /tmp, /dev/shm and the scratch HOME are in-memory file systems of the sandbox's
        # own, each capped (their pages count in the memory cgroup too): nothing a bot
        # writes reaches the host's disk or outlives the process. /dev itself (bwrap's
        # tmpfs of device nodes, uncapped) is read-only after
        size = [] if limits.scratch_mb is None else ["--size", str(limits.scratch_mb * 2**20)]
        tree = _Tree()
        tree.add("--proc", "/proc")
        tree.add(*_PROC_SYS, *_PROC_MASKS, "--dev", "/dev", *size, "--perms", "1777", "--tmpfs",
                 "/dev/shm", "--remount-ro", "/dev", *size, "--perms", "1777", "--tmpfs", "/tmp",
                 *size, "--perms", "1777", "--tmpfs", SCRATCH, "--dir", "/run")
        # the environment reaches the bot as bwrap's own (_spawn hands it over whole), not
        # by --setenv: a command line is any local user's to read (ps), and this one held
        # the bot's token, with which a user of the machine could take the bot's seat
        own_user = runs_as_user()
        _system_mounts(tree, host_names=not own_user)
        if setup and self.setup_network:
            # only where npm can reach a registry: a setup writes its folder, which its
            # bot reads while it plays and can show every spectator (a crash verdict
            # quotes its stderr): a hosted stranger's setup copied /etc/npmrc there, and
            # its bot crashed in a ladder match with the file's line in its verdict
            for name in _SETUP_ETC:
                if (Path("/etc") / name).exists():
                    tree.bind("--ro-bind", f"/etc/{name}", f"/etc/{name}")
        for path in _runtime_paths():
            tree.bind("--ro-bind", path, path)
        out = None
        if setup and room_mb is not None:
            # the setup works in a copy of its folder on a file system of its own, of
            # room_mb: the kernel holds it to that (what it writes, keeps open after
            # removing, or allocates), where a measure of the folder from outside could
            # be outrun or fooled. Its folder comes back through a pipe once it ends.
            # (Writable by all: the sandbox's user cannot own what bwrap makes)
            out = os.pipe()
            # its script reopens the pipe as its fd 9 (sh's redirections take one digit),
            # which checks the pipe's mode against the sandbox's user
            os.fchmod(out[1], 0o622)
            tree.bind("--ro-bind", str(folder), _SETUP_SOURCE)
            tree.add("--size", str(room_mb * 2**20), "--perms", "0777", "--tmpfs", str(folder))
            argv = ["/bin/sh", "-c", _SETUP_SCRIPT, "setup", str(out[1]), str(room_mb), *argv]
        else:
            tree.bind("--bind" if setup else "--ro-bind", str(folder), str(folder))
        if referee_socket is not None:
            tree.add("--dir", SOCKET_DIR)
            tree.bind("--bind", referee_socket, f"{SOCKET_DIR}/referee.sock")
        # no --new-session: bwrap's first process stays in the process group _spawn made
        # (whose watchdog kills it; the group's session has no terminal to protect)
        network = None
        cgroups = _Cgroups.make(limits)
        try:
            box = ["bwrap", "--die-with-parent",
                   *_namespaces(setup and self.setup_network and not self.own_network),
                   "--hostname", "bot", *tree.args]
            if setup and self.own_network:
                network = _SetupNetwork()
                box += network.bwrap_args()
            with _seccomp() as (flags, fds):
                passed = [*fds, out[1]] if out else fds
                if network is not None:
                    passed = [*passed, *network.passed]
                prelude = _prelude(limits, cgroups, own_user=own_user)
                if own_user:
                    names, lines = _names(passed)
                    box += names
                    prelude += lines
                box += ["--remount-ro", "/", "--chdir", str(folder)]
                proc = await _spawn(prelude, [*box, *flags, "--", *_user(), *argv], folder,
                                    env, passed)
        except BaseException:
            if out:
                os.close(out[0])
            if network is not None:
                network.close()
            if cgroups is not None:
                cgroups.remove()
            raise
        finally:
            if out:
                os.close(out[1])
            if network is not None:
                network.started()
        jail = Jail(proc, cgroups, limits, sandboxed=True)
        jail.folder_out = out[0] if out else None
        if network is not None:
            jail.network = network
            try:
                await network.connect(cgroups)
            except BaseException as exc:
                jail.signal(signal.SIGKILL)
                await proc.wait()
                # nothing of the setup ran yet: what it wrote is bwrap's own error, the
                # reason (the sandbox ended with nothing but this message, before)
                said = b""
                if isinstance(exc, OSError):
                    with contextlib.suppress(TimeoutError, OSError):
                        async with asyncio.timeout(1.0):
                            said = await proc.stdout.read()
                jail.close()
                lines = said.decode(errors="replace").strip().splitlines()
                if lines:
                    raise OSError(f"{exc}; it said: {lines[-1][:300]}") from None
                raise
        return jail, env


#: Where a setup's sandbox shows the bot's folder as it was (read-only), to copy from.
_SETUP_SOURCE = "/run/ono99-source"

#: A setup step in the sandbox (``sh -c SCRIPT setup FD ROOM_MB COMMAND...``), at its
#: folder's path on a file system of its own: copies the folder in from _SETUP_SOURCE
#: (the arena's own files aside; what is in it, not the folder itself, whose mode and
#: times a setup run as a user of its own may not set; cp then clears set-group-ID bits,
#: put back on folders), runs the setup (the pipe FD, as 9, closed for it: sh's
#: redirections take one digit only), then, if it succeeded, sends the folder back on FD
#: as a tar stream (pax: times to the nanosecond, so that a file the setup did not change
#: is found unchanged; sparse files sparse). A setup that fails sends nothing, and says
#: so where its folder is full.
_SETUP_SCRIPT = r"""
exec 9>"/proc/self/fd/$1" && room=$2 && shift 2 || exit 125
here=$PWD
find SOURCE -mindepth 1 -maxdepth 1 -exec cp -a -t . -- {} + &&
    (cd SOURCE && find . -mindepth 1 -type d -perm -2000 -exec chmod g+s "$here/{}" \;) &&
    rm -f ./.arena-setup.* || {
    echo "arena: the bot's folder could not be copied for its setup" >&2; exit 125; }
"$@" 9>&-
status=$?
if [ "$status" -eq 0 ]; then
    tar --format=posix --sparse --exclude='./.arena-setup.*' -cf - . >&9 || {
        echo "arena: the setup's folder could not be sent back" >&2; exit 125; }
elif [ "$(stat -f -c %f .)" -eq 0 ]; then
    echo "arena: the setup's folder is full: it may hold $room MiB in all" >&2
fi
exit "$status"
""".replace("SOURCE", _SETUP_SOURCE)
