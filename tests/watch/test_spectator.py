"""The spectator service over the wire: a real gRPC server on a free port, matches played
by the real runner (house seats that take a few milliseconds a move, so a viewer can join
while they run), viewers that are plain gRPC clients.

The information test checks every spectator message against the replayed game: every
frame's state is the engine's spectator view at that moment; every card in every message
is in a field the rules make public (a card played, a hand laid face up, the hands shown
at the end), or in the organiser's view; no number in any message is the deal's seed."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from ono99.v1 import referee_pb2, spectator_pb2 as pb, spectator_pb2_grpc

from arena.referee import wire as referee_wire
from arena.referee.house import FirstLegal, HouseSession
from arena.referee.listeners import Frame
from arena.referee.runner import MatchRunner
from arena.rules.events import FORFEIT, PLAY, decisions
from arena.rules.game import Game
from arena.watch import wire
from arena.tournament.standings import Played
from arena.watch.hub import QUEUE, RESYNC, SpectatorHub, TournamentLog
from arena.watch.server import SpectatorServer
from support.matches import RULESETS, live_match, spec

TOKEN = "the-organiser-token"


class Slow(HouseSession):
    """A house seat that thinks for a few milliseconds: matches last long enough to join."""

    async def next_action(self, timeout):
        await asyncio.sleep(0.003)
        return await super().next_action(timeout)


async def serve(organiser: bool = False, min_delay: int = 0):
    from arena.referee.lobby import token_hash

    hub = SpectatorHub(organiser_view=organiser, min_delay=min_delay)
    server = await SpectatorServer.start(hub, "127.0.0.1:0",
                                         organizer_hash=token_hash(TOKEN) if organiser else None)
    return hub, server


def start_match(hub: SpectatorHub, the_spec, tournament: str = ""):
    sessions = [Slow(FirstLegal()) for _ in the_spec.names]
    runner = MatchRunner(the_spec, sessions, [hub.listener(tournament)])
    return runner, asyncio.create_task(runner.run())


async def watch(address: str, request: pb.WatchMatchRequest, token: str | None = None,
                limit: int = 100_000) -> list[pb.MatchFeed]:
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    async with grpc.aio.insecure_channel(address) as channel:
        stub = spectator_pb2_grpc.SpectatorStub(channel)
        out = []
        async for msg in stub.WatchMatch(request, metadata=metadata):
            out.append(msg)
            if len(out) >= limit:
                break
        return out


def frames_of(feed: list[pb.MatchFeed]) -> list[pb.MatchFrame]:
    """The frames a viewer saw, in order, each once (snapshots then frames)."""
    frames: dict[int, pb.MatchFrame] = {}
    for msg in feed:
        if msg.HasField("snapshot"):
            for f in msg.snapshot.frames:
                frames[f.seq] = f
        for f in [msg.frame] if msg.HasField("frame") else msg.frames.frames:
            assert f.seq not in frames, f"frame {f.seq} sent twice"
            frames[f.seq] = f
    assert sorted(frames) == list(range(len(frames)))
    return [frames[i] for i in range(len(frames))]


def replayed_frames(the_spec, events) -> tuple[list[pb.MatchFrame], list[tuple]]:
    """The frames the game makes, replayed from its seed: (public frames, hands per frame)."""
    game = Game.from_config(the_spec.config, the_spec.seed)
    states = referee_wire.SeatStatesCache()
    hands = [tuple(game.hand(s) for s in range(game.seats))]
    out = [wire.frame(Frame("", 0, tuple(game.events), game.spectator_view(), None, None, (), 0), states)]
    done = len(game.events)
    for d in decisions(events):
        game.play(d[1], d[2]) if d[0] == PLAY else game.forfeit(d[1])
        assert d[0] in (PLAY, FORFEIT)
        out.append(wire.frame(Frame("", len(out), tuple(game.events[done:]), game.spectator_view(),
                                    d[1] if d[0] == PLAY else None, None, (), 0), states))
        hands.append(tuple(game.hand(s) for s in range(game.seats)))
        done = len(game.events)
    return out, hands


PUBLIC_CARD_FIELDS = {             # (message field, its field holding the card)
    ("card_played", "card"),        # a card played
    ("seat_eliminated", "hand"),    # a hand laid face up
    ("out_of_round", "card"),       # a card played past the limit
    ("seats", "revealed"),          # the same hand, in the state
    ("over", "hands"),              # every hand, once the match is over
}


def cards_in(msg, path=()) -> list[tuple[tuple, int]]:
    """Every Card value in a message, with the path of message types and fields to it."""
    found = []
    for field, value in msg.ListFields():
        if _is_map(field):   # rules' options: text
            continue
        where = path + (field.name,)
        if field.enum_type is not None and field.enum_type.name == "Card":
            values = value if field.is_repeated else [value]
            found += [(where, v) for v in values]
        elif field.message_type is not None:
            items = value if field.is_repeated else [value]
            for item in items:
                found += cards_in(item, where + (type(item).__name__,))
    return found


def numbers_in(msg) -> list[int]:
    out = []
    for field, value in msg.ListFields():
        if _is_map(field):
            continue
        items = value if field.is_repeated else [value]
        for item in items:
            if field.message_type is not None:
                out += numbers_in(item)
            elif isinstance(item, int):
                out.append(item)
    return out


def _is_map(field) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def public_card(path: tuple) -> bool:
    names = path[0::2]   # the path alternates field names and message types
    return bool(set(zip(names, names[1:])) & PUBLIC_CARD_FIELDS)


@pytest.mark.parametrize("ruleset, options", RULESETS)
@pytest.mark.parametrize("seats", [2, 4])
def test_spectators_see_what_is_public_and_nothing_more(ruleset, options, seats):
    the_spec = spec([f"b{i}" for i in range(seats)], ruleset, seed=9_876_543_210 + seats, options=options)

    async def go():
        hub, server = await serve()
        try:
            runner, task = start_match(hub, the_spec)
            await asyncio.sleep(0.02)     # join while it runs
            feed = await watch(server.address, pb.WatchMatchRequest(match_id=the_spec.match_id))
            result = await task
            return feed, result
        finally:
            await server.stop()

    feed, result = asyncio.run(go())
    assert feed[0].HasField("snapshot") and feed[0].snapshot.reason == "join"
    assert feed[-1].HasField("over")
    assert any(m.HasField("frame") for m in feed), "joined too late to see it live"
    seen = frames_of(feed)
    expected, _ = replayed_frames(the_spec, result.events)
    for got, want in zip(seen, expected):
        assert got.events == want.events and got.state == want.state
        assert not got.hands
    assert len(seen) == len(expected)
    for msg in feed:
        for path, card in cards_in(msg):
            assert public_card(path), f"a card in a non-public field: {path}"
        assert the_spec.seed not in numbers_in(msg)
    over = feed[-1].over
    assert [list(p.seats) for p in over.ranking] == [list(g) for g in result.ranking]
    assert [list(h.cards) for h in over.hands] == [
        referee_wire.cards_to_wire(h) for h in
        (tuple(result_hand) for result_hand in _final_hands(the_spec, result.events))]


def _final_hands(the_spec, events):
    game = Game.from_config(the_spec.config, the_spec.seed)
    for d in decisions(events):
        game.play(d[1], d[2]) if d[0] == PLAY else game.forfeit(d[1])
    return [tuple(game.hands[s]) if game.hands[s] is not None else tuple(game.revealed.get(s, ()))
            for s in range(game.seats)]


def test_the_organiser_view_needs_the_token_and_shows_every_hand():
    the_spec = spec(["a", "b", "c"], seed=77)

    async def go():
        hub, server = await serve(organiser=True)
        try:
            runner, task = start_match(hub, the_spec)
            await asyncio.sleep(0.02)
            request = pb.WatchMatchRequest(match_id=the_spec.match_id, organizer_view=True)
            errors = []
            for token in (None, "wrong"):
                with pytest.raises(grpc.aio.AioRpcError) as exc:
                    await watch(server.address, request, token)
                errors.append((exc.value.code(), exc.value.details()))
            feed = await watch(server.address, request, TOKEN)
            public = await watch(server.address, pb.WatchMatchRequest(match_id=the_spec.match_id))
            return errors, feed, public, await task
        finally:
            await server.stop()

    errors, feed, public, result = asyncio.run(go())
    assert [code for code, _ in errors] == [grpc.StatusCode.UNAUTHENTICATED] * 2
    assert "needs the organiser token" in errors[0][1]
    assert "the organiser token given is not this arena's" in errors[1][1]
    _, hands = replayed_frames(the_spec, result.events)
    seen = frames_of(feed)
    assert [[tuple(c - 1 for c in h.cards) for h in f.hands] for f in seen] == [list(h) for h in hands]
    assert all(not f.hands for f in frames_of(public))


def test_a_viewer_without_the_organiser_view_on_a_server_without_one_is_told_why():
    async def go():
        hub, server = await serve(organiser=False)
        try:
            runner, task = start_match(hub, spec(["a", "b"], seed=3))
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await watch(server.address, pb.WatchMatchRequest(
                    match_id=runner.spec.match_id, organizer_view=True), TOKEN)
            await task
            return exc.value
        finally:
            await server.stop()

    error = asyncio.run(go())
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "no organiser view" in error.details()


def test_a_delayed_viewer_stays_behind_until_the_end():
    """The server's minimum delay (3) beats the viewer's ask (1): while the match runs every
    frame reaches the viewer at least 3 behind the match; at the end the rest follow."""
    the_spec = spec(["a", "b", "c", "d"], seed=21)

    async def go():
        hub, server = await serve(min_delay=3)
        try:
            runner, task = start_match(hub, the_spec)
            await asyncio.sleep(0.03)
            feed = []   # (message, frames the match had, match over) when it arrived
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                async for msg in stub.WatchMatch(pb.WatchMatchRequest(match_id=the_spec.match_id,
                                                                      delay_turns=1)):
                    match = hub.matches[the_spec.match_id]
                    feed.append((msg, len(match.frames), match.over is not None))
            return feed, await task
        finally:
            await server.stop()

    feed, result = asyncio.run(go())
    snapshot, live, _ = feed[0]
    assert snapshot.snapshot.delayed == 3 and len(snapshot.snapshot.frames) <= live - 3
    assert not snapshot.snapshot.verdicts
    while_live = [(f.seq, live) for m, live, over in feed if not over
                  for f in ([m.frame] if m.HasField("frame") else m.frames.frames)]
    assert while_live, "the match ended before a frame was sent live"
    assert all(seq <= live - 4 for seq, live in while_live)
    assert len(frames_of([m for m, _, _ in feed])) == len(hub_frames(result))
    assert feed[-1][0].HasField("over")


def hub_frames(result):
    return [None] + decisions(result.events)


def test_a_viewer_that_falls_behind_is_resynced_not_buffered():
    hub = SpectatorHub()
    the_spec = spec(["a", "b"], seed=5)

    async def go():
        runner, task = start_match(hub, the_spec)
        while the_spec.match_id not in hub.matches or not hub.matches[the_spec.match_id].frames:
            await asyncio.sleep(0.001)
        sub, snapshot = hub.subscribe(the_spec.match_id)
        match = hub.matches[the_spec.match_id]
        for i in range(QUEUE + 10):   # a flood the viewer does not read
            hub.frame(the_spec.match_id, pb.MatchFrame(seq=len(match.frames),
                                                       state=match.frames[-1].state))
        items = sub.drain()
        task.cancel()
        return sub, items

    sub, items = asyncio.run(go())
    assert items[0] is RESYNC and sub.resyncs >= 1
    assert len(items) <= QUEUE


def test_viewers_held_the_same_frames_behind_share_each_frame_message():
    """Behind a server's delay every viewer of a match is held back: each frame was made
    into a message of its own for each of them (a thousand TV viewers, a thousand
    messages a frame). Viewers at one delay now share one; the organiser's are its own."""
    hub = SpectatorHub(organiser_view=True, min_delay=2)

    async def go():
        hub.match_started(pb.MatchSummary(match_id="m", names=["a", "b"]))
        for seq in range(5):
            hub.frame("m", pb.MatchFrame(seq=seq), hands=((), ()))
        subs = [hub.subscribe("m", delay)[0] for delay in (0, 2, 2, 4, 4)]
        hands = hub.subscribe("m", 2, hands=True)[0]
        for seq in range(5, 8):
            hub.frame("m", pb.MatchFrame(seq=seq), hands=((), ()))
        return [s.drain()[:3] for s in subs + [hands]]

    least, two, also_two, four, also_four, organiser = asyncio.run(go())
    assert [f.frame.seq for f in least] == [f.frame.seq for f in two]   # the minimum: 2
    assert all(a is b for a, b in zip(two, also_two)) and all(a is b for a, b in zip(four, also_four))
    assert [f.frame.seq + 2 for f in four] == [f.frame.seq for f in two]
    assert all(a is not b for a, b in zip(two, organiser))


