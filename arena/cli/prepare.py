"""Getting bots ready to launch, for every command that launches them: how they are run
(the sandbox and its limits), where the referee and the spectators listen, and their
setup."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from arena.bots.manifest import BotManifest, missing_program
from arena.bots.sandbox import MODES, Limits, ProcessFactory, SandboxConfig
from arena.bots.setup import DEFAULT_TIMEOUT_S, SetupError, ensure_setup
from arena.rpc import absolute, listen_problem
from arena.rules.errors import ConfigError


def check_addresses(args: argparse.Namespace) -> None:
    """--listen, --watch and --web, refused with the reason before anything runs (a bot's
    setup, a database, an output folder: a tournament whose web port was taken was
    stored, with no match, as the latest)."""
    from arena.web import DEFAULT_HOST

    listen = getattr(args, "listen", "unix")
    if listen not in ("unix", "tcp"):
        args.listen = listen = absolute(listen)
        if (why := listen_problem(listen)) is not None:
            raise ConfigError(f"the referee cannot listen on {listen!r}: {why}")
    watch = getattr(args, "watch", None)
    if watch is not None:
        args.watch = watch = absolute(watch)
        if (why := listen_problem(watch)) is not None:
            raise ConfigError(f"spectators cannot be served on {watch!r}: {why}")
    web = getattr(args, "web", None)
    if web and (why := listen_problem(f"{DEFAULT_HOST}:{web}")) is not None:
        raise ConfigError(f"the web viewer cannot listen on {DEFAULT_HOST}:{web}: {why}")


def add_sandbox_options(p: argparse.ArgumentParser) -> None:
    """--sandbox and --limit: how the bots' processes run, and their limits."""
    defaults = Limits()
    p.add_argument("--sandbox", choices=MODES, default="auto",
                   help="how bots run: 'bwrap' in a bubblewrap sandbox (namespaces, no network, "
                        "only their own folder, read-only, and a scratch HOME), 'none' as plain "
                        "processes, 'auto' (default) the sandbox wherever bubblewrap works, with "
                        "a one-line notice where it does not")
    p.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="a limit on each bot process (repeatable; 'none' lifts it): memory "
                        f"(MiB, default {defaults.memory_mb}), processes ({defaults.processes}, "
                        f"threads count), cpu (seconds, {defaults.cpu_s}), files (open, "
                        f"{defaults.open_files}), file-size (MiB, {defaults.file_size_mb}), output "
                        f"(MiB kept in its log, {defaults.output_mb}), scratch (MiB in its "
                        f"/scratch, its /tmp and its /dev/shm, each, {defaults.scratch_mb}); a bot past one "
                        "is stopped, or its writes fail")
    p.add_argument("--setup-network", action="store_true",
                   help="give bots' setup steps a network (to download dependencies): "
                        "the internet, never this machine's own services or private network, "
                        "where the arena runs as root and has slirp4netns (else this machine's "
                        "network, with a notice). Off by default: a setup with it also reads "
                        "/etc/npmrc (npm's settings, often a registry token)")


def sandbox_config(args: argparse.Namespace) -> SandboxConfig:
    """The sandbox the options ask for."""
    return SandboxConfig(args.sandbox, Limits().with_args(args.limit), args.setup_network)


def bot_factory(args: argparse.Namespace) -> ProcessFactory:
    """The process factory of the options; its notice (no sandbox here) goes to stderr once."""
    factory = sandbox_config(args).factory()
    if factory.notice:
        print(f"notice: {factory.notice}", file=sys.stderr, flush=True)
    return factory


def add_setup_options(p: argparse.ArgumentParser) -> None:
    """--no-setup and --setup-timeout: whether and how long the bots' setups run."""
    p.add_argument("--no-setup", dest="setup", action="store_false",
                   help="do not run the bots' setup (bot.toml), even for a new version")
    p.add_argument("--setup-timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"time a bot's setup may take (default: {DEFAULT_TIMEOUT_S:g})")


def set_up(manifests: Sequence[BotManifest], args: argparse.Namespace,
           factory: ProcessFactory | None = None) -> None:
    """Run each bot's setup once per version (skipped when up to date), before anything is
    launched or stored; with ``--no-setup``, only check that each bot can start. A failure
    is a :class:`ConfigError` naming the bot and its setup log."""
    if not 0 < args.setup_timeout < math.inf:
        raise ConfigError("--setup-timeout must be positive (finite seconds)")
    seen = set()
    for m in manifests:
        if m.folder in seen:
            continue
        seen.add(m.folder)
        if not args.setup:
            problem = missing_program(m)
            if problem:
                raise ConfigError(f"bot {m.name} ({m.folder}): {problem}; its setup has not run "
                                  "(drop --no-setup)")
            continue
        result = ensure_setup(m, args.setup_timeout, on_start=announce_setup, factory=factory)
        if result.ran:
            print(f"bot {m.name}: set up in {result.seconds:.1f} s", file=sys.stderr, flush=True)


def announce_setup(m: BotManifest, log) -> None:
    """Say on stderr that a bot's setup is running and where its output goes."""
    print(f"bot {m.name}: running its setup ({shlex.join(m.setup)}), output in {log}",
          file=sys.stderr, flush=True)


__all__ = ["SetupError", "add_setup_options", "set_up"]


def fresh_out(given: Path, another_run: Callable[[Path], Path | None], what: str,
              overwrite: str) -> Path:
    """``--out`` folder ``given``, made if missing; :class:`ConfigError` for one that
    cannot be, or that holds ``what`` of another run (``another_run`` finds one there),
    which this run's would ``overwrite`` ("overwrite", "be added to")."""
    try:
        given.mkdir(parents=True, exist_ok=True)
        taken = another_run(given)
    except OSError as exc:
        raise ConfigError(f"cannot create the --out folder {given}: {exc.strerror}") from None
    if taken is not None:
        raise ConfigError(f"--out {given} holds {what} of another run ({taken.name}), which this "
                          f"one's would {overwrite}: give a new folder")
    return given
