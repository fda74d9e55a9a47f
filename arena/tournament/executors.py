"""Executors by name: where a tournament's matches run.

Every entry has one constructor shape, ``make(setup) -> Executor``, and the same promises
(:class:`~arena.tournament.executor.Executor`): each planned match is reported once, a
crashing bot is retired by the one rule of :class:`~arena.tournament.seats.Retirements`,
listeners follow matches wherever they run. The tournament, its schedule and its ratings
never know which entry plays; ``arena tournament --executor NAME`` picks one.

- ``local``: one referee in this process (:class:`~arena.tournament.executor.LocalExecutor`).
- ``multiprocess``: a referee process per core (:mod:`arena.tournament.multiprocess`).
- ``ray``: a referee actor per core of a Ray cluster (:mod:`arena.tournament.ray_executor`).
- ``auto`` (the default): ``multiprocess`` when there are cores and lanes to spread and no
  in-process listener needs the matches here and every bot can be launched elsewhere
  and ``--listen`` is not one address (a socket, a port other than 0), else ``local``.

A bot with no folder here (a server's remote bot: it connects to that server's referee)
plays on the local executor only: the others refuse it, and ``auto`` keeps it here.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.bots.manifest import BotManifest
from arena.bots.sandbox import SandboxConfig
from arena.referee.listeners import ListenerBus, MatchListener
from arena.referee.server import RefereeServer
from arena.rules.errors import ConfigError
from arena.tournament.executor import (
    Executor,
    LocalExecutor,
    SeatsFactory,
    process_seats,
)
from arena.tournament.seats import RETIRE_AFTER, OnRetire, Retirements


@dataclass(frozen=True)
class ExecutorSetup:
    """Everything any executor needs to play a tournament's bots, launched from their
    folders: one shape for every entry of the registry."""

    #: what launches each bot; None for a bot with no folder here, which only
    #: ``seats_here`` seats (a server's remote bot, connected to its referee)
    manifests: Sequence[BotManifest | None]
    labels: Sequence[str]              # the name each bot plays under, in schedule order
    concurrency: int                   # matches in flight, in all
    retire_after: int = RETIRE_AFTER
    on_retire: OnRetire | None = None  # told (label, reason) when a bot is retired
    listeners: Sequence[MatchListener] = ()   # in this process: they need the local executor
    bus: ListenerBus | None = None     # listeners of matches in whichever process plays them
    listen: str = "unix"               # where each referee listens for its bots
    log_dir: Path | None = None        # the bots' stderr logs
    connect_timeout: float = 10.0      # for a launched bot to connect
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    address: str | None = None         # a cluster's address (ray); None: a local one
    workers: int | None = None         # referee processes; None: one per core
    #: bots retired before the run starts (by index): a server's bots removed since their
    #: tournament began, which it resumes
    retired: Mapping[int, str] = field(default_factory=dict)
    #: each bot's seat provider on a referee of this process, where they come from
    #: elsewhere than ``manifests`` (a server's bots); None: processes launched from them
    seats_here: SeatsFactory | None = None
    #: the referee of this process to play on (a server's, where its remote bots
    #: connect); None: the local executor starts one of its own
    referee: RefereeServer | None = None
    grace: float = 10.0                # for a remote bot that dropped mid-match to come back

    def retirements(self) -> Retirements:
        """A fresh ledger of the one retirement rule, keyed by bot index."""
        ledger = Retirements(self.retire_after, self.on_retire, lambda bot: self.labels[bot])
        ledger.retired.update(self.retired)
        return ledger

    def seats(self) -> SeatsFactory:
        """Each bot's seat provider, on the referee of the process that plays its matches."""
        if self.seats_here is not None:
            return self.seats_here
        return process_seats(self.manifests, self.labels, self.sandbox, self.log_dir,
                             self.connect_timeout)

    def unlaunchable(self) -> list[str]:
        """The bots that have no folder here, to be launched in another process (a bot
        retired before the run starts is never launched: its seats forfeit wherever)."""
        return [label for i, (m, label) in enumerate(zip(self.manifests, self.labels))
                if m is None and i not in self.retired]


Make = Callable[[ExecutorSetup], Executor]
#: Holds what an executor's runs share (a cluster joined) while its context is open.
Join = Callable[[str | None], contextlib.AbstractContextManager[None]]


#: Refuses a cluster address (None: none given) its executor cannot use: a
#: :class:`ConfigError` for one that is no address, a :class:`ClusterError` for one
#: nothing (or something else) answers at.
CheckAddress = Callable[[str | None], None]


@dataclass(frozen=True)
class Entry:
    """An executor of the registry: how to make it, its help line, and, for one that runs
    on a cluster, how to hold the cluster and check its address."""

    name: str
    make: Make
    help: str
    join: Join | None = None
    check_address: CheckAddress | None = None
    #: its matches play in other processes, each with a referee of its own
    elsewhere: bool = False


EXECUTORS: dict[str, Entry] = {}


def register(name: str, help: str, join: Join | None = None,
             check_address: CheckAddress | None = None,
             elsewhere: bool = False) -> Callable[[Make], Make]:
    """Add an executor to the registry under ``name``; ``join(address)``, if any, holds
    what its runs share (see :func:`joined`); ``check_address``, if any, is the executor
    of a cluster, and checks its address (see :func:`check_address`); ``elsewhere``: its
    matches play in other processes (see :func:`check_listen`)."""
    def add(make: Make) -> Make:
        EXECUTORS[name] = Entry(name, make, help, join, check_address, elsewhere)
        return make
    return add


def check_listen(name: str, listen: str) -> None:
    """Refuse, before anything is stored, a ``--listen`` of one address for an executor
    whose referees run in several processes (see :func:`_one_place`)."""
    entry = EXECUTORS.get(name)
    if entry is not None and entry.elsewhere and _one_place(listen):
        raise ConfigError(_ONE_PLACE.format(listen=listen))


