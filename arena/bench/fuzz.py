"""``arena bench fuzz``: the fuzzer of arena/fuzz for as long as asked, against a real
``arena serve`` with two healthy bots playing beside it (docs/reliability.md).

It runs the Referee, Organizer and Spectator state machines in turn, new examples every
round, until the time is up, and prints a line per round, then what it found: every wrong
answer (with the steps that led to it), every error in the server's output, every healthy
session disturbed. The server's memory is measured from the end of the first round to the
end of the last. The folder with the server's database and output is kept when anything
was found, and its path printed.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from arena.rules.errors import ConfigError

SHOWN = 5   # findings of each kind printed in full


def run(console, seconds: float, examples: int = 20, healthy: bool = True):
    """Fuzz for ``seconds``; the :class:`arena.fuzz.run.FuzzReport`."""
    try:
        from arena.fuzz.run import fuzz
        from arena.fuzz.target import ServedArena
    except ImportError as exc:
        raise ConfigError(f"arena bench fuzz needs the test tools ({exc.name} is missing): "
                          "pip install -e '.[dev]'") from None

    folder = Path(tempfile.mkdtemp(prefix="ono99-bench-fuzz-"))

    def say(line: str) -> None:
        console.print(line if len(line) < 400 else line[:400] + " ...", highlight=False,
                      soft_wrap=True, markup=False)

    with ServedArena(folder, healthy=healthy) as target:
        say(f"fuzzing arena serve at {target.player} (spectators {target.spectator}), "
            f"{'with' if healthy else 'without'} healthy bots, for {seconds:g} s")
        report = fuzz(target, seconds=seconds, examples=examples, progress=say)
    for title, found in (("wrong answer", report.failures), ("server error", report.server_errors),
                         ("disturbed", report.disturbed)):
        for text in found[:SHOWN]:
            console.print(f"--- {title}:\n{text[:4000]}", highlight=False, soft_wrap=True, markup=False)
        if len(found) > SHOWN:
            say(f"... and {len(found) - SHOWN} more of: {title}")
    say(f"{report.examples} examples, {report.healthy_matches} healthy matches; server memory "
        f"{report.rss_start_kb / 1024:.0f} MiB after the first round, {report.rss_end_kb / 1024:.0f} "
        "MiB at the end")
    if report.clean:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        say(f"the server's database and output are kept in {folder}")
    console.print(report.summary(), highlight=False, soft_wrap=True)
    return report
