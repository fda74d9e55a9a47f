"""A bot process's own cgroups (memory, pids, cpu), and the sweep of those that dead
arenas left."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import shlex
import signal
import time
from pathlib import Path

from arena.bots.sandbox.limits import Limits


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
