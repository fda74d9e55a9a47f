"""RunTournament's settings on a real server (in this process, on free ports): what it
refuses, with which code, and what it makes of what it accepts. Its bots are remote bots
that never connect: a tournament of them is over within a second of their removal."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from ono99.transport import grpc
from ono99.v1 import organizer_pb2 as pb, organizer_pb2_grpc

from arena.server.app import ArenaServer, ServeOptions


async def _serve(tmp_path, token: str | None = None, **options):
    """A server on ``tmp_path``'s database (``options``: more of its ServeOptions); its
    organiser token (``token`` if it is not new)."""
    app = await ArenaServer.start(tmp_path / "arena.db", ServeOptions(
        listen="127.0.0.1:0", watch="127.0.0.1:0", **{"absent_after": 0.2, **options}))
    return app, (("authorization", f"Bearer {app.new_token or token}"),)


async def _remote_bots(stub, auth, names) -> None:
    for name in names:
        await stub.AddRemoteBot(pb.AddRemoteBotRequest(name=name), metadata=auth)


@contextlib.asynccontextmanager
async def _organizer(tmp_path, bots=("ra", "rb", "rc"), **options):
    """A server (``options``: more of its ServeOptions) with ``bots`` entered as remote
    bots that never connect: the server, a stub of its Organizer service, and the
    organiser's metadata."""
    app, auth = await _serve(tmp_path, **options)
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = organizer_pb2_grpc.OrganizerStub(channel)
            await _remote_bots(stub, auth, bots)
            yield app, stub, auth
    finally:
        await app.stop()


async def _rest(call) -> list[pb.TournamentProgress]:
    """What a RunTournament call says from now to its end (read, not iterated: a call
    already read from cannot be iterated)."""
    rest = []
    while (p := await call.read()) is not grpc.aio.EOF:
        rest.append(p)
    return rest


async def _started(stub, auth, request: pb.TournamentRequest):
    """The first progress message of RunTournament, or the call's (code, details)."""
    call = stub.RunTournament(request, metadata=auth)
    try:
        first = await call.read()
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details()
    call.cancel()
    return first


def run(tmp_path, scenario):
    async def go():
        async with _organizer(tmp_path) as (_, stub, auth):
            try:
                return await scenario(stub, auth)
            finally:
                for name in ("ra", "rb", "rc"):
                    await stub.RemoveBot(pb.RemoveBotRequest(name=name), metadata=auth)

    return asyncio.run(go())


def test_unnamed_tournaments_get_names_of_their_own(tmp_path):
    """Their names come from the time: a second request in the same second followed the
    first tournament, its own bots and settings (even invalid ones) ignored. Found by
    the fuzzer."""
    async def scenario(stub, auth):
        first = await _started(stub, auth, pb.TournamentRequest(bots=["ra", "rb"], games=1))
        second = await _started(stub, auth, pb.TournamentRequest(bots=["ra", "rc"], games=2))
        refused = await _started(stub, auth, pb.TournamentRequest(bots=["ra"], games=1))
        return first, second, refused

    first, second, refused = run(tmp_path, scenario)
    assert first.started.name != second.started.name
    assert (list(first.started.bots), first.started.total) == (["ra", "rb"], 1)
    assert (list(second.started.bots), second.started.total) == (["ra", "rc"], 2)
    assert refused[0] == grpc.StatusCode.INVALID_ARGUMENT and "at least 2 bots" in refused[1]


def test_following_a_tournament_that_is_not_there_is_not_found(tmp_path):
    """A name and no bots follows that tournament (arena tournament --resume NAME
    --server): one that is not there was taken for a new one and refused for having no
    bots ("at least 2 bots"). Without a name, no bots is still too few."""
    async def scenario(stub, auth):
        return (await _started(stub, auth, pb.TournamentRequest(name="nowhere")),
                await _started(stub, auth, pb.TournamentRequest()))

    missing, unnamed = run(tmp_path, scenario)
    assert missing == (grpc.StatusCode.NOT_FOUND, "no tournament called 'nowhere' on this server "
                                                  "(a new one names its bots)")
    assert unnamed[0] == grpc.StatusCode.INVALID_ARGUMENT and "at least 2 bots" in unnamed[1]


