"""Seeded games play out exactly as they did when the copy in data/ was frozen: same
deals, draws, events and outcomes, and the same views at every decision. Stored
tournaments, replays, conformance vectors and duplicate deals depend on it; engine
speed work must leave it unchanged (support/frozen_games.py says how to refreeze after a
change of rules that is meant)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.frozen_games import SETUPS, WHOLE, digest, games_of

FROZEN = json.loads((Path(__file__).parent / "data" / "frozen_games.json").read_text())


@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: f"{s[0]}-{s[2]}-{s[1]}")
def test_seeded_games_play_as_frozen(setup):
    ruleset, options, seats = setup
    frozen = next(f for f in FROZEN if (f["ruleset"], f["options"], f["seats"]) == setup)
    games = games_of(ruleset, options, seats)
    for (events, _), whole in zip(games[:WHOLE], frozen["whole"]):
        assert repr(events) == whole            # the first difference is shown here
    assert digest([events for events, _ in games]) == frozen["events"]
    assert digest([seen for _, seen in games]) == frozen["views"]
