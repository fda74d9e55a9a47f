"""The spectator service on a port of its own: what `--watch` starts."""

from __future__ import annotations

from ono99.transport import grpc
from ono99.v1 import spectator_pb2_grpc

from arena import files
from arena.rpc import RejectUnparsable, add_port, listen_problem, served_at
from arena.rules.errors import ConfigError
from arena.referee.server import HANDSHAKE_TIMEOUT_MS, MAX_CONNECTIONS
from arena.watch.hub import SpectatorHub
from arena.watch.servicer import RecordSource, SpectatorServicer

DEFAULT_LISTEN = "127.0.0.1:0"
MAX_MESSAGE = 64 * 2**20      # a long match's snapshot (a few hundred bytes a frame)


class SpectatorServer:
    """A gRPC server with the Spectator service over ``hub``."""

    def __init__(self, server: grpc.aio.Server, address: str, hub: SpectatorHub,
                 records: RecordSource | None = None) -> None:
        self.server = server
        self.address = address
        self.hub = hub
        self.records = records

    @classmethod
    async def start(cls, hub: SpectatorHub, listen: str = DEFAULT_LISTEN,
                    records: RecordSource | None = None, organizer_hash: str | None = None,
                    tls: tuple[bytes, bytes] | None = None) -> SpectatorServer:
        """Serve on ``listen`` (HOST:PORT, port 0 for any free one; with ``tls``, PEM key
        and certificate, in TLS)."""
        if (problem := listen_problem(listen)) is not None:
            raise ConfigError(f"spectators cannot be served on {listen!r}: {problem}")
        # RejectUnparsable also lets replies already encoded through (the viewers' batches)
        server = grpc.aio.server(interceptors=[RejectUnparsable()], options=[
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.max_send_message_length", MAX_MESSAGE),
            ("grpc.max_receive_message_length", 64 * 1024),   # requests are small
            # as the referee's port: raw sockets closed, connections capped
            ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
            ("grpc.max_allowed_incoming_connections",
             files.connection_budget(MAX_CONNECTIONS)),   # arena.files: a share of ulimit -n
        ])
        spectator_pb2_grpc.add_SpectatorServicer_to_server(
            SpectatorServicer(hub, records, organizer_hash), server)
        port = add_port(server, listen, tls)
        if port == 0:
            raise ConfigError(f"spectators cannot be served on {listen!r} (a bad address, or one "
                              "already in use)")
        hub.start()
        await server.start()
        return cls(server, served_at(listen, port), hub, records)

    async def stop(self, grace: float = 0.5, final: bool = False) -> None:
        """Every stream ended (:meth:`SpectatorHub.stop`; ``final``: as finished ones, the
        command serving them being done), then the server stopped: within ``grace`` s,
        what is still being sent, then cancelled."""
        self.hub.stop(final)
        await self.server.stop(grace)
        if self.records is not None:
            self.records.close()    # its connection (a record in the making has ended)
