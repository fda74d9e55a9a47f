"""The web viewer's HTTP side: one page, its files, a JSON API and WebSockets that relay
the spectator service's streams to the page.

It is built on aiohttp: HTTP, WebSockets and static files in one well-kept asyncio
library, running in the event loop grpc.aio already uses (``arena match --web`` serves it
beside the referee, in one process), with no separate ASGI server to run.

=========================  ==========================================================
``GET /``                  the page (``static/index.html``; no build step)
``GET /static/...``        its CSS and JavaScript
``GET /api/matches``       ListMatches (``?tournament=T`` for one tournament's)
``GET /api/record/ID``     GetRecord, as the JSON a download saves (``records.to_json``)
``POST /api/record``       an uploaded `arena match` event log (or record), as a record
                           (the page's own request: it carries ``X-Ono99-Upload``)
``GET /ws/match/ID``       WatchMatch (``?delay=N``, rounded up: feeds.DELAY_STEPS)
``GET /ws/tv``             WatchTV (``?tournament=T&delay=N``)
``GET /ws/tournament``     WatchTournament (``?name=N``; none: the one running)
=========================  ==========================================================

A WebSocket carries one JSON object per message of the stream (``{"snapshot": ...}``,
``{"frame": ...}``, ``{"frames": {"frames": [...]}}``: the proto's ``oneof`` by name), in
the JSON a download holds (:func:`arena.watch.records.to_dict`). Pages that follow the same
thing share one stream of the service (:mod:`arena.web.feeds`); a page that joins one under
way is first sent its last snapshot and what came since. A stream that cannot start or
breaks sends ``{"error": LINE, "retry": BOOL}`` and closes; the page tries again, and
begins again from a snapshot, so a page that reconnects is in sync. The page is
embeddable: no header forbids framing it.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import sys
import tempfile
import weakref
from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from pathlib import Path

from aiohttp import web
from google.protobuf.message import Message
from ono99.transport import grpc
from ono99.v1 import spectator_pb2 as pb

from arena.bots import sandbox
from arena.text import printable
from arena.watch import hosts, records
from arena.watch.client import AsyncSpectatorClient, WatchError
from arena.watch.hub import MAX_DELAY_TURNS
from arena.web import DEFAULT_HOST, DEFAULT_PORT, WebServeError, replayer
from arena.web.feeds import Follower, SharedFeeds, TooManyStreams, shared_delay
from arena.web.guard import Connections, GuardedSite, Names, guard, loopback
from arena.web.records import MatchLists, RecordsJson
from arena.web.serverlog import ServerLog

STATIC = Path(__file__).parent / "static"
MAX_UPLOAD = 16 * 2**20      # an event log of a very long match is a few MB
MAX_SOCKETS = 1000          # pages following at once (sharing streams: arena.web.feeds): then 503
MAX_SOCKETS_PER_HOST = 100  # ... from one network address (local ones are not counted): then 429
MAX_UPLOAD_TURNS = 20_000   # an uploaded match replayed (a long points game: a few thousand)
#: Uploads being received at once (each up to MAX_UPLOAD in memory), and from one network
#: address (loopback not counted), each within UPLOAD_S plus its declared size at
#: UPLOAD_RATE (a 16 MiB file: 5 minutes): then a 503, a 429, a 408. An upload sent
#: slowly, or never finished, held the one replay at a time, and every other upload was
#: answered 503 for as long as its sender liked.
MAX_UPLOADS = 4
MAX_UPLOADS_PER_HOST = 2
UPLOAD_S = 60.0
UPLOAD_RATE = 64 * 1024      # bytes a second: a slow uplink's (0.5 Mbit/s)
#: Seconds a connection may wait without a whole request: from when it opens, and from
#: its last answer (aiohttp's keep-alive timeout, which closes a connection whose handler
#: waits for a request; a WebSocket or a request being answered is never cut). aiohttp's
#: default, an hour, let a connection that sent half a request head (slowloris) hold its
#: place and file descriptor that long. A page asks every few seconds; Go servers commonly
#: give a request head 2-10 s (ReadHeaderTimeout).
IDLE_S = 15.0
#: The header the page's upload carries. A request with a header of its own is not one a
#: page of another site can send without this server's consent (a CORS preflight, which
#: it never grants): no other site can make a visitor's browser post uploads here.
UPLOAD_HEADER = "X-Ono99-Upload"
#: The largest message a page may send down its WebSocket. The page sends none (a socket
#: only carries the stream to it); aiohttp's default took 4 MiB a message, each buffered
#: whole before it was read, and inflated them too: a message compressed from 4 MiB of
#: zeros is 4 KB on the wire, and inflating it took 3.5 ms of the event loop that plays
#: `arena serve --web`'s matches (16 MB of such messages in 14 s held the loop the whole
#: time: the ladder went from 2 matches a second to 1 in 7); 40 sockets each one byte
#: short of a 4 MiB message kept 165 MB. Beyond this size the socket is closed (1009).
MAX_PAGE_MESSAGE = 1024
#: An API call the spectator service could not take now (UNAVAILABLE: it is away or
#: stopping; RESOURCE_EXHAUSTED: its queue of stored records to make is full) is a 503
#: with this Retry-After, in seconds: the service comes back within a second or two of a
#: restart (the client looks for it every second), and its record queue makes one record
#: at a time with a rest after each. These were a 404 ("32 records are being made
#: already") or a 502: a download that was only early read as a match that is not there.
RETRY_AFTER_S = 5
#: The HTTP status of a failed API call, by the service's gRPC code (else 502: the
#: service answered in a way the viewer cannot pass on)
API_STATUS = {
    grpc.StatusCode.NOT_FOUND: 404,             # no such match: the only 404
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,   # a match still being played: watch it live
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}
#: A stream message over this many bytes (a snapshot, a batch of frames) is made JSON in
#: a thread, not the event loop (a frame is about 300 bytes: 1 ms of Python for 32 KB)
BIG_MESSAGE = 32 * 1024

SPECTATORS = web.AppKey("spectators", AsyncSpectatorClient)
SOCKETS = web.AppKey("sockets", weakref.WeakSet)
PER_HOST = web.AppKey("per_host", hosts.PerHost)
#: one upload replayed at a time (in a process of its own): a second one meanwhile gets a 503
UPLOADING = web.AppKey("uploading", asyncio.Lock)


RECORDS = web.AppKey("records", RecordsJson)
LISTS = web.AppKey("lists", MatchLists)
FEEDS = web.AppKey("feeds", SharedFeeds)
RECEIVING = web.AppKey("receiving", Connections)   # uploads being received


def make_app(spectators: AsyncSpectatorClient, names: Names | None = None) -> web.Application:
    """The viewer's routes over a client of the spectator service; ``names``: the host
    names it answers to (None: any)."""
    app = web.Application(client_max_size=MAX_UPLOAD, middlewares=[guard(names)])
    app[SPECTATORS] = spectators
    app[SOCKETS] = weakref.WeakSet()
    app[PER_HOST] = hosts.PerHost(MAX_SOCKETS_PER_HOST)
    app[UPLOADING] = asyncio.Lock()
    app[RECORDS] = records_json = RecordsJson()
    app[LISTS] = MatchLists(spectators.matches)
    app[FEEDS] = SharedFeeds(lambda message: _feed_text(message, records_json))
    app[RECEIVING] = Connections(MAX_UPLOADS, MAX_UPLOADS_PER_HOST)
    app.router.add_get("/", _page)
    app.router.add_static("/static", STATIC)
    app.router.add_get("/api/matches", _matches)
    app.router.add_get("/api/record/{match_id}", _record)
    app.router.add_post("/api/record", _upload)
    app.router.add_get("/ws/match/{match_id}", _watch_match)
    app.router.add_get("/ws/tv", _watch_tv)
    app.router.add_get("/ws/tournament", _watch_tournament)
    app.on_shutdown.append(_close_sockets)
    return app


class WebViewer:
    """The viewer, serving on ``url`` until :meth:`stop`."""

    def __init__(self, runner: web.AppRunner, url: str, spectators: AsyncSpectatorClient) -> None:
        self.runner = runner
        self.url = url
        self.spectators = spectators

    @classmethod
    async def start(cls, connect: str, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                    tls: bool = False, tls_ca: str | None = None,
                    allow_hosts: Sequence[str] = ()) -> WebViewer:
        """Serve on ``host:port`` (port 0: any free one) the spectator service at
        ``connect`` (with TLS: ``tls``, ``tls_ca``, as :class:`AsyncSpectatorClient`).
        On a loopback address, or wherever ``allow_hosts`` are given, it answers to IP
        addresses, ``localhost`` and the names of ``allow_hosts`` only (see
        :class:`Names`). :class:`WebServeError` if the port cannot be had."""
        if not host.strip():
            # aiohttp reads an empty host as every interface, IPv4 and IPv6: a typo would
            # show the viewer to every network
            raise WebServeError("the web viewer needs a host to listen on (--host): give "
                                "0.0.0.0 to serve every network")
        spectators = AsyncSpectatorClient(connect, tls, tls_ca)
        names = Names(allow_hosts) if loopback(host) or allow_hosts else None
        # auto_decompress off: aiohttp inflated any request's body that said it was
        # compressed (Content-Encoding: gzip, deflate) as it arrived, in the event loop,
        # whichever route it went to and whether or not its handler read it: 1 MB of gzip,
        # sent to /api/matches by anyone, held the loop that plays `arena serve --web`'s
        # matches 2 to 3 s while it inflated 1 GiB of zeros. The page never compresses.
        # logger: a malformed request is one line, a visitor gone none (arena.web.serverlog)
        runner = web.AppRunner(make_app(spectators, names), access_log=None, shutdown_timeout=1.0,
                               keepalive_timeout=IDLE_S, auto_decompress=False,
                               logger=ServerLog())
        await runner.setup()
        # an IPv6 address is bound bare and shown in brackets: `--host ::1` printed
        # http://::1:PORT/, which no browser opens, and `--host [::1]` did not resolve
        bind = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        shown = f"[{bind}]" if ":" in bind else bind
        try:
            await GuardedSite(runner, bind, port, Connections.for_this_process()).start()
        except OSError as exc:
            await runner.cleanup()
            await spectators.close()
            if exc.errno == errno.EADDRINUSE:
                why = "the port is already in use"
            elif exc.errno and exc.errno > 0:   # aiohttp's own wording is long
                why = os.strerror(exc.errno).lower()
            else:                               # a host name that does not resolve
                why = exc.strerror or str(exc)
            raise WebServeError(f"the web viewer cannot listen on {shown}:{port}: {why}") from None
        bound = runner.addresses[0][1]
        return cls(runner, f"http://{shown}:{bound}/", spectators)

    async def stop(self) -> None:
        await self.runner.cleanup()
        await self.spectators.close()


# ---------------------------------------------------------------- pages and the API


async def _page(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html")


def _failed(exc: WatchError) -> web.Response:
    """A failed call to the service as the API's answer: ``{"error", "retry"}`` with the
    status its gRPC code maps to (API_STATUS); a 503 says when to try again."""
    status = API_STATUS.get(exc.code, 502)
    busy = status == 503
    headers = {"Retry-After": str(RETRY_AFTER_S)} if busy else None
    return web.json_response({"error": str(exc), "retry": exc.retry or busy}, status=status,
                             headers=headers)


async def _matches(request: web.Request) -> web.Response:
    try:
        answer = await request.app[LISTS].get(request.query.get("tournament", ""))
    except WatchError as exc:
        return _failed(exc)
    return web.json_response(answer)


async def _record(request: web.Request) -> web.Response:
    match_id = request.match_info["match_id"]
    try:
        text = await request.app[RECORDS].get(
            match_id, lambda: request.app[SPECTATORS].record(match_id))
    except WatchError as exc:
        return _failed(exc)
    return web.Response(text=text, content_type="application/json")


async def _upload(request: web.Request) -> web.Response:
    """A file the page was given that is not a record already (an event log): read as
    `arena watch` reads it, replayed from its seed here, where the seed stays. The replay
    and its JSON are made in a process of their own (:mod:`arena.web.replayer`), one
    upload at a time, of a match of at most MAX_UPLOAD_TURNS turns: an upload never holds
    up the matches this process plays, nor keeps its memory. Its file is received first,
    in time for its size, as one of MAX_UPLOADS at most."""
    if request.headers.get(UPLOAD_HEADER) != "1":
        return web.json_response({"error": f"an upload is the viewer page's own request "
                                           f"(header {UPLOAD_HEADER}: 1)"}, status=403)
    if request.headers.get("Content-Encoding", "identity").strip().lower() != "identity":
        # not inflated here (WebViewer.start): a compressed body would be read as garbage
        return web.json_response({"error": "an upload is the file as it is, not compressed "
                                           "(Content-Encoding)"}, status=415)
    name = Path(request.query.get("name", "")).name   # a file name, never a path ...
    if name.strip(".") == "" or not name.isprintable() or len(name.encode()) > 200:
        name = "upload"                                # ... nor "." or "..", nor odd bytes
    receiving, host = request.app[RECEIVING], hosts.network_host(request.remote)
    refused = receiving.refusal(host, "uploads arriving")
    if refused is not None:
        status, why = refused
        return web.json_response({"error": why}, status=status)
    declared = min(request.content_length or 0, MAX_UPLOAD)
    allowed = UPLOAD_S + declared / UPLOAD_RATE
    receiving.add(host)
    try:
        async with asyncio.timeout(allowed):
            data = await request.read()
    except TimeoutError:
        return web.json_response({"error": f"the upload did not arrive within {allowed:.0f} s"},
                                 status=408)
    finally:
        receiving.remove(host)
    lock = request.app[UPLOADING]
    if lock.locked():
        return web.json_response({"error": "another upload is being replayed: try again "
                                           "in a moment"}, status=503)
    async with lock:
        try:
            text = await _replayed(data, name)
        except records.RecordError as exc:
            return web.json_response({"error": str(exc)}, status=400)
    return web.Response(text=text, content_type="application/json")


async def _replayed(data: bytes, name: str) -> str:
    """An uploaded file's record, as JSON, made by :mod:`arena.web.replayer` from a copy in
    a folder of this process's, removed here however the reader ends (killed, it left
    uploads of 16 MB behind)."""
    try:   # it dies with this process, whatever kills it
        death = sandbox.DIE_WITH_PARENT if await asyncio.to_thread(sandbox.setpriv_works) else ()
    except OSError:
        death = ()
    folder = await asyncio.to_thread(tempfile.mkdtemp, prefix="ono99-web-")
    path = Path(folder) / name
    try:
        try:
            await asyncio.to_thread(path.write_bytes, data)
        except OSError as exc:    # a full disk: the upload is refused, the viewer goes on
            raise records.RecordError(f"{name} cannot be kept here to be read: "
                                      f"{exc.strerror or exc}") from None
        # -P and the root as its folder: no module of the viewer's working folder is
        # imported by the process that reads a stranger's file
        reader = await asyncio.create_subprocess_exec(
            *death, sys.executable, "-P", "-m", "arena.web.replayer", str(path),
            str(MAX_UPLOAD_TURNS), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd="/",
            start_new_session=True)
        try:
            async with asyncio.timeout(replayer.CPU_S + 30):
                out, err = await reader.communicate()
        except TimeoutError:
            raise records.RecordError(f"{name} took over {replayer.CPU_S + 30} s to read: "
                                      "replay it with `arena replay`") from None
        finally:
            if reader.returncode is None:    # timed out, or the request was cancelled
                reader.kill()
                await asyncio.shield(reader.wait())
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)
    if reader.returncode == 0:
        return out.decode()
    lines = err.decode(errors="replace").strip().splitlines()
    last = printable(lines[-1].replace(str(path), name)) if lines else ""   # a traceback's last
    if reader.returncode == 2:
        raise records.RecordError(last)
    ended = f"signal {-reader.returncode}" if reader.returncode < 0 else f"exit {reader.returncode}"
    raise records.RecordError(f"{name} could not be read here (its reader ended with {ended}"
                              f"{': ' + last if last else ''}): replay it with `arena replay`")


# ---------------------------------------------------------------- streams


async def _watch_match(request: web.Request) -> web.WebSocketResponse:
    spectators = request.app[SPECTATORS]
    match_id, delay = request.match_info["match_id"], shared_delay(_number(request, "delay"))
    return await _relay(request, ("match", match_id, delay),
                        lambda: spectators.watch_match(match_id, delay))


async def _watch_tv(request: web.Request) -> web.WebSocketResponse:
    spectators = request.app[SPECTATORS]
    tournament, delay = request.query.get("tournament", ""), shared_delay(_number(request, "delay"))
    return await _relay(request, ("tv", tournament, delay),
                        lambda: spectators.watch_tv(tournament, delay), front=not tournament)


async def _watch_tournament(request: web.Request) -> web.WebSocketResponse:
    spectators = request.app[SPECTATORS]
    name = request.query.get("name", "")
    return await _relay(request, ("tournament", name), lambda: spectators.watch_tournament(name),
                        front=not name)


def _number(request: web.Request, name: str) -> int:
    try:
        value = max(0, int(request.query.get(name, "0")))
    except ValueError:
        raise web.HTTPBadRequest(text=f"?{name}= takes a whole number") from None
    if value > MAX_DELAY_TURNS:
        raise web.HTTPBadRequest(text=f"?{name}= is at most {MAX_DELAY_TURNS}")
    return value


async def _relay(request: web.Request, key: Hashable,
                 open_feed: Callable[[], AsyncIterator[Message]],
                 front: bool = False) -> web.WebSocketResponse:
    """Send the stream ``key`` (shared with the other pages that follow it; ``open_feed``
    opens it) down a WebSocket until it ends or the page leaves (the page sends nothing:
    reading only notices that it left, and answers pings)."""
    sockets, per_host = request.app[SOCKETS], request.app[PER_HOST]
    host = hosts.network_host(request.remote)
    if len(sockets) >= MAX_SOCKETS:
        raise web.HTTPServiceUnavailable(text=f"this viewer follows {MAX_SOCKETS} pages "
                                              "already; try again later")
    if per_host.full(host):
        raise web.HTTPTooManyRequests(text=f"{host} follows {per_host.cap} pages here already, "
                                           "the most one address may; close one first")
    # no compression either way: a page's messages need none (it sends none), and the
    # viewer's own would cost the event loop a deflate of every frame to every page
    ws = web.WebSocketResponse(heartbeat=30, compress=False, max_msg_size=MAX_PAGE_MESSAGE)
    per_host.add(host)
    try:
        await ws.prepare(request)
    except BaseException:
        per_host.remove(host)
        raise
    sockets.add(ws)
    follower = None
    pump = None
    try:
        try:
            follower = request.app[FEEDS].follow(key, open_feed, always=front)
        except TooManyStreams as exc:   # said as a stream's error: the page tries again
            await ws.send_str(json.dumps({"error": str(exc), "retry": True}))
            await ws.close()
            return ws
        pump = asyncio.create_task(_pump(ws, follower))
        async for _ in ws:
            pass
    finally:
        sockets.discard(ws)
        per_host.remove(host)
        if pump is not None:
            pump.cancel()
            await asyncio.gather(pump, return_exceptions=True)
        if follower is not None:
            # here, not in the pump: a pump cancelled before its first step (a page that
            # sent its close with its request) runs no finally, and its place kept the
            # stream open, outside every cap
            follower.close()
    return ws


async def _feed_text(message: Message, kept: RecordsJson) -> str:
    """A stream message as the page gets it. Not made in the event loop where it is large:
    a snapshot of a finished 8-seat match is 0.7 MB of JSON and 100 ms of Python, and
    eight pages opening it again and again (anyone's) held every other page 1.7 s
    (median). A finished match's snapshot is kept, as its record is (RecordsJson)."""
    if isinstance(message, pb.MatchFeed) and message.WhichOneof("kind") == "snapshot" \
            and message.snapshot.over.status == pb.MATCH_STATUS_FINISHED:
        async def made() -> Message:
            return message
        return await kept.get(("feed", message.snapshot.reason, message.snapshot.match.match_id),
                              made)
    if message.ByteSize() > BIG_MESSAGE:   # a live match's snapshot, a batch of frames
        return await asyncio.to_thread(records.to_json, message)
    return records.to_json(message)


async def _pump(ws: web.WebSocketResponse, follower: Follower) -> None:
    """The page's messages down its WebSocket (the last may be an error's), then close
    (its place on the stream is closed by :func:`_relay`)."""
    try:
        async for text in follower:
            await ws.send_str(text)
    except ConnectionResetError:   # the page left while a message was on its way
        return
    await ws.close()


async def _close_sockets(app: web.Application) -> None:
    """The pages are told the viewer is stopping (1001), then its streams stop."""
    for ws in list(app[SOCKETS]):
        await ws.close(code=1001, message=b"the web viewer is stopping")
    await app[FEEDS].close()