def joined(name: str, address: str | None) -> contextlib.AbstractContextManager[None]:
    """Hold the cluster of executor ``name`` (joined at ``address``, or a local one
    started) while the context is open: a server or a tournament opens it first, while its
    process has a single thread, and its runs then share it. Starting a cluster forks its
    processes, and a fork taken while gRPC's threads run can leave a child stuck before it
    execs: Ray's raylet never started inside a busy server, and Ray gave up after its 30 s.
    Executors with nothing to share hold nothing."""
    entry = EXECUTORS.get(name)
    return contextlib.nullcontext() if entry is None or entry.join is None else entry.join(address)


class ClusterError(RuntimeError):
    """The cluster an executor needs cannot be reached at its address: nothing answers
    there, or something else does. Not the request's fault: it may work later (the
    command line exits 1; 2 for the :class:`ConfigError` of an address that is none)."""


def check_address(name: str, address: str | None) -> None:
    """Refuse, before anything is stored, a cluster address the executor ``name`` cannot
    use: one given to an executor that has no cluster (:class:`ConfigError`), or one
    nothing answers at (:class:`ClusterError`; Ray itself retries an unreachable address
    for minutes)."""
    entry = EXECUTORS.get(name)
    check = entry.check_address if entry is not None else None
    if check is None:
        if address is not None:
            raise ConfigError("--ray-address is the cluster of --executor ray: add it, or drop "
                              "--ray-address")
        return
    check(address)


def _ray_module():
    """:mod:`arena.tournament.ray_executor`; :class:`ConfigError` where Ray is not
    installed (a traceback ending in "No module named 'ray'" before)."""
    try:
        from arena.tournament import ray_executor
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] != "ray":
            raise
        if exc.name != "ray":     # Ray is there, a part of it is not (a broken install)
            raise ConfigError(f"--executor ray: Ray cannot be loaded here: {exc}") from None
        raise ConfigError("--executor ray needs Ray, which is not installed in this Python: "
                          "pip install 'ray>=2.9' (the same version on every node)") from None
    return ray_executor


def make_executor(name: str, setup: ExecutorSetup) -> Executor:
    """The executor called ``name`` for ``setup``; :class:`ConfigError` if unknown."""
    entry = EXECUTORS.get(name)
    if entry is None:
        raise ConfigError(f"no executor called {name!r} (known: {', '.join(EXECUTORS)})")
    return entry.make(setup)


@register("local", "one referee in this process")
def _local(setup: ExecutorSetup) -> Executor:
    listeners = list(setup.listeners)
    if setup.bus is not None:
        listeners.append(setup.bus.listener())
    return LocalExecutor(setup.seats(), setup.concurrency, setup.listen, listeners,
                         referee=setup.referee, grace=setup.grace,
                         retirements=setup.retirements())


def _elsewhere(setup: ExecutorSetup) -> ExecutorSetup:
    """The setup of an executor whose matches play in other processes: in-process
    listeners cannot follow them there (a listener bus can), and a bot with no folder here
    cannot be launched there."""
    if setup.listeners:
        raise ConfigError("in-process listeners follow matches of this process only: use the "
                          "local executor (or a listener bus)")
    if unlaunchable := setup.unlaunchable():
        raise ConfigError(f"{', '.join(unlaunchable)} cannot be launched in another process: "
                          "no folder here (a remote bot connects to this process's referee); "
                          "use the local executor")
    if _one_place(setup.listen):
        raise ConfigError(_ONE_PLACE.format(listen=setup.listen))
    return setup


_ONE_PLACE = ("--listen {listen} is one address, and each referee process needs its own: give "
              "'unix', 'tcp' or HOST:0 (a free port each), or use the local executor")


def _one_place(listen: str) -> bool:
    """Whether ``listen`` names a single place (a unix socket, a port other than 0): the
    referees of several processes on it failed to bind (a port), or each took the socket
    over from the one before, and bots reached another process's referee, which refused
    their tokens (*crashed*, then *retired*: faults of the arena's charged to them)."""
    if listen in ("unix", "tcp"):
        return False
    if listen.startswith(("unix:", "unix-abstract:")):
        return True
    port = listen.rpartition(":")[2]
    return not (port.isdigit() and int(port) == 0)


@register("multiprocess", "a referee process per core of this machine", elsewhere=True)
def _multiprocess(setup: ExecutorSetup) -> Executor:
    from arena.tournament.multiprocess import MultiProcessExecutor
    return MultiProcessExecutor(_elsewhere(setup))


@contextlib.contextmanager
def _join_ray(address: str | None) -> Iterator[None]:
    ray_executor = _ray_module()
    ray_executor.connect(address)
    try:
        yield
    finally:
        ray_executor.disconnect()


def _check_ray_address(address: str | None) -> None:
    _ray_module().check_address(address)   # ConfigError too where Ray is not installed


@register("ray", "a referee actor per core of a Ray cluster (--ray-address; else a local one)",
          join=_join_ray, check_address=_check_ray_address, elsewhere=True)
def _ray(setup: ExecutorSetup) -> Executor:
    return _ray_module().RayExecutor(_elsewhere(setup))   # ray is only needed here


@register("auto", "multiprocess when there are cores and matches to spread, else local")
def _auto(setup: ExecutorSetup) -> Executor:
    # one referee process does not use two cores well (see arena.tournament.multiprocess)
    if setup.concurrency > 1 and (os.cpu_count() or 1) > 1 and not setup.listeners \
            and not setup.unlaunchable() and not _one_place(setup.listen):
        return _multiprocess(setup)
    return _local(setup)
