"""No bot process plays two rotations of one deal, even where a lane of the executor
leases its seats across the start of the next phase.

A lane that begins the last match of a phase leases its bots one by one, and a lease that
starts a process waits for it; another lane may meanwhile begin the first match of the
next phase, and every provider enters that phase. The seats leased after that moment were
tagged with the new phase, though their match is of the old one: such a process played
its rotation of the old phase's deal, was kept as one of the new phase, and later met that
deal's next rotation (every hand of which it had seen at the first one's end). The same
happens where a multi-process or Ray executor deals again a match of the earlier phase
that a lost referee had (a worker already in the next phase takes it up).
"""

from __future__ import annotations

import asyncio
import shutil
from collections import defaultdict
from pathlib import Path

from ono99.v1 import referee_pb2

from arena.bots.manifest import load_manifest
from arena.bots.sandbox import SandboxConfig
from arena.referee.results import MatchSpec, TimeControl
from arena.rules.rulesets import make_config
from arena.tournament.executor import LocalExecutor, process_seats
from arena.tournament.schedule import PlannedMatch


ROGUE = Path(__file__).resolve().parents[1] / "bots" / "rogue.py"


def _bot(folder: Path, mode: str) -> Path:
    """A bot folder running tests/bots/rogue.py in ``mode`` (``record`` logs every message)."""
    folder.mkdir(parents=True)
    shutil.copy(ROGUE, folder / "rogue.py")
    (folder / "bot.toml").write_text(f'name = "{folder.name}"\n'
                                     f'command = ["{{python}}", "rogue.py", "{mode}"]\n')
    return folder


def _matches_seen(log_dir, label: str) -> dict[str, set[str]]:
    """For each process of the recording bot ``label`` (one log each: ``label``,
    ``label#2``, ...), the match ids it was sent a match start of."""
    seen: dict[str, set[str]] = defaultdict(set)
    for log in log_dir.glob(f"{label}*.stderr.log"):
        for line in log.read_text().splitlines():
            if line.startswith("REC "):
                msg = referee_pb2.RefereeMessage.FromString(bytes.fromhex(line[4:]))
                if msg.HasField("match_start"):
                    seen[log.name].add(msg.match_start.match_id)
    return seen


def _executor(tmp_path: Path, labels: list[str], lanes: int) -> tuple[LocalExecutor, Path]:
    """A local executor of unsandboxed bots ``labels`` (``rec`` records what it is sent),
    ``lanes`` matches at once; and the folder of its bots' logs."""
    manifests = [load_manifest(_bot(tmp_path / name, "record" if name == "rec" else "good"))
                 for name in labels]
    logs = tmp_path / "logs"
    return LocalExecutor(process_seats(manifests, labels, SandboxConfig(mode="none"), logs),
                         lanes), logs


def test_a_match_of_a_phase_leased_as_the_next_begins_is_not_played_by_its_processes(tmp_path):
    labels = ["b0", "rec", "b2", "b3"]
    executor, logs = _executor(tmp_path, labels, 2)
    config = make_config("modern", None, 2)
    # deal 7 at the table of bots 0 and 1 (rec): rotation 0 is the last match of phase 0,
    # rotation 1 comes in phase 1, after a match of another table. The seats are leased in
    # the order of the bots: rec's after bot 0's, whose process takes a while to start
    first = PlannedMatch("t0-d0-r0", "t0-d0", (0, 1), (0, 1), 0, 0, 7, (11, 12), phase=0)
    other = PlannedMatch("t5-d0-r1", "t5-d0", (2, 3), (3, 2), 0, 1, 8, (21, 22), phase=1)
    again = PlannedMatch("t0-d0-r1", "t0-d0", (0, 1), (1, 0), 0, 1, 7, (11, 12), phase=1)

    def spec_of(p: PlannedMatch) -> MatchSpec:
        return MatchSpec(p.key, config, p.seed, tuple(labels[b] for b in p.seats),
                         TimeControl(5000, 10000), p.bot_seeds)

    async def main() -> None:
        # lane A takes `first` and waits for bot 0's process to start; lane B then takes
        # `other`, of phase 1; `again` is dealt once `first` is over (as the schedule
        # would: a phase's matches are dealt deal by deal, a table's deal last)
        plans, later = [first, other], [again]
        first_over = asyncio.Event()

        async def next_plan():
            if plans:
                return plans.pop(0)
            await first_over.wait()
            return later.pop() if later else None

        async def on_result(p, result) -> None:
            assert result is not None and not result.verdicts, result
            if p is first:
                first_over.set()

        await asyncio.wait_for(executor.play(next_plan, spec_of, on_result), 120)

    asyncio.run(main())
    seen = _matches_seen(logs, "rec")
    assert sum(len(ids) for ids in seen.values()) == 2, seen
    both = [name for name, ids in seen.items() if {first.key, again.key} <= ids]
    assert both == [], f"one process of the bot played both rotations of deal 7: {dict(seen)}"