def test_records_of_stored_matches_are_made_one_at_a_time_and_kept(tmp_path):
    """A stored match's record is a replay, and anyone may ask for one: four loops of
    GetRecord from one client cut a server's ladder from 57 matches a second to 8, the
    replays made on its event loop. They are now made in a thread, one at a time with a
    rest after each; at most RECORD_QUEUE requests wait, more are refused at once; the
    last ones are kept."""
    from arena.store import open_store
    from arena.watch.records import StoreRecords, from_store
    from arena.watch.servicer import RECORD_QUEUE
    from support.matches import store_ladder

    db = tmp_path / "arena.db"
    store_ladder(db, 4, 3 * RECORD_QUEUE)
    store = open_store(str(db))
    records = StoreRecords(store)
    ids = [m.match_uid for m in store.matches(store.tournament("ladder"))]

    async def go():
        server = await SpectatorServer.start(SpectatorHub(), "127.0.0.1:0", records)
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                first = await stub.GetRecord(pb.GetRecordRequest(match_id=ids[0]))
                again = await stub.GetRecord(pb.GetRecordRequest(match_id=ids[0]))
                answers = await asyncio.gather(
                    *(stub.GetRecord(pb.GetRecordRequest(match_id=i)) for i in ids[1:]),
                    return_exceptions=True)
            return first, again, answers
        finally:
            await server.stop()

    try:
        first, again, answers = asyncio.run(go())
        assert first == again == from_store(store, store.match_by_uid(ids[0]))
        made = {i: a for i, a in zip(ids[1:], answers) if isinstance(a, pb.MatchSnapshot)}
        refused = [a for a in answers if not isinstance(a, pb.MatchSnapshot)]
        assert len(made) >= RECORD_QUEUE and refused, (len(made), refused[:1])
        assert all(a.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and
                   f"{RECORD_QUEUE} records are being made already" in a.details() for a in refused)
        assert all(made[i] == from_store(store, store.match_by_uid(i)) for i in list(made)[:5])
        assert records._own is None                   # its connection closed with the server
    finally:
        store.close()


