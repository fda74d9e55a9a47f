"""The Referee service's own defences: a host whose hellos keep being refused is refused
for a while (but for registered tokens), a token let in too often likewise, and streams
that have not said hello are capped."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from ono99.transport import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc

from arena.referee import lobby, servicer
from arena.referee.lobby import new_token, token_hash
from arena.referee.server import RefereeServer
from arena.referee.session import MAX_REFUSED_OUTSIDE


async def hello(address: str, token: str, name: str = "x") -> referee_pb2.RefereeMessage:
    async with grpc.aio.insecure_channel(address) as channel:
        call = referee_pb2_grpc.RefereeStub(channel).Play()
        await call.write(referee_pb2.BotMessage(hello=referee_pb2.Hello(
            name=name, token=token, protocol_version=1)))
        return await call.read()


def test_a_host_with_too_many_refused_hellos_is_refused_but_for_registered_tokens():
    """Past 10 refused hellos, the host's other hellos are refused as TOO_MANY (not
    counted, not told whether the token exists), but a registered token still gets in, or
    is told what is wrong with its hello: a stranger behind the same NAT must not keep out
    every bot of the address, nor hide from its author why it was refused."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            good = server.lobby.register("good").token
            for _ in range(servicer.MAX_FAILED_HELLOS):
                msg = await hello(server.address, "wrong")
                assert msg.refusal.code == referee_pb2.REFUSAL_CODE_BAD_TOKEN
            msg = await hello(server.address, "wrong")
            assert msg.refusal.code == referee_pb2.REFUSAL_CODE_TOO_MANY
            assert msg.refusal.reason == ("too many refused hellos from ipv4:127.0.0.1; "
                                          "try again in 60 s")
            msg = await hello(server.address, good, name="bad\nname")
            assert msg.refusal.code == referee_pb2.REFUSAL_CODE_BAD_HELLO
            assert msg.refusal.reason == "hello.name holds control characters"
            msg = await hello(server.address, "wrong", name="bad\nname")   # not a bot's
            assert msg.refusal.code == referee_pb2.REFUSAL_CODE_TOO_MANY
            msg = await hello(server.address, good)      # a good token, from this host
            assert msg.HasField("welcome"), msg
            # another way in (the private unix socket, another "host") is not blocked
            msg = await hello(f"unix:{server.socket_path}", "wrong")
            assert msg.refusal.code == referee_pb2.REFUSAL_CODE_BAD_TOKEN
        finally:
            await server.stop()

    asyncio.run(go())


def test_a_token_let_in_too_often_is_refused_as_too_many_until_its_window_passes(monkeypatch):
    """A remote bot stuck in a reconnection loop costs a session each time: past
    MAX_HELLOS within HELLO_WINDOW_S, its token is refused as TOO_MANY, saying when to
    try again; another token is not, nor a launched bot's, and the host is not blocked (a
    valid token is no guess)."""
    monkeypatch.setattr(lobby, "MAX_HELLOS", 5)
    monkeypatch.setattr(lobby, "HELLO_WINDOW_S", 3.0)   # room for 10 round trips

    async def go():
        server = await RefereeServer.start("tcp")
        try:
            loop, other, launched = new_token(), new_token(), new_token()
            server.lobby.register_hash("loop", token_hash(loop))     # remote bots'
            server.lobby.register_hash("other", token_hash(other))
            server.lobby.register("launched", launched)   # the arena starts its processes
            for _ in range(5):
                for token in (loop, launched):
                    assert (await hello(server.address, token)).HasField("welcome")
                    await server_sees_gone(server, token)
            # a launched bot that exits after each match is started again for the next
            assert (await hello(server.address, launched)).HasField("welcome")
            msg = await hello(server.address, loop)
            assert msg.refusal.code == referee_pb2.REFUSAL_CODE_TOO_MANY
            assert msg.refusal.reason.startswith("too many hellos with the token of bot "
                                                 "'loop': 5 within 3 s; try again in ")
            assert (await hello(server.address, other)).HasField("welcome")
            await asyncio.sleep(3.0)
            assert (await hello(server.address, loop)).HasField("welcome")
        finally:
            await server.stop()

    asyncio.run(go())


