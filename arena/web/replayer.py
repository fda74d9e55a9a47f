"""An uploaded file made into a record (``POST /api/record`` of the web viewer), in a
process of its own.

The file is anyone's, and reading it may take seconds of CPU and a great deal of memory:
a 16 MB record of five million empty messages held the viewer's process for 60 s (the
event loop of the tournament or server it runs in with it: protobuf's C calls and the
garbage collector hold the interpreter's lock, though the work ran in a thread) and
kept 630 MB after. Here it takes neither: this process reads stdin, answers on stdout
and ends, within a memory and a CPU limit, and the kernel's out-of-memory killer takes
it first, and it runs at the lowest priority.

    python -P -m arena.web.replayer FILE MAX_TURNS > RECORD.json

FILE is the viewer's copy of the upload, in a folder the viewer removes whatever becomes
of this process (killed at its CPU limit, by the viewer's timeout, by the kernel). Exit 0:
the record's JSON on stdout. Exit 2: why the file is not one, a line on stderr.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
from pathlib import Path

MEMORY = 2**30     # bytes of private writable memory (RLIMIT_DATA)
CPU_S = 60         # seconds of CPU (RLIMIT_CPU); the viewer waits a little longer


def main(argv: list[str]) -> int:
    """``FILE MAX_TURNS``: the record's JSON on stdout (0), or why not on stderr (2)."""
    path, max_turns = Path(argv[0]), int(argv[1])
    # at the lowest priority: a stranger's file may take its whole minute of CPU, upload
    # after upload, beside the referee of the tournament or server the viewer runs with
    os.nice(19)
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))   # no gigabyte core at the CPU limit
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as score:
        score.write("1000")
    from arena.watch import records            # after the limits: imports are counted
    try:
        text = records.to_json(records.from_file(path, max_turns))
    except records.RecordError as exc:
        print(exc, file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{path} is too large to be read here (over {MEMORY // 2**20} MiB of memory): "
              "replay it with `arena replay`", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
