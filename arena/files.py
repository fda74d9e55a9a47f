"""The process's open-files limit (``ulimit -n``): raised to what the system allows, and
shared out among the servers a process runs.

Every connection a server holds is a file descriptor, and so is every bot process's
pipes and log, the database and the sockets to bots. A Linux process starts with a soft
limit of 1,024 (systemd's default) under a hard one of half a million or more; Go's
runtime raises the soft limit to the hard one at start, and so does the arena
(:func:`raise_limit`). Each server that accepts connections from anyone (the referee, the
spectator service, the web viewer) then holds at most a quarter of the limit
(:func:`connection_budget`), so that strangers who open connections by the thousand fill
that server, at worst, and never take the descriptors the referee needs for its bots.
"""

from __future__ import annotations

import resource

#: the kernel's own ceiling on a process's open files by default (fs.nr_open)
NR_OPEN = 1 << 20


def raise_limit() -> None:
    """Raise the soft limit on open files to the hard one (at most NR_OPEN); where the
    system refuses, leave it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = NR_OPEN if hard == resource.RLIM_INFINITY else min(hard, NR_OPEN)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (OSError, ValueError):
            pass


def connection_budget(cap: int) -> int:
    """``cap`` connections, or a quarter of the open-files limit if that is fewer."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return cap
    return min(cap, max(16, soft // 4))