async def server_sees_gone(server: RefereeServer, token: str) -> None:
    async with asyncio.timeout(5):
        while server.lobby.connected(token_hash(token)):
            await asyncio.sleep(0.01)


def test_first_messages_over_the_limit_count_against_their_host():
    """gRPC ends a stream whose first message is over the limit before the referee reads
    it (RESOURCE_EXHAUSTED, no refusal): the referee sees a stream without a hello, which
    counts (the fuzzer's model of the host's block relies on this)."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                play = channel.stream_stream("/ono99.v1.Referee/Play",
                                             request_serializer=lambda b: b,
                                             response_deserializer=lambda b: b)
                for n in range(1, servicer.MAX_FAILED_HELLOS + 1):
                    call = play()
                    await call.write(b"\x0a" + b"x" * servicer.MAX_RECEIVE)
                    await call.done_writing()
                    with pytest.raises(grpc.aio.AioRpcError) as raised:
                        async for _ in call:
                            pass
                    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    async with asyncio.timeout(5):   # the referee's handler ends after the call
                        while len(server.lobby.refusals) < n:
                            await asyncio.sleep(0.01)
                    assert "ended before a hello" in server.lobby.refusals[-1]
            msg = await hello(server.address, "wrong")
            assert msg.refusal.code == referee_pb2.REFUSAL_CODE_TOO_MANY
        finally:
            await server.stop()

    asyncio.run(go())


async def flooded(channel, name: str, token: str) -> list[referee_pb2.RefereeMessage]:
    """Say hello as bot ``name`` on ``channel``, then send one action more than a bot may
    have refused outside its turns; what the referee sent after the welcome, to the
    stream's end."""
    flood = referee_pb2_grpc.RefereeStub(channel).Play()
    await flood.write(referee_pb2.BotMessage(hello=referee_pb2.Hello(
        name=name, token=token, protocol_version=1)))
    assert (await flood.read()).HasField("welcome")
    for n in range(1, MAX_REFUSED_OUTSIDE + 2):
        await flood.write(referee_pb2.BotMessage(action=referee_pb2.Action(turn_id=n, card=1)))
    got = []
    async with asyncio.timeout(10):
        while (msg := await flood.read()) is not grpc.aio.EOF:
            got.append(msg)
    return got


def test_a_bot_that_floods_refused_messages_outside_its_turns_is_cut_off(caplog):
    """Between its matches (or while others play) a bot's actions are all refused, and
    each refusal costs the referee a write: past MAX_REFUSED_OUTSIDE it is cut off, and
    another bot's session goes on. The server's log says so: a remote bot cut off
    between its matches left no trace there (the reason went to the bot alone)."""
    caplog.set_level(logging.WARNING, logger="arena.referee")

    async def go():
        server = await RefereeServer.start("tcp")
        try:
            lobby = server.lobby
            async with grpc.aio.insecure_channel(server.address) as channel:
                calm = referee_pb2_grpc.RefereeStub(channel).Play()
                await calm.write(referee_pb2.BotMessage(hello=referee_pb2.Hello(
                    name="calm", token=lobby.register("calm").token, protocol_version=1)))
                assert (await calm.read()).HasField("welcome")
                got = await flooded(channel, "flood", lobby.register("flood").token)
                kinds = [m.WhichOneof("kind") for m in got]
                # the refusals still queued when it is cut off are not written: the goodbye is
                assert kinds[-1] == "goodbye" and set(kinds[:-1]) == {"rejected"}, kinds
                assert "cut off: 17 refused messages while no turn" in got[-1].goodbye.reason
                assert [s.name for s in lobby.sessions()] == ["calm"]
                calm.cancel()
        finally:
            await server.stop()

    asyncio.run(go())
    said = [r.getMessage() for r in caplog.records if r.name == "arena.referee"]
    assert said == ["bot flood: the referee ended its stream: cut off: 17 refused messages "
                    "while no turn of its was open (at most 16 a match)"], said