def test_the_standings_of_a_tournament_that_is_not_there_name_no_path_of_the_server(tmp_path):
    """They answered "no tournament called 'nope' in /srv/arena/arena.db; known: ...": where
    the server keeps its database is none of a remote organiser's business, nor a help."""
    async def scenario(stub, auth):
        first = await _started(stub, auth, pb.TournamentRequest(name="cup", bots=["ra", "rb"],
                                                                games=1))
        try:
            await stub.Standings(pb.StandingsRequest(name="nope"), metadata=auth)
        except grpc.aio.AioRpcError as exc:
            return first, (exc.code(), exc.details())

    first, (code, details) = run(tmp_path, scenario)
    assert first.started.name == "cup"
    assert (code, details) == (grpc.StatusCode.NOT_FOUND,
                               "no tournament called 'nope' on this server; known: cup")


@pytest.mark.parametrize("change, words", [
    ({"move_ms": -1}, "move_ms=-1 is not allowed"),
    ({"bank_ms": -(2**31)}, "bank_ms=-2147483648 is not allowed"),
    ({"name": "n" * 65}, "is not allowed: 1 to 64 characters"),
    ({"name": "tab\tname"}, "no control or format characters (it holds U+0009)"),
    ({"name": "evil\u202eeman"}, "no control or format characters (it holds U+202E)"),
    ({"name": "a\u200bb"}, "no control or format characters (it holds U+200B)"),
    ({"name": " "}, "no blanks at either end"),
    ({"name": "-x"}, "it may not start with '-'"),
    ({"name": "ladder"}, "'ladder' is the ladder, not a tournament"),
    ({"move_ms": 86_400_001}, "move_ms=86400001 is not allowed: milliseconds, 0 to 86,400,000"),
    ({"bank_ms": 2**31 - 1}, "bank_ms=2147483647 is not allowed"),
])
def test_settings_no_tournament_can_have_are_refused(tmp_path, change, words):
    """They were accepted: a negative clock (every move then times out), a name of any
    length (100,000 characters were stored), or the ladder's name (found by the fuzzer);
    a clock of 2**31 - 1 ms (a silent bot held a table for 50 days), a name with a
    right-to-left override or a zero-width space (shown as another name), blank, or
    starting with '-' (the printed commands read it as an option: a review)."""
    request = pb.TournamentRequest(name="fine", bots=["ra", "rb"], games=1)
    for key, value in change.items():
        setattr(request, key, value)
    got = run(tmp_path, lambda stub, auth: _started(stub, auth, request))
    assert got[0] == grpc.StatusCode.INVALID_ARGUMENT and words in got[1], got


def test_a_tournament_too_big_for_a_server_is_refused(tmp_path):
    """2**24 games per table was accepted, and its schedule built on the server's event
    loop: the server answered nothing for seconds while its memory grew by hundreds of
    MB (found by the fuzzer)."""
    request = pb.TournamentRequest(name="huge", bots=["ra", "rb"], games=2**24, no_duplicate=True)
    code, details = run(tmp_path, lambda stub, auth: _started(stub, auth, request))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "a tournament of 16,777,216 matches is more than a server plays in one" in details



def test_a_tournament_of_exactly_the_most_a_server_plays_is_taken_and_one_more_refused(tmp_path):
    """The limit is the most a server plays in one tournament, MAX_MATCHES (100,000):
    a tournament of exactly that many matches is started, one of a match more refused
    saying so. (Mutation review: ``> MAX_MATCHES`` changed to ``>=``: nothing failed,
    the only test asked for 2**24.)"""
    from arena.server.runs import MAX_MATCHES

    async def scenario(stub, auth):
        over = await _started(stub, auth, pb.TournamentRequest(
            name="over", bots=["ra", "rb"], games=MAX_MATCHES + 1, no_duplicate=True))
        most = await _started(stub, auth, pb.TournamentRequest(
            name="most", bots=["ra", "rb"], games=MAX_MATCHES, no_duplicate=True))
        return over, most

    over, most = run(tmp_path, scenario)
    assert isinstance(over, tuple), f"a tournament of {MAX_MATCHES + 1:,} matches started"
    assert not isinstance(most, tuple), most      # started, not (code, details)
    code, details = over
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(f"a tournament of {MAX_MATCHES + 1:,} matches is more than a "
                              f"server plays in one (at most {MAX_MATCHES:,})"), details
    assert most.started.total == MAX_MATCHES, most

