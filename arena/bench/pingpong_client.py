"""The bare floor's client: answers every message on one Play stream at once, over the
same transport as the Python SDK (a sync gRPC stream fed from a queue). Used by
``arena bench referee``; not a bot.

    python -m arena.bench.pingpong_client ADDRESS
"""

from __future__ import annotations

import queue
import sys

import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc


def main(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        outbox: queue.SimpleQueue = queue.SimpleQueue()
        outbox.put(referee_pb2.BotMessage(hello=referee_pb2.Hello(name="pingpong", protocol_version=1)))

        def requests():
            while (msg := outbox.get()) is not None:
                yield msg

        call = referee_pb2_grpc.RefereeStub(channel).Play(requests())
        Action = referee_pb2.Action
        BotMessage = referee_pb2.BotMessage
        try:
            for msg in call:
                if msg.WhichOneof("kind") != "turn":
                    break
                turn = msg.turn
                outbox.put(BotMessage(action=Action(turn_id=turn.turn_id, card=turn.legal[0])))
        except grpc.RpcError:
            pass
        finally:
            outbox.put(None)
            call.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