def test_a_token_in_use_does_not_count_against_its_host():
    """A bot reconnecting before the referee noticed its old stream die is refused (token
    in use) again and again: that is no attack, and its host is not blocked."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            busy = server.lobby.register("busy").token
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = referee_pb2_grpc.RefereeStub(channel).Play()
                await call.write(referee_pb2.BotMessage(hello=referee_pb2.Hello(
                    name="busy", token=busy, protocol_version=1)))
                assert (await call.read()).HasField("welcome")
                for _ in range(servicer.MAX_FAILED_HELLOS + 2):
                    msg = await hello(server.address, busy)
                    assert msg.refusal.code == referee_pb2.REFUSAL_CODE_TOKEN_IN_USE
                msg = await hello(server.address, server.lobby.register("other").token)
                assert msg.HasField("welcome")
                call.cancel()
        finally:
            await server.stop()

    asyncio.run(go())


def test_refused_hellos_on_a_unix_socket_block_no_one():
    """Every process on a unix socket is the same peer to gRPC: on the launched bots'
    socket, one bot's bad hellos must not lock the others out."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            good = server.lobby.register("good").token
            address = f"unix:{server.socket_path}"
            for _ in range(2 * servicer.MAX_FAILED_HELLOS):
                msg = await hello(address, "wrong")
                assert msg.refusal.code == referee_pb2.REFUSAL_CODE_BAD_TOKEN
            assert (await hello(address, good)).HasField("welcome")
        finally:
            await server.stop()

    asyncio.run(go())


@pytest.mark.parametrize("way", ["tcp", "unix"])
def test_streams_that_have_not_said_hello_are_capped_and_give_way(monkeypatch, way):
    """At the cap, a new stream is let in and the longest waiting one is closed, told
    why: silent streams, however many, cannot keep out a bot that says hello at once."""
    monkeypatch.setattr(servicer, "MAX_UNAUTHENTICATED", 5)

    async def go():
        server = await RefereeServer.start("tcp")
        address = server.address if way == "tcp" else f"unix:{server.socket_path}"
        good = server.lobby.register("good").token
        channel = grpc.aio.insecure_channel(address)
        try:
            silent = [referee_pb2_grpc.RefereeStub(channel).Play() for _ in range(5)]
            for call in silent:   # open, say nothing
                await call.write(referee_pb2.BotMessage())   # an empty message is no hello...
            await asyncio.sleep(0.3)
            # ... so those five were refused at once: the cap counts only the waiting
            assert (await hello(address, good)).HasField("welcome")
            waiting = [referee_pb2_grpc.RefereeStub(channel).Play() for _ in range(5)]
            for call in waiting:
                await call.wait_for_connection()
            await asyncio.sleep(0.3)
            reads = [asyncio.ensure_future(call.read()) for call in waiting]
            for turn in (1, 2):   # a bot gets in; the longest waiting stream gives way
                assert (await hello(address, good)).HasField("welcome")
                await asyncio.wait(reads, timeout=1.0)
                ended = [r.result() for r in reads if r.done()]
                assert len(ended) == turn
                for msg in ended:
                    assert msg.refusal.code == referee_pb2.REFUSAL_CODE_TOO_MANY
                    assert "the longest waiting (this one) was closed" in msg.refusal.reason
                # back at the cap, with a newer silent stream than those of the first five
                waiting.append(referee_pb2_grpc.RefereeStub(channel).Play())
                await waiting[-1].wait_for_connection()
                await asyncio.sleep(0.3)
            for call in silent + waiting:
                call.cancel()
        finally:
            await channel.close()
            await server.stop()

    asyncio.run(go())


