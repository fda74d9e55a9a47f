"""The web viewer's line to the spectator service (spectator.proto): a gRPC client whose
answers and streams become the JSON the page reads, and whose failures become one line
the page can show.

Every message is converted by ``json_format`` with the proto's field names, exactly as a
downloaded record is written (:func:`arena.watch.records.to_json`): the page reads one
format, live or from a file. The channel retries a service that is not there every few
seconds (gRPC's default backoff grows to two minutes), so a page waiting for an arena
to start sees it within seconds of its start.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

from google.protobuf import json_format
from google.protobuf.message import Message
from ono99.transport import grpc
from ono99.v1 import spectator_pb2 as pb, spectator_pb2_grpc

from arena.watch.server import MAX_MESSAGE

ENV_ADDRESS = "ONO99_SPECTATORS"
DEFAULT_ADDRESS = "127.0.0.1:50052"    # arena serve's default: the referee's port + 1
CALL_TIMEOUT_S = 10.0
# Codes after which the same call may work later: the service is not (yet) there, or
# stopped under the stream.
_TRANSIENT = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
              grpc.StatusCode.CANCELLED}


def default_address() -> str:
    return os.environ.get(ENV_ADDRESS) or DEFAULT_ADDRESS


def to_json(message: Message) -> dict:
    """A spectator message as the page reads it (proto field names; int64 as strings)."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


class FeedError(Exception):
    """A call to the spectator service failed. The message is one line for the page;
    ``retry``: whether the same call may succeed later (the page then tries again)."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


class Spectators:
    """A client of the spectator service at ``address`` (HOST:PORT), made in the event
    loop that uses it."""

    def __init__(self, address: str, credentials: grpc.ChannelCredentials | None = None) -> None:
        self.address = address
        options = [("grpc.max_receive_message_length", MAX_MESSAGE),
                   ("grpc.initial_reconnect_backoff_ms", 500),
                   ("grpc.max_reconnect_backoff_ms", 3000)]
        self.channel = (grpc.aio.secure_channel(address, credentials, options)
                        if credentials is not None else grpc.aio.insecure_channel(address, options))
        self.stub = spectator_pb2_grpc.SpectatorStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def check(self) -> str | None:
        """Why the service cannot be reached now, or None if it answers."""
        try:
            await self.matches()
        except FeedError as exc:
            return str(exc)
        return None

    async def matches(self, tournament: str = "", recent: int = 50) -> dict:
        """Live matches, then recent ones (ListMatches)."""
        try:
            answer = await self.stub.ListMatches(
                pb.ListMatchesRequest(tournament=tournament, recent=recent), timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc) from None
        return to_json(answer)

    async def record(self, match_id: str) -> pb.MatchSnapshot:
        """A finished match's whole record (GetRecord)."""
        try:
            return await self.stub.GetRecord(pb.GetRecordRequest(match_id=match_id),
                                             timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc) from None

    def match(self, match_id: str, delay: int = 0) -> AsyncIterator[dict]:
        """One match (WatchMatch): a snapshot, then frames, verdicts and its end."""
        return self._stream(self.stub.WatchMatch(
            pb.WatchMatchRequest(match_id=match_id, delay_turns=delay)))

    def tv(self, tournament: str = "", delay: int = 0) -> AsyncIterator[dict]:
        """The most interesting live match, then the next (WatchTV)."""
        return self._stream(self.stub.WatchTV(
            pb.WatchTVRequest(tournament=tournament, delay_turns=delay)))

    def tournament(self, name: str = "") -> AsyncIterator[dict]:
        """A tournament or the ladder (WatchTournament). One not (yet) followed there may
        start later: that NOT_FOUND is worth retrying."""
        return self._stream(self.stub.WatchTournament(pb.WatchTournamentRequest(name=name)),
                            retry_not_found=True)

    async def _stream(self, call, retry_not_found: bool = False) -> AsyncIterator[dict]:
        try:
            async for message in call:
                yield to_json(message)
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc, retry_not_found) from None
        finally:
            call.cancel()

    def _error(self, exc: grpc.aio.AioRpcError, retry_not_found: bool = False) -> FeedError:
        code = exc.code()
        if code == grpc.StatusCode.UNAVAILABLE:
            return FeedError(f"no spectator service answers at {self.address} (arena serve, or "
                             "arena match or arena tournament with --watch, serves one)", True)
        if code in _TRANSIENT:
            return FeedError(f"the spectator service at {self.address} stopped answering "
                             f"({code.name.lower()})", True)
        return FeedError(exc.details() or code.name.lower(),
                         retry_not_found and code == grpc.StatusCode.NOT_FOUND)