@pytest.mark.parametrize("queued", [QUEUE - 1, QUEUE])
def test_a_viewer_resynced_as_the_match_ends_still_gets_the_end(queued):
    """The end of the stream (None) comes right after the match's over: with the queue one
    short of full, the over filled it and the end overflowed it, and was dropped with what
    the resync replaced; the stream then never ended (a match viewer waited for ever, TV
    stayed on the finished match)."""
    hub = SpectatorHub()
    hub.match_started(pb.MatchSummary(match_id="m", names=["a", "b"]))
    hub.frame("m", pb.MatchFrame(seq=0))
    sub, _ = hub.subscribe("m")
    for i in range(queued):   # frames the viewer has not read
        hub.frame("m", pb.MatchFrame(seq=1 + i))
    hub.match_ended("m", pb.MatchOver(turns=queued))
    items = sub.drain()
    assert RESYNC in items and items[-1] is None


def test_a_viewer_behind_costs_nothing_until_it_reads_then_is_fed_again():
    """A viewer whose queue overflowed was sent on: each frame made its queue overflow
    again every QUEUE frames (emptied, a RESYNC queued), for as long as it did not read:
    1,500 such viewers cost 659 us a frame. Behind, it is left out of every frame until
    it takes its RESYNC; its fresh snapshot holds all it missed, and it is fed again."""
    hub = SpectatorHub()
    hub.match_started(pb.MatchSummary(match_id="m", names=["a", "b"]))
    hub.frame("m", pb.MatchFrame(seq=0))
    sub, _ = hub.subscribe("m")
    match = hub.matches["m"]
    for i in range(3 * QUEUE):   # frames the viewer does not read
        hub.frame("m", pb.MatchFrame(seq=1 + i))
    assert sub.behind and sub.resyncs == 1 and len(sub.items) == 1
    assert sub not in match.viewers and sub in match.behind
    assert sub.items.popleft() is RESYNC
    again = hub.resnapshot("m", sub)                      # the viewer takes it
    assert again.frames[-1].seq == 3 * QUEUE and not sub.behind and sub in match.viewers
    hub.frame("m", pb.MatchFrame(seq=3 * QUEUE + 1))
    assert sub.items.popleft().frame.seq == 3 * QUEUE + 1
    for i in range(QUEUE + 1):   # behind again, as the match ends: the RESYNC, then the end
        hub.frame("m", pb.MatchFrame(seq=3 * QUEUE + 2 + i))
    hub.match_ended("m", pb.MatchOver())
    assert sub.drain() == [RESYNC, None]
    assert hub.resnapshot("m", sub).HasField("over")


