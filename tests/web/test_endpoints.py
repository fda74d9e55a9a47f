"""The web viewer's HTTP side without a browser: real requests to a real viewer, itself a
client of a real spectator service fed by real matches; then the commands that start it
(``arena web``, ``--web`` on ``arena match`` and ``arena serve``), as a user runs them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import select
import signal
import socket
import struct
import subprocess
import threading
import time
import urllib.request
import zlib
from pathlib import Path

import aiohttp
import pytest
from google.protobuf import json_format
from ono99.transport import grpc
from ono99.v1 import spectator_pb2 as pb, spectator_pb2_grpc

from arena.cli.match import write_log
from arena.watch import records
from arena.web import feeds, guard, server, serverlog
from arena.web.server import WebViewer
from support.network import own_network_ip
from support.processes import env_for, marked_running, reaped, running
from support.serve import BOTS, ROOT, Served, command
from support.web import LiveArena


@pytest.fixture
def arena():
    live = LiveArena()
    live.serve_spectators()
    live.serve_web()
    yield live
    live.close()


#: what the page's upload carries (arena.web.server.UPLOAD_HEADER)
PAGE = {"X-Ono99-Upload": "1"}


def get(arena: LiveArena, path: str, **kw):
    """(status, headers, body text) of a request to the viewer."""
    async def go():
        async with aiohttp.ClientSession() as session:
            async with session.request(kw.pop("method", "GET"), arena.url + path.lstrip("/"),
                                       **kw) as answer:
                return answer.status, answer.headers, await answer.text()
    return arena.run(go())


def socket_messages(arena: LiveArena, path: str, limit: int = 100_000) -> tuple[list[dict], bool]:
    """The messages of a WebSocket until it closes (or ``limit``), and whether it closed."""
    async def go():
        out = []
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(arena.url + path.lstrip("/")) as ws:
                async for msg in ws:
                    out.append(json.loads(msg.data))
                    if len(out) >= limit:
                        return out, False
                return out, True
    return arena.run(go(), 120)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def grpc_record(address: str, match_id: str) -> pb.MatchSnapshot:
    with grpc.insecure_channel(address) as channel:
        return spectator_pb2_grpc.SpectatorStub(channel).GetRecord(pb.GetRecordRequest(match_id=match_id))


# ---------------------------------------------------------------- the page and the API


def test_the_page_and_its_files_are_served_and_may_be_framed(arena):
    status, headers, page = get(arena, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert '<script type="module" src="/static/js/main.js">' in page
    assert "X-Frame-Options" not in headers      # the page is embeddable
    scripts = {"main", "dom", "feed", "match", "table", "lists", "text"}
    for name in scripts:
        status, headers, text = get(arena, f"/static/js/{name}.js")
        assert status == 200 and "javascript" in headers["Content-Type"], name
        imported = set(re.findall(r'from "\./(\w+)\.js"', text))
        assert imported <= scripts, f"{name}.js imports a script not served: {imported - scripts}"
    assert get(arena, "/static/viewer.css")[0] == 200


def test_the_match_list_has_live_and_finished_matches(arena):
    done = arena.play(["a", "b"], 0.0, seed=1)
    arena.wait(done)
    live = arena.play(["c", "d", "e"], 0.2, seed=2)
    status, _, body = get(arena, "/api/matches")
    assert status == 200
    listed = {m["match_id"]: m for m in json.loads(body)["matches"]}
    assert listed[live]["status"] == "MATCH_STATUS_LIVE" and listed[live]["names"] == ["c", "d", "e"]
    assert listed[done]["status"] == "MATCH_STATUS_FINISHED" and listed[done]["ranking"]


def test_a_downloaded_record_reads_back_through_records_from_file(arena, tmp_path):
    match_id = arena.play(["a", "b", "c"], 0.0, "classic", seed=5)
    arena.wait(match_id)
    status, headers, body = get(arena, f"/api/record/{match_id}")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    saved = tmp_path / "record.json"
    saved.write_text(body)
    assert records.from_file(saved) == grpc_record(arena.spectators_at, match_id)
    status, _, body = get(arena, "/api/record/no-such-match")
    assert status == 404 and "no match 'no-such-match' here" in json.loads(body)["error"]


def test_a_download_the_service_is_too_busy_for_is_a_503_to_try_again_not_a_404(tmp_path):
    """The spectator service makes stored records one at a time, RECORD_QUEUE waiting at
    most, and refuses more (RESOURCE_EXHAUSTED): the download said 404, "32 records are
    being made already", as if the match were not there. It is a 503 with a Retry-After
    and the service's words; 404 is for a match the service does not have."""
    from support.matches import store_ladder

    from arena.store import open_store
    from arena.watch.records import StoreRecords
    from arena.watch.servicer import RECORD_QUEUE

    db = tmp_path / "arena.db"
    store_ladder(db, 3, 2)
    store = open_store(str(db))
    arena = LiveArena()
    try:
        stored = store.matches(store.tournament("ladder"))[0].match_uid
        arena.serve_spectators(records=StoreRecords(store))
        arena.serve_web()

        async def flood():   # made-up ids: each one a record for the service to look for
            async with aiohttp.ClientSession() as session:
                async def one(i):
                    async with session.get(f"{arena.url}api/record/made-up-{i}") as answer:
                        return answer.status, answer.headers, await answer.json()
                return await asyncio.gather(*(one(i) for i in range(3 * RECORD_QUEUE)))
        answers = arena.run(flood())
        statuses = sorted({status for status, _, _ in answers})
        assert statuses == [404, 503], statuses
        for status, headers, body in answers:
            if status == 503:
                assert headers["Retry-After"] == str(server.RETRY_AFTER_S)
                assert body == {"error": f"{RECORD_QUEUE} records are being made already; "
                                         "try again later", "retry": True}
            else:
                assert "Retry-After" not in headers and body["retry"] is False
                assert re.fullmatch(r"no match 'made-up-\d+' here", body["error"])
        status, _, body = get(arena, f"/api/record/{stored}")   # the queue empties
        assert status == 200 and json.loads(body)["match"]["match_id"] == stored
    finally:
        arena.close()
        store.close()


def test_a_record_s_json_is_made_once_and_kept(arena):
    """A record's JSON was made at every download (an 8-seat match's: 0.7 MB, 100 ms of
    the viewer's event loop): eight loops of GET on one held every other page seconds.
    A finished record never changes: its JSON is kept, and the service is not asked again."""
    match_id = arena.play(["a", "b", "c", "d", "e", "f", "g", "h"], 0.0, "classic", seed=3)
    other = arena.play(["a", "b"], 0.0, seed=4)
    arena.wait(match_id)
    arena.wait(other)
    status, _, first = get(arena, f"/api/record/{match_id}")
    assert status == 200
    arena.run(arena.server.stop())   # the spectator service is gone
    status, _, again = get(arena, f"/api/record/{match_id}")
    assert status == 200 and again == first
    status, headers, body = get(arena, f"/api/record/{other}")   # never asked for: the service was
    assert status == 503 and json.loads(body)["retry"] is True
    assert headers["Retry-After"] == str(server.RETRY_AFTER_S)
    arena.server = None


