"""What the hub gives spectators: a live match held behind a delay shows nothing of the
frames it holds back; a tournament's standings are refitted at most every so often,
however often viewers join, and sent to every viewer when refitted."""

from __future__ import annotations

import asyncio
import time

from ono99.v1 import referee_pb2, spectator_pb2 as pb

from arena.tournament.standings import Played
from arena.watch import hub
from arena.watch.hub import CROSSTABLE_BOTS, LiveMatch, Subscription, TournamentLog


def _playing(h: hub.SpectatorHub, frames: int) -> hub.SpectatorHub:
    """``h`` with match "m" (seats a and b) live, at its first ``frames`` frames."""
    h.match_started(pb.MatchSummary(match_id="m", names=["a", "b"], status=pb.MATCH_STATUS_LIVE))
    for seq in range(frames):
        h.frame("m", pb.MatchFrame(seq=seq))
    return h


def test_a_delayed_snapshot_tells_neither_the_live_turn_nor_its_clock():
    match = LiveMatch(pb.MatchSummary(match_id="m", turns=19), keep_hands=False)
    match.frames = [pb.MatchFrame(seq=i) for i in range(20)]
    match.last_frame = time.monotonic() - 3.0          # the live seat has thought 3 s
    held = match.snapshot("join", delay=5)
    assert held.delayed == 5 and [f.seq for f in held.frames] == list(range(15))
    assert held.match.turns == 14 and held.open_turn_ms == 0
    live = match.snapshot("join")
    assert live.match.turns == 19 and live.open_turn_ms >= 3000
    assert match.summary.turns == 19                   # the match's own summary is untouched


def test_a_delayed_viewer_hears_of_a_verdict_only_with_the_end():
    """A verdict is of the live turn: a viewer held 3 frames behind is told of it neither
    in its snapshot nor in its stream while the match runs (it would learn what happens
    ahead of what it sees); at the end, once, after the frames held back. A viewer
    without a delay is told at once."""
    async def go():
        h = _playing(hub.SpectatorHub(), frames=6)
        live, _ = h.subscribe("m")
        held, _ = h.subscribe("m", delay=3)
        verdict = referee_pb2.Verdict(seat=1, kind=referee_pb2.VERDICT_KIND_TIMEOUT,
                                      detail="late")
        h.verdict("m", verdict)
        snapshots = (h.subscribe("m")[1], h.subscribe("m", delay=3)[1])
        h.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        feeds = [_until_end(sub) for sub in (live, held)]
        return snapshots, feeds, verdict

    (now, behind), (live, held), verdict = asyncio.run(go())
    assert list(now.verdicts) == [verdict] and list(behind.verdicts) == []
    assert live == ["verdict", "over"]
    assert held == ["frame"] * 3 + ["verdict", "over"]


def test_viewers_joining_again_and_again_do_not_refit_the_standings(monkeypatch):
    """A client that opened the tournament stream, read its snapshot and closed it, 115
    times a second, had every snapshot after a new result refit the whole tournament
    (120 ms at 5,000 matches) and halved the matches played: a snapshot between refits
    gives the last fit; the viewers get the next one when the limit allows."""
    fits = []
    real = hub.standings_of
    monkeypatch.setattr(hub, "standings_of", lambda *a: fits.append(1) or real(*a))
    monkeypatch.setattr(hub, "STANDINGS_EVERY_S", 2.0)   # far longer than the joins take

    async def go():
        log = TournamentLog("cup", ["a", "b"], 1000, [])
        viewer = Subscription()
        log.viewers.add(viewer)
        first = log.snapshot([]).standings
        assert len(fits) == 1
        for i in range(200):
            log.result(Played(f"k{i}", ("a", "b"), (1, 2), f"s{i}"))
            joined = log.snapshot([])
            assert joined.done == i + 1 and joined.standings == first   # the last fit
        assert len(fits) == 1
        async with asyncio.timeout(10):
            sent = (await viewer.take())[0]
        assert len(fits) == 2 and sent.standings.matches == 200
        assert log.snapshot([]).standings == sent.standings
        log.finished = True
        log.result(Played("k200", ("a", "b"), (2, 1), "s200"))
        assert log.snapshot([]).standings.matches == 201            # the end: fitted at once
        assert len(fits) == 3

    asyncio.run(go())


