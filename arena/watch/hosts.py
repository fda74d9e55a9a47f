"""Viewers per network host: no one client may take every seat of the spectator service
or of the web viewer (a script holding 1,000 WebSockets locked every page out). The caps
are their servers' (``MAX_VIEWERS_PER_HOST`` in :mod:`arena.watch.servicer`,
``MAX_SOCKETS_PER_HOST`` in :mod:`arena.web.server`).

A local peer is not counted: a unix socket's, or loopback's. Those are the organiser's
own processes: the web viewer relaying its pages' streams to the spectator service, or a
reverse proxy on the same machine (which should then cap its clients itself).
"""

from __future__ import annotations

import ipaddress
import time
from urllib.parse import unquote


def network_host(address: str | None) -> str | None:
    """The IP a viewer connects from (an IPv6 one's /64), or None for a local peer (not
    counted).

    ``address`` is a gRPC peer (``ipv4:1.2.3.4:5678``, ``ipv6:%5B::1%5D:5678``,
    ``unix:...``) or a plain IP (aiohttp's ``request.remote``; None on a unix socket).
    """
    if not address or address.startswith("unix:"):
        return None
    if address.startswith(("ipv4:", "ipv6:")):
        address = unquote(address[5:]).rsplit(":", 1)[0].strip("[]")
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])   # no IPv6 zone
    except ValueError:
        return address          # a form not known here: counted under its own name
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None
    if isinstance(ip, ipaddress.IPv6Address):   # one client's network: a /64 holds 2**64
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class PerHost:
    """How many streams each network host has open, against a cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open: dict[str, int] = {}

    def full(self, host: str | None) -> bool:
        return host is not None and self.open.get(host, 0) >= self.cap

    def add(self, host: str | None) -> None:
        if host is not None:
            self.open[host] = self.open.get(host, 0) + 1

    def remove(self, host: str | None) -> None:
        if host is not None:
            left = self.open[host] - 1
            if left:
                self.open[host] = left
            else:
                del self.open[host]


class CallRate:
    """Calls a second each network host may make, as a token bucket: ``per_s`` a second
    on average, ``burst`` at once. A host whose bucket is full again is forgotten, so
    what is kept is only the hosts calling now."""

    def __init__(self, per_s: float, burst: int) -> None:
        self.per_s = per_s
        self.burst = burst
        self._buckets: dict[str, tuple[float, float]] = {}   # host -> (tokens, at)
        self._pruned = 0.0

    def allow(self, host: str | None, now: float | None = None) -> bool:
        """Whether ``host`` may call now (a local peer always may); a call allowed is
        counted."""
        if host is None:
            return True
        now = time.monotonic() if now is None else now
        tokens, at = self._buckets.get(host, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.per_s)
        if tokens < 1:
            self._buckets[host] = (tokens, now)
            return False
        self._buckets[host] = (tokens - 1, now)
        if len(self._buckets) > 1024 and now - self._pruned >= 1.0:   # the hosts full again go,
            self._pruned = now                                          # at most once a second
            self._buckets = {h: (t, a) for h, (t, a) in self._buckets.items()
                             if t + (now - a) * self.per_s < self.burst}
        return True