def test_the_record_of_an_attempt_cut_short_is_not_kept_for_the_match_played_again(arena):
    """A match cut short (ABORTED: a tournament cancelled) is played again under its id
    when the tournament resumes, in the same arena (`arena serve --web`): the record of
    the first attempt, downloaded meanwhile, must not be the one every later download of
    that id is given (a finished record never changes; a cut-short one does)."""
    def attempt(status) -> None:
        async def go():
            arena.hub.match_started(pb.MatchSummary(match_id="m", names=["a", "b"],
                                                    status=pb.MATCH_STATUS_LIVE))
            arena.hub.frame("m", pb.MatchFrame(seq=0))
            arena.hub.match_ended("m", pb.MatchOver(status=status))
        arena.run(go())

    attempt(pb.MATCH_STATUS_ABORTED)
    status, _, body = get(arena, "/api/record/m")
    assert status == 200 and json.loads(body)["over"]["status"] == "MATCH_STATUS_ABORTED", body
    assert len(json.loads(body)["frames"]) == 1, body
    attempt(pb.MATCH_STATUS_FINISHED)
    status, _, body = get(arena, "/api/record/m")
    assert status == 200 and json.loads(body)["over"]["status"] == "MATCH_STATUS_FINISHED", body
    assert len(json.loads(body)["frames"]) == 1, body


def test_a_finished_match_opened_again_and_again_is_made_json_once(arena):
    """A page opening a finished match gets its whole record, as a snapshot: an 8-seat
    match's is 0.7 MB of JSON, made in the viewer's event loop at every opening (100 ms
    and more of Python, as a download's was): eight pages doing so, anyone's, held every
    other page 1.7 s (median; 23 ms now, measured by the eighteenth review). Made in a
    thread, and kept once made, as a download's: every opening gets the same text."""
    match_id = arena.play(["a", "b", "c", "d", "e", "f", "g", "h"], 0.0, "classic", seed=3)
    arena.wait(match_id)

    async def open_it(times: int) -> list[str]:
        got = []
        async with aiohttp.ClientSession() as session:
            for _ in range(times):
                async with session.ws_connect(arena.url + f"ws/match/{match_id}") as ws:
                    got.append("".join([m.data async for m in ws]))
        return got

    got = asyncio.run(open_it(3))
    assert len(set(got)) == 1 and json.loads(got[0])["snapshot"]["over"]["status"] == \
        "MATCH_STATUS_FINISHED"
    kept = arena.viewer.runner.app[server.RECORDS]._kept
    assert [key for key in kept if match_id in key] == [("feed", "join", match_id)]
    assert kept[("feed", "join", match_id)] == got[0]


def test_an_uploaded_event_log_is_replayed_into_a_record(arena, tmp_path):
    match_id = arena.play(["a", "b"], 0.0, seed=6)
    result = arena.wait(match_id)
    log = tmp_path / "game-1.jsonl"
    write_log(log, result)
    status, _, body = get(arena, "/api/record?name=game-1.jsonl", method="POST",
                          data=log.read_bytes(), headers=PAGE)
    assert status == 200
    uploaded = json_format.Parse(body, pb.MatchSnapshot())
    live = grpc_record(arena.spectators_at, match_id)
    assert [(f.events, f.state) for f in uploaded.frames] == [(f.events, f.state) for f in live.frames]
    assert uploaded.over.ranking == live.over.ranking and uploaded.over.hands == live.over.hands
    status, _, body = get(arena, "/api/record?name=notes.txt", method="POST", data=b"hello\n",
                          headers=PAGE)
    assert status == 400
    error = json.loads(body)["error"]
    assert error.startswith("notes.txt is neither an arena match event log nor a match record")


@pytest.mark.parametrize("name, data", [
    ("lists.jsonl", b"[1]\n[2]\n"),                 # lines that are not objects
    ("deep.json", b"[" * 100_000),                  # nesting too deep to parse
    ("deep.jsonl", b"{" + b"[" * 100_000),
    ("bytes.bin", b"\xff\xfe\x00garbage"),           # not UTF-8
    ("other.json", b'{"x": 1}'),                 # JSON, but of nothing a record holds
    ("empty.json", b"{}"),
    ("..", b"hello\n"),                             # a name that is no file name
    ("a/..", b"hello\n"),
])
def test_an_upload_of_anything_is_a_400_that_says_what_it_is_not(arena, name, data):
    status, _, body = get(arena, "/api/record", params={"name": name}, method="POST", data=data,
                          headers=PAGE)
    assert status == 400, body
    assert "neither an arena match event log nor a match record" in json.loads(body)["error"] \
        or "is not a match record" in json.loads(body)["error"]


def test_an_upload_is_only_the_pages_own_request(arena, tmp_path):
    """A page of another site can make a visitor's browser post a file here, but not with
    a header of ours (that needs a CORS preflight, never granted), and its browser says
    where it comes from (Origin): such a post is a 403, before anything is read or
    replayed."""
    status, _, body = get(arena, "/api/record?name=x.jsonl", method="POST", data=b"{}\n",
                          headers={"Content-Type": "text/plain"})
    assert status == 403 and "X-Ono99-Upload" in json.loads(body)["error"]
    status, _, body = get(arena, "/api/record?name=x.jsonl", method="POST", data=b"{}\n",
                          headers={**PAGE, "Origin": "http://evil.example"})
    assert status == 403 and json.loads(body)["error"] == (
        "a page of another site (http://evil.example) may not open the viewer's streams or "
        "send it files")


def test_a_page_of_another_site_cannot_use_the_viewer_through_a_visitor_s_browser(arena):
    """A site whose name its DNS points at 127.0.0.1 (DNS rebinding) is the browser's own
    origin to the browser: it read the viewer's API, followed its streams and sent it
    uploads from any visitor's browser. The name it sends (Host) is refused, and a stream
    opened from another site's page (Origin) too; the viewer's own names still work."""
    port = arena.url.rsplit(":", 1)[1].strip("/")
    status, _, body = get(arena, "/api/matches", headers={"Host": f"evil.example:{port}"})
    assert status == 403 and "not to 'evil.example'" in json.loads(body)["error"]
    for name in ("localhost", "127.0.0.1", "arena.localhost"):
        assert get(arena, "/api/matches", headers={"Host": f"{name}:{port}"})[0] == 200, name
    assert get(arena, "/api/matches", headers={"Host": "[::1"})[0] == 403   # not a 500

    async def socket(origin: str, **headers: str) -> int:
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(arena.url + "ws/tv", origin=origin, headers=headers):
                    return 101
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status

    assert arena.run(socket("http://evil.example")) == 403
    assert arena.run(socket("null")) == 403                  # a sandboxed frame's, a file's
    assert arena.run(socket(arena.url.rstrip("/"))) == 101   # the page's own
    assert arena.run(socket("http://127.0.0.1:1")) == 101    # ports aside (a proxy's $host)
    # behind a proxy that passes its public name on as X-Forwarded-Host (Host: the viewer's
    # own address), the page's origin is that name
    public = "http://arena.localhost"
    assert arena.run(socket(public, **{"X-Forwarded-Host": "arena.localhost"})) == 101
    assert arena.run(socket(public)) == 403


@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_a_viewer_on_ipv6_is_printed_at_a_url_a_browser_opens(host):
    """`--host ::1` printed http://::1:PORT/, which no browser or curl opens, and
    `--host [::1]` did not resolve (the thirty-sixth review)."""
    live = LiveArena()
    try:
        live.serve_spectators()

        async def go():
            viewer = await WebViewer.start(live.spectators_at, host=host, port=0)
            try:
                async with aiohttp.ClientSession() as session:
                    async with session.get(viewer.url) as answer:
                        return viewer.url, answer.status
            finally:
                await viewer.stop()

        url, status = live.run(go())
        assert re.fullmatch(r"http://\[::1\]:\d+/", url) and status == 200, (url, status)
    finally:
        live.close()