def test_list_matches_and_records_of_finished_ones():
    specs = [spec(["a", "b"], seed=s) for s in (1, 2, 3)]

    async def go():
        hub, server = await serve()
        try:
            for s in specs:
                _, task = start_match(hub, s, tournament="cup")
                await task
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                listed = await stub.ListMatches(pb.ListMatchesRequest())
                record = await stub.GetRecord(pb.GetRecordRequest(match_id=specs[0].match_id))
                with pytest.raises(grpc.aio.AioRpcError) as exc:
                    await stub.GetRecord(pb.GetRecordRequest(match_id="nope"))
            return listed, record, exc.value
        finally:
            await server.stop()

    listed, record, missing = asyncio.run(go())
    assert [m.match_id for m in listed.matches] == [s.match_id for s in reversed(specs)]
    assert all(m.status == pb.MATCH_STATUS_FINISHED and m.tournament == "cup" for m in listed.matches)
    assert record.reason == "record" and record.HasField("over") and record.frames
    assert missing.code() == grpc.StatusCode.NOT_FOUND


def test_a_negative_count_is_refused():
    """ListMatches took recent=-5 for "all finished matches but the last 5"; a negative
    delay was taken for none. Both are INVALID_ARGUMENT (found by the fuzzer)."""
    async def go():
        hub, server = await serve()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                calls = [stub.ListMatches(pb.ListMatchesRequest(recent=-5)),
                         stub.WatchMatch(pb.WatchMatchRequest(match_id="m", delay_turns=-1)),
                         stub.WatchTV(pb.WatchTVRequest(delay_turns=-(2**31)))]
                got = []
                for call in calls:
                    with pytest.raises(grpc.aio.AioRpcError) as exc:
                        await (call.read() if hasattr(call, "read") else call)
                    got.append((exc.value.code(), exc.value.details()))
                return got
        finally:
            await server.stop()

    got = asyncio.run(go())
    assert [code for code, _ in got] == [grpc.StatusCode.INVALID_ARGUMENT] * 3
    assert [d.split(" is")[0] for _, d in got] == ["recent=-5", "delay_turns=-1", "delay_turns=-2147483648"]


def test_the_match_list_shows_a_live_match_as_far_as_the_delay_lets_anyone_see():
    """With a spectator delay, ListMatches gave the current turn and interest: what the
    delay holds back (found by a red-team review)."""
    the_spec = spec(["a", "b"], seed=5)

    async def go():
        hub, server = await serve(min_delay=4)
        try:
            _, task = start_match(hub, the_spec)
            match = None
            while match is None or len(match.frames) < 8:
                await asyncio.sleep(0.005)
                match = hub.matches.get(the_spec.match_id)
            async with grpc.aio.insecure_channel(server.address) as channel:
                listed = await spectator_pb2_grpc.SpectatorStub(channel).ListMatches(
                    pb.ListMatchesRequest())
                frames = list(match.frames)
            await task
            return listed.matches[0], frames, match
        finally:
            await server.stop()

    listed, frames, match = asyncio.run(go())
    # frames may have come between the listing and the copy: never more than the delay lets
    assert listed.turns <= frames[-1].seq - 4 and listed.turns in [f.seq for f in frames]


def test_tv_waiting_for_one_tournament_is_woken_only_by_its_matches_and_leaves_nothing():
    """Every TV waiter woke at every match start and scanned every match: 5,000 waiters
    for a tournament that never plays made each start stall the loop for half a second."""
    async def go():
        hub = SpectatorHub()
        waiting = [asyncio.create_task(hub.next_live("nope", timeout=0.6)) for _ in range(50)]
        anyone = asyncio.create_task(hub.next_live("", timeout=5))
        await asyncio.sleep(0.05)
        assert set(hub._arrivals) == {"nope", ""} and hub._arrivals["nope"][1] == 50
        runner, task = start_match(hub, spec(["a", "b"], seed=3), tournament="cup")
        shown = await anyone
        assert shown is not None and shown.summary.match_id == runner.spec.match_id
        assert not hub._arrivals["nope"][0].done()          # not woken by the cup's match
        assert await asyncio.gather(*waiting) == [None] * 50
        await task
        assert hub._arrivals == {}                          # no one waits: nothing kept

    asyncio.run(go())


