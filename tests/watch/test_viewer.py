"""What a viewer makes of a spectator stream, message by message, over the frames of a
real game: every frame once and in order, whatever snapshots, resyncs, repeats and TV
switches the stream brings; the clock of the seat thinking; a tournament kept up to date."""

from __future__ import annotations

import random

from ono99.v1 import referee_pb2, spectator_pb2 as pb

from arena.referee.results import TimeControl
from arena.rules.game import Game
from arena.rules.rulesets import make_config
from arena.watch import records
from arena.watch.viewer import WatchedMatch, WatchedTournament


def record(match_id: str, seed: int) -> pb.MatchSnapshot:
    """A finished game's record (random legal plays, three seats)."""
    rng = random.Random(seed)
    config = make_config("modern", None, 3)
    game = Game.from_config(config, seed)
    while not game.finished:
        game.play(game.to_act, rng.choice(game.view(game.to_act).legal))
    return records.replay_snapshot(match_id, ["a", "b", "c"], config, seed, game.events,
                                   TimeControl(1000, 10_000))


def snapshot(whole: pb.MatchSnapshot, frames: int, over: bool = False,
             open_ms: int = 0) -> pb.MatchFeed:
    """The stream's snapshot of ``whole`` when it had its first ``frames`` frames."""
    snap = pb.MatchSnapshot(match=whole.match, frames=whole.frames[:frames], reason="join",
                            open_turn_ms=open_ms)
    if over:
        snap.over.CopyFrom(whole.over)
    else:
        snap.match.status = pb.MATCH_STATUS_LIVE
        del snap.match.ranking[:]
    return pb.MatchFeed(snapshot=snap)


def frame(whole: pb.MatchSnapshot, i: int) -> pb.MatchFeed:
    return pb.MatchFeed(frame=whole.frames[i])


def test_every_frame_is_had_once_and_in_order_whatever_the_stream_repeats():
    whole = record("m1", 3)
    n = len(whole.frames)
    watched = WatchedMatch()
    seen = []
    stream = ([snapshot(whole, 5)] + [frame(whole, i) for i in range(3, 9)]   # repeats 3, 4
              + [snapshot(whole, 12)]                                          # a resync
              + [frame(whole, i) for i in range(10, n)]
              + [pb.MatchFeed(over=whole.over)])
    updates = [watched.apply(message, 0.0) for message in stream]
    for update in updates:
        seen += [f.seq for f in update.frames]
    assert seen == list(range(n))
    assert updates[0].started and not any(u.started for u in updates[1:])
    assert updates[-1].over == whole.over
    assert watched.record.frames == whole.frames
    assert watched.record.match.status == pb.MATCH_STATUS_FINISHED
    assert list(watched.record.match.ranking) == list(whole.over.ranking)


def test_frames_sent_together_to_a_viewer_that_lagged_are_had_as_if_each_came_alone():
    whole = record("m1", 4)
    n = len(whole.frames)
    watched = WatchedMatch()
    stream = ([snapshot(whole, 3), frame(whole, 3)]
              + [pb.MatchFeed(frames=pb.FrameBatch(frames=whole.frames[2:9]))]   # repeats 2, 3
              + [frame(whole, i) for i in range(9, n)])
    seen = [f.seq for message in stream for f in watched.apply(message, 0.0).frames]
    assert seen == list(range(n))
    assert watched.record.frames == whole.frames


def test_a_verdict_is_had_once_from_a_message_or_a_snapshot():
    whole = record("m1", 4)
    verdict = referee_pb2.Verdict(seat=1, kind=referee_pb2.VERDICT_KIND_TIMEOUT, detail="late")
    watched = WatchedMatch()
    watched.apply(snapshot(whole, 3), 0.0)
    assert watched.apply(pb.MatchFeed(verdict=verdict), 0.0).verdicts == [verdict]
    again = snapshot(whole, 4)
    again.snapshot.verdicts.append(verdict)
    assert watched.apply(again, 0.0).verdicts == []
    assert watched.apply(pb.MatchFeed(verdict=verdict), 0.0).verdicts == []
    assert list(watched.record.verdicts) == [verdict]


def test_tv_switching_to_another_match_starts_it_over():
    first, second = record("m1", 5), record("m2", 6)
    watched = WatchedMatch()
    watched.apply(snapshot(first, 4), 0.0)
    watched.apply(pb.MatchFeed(over=first.over), 0.0)
    update = watched.apply(snapshot(second, 7), 0.0)
    assert update.started and [f.seq for f in update.frames] == list(range(7))
    assert watched.record.match.match_id == "m2" and not watched.record.HasField("over")


def test_a_finished_matchs_snapshot_brings_its_end():
    whole = record("m1", 7)
    update = WatchedMatch().apply(snapshot(whole, len(whole.frames), over=True), 0.0)
    assert update.started and update.over == whole.over and len(update.frames) == len(whole.frames)


def test_the_thinking_clock_counts_from_the_last_arrival():
    whole = record("m1", 8)
    watched = WatchedMatch()
    assert watched.thinking_ms(5.0) is None
    watched.apply(snapshot(whole, 4, open_ms=700), 100.0)
    assert watched.thinking_ms(101.5) == 2200          # 700 when it was sent, 1.5 s since
    watched.apply(frame(whole, 4), 110.0)
    assert watched.thinking_ms(110.25) == 250
    watched.apply(pb.MatchFeed(over=whole.over), 111.0)
    assert watched.thinking_ms(112.0) is None


def test_a_tournament_is_kept_up_to_date():
    live = pb.MatchSummary(match_id="x1", names=["a", "b"], status=pb.MATCH_STATUS_LIVE)
    done = pb.MatchSummary(match_id="x0", names=["a", "b"], status=pb.MATCH_STATUS_FINISHED)
    watched = WatchedTournament()
    joined = watched.apply(pb.TournamentFeed(snapshot=pb.TournamentSnapshot(
        name="cup", bots=["a", "b"], total=4, done=1, matches=[live, done])))
    assert joined.joined and not joined.over
    assert list(watched.live) == ["x1"] and list(watched.recent) == [done]
    watched.apply(pb.TournamentFeed(started=pb.MatchSummary(match_id="x2", names=["b", "a"])))
    finished = pb.MatchSummary()
    finished.CopyFrom(live)
    finished.status = pb.MATCH_STATUS_FINISHED
    update = watched.apply(pb.TournamentFeed(finished=finished))
    assert update.finished == [finished] and watched.snapshot.done == 2
    assert list(watched.live) == ["x2"] and watched.recent[0] == finished
    watched.apply(pb.TournamentFeed(standings=pb.Standings(matches=3)))
    assert watched.snapshot.done == 3 and watched.snapshot.standings.matches == 3
    over = watched.apply(pb.TournamentFeed(over=pb.TournamentSnapshot(
        name="cup", total=4, done=4, finished=True)))
    assert over.over and not over.joined and watched.snapshot.done == 4
