"""No one network host may hold every seat of the spectator service: its streams are
capped per host (arena.watch.hosts); local peers, the organiser's own processes, are not
counted. (The web viewer's per-address cap: tests/web/test_endpoints.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import time

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


@contextlib.asynccontextmanager
async def far_and_near(hub: SpectatorHub, records=None):
    """The service on every address, and a client of it from the machine's own network
    address (a network host, counted) and one from loopback (a local peer, not): their
    stubs, and that address."""
    ip = own_network_ip()
    server = await SpectatorServer.start(hub, "0.0.0.0:0", records)
    port = server.address.rsplit(":", 1)[1]
    try:
        async with grpc.aio.insecure_channel(f"{ip}:{port}") as remote, \
                grpc.aio.insecure_channel(f"127.0.0.1:{port}") as local:
            yield (spectator_pb2_grpc.SpectatorStub(remote),
                   spectator_pb2_grpc.SpectatorStub(local), ip)
    finally:
        await server.stop()


async def watching_tv(stub, streams: int) -> tuple[list, list[bool]]:
    """``streams`` TV streams opened on ``stub``, and whether each got its snapshot."""
    calls = [stub.WatchTV(pb.WatchTVRequest()) for _ in range(streams)]
    return calls, [(await call.read()).HasField("snapshot") for call in calls]


async def refused_tv(stub) -> grpc.aio.AioRpcError:
    """The error a TV stream opened on ``stub`` is refused with."""
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.WatchTV(pb.WatchTVRequest()).read()
    return refused.value


def test_one_host_s_streams_are_capped_and_local_ones_are_not_counted(monkeypatch):
    monkeypatch.setattr(servicer, "MAX_VIEWERS_PER_HOST", 2)

    async def go():
        hub = SpectatorHub()
        async with far_and_near(hub) as (far, near, ip), live_match(hub):
            held, got = await watching_tv(far, 2)
            assert all(got)
            refused = await refused_tv(far)
            # the local peer (the organiser's web viewer, say) is not counted
            mine, local_ok = await watching_tv(near, 3)
            held[0].cancel()
            await asyncio.sleep(0.3)
            again = far.WatchTV(pb.WatchTVRequest())       # its seat is free again
            freed = (await again.read()).HasField("snapshot")
            for call in held + mine + [again]:
                call.cancel()
            return refused, local_ok, freed, ip

    refused, local_ok, freed, ip = asyncio.run(go())
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refused.details() == (f"{ip} has 2 streams open already, the most one host may; "
                                 "close one first")
    assert local_ok == [True, True, True] and freed


def test_one_host_s_quick_calls_are_rate_limited_and_local_ones_are_not(monkeypatch):
    """ListMatches and GetRecord run in the loop that plays the matches: 410 ListMatches a
    second from one client halved a ladder. One network host now gets CALLS_PER_S on
    average, CALLS_BURST at once; a local peer (the organiser's web viewer) is not
    counted."""
    monkeypatch.setattr(servicer, "CALLS_PER_S", 4)
    monkeypatch.setattr(servicer, "CALLS_BURST", 5)

    async def go():
        async with far_and_near(SpectatorHub()) as (far, near, ip):
            burst = [await far.ListMatches(pb.ListMatchesRequest()) for _ in range(5)]
            with pytest.raises(grpc.aio.AioRpcError) as listed:
                await far.ListMatches(pb.ListMatchesRequest())
            with pytest.raises(grpc.aio.AioRpcError) as record:
                await far.GetRecord(pb.GetRecordRequest(match_id="m1"))
            mine = [await near.ListMatches(pb.ListMatchesRequest()) for _ in range(30)]
            await asyncio.sleep(0.6)                     # two calls' worth come back
            with pytest.raises(grpc.aio.AioRpcError) as unknown:
                await far.GetRecord(pb.GetRecordRequest(match_id="m1"))
            return len(burst), listed.value, record.value, len(mine), unknown.value, ip

    burst, listed, record, mine, unknown, ip = asyncio.run(go())
    assert burst == 5 and mine == 30
    for refused in (listed, record):
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.details() == (f"{ip} calls more often than the 4 a second one host may "
                                     "(list and records); try again in a moment")
    assert unknown.code() == grpc.StatusCode.NOT_FOUND     # let through again


def test_one_host_may_have_only_a_few_records_waiting_to_be_made(monkeypatch, tmp_path):
    """Stored records are made one at a time, and at most RECORD_QUEUE requests wait: 40
    requests of made-up ids from one client took every place, and real ones were refused.
    One network host now holds at most RECORD_QUEUE_PER_HOST of them; a local peer is
    not counted."""
    from arena.store import open_store
    from arena.watch.records import StoreRecords
    from support.matches import store_ladder

    class Slow(StoreRecords):
        """A store whose every record takes 0.2 s: all eight requests wait together
        (made-up ids are answered at once, and a place was free again before the
        last came, on a loaded machine)."""

        def snapshot(self, match_id):
            time.sleep(0.2)
            return super().snapshot(match_id)

    monkeypatch.setattr(servicer, "RECORD_QUEUE_PER_HOST", 3)
    monkeypatch.setattr(servicer, "CALLS_BURST", 100)
    db = tmp_path / "arena.db"
    store_ladder(db, 4, 12)
    store = open_store(str(db))
    ids = [m.match_uid for m in store.matches(store.tournament("ladder"))]

    async def go():
        async with far_and_near(SpectatorHub(), Slow(store)) as (far, near, ip):
            made_up = [far.GetRecord(pb.GetRecordRequest(match_id=f"nope{i}")) for i in range(8)]
            real = [near.GetRecord(pb.GetRecordRequest(match_id=i)) for i in ids[:6]]
            return await asyncio.gather(*made_up, return_exceptions=True), \
                await asyncio.gather(*real, return_exceptions=True), ip

    try:
        made_up, real, ip = asyncio.run(go())
    finally:
        store.close()
    codes = [a.code() for a in made_up]
    assert codes.count(grpc.StatusCode.NOT_FOUND) == 3, codes   # the first and two waiting
    refused = [a for a in made_up if a.code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert len(refused) == 5 and all(
        a.details() == f"{ip} has 3 records being made already, the most one host may; try "
                       "again later" for a in refused)
    assert all(isinstance(r, pb.MatchSnapshot) for r in real), real


def test_network_hosts_never_take_the_seats_kept_for_local_peers(monkeypatch):
    """16 IPv6 /64s of one /56 (each a host of its own) filled every seat, and the
    organiser's own web viewer was refused. The last LOCAL_SEATS are local peers' only."""
    monkeypatch.setattr(servicer, "MAX_VIEWERS", 4)
    monkeypatch.setattr(servicer, "LOCAL_SEATS", 2)

    async def go():
        hub = SpectatorHub()
        async with far_and_near(hub) as (far, near, _), live_match(hub):
            held, got = await watching_tv(far, 2)
            assert all(got)
            far_refused = await refused_tv(far)
            mine, local_ok = await watching_tv(near, 2)
            near_refused = await refused_tv(near)
            for call in held + mine:
                call.cancel()
            return far_refused, local_ok, near_refused

    far_refused, local_ok, near_refused = asyncio.run(go())
    assert far_refused.code() == near_refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert far_refused.details() == ("this arena has 2 viewers already, all it takes from other "
                                     "machines; try again later")
    assert local_ok == [True, True]
    assert near_refused.details() == "this arena has 4 viewers already; try again later"
