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
import atexit
import contextlib
import ctypes
import ctypes.util
import errno
import functools
import ipaddress
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path, PurePosixPath

from arena.rules.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
MODES = ("auto", "bwrap", "none")
#: Organiser variables named here (comma-separated) are passed to every bot.
PASS_ENV = "ONO99_BOT_ENV"
SCRATCH = "/scratch"        # the sandboxed bot's HOME: fresh for every process
SOCKET_DIR = "/run/ono99"   # where the referee's socket appears inside the sandbox


@dataclass(frozen=True)
class Limits:
    """What one bot process may use. None: no limit of that kind."""

    memory_mb: int | None = 1024      # resident memory of the process and its children
    processes: int | None = 128       # processes and threads at once
    cpu_s: int | None = 3600          # CPU time of each process over its life
    open_files: int | None = 256      # file descriptors of each process
    file_size_mb: int | None = 64     # the largest file it may write
    output_mb: int | None = 16        # stdout and stderr together, kept in its log
    scratch_mb: int | None = 256      # its /scratch, /tmp and /dev/shm, each (sandboxed: in memory)

    NAMES = {"memory": "memory_mb", "processes": "processes", "cpu": "cpu_s",
             "files": "open_files", "file-size": "file_size_mb", "output": "output_mb",
             "scratch": "scratch_mb"}

    def with_args(self, pairs: Sequence[str]) -> Limits:
        """These limits changed by ``["memory=2048", "cpu=none", ...]`` (``--limit``)."""
        changes = {}
        for pair in pairs:
            name, sep, value = pair.partition("=")
            if not sep or name.strip() not in self.NAMES:
                raise ConfigError(f"--limit {pair!r} is not NAME=VALUE with NAME one of "
                                  f"{', '.join(self.NAMES)}")
            value = value.strip().lower()
            if value in ("none", "off"):   # "0" lifted it too, where 1 is the least
                changes[self.NAMES[name.strip()]] = None
                continue
            try:
                number = int(value)
            except ValueError:
                raise ConfigError(f"--limit {pair!r}: the value must be a whole number "
                                  "(or none)") from None
            if number < 1:
                raise ConfigError(f"--limit {pair!r}: the value must be at least 1 (none "
                                  "lifts the limit)")
            changes[self.NAMES[name.strip()]] = number
        return replace(self, **changes)

    def describe(self) -> str:
        units = {"memory_mb": " MiB", "cpu_s": " s CPU", "file_size_mb": " MiB files",
                 "output_mb": " MiB output", "processes": " processes", "open_files": " files open",
                 "scratch_mb": " MiB scratch"}
        parts = [f"{getattr(self, f.name)}{units[f.name]}" for f in fields(self)
                 if getattr(self, f.name) is not None]
        return ", ".join(parts) or "no limits"


#: What a setup step may use: a compiler needs more than a bot, for a while.
SETUP_LIMITS = Limits(memory_mb=4096, processes=512, cpu_s=None, open_files=1024,
                      file_size_mb=1024, output_mb=64, scratch_mb=2048)


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
            except BaseException:
                jail.signal(signal.SIGKILL)
                await proc.wait()
                jail.close()
                raise
        return jail, env


