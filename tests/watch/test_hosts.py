"""No one network host may hold every seat of the spectator service: its streams are
capped per host (arena.watch.hosts); local peers, the organiser's own processes, are not
counted. (The web viewer's per-address cap: tests/web/test_endpoints.py.)"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from ono99.v1 import spectator_pb2 as pb, spectator_pb2_grpc

from arena.watch import servicer
from arena.watch.hosts import network_host
from arena.watch.hub import SpectatorHub
from arena.watch.server import SpectatorServer
from support.matches import live_match
from support.network import own_network_ip


@pytest.mark.parametrize("peer, host", [
    ("ipv4:203.0.113.7:50123", "203.0.113.7"),
    ("ipv4:127.0.0.1:50123", None),
    ("ipv4:127.8.9.10:1", None),
    ("ipv6:%5B::1%5D:50123", None),
    ("ipv6:%5B2001:db8:1:2:3:4:5:6%5D:50123", "2001:db8:1:2::/64"),
    ("ipv6:[2001:db8:1:2::9]:7", "2001:db8:1:2::/64"),
    ("unix:/tmp/arena.sock", None),
    ("unix:", None),
    ("198.51.100.4", "198.51.100.4"),          # aiohttp's request.remote
    ("::ffff:127.0.0.1", None),
    ("::ffff:198.51.100.4", "198.51.100.4"),
    ("", None),
    (None, None),
    ("something else", "something else"),      # counted under its own name, never free
])
def test_a_peer_s_network_host(peer, host):
    assert network_host(peer) == host


def test_one_host_s_streams_are_capped_and_local_ones_are_not_counted(monkeypatch):
    monkeypatch.setattr(servicer, "MAX_VIEWERS_PER_HOST", 2)
    ip = own_network_ip()

    async def go():
        hub = SpectatorHub()
        server = await SpectatorServer.start(hub, "0.0.0.0:0")
        port = server.address.rsplit(":", 1)[1]
        try:
            async with live_match(hub), grpc.aio.insecure_channel(f"{ip}:{port}") as remote, \
                    grpc.aio.insecure_channel(f"127.0.0.1:{port}") as local:
                far = spectator_pb2_grpc.SpectatorStub(remote)
                near = spectator_pb2_grpc.SpectatorStub(local)
                held = [far.WatchTV(pb.WatchTVRequest()) for _ in range(2)]
                for call in held:
                    assert (await call.read()).HasField("snapshot")
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await far.WatchTV(pb.WatchTVRequest()).read()
                # the local peer (the organiser's web viewer, say) is not counted
                mine = [near.WatchTV(pb.WatchTVRequest()) for _ in range(3)]
                local_ok = [(await call.read()).HasField("snapshot") for call in mine]
                held[0].cancel()
                await asyncio.sleep(0.3)
                again = far.WatchTV(pb.WatchTVRequest())       # its seat is free again
                freed = (await again.read()).HasField("snapshot")
                for call in held + mine + [again]:
                    call.cancel()
                return refused.value, local_ok, freed
        finally:
            await server.stop()

    refused, local_ok, freed = asyncio.run(go())
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refused.details() == (f"{ip} has 2 streams open already, the most one host may; "
                                 "close one first")
    assert local_ok == [True, True, True] and freed
