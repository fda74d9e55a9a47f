"""The processes a benchmark measures: this one, its referee workers, its bots (from
/proc: memory and open files of each, not only of the parent)."""

from __future__ import annotations

import os
import resource


def descendants(root: int | None = None) -> list[tuple[int, bytes]]:
    """Every descendant of process ``root`` (default: this one): (pid, command line)."""
    parents: dict[int, list[int]] = {}
    cmdlines: dict[int, bytes] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdlines[int(entry)] = f.read()
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [os.getpid() if root is None else root]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append((child, cmdlines[child]))
            todo.append(child)
    return out


def rss_mb(pid: int | str = "self") -> float:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return 0.0


def open_fds(pid: int | str = "self") -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def workers(root: int | None = None) -> list[int]:
    """The referee workers of process ``root`` (default: this one): multiprocessing's
    spawned children, not its resource tracker."""
    return [pid for pid, cmd in descendants(root) if is_worker(cmd)]


def is_worker(cmdline: bytes) -> bool:
    """Whether a command line is a multiprocessing worker (spawned), not its resource
    tracker."""
    return b"spawn_main" in cmdline


def cpu_seconds(pid: int | str = "self") -> float:
    """CPU time (user + system) of process ``pid`` and of its children it has waited for,
    in seconds; 0 if it is gone. Sampled twice, the difference over the descendants of a
    process counts the CPU of those that ended in between too (in their parent's)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return sum(int(t) for t in fields[11:15]) / os.sysconf("SC_CLK_TCK")
