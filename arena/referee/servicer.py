"""The gRPC servicer: thin. It authenticates the Hello through the lobby and hands every
later message to the session; everything else happens in sessions and match runners."""

from __future__ import annotations

import asyncio

from ono99.transport import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc

from arena import __version__
from arena.referee import wire
from arena.referee.lobby import PROTOCOL_VERSION, Lobby, Refused

HELLO_TIMEOUT_S = 10.0

# the gRPC status that ends the stream after each refusal
_REFUSAL_STATUS = {
    referee_pb2.REFUSAL_CODE_BAD_TOKEN: grpc.StatusCode.UNAUTHENTICATED,
    referee_pb2.REFUSAL_CODE_TOKEN_IN_USE: grpc.StatusCode.ALREADY_EXISTS,
    referee_pb2.REFUSAL_CODE_UNSUPPORTED_PROTOCOL: grpc.StatusCode.FAILED_PRECONDITION,
    referee_pb2.REFUSAL_CODE_NO_HELLO: grpc.StatusCode.INVALID_ARGUMENT,
    referee_pb2.REFUSAL_CODE_SHUTTING_DOWN: grpc.StatusCode.UNAVAILABLE,
}


class RefereeServicer(referee_pb2_grpc.RefereeServicer):
    """``Referee.Play``: one bot session per stream."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby

    async def Play(self, request_iterator, context):  # noqa: N802 (gRPC's name)
        try:
            first = await asyncio.wait_for(context.read(), HELLO_TIMEOUT_S)
        except TimeoutError:
            await self._refuse(context, Refused(referee_pb2.REFUSAL_CODE_NO_HELLO,
                                                f"no hello within {HELLO_TIMEOUT_S:g} s"))
            return
        if first is grpc.aio.EOF:
            return
        try:
            if first.WhichOneof("kind") != "hello":
                raise Refused(referee_pb2.REFUSAL_CODE_NO_HELLO,
                              "the first message of a session must be a hello")
            session = self.lobby.admit(first.hello, context)
        except Refused as refusal:
            await self._refuse(context, refusal)
            return
        try:
            await session.send(wire.welcome(PROTOCOL_VERSION, f"ono99-arena/{__version__}",
                                            session.name, session.session_id))
            while True:
                msg = await context.read()
                if msg is grpc.aio.EOF:
                    session.close("the bot closed its stream")
                    break
                if not session.take(msg):
                    await session.on_message(msg)
            await session.wait_closed()
        except asyncio.CancelledError:
            session.close("the stream was cancelled")
            raise
        except Exception as exc:  # undecodable bytes, or a broken stream
            session.close(f"the referee closed the stream: {exc.__class__.__name__}: {exc}",
                          by_referee=True)
        finally:
            session.close("the stream ended")

    async def _refuse(self, context, refusal: Refused) -> None:
        self.lobby.refusals.append(refusal.reason)
        try:
            await context.write(wire.refusal(refusal.code, refusal.reason))
        except Exception:
            pass
        context.set_code(_REFUSAL_STATUS.get(refusal.code, grpc.StatusCode.PERMISSION_DENIED))
        context.set_details(refusal.reason)