def test_tv_waiting_shows_a_match_whose_first_frame_comes_late():
    """Waiters were woken by a match's start, and one that found no frame yet (a referee
    slow to send the first, on a loaded machine) waited for the next start: for ever, for
    the last match. They are woken by the first frame."""
    async def go():
        hub = SpectatorHub()
        waiting = asyncio.create_task(hub.next_live("", timeout=3))
        await asyncio.sleep(0.05)
        hub.match_started(pb.MatchSummary(match_id="m", names=["a", "b"]))
        await asyncio.sleep(0.3)   # longer than a waiter's pause after it is woken
        hub.frame("m", pb.MatchFrame(seq=0))
        return await waiting

    shown = asyncio.run(go())
    assert shown is not None and shown.summary.match_id == "m"


def tv_of_fast_matches(matches: int, gap_s: float) -> list[tuple[str, float, pb.MatchSnapshot]]:
    """A TV viewer, then ``matches`` matches of instant house bots one at a time, ``gap_s``
    apart (each after TV has shown the one before): each match's id, how long it took, and
    the snapshot TV sent next."""
    async def go():
        hub, server = await serve()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = spectator_pb2_grpc.SpectatorStub(channel).WatchTV(pb.WatchTVRequest())
                async with asyncio.timeout(10):   # TV is waiting (0.2 s was too short once)
                    while not hub.waiting_for_live():
                        await asyncio.sleep(0.01)
                shown = []
                for n in range(matches):
                    the_spec = spec(["a", "b"], seed=n)
                    runner = MatchRunner(the_spec, [HouseSession(FirstLegal()) for _ in "ab"],
                                         [hub.listener("ladder")])
                    started = time.monotonic()
                    await runner.run()                       # over before TV looks again
                    took = time.monotonic() - started
                    assert not hub.best_live()
                    async with asyncio.timeout(10):
                        while (msg := await call.read()).HasField("snapshot") is False:
                            pass
                    shown.append((the_spec.match_id, took, msg.snapshot))
                    await asyncio.sleep(gap_s)
                call.cancel()
                return shown
        finally:
            await server.stop()

    return asyncio.run(go())


def test_tv_shows_a_match_that_ended_before_it_looked_when_matches_do_not_overlap(monkeypatch):
    """A server's ladder plays one match at a time, with a pause to start its bots between
    matches, and between fast bots a match lasts a few ms: TV, woken by a match's first
    frame, looked again after its pause for the matches starting with it and found none
    live, so `arena watch --tv` on a ladder showed nothing, for ever. It shows the match
    that woke it, over by then, and then waits for the next."""
    from arena.watch import servicer
    monkeypatch.setattr(servicer, "TV_PAUSE_S", 0.1)

    for match_id, _, snapshot in tv_of_fast_matches(2, gap_s=0.3):  # past TV's pause
        assert snapshot.match.match_id == match_id and snapshot.reason == "tv"
        assert snapshot.frames and snapshot.HasField("over")


def test_viewers_beyond_the_cap_are_refused_and_the_others_go_on(monkeypatch):
    from arena.watch import servicer
    monkeypatch.setattr(servicer, "MAX_VIEWERS", 3)

    async def go():
        hub, server = await serve()
        try:
            async with live_match(hub), grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                held = [stub.WatchTV(pb.WatchTVRequest()) for _ in range(3)]
                for call in held:   # each is a viewer once its snapshot came
                    assert (await call.read()).HasField("snapshot")
                with pytest.raises(grpc.aio.AioRpcError) as exc:
                    await stub.WatchTV(pb.WatchTVRequest()).read()
                listed = await stub.ListMatches(pb.ListMatchesRequest())   # not a viewer
                held[0].cancel()
                await asyncio.sleep(0.3)
                again = stub.WatchTV(pb.WatchTVRequest())
                first = await again.read()                   # a seat was free again
                for call in held + [again]:
                    call.cancel()
                return exc.value, listed, first
        finally:
            await server.stop()

    refused, listed, first = asyncio.run(go())
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "3 viewers already" in refused.details()
    assert len(listed.matches) == 1 and first.HasField("snapshot")


def test_tv_shows_a_match_that_started_and_ended_during_its_pause(monkeypatch):
    """After a match, TV pauses (TV_PAUSE_S), then shows the best live match or waits for
    the next to start. A match that started and ended within the pause, as between fast
    bots on a ladder, was skipped: TV showed every other match. It shows it now."""
    from arena.watch import servicer
    monkeypatch.setattr(servicer, "TV_PAUSE_S", 1.0)

    # the next match is played at once: within TV's pause after the one it has just shown
    shown = tv_of_fast_matches(3, gap_s=0)
    assert all(took < 0.5 for _, took, _ in shown)            # each well within the pause
    assert [s.match.match_id for _, _, s in shown] == [match_id for match_id, _, _ in shown]
    assert all(s.reason == "tv" and s.HasField("over") for _, _, s in shown)