def test_a_big_schedule_is_built_while_the_server_goes_on_serving(tmp_path):
    """A tournament under the limit but big (60,000 matches, about 1.5 s of planning) does
    not stop the server's loop: other calls are answered meanwhile. (The planning is in a
    thread; on a machine loaded many times over its cores, the loop's thread waited
    0.53 s once for its turn, and 1.19 s another time, when 1 s was the bound: the bound
    is half the start's own time, which a planning on the loop would stop it for whole.)"""
    async def scenario(stub, auth):
        gaps, stop = [], asyncio.Event()

        async def tick():   # how long the loop leaves a 10 ms sleep unanswered
            while not stop.is_set():
                t = asyncio.get_running_loop().time()
                await asyncio.sleep(0.01)
                gaps.append(asyncio.get_running_loop().time() - t - 0.01)

        ticker = asyncio.create_task(tick())
        t0 = asyncio.get_running_loop().time()
        started = await _started(stub, auth, pb.TournamentRequest(
            name="big", bots=["ra", "rb"], games=60_000, no_duplicate=True))
        took = asyncio.get_running_loop().time() - t0
        stop.set()
        await ticker
        return started, max(gaps), took

    started, gap, took = run(tmp_path, scenario)
    assert started.started.total == 60_000
    assert gap < took / 2, f"the server's loop stood still for {gap:.2f} s of {took:.2f} s"


def test_a_finished_tournament_followed_after_a_restart_tells_its_end(tmp_path):
    """Following it resumes it with nothing left to play: it ends while the follower is
    sent that it started. The follower stopped there (it saw the run finished, and not
    the 'finished' event waiting for it): found while testing the fuzzer's findings."""
    async def go():
        kinds, token = [], None
        for attempt in range(2):
            app, auth = await _serve(tmp_path, token)
            token = token or app.new_token
            try:
                async with grpc.aio.insecure_channel(app.address) as channel:
                    stub = organizer_pb2_grpc.OrganizerStub(channel)
                    if attempt == 0:
                        await _remote_bots(stub, auth, ("ra", "rb"))
                    call = stub.RunTournament(pb.TournamentRequest(name="done", bots=["ra", "rb"],
                                                                   games=1), metadata=auth)
                    kinds.append([p.WhichOneof("kind") async for p in call])
            finally:
                await app.stop()
        return kinds

    first, again = asyncio.run(go())
    assert first == ["started", "match", "finished"]
    assert again == ["started", "finished"]


def test_bots_removed_while_their_tournament_waits_for_them_retire_it_cleanly(tmp_path):
    """A seat waiting for its bot's other match (one match at a time) when the bot was
    removed then asked the lobby for the withdrawn token: a KeyError killed the
    tournament's task, and its other matches were never played. Found by the fuzzer.
    Now the seat is retired, and the tournament ends with every match accounted for."""
    async def go():
        async with _organizer(tmp_path, absent_after=0.5, concurrency=2) as (app, stub, auth):
            call = stub.RunTournament(pb.TournamentRequest(
                name="gone", bots=["ra", "rb", "rc"], games=2, no_duplicate=True), metadata=auth)
            assert (await call.read()).HasField("started")
            await asyncio.sleep(0.1)   # two matches in flight, both waiting for ra
            for name in ("ra", "rb", "rc"):
                await stub.RemoveBot(pb.RemoveBotRequest(name=name), metadata=auth)
            progress = await _rest(call)
            task = app.runs.runs["gone"].task
            await asyncio.wait_for(task, 10)
            return progress, task.exception()

    progress, error = asyncio.run(go())
    assert error is None
    played = [p.match for p in progress if p.HasField("match")]
    assert len(played) == 6 and progress[-1].HasField("finished")
    kinds = sorted({v.kind for m in played for v in m.verdicts})
    assert kinds == ["absent", "retired"], kinds


def test_a_remote_bot_found_absent_is_not_waited_for_again_until_it_connects(tmp_path):
    """Each match of a remote bot gone offline waited --absent-after again, one at a time
    (its matches take turns), holding the tournament's slots: one bot offline slowed a
    whole tournament to a match every 30 s. Now its first match waits; the others are
    absent at once, until it connects again."""
    async def go():
        async with _organizer(tmp_path, absent_after=2.0, concurrency=2) as (_, stub, auth):
            started = time.monotonic()
            call = stub.RunTournament(pb.TournamentRequest(
                name="away", bots=["ra", "rb", "rc"], games=3, no_duplicate=True), metadata=auth)
            progress = [p async for p in call]
            return progress, time.monotonic() - started

    progress, took = asyncio.run(go())
    played = [p.match for p in progress if p.HasField("match")]
    assert len(played) == 9 and progress[-1].HasField("finished")
    assert {v.kind for m in played for v in m.verdicts} == {"absent"}
    details = [v.detail for m in played for v in m.verdicts]
    assert sum("not connected within" in d for d in details) == 3      # one wait a bot
    assert took < 8, took     # each bot's 6 matches waited 2 s in turn: 12 s and more


