"""The ladder stops when it is told to, whatever else happens in the same moment."""

from __future__ import annotations

import asyncio

from arena.bots.sandbox import SandboxConfig
from arena.referee.lobby import Lobby
from arena.server.ladder import Ladder
from arena.server.registry import Registry
from arena.store.sqlite import SQLiteStore


def test_a_ladder_woken_as_it_is_cancelled_still_stops(tmp_path):
    """CI saw `arena serve --ladder` hang on SIGTERM: a match that ended (or a bot that
    arrived) woke the ladder in the same turn of the event loop as the stop cancelled it,
    and Python 3.11's ``asyncio.wait_for`` returned the wake-up and dropped the cancel."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    ladder = Ladder(store, registry, None)

    async def scenario() -> None:
        task = asyncio.create_task(ladder.run())
        for _ in range(5):                 # the ladder is waiting for a bot
            await asyncio.sleep(0)
        ladder.wakeup()
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=3.0)
        assert done, "the ladder went on after it was cancelled"
        assert task.cancelled()

    try:
        asyncio.run(scenario())
    finally:
        store.close()


def test_no_module_waits_with_asyncio_wait_for():
    """The same race hides wherever 3.11's ``wait_for`` waits: ``asyncio.timeout`` keeps
    the cancel (it counts cancels with ``Task.uncancel``)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    users = [str(p.relative_to(root)) for folder in ("arena", "clients/python/ono99", "bots")
             for p in (root / folder).rglob("*.py") if "asyncio.wait_for(" in p.read_text()]
    assert users == []
