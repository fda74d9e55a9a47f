"""ONO 99 Arena's protocol stubs (``ono99.v1``) and Python bot SDK (``ono99.bot``).

Importing this package picks gRPC's transport before gRPC starts: with grpcio 1.85, the
EventEngine client and listener measured about 35% more latency and CPU per message than
the older transport, on unix sockets and loopback TCP alike (``arena bench referee``).
Set ``GRPC_EXPERIMENTS`` yourself (even to an empty string) to keep your own choice.
"""

import os

os.environ.setdefault("GRPC_EXPERIMENTS", "-event_engine_client,-event_engine_listener")
