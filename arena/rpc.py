"""What every gRPC server of the arena shares: a request that is not protobuf at all is
answered INVALID_ARGUMENT, before its servicer runs; a status's details are cut short
enough for gRPC to send them; an address a server cannot listen on is found out, with its
reason, before gRPC tries it.

gRPC parses a unary request before the servicer sees it, and when protobuf cannot parse
it grpc.aio raises out of the handler: the call ends with UNKNOWN ("Unexpected <class
'DecodeError'>") and the server logs an error, for bytes any client may send. So this
interceptor parses such requests itself and answers the bytes that do not parse with
INVALID_ARGUMENT, naming the message expected. Streams of requests (Referee.Play,
Organizer.UploadBot) are read by their servicers, which catch ``DecodeError`` themselves
and say what they do in their .proto.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import stat
import tempfile
from typing import NoReturn

from google.protobuf.message import DecodeError
from ono99.transport import grpc

#: A status's details travel in a header, which a gRPC peer refuses past 16 KiB (after
#: percent-encoding: up to 3 characters a byte); an error that quotes what a client sent
#: (a name of 100,000 characters) would turn into RESOURCE_EXHAUSTED "received metadata
#: size exceeds hard limit". Details are cut to this many bytes of UTF-8.
MAX_DETAILS = 1000

#: The status codes by which an arena server refuses a request as it was made (an unknown
#: name, a bad value, a wrong token, a tournament that is not running): the caller is to
#: ask something else, and trying again cannot help. Any other code is the call failing
#: (no server there, no answer in time, an error of the server's): the command line exits
#: 2 for the first, 1 for the second (:func:`arena.cli.main.exit_status`).
REFUSALS = frozenset({
    grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.OUT_OF_RANGE,
})


def port_out_of_range(address: str) -> bool:
    """Whether ``address`` (HOST:PORT; a ``unix:`` one never is) names a port past 65535
    or below 0, which gRPC wraps around (99999 is 34463) where it should refuse it."""
    if address.startswith("unix"):
        return False
    try:
        return not 0 <= int(address.rpartition(":")[2]) <= 65535
    except ValueError:
        return False     # not a number: gRPC itself refuses it


#: The longest path a unix socket may have (Linux's sun_path: 108 bytes with its NUL).
MAX_SOCKET_PATH = 107


def socket_root(depth: int) -> str:
    """Where to make a folder for unix sockets ``depth`` bytes below it: the temporary
    folder ($TMPDIR), or /tmp where that is too deep for them (gRPC failed to bind under a
    deep TMPDIR, and Ray failed to start). OSError if neither will do."""
    for root in (tempfile.gettempdir(), "/tmp"):
        if len(os.fsencode(root)) + depth <= MAX_SOCKET_PATH and os.path.isdir(root):
            return root
    raise OSError(f"the temporary folder {tempfile.gettempdir()} has too long a path for unix "
                  f"sockets {depth} bytes below it (at most {MAX_SOCKET_PATH} bytes in all): "
                  "set TMPDIR to a shorter one")


def _socket_path(address: str) -> tuple[str, bool] | str:
    """A ``unix:`` or ``unix-abstract:`` address's path (or name) and whether it is an
    abstract one; or why it is neither."""
    abstract = address.startswith("unix-abstract:")
    path = address.partition(":")[2]
    if not abstract and path.startswith("//"):
        if not path.startswith("///"):   # gRPC: "authority-based URIs not supported"
            return f"write unix:/PATH or unix:///PATH for a socket's path, not {address!r}"
        path = path[2:]
    if not path:
        return "a unix socket needs a path (unix:PATH) or a name (unix-abstract:NAME)"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return (f"a unix socket's {'name' if abstract else 'path'} has at most "
                f"{MAX_SOCKET_PATH} bytes; this one has {len(os.fsencode(path))}")
    return path, abstract


def _ipv6_hint(address: str) -> str | None:
    """How to write ``address`` if it holds a bare IPv6 address, which gRPC cannot tell
    from its port (``::1:0``, or with no port at all, ``::1``); None if it does not."""
    def ipv6(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == 6
        except ValueError:
            return False
    host, _, port = address.rpartition(":")
    if ipv6(host):
        return f"write an IPv6 address in brackets: [{host}]:{port}"
    if ipv6(address):
        return f"write an IPv6 address in brackets, with a port: [{address}]:PORT"
    return None


def _socket_taken(path: str, abstract: bool) -> str | None:
    """Why a socket cannot be bound at ``path``: a server answers there (gRPC unlinked a
    live server's socket and took its place: the first server, still running, could no
    longer be reached), or something else is; None if it is free or a socket left over."""
    where = "\0" + path if abstract else path
    if not abstract:
        try:
            if not stat.S_ISSOCK(os.stat(path).st_mode):
                return f"{path} is there and is not a socket"
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{path}: {(exc.strerror or str(exc)).lower()}"
    shown = f"{'unix-abstract:' if abstract else 'unix:'}{path}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)           # a listener whose backlog is full answers nothing
        try:
            s.connect(where)
        except (ConnectionRefusedError, FileNotFoundError):
            return None             # nobody listens: free, or a socket left by a dead one
        except (TimeoutError, BlockingIOError):     # its backlog is full (EAGAIN)
            return f"something holds {shown}: a server there takes no connection"
        except OSError as exc:      # another user's socket: gRPC would unlink it
            return f"{shown}: {(exc.strerror or str(exc)).lower()}"
    return f"a server already listens at {shown}"


def listen_problem(address: str) -> str | None:
    """Why a server cannot listen on ``address`` (HOST:PORT, unix:PATH or
    unix-abstract:NAME), or None if it may. Found by binding a socket of our own (or, for
    a unix socket, trying to reach a server there): gRPC says only that it failed, after
    logging the reason from its C core as a line of its own, wraps a port past 65535
    round, and takes over a live server's unix socket."""
    if address.startswith(("unix:", "unix-abstract:")):
        found = _socket_path(address)
        if isinstance(found, str):
            return found
        path, abstract = found
        if not abstract:
            folder = os.path.dirname(path) or "."
            if not os.path.isdir(folder):
                return f"there is no folder {folder}"
        return _socket_taken(path, abstract)
    host, colon, port = address.rpartition(":")
    if (hint := _ipv6_hint(address)) is not None:
        return hint
    if not colon or not host:
        return "not HOST:PORT"
    if not port.isdigit() or port_out_of_range(address):
        return f"the port must be a number from 0 to 65535, not {port!r}"
    try:
        found = socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        return f"{host!r} is not an address of this machine ({getattr(exc, 'strerror', None) or exc})"
    family, kind, proto, _, where = found[0]
    try:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as gRPC binds
            s.bind(where)
    except OSError as exc:
        return {errno.EADDRINUSE: "the port is already in use",
                errno.EADDRNOTAVAIL: f"{host} is not an address of this machine",
                errno.EACCES: "a port below 1024 needs privileges"}.get(
                    exc.errno, (exc.strerror or str(exc)).lower())
    return None