def test_a_ladder_lists_the_bots_entered_after_it_started():
    """The ladder is followed from the server's start, with the bots entered then: one
    entered later played and was rated, but the tournament view's bot list left it out
    (`arena watch --tournament ladder` on a new server: "bots:" and nothing)."""
    async def go():
        log = TournamentLog("ladder", [], 0, [])
        log.result(Played("L1", ("alice", "bob"), (1, 2), "s1"))
        log.result(Played("L2", ("carol", "alice"), (1, 2), "s2"))
        return log.snapshot([])

    snapshot = asyncio.run(go())
    assert list(snapshot.bots) == ["alice", "bob", "carol"] and snapshot.done == 2


def test_a_big_ladder_s_standings_are_fitted_in_a_thread_and_sent_when_done():
    """A ladder of 60 bots (more than SYNC_FIT_BOTS): its fit took the event loop, where
    the server referees, for as long as it ran (seconds at a few hundred bots), once when
    the first viewer came and again every so often. Now the first viewer gets the counts,
    unrated, at once; the fit runs in a thread and is sent to the viewers when done."""
    played = [Played(f"L{k}", (f"b{k % 60}", f"b{(k * 7 + 1) % 60}"), (1, 2) if k % 3 else (2, 1),
                     f"L{k}") for k in range(400) if k % 60 != (k * 7 + 1) % 60]

    async def go():
        log = TournamentLog("ladder", [], 0, played)
        viewer = Subscription()
        log.viewers.add(viewer)
        first = log.snapshot([]).standings
        assert first.matches == len(played) and len(first.rows) == 60
        assert all(r.ci95 == 0 for r in first.rows)                  # unrated
        async with asyncio.timeout(30):
            sent = (await viewer.take())[0]
        assert sent.standings.matches == len(played)
        assert all(r.ci95 > 0 for r in sent.standings.rows)          # rated, with intervals
        assert log.snapshot([]).standings == sent.standings

    asyncio.run(go())


def test_the_crosstable_is_sent_for_fields_of_up_to_32_bots():
    """A cell per pair that met: a 200-bot ladder's standings were 0.5 MB, sent to every
    viewer at every refit. Beyond 32 bots the standings carry the rows alone."""
    for n in (CROSSTABLE_BOTS, CROSSTABLE_BOTS + 1):
        bots = [f"b{i}" for i in range(n)]
        played = [Played(f"k{i}", (bots[i], bots[i + 1]), (1, 2), f"k{i}") for i in range(n - 1)]
        board = TournamentLog("cup", bots, 100, played).standings(fresh=True)
        assert [r.bot for r in board.rows] and {r.bot for r in board.rows} == set(bots)
        assert board.matches == n - 1
        if n <= CROSSTABLE_BOTS:
            assert {r.bot for r in board.crosstable} == set(bots)
        else:
            assert list(board.crosstable) == []


def test_a_tournament_followed_again_after_it_ended_is_followed_afresh():
    """A server tournament cancelled (its spectators told it is over), then followed again
    by name, plays on: its viewers were told at once that it was over (the finished log
    was reused), and it could be forgotten as finished while it ran."""
    h = hub.SpectatorHub()
    h.tournament("cup", ["a", "b"], 4)
    h.tournament_finished("cup")
    log = h.tournament("cup", ["a", "b"], 4)           # resumed
    assert not log.finished and "cup" not in h._finished
    sub, _ = h.follow_tournament(log)
    assert not sub.items and sub in log.viewers