class _SetupNetwork:
    """A setup's network (``--setup-network``, where the sandbox runs as a user of its
    own): the internet, never this machine's own services nor its private network.

    It shared the machine's network before: a stranger's setup reached every service on
    its loopback and its addresses (a database, the referee's and organiser's ports, a Ray
    cluster's job API, which runs any code it is sent), the private network's machines,
    and a cloud's metadata service. Now the sandbox keeps a network namespace of its own,
    and slirp4netns (Debian's package: a user-mode TCP/IP stack, rootless Podman's) carries
    its connections out as this machine's, refusing its loopback (--disable-host-loopback);
    routes in the sandbox refuse (``prohibit``, "Permission denied") the machine's own
    addresses and the networks they are on, and the private, shared, link-local and
    reserved ranges (:data:`_PROHIBITED`). slirp4netns runs in the setup's cgroups.
    Names are looked up through slirp4netns's resolver (10.0.2.3), which asks the
    machine's; where the machine's resolver is on its loopback (systemd-resolved's
    127.0.0.53), through the servers it asks in turn, let through one by one.

    bwrap reports the sandbox's pid (--info-fd) and waits (--block-fd) until slirp4netns
    is up and the routes are set; slirp4netns ends when :meth:`close` closes its exit pipe,
    or when this process dies and the kernel closes it."""

    #: the ranges refused besides the machine's own networks (IPv4 only: slirp4netns
    #: gives the sandbox no IPv6)
    _PROHIBITED = ("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16",
                   "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15",
                   "224.0.0.0/3")
    _GATEWAY = "10.0.2.2"     # slirp4netns's
    _RESOLVER = "10.0.2.3"
    _READY_S = 10.0
    _FILES = 1024   # slirp4netns's descriptors: a socket each for the setup's connections

    def __init__(self) -> None:
        text, self._nameservers = _setup_resolv()
        self._info = os.pipe()
        self._block = os.pipe()
        self._exit = os.pipe()
        self._resolv = os.pipe()
        os.write(self._resolv[1], text.encode())     # (a few lines: within a pipe's buffer)
        os.close(self._resolv[1])
        self._slirp: subprocess.Popen | None = None
        #: the descriptors bwrap is passed
        self.passed = [self._info[1], self._block[0], self._resolv[0]]
        #: this process's own ends, until closed
        self._own = [self._info[0], self._block[1], self._exit[0], self._exit[1]]

    @staticmethod
    def missing() -> str | None:
        """Why a setup cannot have a network of its own here, or None."""
        if not runs_as_user():
            return ("it is made only where the arena runs as root (its bots as users of "
                    "their own)")
        for program, package in (("slirp4netns", "slirp4netns"), ("nsenter", "util-linux"),
                                 ("ip", "iproute2"), ("prlimit", "util-linux")):
            if shutil.which(program) is None:
                return f"{program} is missing (Debian: {package})"
        if not os.path.exists("/dev/net/tun"):
            return "/dev/net/tun is missing (slirp4netns's device: the tun module, or a " \
                   "container given no such device)"
        return None

    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self._info[1]), "--block-fd", str(self._block[0]),
                "--perms", "0644", "--ro-bind-data", str(self._resolv[0]), "/etc/resolv.conf"]

    def started(self) -> None:
        """bwrap has them now (or never will): this process's copies of its ends go, so
        that a bwrap that dies is seen at once."""
        _close_all(self.passed)

    async def connect(self, cgroups: _Cgroups | None) -> None:
        """Once bwrap has made the sandbox: slirp4netns on its network (in the setup's
        ``cgroups``), the routes set, then the sandbox let go on. OSError if any of it
        fails, or takes more than :data:`_READY_S`."""
        try:
            await self._connect(cgroups)
        except TimeoutError:
            raise OSError(f"the setup's network was not ready in {self._READY_S:g} s") from None

    async def _connect(self, cgroups: _Cgroups | None) -> None:
        async with asyncio.timeout(self._READY_S):
            data = await _read(self._info[0], b"}")
            try:
                pid = int(json.loads(data)["child-pid"])
            except (ValueError, KeyError, TypeError):
                raise OSError("the setup's sandbox ended before its network was made") from None
            ready = os.pipe()
            # slirp4netns runs as root, outside the sandbox, and holds a socket of this
            # machine's for each connection the setup makes: one that opened connections
            # in a loop had it at 6,219 descriptors and 83 MB in 10 s (the twenty-sixth
            # review). So it runs in the setup's cgroups (its memory, processes and share
            # of the cores), from its first instruction, with its descriptors capped.
            slirp = ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
                     "--enable-sandbox", "--enable-seccomp", "--ready-fd", str(ready[1]),
                     "--exit-fd", str(self._exit[0]), str(pid), "tap0"]
            joins = [] if cgroups is None else cgroups.join_commands()
            ends = list(ready)
            try:
                self._slirp = subprocess.Popen(
                    ["/bin/sh", "-c", "\n".join([*joins, 'exec "$@"']), "slirp", "prlimit",
                     f"--nofile={self._FILES}:{self._FILES}", "--", *slirp],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, pass_fds=(ready[1], self._exit[0]),
                    start_new_session=True)
                _close_all(ends, ready[1])     # its end (an EOF when slirp4netns ends)
                up = await _read(ready[0], b"1")
            finally:
                _close_all(ends)
            if up != b"1":
                self._slirp.wait()
                why = self._slirp.stderr.read().decode(errors="replace").strip().splitlines()
                raise OSError("slirp4netns could not give the setup a network: "
                              f"{why[-1] if why else 'it ended'}")
            await asyncio.to_thread(self._fence, pid)
        os.write(self._block[1], b"1")

    def _fence(self, pid: int) -> None:
        """The routes that keep the sandbox ``pid`` to the internet: the machine's own
        addresses refused, and the networks they are on (its gateway and neighbours: a
        machine on a public subnet has them outside the private ranges)."""
        own = _own_networks()
        routes = [f"route add prohibit {net}" for net in self._PROHIBITED]
        routes += [f"route add prohibit {net}" for net in sorted(own)]
        routes += [f"route add {address}/32 via {self._GATEWAY} dev tap0"
                   for address in self._nameservers
                   if not any(ipaddress.ip_address(address) in net for net in own)]
        done = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "-batch", "-"],
                              input="\n".join(routes) + "\n", capture_output=True, text=True,
                              timeout=self._READY_S)
        if done.returncode != 0:
            if not os.path.exists(f"/proc/{pid}"):
                raise OSError("the setup's sandbox ended before its network was made")
            raise OSError(f"the setup's network could not be fenced: {done.stderr.strip()}")

    def close(self) -> None:
        """The network goes (slirp4netns ends); again: nothing."""
        _close_all(self.passed)
        _close_all(self._own)
        if self._slirp is not None:
            slirp, self._slirp = self._slirp, None
            try:
                slirp.wait(timeout=2)     # it ends at its exit pipe's close, in a few ms
            except subprocess.TimeoutExpired:
                slirp.kill()
                slirp.wait()
            slirp.stderr.close()


def _close_all(fds: list[int], *only: int) -> None:
    """Close the descriptors of ``fds`` (``only`` these of them), each taken off the list:
    never twice, since a number closed may be another thread's open file the moment
    after."""
    for fd in [fd for fd in fds if not only or fd in only]:
        fds.remove(fd)
        with contextlib.suppress(OSError):
            os.close(fd)


