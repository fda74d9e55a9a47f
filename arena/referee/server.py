"""Start and stop a referee: a grpc.aio server with the servicer and a lobby."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import stat
import tempfile
import time

from collections.abc import Callable, Sequence

from ono99.transport import grpc
from ono99.v1 import referee_pb2_grpc

from arena import files
from arena.referee.lobby import Lobby
from arena.referee.servicer import MAX_RECEIVE, RefereeServicer
from arena.rpc import RejectUnparsable, add_port, listen_problem, served_at, socket_root

#: Adds a servicer to a gRPC server (``add_XServicer_to_server`` with its servicer).
AddService = Callable[[grpc.aio.Server], None]
#: A connection that has not finished its TLS and HTTP/2 handshakes by then is closed
#: (500 raw sockets that never spoke HTTP/2 stayed open for good before).
HANDSHAKE_TIMEOUT_MS = 5000
#: Connections open at once, beyond which new ones are closed at once: a ladder's few
#: hundred bots and its organisers fit; a flood of raw sockets cannot exhaust the files.
MAX_CONNECTIONS = 2000
#: The largest message sent: an organiser's answers (lists of bots, standings) grow.
MAX_SEND = 16 * 2**20
#: The shortest gap between a client's pings that the referee accepts. gRPC's name for it,
#: grpc.http2.min_ping_interval_without_data_ms, is the receiving side's limit (by default
#: 5 minutes): a client pinging more often earns strikes, and past two of them the
#: connection is cut with a GOAWAY "too_many_pings". The SDKs ping every 10 s, to notice a
#: connection gone silent, for as long as a bot waits between matches.
MIN_PING_INTERVAL_MS = 5_000
#: Connections one launched bot may hold on its socket of its own (:class:`BotSocket`): its
#: SDK needs one, and a second while a lost one is noticed gone. Past it, new ones are
#: closed at once; no other bot's socket counts them.
BOT_CONNECTIONS = 8
#: Streams open at once on each of those connections (gRPC's limit is none): its SDK
#: needs one. A bot that opened streams without end on its 8 kept the referee's process at
#: 240 MiB and 0.6 of a core, and its opponent's moves took 6 times as long.
BOT_STREAMS = 4
#: The longest name of a socket in a referee's folder (``referee.sock``, ``bot<hex>.sock``).
_LONGEST_NAME = len("bot123456789abc.sock")


#: A referee's socket folder left this long (seconds) with nothing listening on its socket
#: is a referee's killed with kill -9, which could not remove it.
STALE_S = 60


def socket_folder() -> str:
    """A fresh private folder for the referee's sockets, where their paths fit
    (:func:`arena.rpc.socket_root`); those of killed referees there are removed first."""
    root = socket_root(len("/ono99-12345678/") + _LONGEST_NAME)
    _sweep(root)
    return tempfile.mkdtemp(prefix="ono99-", dir=root)


def _sweep(root: str) -> None:
    """Remove the socket folders of referees killed with kill -9 (each left one, for good:
    dozens a test run): this user's, holding a ``referee.sock`` nobody listens on and
    nothing but its bots' sockets besides, untouched for :data:`STALE_S` (a referee that
    made its folder a moment ago may not listen yet)."""
    now = time.time()
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith("ono99-"):
            continue
        try:
            held = entry.stat(follow_symlinks=False)
            if (not stat.S_ISDIR(held.st_mode) or held.st_uid != os.getuid()
                    or now - held.st_mtime < STALE_S
                    or not _referee_sockets(os.listdir(entry.path))):
                continue
        except OSError:
            continue
        sock = os.path.join(entry.path, "referee.sock")
        try:
            if not stat.S_ISSOCK(os.lstat(sock).st_mode):
                continue
        except OSError:
            continue
        if not _listening(sock):
            _remove(entry.path)


def _referee_sockets(names: list[str]) -> bool:
    """Whether a folder holding ``names`` holds a referee's sockets and nothing else."""
    return "referee.sock" in names and all(
        n == "referee.sock" or (n.startswith("bot") and n.endswith(".sock")) for n in names)


def _listening(path: str) -> bool:
    """Whether a process listens on the unix socket ``path`` (in doubt: yes)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(path)
        except OSError as exc:
            return exc.errno != errno.ECONNREFUSED
    return True


class BotSocket:
    """A unix socket of one launched bot's own, served by a gRPC server of its own (the
    Referee service only, into the referee's lobby). A sandbox is given this socket and no
    other: what its bot does to it (holding :data:`BOT_CONNECTIONS` connections, streams
    that never say hello) keeps no other bot from connecting, where on one socket shared
    by every launched bot a single bot holding about 2,000 connections kept the others from
    (re)starting, and they were charged with it. It lives as long as the bot's process."""

    def __init__(self, server: grpc.aio.Server, path: str, held: set[BotSocket]) -> None:
        self.path = path
        self._server = server
        self._held = held   # the referee's open bot sockets, which this one leaves on close

    async def close(self, grace: float | None = None) -> None:
        """Stop serving (streams left get ``grace`` seconds) and remove the socket."""
        self._held.discard(self)
        await _quietly_stopped(self._server, grace)
        with contextlib.suppress(OSError):
            os.unlink(self.path)


