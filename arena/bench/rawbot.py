"""A bot on the raw protocol (generated stubs, no SDK) that answers every turn at once
with its first legal card: the cheapest bot there is, for ``arena bench load``.

Reads ONO99_REFEREE and ONO99_TOKEN; exits 0 on the goodbye or when the stream ends."""

import os
import queue
import sys

import grpc
from ono99.v1 import referee_pb2 as pb
from ono99.v1 import referee_pb2_grpc


def main() -> int:
    channel = grpc.insecure_channel(os.environ["ONO99_REFEREE"])
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    outbox.put(pb.BotMessage(hello=pb.Hello(name="raw", token=os.environ["ONO99_TOKEN"],
                                            protocol_version=1, sdk="ono99-bench-raw/1")))

    def requests():
        while (msg := outbox.get()) is not None:
            yield msg

    call = referee_pb2_grpc.RefereeStub(channel).Play(requests())
    try:
        for msg in call:
            kind = msg.WhichOneof("kind")
            if kind == "turn":
                outbox.put(pb.BotMessage(action=pb.Action(turn_id=msg.turn.turn_id,
                                                          card=msg.turn.legal[0])))
            elif kind in ("goodbye", "refusal"):
                break
    except grpc.RpcError:
        pass
    finally:
        outbox.put(None)
        call.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