@pytest.mark.parametrize("asked,followed", [("ladder", "ladder"), ("", "cup")])
def test_a_viewer_of_a_tournament_still_coming_waits_for_it_and_then_follows_it(asked, followed):
    """A server's ladder is followed once it has read its stored matches (seconds on a long
    ladder): a viewer asking for it meanwhile was told there was no such tournament. Now it
    waits, within the viewers' caps, and gets the ladder's snapshot once it is there. A
    viewer with no name (the tournament running) gets whichever is followed first: it
    waited for the ladder alone, though a tournament started meanwhile. A tournament
    neither followed nor coming is still NOT_FOUND."""

    async def go():
        hub, server = await serve()
        hub.coming("ladder")
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                call = stub.WatchTournament(pb.WatchTournamentRequest(name=asked))
                first = asyncio.ensure_future(call.read())
                done, _ = await asyncio.wait([first], timeout=2)   # the old code: NOT_FOUND at once
                waited = not done
                if followed == "ladder":
                    played = [Played("k1", ("a", "b"), (1, 2), "s1")]
                    hub.follow(TournamentLog("ladder", ["a", "b"], 0, played))
                else:
                    hub.tournament("cup", ["a", "b"], 4)
                snapshot = await asyncio.wait_for(first, 30)
                call.cancel()
                with pytest.raises(grpc.aio.AioRpcError) as missing:
                    await stub.WatchTournament(pb.WatchTournamentRequest(name="nope")).read()
                return waited, snapshot, missing.value
        finally:
            await server.stop()

    waited, snapshot, missing = asyncio.run(go())
    assert waited
    assert snapshot.snapshot.name == followed
    assert (snapshot.snapshot.done, snapshot.snapshot.total) == ((1, 0) if followed == "ladder"
                                                                 else (0, 4))
    assert missing.code() == grpc.StatusCode.NOT_FOUND
    assert f"no tournament 'nope' is followed here (known: {followed})" in missing.details()


@pytest.mark.parametrize("held, failing", [(False, False), (True, False), (True, True)],
                         ids=["freed", "held", "held, a cleanup failing"])
def test_a_viewer_that_leaves_before_reading_its_snapshot_leaves_no_subscription(
        held, failing, monkeypatch, caplog):
    """A stream cancelled while its first message, the snapshot, was being sent (a viewer
    that left before reading it: its snapshot larger than the connection's window, so the
    write waits) stayed among the match's viewers, its queue filling, until the match
    ended: the stream's cleanup began only after the snapshot (found by review 23, as a
    web page that closed with its request).

    grpc.aio leaves such a stream's handler where the cancel found it, and never closes
    it: its cleanup ran only as its generator was freed. ``held``: something keeps every
    handler's generator (as a traceback or a log record may); the subscription and the
    stream's place among the viewers (3 in all here) still go as the call ends (they
    stayed, and the fourth stream was refused, RESOURCE_EXHAUSTED). ``failing``: a
    cleanup that raises (here the place's, the first registered) is logged, and the call's
    other cleanups still run (grpc runs none after a callback that raised)."""
    from arena.watch import hosts, servicer
    from support.spectators import BackgroundService, Script
    monkeypatch.setattr(servicer, "MAX_VIEWERS", 3)
    if failing:
        def remove(self, host):
            raise RuntimeError("a cleanup that fails")
        monkeypatch.setattr(hosts.PerHost, "remove", remove)
    if held:
        kept = []
        watch_match = servicer.SpectatorServicer.WatchMatch

        async def holding(self, request, context):
            stream = watch_match(self, request, context)
            kept.append(stream)
            async for message in stream:
                yield message
        monkeypatch.setattr(servicer.SpectatorServicer, "WatchMatch", holding)
    service = BackgroundService()
    try:
        script = Script(think=0.0, hold=2500)    # a long classic match: its snapshot grows
        played = service.play(spec([f"p{i}" for i in range(8)], "classic", seed=3,
                                   move_ms=60_000, bank_ms=60_000), script)
        service.wait_until(lambda: script.held, what="the match to reach its 2,500th move")
        request = pb.WatchMatchRequest(match_id=played.match_id)
        # no window grown for a reader that reads nothing
        with grpc.insecure_channel(service.address, options=[("grpc.http2.bdp_probe", 0)]) \
                as channel:
            stub = spectator_pb2_grpc.SpectatorStub(channel)
            first = stub.WatchMatch(request)
            size = next(first).snapshot.ByteSize()
            assert size > 70_000, size                      # past the connection's window
            first.cancel()
            service.wait_until(lambda: service.viewers(played.match_id) == 0, timeout=5,
                               what="a viewer that read its snapshot to go")
            for _ in range(5):
                call = stub.WatchMatch(request)    # started, never read
                service.wait_until(lambda: service.viewers(played.match_id) == 1,
                                   what="the viewer's subscription")
                call.cancel()
                service.wait_until(lambda: service.viewers(played.match_id) == 0, timeout=5,
                                   what="the cancelled viewer's subscription to go")
            last = stub.WatchMatch(request)        # a place free for it
            assert next(last).snapshot.ByteSize() > 70_000
            last.cancel()
        script.release()
        if failing:
            assert "a spectator stream's cleanup failed" in caplog.text
        played.result()
    finally:
        service.close()


def test_a_stopping_service_sends_what_it_queued_then_ends_each_stream_unavailable():
    """As the service stops (a server's, which may be started again), its streams end
    (STOPPING, after what each viewer's queue holds) with UNAVAILABLE, so that `arena
    watch` looks for the service again rather than the server's stop cancelling them
    (which gRPC printed as a traceback). Frames queued ahead of the stop are sent first:
    a viewer's batching of the frames behind one took STOPPING for a frame and broke the
    stream (the twenty-sixth review)."""
    async def go():
        hub = SpectatorHub()
        server = await SpectatorServer.start(hub, "127.0.0.1:0")
        hub.match_started(pb.MatchSummary(match_id="m", names=["a", "b"],
                                          status=pb.MATCH_STATUS_LIVE))
        hub.frame("m", pb.MatchFrame(seq=0))
        async with grpc.aio.insecure_channel(server.address) as channel:
            call = spectator_pb2_grpc.SpectatorStub(channel).WatchMatch(
                pb.WatchMatchRequest(match_id="m"))
            snapshot = await call.read()
            # queued at once, before the stream's next turn: two frames, then the stop
            hub.frame("m", pb.MatchFrame(seq=1))
            hub.frame("m", pb.MatchFrame(seq=2))
            hub.stop()                                   # (as the server's stop begins)
            stopping = asyncio.create_task(server.stop())
            got = []
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while (msg := await call.read()) is not grpc.aio.EOF:
                    got.append(msg)
            await stopping
        return snapshot, got, ended.value

    snapshot, got, ended = asyncio.run(go())
    assert [f.seq for f in snapshot.snapshot.frames] == [0]
    assert [f.seq for f in frames_of([snapshot, *got])] == [0, 1, 2], got
    assert (ended.code(), ended.details()) == \
        (grpc.StatusCode.UNAVAILABLE, "the spectator service is stopping")


