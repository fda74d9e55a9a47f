"""This machine's own address on a network interface (not loopback), for tests of what a
server does per network host: a client that dials it is a network peer, not a local one."""

from __future__ import annotations

import ipaddress
import socket

import pytest


def own_network_ip() -> str:
    """An IPv4 address of this machine that is not loopback; the test is skipped where
    there is none (no network interface at all)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))   # a route lookup only: a UDP connect sends nothing
            ip = s.getsockname()[0]
        except OSError:
            ip = ""
    if not ip or ipaddress.ip_address(ip).is_loopback:
        pytest.skip("this machine has no network address other than loopback")
    return ip
