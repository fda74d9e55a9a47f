"""Asyncio helpers the services share."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def to_the_end(aw: Awaitable[T]) -> T:
    """Await ``aw`` to its end even if this task is cancelled meanwhile, any number of
    times: for cleanup that must not be cut short (stopping the processes a run started,
    which would otherwise outlive it). A cancellation that came meanwhile is raised once
    ``aw`` is done. ``aw`` must end by itself in bounded time."""
    task = asyncio.ensure_future(aw)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():   # ``aw`` itself was cancelled
                raise
            cancelled = True
        else:
            break
    if cancelled:
        raise asyncio.CancelledError
    return result
