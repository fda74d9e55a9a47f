"""The lobby: waiting for a bot's session."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.referee.lobby import Lobby


def test_waiting_for_a_withdrawn_token_ends_at_once():
    """A bot removed mid-match: the runner waits for it to reconnect, a seat of its next
    match for it to connect. Both asked the lobby for a token it no longer had (KeyError:
    the tournament's task died). None will ever connect: TimeoutError, at once."""
    async def go():
        lobby = Lobby()
        reg = lobby.register("gone")
        lobby.unregister(reg.token)
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            await lobby.wait_session_hash(reg.token_hash, 30)
        return time.monotonic() - start

    assert asyncio.run(go()) < 1