def test_cancelling_what_is_not_a_running_tournament_says_which_it_is(tmp_path):
    """CancelTournament: NOT_FOUND for no tournament of the name; FAILED_PRECONDITION,
    saying why, for the ladder and for one that is over; the organiser token first."""
    async def scenario(stub, auth):
        call = stub.RunTournament(pb.TournamentRequest(name="over", bots=["ra", "rb"], games=1),
                                  metadata=auth)
        assert [p.WhichOneof("kind") async for p in call][-1] == "finished"
        got = []
        for name, metadata in (("nope", auth), ("ladder", auth), ("over", auth),
                               ("over", (("authorization", "Bearer wrong"),))):
            try:
                await stub.CancelTournament(pb.CancelTournamentRequest(name=name),
                                            metadata=metadata)
            except grpc.aio.AioRpcError as exc:
                got.append((exc.code(), exc.details()))
        return got

    nope, ladder, over, stranger = run(tmp_path, scenario)
    assert nope == (grpc.StatusCode.NOT_FOUND, "no tournament called 'nope' on this server")
    assert ladder == (grpc.StatusCode.FAILED_PRECONDITION,
                      "the ladder is no tournament: it stops with the server")
    assert over == (grpc.StatusCode.FAILED_PRECONDITION,
                    "tournament 'over' is not running: it is over")
    assert stranger[0] == grpc.StatusCode.UNAUTHENTICATED


def test_a_tournament_waiting_for_its_bots_is_cancelled_at_once_and_its_spectators_told(
        tmp_path):
    """Cancelled while its first match waits for bots that are not there: the wait ends
    at once, its follower hears why, and its spectators' feed ends (it waited for ever)."""
    async def go():
        async with _organizer(tmp_path, ("ra", "rb"), absent_after=30) as (app, stub, auth):
            call = stub.RunTournament(pb.TournamentRequest(name="wait", bots=["ra", "rb"],
                                                           games=2), metadata=auth)
            assert (await call.read()).HasField("started")
            started = time.monotonic()
            done = await stub.CancelTournament(pb.CancelTournamentRequest(name="wait"),
                                               metadata=auth)
            took = time.monotonic() - started
            rest = await _rest(call)
            # the bots are free for the server's other matches (the seat waiting for one
            # held it for good)
            busy = [n for n, seats in app.registry.remote.items() if seats.busy]
            return done, took, rest, app.hub.tournaments["wait"].finished, busy

    done, took, rest, spectators_told, busy = asyncio.run(go())
    assert busy == []
    assert (done.name, done.played, done.total) == ("wait", 0, 2) and took < 5
    assert [p.WhichOneof("kind") for p in rest] == ["finished"]
    assert rest[0].finished.error == ("cancelled by the organiser after 0 of 2 matches; "
                                      "following it by name plays what is left")
    assert spectators_told


def test_a_cancel_while_the_tournament_is_being_started_cancels_it(tmp_path):
    """A big schedule is built in a thread before the tournament is registered: a cancel
    meanwhile was told there is no such tournament, which then started anyway (the very
    case of a tournament started by mistake). It now waits for the start, and cancels."""
    async def scenario(stub, auth):
        call = stub.RunTournament(pb.TournamentRequest(name="big", bots=["ra", "rb"],
                                                       games=40_000, no_duplicate=True),
                                  metadata=auth)
        await asyncio.sleep(0.1)   # the request is in, its schedule in the making
        done = await stub.CancelTournament(pb.CancelTournamentRequest(name="big"),
                                           metadata=auth)
        return done, await _rest(call)

    done, progress = run(tmp_path, scenario)
    assert (done.name, done.total) == ("big", 40_000) and done.played < 40_000
    assert progress[0].HasField("started") and progress[-1].HasField("finished")
    assert progress[-1].finished.error.startswith("cancelled by the organiser after")
