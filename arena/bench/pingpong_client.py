"""The bare floor's client: answers every message on one Play stream at once, over the
same transport as the Python SDK (grpc.aio in one thread). Used by ``arena bench
referee``; not a bot.

    python -m arena.bench.pingpong_client ADDRESS
"""

from __future__ import annotations

import asyncio
import sys

from ono99.transport import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc


async def pingpong(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        async with asyncio.timeout(30):
            await channel.channel_ready()
        call = referee_pb2_grpc.RefereeStub(channel).Play()
        await call.write(referee_pb2.BotMessage(hello=referee_pb2.Hello(name="pingpong",
                                                                        protocol_version=1)))
        Action = referee_pb2.Action
        BotMessage = referee_pb2.BotMessage
        try:
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF or msg.WhichOneof("kind") != "turn":
                    break
                turn = msg.turn
                await call.write(BotMessage(action=Action(turn_id=turn.turn_id, card=turn.legal[0])))
        except grpc.aio.AioRpcError:
            pass
        finally:
            call.cancel()


if __name__ == "__main__":
    asyncio.run(pingpong(sys.argv[1]))
    sys.exit(0)
