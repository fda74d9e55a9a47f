"""What a server keeps of its tournaments, in memory: a long-lived server plays tournament
after tournament, and its memory must not grow with every match it ever played. (Found
by the fuzzer's healthy traffic: 10 KB a match, for as long as the server ran.)"""

from __future__ import annotations

import asyncio

from ono99.transport import grpc
from ono99.v1 import organizer_pb2 as pb, organizer_pb2_grpc

from arena.referee.results import MatchResult
from arena.server.app import ArenaServer, ServeOptions


def tournaments(tmp_path, n: int, games: int = 2, check=None):
    """Play ``n`` tournaments of two remote bots that never connect (absent at once);
    ``check(app, progress)`` is called with the server and every progress message."""
    async def go():
        app = await ArenaServer.start(tmp_path / "arena.db", ServeOptions(
            listen="127.0.0.1:0", watch="127.0.0.1:0", absent_after=0.01))
        auth = (("authorization", f"Bearer {app.new_token}"),)
        try:
            async with grpc.aio.insecure_channel(app.address) as channel:
                stub = organizer_pb2_grpc.OrganizerStub(channel)
                for name in ("ma", "mb"):
                    await stub.AddRemoteBot(pb.AddRemoteBotRequest(name=name), metadata=auth)
                progress = []
                for i in range(n):
                    request = pb.TournamentRequest(name=f"t{i}", bots=["ma", "mb"], games=games)
                    progress.append([p async for p in stub.RunTournament(request, metadata=auth)])
                got = check(app, progress)
                if asyncio.iscoroutine(got):
                    got = await got
                return got
        finally:
            await app.stop()

    return asyncio.run(go())


def test_a_tournament_s_history_keeps_reports_not_results(tmp_path):
    """Followers of a tournament hear of each match (its key, bots, places, verdicts); its
    history kept every MatchResult, each with every event of its match."""
    def check(app, progress):
        run = app.runs.runs["t0"]
        kept = [v for e in run.history for v in e.data.values()]
        assert not any(isinstance(v, MatchResult) for v in kept)
        # nor, once over, its plan or executor: what only playing needs
        assert run.finished and run.t.plan == [] and run.executor is None
        [played] = [p.match for p in progress[0] if p.HasField("match")][:1]
        return played

    played = tournaments(tmp_path, 1, games=1, check=check)
    assert list(played.bots) and played.key and played.termination
    assert sorted(v.kind for v in played.verdicts) == ["absent", "absent"]


def test_only_the_last_finished_tournaments_are_kept(tmp_path, monkeypatch):
    """Every finished tournament stayed in memory (its run and its spectators' log, about
    45 KB each): the server keeps the last ones (RECENT_TOURNAMENTS and FINISHED_KEPT,
    100), as it keeps none after a restart. A follower of an older one is told it started
    and finished."""
    from arena.server import runs
    from arena.watch import hub

    monkeypatch.setattr(runs, "FINISHED_KEPT", 2)
    monkeypatch.setattr(hub, "RECENT_TOURNAMENTS", 2)

    async def check(app, progress):
        kept = sorted(app.runs.runs), sorted(app.hub.tournaments)
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = organizer_pb2_grpc.OrganizerStub(channel)
            auth = (("authorization", f"Bearer {app.new_token}"),)
            again = [p.WhichOneof("kind") async for p in stub.RunTournament(
                pb.TournamentRequest(name="t0"), metadata=auth)]
        return kept, [len(p) for p in progress], again

    (kept, followed), lengths, again = tournaments(tmp_path, 4, games=1, check=check)
    assert kept == followed == ["t2", "t3"]
    assert lengths == [3, 3, 3, 3]   # started, the match, finished
    assert again == ["started", "finished"]


def test_the_finished_tournaments_kept_hold_a_bounded_number_of_events(tmp_path, monkeypatch):
    """Each kept tournament's history holds a report of each of its matches (about 530
    bytes): 100 of them of up to 100,000 matches each held 5 GB for as long as the server
    ran. The latest are kept while their events together are at most FINISHED_EVENTS
    (the latest always); a follower of an older one is told it started and finished."""
    from arena.server import runs

    monkeypatch.setattr(runs, "FINISHED_EVENTS", 7, raising=False)   # each: 3 events

    def check(app, progress):
        return sorted(app.runs.runs)

    assert tournaments(tmp_path, 4, games=1, check=check) == ["t2", "t3"]