def test_a_name_given_with_allow_host_is_answered(mark):
    """Behind a proxy that passes its own name on (nginx's proxy_set_header Host $host)."""
    live = LiveArena()
    try:
        live.serve_spectators()

        async def go(host: str):
            viewer = await WebViewer.start(live.spectators_at, host=host, port=0,
                                           allow_hosts=["arena.example.org"])
            url = f"http://127.0.0.1:{viewer.url.rsplit(':', 1)[1]}"
            try:
                async with aiohttp.ClientSession() as session:
                    statuses = []
                    for name in ("arena.example.org", "other.example.org"):
                        async with session.get(url + "api/matches",
                                               headers={"Host": name}) as answer:
                            statuses.append(answer.status)
                    return statuses
            finally:
                await viewer.stop()

        assert live.run(go("127.0.0.1")) == [200, 403]
        assert live.run(go("0.0.0.0")) == [200, 403]     # given names: on any address
    finally:
        live.close()


def gzip_bomb(mib: int) -> bytes:
    """``mib`` MiB of zeros, gzipped (about 1 KB a MiB)."""
    pack, zeros = zlib.compressobj(9, zlib.DEFLATED, 31), bytes(2**20)
    return b"".join(pack.compress(zeros) for _ in range(mib)) + pack.flush()


def test_a_compressed_body_is_not_inflated_by_the_viewer(arena):
    """aiohttp inflated the body of any request that said it was gzipped, in the event
    loop, whatever its route and whether its handler read it or not: 1 MB of gzip sent to
    /api/matches held the loop that plays `arena serve --web`'s matches 2 to 3 s. A body
    goes as it came; an upload that is compressed is a 415 that says so."""
    bomb = gzip_bomb(1024)
    before = arena.run(_thread_time())
    listed, _, _ = get(arena, "/api/matches", data=bomb, headers={"Content-Encoding": "gzip"})
    uploaded, _, body = get(arena, "/api/record?name=x.jsonl", method="POST", data=bomb,
                            headers={**PAGE, "Content-Encoding": "gzip"})
    spent = arena.run(_thread_time()) - before
    assert spent < 0.3, f"the viewer's event loop spent {spent:.2f} s of CPU on 2 MB"
    assert listed == 200
    assert uploaded == 415 and "not compressed" in body, (uploaded, body)


async def _thread_time() -> float:
    """The CPU time of the thread this runs on (the event loop's)."""
    return time.thread_time()


@pytest.mark.parametrize("name", ["a\x00b", "x" * 300])
def test_an_upload_under_an_odd_name_is_read_under_a_plain_one(arena, name):
    status, _, body = get(arena, "/api/record", params={"name": name}, method="POST",
                          data=b"hello\n", headers=PAGE)
    assert status == 400 and json.loads(body)["error"].startswith("upload is neither"), body


def test_an_uploaded_match_too_long_to_replay_here_is_a_400_before_its_replay(
        arena, tmp_path, monkeypatch):
    """One upload of a valid but endless event log (118,000 turns) held the server's loop
    for 23 s, and the matches it played timed out: a match past MAX_UPLOAD_TURNS is
    refused before its replay (and what is replayed is replayed in a thread)."""
    monkeypatch.setattr(server, "MAX_UPLOAD_TURNS", 10)
    match_id = arena.play(["a", "b"], 0.0, seed=6)
    log = tmp_path / "game-1.jsonl"
    write_log(log, arena.wait(match_id))
    status, _, body = get(arena, "/api/record?name=game-1.jsonl", method="POST",
                          data=log.read_bytes(), headers=PAGE)
    assert status == 400, body
    assert re.search(r"game-1.jsonl holds a match of \d+ turns, more than the 10 replayed "
                     r"here: replay it with `arena replay`", json.loads(body)["error"]), body


def test_an_upload_that_takes_long_to_read_is_read_apart_and_its_memory_given_back(arena):
    """A record of a million empty messages (3 MB) took seconds of protobuf's C calls and
    garbage collection, which hold the interpreter's lock: read in a thread, it held every
    thread of the process that plays the matches (2 to 8 s here; 60 s for 16 MB), and the
    process kept the memory it took (190 MB here; 630 MB for 16 MB). It is read in a
    process of its own, which ends with the answer."""
    seats = ",".join(["{}"] * 1_000_000)
    data = ('{"match":{"match_id":"x","names":["a","b"]},"frames":[{"seq":0,"state":'
            '{"seats":[' + seats + ']}}]}').encode()
    before = rss_mb()
    niceness = []

    def watch() -> None:       # the reader's priority, seen while it reads
        while not done.is_set():
            for stat in Path("/proc").glob("[0-9]*/stat"):
                try:
                    if b"arena.web.replayer" in (stat.parent / "cmdline").read_bytes():
                        niceness.append(int(stat.read_text().rsplit(")", 1)[1].split()[16]))
                except (OSError, ValueError, IndexError):
                    pass
            time.sleep(0.05)

    done = threading.Event()
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        status, _, body = get(arena, "/api/record?name=big.json", method="POST", data=data,
                              headers=PAGE)
    finally:
        done.set()
        watcher.join()
    assert status in (200, 400), body          # read, or too large to read: either way ...
    assert rss_mb() - before < 100, "the viewer kept the memory its reading took"
    # ... and at the lowest priority: the process it was read apart from plays matches
    # (from its first steps, before it lowers it, it may be seen at the viewer's)
    assert 19 in niceness, niceness


def test_an_upload_whose_reading_is_cut_short_leaves_nothing_behind(arena, monkeypatch, tmp_path):
    """The reader kept its copy of the upload in a folder of its own, which it removed
    only when it ended by itself: killed (its CPU limit, the viewer's timeout, the
    kernel), it left up to 16 MB behind per upload. The viewer keeps the copy now."""
    import tempfile

    from arena.web import replayer

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # the viewer's, in this process
    monkeypatch.setenv("TMPDIR", str(tmp_path))                # ... and the reader's
    monkeypatch.setattr(replayer, "CPU_S", -29.5)             # the viewer waits 0.5 s
    seats = ",".join(["{}"] * 1_000_000)
    data = ('{"match":{"match_id":"x","names":["a","b"]},"frames":[{"seq":0,"state":'
            '{"seats":[' + seats + ']}}]}').encode()
    status, _, body = get(arena, "/api/record?name=big.json", method="POST", data=data,
                          headers=PAGE)
    assert status == 400 and json.loads(body)["error"] == (
        "big.json took over 0.5 s to read: replay it with `arena replay`")
    assert list(tmp_path.iterdir()) == []


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_an_upload_whose_reader_dies_is_a_400_that_says_so(arena, monkeypatch):
    """The reader's memory limit, a crash: the page is told, the viewer goes on."""
    monkeypatch.setattr(server, "MAX_UPLOAD_TURNS", "not a number")   # the reader's argv
    status, _, body = get(arena, "/api/record?name=x.jsonl", method="POST", data=b"hello\n",
                          headers=PAGE)
    assert status == 400
    assert re.fullmatch(r"x\.jsonl could not be read here \(its reader ended with exit 1: "
                        r"ValueError: .*\): replay it with `arena replay`",
                        json.loads(body)["error"]), body
    assert get(arena, "/api/matches")[0] == 200


@pytest.mark.parametrize("path", ["/ws/tv?delay=99999999999999999999", "/ws/tv?delay=3000000000",
                                  "/ws/match/x?delay=100001", "/ws/tv?delay=x"])