async def _read(fd: int, until: bytes) -> bytes:
    """What the pipe ``fd`` brings until ``until`` is in it, or it ends, read in the event
    loop (a cancel leaves no thread reading it)."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    data = b""
    while until not in data:
        readable = loop.create_future()
        loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
        try:
            await readable
        finally:
            loop.remove_reader(fd)
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if not chunk:
            break
        data += chunk
    return data


def _setup_resolv(host: str = "/etc/resolv.conf",
                  upstream: str = "/run/systemd/resolve/resolv.conf") -> tuple[str, list[str]]:
    """A setup's resolv.conf, and the servers in it to let through its routes. slirp4netns's
    resolver (10.0.2.3) asks the machine's, unless that is on the machine's loopback
    (systemd-resolved's 127.0.0.53), which --disable-host-loopback refuses it: then the
    servers systemd-resolved asks (its ``upstream`` file), named in the sandbox directly."""
    def servers(path: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        found = []
        with contextlib.suppress(OSError):
            for line in Path(path).read_text(errors="replace").splitlines():
                words = line.split()
                if len(words) >= 2 and words[0] == "nameserver":
                    with contextlib.suppress(ValueError):
                        found.append(ipaddress.ip_address(words[1].split("%")[0]))
        return found

    mine = servers(host)
    if mine and all(s.is_loopback for s in mine):
        theirs = [str(s) for s in servers(upstream) if s.version == 4 and not s.is_loopback]
        if theirs:
            return "".join(f"nameserver {s}\n" for s in theirs[:3]), theirs[:3]
    return f"nameserver {_SetupNetwork._RESOLVER}\n", []


def _own_networks() -> set[ipaddress.IPv4Network]:
    """This machine's IPv4 addresses (its loopback's aside), each as a network of one, and
    the networks they are on, from ``ip``."""
    done = subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True,
                          timeout=10)
    if done.returncode != 0:
        raise OSError(f"ip could not list this machine's addresses: {done.stderr.strip()}")
    out = set()
    for link in json.loads(done.stdout):
        for info in link.get("addr_info", ()):
            if "local" not in info or info["local"].startswith("127."):
                continue
            interface = ipaddress.IPv4Interface(f"{info['local']}/{info.get('prefixlen', 32)}")
            out |= {ipaddress.IPv4Network(interface.ip), interface.network}
    return out


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


# ---------------------------------------------------------------- how a process starts


async def _spawn(prelude: list[str], command: Sequence[str], folder: Path,
                 env: dict[str, str], pass_fds: Sequence[int] = ()) -> asyncio.subprocess.Process:
    """``sh -c`` joins the cgroups and sets the rlimits, then execs ``command`` (whose
    :class:`_Shell` words it reads as shell text, the others quoted): no Python code runs
    between fork and exec in this (threaded) process. ``pass_fds`` stay open for
    ``command``. The process leads a process group of its own.

    The process never outlives this one, even one killed with kill -9 the moment after
    the fork: ``setpriv`` asks the kernel for SIGKILL at this process's death before
    anything else runs, then ``sh`` checks that its parent is still this process, which
    catches a death before that request.

    Nor does anything it started in its process group outlive it: first, ``sh`` starts a
    watchdog in the background, which kills the whole group at ``command``'s death,
    however it dies (see _WATCHDOG). Without it, a plain bot's children stayed after the
    bot wherever no cgroup kill reached them, and bwrap's --die-with-parent alone leaves
    two windows: its launcher asks for a signal at its parent's death only after it has
    cloned the sandbox's first process, and that process asks for one at the launcher's
    death only once the launcher has let it go on; a launcher killed in between (by this
    process's death, or by asyncio's kill of a start it cancels) left that process
    waiting for ever, or running the bot, under init (an arena that died 0-20 ms after
    starting bwrap left it 79 times in 300)."""
    guard = f'[ "$PPID" = {os.getpid()} ] || exit 1'
    try:
        death = setpriv_works()
        steps = [guard]
        if death:
            steps.append(f"{shlex.join(_WATCHDOG)} $$ </dev/null >/dev/null 2>&1 &")
        steps += [*prelude, "exec " + " ".join(
            word if isinstance(word, _Shell) else shlex.quote(word) for word in command)]
        return await asyncio.create_subprocess_exec(
            *(DIE_WITH_PARENT if death else ()), "/bin/sh", "-c", "\n".join(steps),
            cwd=folder, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, pass_fds=pass_fds)
    except OSError as exc:
        # the program only: its arguments say nothing a user needs
        message = f"cannot start {Path(command[0]).name}: {exc.strerror or exc}"
        raise (OSError(exc.errno, message) if exc.errno else OSError(message)) from None


DIE_WITH_PARENT = ("setpriv", "--pdeathsig", "KILL", "--")

#: The watchdog of a process group, given the pid of its parent (which then execs the
#: command it watches): a signal at that process's death (SIGWINCH, asked for before
#: anything else runs) kills the group; so does a parent found dead already. SIGWINCH is
#: ignored by default, so one that comes before the trap is set is lost harmlessly, the
#: parent's check then seeing the death (SIGTERM would end the watchdog there). It
#: ignores SIGTERM, which the arena sends the group to let a bot end by itself. It
#: sleeps in the background, as sh runs a trap only between commands. Outside the bot's
#: cgroup and rlimits (it starts before them), its output to /dev/null (the bot's pipe
#: ends with the bot).
_WATCHDOG = ("setpriv", "--pdeathsig", "WINCH", "--", "/bin/sh", "-c",
             'trap "" TERM; trap "kill -s KILL 0" WINCH; [ "$PPID" = "$1" ] || kill -s KILL 0; '
             "while :; do sleep 86400 & wait $!; done", "watchdog")


#: The kernel's out-of-memory killer takes a bot, or its setup, before anything else:
#: never the referee or the server, whatever the bots' limits add up to on the machine.
#: (Raising one's own score needs no privilege; lowering it below 0 does, so a bot cannot
#: make itself the one spared.)
OOM_SCORE_ADJ = 1000


@functools.cache
def setpriv_works() -> bool:
    """Whether util-linux's ``setpriv --pdeathsig`` (Essential in Debian) runs here,
    checked once; without it only ``sh``'s check of its parent and bwrap's own request
    remain, with their windows. A failure that may pass (no free file descriptor, a
    machine too busy to answer in 10 s) raises OSError and is not remembered."""
    try:
        done = subprocess.run([*DIE_WITH_PARENT, "/bin/true"], capture_output=True, timeout=10)
    except FileNotFoundError:
        return False
    except subprocess.TimeoutExpired:
        raise OSError(errno.ETIMEDOUT, "setpriv did not answer in 10 s") from None
    return done.returncode == 0


def _prelude(limits: Limits, cgroups: _Cgroups | None, own_user: bool = False) -> list[str]:
    """sh's commands before it execs: the cgroups joined, the rlimits set (``own_user``:
    the command then runs as a user of its own, :data:`USER_BASE`)."""
    out = [] if cgroups is None else cgroups.join_commands()
    # sh's own score, which the command it execs keeps (and its children); silent where
    # /proc cannot be written
    out.append(f"echo {OOM_SCORE_ADJ} 2>/dev/null >/proc/self/oom_score_adj")
    held = set() if cgroups is None else set(cgroups.dirs)
    # without cgroups: the data segment for memory (private writable memory since Linux
    # 4.7; not the address space, which runtimes such as V8 reserve by gigabytes), and,
    # for a sandbox's own user, the uid's process count: root ignores it, and an arena's
    # ordinary user has processes and threads of its own beyond the bot's (a desktop's
    # hundreds), which it counts too. (util-linux's prlimit: sh's ulimit names it -p in
    # dash, -u in bash, where -p is another limit.)
    if limits.memory_mb is not None and "memory" not in held:
        out.append(f"ulimit -d {limits.memory_mb * 1024}")
    if limits.processes is not None and "pids" not in held and own_user:
        out.append(f"prlimit --pid $$ --nproc={limits.processes}:{limits.processes}")
    # rlimits (ulimit sets soft and hard: a process cannot raise them again)
    if limits.cpu_s is not None:   # SIGXCPU at the limit, SIGKILL a second later if ignored
        out += [f"ulimit -S -t {limits.cpu_s}", f"ulimit -H -t {limits.cpu_s + 1}"]
    if limits.open_files is not None:
        out.append(f"ulimit -n {limits.open_files}")
    if limits.file_size_mb is not None:
        out.append(f"ulimit -f {limits.file_size_mb * 2048}")   # in 512-byte blocks
    return out


def _system_mounts(tree: _Tree, host_names: bool = True) -> None:
    """The system's files every sandbox has; the host's users and groups only where
    ``host_names`` (the bot runs as one of them, else :func:`_names`)."""
    tree.bind("--ro-bind", "/usr", "/usr")
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            tree.add("--symlink", os.readlink(path), str(path))
        elif path.is_dir():
            tree.bind("--ro-bind", str(path), str(path))
    for name in _ETC:
        if (host_names or name not in _NAMES) and (Path("/etc") / name).exists():
            tree.bind("--ro-bind", f"/etc/{name}", f"/etc/{name}")


def _names(taken: Sequence[int]) -> tuple[list[str], list[str]]:
    """bwrap's arguments and sh's commands that give a sandbox of a user of its own an
    /etc/passwd and /etc/group naming that user (``bot``, its HOME the scratch folder),
    root and nobody, and no one else: without them ``id -un``, Python's
    ``getpass.getuser()`` and Node's ``os.userInfo()`` failed for a uid no file named,
    and the host's files showed the bot the machine's users. sh writes each through a
    here-document on a descriptor (one digit: sh's redirections take no more) that no
    passed one (``taken``) has; bwrap copies it into the sandbox, read-only, and closes
    it."""
    free = [fd for fd in range(3, 10) if fd not in taken]
    if len(free) < 2:
        raise OSError(f"no two descriptors of 3-9 are free for the sandbox's passwd and group "
                      f"(passed: {sorted(taken)})")
    uid = _UID_IN_SH
    files = {"passwd": ["root:x:0:0:root:/root:/usr/sbin/nologin",
                        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
                        f"bot:x:{uid}:{uid}:ONO 99 bot:{SCRATCH}:/bin/sh"],
             "group": ["root:x:0:", "nogroup:x:65534:", f"bot:x:{uid}:"]}
    args: list[str] = []
    lines: list[str] = []
    for fd, (name, rows) in zip(free[:2], files.items(), strict=True):
        args += ["--perms", "0644", "--ro-bind-data", str(fd), f"/etc/{name}"]
        lines.append("\n".join([f"exec {fd}<<ONO99_{name.upper()}", *rows,
                                f"ONO99_{name.upper()}"]))
    return args, lines


#: What of /etc a program needs (the loader, certificates, names, time), not its secrets.
#: Of /etc/ssl, the certificates and OpenSSL's settings, never ``private``: a bot runs as
#: the host's uid 0, the owner of the machine's TLS keys there (mode 0600 or 0640), which it
#: read without any capability, and could show every spectator in its crash verdict.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl/certs",
        "ssl/openssl.cnf", "ca-certificates",
        "localtime", "timezone", "nsswitch.conf", "passwd", "group", "hosts", "resolv.conf",
        "host.conf", "gai.conf", "os-release", "mime.types")
#: Of _ETC, the host's users and groups: a sandbox of a user of its own has its own
_NAMES = ("passwd", "group")
#: What of /etc only a setup step with the network needs: npm's settings (its certificates
#: and proxy, and often the organiser's registry token, which no bot may read while it
#: plays). A setup with the network can send it anywhere: docs/serve.md says so.
_SETUP_ETC = ("npmrc",)


def _runtime_paths() -> list[str]:
    """Read-only paths a bot's runtime needs: the Python running the arena (the one
    ``{python}`` names, its venv and site-packages), the SDKs and protocol of this arena
    (clients/, proto/) and the arena package itself (public code). Never the arena's
    working folder (its database)."""
    paths = {sys.base_prefix, sys.prefix, str(Path(sys.executable).resolve().parent.parent)}
    for entry in sys.path:
        if entry and os.path.isdir(entry) and "site-packages" in entry:
            paths.add(entry)
    for sub in ("clients", "proto", "arena"):
        if (REPO / sub).is_dir():
            paths.add(str(REPO / sub))
    return sorted(p for p in paths if p and os.path.isdir(p) and not any(
        p != q and p.startswith(q.rstrip("/") + "/") for q in paths))


#: Run by root, bwrap keeps every capability unless told, CAP_SYS_ADMIN among them: a bot
#: could then remount its read-only mounts (its folder, the arena's code, /usr) writable,
#: as the host's root. So: no capabilities, and (bubblewrap 0.8, checked by the probe) no
#: user namespace the bot could make to gain some over its own mounts.
_CAP_DROP = ["--cap-drop", "ALL"]
_HARDENING = ["--unshare-user", "--disable-userns", *_CAP_DROP]

#: Run by root, each sandbox runs as a user of its own, never as the host's uid 0: uid and
#: gid USER_BASE + the pid of its bwrap, which no other sandbox running on the host has;
#: no other group, no capability. As uid 0, even with no capability, a bot owned most of
#: the host's files: it could read TLS keys of mode 0600, lease and lock the runtimes'
#: files, probe their page cache, write most of /proc/sys, make its setup's programs
#: set-user-ID root. Each of those was closed on its own (below and in arena.bots.setup),
#: but what the kernel grants a uid alone is too much to list. As a user of its own, a
#: bot reads only what any user of the machine may, writes nothing of the host's, and
#: shares no per-user count of the kernel's (pending signals, message queues, processes)
#: with another bot. 0x70000000 is above the ranges systemd gives containers and dynamic
#: users, in the range it leaves unused, and below 2^31.
#:
#: bwrap still runs as root, without a user namespace (where root's bwrap maps uid 0 to
#: 0), so that it reaches what it binds (a Python under /root, a server's data folder of
#: mode 0700), and the sandbox's first process, util-linux's setpriv, keeps CAP_SETUID and
#: CAP_SETGID only to become that user before it execs the bot: the kernel then clears its
#: capabilities, and bwrap's no_new_privs keeps any from coming back. Without
#: --disable-userns, the seccomp filter refuses new user namespaces (_NEW_USER_NAMESPACE).
USER_BASE = 0x70000000
#: A sandbox's uid as :func:`_spawn`'s sh computes it: USER_BASE + its pid ($$), bwrap's
#: once it execs it
_UID_IN_SH = f"$(({USER_BASE} + $$))"
_AS_USER_NAMESPACES = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                       "--unshare-cgroup-try"]
#: (CAP_SETPCAP: setpriv empties the bounding set too, which bwrap leaves whole here)
_AS_USER_CAPS = ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                 "--cap-add", "CAP_SETPCAP"]
#: where the seccomp filter reads clone's flags as its first argument (s390 has them second)
_AS_USER_MACHINES = ("x86_64", "aarch64")


class _Shell(str):
    """A word of a command that :func:`_spawn`'s ``sh`` reads as shell text, unquoted."""


