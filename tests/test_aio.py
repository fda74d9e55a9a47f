"""``to_the_end``: cleanup that a cancellation, or several, cannot cut short."""

from __future__ import annotations

import asyncio

import pytest

from arena.aio import to_the_end


def test_cleanup_runs_to_its_end_through_cancellations_then_the_cancellation_goes_on():
    steps: list[str] = []

    async def cleanup() -> str:
        for step in ("a", "b", "c"):
            await asyncio.sleep(0.05)
            steps.append(step)
        return "done"

    async def main() -> None:
        task = asyncio.create_task(to_the_end(cleanup()))
        for _ in range(3):
            await asyncio.sleep(0.03)
            task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert steps == ["a", "b", "c"]
        assert await to_the_end(cleanup()) == "done"   # not cancelled: its result

    asyncio.run(main())


def test_a_cleanup_cancelled_from_within_or_failing_says_so():
    async def cancelled() -> None:
        raise asyncio.CancelledError

    async def failing() -> None:
        raise ValueError("broken")

    async def main() -> None:
        with pytest.raises(asyncio.CancelledError):
            await to_the_end(cancelled())
        with pytest.raises(ValueError, match="broken"):
            await to_the_end(failing())

    asyncio.run(main())