def dial_problem(address: str) -> str | None:
    """Why a client cannot dial ``address``, or None if it may: HOST:PORT, unix:PATH,
    unix-abstract:NAME (and gRPC's own forms, dns:, ipv4:, ipv6:, as they are). gRPC took
    'localhost' for localhost:443 and an empty unix path for a socket of no name, and
    said only that nothing answered."""
    if address.startswith(("unix:", "unix-abstract:")):
        found = _socket_path(address)
        return found if isinstance(found, str) else None
    if (hint := _ipv6_hint(address)) is not None:
        return hint
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or port_out_of_range(address):
        return "not HOST:PORT with a port from 0 to 65535"
    return None


def absolute(address: str) -> str:
    """``address`` with a unix socket's path made absolute (and ``~`` expanded, which no
    shell does after ``unix:``): a bot runs in a folder of its own, where a relative path
    named another socket (no bot connected), and a printed one worked only from where the
    command ran."""
    path = address[len("unix:"):]
    if not address.startswith("unix:") or not path or path.startswith("//"):
        return address              # none, or refused (unix:), or a URI (unix:///PATH)
    return "unix:" + os.path.abspath(os.path.expanduser(path))


def add_port(server: grpc.aio.Server, address: str, tls: tuple[bytes, bytes] | None) -> int:
    """Have ``server`` listen on ``address`` (with ``tls``, PEM key and certificate, in
    TLS); the port bound, 0 where it cannot (gRPC raises for some bad addresses and
    answers 0 for others)."""
    try:
        return (server.add_secure_port(address, grpc.ssl_server_credentials([tls]))
                if tls is not None else server.add_insecure_port(address))
    except RuntimeError:
        return 0


