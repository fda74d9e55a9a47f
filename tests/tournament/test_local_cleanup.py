"""A local executor stops every bot process it started, however its run ends: a run that
is cancelled again while it stops them (a worker told to stop while it was already
stopping on an error of its own) still waits for each to end."""

from __future__ import annotations

import asyncio

import pytest
from support.hostile import hostile

from arena.bots.manifest import load_manifest
from arena.bots.sandbox import SandboxConfig
from arena.referee.results import MatchSpec, TimeControl
from arena.rules.rulesets import make_config
from arena.tournament.executor import LocalExecutor, process_seats
from arena.tournament.schedule import PlannedMatch


def test_a_run_cancelled_again_while_it_stops_its_bots_still_stops_every_one(tmp_path):
    manifest = load_manifest(hostile(tmp_path / "bot", "ignore_term"))   # only SIGKILL stops it
    executor = LocalExecutor(process_seats([manifest, manifest], ["a", "b"],
                                           SandboxConfig(mode="none")), 1)
    config = make_config("modern", None, 2)
    plan = PlannedMatch("m1", "m1", (0, 1), (0, 1), 0, 0, 7, (1, 2))

    def spec_of(p: PlannedMatch) -> MatchSpec:
        return MatchSpec(p.key, config, p.seed, ("a", "b"), TimeControl(5000, 10000))

    async def main() -> None:
        played = asyncio.Event()
        plans = [plan]

        async def next_plan():
            if plans:
                return plans.pop()
            await asyncio.Event().wait()   # no more yet: the lane waits, its bots idle

        async def on_result(p, result) -> None:
            assert result is not None
            played.set()

        run = asyncio.create_task(executor.play(next_plan, spec_of, on_result))
        await asyncio.wait_for(played.wait(), 60)
        procs = [bot.process for seats in executor.seats for bot in seats.instances]
        assert len(procs) == 2 and all(p.returncode is None for p in procs)
        run.cancel()
        await asyncio.sleep(1.0)
        assert all(p.returncode is None for p in procs)   # still being stopped
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        assert [p.returncode for p in procs] == [-9, -9]

    asyncio.run(main())