def test_a_match_played_again_under_its_id_stays_followed_while_it_is_live():
    """A match cut short is played again under the same id (a tournament's table without a
    remote bot: the same deal, resumed after a cancel or dealt again after its referee was
    lost). The hub then knew it twice in its list of recent matches: as that first attempt
    left the list, the attempt being played went with it, live, and its viewers were told
    nothing more (its frames were dropped: a match the hub does not know)."""
    async def go():
        h = hub.SpectatorHub(recent=3)
        h.match_started(pb.MatchSummary(match_id="m", status=pb.MATCH_STATUS_LIVE))
        h.frame("m", pb.MatchFrame(seq=0))
        h.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_ABORTED))
        h.match_started(pb.MatchSummary(match_id="m", status=pb.MATCH_STATUS_LIVE))
        h.frame("m", pb.MatchFrame(seq=0))
        viewer, _ = h.subscribe("m")
        for other in ("x", "y", "z"):
            h.match_started(pb.MatchSummary(match_id=other, status=pb.MATCH_STATUS_LIVE))
            h.match_ended(other, pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        h.frame("m", pb.MatchFrame(seq=1))
        live = [s.match_id for s in h.summaries() if s.status == pb.MATCH_STATUS_LIVE]
        h.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        return live, _until_end(viewer), list(h.matches)

    live, feed, kept = asyncio.run(go())
    assert live == ["m"]
    assert feed == ["frame", "over"]
    assert sorted(kept) == ["m", "y", "z"]   # the recent three, the second attempt among them


def test_viewers_of_an_attempt_that_never_ended_follow_the_match_played_again():
    """An attempt whose referee was lost never ends in the hub: its viewers are resynced to
    the attempt played under its id in its place (they waited for ever before)."""
    async def go():
        h = hub.SpectatorHub()
        h.match_started(pb.MatchSummary(match_id="m", status=pb.MATCH_STATUS_LIVE))
        h.frame("m", pb.MatchFrame(seq=0))
        viewer, _ = h.subscribe("m")
        h.match_started(pb.MatchSummary(match_id="m", status=pb.MATCH_STATUS_LIVE))
        assert viewer.items.popleft() is hub.RESYNC
        snapshot = h.resnapshot("m", viewer)
        h.frame("m", pb.MatchFrame(seq=0))
        h.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        return snapshot, _until_end(viewer)

    snapshot, feed = asyncio.run(go())
    assert snapshot is not None and list(snapshot.frames) == []
    assert feed == ["frame", "over"]


def _feed(sub: Subscription) -> list:
    """What ``sub`` has been sent so far (each message's kind; None for the end)."""
    out = []
    for item in sub.drain():
        out.append(None if item is None else item.WhichOneof("kind"))
    return out


def _until_end(sub: Subscription) -> list:
    """What ``sub`` has been sent so far, up to its end (each message's kind)."""
    feed = _feed(sub)
    return feed[:feed.index(None)] if None in feed else feed


def test_a_tournament_s_followers_hear_a_match_finished_once_it_has_ended():
    """On Ray a match's result and its spectators' messages come by two streams, in no set
    order. A result come first had the followers told the match was finished with its
    summary still live (6 of 90 lines of `arena watch --tournament` listed a 'finished'
    match as live, never corrected). They are told once it has ended, and a match that
    ended first is told at its result, as before."""
    async def go():
        h = hub.SpectatorHub()
        log = h.tournament("cup", ["a", "b"], 2)
        follower, _ = h.follow_tournament(log)
        sent = []
        for m in ("early", "late"):
            h.match_started(pb.MatchSummary(match_id=m, tournament="cup", names=["a", "b"],
                                            status=pb.MATCH_STATUS_LIVE))
            h.frame(m, pb.MatchFrame(seq=0))
        over = pb.MatchOver(status=pb.MATCH_STATUS_FINISHED, termination="last_standing")
        h.match_ended("early", over)
        h.tournament_result("cup", Played("k1", ("a", "b"), (1, 2), "k1"), "early")
        h.tournament_result("cup", Played("k2", ("a", "b"), (2, 1), "k2"), "late")
        sent.extend(follower.drain())
        h.match_ended("late", over)
        sent.extend(follower.drain())
        return [(m.WhichOneof("kind"), m) for m in sent], log

    sent, log = asyncio.run(go())
    finished = [m for kind, m in sent if kind == "finished"]
    assert [m.finished.match_id for m in finished] == ["early", "late"]
    assert all(m.finished.status == pb.MATCH_STATUS_FINISHED for m in finished)
    assert log.done == 2


def test_a_match_that_will_not_count_leaves_its_followers_live_list():
    """A ladder's match in which a bot was lost while the server stood still is not stored
    (it is dealt again): its followers heard it start and never heard it finish, so it
    stayed live on every page and terminal following the ladder (the thirty-second
    review). They get the tournament's snapshot again, where it is not live and the
    matches done are the ones that count."""
    async def go():
        h = hub.SpectatorHub()
        log = h.tournament("ladder", ["a", "b"], 0)
        follower, _ = h.follow_tournament(log)        # (its first snapshot returned)
        for m in ("counted", "dropped"):
            h.match_started(pb.MatchSummary(match_id=m, tournament="ladder",
                                            names=["a", "b"], status=pb.MATCH_STATUS_LIVE))
            h.frame(m, pb.MatchFrame(seq=0))
            h.match_ended(m, pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        h.tournament_result("ladder", Played("L1", ("a", "b"), (1, 2), "L1"), "counted")
        h.tournament_dropped("ladder", "dropped")
        return follower.drain()

    sent = asyncio.run(go())
    kinds = [m.WhichOneof("kind") for m in sent]
    assert kinds.count("finished") == 1 and kinds[-1] == "snapshot", kinds
    again = sent[-1].snapshot
    assert again.done == 1
    assert {m.match_id: m.status for m in again.matches} == {
        "counted": pb.MATCH_STATUS_FINISHED, "dropped": pb.MATCH_STATUS_FINISHED}


def test_a_tournament_s_matches_whose_end_never_came_end_aborted_with_it():
    """A match whose worker was lost is played again under its id; when the run stopped
    before that (a cancel, a failure), or a stopping worker's last messages went unread,
    it stayed live for good: listed live, shown by TV for ever, its viewers waiting. The
    tournament's end ends them, aborted; the others' ends are kept as they came."""
    async def go():
        h = hub.SpectatorHub()
        log = h.tournament("cup", ["a", "b"], 4)
        follower, _ = h.follow_tournament(log)
        for m in ("done", "lost"):
            h.match_started(pb.MatchSummary(match_id=m, tournament="cup", names=["a", "b"],
                                            status=pb.MATCH_STATUS_LIVE))
            h.frame(m, pb.MatchFrame(seq=0))
        h.match_started(pb.MatchSummary(match_id="other", tournament="another",
                                        status=pb.MATCH_STATUS_LIVE))
        h.frame("other", pb.MatchFrame(seq=0))
        viewer, _ = h.subscribe("lost")
        h.match_ended("done", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        h.tournament_finished("cup")
        status = {s.match_id: s.status for s in h.summaries()}
        return status, _feed(viewer), _feed(follower), h

    status, feed, followed, h = asyncio.run(go())
    assert status == {"done": pb.MATCH_STATUS_FINISHED, "lost": pb.MATCH_STATUS_ABORTED,
                      "other": pb.MATCH_STATUS_LIVE}
    assert feed == ["over", None]
    assert followed[-2:] == ["over", None]
    assert h.best_live() is h.matches["other"]       # TV no longer shows the lost one
    over = h.matches["lost"].over
    assert over.termination == "aborted" and [list(x.cards) for x in over.hands] == [[], []]


def test_a_lost_attempt_s_late_messages_change_nothing():
    """A frame, verdict or end of an attempt that was lost, come after the match was
    played again under its id (or after it ended), is not the attempt's own: it was
    appended to it (two attempts' frames in one match) or ended it twice."""
    async def go():
        h = _playing(hub.SpectatorHub(recent=5), frames=3)
        h.match_started(pb.MatchSummary(match_id="m", names=["a", "b"],   # played again
                                        status=pb.MATCH_STATUS_LIVE))
        h.frame("m", pb.MatchFrame(seq=0))
        viewer, _ = h.subscribe("m")
        h.frame("m", pb.MatchFrame(seq=3))                 # the lost attempt's, late
        h.frame("m", pb.MatchFrame(seq=1))
        over = pb.MatchOver(status=pb.MATCH_STATUS_FINISHED, turns=1)
        h.match_ended("m", over)
        h.frame("m", pb.MatchFrame(seq=2))                 # after its end
        h.verdict("m", referee_pb2.Verdict(seat=0, kind=referee_pb2.VERDICT_KIND_TIMEOUT))
        h.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_ABORTED))
        return h.matches["m"], _feed(viewer), list(h._recent)

    match, feed, recent = asyncio.run(go())
    assert [f.seq for f in match.frames] == [0, 1] and match.verdicts == []
    assert match.summary.status == pb.MATCH_STATUS_FINISHED and match.summary.turns == 1
    assert feed == ["frame", "over", None]
    assert recent == ["m"]


def test_the_bus_goes_on_after_a_message_the_hub_cannot_take(caplog):
    """What fails in the hub as a batch is delivered (here: bytes that are no frame) is
    logged once for its match, and the batch goes on: it stopped a multi-process run, and
    ended a Ray actor's stream, its matches unseen from then on."""
    from arena.watch.bus import Bus

    h = hub.SpectatorHub()
    bus = Bus(h, "cup")
    start = pb.MatchSummary(match_id="m", names=["a", "b"], status=pb.MATCH_STATUS_LIVE)
    frame = pb.MatchFrame(seq=0).SerializeToString()
    over = pb.MatchOver(status=pb.MATCH_STATUS_FINISHED).SerializeToString()
    bus.deliver([("start", "m", start.SerializeToString(), None),
                 ("frame", "m", b"\xff\xff\xff", None), ("frame", "m", b"\xff\xff\xff", None),
                 ("frame", "m", frame, None), ("over", "m", over, None)])
    match = h.matches["m"]
    assert len(match.frames) == 1 and match.over is not None
    said = [r for r in caplog.records if r.name == "arena.watch.bus"]
    assert [r.getMessage() for r in said] == ["the spectator hub failed on a frame of match m"]


def _state(total: int, seq: int = 0, seats: int = 2) -> pb.MatchFrame:
    frame = pb.MatchFrame(seq=seq)
    frame.state.total = total
    for _ in range(seats):
        frame.state.seats.add(in_game=True)
    return frame


def test_viewers_held_behind_share_one_snapshot_as_of_a_frame_and_no_clock_is_shared():
    """TV's viewers all switch to the next match at once, and each built (and had gRPC
    encode) the same snapshot of it: 1,000 of them, a twentieth of the server's samples
    in a profile. A snapshot with no clock in it (held behind, or of the match over) is
    made once as of a frame; the live turn's clock is each viewer's own."""
    async def go():
        h = _playing(hub.SpectatorHub(min_delay=2), frames=4)
        first = [h.subscribe("m", reason="tv")[1] for _ in range(50)]
        further = h.subscribe("m", delay=3, reason="tv")[1]
        joined = h.subscribe("m")[1]
        h.frame("m", pb.MatchFrame(seq=4))
        after = h.subscribe("m", reason="tv")[1]
        for seq in range(5, 60):
            h.frame("m", pb.MatchFrame(seq=seq))
        many = [h.subscribe("m", delay=d)[1] for d in range(2, 2 + 2 * hub.SHARED_SNAPSHOTS)]
        again = [h.subscribe("m", delay=d)[1] for d in range(2, 2 + 2 * hub.SHARED_SNAPSHOTS)]
        h.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        ended = [h.subscribe("m", delay=d, reason="tv")[1] for d in (0, 2, 7)]
        return first, further, joined, after, many, again, ended

    first, further, joined, after, many, again, ended = asyncio.run(go())
    assert all(s is first[0] for s in first)
    assert [f.seq for f in first[0].frames] == [0, 1] and first[0].delayed == 2
    assert further is not first[0] and [f.seq for f in further.frames] == [0]
    assert joined is not first[0] and joined.reason == "join"
    assert after is not first[0] and [f.seq for f in after.frames] == [0, 1, 2]
    # as many shared as SHARED_SNAPSHOTS; the rest made for each viewer, as before
    shared = sum(a is b for a, b in zip(many, again))
    assert shared == hub.SHARED_SNAPSHOTS
    assert [len(s.frames) for s in again] == [len(s.frames) for s in many]
    assert ended[0] is ended[1] is ended[2] and ended[0].HasField("over")

    live = hub.SpectatorHub()
    live.match_started(pb.MatchSummary(match_id="m", names=["a", "b"]))
    live.frame("m", pb.MatchFrame(seq=0))
    live.matches["m"].last_frame -= 3.0
    one, other = live.subscribe("m")[1], live.subscribe("m")[1]
    assert one is not other and one.open_turn_ms >= 3000


def test_the_best_live_match_is_looked_for_again_after_every_frame_start_and_end():
    """TV's viewers ask for the best live match at once; the answer is kept only until a
    match has a frame, starts or ends."""
    h = hub.SpectatorHub()
    for m in ("a", "b"):
        h.match_started(pb.MatchSummary(match_id=m, status=pb.MATCH_STATUS_LIVE))
    h.frame("a", _state(90))
    h.frame("b", _state(10))
    assert h.best_live().match_id == "a" and h.best_live().match_id == "a"
    h.frame("b", _state(95, seq=1))
    assert h.best_live().match_id == "b"
    h.match_ended("b", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
    assert h.best_live().match_id == "a"
    h.match_started(pb.MatchSummary(match_id="c", tournament="cup", status=pb.MATCH_STATUS_LIVE))
    assert h.best_live("cup") is None
    h.frame("c", _state(5))
    assert h.best_live("cup").match_id == "c" and h.best_live().match_id == "a"


def test_a_shared_message_is_encoded_once():
    from arena.watch import wire

    made = []
    encodings = wire.Encodings(lambda s: made.append(s) or wire.snapshot_feed(s), keep=2)
    snaps = [pb.MatchSnapshot(reason=str(i)) for i in range(3)]
    first = encodings.encoded(snaps[0])
    assert encodings.encoded(snaps[0]) is first and len(made) == 1
    assert first == wire.snapshot_feed(snaps[0]).SerializeToString()
    encodings.encoded(snaps[1])
    encodings.encoded(snaps[0])                       # used lately: kept
    encodings.encoded(snaps[2])                       # the one used least lately goes
    assert encodings.encoded(snaps[0]) is first and len(made) == 3
    encodings.encoded(snaps[1])
    assert len(made) == 4


def test_tv_streams_asking_for_made_up_tournaments_leave_nothing_kept():
    """The best live match was kept for any name a TV stream gave: on a server playing
    nothing, 500 streams with names of 60,000 characters left 30 MB (review 43)."""
    h = hub.SpectatorHub()
    h.tournament("cup", ["a", "b"], 2)
    for i in range(100):
        assert h.best_live(f"nope{i}") is None
    assert h.best_live("cup") is None and h.best_live() is None
    assert set(h._best) == {"cup", ""}


def test_at_a_match_s_end_viewers_held_alike_share_its_messages():
    """At the end, each viewer held behind was made its own messages of the frames held
    back, the verdicts and the end (1,000 viewers 5 frames behind: 26-41 us a viewer, and
    every frame encoded for each). Viewers held alike share them; the organiser's frames,
    with the hands, are its own."""
    async def go():
        h = _playing(hub.SpectatorHub(min_delay=2, organiser_view=True), frames=0)
        for seq in range(6):
            h.frame("m", pb.MatchFrame(seq=seq), hands=((), ()))
        h.verdict("m", referee_pb2.Verdict(seat=1, kind=referee_pb2.VERDICT_KIND_TIMEOUT))
        subs = [h.subscribe("m")[0] for _ in range(3)] + [h.subscribe("m", delay=4)[0],
                                                          h.subscribe("m", delay=2, hands=True)[0]]
        h.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        return [s.drain() for s in subs]

    one, two, three, four, organiser = asyncio.run(go())
    kinds = [None if m is None else m.WhichOneof("kind") for m in one]
    assert kinds == ["frame", "frame", "verdict", "over", None]
    assert [m.frame.seq for m in one[:2]] == [4, 5] and [m.frame.seq for m in four[:4]] == [2, 3, 4, 5]
    assert all(a is b is c for a, b, c in zip(one, two, three))
    assert four[4] is one[2] and four[5] is one[3]                 # the verdict, the end
    assert organiser[0].frame.seq == 4 and len(organiser[0].frame.hands) == 2
    assert not one[0].frame.hands


def test_an_end_queued_is_kept_whatever_comes_after_it():
    """A stream's end (STOPPING as the service stops) was emptied out with the queue by a
    frame that overflowed it after the stop: the stream went on from a fresh snapshot
    (review 43). Nothing is queued after an end."""
    sub = Subscription()
    for seq in range(hub.QUEUE - 1):
        sub.push(pb.MatchFeed(frame=pb.MatchFrame(seq=seq)))
    sub.push(hub.STOPPING)
    sub.push(pb.MatchFeed(frame=pb.MatchFrame(seq=hub.QUEUE)))      # would overflow
    sub.push(None)
    items = sub.drain()
    assert len(items) == hub.QUEUE and items[-1] is hub.STOPPING
    # nor by a resync (the match played again under its id as the service stops)
    other = Subscription()
    other.push(pb.MatchFeed(frame=pb.MatchFrame(seq=0)))
    other.push(hub.STOPPING)
    other.resync()
    assert other.drain() == [hub.RESYNC, hub.STOPPING]


def test_only_the_match_over_last_keeps_its_shared_snapshots():
    """Each of the 100 recent matches kept a shared snapshot a reason for good: 86 MB
    more for 100 finished 8-seat matches of 400 frames (review 43). TV shows the match
    over last; the ones before it let theirs go."""
    h = hub.SpectatorHub(min_delay=2)
    for m in ("first", "second"):
        h.match_started(pb.MatchSummary(match_id=m, names=["a", "b"], status=pb.MATCH_STATUS_LIVE))
        h.frame(m, pb.MatchFrame(seq=0))
        h.match_ended(m, pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
        assert h.subscribe(m, reason="tv")[1] is h.subscribe(m, reason="tv")[1]
    assert h.subscribe("first", reason="tv")[1] is not h.subscribe("first", reason="tv")[1]
    assert not h.matches["first"]._shared and h.matches["second"]._shared