def _budget(viewers: int) -> float:
    """Messages a second that many viewers may be sent in all."""
    from arena.watch.servicer import UNPACED_VIEWERS, VIEWER_MESSAGES_S
    return viewers * VIEWER_MESSAGES_S / (viewers - UNPACED_VIEWERS)


def _messages_of(calls) -> list[list]:
    """Every message of each stream in ``calls``, read to its end, all at once."""
    async def read(call) -> list:
        got = []
        while (message := await call.read()) is not grpc.aio.EOF:
            got.append(message)
        return got
    return asyncio.gather(*(read(call) for call in calls))


class Thinking(HouseSession):
    """A house seat that waits for ``ready``, then thinks 5 ms a move."""

    def __init__(self, policy, ready: asyncio.Event) -> None:
        super().__init__(policy)
        self.ready = ready

    async def next_action(self, timeout):
        await self.ready.wait()
        await asyncio.sleep(0.005)
        return await super().next_action(timeout)


def test_many_viewers_of_a_match_share_a_budget_of_messages_and_miss_no_frame():
    """Every message to a viewer costs the loop that plays the matches (gRPC's own): 1,000
    viewers each sent every frame, or every start and end of a ladder's matches, cut the
    ladder from 16.5 matches a second to 3.5. Viewers beyond a few dozen now share
    VIEWER_MESSAGES_S: each waits its share between messages and gets what came
    meanwhile in its next one. 150
    viewers of a match of some 50 frames used to get 150 messages a frame; now their
    messages in all stay within the budget for the time, and each still sees every
    frame once, in order, then the end."""
    viewers = 150
    the_spec = spec(["a", "b", "c", "d"], seed=21)

    async def go():
        hub, server = await serve()
        try:
            ready = asyncio.Event()   # the match waits for its viewers, then goes
            sessions = [Thinking(FirstLegal(), ready) for _ in the_spec.names]
            task = asyncio.create_task(MatchRunner(the_spec, sessions, [hub.listener("")]).run())
            while the_spec.match_id not in hub.matches:
                await asyncio.sleep(0.001)
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                request = pb.WatchMatchRequest(match_id=the_spec.match_id)
                calls = [stub.WatchMatch(request) for _ in range(viewers)]
                firsts = [await call.read() for call in calls]
                ready.set()
                started = time.monotonic()
                feeds = await _messages_of(calls)
                took = time.monotonic() - started
            feeds = [[first, *feed] for first, feed in zip(firsts, feeds)]
            return feeds, took, await task
        finally:
            await server.stop()

    feeds, took, result = asyncio.run(go())
    frames = len(hub_frames(result))
    assert frames > 30, frames
    for feed in feeds:
        assert len(frames_of(feed)) == frames and feed[-1].HasField("over")
        assert len(feed) > 2                 # it joined a live match
    sent = sum(len(feed) for feed in feeds)
    # the snapshot, the end and a last batch of each are beyond the budget's time
    assert sent <= _budget(viewers) * took + 3 * viewers, (sent, took, frames)
    assert sent < viewers * frames / 3, (sent, took, frames)   # it used to be one a frame


def test_many_viewers_of_a_tournament_get_its_news_in_batches_and_miss_none():
    """The same for a tournament's stream: 150 viewers, 300 matches started and finished
    in a second and a half, the standings sent every fifth match. Each viewer hears every
    start and end, in order, and the latest standings before the end, in messages that
    stay within the budget; a batch keeps only the last of the standings it would hold."""
    viewers, matches = 150, 300

    async def go():
        hub, server = await serve()
        log = hub.tournament("cup", ["a", "b"], matches)
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = spectator_pb2_grpc.SpectatorStub(channel)
                calls = [stub.WatchTournament(pb.WatchTournamentRequest(name="cup"))
                         for _ in range(viewers)]
                for call in calls:
                    assert (await call.read()).HasField("snapshot")
                reading = asyncio.ensure_future(_messages_of(calls))
                started = time.monotonic()
                for i in range(matches):
                    summary = pb.MatchSummary(match_id=f"m{i}", tournament="cup")
                    log.tell(wire.started_feed(summary))
                    log.tell(wire.finished_feed(summary))
                    if i % 5 == 4:
                        log.tell(wire.standings_feed(pb.Standings(matches=i + 1)))
                    await asyncio.sleep(0.005)
                hub.tournament_finished("cup")
                feeds = await reading
                return feeds, time.monotonic() - started
        finally:
            await server.stop()

    feeds, took = asyncio.run(go())
    expected = [(kind, f"m{i}") for i in range(matches) for kind in ("started", "finished")]
    batches = 0
    for feed in feeds:
        assert feed[-1].HasField("over")
        news = [one for message in feed[:-1] for one in wire.unbatched(message)]
        batches += sum(message.HasField("batch") for message in feed)
        assert [(n.WhichOneof("kind"), getattr(n, n.WhichOneof("kind")).match_id)
                for n in news if not n.HasField("standings")] == expected
        tables = [n.standings.matches for n in news if n.HasField("standings")]
        assert tables == sorted(tables) and tables[-1] == matches
        for message in feed:     # of a batch's tables, the last alone
            assert sum(n.HasField("standings") for n in wire.unbatched(message)) <= 1
    sent = sum(len(feed) for feed in feeds)
    assert sent <= _budget(viewers) * took + 2 * viewers, (sent, took)
    assert batches >= viewers, batches