def test_a_bot_s_own_socket_serves_few_streams_on_each_connection(monkeypatch):
    """gRPC serves any number of streams on a connection: a bot that opened streams
    without end on its own socket's 8 connections (6 helpers, 2,000 streams each open at
    once) took the referee's process from 70 MiB to 250, and a 200-game match with it
    from 14 s to 41 (its opponent's mean move from 1.2 ms to 3.5). Each connection of a
    bot's own socket serves BOT_STREAMS at once; more wait in the client (a raw client
    has them refused by HTTP/2). The referee's own socket is as it was."""
    from arena.referee import server as server_module

    made: list[servicer.RefereeServicer] = []

    class Counted(servicer.RefereeServicer):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(server_module, "RefereeServicer", Counted)

    async def go():
        server = await RefereeServer.start("unix")
        own = await server.bot_socket()
        try:
            for address, served in ((f"unix:{own.path}", server_module.BOT_STREAMS),
                                    (server.address, 12)):
                async with grpc.aio.insecure_channel(address) as channel:
                    calls = [referee_pb2_grpc.RefereeStub(channel).Play() for _ in range(12)]
                    await asyncio.sleep(0.5)   # open, saying nothing
                    assert sum(len(m._waiting) for m in made) == served
                    for call in calls:
                        call.cancel()
                await asyncio.sleep(0.2)
        finally:
            await own.close()
            await server.stop()

    asyncio.run(go())


async def first_reply(address: str, data: bytes):
    """Send ``data`` (raw bytes) as the first message of a Play stream: the reply, and the
    stream's status after a refusal."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream("/ono99.v1.Referee/Play", request_serializer=lambda b: b,
                                     response_deserializer=referee_pb2.RefereeMessage.FromString)()
        await call.write(data)
        try:
            reply = await call.read()
        except grpc.aio.AioRpcError as exc:   # ended before any reply
            return None, exc.code()
        code = await call.code() if reply.HasField("refusal") else None
        call.cancel()
        return reply, code


def padded_hello(token: str, size: int) -> bytes:
    """A hello followed by an unknown length-delimited field 15 of ``size`` bytes."""
    hello = referee_pb2.BotMessage(hello=referee_pb2.Hello(name="x", token=token,
                                                           protocol_version=1))
    inner = hello.hello.SerializeToString() + b"\x7a" + _varint(size) + b"p" * size
    return b"\x0a" + _varint(len(inner)) + inner


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def test_hellos_too_large_or_with_long_or_control_fields_are_refused():
    """A bot's messages are a few KB at most (the proto's BotMessage): a padded hello, an
    over-long field, or a name that would rewrite an organiser's terminal is refused with
    REFUSAL_CODE_BAD_HELLO and INVALID_ARGUMENT; a message over 64 KiB ends the stream
    before the referee reads it."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            good = server.lobby.register("good").token
            raw = lambda **f: referee_pb2.BotMessage(hello=referee_pb2.Hello(   # noqa: E731
                token=good, protocol_version=1, **f)).SerializeToString()
            cases = {
                "the hello is 8": padded_hello(good, 8000),
                "hello.name is 65 characters": raw(name="n" * 65),
                "hello.sdk is 101 characters": raw(sdk="s" * 101),
                "hello.resume_key is 257 characters": raw(resume_key="k" * 257),
                "hello.token is 300 characters": referee_pb2.BotMessage(hello=referee_pb2.Hello(
                    token="t" * 300, protocol_version=1)).SerializeToString(),
                "hello.name holds control characters": raw(name="bot\x1b[2J"),
            }
            for words, data in cases.items():
                reply, code = await first_reply(server.address, data)
                assert reply.refusal.code == referee_pb2.REFUSAL_CODE_BAD_HELLO, words
                assert words in reply.refusal.reason
                assert code == grpc.StatusCode.INVALID_ARGUMENT
            reply, code = await first_reply(server.address, padded_hello(good, 100_000))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            # limits exactly met are fine
            reply, _ = await first_reply(server.address, raw(name="n" * 64, sdk="s" * 100))
            assert reply.HasField("welcome")
        finally:
            await server.stop()

    asyncio.run(go())