def test_a_match_of_an_earlier_phase_dealt_again_does_not_stop_the_processes_of_this_one(tmp_path):
    """A match whose referee was lost is dealt again, to a worker perhaps already in the
    next phase. Its lane took its phase for the executor's: every provider went back to
    that phase (its idle processes of the next one stopped), and forward again at the next
    plan (the process started for the old match stopped too): each bot's processes
    started afresh for nothing. Its seats get processes of its own phase (lease), which
    no later match reuses."""
    labels = ["b0", "b1", "b2", "b3"]
    executor, logs = _executor(tmp_path, labels, 1)
    config = make_config("modern", None, 2)
    plans = [PlannedMatch("t0-d1-r1", "t0-d1", (0, 1), (1, 0), 0, 1, 7, (11, 12), phase=1),
             PlannedMatch("t1-d0-r0", "t1-d0", (2, 3), (2, 3), 1, 0, 8, (21, 22), phase=0),
             PlannedMatch("t0-d2-r1", "t0-d2", (0, 1), (1, 0), 0, 1, 9, (31, 32), phase=1)]

    def spec_of(p: PlannedMatch) -> MatchSpec:
        return MatchSpec(p.key, config, p.seed, tuple(labels[b] for b in p.seats),
                         TimeControl(5000, 10000), p.bot_seeds)

    async def on_result(p, result) -> None:
        assert result is not None and not result.verdicts, result

    asyncio.run(asyncio.wait_for(executor.run(plans, spec_of, on_result), 120))
    started = sorted(log.name.split(".")[0] for log in logs.glob("b[01]*.stderr.log"))
    assert started == ["b0", "b1"], f"processes of bots 0 and 1: {started}"


def test_a_match_of_an_earlier_phase_dealt_again_gets_no_idle_process_of_a_later_one(tmp_path):
    """A match of phase 0 dealt again (its referee was lost) after its bots have played
    phase 1, where their processes are idle: its seats get processes started for it, not
    the idle ones, which may have played the other rotation of the same deal (here they
    have: deal 7's rotation 1) and seen every hand of it at its end. (Mutation review:
    the lease's phase check dropped, ``if self.free``: the idle process of phase 1 played
    phase 0's rotation too.)"""
    labels = ["b0", "rec"]
    executor, logs = _executor(tmp_path, labels, 1)
    config = make_config("modern", None, 2)
    later = PlannedMatch("t0-d0-r1", "t0-d0", (0, 1), (1, 0), 0, 1, 7, (11, 12), phase=1)
    again = PlannedMatch("t0-d0-r0", "t0-d0", (0, 1), (0, 1), 0, 0, 7, (11, 12), phase=0)

    def spec_of(p: PlannedMatch) -> MatchSpec:
        return MatchSpec(p.key, config, p.seed, tuple(labels[b] for b in p.seats),
                         TimeControl(5000, 10000), p.bot_seeds)

    async def on_result(p, result) -> None:
        assert result is not None and not result.verdicts, result

    asyncio.run(asyncio.wait_for(executor.run([later, again], spec_of, on_result), 120))
    seen = _matches_seen(logs, "rec")
    assert sorted(ids for names in seen.values() for ids in names) == [again.key, later.key], seen
    both = [name for name, ids in seen.items() if {later.key, again.key} <= ids]
    assert both == [], f"one process of the bot played both rotations of deal 7: {dict(seen)}"
