"""End-to-end matches between real bot processes over a real referee."""

from __future__ import annotations

import pytest

from support.matches import BOTS, RULESETS, play, replays, spec

from arena.referee.results import Status


@pytest.mark.parametrize("ruleset, options", RULESETS)
def test_sample_bots_play_every_ruleset_to_the_end(ruleset, options):
    bots = [BOTS / "counter", BOTS / "greedy", BOTS / "random"]
    results = play(bots, lambda names: [spec(names, ruleset, seed, options) for seed in (1, 2)])
    for result in results:
        assert result.status == Status.FINISHED
        assert result.verdicts == []
        assert sorted(s for g in result.ranking for s in g) == [0, 1, 2]
        assert replays(result)  # the event record is a real game: it replays from the seed


def test_same_seed_gives_the_same_match_twice():
    bots = [BOTS / "counter", BOTS / "random", BOTS / "greedy", BOTS / "random"]
    first = play(bots, lambda names: [spec(names, "modern", 42), spec(names, "classic", 43)])
    second = play(bots, lambda names: [spec(names, "modern", 42), spec(names, "classic", 43)])
    for a, b in zip(first, second):
        assert a.events == b.events
        assert a.ranking == b.ranking


def test_one_connection_plays_many_matches():
    results = play([BOTS / "random", BOTS / "random"],
                   lambda names: [spec(names, seed=s) for s in range(1, 6)])
    assert [r.status for r in results] == [Status.FINISHED] * 5
    assert len({tuple(r.events) for r in results}) == 5


def test_counter_beats_random_clearly():
    results = play([BOTS / "counter", BOTS / "random"],
                   lambda names: [spec(names, seed=s) for s in range(1, 121)])
    wins = sum(r.ranking[0] == (0,) for r in results)
    assert wins >= 72, f"counter won {wins} of 120"  # 60%; it measured ~69% over 100 games