def test_raw_connections_that_never_speak_http2_are_capped_and_closed(monkeypatch):
    """Sockets that connect and say nothing: beyond the cap a new connection is closed at
    once (a bot gets UNAVAILABLE, not a hang), and each is closed after the handshake
    timeout, after which bots connect again."""
    import socket
    from arena.referee import server as server_module

    monkeypatch.setattr(server_module, "MAX_CONNECTIONS", 20)
    monkeypatch.setattr(server_module, "HANDSHAKE_TIMEOUT_MS", 1500)

    async def go():
        server = await RefereeServer.start("tcp")
        host, port = server.address.rsplit(":", 1)
        good = server.lobby.register("good").token
        raw = [socket.create_connection((host, int(port))) for _ in range(20)]
        try:
            await asyncio.sleep(0.2)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await asyncio.wait_for(hello(server.address, good), 5)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            await asyncio.sleep(2.0)   # past the handshake timeout: every raw socket closed
            for sock in raw:   # (a GOAWAY frame first, then the end of the stream)
                sock.settimeout(1)
                while sock.recv(4096):
                    pass
            # the server counts a connection out a moment after closing it: within 5 s,
            # a bot connects again
            deadline = asyncio.get_running_loop().time() + 5
            while True:
                try:
                    msg = await asyncio.wait_for(hello(server.address, good), 5)
                    break
                except grpc.aio.AioRpcError:
                    assert asyncio.get_running_loop().time() < deadline, "still refused"
                    await asyncio.sleep(0.1)
            assert msg.HasField("welcome")
        finally:
            for sock in raw:
                sock.close()
            await server.stop()

    asyncio.run(go())


def test_a_session_whose_bot_sends_over_64_kib_ends_saying_it_may_have():
    """gRPC ends such a stream before the referee reads the message, and shows the referee
    a plain end of stream: the reason the session gives (and the verdict that quotes it)
    names both causes, not only "the bot closed its stream"."""
    async def go():
        server = await RefereeServer.start("tcp")
        try:
            reg = server.lobby.register("big")
            async with grpc.aio.insecure_channel(server.address) as channel:
                call = channel.stream_stream(
                    "/ono99.v1.Referee/Play", request_serializer=lambda b: b,
                    response_deserializer=referee_pb2.RefereeMessage.FromString)()
                await call.write(referee_pb2.BotMessage(hello=referee_pb2.Hello(
                    name="big", token=reg.token, protocol_version=1)).SerializeToString())
                assert (await call.read()).HasField("welcome")
                session = await server.lobby.wait_session(reg.token, 5)
                action = referee_pb2.BotMessage(action=referee_pb2.Action(turn_id=1))
                await call.write(action.SerializeToString() + b"\x7a" + _varint(100_000)
                                 + b"p" * 100_000)
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call.read()
                assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                async with asyncio.timeout(5):
                    reason = await session.wait_closed()
                assert reason == ("the bot's stream ended: it closed it, or sent a message "
                                  "over 64 KiB, which gRPC refuses")
        finally:
            await server.stop()

    asyncio.run(go())


@pytest.mark.parametrize("steps", [0, 1, 2, 3])
def test_a_referee_stopped_as_it_starts_leaves_no_folder_and_no_task(tmp_path, monkeypatch, steps):
    """Ctrl-C in a tournament's first second cancelled a referee (a worker's) as it
    started: its socket folder stayed in /tmp, and gRPC's server, left to its finalizer,
    printed 'Task exception was never retrieved' (InvalidStateError) twice."""
    import gc
    import tempfile

    # a folder of its own, short enough for the socket whatever $TMPDIR is (a longer one's
    # sockets go to /tmp, where this test would not see them)
    short = Path(tempfile.mkdtemp(prefix="t-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    errors = []

    async def go():
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: errors.append(ctx))
        task = asyncio.create_task(RefereeServer.start("unix"))
        for _ in range(steps):          # cancelled at one of its first awaits, or before
            await asyncio.sleep(0)
        task.cancel()
        try:
            server = await task
        except asyncio.CancelledError:
            server = None
        if server is not None:          # it had started: stopped as usual
            await server.stop()
        del task, server
        gc.collect()
        await asyncio.sleep(0.2)

    asyncio.run(go())
    gc.collect()
    left = [p.name for p in short.iterdir()]
    if not left:
        short.rmdir()
    assert left == []
    assert errors == []


def test_a_temporary_folder_too_deep_for_a_socket_is_left_for_tmp(tmp_path, monkeypatch):
    """A unix socket's path has at most 107 bytes: under a deep $TMPDIR (pytest's folders
    with a TMPDIR of 17 characters), gRPC failed to bind, and every command that plays a
    match with it failed with a traceback. The referee's folder goes to /tmp instead."""
    import tempfile

    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))

    async def go():
        server = await RefereeServer.start("unix")
        try:
            assert server.socket_path.startswith("/tmp/ono99-")
            token = server.lobby.register("bot").token
            assert (await hello(server.address, token)).HasField("welcome")
        finally:
            await server.stop()
        return server.socket_path

    path = asyncio.run(go())
    assert not os.path.exists(os.path.dirname(path)) and list(deep.iterdir()) == []


