"""How a process starts, sandboxed or not: ``sh`` joins its cgroups, sets its rlimits
and execs it, watched so that nothing of it outlives the arena."""

from __future__ import annotations

import asyncio
import errno
import functools
import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from arena.bots.sandbox.cgroups import _Cgroups
from arena.bots.sandbox.limits import Limits


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
#: parent's check after the trap then seeing the death (SIGTERM would end the watchdog
#: there). That check reads the parent from /proc now: sh's $PPID is the one it started
#: with, so a death between its start and the trap went unseen, and the watchdog and
#: the bot's children outlived the arena (1 run in many of a CI suite; every run with a
#: pause put before the trap). It ignores SIGTERM, which the arena sends the group to
#: let a bot end by itself. It sleeps in the background, as sh runs a trap only between
#: commands. Outside the bot's cgroup and rlimits (it starts before them), its output to
#: /dev/null (the bot's pipe ends with the bot).
_WATCHDOG = ("setpriv", "--pdeathsig", "WINCH", "--", "/bin/sh", "-c",
             'trap "" TERM; trap "kill -s KILL 0" WINCH; p=$1; '
             'read -r s </proc/$$/stat 2>/dev/null || s="$$ (sh) S $PPID"; set -- $s; '
             '[ "$4" = "$p" ] || kill -s KILL 0; '
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


class _Shell(str):
    """A word of a command that :func:`_spawn`'s ``sh`` reads as shell text, unquoted."""
