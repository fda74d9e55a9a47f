"""The listeners' seam: what a match tells those who follow it, and that none of them can
break it. Matches between house seats (the SDK's driver in-process: real messages, no
processes), so every ruleset plays in milliseconds."""

from __future__ import annotations

import asyncio
import logging

import pytest

from arena.referee.house import FirstLegal, HouseSession
from arena.referee.listeners import Frame, MatchInfo, MatchListener, MatchOver
from arena.referee.results import Status
from arena.referee.runner import MatchRunner
from arena.rules.views import SpectatorView
from support.matches import RULESETS, replays, spec


class Recorder(MatchListener):
    def __init__(self, sees_hands: bool = False) -> None:
        self.sees_hands = sees_hands
        self.info: MatchInfo | None = None
        self.frames: list[Frame] = []
        self.verdicts = []
        self.over: MatchOver | None = None

    def match_started(self, info):
        self.info = info

    def frame(self, frame):
        self.frames.append(frame)

    def verdict(self, match_id, verdict):
        self.verdicts.append(verdict)

    def match_ended(self, over):
        self.over = over


class Broken(MatchListener):
    def __init__(self, method: str) -> None:
        self.method, self.calls = method, 0

    def _maybe(self, method):
        self.calls += 1
        if method == self.method:
            raise RuntimeError(f"{method} is broken")

    def match_started(self, info):
        self._maybe("match_started")

    def frame(self, frame):
        self._maybe("frame")

    def match_ended(self, over):
        self._maybe("match_ended")


def play(the_spec, *listeners):
    sessions = [HouseSession(FirstLegal()) for _ in the_spec.names]
    runner = MatchRunner(the_spec, sessions, listeners)
    return runner, asyncio.run(runner.run())


@pytest.mark.parametrize("ruleset, options", RULESETS)
def test_frames_cover_every_event_in_order_with_the_public_state_after_them(ruleset, options):
    rec = Recorder()
    the_spec = spec(["a", "b", "c"], ruleset, seed=5, options=options)
    runner, result = play(the_spec, rec)
    assert rec.info == MatchInfo(the_spec.match_id, ("a", "b", "c"), the_spec.config,
                                 the_spec.time_control, rec.info.started_at)
    assert [f.seq for f in rec.frames] == list(range(len(rec.frames)))
    assert [e for f in rec.frames for e in f.events] == result.events
    seen = 0
    for f in rec.frames:
        seen += len(f.events)
        assert isinstance(f.view, SpectatorView) and f.view.n_events == seen
        assert f.hands is None
        assert (f.view.hands is None) != (f is rec.frames[-1])   # hands only once it is over
        assert len(f.bank_ms) == 3
    assert rec.frames[0].seat is None and all(f.seat is not None for f in rec.frames[1:-1] if f.latency_us)
    assert rec.over.ranking == result.ranking and rec.over.status == Status.FINISHED
    assert rec.over.turns == result.turns
    assert replays(result)


def test_nothing_secret_reaches_a_listener():
    """No seed, no bot seed, no hand before the end, for a listener that did not ask."""
    rec = Recorder()
    the_spec = spec(["a", "b"], seed=987654321)
    play(the_spec, rec)
    fields = vars(rec.info)
    assert the_spec.seed not in fields.values()
    assert not any(hasattr(rec.info, k) for k in ("seed", "bot_seeds", "scenario"))
    assert all(f.hands is None for f in rec.frames)


def test_the_organiser_listener_sees_every_hand_and_the_others_do_not():
    public, organiser = Recorder(), Recorder(sees_hands=True)
    runner, _ = play(spec(["a", "b", "c", "d"], seed=8), public, organiser)
    assert len(public.frames) == len(organiser.frames)
    assert all(f.hands is None for f in public.frames)
    assert [e for f in organiser.frames for e in f.events] == runner.game.events
    assert organiser.frames[-1].hands == tuple(runner.game.hand(s) for s in range(4))
    # every private frame's hands agree with the public hand sizes of the same moment
    assert all(len(h) == (size or 0)
               for f in organiser.frames for h, size in zip(f.hands, f.view.hand_sizes))


@pytest.mark.parametrize("method", ["match_started", "frame", "match_ended"])
def test_a_failing_listener_is_dropped_and_the_match_goes_on(method, caplog):
    broken, rec = Broken(method), Recorder()
    with caplog.at_level(logging.ERROR, logger="arena.referee"):
        _, result = play(spec(["a", "b"], seed=3), broken, rec)
    assert result.status == Status.FINISHED and result.verdicts == []
    assert rec.over is not None and [e for f in rec.frames for e in f.events] == result.events
    assert f"{method} is broken" in caplog.text and "it is dropped" in caplog.text
    calls = broken.calls
    assert calls == {"match_started": 1, "frame": 2, "match_ended": len(rec.frames) + 2}[method]


def test_an_aborted_match_is_reported_as_over_and_shows_no_hand():
    """An aborted match is played again (a server's shutdown, a tournament resumed): the
    bots and spectators told of its end must not see the hands it dealt."""
    rec = Recorder()
    the_spec = spec(["a", "b"], seed=4)
    ends = []

    class Stuck(HouseSession):
        async def next_action(self, timeout):
            await asyncio.sleep(3600)

        async def send(self, msg):
            if msg.HasField("match_end"):
                ends.append(msg.match_end)
            await super().send(msg)

    async def go():
        runner = MatchRunner(the_spec, [Stuck(FirstLegal()), Stuck(FirstLegal())], [rec])
        task = asyncio.create_task(runner.run())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert rec.over is not None and rec.over.status == Status.ABORTED
    assert rec.over.hands == ((), ())
    assert len(ends) == 2 and all(not any(h.cards for h in end.hands) for end in ends), ends
