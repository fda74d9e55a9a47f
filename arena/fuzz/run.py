"""Running the fuzz: the three machines in turn against one served arena, for a number of
examples (the tests) or for a time (``arena bench fuzz``), and what it came to."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from arena.fuzz.machine import Broken, FuzzMachine
from arena.fuzz.organizer import OrganizerMachine
from arena.fuzz.referee import RefereeMachine
from arena.fuzz.spectator import SpectatorMachine
from arena.fuzz.target import ServedArena

MACHINES: dict[str, type[FuzzMachine]] = {
    "referee": RefereeMachine, "organizer": OrganizerMachine, "spectator": SpectatorMachine}


def fuzz_settings(examples: int, steps: int = 25, derandomize: bool = False) -> settings:
    """Hypothesis settings for fuzzing a live server: no deadline (a call may wait on the
    server), no example database (the server's state is not the test's to replay), no
    shrinking (the server remembers what earlier examples did: a smaller example may not
    fail the same way; a failure is reported with every step it took)."""
    return settings(max_examples=examples, stateful_step_count=steps, derandomize=derandomize,
                    database=None, deadline=None, suppress_health_check=list(HealthCheck),
                    phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False,
                    print_blob=False)


def run_machine(target: ServedArena, name: str, config: settings) -> str | None:
    """Run one machine's examples; None, or the failure: what went wrong and the steps."""
    try:
        run_state_machine_as_test(lambda: MACHINES[name](target), settings=config)
    except Exception as exc:   # a failure of the server under fuzz, or of the fuzzer itself
        found = _broken(exc) or exc
        notes = "\n".join(getattr(exc, "__notes__", ()) or getattr(found, "__notes__", ()))
        if isinstance(found, Broken):
            return f"{name}: {found}\n{notes}"
        return f"{name}: the fuzzer failed: {''.join(traceback.format_exception(exc))[-3000:]}\n{notes}"
    return None


def _broken(exc: BaseException | None, depth: int = 0) -> Broken | None:
    """The first :class:`Broken` in ``exc``, its causes and (Hypothesis's Flaky errors are
    exception groups: a failure that did not happen again when replayed, the server
    having moved on) its group."""
    if exc is None or depth > 20:
        return None
    if isinstance(exc, Broken):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _broken(inner, depth + 1)
        if found is not None:
            return found
    return _broken(exc.__cause__ or exc.__context__, depth + 1)


@dataclass
class FuzzReport:
    """What a fuzz run came to."""

    seconds: float = 0.0
    messages: int = 0
    examples: int = 0
    failures: list[str] = field(default_factory=list)       # wrong answers, with their steps
    server_errors: list[str] = field(default_factory=list)  # from the server's output
    disturbed: list[str] = field(default_factory=list)      # healthy sessions that suffered
    healthy_matches: int = 0
    rss_start_kb: int = 0      # the server's, once warmed up
    rss_end_kb: int = 0

    @property
    def rss_growth(self) -> float:
        """The server's memory growth over the run, in percent."""
        return 100.0 * (self.rss_end_kb - self.rss_start_kb) / max(1, self.rss_start_kb)

    @property
    def clean(self) -> bool:
        return not (self.failures or self.server_errors or self.disturbed)

    def summary(self) -> str:
        return (f"fuzz: {self.seconds:.0f} s, {self.messages} messages, "
                f"{len(self.server_errors)} server errors, {len(self.failures)} wrong answers, "
                f"{len(self.disturbed)} sessions disturbed; server RSS "
                f"{round(self.rss_growth) or 0:+d}%")   # (never "-0%")


def fuzz(target: ServedArena, seconds: float | None = None, examples: int = 20, steps: int = 25,
         derandomize: bool = False, machines: tuple[str, ...] = tuple(MACHINES),
         progress: Callable[[str], None] | None = None) -> FuzzReport:
    """Run ``machines`` in turn, ``examples`` each per round: one round, or rounds until
    ``seconds`` have passed. In a timed run the server's memory is measured from the end
    of the first round (its pools and caches filled) to the end of the last."""
    report = FuzzReport()
    start = time.monotonic()
    first_messages = target.messages
    report.rss_start_kb = target.rss_kb()
    rounds = 0
    while True:
        rounds += 1
        for name in machines:
            failure = run_machine(target, name, fuzz_settings(examples, steps, derandomize))
            report.examples += examples
            if failure is not None:
                report.failures.append(failure)
                if progress:
                    progress(f"wrong answer: {failure}")
        if seconds is not None and rounds == 1:
            report.rss_start_kb = target.rss_kb()
        if progress:
            progress(f"{time.monotonic() - start:.0f} s: {report.examples} examples, "
                     f"{target.messages - first_messages} messages, server RSS "
                     f"{target.rss_kb() / 1024:.0f} MiB, healthy matches {target.healthy.matches}")
        if seconds is None or time.monotonic() - start >= seconds or len(report.failures) >= 20:
            break
    report.seconds = time.monotonic() - start
    report.messages = target.messages - first_messages
    report.disturbed = target.check_healthy()
    report.server_errors = target.errors()
    report.healthy_matches = target.healthy.matches
    report.rss_end_kb = target.rss_kb()
    return report