class RefereeServer:
    """A running referee: its address, its lobby."""

    def __init__(self, server: grpc.aio.Server, address: str, lobby: Lobby,
                 socket_dir: str) -> None:
        self.server = server
        self.address = address
        self.lobby = lobby
        self._socket_dir = socket_dir
        #: a private unix socket, whatever ``address`` is (it is ``address`` where the
        #: referee listens on ``unix``); launched bots are each given one of their own
        #: (:meth:`bot_socket`)
        self.socket_path = os.path.join(socket_dir, "referee.sock")
        self._bot_sockets: set[BotSocket] = set()
        self._bot_sockets_made = 0
        self._stopping = False

    @classmethod
    async def start(cls, listen: str = "unix", services: Sequence[AddService] = (),
                    tls: tuple[bytes, bytes] | None = None,
                    lobby: Lobby | None = None) -> RefereeServer:
        """Start on ``listen``: ``unix`` (a fresh socket in a temp folder), ``tcp`` (a free
        loopback port), or an explicit address such as ``0.0.0.0:50051`` or ``unix:/path``;
        with ``tls`` (PEM key and certificate) that port speaks TLS. ``services`` add more
        servicers to the same port (a server's Organizer). Messages received are capped
        at MAX_RECEIVE bytes, those sent at MAX_SEND."""
        where = "127.0.0.1:0" if listen == "tcp" else listen
        if listen != "unix" and (problem := listen_problem(where)) is not None:
            raise OSError(f"the referee cannot listen on {listen!r}: {problem}")
        lobby = lobby or Lobby()
        # arena.files: a share of ulimit -n
        server = _grpc_server(lobby, files.connection_budget(MAX_CONNECTIONS))
        for add in services:
            add(server)
        socket_dir = None
        try:
            socket_dir = socket_folder()
            private = f"unix:{os.path.join(socket_dir, 'referee.sock')}"
            server.add_insecure_port(private)   # in a private folder, which no sandbox shows
            if listen == "unix":
                address = private
            else:
                port = add_port(server, where, tls)
                if port == 0:
                    raise OSError(f"the referee cannot listen on {listen!r} (a bad address, or "
                                  "one already in use)")
                address = served_at(where, port)
            await server.start()
        except BaseException:
            # refused, or stopped as it started (Ctrl-C in a tournament's first second):
            # its folder went with it, and its server is stopped here, not left to its
            # finalizer (whose shutdown printed "Task exception was never retrieved")
            await _quietly_stopped(server)
            if socket_dir is not None:
                _remove(socket_dir)
            raise
        return cls(server, address, lobby, socket_dir)

    async def bot_socket(self) -> BotSocket:
        """A new socket of one launched bot's own (see :class:`BotSocket`), in the
        referee's private folder. :class:`OSError` if it cannot be made, or once the
        referee is stopping."""
        if self._stopping:
            raise OSError("the referee is stopping")
        self._bot_sockets_made += 1
        path = os.path.join(self._socket_dir, f"bot{self._bot_sockets_made:x}.sock")
        server = _grpc_server(self.lobby, BOT_CONNECTIONS, BOT_STREAMS)
        try:
            try:
                bound = server.add_insecure_port(f"unix:{path}")
            except RuntimeError as exc:   # grpc's way of saying it could not bind
                raise OSError(f"the referee cannot listen on {path}: {exc}") from None
            if bound == 0:
                raise OSError(f"the referee cannot listen on {path}")
            await server.start()
            # for the sandbox's user, not the arena's (root's sandboxes run each bot as a
            # user of its own: arena.bots.sandbox); the folder is the referee's, 0700
            os.chmod(path, 0o666)
        except BaseException:
            await _quietly_stopped(server)
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        made = BotSocket(server, path, self._bot_sockets)
        self._bot_sockets.add(made)
        return made

    async def stop(self, reason: str = "the referee is stopping", grace: float = 1.0) -> None:
        """Say goodbye to every session, then stop serving (on every bot's socket too)."""
        self.lobby.closing = True
        self._stopping = True
        await asyncio.gather(*(s.say_goodbye(reason) for s in self.lobby.sessions()))
        await asyncio.gather(self.server.stop(grace),
                             *(s.close(grace) for s in list(self._bot_sockets)))
        if self._socket_dir:
            _remove(self._socket_dir)


def _grpc_server(lobby: Lobby, connections: int, streams: int | None = None) -> grpc.aio.Server:
    """A gRPC server with the Referee service into ``lobby``, taking at most
    ``connections`` connections at once (and ``streams`` streams on each, if said); its
    ports are still to be added."""
    server = grpc.aio.server(interceptors=[RejectUnparsable()], options=[
        *([] if streams is None else [("grpc.max_concurrent_streams", streams)]),
        ("grpc.so_reuseport", 0),
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.http2.min_ping_interval_without_data_ms", MIN_PING_INTERVAL_MS),
        ("grpc.max_receive_message_length", MAX_RECEIVE),
        ("grpc.max_send_message_length", MAX_SEND),
        ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
        ("grpc.max_allowed_incoming_connections", connections),
    ])
    referee_pb2_grpc.add_RefereeServicer_to_server(RefereeServicer(lobby), server)
    return server


async def _quietly_stopped(server: grpc.aio.Server, grace: float | None = None) -> None:
    """Stop a server that may not have started (or not wholly): whatever it says."""
    with contextlib.suppress(Exception):
        await asyncio.shield(server.stop(grace))


def _remove(socket_dir: str) -> None:
    try:
        for name in os.listdir(socket_dir):
            os.unlink(os.path.join(socket_dir, name))
        os.rmdir(socket_dir)
    except OSError:
        pass
