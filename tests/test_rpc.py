"""What every service of a real server (arena serve's: Referee and Organizer on one port,
Spectator on another) does with what any client may send: bytes that are not protobuf end
each call with INVALID_ARGUMENT naming the message expected (grpc.aio used to answer
UNKNOWN "Unexpected <class 'DecodeError'>" and log an error); an error that quotes an
enormous name still arrives, cut short (it arrived as RESOURCE_EXHAUSTED)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import tempfile
import threading

import pytest
from ono99.transport import grpc
from ono99.v1 import organizer_pb2, organizer_pb2_grpc, spectator_pb2, spectator_pb2_grpc

from arena.rpc import (MAX_DETAILS, absolute, details, dial_problem, listen_problem,
                       port_out_of_range, served_at)
from arena.server.app import ArenaServer, ServeOptions

NOT_PROTOBUF = b"\x0a\xff\xff\xff\x0f"


def _methods(module, service: str):
    for method in module.DESCRIPTOR.services_by_name[service].methods:
        yield service, method.name, method.input_type.full_name, (
            method.client_streaming, method.server_streaming)


METHODS = [*_methods(organizer_pb2, "Organizer"), *_methods(spectator_pb2, "Spectator")]


async def _call(channel, path: str, streaming: tuple[bool, bool], metadata):
    same = {"request_serializer": lambda b: b, "response_deserializer": lambda b: b}
    try:
        if streaming == (False, False):
            await channel.unary_unary(path, **same)(NOT_PROTOBUF, metadata=metadata, timeout=10)
        elif streaming == (False, True):
            async for _ in channel.unary_stream(path, **same)(NOT_PROTOBUF, metadata=metadata,
                                                               timeout=10):
                pass
        else:
            async def chunks():
                yield NOT_PROTOBUF

            await channel.stream_unary(path, **same)(chunks(), metadata=metadata, timeout=10)
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details()
    return grpc.StatusCode.OK, ""


def test_every_method_answers_bytes_that_are_not_protobuf_with_invalid_argument(tmp_path, caplog):
    async def go():
        app = await ArenaServer.start(tmp_path / "arena.db", ServeOptions(
            listen="127.0.0.1:0", watch="127.0.0.1:0"))
        auth = (("authorization", f"Bearer {app.new_token}"),)
        try:
            got = {}
            async with grpc.aio.insecure_channel(app.address) as arena, \
                    grpc.aio.insecure_channel(app.spectators.address) as spectators:
                for service, name, expected, streaming in METHODS:
                    channel = arena if service == "Organizer" else spectators
                    got[name] = (expected, await _call(channel, f"/ono99.v1.{service}/{name}",
                                                       streaming, auth))
            return got
        finally:
            await app.stop()

    with caplog.at_level(logging.WARNING):
        got = asyncio.run(go())
    for name, (expected, (code, said)) in got.items():
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (name, code, said)
        if name == "UploadBot":
            assert "a message of the upload is not an UploadChunk" in said
        else:
            assert f"the request is not a {expected}: protobuf cannot parse it" in said, said
    assert not [r for r in caplog.records if r.name.startswith("grpc")], caplog.text


def test_details_are_cut_on_a_character_boundary():
    assert details("short") == "short"
    cut = details("é" * 5000)
    assert len(cut.encode()) <= MAX_DETAILS and cut.endswith("…") and set(cut[:-1]) == {"é"}


def test_an_error_that_quotes_an_enormous_name_arrives_cut_short(tmp_path):
    name = "n" * 40_000   # under the servers' message limits, far over gRPC's header limit

    async def go():
        app = await ArenaServer.start(tmp_path / "arena.db", ServeOptions(
            listen="127.0.0.1:0", watch="127.0.0.1:0"))
        auth = (("authorization", f"Bearer {app.new_token}"),)
        try:
            async with grpc.aio.insecure_channel(app.address) as arena, \
                    grpc.aio.insecure_channel(app.spectators.address) as spectators:
                organizer = organizer_pb2_grpc.OrganizerStub(arena)
                spectator = spectator_pb2_grpc.SpectatorStub(spectators)
                calls = [organizer.AddRemoteBot(organizer_pb2.AddRemoteBotRequest(name=name), metadata=auth),
                         organizer.RemoveBot(organizer_pb2.RemoveBotRequest(name=name), metadata=auth),
                         organizer.Standings(organizer_pb2.StandingsRequest(name=name), metadata=auth),
                         spectator.GetRecord(spectator_pb2.GetRecordRequest(match_id=name))]
                got = []
                for call in calls:
                    try:
                        await call
                    except grpc.aio.AioRpcError as exc:
                        got.append((exc.code(), exc.details()))
                return got
        finally:
            await app.stop()

    got = asyncio.run(go())
    assert [code for code, _ in got] == [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                                         grpc.StatusCode.NOT_FOUND, grpc.StatusCode.NOT_FOUND], got
    assert all(text.endswith("…") and len(text.encode()) <= MAX_DETAILS for _, text in got)


@pytest.mark.parametrize("address, out", [
    ("127.0.0.1:99999", True), ("[::1]:65536", True), ("host:-1", True),
    ("127.0.0.1:65535", False), ("127.0.0.1:0", False), ("unix:/tmp/x:99999", False),
    ("no-such-host:x", False),   # not a number: gRPC refuses it itself
])
def test_a_port_past_65535_is_out_of_range(address, out):
    assert port_out_of_range(address) is out


@pytest.mark.parametrize("address", ["127.0.0.1:0", "localhost:0", "0.0.0.0:0",
                                     "unix-abstract:ono99-test", "unix:{tmp}/r.sock",
                                     "unix:relative.sock"])
def test_the_addresses_grpc_listens_on_are_not_refused_before_it(address, tmp_path):
    """listen_problem checks an address before gRPC is given it: it must pass every form
    gRPC itself takes (a unix-abstract name has no folder, nor port)."""
    short = tempfile.mkdtemp(prefix="t-", dir="/tmp")   # a socket's path fits, whatever TMPDIR
    try:
        assert listen_problem(address.format(tmp=short)) is None
    finally:
        os.rmdir(short)


def test_a_unix_socket_path_too_long_is_refused_before_grpc(tmp_path):
    """gRPC only logs it ("Path name should not have more than 107 characters") and fails."""
    path = f"/tmp/{'x' * 110}.sock"
    assert listen_problem(f"unix:{path}") == ("a unix socket's path has at most 107 bytes; "
                                              f"this one has {len(path)}")


@pytest.mark.parametrize("address, problem", [
    ("127.0.0.1:50051", None), ("[::1]:50051", None), ("localhost:0", None),
    ("unix:/tmp/r.sock", None), ("unix:///tmp/r.sock", None), ("unix:rel.sock", None),
    ("unix-abstract:ono99", None), ("dns:///localhost:50051", None), ("ipv4:127.0.0.1:5", None),
    ("", "not HOST:PORT with a port from 0 to 65535"),
    ("localhost", "not HOST:PORT with a port from 0 to 65535"),
    ("127.0.0.1:99999", "not HOST:PORT with a port from 0 to 65535"),
    ("::1:50051", "write an IPv6 address in brackets: [::1]:50051"),
    ("2001:db8::1", "write an IPv6 address in brackets, with a port: [2001:db8::1]:PORT"),
    ("unix:", "a unix socket needs a path (unix:PATH) or a name (unix-abstract:NAME)"),
    ("unix-abstract:", "a unix socket needs a path (unix:PATH) or a name (unix-abstract:NAME)"),
    ("unix://r.sock", "write unix:/PATH or unix:///PATH for a socket's path, not 'unix://r.sock'"),
])
def test_what_a_client_dials_is_checked_before_grpc(address, problem):
    """The thirty-sixth review: gRPC took an empty unix path for a socket of no name, and
    ``unix://x`` past both checks, then said only that nothing answered (exit 1, after
    seconds); `arena watch` and the organiser's commands refused unix-abstract names
    their servers were printed at."""
    assert dial_problem(address) == problem


@pytest.mark.parametrize("address, port, dialled", [
    ("127.0.0.1:0", 50123, "127.0.0.1:50123"), ("[::1]:0", 50123, "[::1]:50123"),
    ("unix:/tmp/r.sock", 1, "unix:/tmp/r.sock"), ("unix-abstract:n", 1, "unix-abstract:n"),
])
def test_a_server_is_announced_where_it_can_be_dialled(address, port, dialled):
    """gRPC answers 1 for a unix socket bound, which was printed as a port (unix:1)."""
    assert served_at(address, port) == dialled


def test_a_socket_whose_listener_does_not_answer_is_not_taken_over():
    """A listener whose backlog is full answers no connect: the check blocked without
    end (in RefereeServer.start, on the event loop), and would then have let gRPC unlink
    its socket (review 37)."""
    folder = tempfile.mkdtemp(prefix="t-", dir="/tmp")
    path = os.path.join(folder, "full.sock")
    waiting = []
    try:
        with socket.socket(socket.AF_UNIX) as full:
            full.bind(path)
            full.listen(0)
            for _ in range(4):                      # fill the backlog, never accepted
                s = socket.socket(socket.AF_UNIX)
                s.setblocking(False)
                try:
                    s.connect(path)
                except BlockingIOError:
                    pass
                waiting.append(s)
            said = []                                # a thread: blocked, it fails, not hangs
            checking = threading.Thread(target=lambda: said.append(listen_problem(f"unix:{path}")),
                                        daemon=True)
            checking.start()
            checking.join(5)
            assert said == [f"something holds unix:{path}: a server there takes no connection"]
    finally:
        for s in waiting:
            s.close()
        shutil.rmtree(folder)


def test_a_relative_socket_path_is_made_absolute(tmp_path, monkeypatch):
    """A bot runs in its own folder: a relative path named another socket there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "/home/someone")
    assert absolute("unix:r.sock") == f"unix:{tmp_path}/r.sock"
    assert absolute("unix:~/r.sock") == "unix:/home/someone/r.sock"   # no shell expands it
    assert [absolute(a) for a in ("unix:/x/r.sock", "unix:", "unix-abstract:r", "tcp", "h:1")] \
        == ["unix:/x/r.sock", "unix:", "unix-abstract:r", "tcp", "h:1"]
