"""The Organizer's codes on a real server (in this process, on a free port): each error
of a call is the one organizer.proto names, by the kind of error, not by how its message
begins."""

from __future__ import annotations

import asyncio

from ono99.transport import grpc
from ono99.v1 import organizer_pb2 as pb, organizer_pb2_grpc

from arena.server.app import ArenaServer, ServeOptions


def codes_of(tmp_path, calls):
    """Each call's (code, details, reply); ``calls(stub, auth)`` yields the calls to make."""
    async def go():
        app = await ArenaServer.start(tmp_path / "arena.db", ServeOptions(
            listen="127.0.0.1:0", watch="127.0.0.1:0"))
        auth = (("authorization", f"Bearer {app.new_token}"),)
        try:
            async with grpc.aio.insecure_channel(app.address) as channel:
                stub = organizer_pb2_grpc.OrganizerStub(channel)
                got = []
                for call in calls(stub, auth):
                    try:
                        got.append((grpc.StatusCode.OK, "", await call))
                    except grpc.aio.AioRpcError as exc:
                        got.append((exc.code(), exc.details(), None))
                return got
        finally:
            await app.stop()

    return asyncio.run(go())


def test_each_error_has_the_code_organizer_proto_names(tmp_path):
    def calls(stub, auth):
        yield stub.AddRemoteBot(pb.AddRemoteBotRequest(name="remote"), metadata=auth)
        yield stub.BotLogs(pb.BotLogsRequest(name="remote"), metadata=auth)
        yield stub.BotLogs(pb.BotLogsRequest(name="nobody"), metadata=auth)
        yield stub.RemoveBot(pb.RemoveBotRequest(name="nobody"), metadata=auth)
        yield stub.Standings(pb.StandingsRequest(name="no-such-tournament"), metadata=auth)
        yield stub.Standings(pb.StandingsRequest(), metadata=auth)
        yield stub.AddRemoteBot(pb.AddRemoteBotRequest(name="no spaces"), metadata=auth)
        yield stub.RemoveBot(pb.RemoveBotRequest(name="remote"), metadata=auth)
        yield stub.RemoveBot(pb.RemoveBotRequest(name="remote"), metadata=auth)

    got = codes_of(tmp_path, calls)
    codes = [code for code, _, _ in got]
    assert codes == [
        grpc.StatusCode.OK,
        grpc.StatusCode.FAILED_PRECONDITION,   # a remote bot has no logs here (it was INVALID_ARGUMENT)
        grpc.StatusCode.NOT_FOUND, grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.NOT_FOUND,             # no such tournament
        grpc.StatusCode.NOT_FOUND,             # no tournament yet
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.OK, grpc.StatusCode.NOT_FOUND,   # removed once, then gone
    ], got
    assert "remote is a remote bot" in got[1][1]


def test_an_upload_is_one_header_then_data(tmp_path):
    """Data before the header, or a second header, was accepted (the last header named the
    bot): INVALID_ARGUMENT, and no version is entered. Found by the fuzzer."""
    header = pb.UploadChunk(header=pb.UploadHeader(name="up"))
    data = pb.UploadChunk(data=b"not a tar")

    def calls(stub, auth):
        for chunks in ([data, header], [header, header, data], [header, data]):
            yield stub.UploadBot(iter(chunks), metadata=auth)
        yield stub.ListBots(pb.ListBotsRequest(), metadata=auth)

    got = codes_of(tmp_path, calls)
    assert [code for code, _, _ in got[:3]] == [grpc.StatusCode.INVALID_ARGUMENT] * 3, got
    assert "one header naming the bot, then the archive's data" in got[0][1]
    assert "one header naming the bot" in got[1][1]
    assert "not a gzipped tar" in got[2][1]     # the one well-formed upload got that far
    assert [(b.name, b.status) for b in got[3][2].bots] == [("up", "failed")]
