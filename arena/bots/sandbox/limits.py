"""What one bot process may use (``--limit``), and what a setup step may."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

from arena.rules.errors import ConfigError


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