def test_a_batch_for_many_viewers_is_each_message_encoded_once_then_joined():
    """wire.Batches: each message encoded once (as its element of a batch), however many
    viewers' batches hold it; a batch's bytes are protobuf's own for the batch message (so
    that every protobuf reads it: joined whole messages read as one batch in Python, but
    protobufjs kept only the last); a message gone from the kept encodings is encoded
    again, never mistaken for another."""
    made = []

    def one(feed):
        made.append(feed)
        return pb.TournamentBatch(feeds=[feed])

    batches = wire.Batches(pb.TournamentFeed.DESCRIPTOR.fields_by_name["batch"], one, keep=3)
    news = [wire.started_feed(pb.MatchSummary(match_id=f"m{i}", names=["x" * 200] * i))
            for i in range(4)]

    def expected(feeds):
        return pb.TournamentFeed(batch=pb.TournamentBatch(feeds=feeds)).SerializeToString()

    assert batches(news[:3]) == expected(news[:3])
    assert batches([news[2], news[0], news[1]]) == expected([news[2], news[0], news[1]])
    assert len(made) == 3
    batches([news[3]])                       # m2's encoding, used least lately, is let go
    assert batches([news[2], news[3]]) == expected([news[2], news[3]]) and len(made) == 5
    frames = [wire.frame_feed(pb.MatchFrame(seq=i)) for i in range(3)]
    assert wire.frame_batches()(frames) == wire.frames_feed([f.frame for f in frames]).SerializeToString()


def _paced(monkeypatch, rest_s: float) -> None:
    """Every viewer paced, resting ``rest_s`` alone."""
    from arena.watch import servicer
    monkeypatch.setattr(servicer, "UNPACED_VIEWERS", 0)
    monkeypatch.setattr(servicer, "VIEWER_MESSAGES_S", 1 / rest_s)


async def _one_viewer(server, match_id: str, feed: list, arrived: list) -> None:
    async with grpc.aio.insecure_channel(server.address) as channel:
        call = spectator_pb2_grpc.SpectatorStub(channel).WatchMatch(
            pb.WatchMatchRequest(match_id=match_id))
        while (message := await call.read()) is not grpc.aio.EOF:
            feed.append(message)
            arrived.append(time.monotonic())


def _viewer_of(drive) -> tuple[list, float]:
    """One viewer of a match "m" that has its first frame, while ``await drive(hub)``
    brings the rest, and then the end: what the viewer got, and how long after the end
    its last message came."""
    async def go():
        hub, server = await serve()
        try:
            hub.match_started(pb.MatchSummary(match_id="m", names=["a", "b"]))
            hub.frame("m", pb.MatchFrame(seq=0))
            feed, arrived = [], []
            viewer = asyncio.ensure_future(_one_viewer(server, "m", feed, arrived))
            while not feed:
                await asyncio.sleep(0.01)
            await drive(hub)
            ended = time.monotonic()
            hub.match_ended("m", pb.MatchOver(status=pb.MATCH_STATUS_FINISHED))
            await asyncio.wait_for(viewer, 20)
            return feed, arrived[-1] - ended
        finally:
            await server.stop()
    return asyncio.run(go())


def test_a_paced_viewer_gets_all_that_is_queued_at_once_verdicts_and_the_end_included(monkeypatch):
    """A paced viewer rested before every message, and a verdict is a message of its own:
    a match of ten frames each followed by a verdict brought its end ten rests late (a
    bot that fails every turn; 24 to 42 s at 2,000 viewers). What came during a rest now
    goes at once: the end comes within one rest of the match's end."""
    _paced(monkeypatch, 0.4)

    async def drive(hub):
        for seq in range(1, 11):
            hub.frame("m", pb.MatchFrame(seq=seq))
            hub.verdict("m", referee_pb2.Verdict(seat=0, detail=f"slow at {seq}"))

    feed, late = _viewer_of(drive)
    assert len(frames_of(feed)) == 11 and feed[-1].HasField("over")
    assert sum(m.HasField("verdict") for m in feed) == 10
    assert late < 0.4 + 0.3, late


def test_a_paced_viewer_of_a_fast_match_is_woken_before_its_queue_overflows(monkeypatch):
    """A viewer resting 2 s (2,000 viewers) behind a match of more than 256 frames a
    second overflowed its queue and was sent the whole match again. Its rest now ends
    once its queue is half full: it gets every frame once, with no snapshot but its
    first."""
    from arena.watch.hub import QUEUE
    _paced(monkeypatch, 2.0)

    async def drive(hub):
        for seq in range(1, 3 * QUEUE + 1):      # about 1,000 frames a second
            hub.frame("m", pb.MatchFrame(seq=seq))
            if seq % 20 == 0:
                await asyncio.sleep(0.02)

    feed, _ = _viewer_of(drive)
    assert len(frames_of(feed)) == 3 * QUEUE + 1 and feed[-1].HasField("over")
    assert sum(m.HasField("snapshot") for m in feed) == 1