def test_a_delay_out_of_range_is_a_400(arena, path):
    status, _, body = get(arena, path)
    assert status == 400 and "?delay=" in body, (status, body)


def _seqs(messages: list[dict]) -> list[int]:
    """The frames' numbers a match's page was sent: its snapshot's, then each frame's, and
    those of each batch (a page whose stream lags is sent the frames queued behind one in
    one message: counting only single frames, a loaded run saw 12 then 17)."""
    frames = list(messages[0]["snapshot"]["frames"])
    for m in messages[1:]:
        frames += [m["frame"]] if "frame" in m else m.get("frames", {}).get("frames", [])
    return [f.get("seq", 0) for f in frames]


def test_a_match_socket_sends_a_snapshot_first_then_the_match_as_it_goes(arena):
    match_id = arena.play(["a", "b", "c"], 0.02, seed=7)
    messages, closed = socket_messages(arena, f"/ws/match/{match_id}")
    assert closed, "the socket stays open after the match"
    assert messages[0]["snapshot"]["reason"] == "join"
    assert messages[0]["snapshot"]["match"]["match_id"] == match_id
    kinds = [next(iter(m)) for m in messages[1:]]
    assert "frame" in kinds and kinds[-1] == "over"
    seqs = _seqs(messages)
    assert seqs == list(range(len(seqs)))
    # once over, the same address is its whole record, and the socket closes
    messages, closed = socket_messages(arena, f"/ws/match/{match_id}")
    assert closed and len(messages) == 1 and "over" in messages[0]["snapshot"]


def test_a_page_whose_stream_lags_gets_the_frames_it_missed_in_batches(arena, monkeypatch):
    """A viewer's stream that lags (its writes wait: a loaded machine) is sent the frames
    queued behind one in one message (FrameBatch), none lost: the page counts them as it
    counts single frames. Here the service takes 0.1 s before each message it sends, on
    a match of 20 ms moves. (Counting single frames only, a run at a load of 8 on 2 cores
    saw frame 12, then 17: review 34.)"""
    subscribe = arena.hub.subscribe

    def lagging(*args, **kwargs):
        made = subscribe(*args, **kwargs)
        if made is not None:
            take = made[0].take

            async def lagging_take():
                await asyncio.sleep(0.1)
                return await take()

            made[0].take = lagging_take
        return made

    monkeypatch.setattr(arena.hub, "subscribe", lagging)
    match_id = arena.play(["a", "b", "c"], 0.02, seed=7)
    messages, closed = socket_messages(arena, f"/ws/match/{match_id}")
    assert closed and "over" in messages[-1]
    assert any("frames" in m for m in messages[1:])
    seqs = _seqs(messages)
    assert seqs == list(range(len(seqs))) and len(seqs) > 20


def _live_match(arena, seed: int) -> tuple[str, str]:
    """A three-seat match that lasts a few seconds: its id and its page's socket."""
    match_id = arena.play(["a", "b", "c"], 0.03, seed=seed)
    return match_id, arena.url + f"ws/match/{match_id}"


def test_pages_that_follow_one_match_share_one_stream_of_the_service(arena):
    """Each page was a stream of its own from the spectator service: the process that
    plays the matches made and sent every message once a page, and the viewer made it
    JSON once a page. Pages that follow the same thing now share one stream: the service
    sees one viewer of the match however many pages follow it, and a page that joins
    while the match goes on is sent what the stream sent so far (its snapshot and the
    frames since), so every page ends with the same messages. Once every page has left,
    the stream is closed."""
    match_id, url = _live_match(arena, seed=11)
    feeds = arena.viewer.runner.app[server.FEEDS]

    async def read_all(ws) -> list[str]:
        return [msg.data async for msg in ws]

    async def go():
        async with aiohttp.ClientSession() as session:
            first = await session.ws_connect(url)
            seen = [(await first.receive()).data]
            while len(seen) < 6:                       # the match is well under way
                seen.append((await first.receive()).data)
            later = [await session.ws_connect(url) for _ in range(4)]
            # each has its first message (a stream of its own would have subscribed by then)
            heads = [(await ws.receive()).data for ws in later]
            viewers = len(arena.hub.matches[match_id].viewers)
            streams = feeds.streams()
            rest = await asyncio.gather(read_all(first), *(read_all(ws) for ws in later))
            return viewers, streams, [seen + rest[0], *([h, *r] for h, r in zip(heads, rest[1:]))]

    viewers, streams, pages = arena.run(go())
    assert (viewers, streams) == (1, 1)
    assert json.loads(pages[0][-1]).keys() == {"over"}
    # a late page's catch-up ends with how old its last frame is (for its turn clock)
    ages = [[m for m in page if "catch_up_age_ms" in m] for page in pages]
    assert [len(a) for a in ages] == [0, 1, 1, 1, 1]
    pages = [[m for m in page if "catch_up_age_ms" not in m] for page in pages]
    assert len(pages[0]) > 6 and all(page == pages[0] for page in pages), [len(p) for p in pages]
    assert feeds.streams() == 0

    # pages that leave a match still going: its stream is closed
    match_id = arena.play(["a", "b"], 0.5, seed=12)

    async def leave():
        async with aiohttp.ClientSession() as session:
            pages = [await session.ws_connect(arena.url + f"ws/match/{match_id}")
                     for _ in range(3)]
            for ws in pages:
                await ws.receive()
            during = len(arena.hub.matches[match_id].viewers), feeds.streams()
            for ws in pages:
                await ws.close()
            for _ in range(100):
                if not arena.hub.matches[match_id].viewers:
                    break
                await asyncio.sleep(0.05)
            return during, (len(arena.hub.matches[match_id].viewers), feeds.streams())

    assert arena.run(leave()) == ((1, 1), (0, 0))


@pytest.mark.parametrize("asked, followed", [(0, 0), (1, 1), (2, 2), (3, 5), (5, 5), (6, 10),
                                             (999, 1000), (1001, 2000), (99_999, 100_000),
                                             (100_000, 100_000)])
def test_a_delay_is_rounded_up_to_one_of_a_few_steps(asked, followed):
    assert feeds.shared_delay(asked) == followed
    assert len(feeds.DELAY_STEPS) == 17