def readable_by_all(mode: int, folder: bool) -> int:
    """``mode`` with read bits for every user, and execute bits where it is a folder or
    its owner may run it (never a write bit): what a sandbox's own user needs of a bot's
    files, which the arena writes (a setup's output, an upload)."""
    return mode | 0o444 | (0o111 if folder or mode & 0o100 else 0)


def _setpriv(uid: str) -> list[str]:
    """The words that make the rest of a command run as ``uid`` (and its gid), with no
    other group and no capability, even in the bounding set."""
    return [_setpriv_path() or "setpriv", f"--reuid={uid}", f"--regid={uid}",
            "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]


@functools.cache
def _setpriv_path() -> str | None:
    return shutil.which("setpriv")


@dataclass(frozen=True)
class _Bwrap:
    """What the probe found of this machine's bwrap, once."""

    problem: str | None      # why it cannot be used, or None
    flags: list[str]         # its namespaces and hardening (--share-net aside)
    as_user: bool            # whether sandboxes run as a user of their own (else: ours)
    uid_0: str | None = None  # run by root, why they run as uid 0 (not as_user)


_bwrap_checked: list[_Bwrap] = []


def _namespaces(share_net: bool = False) -> list[str]:
    """bwrap's flags for the namespaces and hardening this bwrap takes."""
    _probe_bwrap()
    flags = _bwrap_checked[0].flags
    if not share_net:
        return flags
    if "--unshare-all" in flags:
        return [*flags, "--share-net"]
    return [flag for flag in flags if flag != "--unshare-net"]


def runs_as_user() -> bool:
    """Whether sandboxes run as a user of their own (:data:`USER_BASE`): where the arena
    runs as root (another user's bots run as that user, who owns nothing of the host's)
    and the seccomp filter and setpriv are there."""
    _probe_bwrap()
    return _bwrap_checked[0].as_user


def _user() -> list[str]:
    """The words before the bot's command in the sandbox: setpriv's, where it runs as a
    user of its own."""
    if not runs_as_user():
        return []
    return [_Shell(word) if word.startswith(("--reuid=", "--regid=")) else word
            for word in _setpriv(_UID_IN_SH)]


def _probe_bwrap() -> str | None:
    """Run bwrap once with the namespaces, hardening and seccomp filter the sandbox
    needs, as a user of its own where the arena runs as root; its error, or None. A bwrap
    older than 0.8 (no --disable-userns) still drops every capability."""
    if not _bwrap_checked:
        tries = [(["--unshare-all", *_HARDENING], False), (["--unshare-all", *_CAP_DROP], False)]
        why_not = None
        if os.geteuid() == 0:
            why_not = _as_user_missing()
            if why_not is None:
                tries.insert(0, ([*_AS_USER_NAMESPACES, *_AS_USER_CAPS], True))
        for flags, as_user in tries:
            # (a uid no sandbox has: this process is no bwrap)
            user = _setpriv(str(USER_BASE + os.getpid())) if as_user else []
            tree = _Tree()
            _system_mounts(tree)
            try:
                with _seccomp() as (seccomp, fds):
                    proc = subprocess.run(["bwrap", *flags, *seccomp, "--die-with-parent",
                                           *tree.args, "--proc", "/proc", *_PROC_SYS,
                                           *_PROC_MASKS, "--dev", "/dev", "--size", str(2**20),
                                           "--perms", "1777", "--tmpfs", "/tmp", "--",
                                           *user, "/bin/true"], pass_fds=fds,
                                          capture_output=True, text=True, timeout=10)
            except (OSError, subprocess.SubprocessError) as exc:
                found = _Bwrap(str(exc), flags, as_user)
                break
            if proc.returncode == 0:
                found = _Bwrap(None, flags, as_user)
                break
            found = _Bwrap((proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1],
                           flags, as_user)
            if as_user:
                why_not = f"bwrap and setpriv cannot make it here ({found.problem})"
        if os.geteuid() == 0 and not found.problem and not found.as_user:
            found = replace(found, uid_0=why_not)
        _bwrap_checked.append(found)
    return _bwrap_checked[0].problem


def _as_user_missing() -> str | None:
    """Why this machine cannot run a sandbox as a user of its own, as far as can be told
    without trying it, or None."""
    if _setpriv_path() is None:
        return "util-linux's setpriv is missing"
    if _seccomp_program() is None:
        return "libseccomp (Debian: libseccomp2) is missing or failed"
    if os.uname().machine not in _AS_USER_MACHINES:
        return f"its seccomp filter is not written for {os.uname().machine}"
    return None


def uid_0_notice() -> str | None:
    """The line that says why bots run as the host's uid 0 here, where the arena runs as
    root and cannot run them as a user of its own; None where they do not."""
    _probe_bwrap()
    why = _bwrap_checked[0].uid_0
    return None if why is None else ("bots run as the host's uid 0 (with no capabilities), "
                                     f"not as a user of their own: {why}")


class _Tree:
    """bwrap's arguments that build the sandbox's file tree, in order. bwrap makes the
    folders above what it binds or mounts with mode 0700, which a sandbox of a user of its
    own could not pass (a bot folder bound at /srv/bots/x: /srv unreadable); each is made
    here first, 0755, unless it lies in something bound from the host (/usr/lib), where
    it is the host's."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self._made: set[str] = {"/"}
        self._bound: set[str] = set()

    def add(self, *args: str) -> None:
        """Arguments as they are: the folders they make are their own (tmpfs, --dir)."""
        for flag, dest in zip(args, args[1:]):
            if flag in ("--dir", "--tmpfs", "--proc", "--dev"):
                self._folders(dest)
                self._made.add(dest)
        self.args += args

    def bind(self, flag: str, source: str, dest: str) -> None:
        """``flag`` (--ro-bind, --bind, --dev-bind...) ``source`` at ``dest``."""
        self._folders(dest)
        self.args += [flag, source, dest]
        self._bound.add(dest)

    def _folders(self, dest: str) -> None:
        for above in reversed(PurePosixPath(dest).parents[:-1] if dest != "/" else ()):
            path = str(above)
            if path in self._bound:
                return
            if path not in self._made:
                self.args += ["--perms", "0755", "--dir", path]
                self._made.add(path)


#: /proc/sys read-only. Where a bot runs as the host's uid 0 (bwrap run by root maps 0 to 0,
#: where it cannot run as a user of its own), the kernel lets it write most sysctls with no
#: capability at all (it checks the file's mode against the uid): a bot could set
#: kernel.core_pattern to a program the host's root then runs at the next crash,
#: kernel.pid_max to a handful, or empty every page cache (vm.drop_caches). bwrap makes
#: /proc/irq and /proc/bus read-only, but leaves /proc/sys, whose folder refuses the
#: write-access test it makes; Docker binds it read-only too.
_PROC_SYS = ["--ro-bind-try", "/proc/sys", "/proc/sys"]

#: Files of /proc that show the whole host whatever the namespace (the keyrings' keys with
#: their descriptions, every CPU's timers with their processes' names; every physical
#: page's map count, flags and memory cgroup, which the bot's uid 0 may read: one sandbox
#: that mapped a page of a file every sandbox has 60 times was seen by another, exactly,
#: as that page's count going from 0 to 60, a live channel), covered with /dev/null (read
#: empty), as Docker does.
_PROC_MASKS = [arg for name in ("keys", "key-users", "timer_list", "kpagecount", "kpageflags",
                                "kpagecgroup")
               if os.path.exists(f"/proc/{name}")
               for arg in ("--dev-bind", "/dev/null", f"/proc/{name}")]

#: System calls that reach what the kernel shares beyond every namespace, refused in the
#: sandbox (EPERM unless said). No bot needs them; Docker's and Flatpak's default filters
#: refuse the keyrings' and io_uring's too.
#:
#: - The keyrings: a key one process adds to its user's keyring, another process of the
#:   same user reads, sandboxed or not: memory across phases (a fresh process recognising
#:   the deal it played before) or a channel between two bots at one table.
#: - The page cache's exact probes and eviction: every bot reads the same host files (its
#:   folder, the runtimes, /usr), whose cached pages outlive its process. A process that
#:   evicted a file's pages (fadvise DONTNEED, madvise COLD or PAGEOUT) and read back the
#:   ones standing for 1 bits left a message that the next phase's process read with
#:   mincore (the file's owner may: bots run as the root that owns most host files),
#:   cachestat, or a read that must not wait (preadv2's RWF_NOWAIT: refused with
#:   EOPNOTSUPP, as for a file that cannot do it, so honest callers read normally). A
#:   tournament's second phase named the opponent's dealt hand in 3 deals of 3. io_uring
#:   goes too: its requests run without passing this filter.
#: - Locks and watches of files: every sandbox reads the same host files (its runtime,
#:   /usr, a bot's folder), and a lock one takes on such a file (flock, a POSIX or an
#:   open file description's record lock) is met by every other, as is a watch of who
#:   opens or reads them (inotify, fanotify, dnotify): two bots at one table passed their
#:   hands through them live, a bit a lock or an open. (inotify's instances, useless without
#:   a watch, go too: they are counted per user, 128 at most, and two sandboxes of one uid,
#:   in two PID namespaces, passed a bit through that count.) Taking or dropping a lock does
#:   nothing and answers success (errno 0): a bot's one process, or an SQLite file it reads,
#:   works as before, where a refusal failed them; the processes of one bot no longer
#:   exclude one another by locks (no bot needs to). Watches are refused, and so are leases
#:   (fcntl F_SETLEASE): the bot's uid 0 owns the host's files, so it could lease any file
#:   nobody had open, and another sandbox's open of it then failed (with O_NONBLOCK: a bit)
#:   or waited while the holder was told (a bit back); the server's own reads of a hosted
#:   bot's folder would wait so, in its loop, up to 45 s (/proc/sys/fs/lease-break-time).
#: - Set-user-ID bits (a mode with 04000, given to a chmod or to a call that makes a
#:   file): a setup writes the bot's host folder as the host's uid 0, and a copy of a
#:   program it made set-user-ID there (``cp /usr/bin/python3 py; chmod 4755 py``) ran as
#:   root for any user of the machine who could reach the folder. The sandbox's own mounts
#:   are nosuid; the host's are not. openat2 takes its mode in a structure no filter can
#:   read: refused as absent (ENOSYS), so callers use openat. Set-group-ID bits are let
#:   be (a filter cannot tell a file from a folder, and a folder's is common: a bot folder
#:   in a group's shared folder has it, and a setup copying its folders with their modes,
#:   shutil.copytree, failed): the setup's files lose theirs once it ends
#:   (arena.bots.setup).
#: - fallocate (EOPNOTSUPP, as from a file system that cannot): it takes a file's blocks
#:   at once, nothing written: a setup took 8 GiB of the host's disk in 15 ms when its
#:   folder was measured from outside, twice a second (its file system of its own holds
#:   it to its room now, fallocate or not). The C library's posix_fallocate then writes a
#:   byte a block: no faster than any writer.
#:
#: - New user namespaces (_NEW_USER_NAMESPACE), where the sandbox runs as a user of its
#:   own and so has no --disable-userns: in one, a process holds every capability over
#:   what it then makes, the kernel's widest surface for a user with none. clone3 takes
#:   its flags in a structure no filter can read: refused as absent (ENOSYS), as Docker
#:   does, so the C library uses clone.
#:
#: Each entry: the call, and the conditions on its arguments (index, mask, value: the call
#: is refused where ``arg & mask == value`` for each), none for every use.
_RWF_NOWAIT = 0x8
_SET_LOCK = (6, 7, 37, 38)      # fcntl's F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
_F_SETLEASE = 1024
_F_NOTIFY = 1026
_CLONE_NEWUSER = 0x10000000
#: flags are the first argument of both on x86-64 and arm64
_NEW_USER_NAMESPACE = ((b"unshare", ((0, _CLONE_NEWUSER, _CLONE_NEWUSER),), errno.EPERM),
                       (b"clone", ((0, _CLONE_NEWUSER, _CLONE_NEWUSER),), errno.EPERM),
                       (b"clone3", (), errno.ENOSYS))
#: The calls that set a file's mode, and the index of their mode argument.
_MODE_ARGUMENT = ((b"chmod", 1), (b"fchmod", 1), (b"fchmodat", 2), (b"fchmodat2", 2),
                  (b"open", 2), (b"openat", 3), (b"creat", 1), (b"mknod", 1), (b"mknodat", 2))
_REFUSED_CALLS: tuple[tuple[bytes, tuple[tuple[int, int, int], ...], int], ...] = (
    (b"add_key", (), errno.EPERM),
    (b"request_key", (), errno.EPERM),
    (b"keyctl", (), errno.EPERM),
    (b"mincore", (), errno.EPERM),
    (b"cachestat", (), errno.EPERM),
    (b"fadvise64", ((3, 0xFFFFFFFF, 4),), errno.EPERM),       # POSIX_FADV_DONTNEED
    (b"madvise", ((2, 0xFFFFFFFF, 20),), errno.EPERM),        # MADV_COLD
    (b"madvise", ((2, 0xFFFFFFFF, 21),), errno.EPERM),        # MADV_PAGEOUT
    (b"process_madvise", (), errno.EPERM),
    (b"preadv2", ((5, _RWF_NOWAIT, _RWF_NOWAIT),), errno.EOPNOTSUPP),
    (b"io_uring_setup", (), errno.EPERM),
    (b"io_uring_enter", (), errno.EPERM),
    (b"io_uring_register", (), errno.EPERM),
    (b"flock", (), 0),
    *((b"fcntl", ((1, 0xFFFFFFFF, command),), 0) for command in _SET_LOCK),
    (b"fcntl", ((1, 0xFFFFFFFF, _F_NOTIFY),), errno.EPERM),
    (b"fcntl", ((1, 0xFFFFFFFF, _F_SETLEASE),), errno.EPERM),
    (b"inotify_init", (), errno.EPERM),
    (b"inotify_init1", (), errno.EPERM),
    (b"inotify_add_watch", (), errno.EPERM),
    (b"fanotify_init", (), errno.EPERM),
    (b"fanotify_mark", (), errno.EPERM),
    *((call, ((index, bit, bit),), errno.EPERM) for call, index in _MODE_ARGUMENT
      for bit in (0o4000,)),
    (b"openat2", (), errno.ENOSYS),
    (b"fallocate", (), errno.EOPNOTSUPP),
    *_NEW_USER_NAMESPACE,
)
#: Calls some architectures do not have (arm64 has only their ``*at`` forms): left out there.
_NOT_EVERYWHERE = {b"chmod", b"open", b"creat", b"mknod", b"inotify_init"}
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO = 0x00050000
_SCMP_CMP_MASKED_EQ = 7


class _ArgCompare(ctypes.Structure):
    """libseccomp's ``struct scmp_arg_cmp``: argument ``arg`` & ``datum_a`` == ``datum_b``."""

    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


#: libseccomp's program, once: [bytes], or [None] where libseccomp is missing
_seccomp_made: list[bytes | None] = []


@contextlib.contextmanager
def _seccomp():
    """bwrap's flags for the filter (``--seccomp FD``: bwrap reads it before it runs
    anything) and the descriptor to pass it, in a file closed after; none without
    libseccomp."""
    program = _seccomp_program()
    if program is None:
        yield [], ()
        return
    fd = os.memfd_create("ono99-seccomp")
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield ["--seccomp", str(fd)], (fd,)
    finally:
        os.close(fd)


def _seccomp_program() -> bytes | None:
    """The seccomp filter bwrap loads for every sandboxed process (``--seccomp``): a
    classic BPF program made by libseccomp (Debian's ``libseccomp2``, through ctypes)
    that refuses _REFUSED_CALLS and allows the rest; calls of another ABI (32-bit, x32)
    kill the process, libseccomp's default. None where libseccomp is not installed (or
    fails)."""
    if not _seccomp_made:
        try:
            _seccomp_made.append(_make_seccomp_program())
        except OSError:
            _seccomp_made.append(None)
    return _seccomp_made[0]


def _make_seccomp_program() -> bytes | None:
    name = ctypes.util.find_library("seccomp")
    if name is None:
        return None
    lib = ctypes.CDLL(name)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    # the array form of seccomp_rule_add: no C varargs through ctypes
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.c_void_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        return None
    fd = os.memfd_create("ono99-seccomp-build")
    try:
        for call, conditions, code in _REFUSED_CALLS:
            number = lib.seccomp_syscall_resolve_name(call)
            if number < 0 and call in _NOT_EVERYWHERE:
                continue
            compare = (_ArgCompare * max(1, len(conditions)))(
                *(_ArgCompare(index, _SCMP_CMP_MASKED_EQ, mask, value)
                  for index, mask, value in conditions))
            if number < 0 or lib.seccomp_rule_add_array(
                    ctx, _SCMP_ACT_ERRNO | code, number, len(conditions), compare) != 0:
                raise OSError(f"libseccomp cannot refuse {call.decode()}")
        if lib.seccomp_export_bpf(ctx, fd) != 0:
            raise OSError("libseccomp cannot export its filter")
        return os.pread(fd, os.fstat(fd).st_size, 0)
    finally:
        os.close(fd)
        lib.seccomp_release(ctx)


# ---------------------------------------------------------------- cgroups


#: ono99-PID (a base of bots' groups), or ono99-PID-pN (a bot's cpu group)
_GROUP_NAME = re.compile(r"ono99-([0-9]{1,10})(?:-p[0-9]+)?")


def _sweep(parent: Path) -> None:
    """Remove the cgroups of arena processes that are gone (killed, so their exit never
    came): ``ono99-PID`` folders whose process no longer exists, with the bots' folders
    in them, where they are empty (rmdir leaves a busy cgroup alone). Those of this
    process's PID are gone too: this process has made none yet, and an arena killed
    before it may have had its PID (in a container, the arena is often PID 1)."""
    for base in parent.glob("ono99-*"):
        named = _GROUP_NAME.fullmatch(base.name)
        if named is None:   # not a name of ours
            continue
        pid = int(named[1])
        try:
            if pid != os.getpid():
                os.kill(pid, 0)   # (its process still runs: kept)
                continue
        except ProcessLookupError:
            pass
        except (OverflowError, PermissionError):   # not ours to judge
            continue
        _sweep_one(base)


def _sweep_one(base: Path) -> None:
    try:
        for d in base.iterdir():
            if d.is_dir():
                with contextlib.suppress(OSError):
                    d.rmdir()
        base.rmdir()
    except OSError:
        pass


class _Cgroups:
    """A process's own memory, pids and cpu cgroups (v1, as on this kind of host), where
    the arena may create them; None elsewhere (rlimits and the sandbox still apply).

    Memory and pids groups are made in a base of this arena process's own
    (``ono99-PID/pN``). A cpu group is made beside the arena's own threads instead
    (``ono99-PID-pN``): the scheduler shares the cores among the entities of a level by
    weight, and a group at the arena's level weighs what one of its threads does. In a
    common base, all bots together would weigh one thread against the referee's."""

    _ids = itertools.count(1)
    _base: dict[str, Path] | None = None

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs

    @classmethod
    def available(cls) -> dict[str, Path]:
        """The writable v1 controllers (memory, pids, cpu), each where this process's bots'
        groups go."""
        if cls._base is None:
            bases: dict[str, Path] = {}
            if os.geteuid() == 0:
                try:
                    lines = Path("/proc/self/cgroup").read_text().splitlines()
                except OSError:
                    lines = []
                for line in lines:
                    _, controllers, path = line.split(":", 2)
                    for c in controllers.split(","):
                        root = Path("/sys/fs/cgroup") / c
                        parent = root / path.lstrip("/")
                        if c == "cpu" and parent.is_dir() and os.access(parent, os.W_OK):
                            _sweep(parent)
                            bases[c] = parent   # bots' groups beside the arena's threads
                        elif c in ("memory", "pids") and parent.is_dir():
                            _sweep(parent)
                            base = parent / f"ono99-{os.getpid()}"
                            try:
                                base.mkdir(exist_ok=True)
                            except OSError:
                                continue
                            bases[c] = base
            cls._base = bases   # whole (a sweep that failed halfway left bots a part of it)
            if bases:
                atexit.register(cls._remove_bases)
        return cls._base

    @classmethod
    def _remove_bases(cls) -> None:
        """At exit: this process's own cgroups (each bot's is gone with its process)."""
        for c, base in (cls._base or {}).items():
            if c == "cpu":   # the arena's own level: only its bots' groups left there
                for group in base.glob(f"ono99-{os.getpid()}-p*"):
                    with contextlib.suppress(OSError):
                        group.rmdir()
            else:
                _sweep_one(base)

    @classmethod
    def make(cls, limits: Limits) -> _Cgroups | None:
        bases = cls.available()
        # a cpu group for every bot: its share is its weight, the default (one thread's)
        wanted = {"memory": limits.memory_mb, "pids": limits.processes, "cpu": 0}
        dirs = {}
        n = next(cls._ids)
        for c, value in wanted.items():
            if value is None or c not in bases:
                continue
            try:
                for _ in range(100):   # a busy leftover of a dead arena of this PID: the next
                    d = bases[c] / (f"ono99-{os.getpid()}-p{n}" if c == "cpu" else f"p{n}")
                    try:
                        d.mkdir()
                        break
                    except FileExistsError:
                        n = next(cls._ids)
                else:
                    continue
                if c == "memory":
                    (d / "memory.limit_in_bytes").write_text(str(value * 2**20))
                    try:   # no swap beyond the limit, where swap accounting exists
                        (d / "memory.memsw.limit_in_bytes").write_text(str(value * 2**20))
                    except OSError:
                        pass
                elif c == "pids":
                    (d / "pids.max").write_text(str(value))
            except OSError:
                continue
            dirs[c] = d
        return cls(dirs) if dirs else None

    def join_commands(self) -> list[str]:
        return [f"echo $$ > {shlex.quote(str(d / 'cgroup.procs'))}" for d in self.dirs.values()]

    def pids(self) -> list[int]:
        out = set()
        for d in self.dirs.values():
            try:
                out.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return sorted(out)

    def kill_all(self) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def oom_killed(self) -> bool:
        d = self.dirs.get("memory")
        if d is None:
            return False
        try:
            for line in (d / "memory.oom_control").read_text().splitlines():
                if line.startswith("oom_kill ") and int(line.split()[1]) > 0:
                    return True
            return False
        except (OSError, ValueError):
            return False

    def peak_memory_mb(self) -> float | None:
        d = self.dirs.get("memory")
        try:
            return None if d is None else int((d / "memory.max_usage_in_bytes").read_text()) / 2**20
        except (OSError, ValueError):
            return None

    def remove(self) -> None:
        for d in self.dirs.values():
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except OSError:   # busy while its last processes exit
                    self.kill_all()
                    time.sleep(0.01)
