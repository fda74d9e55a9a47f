"""Asyncio helpers the services share."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

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


async def in_daemon_thread(fn: Callable[..., T], *args: Any, name: str) -> T:
    """``fn(*args)`` in a daemon thread of its own, awaited. Unlike ``asyncio.to_thread``,
    whose threads a process waits for as it exits, a stop never waits for it: for a long
    read that a database which does not answer (locked, gone) can hold up, which must not
    hold up a server's stop. A cancelled caller leaves it to end by itself, unheard."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            outcome = functools.partial(future.set_result, fn(*args))
        except BaseException as exc:   # noqa: BLE001 - handed to the awaiting task
            outcome = functools.partial(future.set_exception, exc)
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:           # the loop is closed: nobody awaits it any more
            pass

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future