def test_pages_open_a_bounded_number_of_streams_whatever_delay_or_tournament_they_ask(
        arena, monkeypatch):
    """Each distinct ?delay= (0 to 100,000) or ?tournament= was a stream of its own from
    the spectator service, and every visitor of a public viewer is the one loopback
    address of its reverse proxy: one visitor opened 1,000 (/ws/tv?delay=0..999), and
    /api/matches took 3 to 11 s where it took 18 ms. A delay is rounded up to one of
    DELAY_STEPS; past MAX_STREAMS a page that would open another stream is told why, to
    try again (retry), and closed, while the pages on the streams open go on; a stream
    closed frees its place. The front page's streams (TV, the tournament running, at any
    delay step) are opened beyond the cap: one visitor asking for 64 made-up
    tournaments' TV held every place, and every other page was refused."""
    monkeypatch.setattr(feeds, "MAX_STREAMS", 3)
    match_id = arena.play(["a", "b"], 0.3, seed=15)
    shared = arena.viewer.runner.app[server.FEEDS]

    async def go():
        async with aiohttp.ClientSession() as session:
            async def page(path):
                ws = await session.ws_connect(arena.url + path)
                return ws, json.loads((await ws.receive()).data)

            async def refused(path):
                ws, first = await page(path)
                rest = [msg async for msg in ws]
                return first, rest, ws.closed

            pages = [await page(f"ws/match/{match_id}?delay={d}") for d in (3, 4, 5, 0, 6)]
            tv = await page("ws/tv")              # the front page's: beyond the cap
            held = shared.streams(), len(arena.hub.matches[match_id].viewers)
            beyond = [await refused(path) for path in (
                f"ws/match/{match_id}?delay=20", f"ws/match/{match_id}?delay=1",
                "ws/tv?tournament=another", "ws/tournament?name=x")]
            front = await page("ws/tv?delay=2")   # the front page's too, at another step
            joined = await page("ws/tv?delay=0")  # TV's stream, open: joined
            for ws, _ in (tv, joined, front):
                await ws.close()
            await pages[-1][0].close()            # the delay 10 stream's only page
            for _ in range(100):                  # its stream closes with it
                if shared.streams() < 3:
                    break
                await asyncio.sleep(0.05)
            freed = await page(f"ws/match/{match_id}?delay=20")
            # the pages on the streams kept still get the match
            going = []
            for ws, _ in pages[:-1]:
                while "catch_up_age_ms" in (message := json.loads((await ws.receive()).data)):
                    pass
                going.append(message)
            for ws, _ in [*pages[:-1], freed]:
                await ws.close()
            return held, [p[1] for p in pages], tv[1], beyond, joined[1], front[1], freed[1], going

    held, firsts, tv, beyond, joined, front, freed, going = arena.run(go())
    # delay 5 (3, 4 and 5), delay 0, delay 10 (6), and TV: four streams, four viewers
    assert held == (4, 4)
    assert all("snapshot" in m for m in [*firsts, tv, joined, front, freed])
    for first, rest, closed in beyond:
        assert first == {"error": "this web viewer follows 3 streams of the spectator service "
                                  "already, the most it may; try again later", "retry": True}
        assert rest == [] and closed
    assert all(m.keys() & {"frame", "frames", "over"} for m in going), going


def test_a_stream_past_what_it_keeps_for_late_pages_takes_no_new_page(arena, monkeypatch):
    """What a shared stream keeps for pages that join late is capped (a long match's
    frames, a ladder's standings for weeks): past it, the next page opens a stream of its
    own, which begins with a fresh snapshot, and both pages see the whole match."""
    monkeypatch.setattr(feeds, "CATCH_UP_BYTES", 3000)
    match_id, url = _live_match(arena, seed=13)

    async def go():
        async with aiohttp.ClientSession() as session:
            first = await session.ws_connect(url)
            seen = [(await first.receive()).data]
            while sum(map(len, seen)) <= 3000:
                seen.append((await first.receive()).data)
            second = await session.ws_connect(url)
            own = [(await second.receive()).data]
            viewers = len(arena.hub.matches[match_id].viewers)
            seen += [msg.data async for msg in first]
            own += [msg.data async for msg in second]
            return viewers, [[json.loads(m) for m in page] for page in (seen, own)]

    viewers, pages = arena.run(go())
    assert viewers == 2
    for messages in pages:
        assert "snapshot" in messages[0] and "over" in messages[-1]
        seqs = _seqs(messages)
        assert seqs == list(range(len(seqs)))
    assert len(pages[1][0]["snapshot"]["frames"]) > 0     # it joined the match under way


def test_a_page_that_closes_with_its_request_leaves_no_stream_open(arena):
    """A page whose close frame came with its upgrade request: its socket's reading ended
    at once, and its sender was cancelled before its first step, whose cleanup never ran.
    Its place kept the stream (and the service's subscription) open, outside the caps on
    pages: 200 such requests were 200 streams and no page (review 23)."""
    match_id = arena.play(["a", "b"], 0.5, seed=14)
    feeds = arena.viewer.runner.app[server.FEEDS]
    host, port = arena.url.split("//")[1].rstrip("/").split(":")
    request = (f"GET /ws/match/{match_id}?delay={{}} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n")
    close = bytes([0x88, 0x82, 1, 2, 3, 4, 0x03 ^ 1, 0xE8 ^ 2])   # masked close, code 1000
    for delay in range(5):
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(request.format(delay).encode() + close)
            while raw.recv(65536):
                pass
    deadline = time.monotonic() + 10
    while (feeds.streams() or arena.run(_viewers(arena, match_id))) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    assert (feeds.streams(), arena.run(_viewers(arena, match_id))) == (0, 0)


async def _viewers(arena, match_id: str) -> int:
    return len(arena.hub.matches[match_id].viewers)


def test_a_late_page_is_not_dropped_for_what_it_joined_with(arena, monkeypatch):
    """A page that joined a stream under way got its catch-up counted against the
    messages it may fall behind by: on a long match it was dropped (and reconnected, and
    was dropped again) as soon as a frame came before it had read it all. Only what comes
    after its join counts."""
    monkeypatch.setattr(feeds, "BEHIND", 3)
    _, url = _live_match(arena, seed=15)

    async def go():
        async with aiohttp.ClientSession() as session:
            first = await session.ws_connect(url)
            for _ in range(10):
                await first.receive()
            late = await session.ws_connect(url)
            got = [json.loads(msg.data) async for msg in late]
            await first.close()
            return got

    got = arena.run(go())
    assert len(got) > 10 and "over" in got[-1], got[-1]
    assert not any("error" in m for m in got)


def test_a_late_page_is_told_how_old_its_last_frame_is(arena):
    """A page that joined a stream under way started its turn clock when the catch-up
    came: a seat that had been thinking for seconds showed "thinking 0.0 s" there, and
    the right time on a page that opened a stream of its own. The catch-up now ends with
    how long ago its last frame came, and only a late page's does."""
    match_id = arena.play(["a", "b"], 2.0, seed=16)
    url = arena.url + f"ws/match/{match_id}"

    async def go():
        async with aiohttp.ClientSession() as session:
            first = await session.ws_connect(url)
            head = [json.loads((await first.receive(timeout=30)).data)]
            asked = time.monotonic()            # the frame comes after this
            while "frame" not in head[-1]:      # a turn has begun: its frame just came
                head.append(json.loads((await first.receive(timeout=30)).data))
            await asyncio.sleep(0.8)
            late = await session.ws_connect(url)
            caught = [json.loads((await late.receive(timeout=30)).data)
                      for _ in range(len(head) + 1)]
            joined = time.monotonic()
            return head, caught, (joined - asked) * 1000

    head, caught, most_ms = arena.run(go())
    assert not any("catch_up_age_ms" in m for m in head)
    assert caught[:-1] == head
    assert 800 <= caught[-1]["catch_up_age_ms"] <= most_ms + 1, (caught[-1], most_ms)


def test_a_late_tournament_page_gets_only_the_latest_standings(arena):
    """A tournament's stream sends its snapshot once, then each match started and
    finished, and the standings (a whole table and crosstable) again and again: kept for
    late pages, they filled what a stream keeps within seconds on a big tournament, and
    every later page opened a stream of its own. Only the latest standings are kept."""
    arena.tournament("cup", ["a", "b"], 6)
    feeds_of = arena.viewer.runner.app[server.FEEDS]
    url = arena.url + "ws/tournament?name=cup"
    held = {}

    async def first_page():
        held["session"] = aiohttp.ClientSession()
        held["first"] = await held["session"].ws_connect(url)
        return json.loads((await held["first"].receive()).data)

    seen = [arena.run(first_page())]

    async def next_standings():
        while True:
            seen.append(json.loads((await held["first"].receive(timeout=30)).data))
            if "standings" in seen[-1]:
                return

    for seed in range(3):   # each match's standings heard before the next match
        arena.wait(arena.play(["a", "b"], 0.0, seed=100 + seed, tournament="cup"))
        arena.run(next_standings())

    async def late_page():
        try:
            late = await held["session"].ws_connect(url)
            caught = []
            while len(caught) < len(seen) - sum("standings" in m for m in seen) + 1:
                caught.append(json.loads((await late.receive(timeout=30)).data))
            return caught, feeds_of.streams()
        finally:
            await held["session"].close()

    caught, streams = arena.run(late_page())
    assert streams == 1
    assert [m for m in caught if "standings" not in m] == [m for m in seen if "standings" not in m]
    assert [m for m in caught if "standings" in m] == [[m for m in seen if "standings" in m][-1]]