def served_at(address: str, port: int) -> str:
    """The address to dial a server at that listens on ``address`` and bound ``port``
    (:func:`add_port`'s answer): a unix socket's own, or HOST and the port taken (port 0
    asks for any free one)."""
    if address.startswith(("unix:", "unix-abstract:")):
        return address              # gRPC answers 1 for a socket bound: not a port
    return f"{address.rsplit(':', 1)[0]}:{port}"


def details(text: str) -> str:
    """``text``, cut to :data:`MAX_DETAILS` bytes (on a character boundary) with an ellipsis."""
    data = text.encode()
    if len(data) <= MAX_DETAILS:
        return text
    return data[:MAX_DETAILS - 3].decode(errors="ignore") + "…"


async def abort(context, code: grpc.StatusCode, text: str) -> NoReturn:
    """End the call with ``code`` and ``text`` (cut by :func:`details`)."""
    await context.abort(code, details(text))


class _Unparsable:
    """What a request that protobuf could not parse becomes: the error, for the answer."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


def _tolerant(parse):
    def deserialize(data: bytes):
        try:
            return parse(data)
        except DecodeError as exc:
            return _Unparsable(str(exc))

    return deserialize


def _encoded(serialize):
    """A stream's replies encoded by ``serialize``, but for those already encoded (bytes:
    a batch made once for many viewers, arena.watch.wire.Batches), which go as they are."""
    def encode(reply) -> bytes:
        return reply if type(reply) is bytes else serialize(reply)

    return encode


def _message_name(parse, method: str) -> str:
    cls = getattr(parse, "__self__", None)
    descriptor = getattr(cls, "DESCRIPTOR", None)
    return getattr(descriptor, "full_name", None) or f"the request of {method}"


class RejectUnparsable(grpc.aio.ServerInterceptor):
    """Answers a unary request that protobuf cannot parse with INVALID_ARGUMENT."""

    def __init__(self) -> None:
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}   # wrapped once per method

    async def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method
        wrapped = self._handlers.get(method)
        if wrapped is not None:
            return wrapped
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming or handler.request_deserializer is None:
            return handler
        wrapped = self._handlers[method] = _wrap(handler, method)
        return wrapped


def _wrap(handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
    expected = _message_name(handler.request_deserializer, method)

    async def refuse(request: _Unparsable, context) -> None:
        await abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                    f"the request is not a {expected}: protobuf cannot parse it ({request.error})")

    deserialize = _tolerant(handler.request_deserializer)
    if handler.response_streaming:
        behaviour = handler.unary_stream

        async def unary_stream(request, context):
            if type(request) is _Unparsable:
                await refuse(request, context)
            async for reply in behaviour(request, context):
                yield reply

        return grpc.unary_stream_rpc_method_handler(
            unary_stream, request_deserializer=deserialize,
            response_serializer=_encoded(handler.response_serializer))
    behaviour = handler.unary_unary

    async def unary_unary(request, context):
        if type(request) is _Unparsable:
            await refuse(request, context)
        return await behaviour(request, context)

    return grpc.unary_unary_rpc_method_handler(
        unary_unary, request_deserializer=deserialize,
        response_serializer=handler.response_serializer)
