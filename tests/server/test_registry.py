"""The server's registry of bots: the store's rows, kept in memory by their one writer."""

from __future__ import annotations

from arena.bots.sandbox import SandboxConfig
from arena.referee.lobby import Lobby
from arena.server.registry import Registry
from arena.store.sqlite import SQLiteStore


def test_the_registry_answers_from_memory_what_it_wrote_to_the_store(tmp_path):
    """Which bots are active, a bot by name and the list of them come from memory: the
    ladder asks at every pick, and on PostgreSQL each read was a round trip in the event
    loop. What it answers is what the store holds, as a restarted server reads it back."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    registry.add_remote("alpha")
    registry.add_remote("beta")
    registry.add_remote("alpha")
    registry.remove("alpha")   # its first version, so named
    expected = [(b.display, b.status) for b in store.registered_bots(include_removed=True)]
    assert expected == [("alpha", "removed"), ("beta", "active"), ("alpha v2", "active")]
    again = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))   # a restart
    for r in (registry, again):
        assert [(b.display, b.status) for b in r.bots(include_removed=True)] == expected
        assert [b.display for b in r.bots()] == ["beta", "alpha v2"]
        assert set(r.remote) == {"beta", "alpha v2"}
    store.close()   # no read of the store from now on
    assert [b.display for b in registry.active()] == ["beta", "alpha v2"]
    assert registry.find("alpha").display == "alpha v2"
    assert registry.find("alpha", include_removed=True).status == "removed"