def test_tv_and_tournament_sockets_start_with_a_snapshot(arena):
    arena.tournament("cup", ["a", "b"], 2)
    match_id = arena.play(["a", "b"], 0.05, seed=8, tournament="cup")
    [tv], _ = socket_messages(arena, "/ws/tv", limit=1)
    assert tv["snapshot"]["reason"] == "tv" and tv["snapshot"]["match"]["match_id"] == match_id
    [cup], _ = socket_messages(arena, "/ws/tournament?name=cup", limit=1)
    assert cup["snapshot"]["name"] == "cup" and cup["snapshot"]["bots"] == ["a", "b"]


def test_a_page_s_socket_takes_no_compressed_or_large_message(arena):
    """A page sends nothing down its WebSocket, yet aiohttp took messages of 4 MiB there,
    buffered whole, and inflated compressed ones: 4 KB on the wire, 4 MiB of zeros and
    3.5 ms of the event loop that plays `arena serve --web`'s matches each (a script's
    1.6 MB/s held that loop the whole time). No compression is agreed, and a message past
    MAX_PAGE_MESSAGE closes the socket (1009, too big)."""
    arena.play(["a", "b"], 0.05, seed=9)

    async def go():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(arena.url + "ws/tv", compress=15) as ws:
                agreed = ws.compress
                if agreed:
                    return agreed, None
                await ws.send_bytes(b"x" * 65536)   # 64 KiB: past MAX_PAGE_MESSAGE
                async with asyncio.timeout(10):
                    async for _ in ws:
                        pass
                return agreed, ws.close_code

    agreed, code = arena.run(go())
    assert agreed == 0, "permessage-deflate was agreed"
    assert code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG, code


