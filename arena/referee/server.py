"""Start and stop a referee: a grpc.aio server with the servicer and a lobby."""

from __future__ import annotations

import os
import tempfile

from ono99.transport import grpc
from ono99.v1 import referee_pb2_grpc

from arena.referee import wire
from arena.referee.lobby import Lobby
from arena.referee.servicer import RefereeServicer


class RefereeServer:
    """A running referee: its address, its lobby."""

    def __init__(self, server: grpc.aio.Server, address: str, lobby: Lobby,
                 socket_dir: str) -> None:
        self.server = server
        self.address = address
        self.lobby = lobby
        self._socket_dir = socket_dir
        #: a private unix socket, whatever ``address`` is: how bots launched in a sandbox
        #: (which has no network) reach the referee
        self.socket_path = os.path.join(socket_dir, "referee.sock")

    @classmethod
    async def start(cls, listen: str = "unix") -> RefereeServer:
        """Start on ``listen``: ``unix`` (a fresh socket in a temp folder), ``tcp`` (a free
        loopback port), or an explicit address such as ``0.0.0.0:50051`` or ``unix:/path``."""
        lobby = Lobby()
        server = grpc.aio.server(options=[
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ])
        referee_pb2_grpc.add_RefereeServicer_to_server(RefereeServicer(lobby), server)
        socket_dir = tempfile.mkdtemp(prefix="ono99-")
        private = f"unix:{os.path.join(socket_dir, 'referee.sock')}"
        server.add_insecure_port(private)
        if listen == "unix":
            address = private
        elif listen == "tcp":
            port = server.add_insecure_port("127.0.0.1:0")
            address = f"127.0.0.1:{port}"
        else:
            port = server.add_insecure_port(listen)
            if port == 0:
                raise OSError(f"cannot listen on {listen}")
            address = listen if listen.startswith("unix:") else f"{listen.rsplit(':', 1)[0]}:{port}"
        await server.start()
        return cls(server, address, lobby, socket_dir)

    async def stop(self, reason: str = "the referee is stopping", grace: float = 1.0) -> None:
        """Say goodbye to every session, then stop serving."""
        self.lobby.closing = True
        for session in self.lobby.sessions():
            try:
                await session.send(wire.goodbye(reason))
            except Exception:
                pass
            session.close(reason)
        await self.server.stop(grace)
        if self._socket_dir:
            try:
                for name in os.listdir(self._socket_dir):
                    os.unlink(os.path.join(self._socket_dir, name))
                os.rmdir(self._socket_dir)
            except OSError:
                pass
