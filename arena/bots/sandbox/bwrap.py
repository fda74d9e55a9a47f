"""The bubblewrap command line: the sandbox's tree of mounts, its namespaces and
hardening, the user it runs as, and the probe of what this machine's bwrap can do."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from arena.bots.sandbox.seccomp import _seccomp, _seccomp_program
from arena.bots.sandbox.spawn import _Shell

REPO = Path(__file__).resolve().parents[3]
SCRATCH = "/scratch"        # the sandboxed bot's HOME: fresh for every process
SOCKET_DIR = "/run/ono99"   # where the referee's socket appears inside the sandbox


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
#: set-user-ID root. Each of those was closed on its own (the tree of mounts below, the
#: seccomp filter, arena.bots.setup), but what the kernel grants a uid alone is too much
#: to list. As a user of its own, a bot reads only what any user of the machine may,
#: writes nothing of the host's, and shares no per-user count of the kernel's (pending
#: signals, message queues, processes) with another bot. 0x70000000 is above the ranges
#: systemd gives containers and dynamic users, in the range it leaves unused, and below
#: 2^31.
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
