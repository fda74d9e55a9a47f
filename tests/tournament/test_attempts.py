"""A match that does not finish is played again. Where a remote bot sits (it keeps what it
saw: the server's shutdown cut the match short, or a worker was lost), each attempt is a
fresh deal under a fresh id, unless the organiser gave the seed; elsewhere (fresh,
sandboxed processes) the planned deal."""

from __future__ import annotations

from arena.store import open_store
from arena.tournament.tournament import Settings, Tournament


def test_a_table_with_a_remote_bot_gets_a_fresh_deal_and_id_at_each_attempt(tmp_path):
    store = open_store(str(tmp_path / "t.db"))
    settings = Settings(bots=("local-a", "local-b", "far"), remote=(2,), table_size=2,
                        games=2, seed=5, secret=True)   # a seed drawn in secret
    t = Tournament.create_registered(store, "t", settings)
    remote = [p for p in t.plan if 2 in p.table]
    local = [p for p in t.plan if 2 not in p.table]
    assert remote and local
    for plan in local:   # the planned deal, the same at every attempt
        first, again = t.spec(plan), t.spec(plan)
        assert first.seed == again.seed == plan.seed and first.match_id == again.match_id
    for plan in remote:
        attempts = [t.spec(plan) for _ in range(3)]
        assert len({a.seed for a in attempts} | {plan.seed}) == 4
        assert len({a.match_id for a in attempts}) == 3
        assert len({a.bot_seeds for a in attempts}) == 1     # a bot's own seed: no deal in it
    store.close()


def test_with_a_seed_the_organiser_gave_every_deal_is_as_planned(tmp_path):
    """A given seed asks for reproducible deals (the fuzzer replays its examples on them):
    a remote table's attempts then keep the planned deal."""
    store = open_store(str(tmp_path / "t.db"))
    settings = Settings(bots=("local-a", "far"), remote=(1,), table_size=2, games=2, seed=5)
    t = Tournament.create_registered(store, "t", settings)
    for plan in t.plan:
        assert t.spec(plan).seed == t.spec(plan).seed == plan.seed
    store.close()
