"""gRPC's transport for ONO 99 servers and clients: import grpc from here.

    from ono99.transport import grpc

With grpcio 1.85, gRPC's EventEngine client and listener measured about 35% more latency
and CPU per message than the older transport, on unix sockets and loopback TCP alike
(``arena bench referee``). gRPC reads its experiments once, when it is first imported,
so this module chooses the older transport, then imports grpc: where a server or a
client is made, import grpc from here, before anything else imports it. Set
``GRPC_EXPERIMENTS`` yourself (even to an empty string) to keep your own choice.
"""

import os

EXPERIMENTS = "-event_engine_client,-event_engine_listener"

#: True when this module chose the transport (GRPC_EXPERIMENTS was not set before): a
#: program it launches need not inherit the choice.
CHOSE = "GRPC_EXPERIMENTS" not in os.environ
os.environ.setdefault("GRPC_EXPERIMENTS", EXPERIMENTS)

import grpc  # noqa: E402  (after the choice, which gRPC reads at import)

__all__ = ["CHOSE", "EXPERIMENTS", "grpc"]