MALFORMED = [b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
             b"GET /\x00 HTTP/1.1\r\n\r\n",
             b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"]


def test_a_malformed_request_or_a_visitor_gone_is_one_line_not_a_traceback(arena, caplog):
    """A request aiohttp cannot parse, and a page gone before its WebSocket's answer was
    written, each logged an ERROR with a ~1 KB traceback (311 of them, 324 KB, after one
    test of review 41). A malformed request is one INFO line that says from where and
    why; a visitor gone, a DEBUG line; a fault of the viewer's own keeps its traceback."""
    match_id = arena.play(["a", "b"], 0.3, seed=16)
    host, port = arena.url.split("//")[1].rstrip("/").split(":")
    caplog.set_level(logging.DEBUG, logger="aiohttp")
    for request in MALFORMED:
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(request)
            assert re.match(rb"HTTP/1\.[01] 400 ", raw.recv(100))
    upgrade = (f"GET /ws/match/{match_id} HTTP/1.1\r\nHost: {host}:{port}\r\n"
               "Upgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    for _ in range(20):   # gone at once (a reset), as its answer is being written
        raw = socket.create_connection((host, int(port)), timeout=10)
        raw.sendall(upgrade.encode())
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        raw.close()
    assert get(arena, "/api/matches")[0] == 200
    time.sleep(0.5)
    records = [r for r in caplog.records if r.name.startswith("aiohttp")]
    assert not [r for r in records if r.levelno >= logging.WARNING or r.exc_info], \
        [r.getMessage()[:200] for r in records if r.levelno >= logging.WARNING or r.exc_info]
    lines = [r.getMessage() for r in records if r.levelno == logging.INFO]
    assert lines == [f"a malformed HTTP request from 127.0.0.1, answered 400: {why}" for why in
                     ("Invalid header token", "Invalid char in url path",
                      "Invalid character in Content-Length")], lines
    gone = [r.getMessage() for r in records if r.levelno == logging.DEBUG
            and r.getMessage().startswith("a visitor left before its answer was sent")]
    assert gone and all("\n" not in line for line in gone)

    caplog.clear()
    try:
        raise RuntimeError("a fault of the viewer's own")
    except RuntimeError as exc:
        serverlog.ServerLog().exception("Error handling request from %s", "127.0.0.1",
                                        exc_info=exc)
    [fault] = caplog.records
    assert fault.levelno == logging.ERROR and fault.exc_info[1].args == ("a fault of the viewer's own",)


def test_an_unknown_match_is_an_error_the_page_does_not_retry(arena):
    messages, closed = socket_messages(arena, "/ws/match/nope")
    assert closed and messages == [{"error": "no match 'nope' here", "retry": False}]
    messages, closed = socket_messages(arena, "/ws/tournament?name=nope")
    assert closed and messages[0]["retry"] is True   # it may start later
    assert "no tournament 'nope'" in messages[0]["error"]


def test_without_a_spectator_service_the_viewer_says_so_and_recovers(tmp_path):
    port = free_port()
    arena = LiveArena(f"127.0.0.1:{port}")
    try:
        arena.serve_web()
        assert get(arena, "/")[0] == 200
        status, _, body = get(arena, "/api/matches")
        error = json.loads(body)
        assert status == 503 and error["retry"] is True
        assert error["error"].startswith(f"no spectator service at 127.0.0.1:{port} (")
        messages, closed = socket_messages(arena, "/ws/tv")
        assert closed and messages[0]["retry"] is True
        arena.serve_spectators()
        deadline = time.monotonic() + 15
        while (status := get(arena, "/api/matches")[0]) != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert status == 200, "the viewer did not find the service once it started"
    finally:
        arena.close()


# ---------------------------------------------------------------- the commands


def start_web(*args) -> tuple[subprocess.Popen, str]:
    """``arena web ARGS`` in the background, and the address it printed."""
    proc = subprocess.Popen(command("web", *args), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    found = re.fullmatch(r"web viewer at (http://127\.0\.0\.1:\d+/)\n", line)
    assert found, line + proc.stderr.read() if proc.poll() is not None else line
    return proc, found.group(1)


def test_arena_web_warns_when_nothing_answers_and_serves_on(tmp_path):
    proc, url = start_web("--connect", f"127.0.0.1:{free_port()}", "--port", "0")
    try:
        warning = proc.stderr.readline()
        assert re.fullmatch(r"arena web: warning: no spectator service at 127\.0\.0\.1:\d+ \("
                            r".*; the page says so and keeps trying\n", warning), warning
        assert fetch(url)[0] == 200
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0


def test_an_address_that_is_not_host_port_is_one_line_and_exit_2():
    proc = subprocess.run(command("web", "--connect", "localhost", "--port", "0"), cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("arena web: error: 'localhost' is not HOST:PORT")
    assert len(proc.stderr.splitlines()) == 1


def fetch(url: str) -> tuple[int, bytes]:
    """A GET from a synchronous test: (status, body)."""
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status, answer.read()


@pytest.mark.parametrize("host", ["", " "])
def test_an_empty_host_is_one_line_and_exit_2_not_every_network(host):
    # aiohttp listened on every interface, IPv4 and IPv6, for an empty host; a bad
    # option, it exited 1, as for a failure
    proc = subprocess.run(command("web", "--host", host, "--port", 0, "--connect", "127.0.0.1:1"),
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("arena web: error: the web viewer needs a host to listen on (--host): "
                           "give 0.0.0.0 to serve every network\n")


def test_a_web_port_in_use_is_one_line(tmp_path, mark):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(command("web", "--port", port, "--connect", "127.0.0.1:1"), cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        # exit 2, as match, tournament and serve below refuse it (arena web exited 1)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr == (f"arena web: error: the web viewer cannot listen on 127.0.0.1:{port}: "
                               "the port is already in use\n")
        # match, tournament and serve refuse it before anything runs or is stored (a
        # tournament was stored with no match, as the latest; a new server's organiser
        # token was printed, then the server stopped)
        for what in (["match", BOTS / "random", BOTS / "greedy", "--out", tmp_path / "out"],
                     ["tournament", BOTS / "random", BOTS / "greedy", "--db", tmp_path / "t.db"],
                     ["serve", "--db", tmp_path / "s.db", "--listen", "127.0.0.1:0"]):
            proc = subprocess.run(command(*what, "--web", port), cwd=ROOT, env=env_for(mark),
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert proc.stdout == "" and proc.stderr.splitlines() == [
                (f"arena {what[0]}: error: the web viewer cannot listen on 127.0.0.1:{port}: the "
                 "port is already in use")]
        assert not (tmp_path / "t.db").exists() and not (tmp_path / "s.db").exists()


def test_arena_match_web_serves_the_viewer_on_its_own_spectators(tmp_path, mark):
    proc = subprocess.run(command("match", BOTS / "random", BOTS / "greedy", "--web", "0",
                                  "--out", tmp_path / "out"), cwd=ROOT, env=env_for(mark),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    spectators = re.search(r"^spectators: arena watch (127\.0\.0\.1:\d+) --tv", proc.stdout, re.M)
    assert spectators, proc.stdout
    assert re.search(r"^web viewer at http://127\.0\.0\.1:\d+/$", proc.stdout, re.M), proc.stdout


def test_the_viewer_of_web_is_a_process_of_its_own_and_goes_with_its_arena(tmp_path, mark):
    """`--web`'s viewer ran in the process that plays the matches: 8 loops of GET
    /api/record on a finished 8-seat match held `arena match --web`'s games to a thirtieth
    of their pace. It is a child at a lower priority, and it goes with its arena, even one
    killed with SIGKILL (nothing else would stop it)."""
    with reaped(subprocess.Popen(command("match", BOTS / "random", BOTS / "greedy", "--games", 100_000,
                                         "--web", "0", "--out", tmp_path / "out", "-q"),
                                 cwd=ROOT, env=env_for(mark), stdout=subprocess.PIPE,
                                 text=True)) as proc:
        while not (found := re.fullmatch(r"web viewer at (http://127\.0\.0\.1:\d+/)\n",
                                         line := proc.stdout.readline())):
            assert line, "arena match ended without its viewer's line"
        url = found.group(1)
        assert fetch(url + "api/matches")[0] == 200
        viewers = marked_running(mark, b"arena.web.process")
        assert len(viewers) == 1 and viewers[0] != proc.pid
        stat = Path(f"/proc/{viewers[0]}/stat").read_text().rsplit(")", 1)[1].split()
        # its parent; its nice value, 10 above the arena's (a test run under nice: 19 at most)
        assert int(stat[1]) == proc.pid and int(stat[16]) == min(19, os.getpriority(
            os.PRIO_PROCESS, proc.pid) + 10)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while running(viewers[0]):
            assert time.monotonic() < deadline, "the viewer outlived its arena"
            time.sleep(0.05)
        with pytest.raises(OSError):
            fetch(url + "api/matches")


def test_the_viewer_of_web_imports_no_module_of_the_working_folder(tmp_path, mark):
    """`python -m` puts the working folder first on the module path: the viewer's process
    imported a module of whatever folder the arena was started in (a bot's, of its author's
    making, in place of aiohttp or any module of the standard library), outside the
    sandbox, or failed to start where one was named like it."""
    folder = tmp_path / "here"
    folder.mkdir()
    (folder / "aiohttp.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('imported').touch()\n")
    proc = subprocess.run(command("match", BOTS / "random", BOTS / "greedy", "--web", "0",
                                  "--out", tmp_path / "out", "-q"),
                          cwd=folder, env=env_for(mark), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^web viewer at http://127\.0\.0\.1:\d+/$", proc.stdout, re.M), proc.stdout
    assert not (folder / "imported").exists()


def test_a_viewer_of_web_that_dies_is_told_of_and_the_arena_plays_on(tmp_path, mark):
    """The viewer is a process of its own, which may end while its arena plays (the
    out-of-memory killer's choice, a kill): its arena said nothing, and the address it
    printed led nowhere for the rest of the run."""
    printed = tmp_path / "stdout"
    with printed.open("w") as stdout, reaped(subprocess.Popen(
            command("match", BOTS / "random", BOTS / "greedy", "--games", 100_000, "--web", "0",
                    "--out", tmp_path / "out", "-q"),
            cwd=ROOT, env=env_for(mark), stdout=stdout, stderr=subprocess.PIPE, text=True)) as proc:
        deadline = time.monotonic() + 60
        while "web viewer at" not in printed.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, printed.read_text()
            time.sleep(0.05)
        viewer = marked_running(mark, b"arena.web.process")[0]
        os.kill(viewer, signal.SIGKILL)
        ready, _, _ = select.select([proc.stderr], [], [], 20)
        assert ready, "nothing said of the viewer's end"
        line = proc.stderr.readline()
        assert re.fullmatch(r"arena: warning: the web viewer at http://127\.0\.0\.1:\d+/ "
                            r"stopped \(killed by signal 9\); the matches go on without it\n",
                            line), line
        assert proc.poll() is None   # the matches go on
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130


def test_arena_serve_web_serves_the_viewer_on_the_server_s_spectators(tmp_path, mark):
    served = Served(tmp_path / "arena.db", mark, "--web", "0")
    try:
        url = re.search(r"^web viewer at (http://127\.0\.0\.1:\d+/)$", served._wait_for(
            r"web viewer at http://"), re.M).group(1)
        status, body = fetch(url + "api/matches")
        assert status == 200 and json.loads(body) == {}
    finally:
        assert served.stop() == 0


def on_every_network(test):
    """``test(ip, port)``, a coroutine, run against a web viewer listening on every network
    (``ip``: this machine's address on one, not loopback) over a live arena's spectators;
    what it returns."""
    ip = own_network_ip()
    live = LiveArena()
    try:
        live.serve_spectators()

        async def go():
            viewer = await WebViewer.start(live.spectators_at, host="0.0.0.0", port=0)
            try:
                return await test(ip, int(viewer.url.rstrip("/").rsplit(":", 1)[1]))
            finally:
                await viewer.stop()

        return live.run(go())
    finally:
        live.close()


def test_a_connection_without_a_whole_request_is_closed_but_a_quiet_websocket_is_not(monkeypatch):
    """A connection that sent half a request head held its place for aiohttp's default
    hour: one that has not sent a whole request within IDLE_S of opening, or of its last
    answer, is closed; a page's WebSocket stays however quiet its match."""
    monkeypatch.setattr(server, "IDLE_S", 1.0)
    live = LiveArena()
    try:
        live.serve_spectators()
        url = live.serve_web()
        port = int(url.rstrip("/").rsplit(":", 1)[1])

        async def closed_after(request: bytes) -> tuple[bytes, float]:
            """What the viewer answered ``request`` and when it closed, in s."""
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            start = time.monotonic()
            writer.write(request)
            async with asyncio.timeout(10):
                answer = await reader.read()
            writer.close()
            return answer, time.monotonic() - start

        async def quiet_socket_open_after(seconds: float) -> bool:
            async with aiohttp.ClientSession() as session:
                async with session.ws_connect(url + "ws/tv") as ws:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(seconds):
                            async for _ in ws:
                                pass
                    return not ws.closed

        async def go():
            return (await closed_after(b"GET / HTTP/1.1\r\nHost: localhost\r\n"),   # and never the rest
                    await closed_after(b"GET /api/matches HTTP/1.1\r\nHost: localhost\r\n\r\n"),
                    await quiet_socket_open_after(3.0))

        (half, half_s), (whole, whole_s), socket_open = live.run(go())
    finally:
        live.close()
    assert half == b"" and 0.9 < half_s < 5, (half, half_s)
    assert whole.startswith(b"HTTP/1.1 200 ") and 0.9 < whole_s < 5, (whole[:40], whole_s)
    assert socket_open


def test_an_upload_sent_slowly_holds_up_no_other_and_gets_a_408(monkeypatch):
    """An upload whose body never came held the one replay at a time: every other upload
    was answered 503 for as long as its sender liked. Uploads are received first, at most
    MAX_UPLOADS_PER_HOST of them from one network address (429 beyond), each within
    UPLOAD_S and the time its declared size takes at UPLOAD_RATE (408 after)."""
    monkeypatch.setattr(server, "UPLOAD_S", 1.0)
    monkeypatch.setattr(server, "UPLOAD_RATE", 1000)     # 1,000 bytes declared: 1 s more

    async def test(ip: str, port: int):
        async def slow_upload(host: str):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(b"POST /api/record?name=x.jsonl HTTP/1.1\r\nHost: localhost\r\n"
                         b"X-Ono99-Upload: 1\r\nContent-Length: 1000\r\n\r\n{")  # and no more
            await writer.drain()
            return reader, writer

        start = time.monotonic()
        held = [await slow_upload(ip) for _ in range(server.MAX_UPLOADS_PER_HOST)]
        reader, writer = await slow_upload(ip)
        async with asyncio.timeout(10):
            beyond = (await reader.readline()).decode()
        writer.close()
        async with aiohttp.ClientSession() as session:     # meanwhile, from elsewhere
            async with session.post(f"http://127.0.0.1:{port}/api/record", data=b"hello\n",
                                    headers=PAGE) as response:
                other = response.status
        async with asyncio.timeout(10):
            timed_out = [(await r.readline()).decode() for r, _ in held]
        waited = time.monotonic() - start
        for _, w in held:
            w.close()
        return beyond, other, timed_out, waited

    beyond, other, timed_out, waited = on_every_network(test)
    assert beyond.startswith("HTTP/1.1 429 "), beyond
    assert other == 400      # read and replayed at once (it is not a record), not a 503
    assert all(line.startswith("HTTP/1.1 408 ") for line in timed_out), timed_out
    assert 1.9 < waited < 6, waited


def test_one_address_s_sockets_are_capped_and_local_ones_are_not_counted(monkeypatch):
    """A script holding 1,000 WebSockets locked every page out: one network address now
    holds at most MAX_SOCKETS_PER_HOST (a 429 beyond); loopback (the organiser's own
    machine, a reverse proxy on it) is not counted."""
    monkeypatch.setattr(server, "MAX_SOCKETS_PER_HOST", 2)

    async def test(ip: str, port: int) -> int:
        far, near = f"ws://{ip}:{port}/ws/tv", f"ws://127.0.0.1:{port}/ws/tv"
        async with aiohttp.ClientSession() as session:
            held = [await session.ws_connect(far) for _ in range(2)]
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await session.ws_connect(far)
            mine = [await session.ws_connect(near) for _ in range(3)]
            await held[0].close()
            await asyncio.sleep(0.3)
            again = await session.ws_connect(far)   # its seat is free again
            for ws in held + mine + [again]:
                await ws.close()
            return refused.value.status

    assert on_every_network(test) == 429


def test_connections_are_capped_in_all_and_per_address_and_a_refused_one_hears_why(monkeypatch):
    """5,000 connections that each sent half a request head and never the rest were all
    held open, each a file descriptor of the process that plays the matches: the viewer
    holds at most MAX_CONNECTIONS (within a quarter of its open-files limit), at most
    MAX_CONNECTIONS_PER_HOST of them from one network address (loopback not counted), and
    answers one beyond with a 503 that says why."""
    monkeypatch.setattr(guard, "MAX_CONNECTIONS", 6)
    monkeypatch.setattr(guard, "MAX_CONNECTIONS_PER_HOST", 2)

    async def test(ip: str, port: int):
        async def half_a_request(host: str):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\n")    # and never the rest
            await writer.drain()
            return reader, writer

        async def answer(reader) -> bytes:
            async with asyncio.timeout(10):
                return await reader.read()

        far = [await half_a_request(ip) for _ in range(2)]
        reader, writer = await half_a_request(ip)
        beyond_host = await answer(reader)
        writer.close()
        near = [await half_a_request("127.0.0.1") for _ in range(4)]   # 6 in all
        reader, writer = await half_a_request("127.0.0.1")
        beyond_all = await answer(reader)
        writer.close()
        for _, w in far[:1] + near[:1]:
            w.close()
        await asyncio.sleep(0.3)
        async with aiohttp.ClientSession() as session:   # room again
            async with session.get(f"http://{ip}:{port}/api/matches") as response:
                served = response.status
        for _, w in far[1:] + near[1:]:
            w.close()
        return ip, beyond_host, beyond_all, served

    ip, beyond_host, beyond_all, served = on_every_network(test)
    assert beyond_host.startswith(b"HTTP/1.1 503 ")
    assert beyond_host.endswith(f"{ip} has 2 connections open here already, the most one "
                                "address may".encode())
    assert beyond_all.startswith(b"HTTP/1.1 503 ")
    assert beyond_all.endswith(b"this viewer has 6 connections open already; try again later")
    assert served == 200


def test_the_match_list_is_asked_of_the_service_once_however_many_pages_ask(arena, monkeypatch):
    """A viewer on another machine than the service is one network host there, whose
    quick calls are capped: one visitor's loop of /api/matches left every other page's
    list a 503. Pages asking for one tournament's list within LIST_FRESH_S share one
    call to the service."""
    from arena.web.records import LIST_FRESH_S
    match_id = arena.play(["a", "b"], 0.0, seed=1)
    arena.wait(match_id)
    asked = []
    summaries = arena.hub.summaries

    def counted(*args):
        asked.append(args)
        return summaries(*args)
    monkeypatch.setattr(arena.hub, "summaries", counted)

    async def go():
        async with aiohttp.ClientSession() as session:
            async def listed():
                async with session.get(arena.url + "api/matches") as response:
                    return response.status, await response.json()
            together = await asyncio.gather(*(listed() for _ in range(30)))
            once = len(asked)
            await asyncio.sleep(LIST_FRESH_S + 0.1)
            later = await listed()
            return together, once, later, len(asked)

    together, once, later, twice = arena.run(go())
    assert all(status == 200 and body["matches"][0]["match_id"] == match_id
               for status, body in together + [later])
    assert once == 1 and twice == 2