def test_the_socket_folders_of_killed_referees_are_removed_by_the_next(monkeypatch):
    """A referee killed with kill -9 cannot remove its socket folder: each left one in the
    temporary folder for good (dozens a test run). The next referee removes those of this
    user that hold only its socket, nobody listening, and its bots' sockets, once a
    minute old; a live referee's, a folder made a moment ago and anything else stay."""
    import shutil
    import socket
    import tempfile

    from arena.referee import server as referee_server

    short = Path(tempfile.mkdtemp(prefix="t-", dir="/tmp"))   # short enough for sockets
    monkeypatch.setattr(tempfile, "tempdir", str(short))
    old = referee_server.time.time() - 2 * referee_server.STALE_S

    def folder(name: str, listen: bool, age: float | None = old,
               others: tuple[str, ...] = ()) -> list[socket.socket]:
        (short / name).mkdir()
        socks = []
        for sock_name in ("referee.sock", *others):
            socks.append(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
            socks[-1].bind(str(short / name / sock_name))
        if listen:
            socks[0].listen()
        if age is not None:
            os.utime(short / name, (age, age))
        return socks

    held = [*folder("ono99-killed01", listen=False),
            *folder("ono99-killed02", listen=False, others=("bot1.sock", "bot2a.sock")),
            *folder("ono99-alive001", listen=True, others=("bot1.sock",)),
            *folder("ono99-justmade", listen=False, age=None),
            *folder("ono99-another1", listen=False, others=("another.sock",)),
            *folder("other-killed01", listen=False)]
    (short / "ono99-fileskept").mkdir()
    (short / "ono99-fileskept" / "referee.sock").write_text("not a socket")
    os.utime(short / "ono99-fileskept", (old, old))
    try:
        made = Path(referee_server.socket_folder())
        assert sorted(p.name for p in short.iterdir()) == sorted(
            ["ono99-alive001", "ono99-justmade", "ono99-another1", "other-killed01",
             "ono99-fileskept", made.name])
    finally:
        for sock in held:
            sock.close()
        shutil.rmtree(short)


def test_a_bot_cut_off_again_and_again_is_logged_once_a_minute(caplog, monkeypatch):
    """A bot the arena launched has no hello limit: cut off, reconnecting and cut off
    again, it wrote 140 lines a second to the server's log. A bot's cut-offs are logged
    once a minute at most, the next line counting those left unsaid."""
    caplog.set_level(logging.WARNING, logger="arena.referee")

    async def cut_off(address: str, token: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            await flooded(channel, "again", token)

    async def go():
        server = await RefereeServer.start("tcp")
        try:
            token = server.lobby.register("again").token
            for _ in range(5):
                await cut_off(server.address, token)
            monkeypatch.setattr(servicer, "CUT_OFF_LOG_S", 0.0)   # a minute later
            await cut_off(server.address, token)
        finally:
            await server.stop()

    asyncio.run(go())
    said = [r.getMessage() for r in caplog.records if r.name == "arena.referee"]
    line = ("bot again: the referee ended its stream: cut off: 17 refused messages while no "
            "turn of its was open (at most 16 a match)")
    assert said == [line, line + " (4 more cut-offs since the last said)"], said
