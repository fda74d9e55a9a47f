"""Who may reach the web viewer at all: the host names it answers to, the pages that may
use it, and how many connections it holds.

The viewer answers whoever reaches its port, often in the process that plays the matches.
A page of another site could use it through a visitor's browser: one whose name its DNS
points here (DNS rebinding) is refused by the ``Host`` it sends (:class:`Names`, on a
loopback address or with ``--allow-host``), and one that opens a WebSocket or sends an
upload by its ``Origin`` (:func:`guard`, aiohttp middleware). Every connection holds a file
descriptor of that process: :class:`GuardedSite` counts them as they open, before aiohttp
reads a byte of them, and answers one beyond the caps (:data:`MAX_CONNECTIONS`, in all and
per network address) with a plain 503. :class:`Connections` is that count (the uploads
being received are counted with one too). The routes and the viewer's lifecycle are
:mod:`arena.web.server`'s, which imports this; this module imports nothing of it.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from aiohttp import web

from arena import files
from arena.text import printable
from arena.watch import hosts

#: Connections open at once (a page holds its WebSocket and a keep-alive connection or two
#: for its API calls), and at most a quarter of the process's open-files limit: 5,000
#: connections that sent half a request head and never the rest (slowloris) were all
#: held, each a file descriptor of the process that plays the matches. Beyond: a 503.
MAX_CONNECTIONS = 2000
MAX_CONNECTIONS_PER_HOST = 200   # ... from one network address (local ones not counted)


# ---------------------------------------------------------------- who may ask


class Names:
    """The host names a viewer answers to, on a loopback address or where it was given
    some (``--allow-host``: its public name, or a proxy's in front of it that passes its
    own name on): IP addresses, localhost (and its subdomains), and those names. A page
    of another site whose name its DNS points at this machine (DNS rebinding) is the
    browser's own origin to the browser, and could use the viewer's API as the page does;
    the name it sends (``Host``) is not one of these."""

    def __init__(self, allowed: Sequence[str] = ()) -> None:
        self.allowed = frozenset(n.strip().lower().rstrip(".") for n in allowed if n.strip())

    def __contains__(self, name: str) -> bool:
        name = name.lower().rstrip(".")
        if name == "localhost" or name.endswith(".localhost") or name in self.allowed:
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True


def loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _netloc(text: str, hostname: bool = False) -> str:
    """``HOST[:PORT]`` of a header, lowered (its host name alone with ``hostname``); ""
    for what is none (``[::1`` made urlsplit raise: a 500)."""
    try:
        parts = urlsplit("//" + text.strip())
        return (parts.hostname or "") if hostname else parts.netloc.lower()
    except ValueError:
        return ""


def guard(names: Names | None):
    """Refuse (403) a request whose ``Host`` names another site (``names``), and a
    WebSocket or an upload that a page of another site (``Origin``) opened: no page but
    the viewer's own may follow streams or send uploads through a visitor's browser."""

    @web.middleware
    async def guard(request: web.Request, handler):
        host = request.headers.get("Host")
        if host is not None and names is not None:
            name = _netloc(host, hostname=True)
            if name not in names:
                return web.json_response(
                    {"error": f"this viewer answers to its own address and localhost, not to "
                              f"{printable(name)!r} (a page of another site whose name leads "
                              f"here); arena web --allow-host {printable(name)} lets that "
                              "name in"}, status=403)
        if request.method == "POST" or request.headers.get("Upgrade", "").lower() == "websocket":
            # host names, not ports: a proxy that passes on its name (nginx's $host) drops
            # the port the page's origin has. An origin of "null" (a sandboxed frame, a
            # file) is another site's: an attacker's page can make its own null
            origin = request.headers.get("Origin")
            mine = {_netloc(h, hostname=True)
                    for h in (host, request.headers.get("X-Forwarded-Host")) if h is not None}
            if origin is not None and _netloc(origin.partition("://")[2], hostname=True) \
                    not in mine - {""}:
                return web.json_response(
                    {"error": f"a page of another site ({printable(origin)}) may not open the "
                              "viewer's streams or send it files"}, status=403)
        return await handler(request)

    return guard


# ---------------------------------------------------------------- connections


class Connections:
    """The viewer's open connections (or uploads it is receiving), against a cap in all
    and one per network host."""

    def __init__(self, cap: int, per_host_cap: int) -> None:
        self.cap = cap
        self.open = 0
        self.per_host = hosts.PerHost(per_host_cap)

    def refusal(self, host: str | None, what: str) -> tuple[int, str] | None:
        """Why one more of ``what`` ("connections open", "uploads arriving") from ``host``
        is refused, as an HTTP status (503: full; 429: that host's share is) and a reason;
        None if there is room for it."""
        if self.open >= self.cap:
            return 503, f"this viewer has {self.cap} {what} already; try again later"
        if self.per_host.full(host):
            return 429, (f"{host} has {self.per_host.cap} {what} here already, the most one "
                         "address may")
        return None

    def add(self, host: str | None) -> None:
        self.open += 1
        self.per_host.add(host)

    def remove(self, host: str | None) -> None:
        self.open -= 1
        self.per_host.remove(host)

    @classmethod
    def for_this_process(cls) -> Connections:
        """MAX_CONNECTIONS (and per host), within a quarter of the open-files limit."""
        budget = files.connection_budget(MAX_CONNECTIONS)
        return cls(budget, min(MAX_CONNECTIONS_PER_HOST, budget))


#: what a connection beyond the caps is answered, before it is closed
_FULL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
         b"Connection: close\r\nContent-Length: %d\r\n\r\n%s")


class _Guarded(asyncio.Protocol):
    """One connection: counted, then handed to aiohttp's own protocol; refused with a
    503 when the viewer or its peer's host holds as many as it may."""

    def __init__(self, inner: asyncio.Protocol, connections: Connections) -> None:
        self.inner: asyncio.Protocol | None = inner
        self.connections = connections
        self.host: str | None = None
        self.counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        self.host = hosts.network_host(peer[0] if isinstance(peer, tuple) else None)
        refused = self.connections.refusal(self.host, "connections open")
        if refused is not None:   # before any request: a plain 503, whichever cap it is
            why = refused[1].encode()
            transport.write(_FULL % (len(why), why))
            transport.close()
            self.inner = None
            return
        self.connections.add(self.host)
        self.counted = True
        self.inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.counted:
            self.counted = False
            self.connections.remove(self.host)
        if self.inner is not None:
            self.inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return None if self.inner is None else self.inner.eof_received()

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()


class GuardedSite(web.BaseSite):
    """aiohttp's TCP site with every connection passed through :class:`_Guarded`."""

    def __init__(self, runner: web.AppRunner, host: str, port: int,
                 connections: Connections) -> None:
        super().__init__(runner)
        self.host, self.port, self.connections = host, port, connections

    @property
    def name(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        await super().start()
        factory = self._runner.server
        self._server = await asyncio.get_running_loop().create_server(
            lambda: _Guarded(factory(), self.connections), self.host, self.port, backlog=128)
