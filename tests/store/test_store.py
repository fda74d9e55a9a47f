"""One test suite for every storage backend, plus the SQLite backend's own promises.

Every test of the shared suite takes the ``store`` (or ``backend``) fixture, which is
parametrized over :data:`BACKENDS`; a server backend joins the suite with one more entry
there. The matches stored are real: whole seeded games of :class:`arena.rules.Game`
played by a seeded random policy, so the event records are the engine's own.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.referee.results import (
    MatchResult, MatchSpec, SeatStats, Status, Verdict, VerdictKind,
)
from arena.rules import Game, make_config
from arena.rules.events import event_to_dict
from arena.store import (
    BotRecord, BotVersion, MatchRecord, SQLiteStore, Store, StoreError, TournamentRecord, open_store,
)
from arena.store.migrations import migrations
from arena.store.sqlite import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------ the backends


@dataclass(frozen=True)
class Backend:
    """How the suite reaches one storage backend."""

    name: str
    # where a fresh, empty store lives: (the test's request, for a fixture; its tmp_path)
    location: Callable[[pytest.FixtureRequest, Path], str]
    open: Callable[..., Store]                 # open(location, durable=False)
    # Arm ``store`` so that its next record_match kills this process (SIGKILL) in the
    # middle of the write: after the match row, before its events, inside the transaction.
    die_mid_write: Callable[[Store], None]


def _die_before_events(store: Store) -> None:
    """Both backends write through ``store.db`` (a sqlite3 or a psycopg connection, each
    with ``execute``): wrap it so that the events' INSERT kills the process instead."""
    class Dying:
        """Passes every statement to the real connection, and dies before the events."""

        def __init__(self, db) -> None:
            self._db = db

        def execute(self, sql: str, *args):
            if sql.lstrip().startswith("INSERT INTO match_events"):
                # the match row is in (uncommitted): show it, then die
                rows = self._db.execute("SELECT count(*) FROM matches").fetchone()[0]
                print(f"dying with {rows} match rows in the open transaction", flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
            return self._db.execute(sql, *args)

        def __getattr__(self, name: str):
            return getattr(self._db, name)

    store.db = Dying(store.db)


BACKENDS = [
    Backend("sqlite", lambda request, tmp: str(tmp / "arena.db"), open_store, _die_before_events),
    # a fresh database on the session's server (tests/support/postgres.py)
    Backend("postgresql", lambda request, tmp: request.getfixturevalue("postgres_url"), open_store,
            _die_before_events),
    # a database in SQL_ASCII, which gave bytes for every text column (names, tokens)
    Backend("postgresql-ascii", lambda request, tmp: request.getfixturevalue("postgres_ascii_url"),
            open_store, _die_before_events),
]
BACKENDS_BY_NAME = {b.name: b for b in BACKENDS}


@pytest.fixture(params=BACKENDS, ids=lambda b: b.name)
def backend(request) -> Backend:
    return request.param


@pytest.fixture
def location(backend, request, tmp_path) -> str:
    """Where this test's fresh store lives, for the backend under test."""
    return backend.location(request, tmp_path)


@pytest.fixture
def store(backend, location):
    s = backend.open(location)
    yield s
    s.close()


# ------------------------------------------------------------------------ real matches


NAMES = ("ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal")


def played(seed: int, ruleset: str = "modern", options=None, seats: int = 3,
           verdicts: tuple[Verdict, ...] = ()) -> MatchResult:
    """A whole seeded game played by a seeded random policy, as the referee reports it."""
    config = make_config(ruleset, options, seats)
    game = Game.from_config(config, seed)
    rng = random.Random(seed)
    stats = [SeatStats() for _ in range(seats)]
    while not game.finished:
        seat = game.to_act
        game.play(seat, rng.choice(game.legal_cards()))
        latency = rng.randrange(50, 5000)
        stats[seat].moves += 1
        stats[seat].latency_us_total += latency
        stats[seat].latency_us_max = max(stats[seat].latency_us_max, latency)
    spec = MatchSpec(f"suite/m{seed}", config, seed, NAMES[:seats])
    turns = sum(s.moves for s in stats)
    return MatchResult(spec, Status.FINISHED, game.outcome.ranking, game.outcome.termination,
                       list(verdicts), stats, 1_700_000_000.25 + seed, 0.0123456789 * (seed + 1),
                       turns, list(game.events))


def expected_events(result: MatchResult) -> list[dict]:
    return [event_to_dict(e) for e in result.events]


def bot(store: Store, name: str, content_hash: str = "h0") -> BotRecord:
    return store.add_bot(name, f"/bots/{name}", {"name": name, "command": ["run", name]},
                         content_hash)


def tournament(store: Store, name: str = "cup", bots=("ada", "bob", "cy")) -> TournamentRecord:
    return store.create_tournament(name, {"games": 3, "table_size": 2, "seed": 7},
                                   [bot(store, b) for b in bots])


# ------------------------------------------------------------------------ tournaments


def test_tournaments_are_found_by_name_the_latest_by_none_and_listed_oldest_first(store):
    with pytest.raises(StoreError, match="no tournament"):
        store.tournament()
    first = tournament(store, "first")
    second = tournament(store, "second", bots=("cy", "ada"))
    third = tournament(store, "third")

    assert store.tournament("second") == second
    assert store.tournament("first") == first
    assert store.tournament() == third
    assert store.tournament(None) == third
    assert [t.name for t in store.tournaments()] == ["first", "second", "third"]
    assert store.tournaments() == [first, second, third]
    assert second.settings == {"games": 3, "table_size": 2, "seed": 7}
    assert second.bots == ["cy", "ada"]


def test_a_tournament_is_marked_cancelled_and_no_longer(store):
    """A server does not resume a tournament its organiser cancelled: the mark is stored,
    read back with the tournament, and taken off when it is followed again."""
    t = tournament(store)
    assert t.cancelled_at is None
    before = time.time()
    marked = store.set_cancelled(t, True)
    assert before <= marked.cancelled_at <= time.time()
    assert store.tournament("cup") == marked and store.tournaments() == [marked]
    assert store.set_cancelled(t, False) == t == store.tournament("cup")


def test_one_holder_plays_a_tournament_at_a_time(store, backend, location):
    """Two processes resuming one tournament played the same matches, and the second
    stopped on the first's results ("already stored"). A claim, held by whatever plays
    it (here a second store: another file description, another session), is refused to
    another until released; other tournaments are free."""
    from arena.store.base import TournamentInPlayError

    cup = store.create_tournament("cup", {"games": 1}, [])
    other = store.create_tournament("other", {"games": 1}, [])
    second = backend.open(location)
    try:
        held = store.claim_tournament(cup)
        with pytest.raises(TournamentInPlayError) as err:
            second.claim_tournament(cup)
        assert str(err.value).startswith("tournament 'cup' is being played by another process")
        second.claim_tournament(other).release()        # another tournament: free
        held.release()
        held.release()                                  # once; again does nothing
        second.claim_tournament(cup).release()          # let go: claimed at once
    finally:
        second.close()


def test_a_new_sqlite_database_is_its_owner_s_alone(tmp_path):
    """A database holds the master seed of every tournament, from which each deal follows
    (live matches' hands too): made under the usual umask (022), it and its -wal were
    every local user's to read. A new one is made 0600, and SQLite's files beside it
    take its mode; an existing one keeps its own."""
    old_umask = os.umask(0o022)
    try:
        store = SQLiteStore(tmp_path / "arena.db")
        store.create_tournament("cup", {"seed": 12345, "secret": True}, [])
        modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
        store.close()
        (tmp_path / "shared.db").touch(0o640)
        SQLiteStore(tmp_path / "shared.db").close()
    finally:
        os.umask(old_umask)
    assert modes == {"arena.db": 0o600, "arena.db-wal": 0o600, "arena.db-shm": 0o600}, modes
    assert (tmp_path / "shared.db").stat().st_mode & 0o777 == 0o640


def test_a_link_to_a_sqlite_file_is_the_same_database_to_its_claims(tmp_path):
    """SQLite keeps its -wal by the file's name, and so did the claims: two servers on a
    file and a symbolic link to it both ran (the second played the first's tournament),
    and two on two hard links wrote one file through two -wal files until it was
    malformed. A symbolic link now claims the file's own name; a second hard link is
    refused at open."""
    from arena.store.base import TournamentInPlayError

    first = SQLiteStore(tmp_path / "arena.db")
    (tmp_path / "link.db").symlink_to(tmp_path / "arena.db")
    second = SQLiteStore(tmp_path / "link.db")
    try:
        cup = first.create_tournament("cup", {"games": 1}, [])
        assert second.tournament("cup") == cup                     # one database
        held = first.claim()
        with pytest.raises(StoreError, match="another arena serve is already using"):
            second.claim()
        held.release()
        held = first.claim_tournament(cup)
        with pytest.raises(TournamentInPlayError):
            second.claim_tournament(cup)
        held.release()
    finally:
        second.close()
        first.close()
    os.link(tmp_path / "arena.db", tmp_path / "hard.db")
    for name in ("hard.db", "arena.db", "link.db"):
        with pytest.raises(StoreError, match="the file has 2 names"):
            SQLiteStore(tmp_path / name)


def test_a_tournament_s_claim_leaves_no_file_behind_and_never_two_holders(tmp_path, monkeypatch):
    """A tournament's claim was a file of its own in DB-playing/, kept for ever: one file a
    tournament ever played. Its release now removes it, while still holding its lock; a
    process that opened the file just before (and locks it just after) would hold the lock
    of a file nobody else can find, beside a third process holding the new one: it sees
    the file is gone and claims afresh."""
    import fcntl
    from arena.store import sqlite as module
    from arena.store.base import TournamentInPlayError

    db = tmp_path / "arena.db"
    first, second, third = SQLiteStore(db), SQLiteStore(db), SQLiteStore(db)
    playing = tmp_path / "arena.db-playing"
    try:
        cup = first.create_tournament("cup", {"games": 1}, [])
        first.claim_tournament(cup).release()
        assert list(playing.iterdir()) == []

        held = first.claim_tournament(cup)
        real_flock = fcntl.flock
        calls = []

        def flock_after_the_release(fd, op):   # the first holder lets go in between
            calls.append(fd)
            if len(calls) == 1:
                held.release()
            return real_flock(fd, op)

        monkeypatch.setattr(module.fcntl, "flock", flock_after_the_release)
        again = second.claim_tournament(cup)
        monkeypatch.setattr(module.fcntl, "flock", real_flock)
        assert len(calls) == 2                      # the removed file's lock, then the new one's
        with pytest.raises(TournamentInPlayError):
            third.claim_tournament(cup)
        again.release()
        third.claim_tournament(cup).release()
        assert list(playing.iterdir()) == []
    finally:
        for store in (first, second, third):
            store.close()


def test_a_taken_tournament_name_is_refused_and_nothing_is_stored(store):
    original = tournament(store, "cup", bots=("ada", "bob"))
    with pytest.raises(StoreError, match="'cup'"):
        store.create_tournament("cup", {"games": 99}, [bot(store, "cy"), bot(store, "dee")])

    assert store.tournaments() == [original]
    assert store.tournament("cup").settings == original.settings
    assert [b.name for b in store.tournament_bots(original)] == ["ada", "bob"]
    # the store is still usable: the failed transaction is not left open
    assert tournament(store, "cup-2").name == "cup-2"


def test_an_unknown_tournament_name_is_refused_with_the_known_names(store):
    tournament(store, "spring")
    tournament(store, "autumn")
    with pytest.raises(StoreError) as err:
        store.tournament("winter")
    message = str(err.value)
    assert "'winter'" in message
    assert "spring" in message and "autumn" in message


def test_names_are_looked_up_one_at_a_time_and_a_miss_lists_only_the_latest(store):
    """A server keeps thousands of tournaments: starting one read all of them (settings
    and all) to check its name, and a missing name's error listed every one."""
    for n in range(15):
        tournament(store, f"t{n}")
    assert store.has_tournament("t3") and not store.has_tournament("t15")
    assert store.tournament_names(3) == ["t14", "t13", "t12"]
    with pytest.raises(StoreError) as err:
        store.tournament("nope")
    assert str(err.value).endswith("; known: " + ", ".join(f"t{n}" for n in range(14, 4, -1))
                                   + ", ...")


# ------------------------------------------------------------------------ bots


def test_add_bot_keeps_one_record_per_name_and_content_hash(store):
    first = bot(store, "ada", "aaaa")
    again = bot(store, "ada", "aaaa")
    changed = bot(store, "ada", "bbbb")
    other = bot(store, "bob", "aaaa")

    assert again.id == first.id
    assert changed.id != first.id
    assert other.id not in (first.id, changed.id)
    assert (first.name, first.content_hash) == ("ada", "aaaa")


def test_tournament_bots_are_the_bot_versions_in_schedule_order(store):
    bots = [bot(store, "cy", "c1"), bot(store, "ada", "a1"), bot(store, "bob", "b1")]
    newer_ada = bot(store, "ada", "a2")
    record = store.create_tournament("cup", {}, bots)
    later = store.create_tournament("cup-2", {}, [newer_ada, bots[0]])

    assert store.tournament_bots(record) == bots
    assert store.tournament("cup").bots == ["cy", "ada", "bob"]
    assert store.tournament_bots(later) == [newer_ada, bots[0]]
    assert store.tournament_bots(record)[1].manifest == {"name": "ada", "command": ["run", "ada"]}


# ------------------------------------------------------------------------ matches


def test_record_match_stores_every_field_and_the_engine_events(store):
    t = tournament(store)
    result = played(11, "classic", {"scoring": "points", "points_target": 60}, seats=3,
                    verdicts=(Verdict(1, VerdictKind.TIMEOUT, "no answer in 1000 ms + bank", 1_234_567),))
    seated = ["bob", "cy", "ada"]
    mid = store.record_match(t, "t0-d0-r1", "t0-d0", seated, result)

    record = store.match(mid)
    assert record == MatchRecord(
        id=mid, tournament="cup", key="t0-d0-r1", match_uid=result.spec.match_id,
        sample="t0-d0", bots=seated, seed=11,
        ruleset="classic", options=dict(result.spec.config.options), status=Status.FINISHED,
        ranking=[list(g) for g in result.ranking], termination=result.termination,
        verdicts=[{"seat": 1, "kind": VerdictKind.TIMEOUT, "detail": "no answer in 1000 ms + bank",
                   "latency_us": 1_234_567}],
        stats=[s.to_dict() for s in result.stats], started_at=result.started_at,
        duration_s=result.duration_s, turns=result.turns)
    assert record.options["scoring"] == "points"
    assert record.places() == result.places()
    assert store.events(mid) == expected_events(result)
    assert store.matches(t) == [record]
    assert store.match_by_uid(result.spec.match_id) == record
    assert store.match_by_uid("no-such-match") is None


@pytest.mark.parametrize("seed, ruleset, options, seats", [
    (1, "modern", None, 2),
    (2, "modern", None, 4),
    (3, "classic", {"tokens": 1}, 5),
    (4, "classic-set99", {"scoring": "points", "points_mode": "lowest"}, 3),
    (5, "modern", {"max_plays": 5}, 3),          # a draw by the play limit: one tied group
])
def test_events_round_trip_for_every_ruleset(store, seed, ruleset, options, seats):
    t = tournament(store)
    result = played(seed, ruleset, options, seats)
    mid = store.record_match(t, f"k{seed}", f"k{seed}", list(NAMES[:seats]), result)
    assert store.events(mid) == expected_events(result)
    assert store.events(mid)[-1]["kind"] == "end"
    assert store.match(mid).places() == result.places()
    if result.termination == "max_plays":
        assert store.match(mid).places() == [1] * seats


def test_a_key_stored_twice_is_refused_and_the_first_match_kept(store):
    t = tournament(store)
    first = played(21)
    mid = store.record_match(t, "t0-d0-r0", "t0-d0", ["ada", "bob", "cy"], first)
    with pytest.raises(StoreError, match="t0-d0-r0"):
        store.record_match(t, "t0-d0-r0", "other", ["cy", "bob", "ada"], played(22))

    [kept] = store.matches(t)
    assert kept.id == mid and kept.seed == 21 and kept.sample == "t0-d0"
    assert kept.bots == ["ada", "bob", "cy"]
    assert store.events(mid) == expected_events(first)
    # the refused write left no transaction open
    store.record_match(t, "t0-d0-r1", "t0-d0", ["ada", "bob", "cy"], played(23))
    assert len(store.matches(t)) == 2


def test_a_tournament_s_matches_are_read_a_page_at_a_time_in_the_order_stored(store):
    """A server reads its ladder's matches as it starts: whole, 300,000 of them took
    1.2 GB as records. ``iter_matches`` reads them a page at a time (``limit``), in the
    order stored, another tournament's matches between them left out."""
    a, b = tournament(store, "a"), tournament(store, "b")
    for n in range(7):
        store.record_match(a, f"k{n}", f"k{n}", ["ada", "bob", "cy"], played(40 + n))
        if n % 3 == 0:
            store.record_match(b, f"k{n}", f"k{n}", ["ada", "bob", "cy"], played(60 + n))
    everything = store.matches(a)
    assert [m.seed for m in everything] == list(range(40, 47))
    assert [m.seed for m in store.matches(a, limit=2)] == [40, 41]
    assert [m.seed for m in store.matches(a, after=everything[4].id, limit=5)] == [45, 46]
    for page in (1, 3, 7, 50):
        assert [m.id for m in store.iter_matches(a, page=page)] == [m.id for m in everything]
    assert [m.seed for m in store.iter_matches(a, after=everything[2].id, page=2)] == [43, 44, 45, 46]
    assert [m.seed for m in store.iter_matches(b, page=1)] == [60, 63, 66]


def test_a_tournament_s_state_is_kept_one_at_a_time_and_a_damaged_one_said(store):
    """A ladder keeps a snapshot of what it made of its matches (ratings, pairings, the
    standings' counts), so that a server starts from it and reads only the matches stored
    since: one state a tournament, the last saved, as it was given (JSON's types)."""
    from arena.store.base import UnreadableStateError

    a, b = tournament(store, "a"), tournament(store, "b")
    assert store.state(a) is None
    first = {"count": 3, "elo": {"ada": 1512.25, "bob": 1487.75}, "missing": [], "x": None}
    store.save_state(a, 17, first)
    store.save_state(b, 4, {"other": [1, "two"]})
    t0 = time.time()
    store.save_state(a, 42, {"count": 4, "names": ["é", "\u2603"]})
    got = store.state(a)
    assert got.through == 42 and got.data == {"count": 4, "names": ["é", "\u2603"]}
    assert t0 - 1 <= got.saved_at <= time.time() + 1
    assert store.state(b).through == 4 and store.state(b).data == {"other": [1, "two"]}
    store.db.execute("UPDATE tournament_states SET data = %s WHERE tournament_id = %s"
                     .replace("%s", "?" if isinstance(store, SQLiteStore) else "%s"),
                     (b"not zlib", a.id))
    with pytest.raises(UnreadableStateError, match="the saved state of tournament 'a' cannot be read"):
        store.state(a)
    assert store.state(b).through == 4           # another tournament's state is its own
    store.save_state(a, 43, first)               # a new one replaces the damaged one
    assert store.state(a).data == first


def test_a_tournament_s_last_matches_are_read_without_the_others(store):
    """``arena matches --limit N`` read every match of the tournament (a ladder's
    millions, 4 KB each) to print the last N."""
    a, b = tournament(store, "a"), tournament(store, "b")
    assert store.last_matches(a, 3) == []
    for n in range(6):
        store.record_match(a, f"k{n}", f"k{n}", ["ada", "bob", "cy"], played(70 + n))
        store.record_match(b, f"k{n}", f"k{n}", ["ada", "bob", "cy"], played(80 + n))
    assert [m.seed for m in store.last_matches(a, 3)] == [73, 74, 75]
    assert store.last_matches(a, 3) == store.matches(a)[-3:]
    assert [m.seed for m in store.last_matches(b, 100)] == list(range(80, 86))


def test_keys_are_unique_per_tournament_not_per_store(store):
    a, b = tournament(store, "a"), tournament(store, "b")
    store.record_match(a, "t0-d0-r0", "s", ["ada", "bob", "cy"], played(31))
    store.record_match(b, "t0-d0-r0", "s", ["ada", "bob", "cy"], played(32))
    assert [m.seed for m in store.matches(a)] == [31]
    assert [m.seed for m in store.matches(b)] == [32]
    assert store.matches(b)[0].tournament == "b"


def test_finished_keys_and_matches_per_tournament_in_the_order_stored(store):
    a, b = tournament(store, "a"), tournament(store, "b")
    assert store.finished_keys(a) == set()
    assert store.matches(a) == []
    keys = ["t2-d0-r0", "t0-d1-r2", "t0-d0-r0", "t1-d0-r1"]   # not sorted on purpose
    for seed, key in enumerate(keys):
        store.record_match(a, key, key[:5], ["ada", "bob", "cy"], played(seed))
        store.record_match(b, f"b-{key}", key, ["cy", "bob", "ada"], played(100 + seed))

    assert store.finished_keys(a) == set(keys)
    assert store.finished_keys(b) == {f"b-{k}" for k in keys}
    assert [m.key for m in store.matches(a)] == keys
    assert [m.seed for m in store.matches(a)] == [0, 1, 2, 3]
    assert [m.sample for m in store.matches(a)] == [k[:5] for k in keys]
    assert all(m.tournament == "a" for m in store.matches(a))
    second = store.matches(a)[1].id          # a's matches since its second: b's interleave
    assert [m.key for m in store.matches(a, after=second)] == keys[2:]
    assert store.matches(a, after=store.matches(a)[-1].id) == []


def test_an_unknown_match_is_refused(store):
    t = tournament(store)
    mid = store.record_match(t, "k", "k", ["ada", "bob", "cy"], played(1))
    with pytest.raises(StoreError, match=str(mid + 1000)):
        store.match(mid + 1000)
    with pytest.raises(StoreError, match=str(mid + 1000)):
        store.events(mid + 1000)


def test_reopening_keeps_everything(backend, location):
    store = backend.open(location)
    t = tournament(store)
    result = played(41, seats=4)
    mid = store.record_match(t, "k", "s", list(NAMES[:4]), result)
    before = (store.tournaments(), store.tournament_bots(t), store.matches(t))
    store.close()

    store = backend.open(location)
    try:
        assert (store.tournaments(), store.tournament_bots(t), store.matches(t)) == before
        assert store.events(mid) == expected_events(result)
    finally:
        store.close()


@pytest.mark.parametrize("ranking, places", [
    ([[2], [0], [1]], [2, 3, 1]),
    ([[1, 3], [0], [2]], [3, 1, 4, 1]),       # a shared first place: the next is third
    ([[0], [1, 2, 3]], [1, 2, 2, 2]),
    ([[0, 1, 2]], [1, 1, 1]),                 # a draw: everyone first
])
def test_match_record_places_share_the_best_place_of_a_tie(ranking, places):
    record = MatchRecord(1, "cup", "k", "m", "k", list(NAMES[:len(places)]), 1, "modern", {},
                         Status.FINISHED, ranking, "x", [], [], 0.0, 0.0, 0)
    assert record.places() == places


# ------------------------------------------------------------------------ crash safety


CRASH_SCRIPT = r"""
import importlib.util, os, signal, sys
path, backend_name, location, n, mode = sys.argv[1:]
spec = importlib.util.spec_from_file_location("store_suite", path)
suite = sys.modules["store_suite"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
backend = suite.BACKENDS_BY_NAME[backend_name]
store = backend.open(location)
t = store.tournament("crash")
for i in range(int(n)):
    store.record_match(t, f"k{i}", f"s{i}", ["ada", "bob", "cy"], suite.played(i))
    print("recorded", i, flush=True)
if mode == "between-matches":
    print("dying between matches", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
backend.die_mid_write(store)
store.record_match(t, f"k{n}", f"s{n}", ["ada", "bob", "cy"], suite.played(int(n)))
print("survived", flush=True)
"""


@pytest.mark.parametrize("mode", ["between-matches", "mid-write"])
def test_kill_9_loses_at_most_the_match_in_flight(backend, location, mode):
    n = 5
    store = backend.open(location)
    tournament(store, "crash")
    store.close()

    proc = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, __file__, backend.name, location, str(n), mode],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:n] == [f"recorded {i}" for i in range(n)]
    if mode == "mid-write":
        # it died with the match row of the match in flight already written, uncommitted
        assert lines[n:] == [f"dying with {n + 1} match rows in the open transaction"]

    store = backend.open(location)
    try:
        t = store.tournament("crash")
        stored = store.matches(t)
        assert [m.key for m in stored] == [f"k{i}" for i in range(n)]
        assert store.finished_keys(t) == {f"k{i}" for i in range(n)}
        for i, m in enumerate(stored):
            assert m.seed == i
            assert store.events(m.id) == expected_events(played(i))
        # a resume plays the lost match again
        again = played(n)
        mid = store.record_match(t, f"k{n}", f"s{n}", ["ada", "bob", "cy"], again)
        assert store.events(mid) == expected_events(again)
    finally:
        store.close()


# ------------------------------------------------------------------------ SQLite specifics


def _pragma(path: Path, name: str):
    db = sqlite3.connect(path)
    try:
        return db.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        db.close()


def test_sqlite_a_new_file_is_migrated_to_the_schema_version_in_wal_mode(tmp_path):
    path = tmp_path / "new.db"
    SQLiteStore(path).close()
    assert SCHEMA_VERSION >= 1
    assert _pragma(path, "user_version") == SCHEMA_VERSION
    assert _pragma(path, "journal_mode") == "wal"
    # reopening an up-to-date file runs no migration again
    SQLiteStore(path).close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION


def test_sqlite_a_file_from_a_newer_arena_is_refused_naming_both_versions(tmp_path):
    path = tmp_path / "future.db"
    newer = SCHEMA_VERSION + 7
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={newer}")
    db.close()

    with pytest.raises(StoreError) as err:
        SQLiteStore(path)
    message = str(err.value)
    assert re.search(rf"\b{newer}\b", message), message
    assert re.search(rf"\b{SCHEMA_VERSION}\b", message), message
    assert _pragma(path, "user_version") == newer          # left as it was
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    db.close()


def test_sqlite_a_file_that_is_not_a_database_is_refused_with_a_store_error(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("these are notes, not a database\n" * 20)
    with pytest.raises(StoreError, match="notes.txt"):
        SQLiteStore(path)


def test_sqlite_a_folder_or_a_missing_folder_is_said_as_such(tmp_path, monkeypatch):
    """A folder given as the database was said to be a file of N names (hard links: a
    folder's count of its subfolders); a file in a folder that does not exist only
    "unable to open database file". Both are the database given, not one failing: exit 2
    (a RefusedError), as a bad $ONO99_DB_TIMEOUT is (it exited 1, as a failure)."""
    from arena.store.base import RefusedError, UnusableDatabaseError

    (tmp_path / "sub").mkdir()
    with pytest.raises(UnusableDatabaseError) as err:
        SQLiteStore(tmp_path)
    assert str(err.value) == (f"{tmp_path} is a folder, not a database file: give the path of "
                              "one (it is made if missing)")
    missing = tmp_path / "gone" / "arena.db"
    with pytest.raises(UnusableDatabaseError) as err:
        SQLiteStore(missing)
    assert str(err.value) == (f"cannot open database {missing}: unable to open database file "
                              f"(there is no folder {missing.parent})")
    monkeypatch.setenv("ONO99_DB_TIMEOUT", "soon")
    with pytest.raises(RefusedError, match=r"\$ONO99_DB_TIMEOUT must be a number of seconds"):
        SQLiteStore(tmp_path / "new.db")
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", "standings", "--db", tmp_path],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr == (
        f"arena standings: error: {tmp_path} is a folder, not a database file: give the path "
        "of one (it is made if missing)\n")


@pytest.mark.parametrize("durable, synchronous", [(False, 1), (True, 2)])   # NORMAL, FULL
def test_sqlite_durable_makes_every_commit_synchronous_full(tmp_path, durable, synchronous):
    store = open_store(str(tmp_path / "d.db"), durable=durable)
    try:
        assert store.db.execute("PRAGMA synchronous").fetchone()[0] == synchronous
    finally:
        store.close()


def test_sqlite_arenas_opening_a_new_file_at_once_migrate_it_once(tmp_path):
    """Two arenas that read the old version before either took the write lock."""
    path = tmp_path / "shared.db"
    busy = sqlite3.connect(path, isolation_level=None)
    busy.execute("PRAGMA journal_mode=WAL")
    busy.execute("BEGIN IMMEDIATE")        # a third process holds the write lock for now
    outcomes: list[object] = []

    def open_and_close():
        try:
            SQLiteStore(path).close()
            outcomes.append("ok")
        except Exception as exc:            # reported below, with its message
            outcomes.append(exc)

    threads = [threading.Thread(target=open_and_close) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)                          # both have read user_version 0 and wait for the lock
    busy.execute("ROLLBACK")
    busy.close()
    for thread in threads:
        thread.join(timeout=30)
    assert outcomes == ["ok", "ok"]
    assert _pragma(path, "user_version") == SCHEMA_VERSION


def test_sqlite_a_tournament_and_its_bots_are_stored_in_one_transaction(tmp_path):
    """A failed creation (a taken name) stores none of its new bot versions either."""
    path = tmp_path / "one.db"
    store = SQLiteStore(path)
    try:
        tournament(store, "cup", bots=("ada",))
        new = [BotVersion("zed", "/bots/zed", {"name": "zed"}, "z1")]
        with pytest.raises(StoreError, match="'cup'"):
            store.create_tournament("cup", {}, new)
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            assert [r[0] for r in db.execute("SELECT name FROM bots")] == ["ada"]
        record = store.create_tournament("cup-2", {}, new)
        assert [b.name for b in store.tournament_bots(record)] == ["zed"]
    finally:
        store.close()


# ------------------------------------------------------------------------ a server's own


def test_server_values_are_set_once(store):
    assert store.server_value("organizer_token_hash") is None
    assert store.set_server_value("organizer_token_hash", "abc") is True
    assert store.set_server_value("organizer_token_hash", "xyz") is False   # kept: set once
    assert store.server_value("organizer_token_hash") == "abc"


def test_registered_bots_get_versions_and_keep_only_token_hashes(store):
    a1 = store.register_bot("alpha", "remote", token_hash="h1")
    b1 = store.register_bot("beta", "hosted", folder="/srv/beta/1")
    a2 = store.register_bot("alpha", "hosted", folder="/srv/alpha/2", status="validating")
    assert (a1.version, b1.version, a2.version) == (1, 1, 2)
    assert (a1.display, a2.display) == ("alpha", "alpha v2")
    assert [b.display for b in store.registered_bots()] == ["alpha", "beta", "alpha v2"]
    with pytest.raises(StoreError, match="cannot register bot 'gamma'"):
        store.register_bot("gamma", "remote", token_hash="h1")        # a token is one bot's
    done = store.update_registered_bot(a2.id, status="active", report={"passed": 13})
    assert (done.status, done.report) == ("active", {"passed": 13})
    store.update_registered_bot(a1.id, status="removed")
    assert [b.display for b in store.registered_bots()] == ["beta", "alpha v2"]
    assert len(store.registered_bots(include_removed=True)) == 3
    with pytest.raises(StoreError, match="no registered bot 999"):
        store.update_registered_bot(999, status="active")


def test_sqlite_a_version_1_file_is_migrated_keeping_its_tournaments(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(migrations("sqlite")[0].sql)
    db.execute("INSERT INTO tournaments (name, created_at, settings) VALUES ('cup', 0, '{}')")
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        assert [t.name for t in store.tournaments()] == ["cup"]
        assert store.register_bot("alpha", "remote", token_hash="h").version == 1
    finally:
        store.close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION == 6


def test_sqlite_migration_statements_end_only_at_a_semicolon_that_ends_a_statement():
    from arena.store.sqlite import statements

    sql = ("-- a comment; with a semicolon\n"
           "CREATE TABLE a (x TEXT DEFAULT ';', y TEXT); /* ; */\n"
           "CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE a SET y = 'z;'; SELECT 1; END;\n"
           "CREATE INDEX a_x ON a (x);  -- trailing comment\n")
    found = statements(sql)
    assert len(found) == 3 and found[0].endswith("CREATE TABLE a (x TEXT DEFAULT ';', y TEXT);")
    db = sqlite3.connect(":memory:")
    for statement in found:                  # each one whole: sqlite3 runs one at a time
        db.execute(statement)
    db.execute("INSERT INTO a (x) VALUES ('q')")
    assert db.execute("SELECT y FROM a").fetchone() == ("z;",)
    with pytest.raises(StoreError, match="incomplete statement"):
        statements("CREATE TABLE b (x INTEGER); CREATE TABLE c (")


def _open_at(path: str, start: float, results) -> None:
    """A process that opens (and creates, migrates) ``path`` at the moment ``start``."""
    while time.time() < start:
        pass
    try:
        SQLiteStore(path).close()
        results.put("ok")
    except Exception as exc:   # reported by the test, with its message
        results.put(f"{exc.__class__.__name__}: {exc}")


def test_sqlite_many_processes_opening_one_new_file_at_once_all_succeed(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    start = time.time() + 2.0   # after every process has started
    procs = [ctx.Process(target=_open_at, args=(str(tmp_path / "new.db"), start, results))
             for _ in range(12)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=10)
    assert outcomes == ["ok"] * 12
    assert _pragma(tmp_path / "new.db", "user_version") == SCHEMA_VERSION


# ------------------------------------------------------------------------ every backend: the location


def test_reopen_is_an_independent_connection_to_the_same_store(store):
    t = tournament(store)
    other = store.reopen()
    try:
        assert other is not store and other.url == store.url
        assert other.tournament("cup") == t
        # written through one, read through the other, from another thread
        done: list[int] = []
        writer = threading.Thread(target=lambda: done.append(
            other.record_match(t, "k", "s", ["ada", "bob", "cy"], played(51))))
        writer.start()
        writer.join(timeout=30)
        assert [m.id for m in store.matches(t)] == done
    finally:
        other.close()
    assert store.finished_keys(t) == {"k"}     # closing the other leaves this one open


def test_url_is_the_location_as_given_and_describe_shows_it(store, location):
    assert store.url == location
    assert store.describe() == location        # no password here: nothing to hide


# ------------------------------------------------------------------------ PostgreSQL specifics


def _pg(url: str, sql: str, *params):
    """One statement on its own connection: every row."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(sql, params or None)
        return cur.fetchall() if cur.description else []


def test_postgresql_an_empty_database_is_migrated_once_recording_each_version(postgres_url):
    from arena.store.postgres import SCHEMA_VERSION, VERSION_TABLE, PostgresStore

    PostgresStore(postgres_url).close()
    applied = _pg(postgres_url, f"SELECT version, name FROM {VERSION_TABLE} ORDER BY version")
    assert applied == [(m.version, m.name) for m in migrations("postgresql")]
    assert len(applied) == SCHEMA_VERSION == schema_version_of("sqlite")
    tables = {r[0] for r in _pg(postgres_url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert tables == {VERSION_TABLE, "tournaments", "bots", "tournament_bots", "matches",
                      "match_events", "server", "registered_bots", "tournament_states"}
    PostgresStore(postgres_url).close()        # up to date: nothing runs again
    assert len(_pg(postgres_url, f"SELECT version FROM {VERSION_TABLE}")) == SCHEMA_VERSION


def schema_version_of(backend: str) -> int:
    from arena.store.migrations import schema_version

    return schema_version(backend)


def test_postgresql_openers_of_a_new_database_at_once_all_succeed(postgres_url):
    from arena.store.postgres import SCHEMA_VERSION, VERSION_TABLE, PostgresStore

    barrier = threading.Barrier(6)
    outcomes: list[object] = []

    def open_and_close():
        barrier.wait(timeout=30)
        try:
            PostgresStore(postgres_url).close()
            outcomes.append("ok")
        except StoreError as exc:             # reported below, with its message
            outcomes.append(exc)

    threads = [threading.Thread(target=open_and_close) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes == ["ok"] * 6
    assert _pg(postgres_url, f"SELECT version FROM {VERSION_TABLE} ORDER BY version") == [
        (v,) for v in range(1, SCHEMA_VERSION + 1)]


def test_postgresql_a_database_from_a_newer_arena_is_refused_naming_both_versions(postgres_url):
    from arena.store.postgres import SCHEMA_VERSION, VERSION_TABLE, PostgresStore

    PostgresStore(postgres_url).close()
    newer = SCHEMA_VERSION + 7
    _pg(postgres_url, f"INSERT INTO {VERSION_TABLE} VALUES (%s, 'future', 0)", newer)
    with pytest.raises(StoreError) as err:
        PostgresStore(postgres_url)
    message = str(err.value)
    assert re.search(rf"\b{newer}\b", message) and re.search(rf"\b{SCHEMA_VERSION}\b", message), message
    assert postgres_url in message and "upgrade the arena" in message
    assert _pg(postgres_url, f"SELECT max(version) FROM {VERSION_TABLE}") == [(newer,)]   # untouched


def test_postgresql_seeds_of_every_64_bit_value_are_stored_exactly(postgres_url):
    import dataclasses

    store = open_store(postgres_url)
    try:
        t = tournament(store)
        for i, seed in enumerate((2**64 - 1, 2**63, 2**63 - 1, 0, -(2**63))):
            result = played(60 + i)
            result.spec = dataclasses.replace(result.spec, seed=seed)
            mid = store.record_match(t, f"k{i}", "s", ["ada", "bob", "cy"], result)
            assert store.match(mid).seed == seed and type(store.match(mid).seed) is int
    finally:
        store.close()


@pytest.mark.parametrize("durable, setting", [(False, "on"), (True, "on")])
def test_postgresql_durable_sets_synchronous_commit_on(postgres_url, durable, setting):
    # the server's default is on; durable insists on it for the session whatever the default
    _pg(postgres_url, f"ALTER DATABASE {postgres_url.rsplit('/', 1)[1]} SET synchronous_commit = off")
    store = open_store(postgres_url, durable=durable)
    try:
        shown = store.db.execute("SHOW synchronous_commit").fetchone()[0]
        assert shown == ("on" if durable else "off")
    finally:
        store.close()


def test_postgresql_a_password_is_never_shown(postgres_url):
    # trust authentication: the server does not ask for the password, libpq still holds it
    url = postgres_url.replace("postgresql://arena@", "postgresql://arena:hunter2@")
    store = open_store(url)
    try:
        assert store.url == url
        assert store.describe() == url.replace("hunter2", "***")
        tournament(store)
        with pytest.raises(StoreError) as err:
            tournament(store)
        assert "arena:***@" in str(err.value) and "hunter2" not in str(err.value)
    finally:
        store.close()


def test_postgresql_an_unreachable_server_is_a_clear_error_without_the_password():
    from support.postgres import free_port

    port = free_port()                          # nothing listens there
    with pytest.raises(StoreError) as err:
        open_store(f"postgresql://arena:hunter2@127.0.0.1:{port}/arena")
    message = str(err.value)
    assert message.startswith(f"cannot connect to postgresql://arena:***@127.0.0.1:{port}/arena: "), message
    assert "refused" in message.lower(), message
    assert "hunter2" not in message


def test_postgresql_a_database_or_user_not_made_yet_is_told_what_to_do(postgres_url):
    """libpq says what failed ('database "x" does not exist'), not what to do about it:
    an organiser's first run met these (the review as a scale-out operator)."""
    base = postgres_url.rsplit("/", 1)[0]
    with pytest.raises(StoreError) as err:
        open_store(f"{base}/no_such_db_here")
    assert 'database "no_such_db_here" does not exist' in str(err.value), err.value
    assert "(make it first (createdb -O USER DB, or CREATE DATABASE" in str(err.value), err.value
    nobody = postgres_url.replace("postgresql://arena@", "postgresql://no_such_role@")
    with pytest.raises(StoreError) as err:
        open_store(nobody)
    assert "make the user first (createuser USER)" in str(err.value), err.value


@pytest.mark.parametrize("url", [
    "postgresql://arena:hunter2@127.0.0.1:notaport/arena",
    "postgresql://arena:hunter2@127.0.0.1:5432/arena?no_such_option=1",
    "postgres://arena@127.0.0.1:5432/arena?password=hunter2&sslmode=bogus",
])
def test_postgresql_a_bad_url_is_a_clear_error_without_the_password(url):
    with pytest.raises(StoreError) as err:
        open_store(url)
    message = str(err.value)
    assert message.startswith("cannot connect to postgres"), message
    assert "***" in message and "hunter2" not in message, message


WRITER_SCRIPT = r"""
import importlib.util, os, sys, time
path, location, writer, n, go, mid = sys.argv[1:]
spec = importlib.util.spec_from_file_location("store_suite", path)
suite = sys.modules["store_suite"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
from arena.store import StoreError, open_store
store = open_store(location)
t = store.tournament("busy")
results = [suite.played(int(writer) * 100 + i) for i in range(int(n))]

def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.002)

print("ready", flush=True)
wait_for(go)
for i, result in enumerate(results):
    if i == int(n) // 2:
        print("half", flush=True)     # the test reads now, then lets every writer go on at once
        wait_for(mid)
        try:                           # every writer tries one key at once: one stores it
            store.record_match(t, "shared", "shared", ["ada", "bob", "cy"], result)
            print("stored shared", flush=True)
        except StoreError as exc:
            print("refused shared:", exc, flush=True)
    store.record_match(t, f"w{writer}-{i}", f"w{writer}", ["ada", "bob", "cy"], result)
store.close()
print("done", flush=True)
"""


def test_postgresql_writer_processes_at_once_store_every_match_once_while_a_reader_reads(
        postgres_url, tmp_path):
    writers, n = 4, 12
    half = n // 2
    store = open_store(postgres_url)
    t = tournament(store, "busy")
    go, mid = tmp_path / "go", tmp_path / "mid"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, __file__, postgres_url, str(w),
                               str(n), str(go), str(mid)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
             for w in range(writers)]
    seen: dict[str, int] = {}

    def read() -> list[MatchRecord]:
        """One reader's view: no key twice, nothing read before gone, events with every match."""
        stored = store.matches(t)
        keys = [m.key for m in stored]
        assert len(keys) == len(set(keys)), "a key read twice"
        assert set(seen) <= set(keys), "a match read before is gone"
        for m in stored:
            if m.key not in seen:
                seen[m.key] = len(store.events(m.id))
        return stored

    try:
        for proc in procs:
            assert proc.stdout.readline() == "ready\n"
        go.touch()                               # all four write at once
        for proc in procs:
            assert proc.stdout.readline() == "half\n"
        # every writer has stored half and waits: what a reader sees mid-tournament
        assert sorted(m.key for m in read()) == sorted(
            f"w{w}-{i}" for w in range(writers) for i in range(half))
        mid.touch()                              # all four race for the shared key, then go on
        while any(p.poll() is None for p in procs):
            read()
        outputs = [p.communicate(timeout=60)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert [p.returncode for p in procs] == [0] * writers, outputs
    assert sum(o.count("stored shared") for o in outputs) == 1, outputs
    assert sum(o.count("refused shared: match 'shared' of tournament 'busy' is already stored")
               for o in outputs) == writers - 1, outputs
    expected = {f"w{w}-{i}" for w in range(writers) for i in range(n)} | {"shared"}
    final = read()
    assert sorted(m.key for m in final) == sorted(expected)
    assert store.finished_keys(t) == expected
    for m in final:
        if m.key != "shared":
            w, i = map(int, m.key[1:].split("-"))
            assert m.seed == w * 100 + i
            assert store.events(m.id) == expected_events(played(m.seed))
    assert all(count > 0 for count in seen.values())
    store.close()


@pytest.mark.parametrize("location", ["", ":memory:", "file:x?mode=memory"])
def test_a_database_of_no_file_is_refused(location):
    """`arena tournament --db ''` played its matches into SQLite's temporary database,
    which the store's next connection sees empty: every result was lost, and the resume
    hint could never work. Such a location is refused before anything is played."""
    with pytest.raises(StoreError, match="is no database file: give the path of one"):
        open_store(location)


@pytest.mark.parametrize("match_id", [2**63, -2**63 - 1, 10**27])
def test_a_match_number_past_a_row_id_is_no_match(store, match_id):
    """`arena show 999999999999999999999999999` was an OverflowError traceback (SQLite
    binds 64-bit integers at most): it is no match, as any other number no match has."""
    from arena.store.base import NotFoundError
    with pytest.raises(NotFoundError, match=f"no match {match_id} in "):
        store.match(match_id)


def test_a_sqlite_database_of_something_else_is_refused_and_left_as_it_was(tmp_path):
    """`arena standings --db notes.db` wrote the arena's tables (and WAL mode) into a
    database of something else; one with its own `tournaments` table failed with "table
    tournaments already exists". Now it is refused before anything is written."""
    path = tmp_path / "notes.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE tournaments (x)")
    db.execute("CREATE TABLE notes (y)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"notes.db is a SQLite database of something else "
                                         r"\(tables: notes, tournaments\), not an arena database"):
        open_store(str(path))
    assert path.read_bytes() == before
    assert not (tmp_path / "notes.db-wal").exists()


# ------------------------------------------------------------------------ PostgreSQL: a lost server


def _end_session(url: str, store) -> None:
    """End ``store``'s session from another, as an administrator or a failover does."""
    _pg(url, "SELECT pg_terminate_backend(%s)", store.db.info.backend_pid)


@contextlib.contextmanager
def _holder_stopped(url: str, which: str, params: tuple, seconds: float) -> Iterator[None]:
    """The server process holding a granted advisory lock (``which``: a condition on
    pg_locks' columns) stopped (SIGSTOP) for ``seconds`` from now; the block ends once it
    goes on, whatever happened in it."""
    [(pid,)] = _pg(url, "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                   f"AND {which}", *params)
    os.kill(pid, signal.SIGSTOP)
    resume = threading.Timer(seconds, os.kill, (pid, signal.SIGCONT))
    resume.start()
    try:
        yield
    finally:
        resume.join()


def test_postgresql_a_released_claim_is_free_at_once_though_its_session_ends_late(postgres_url):
    """A claim was let go by ending its session. The server drops a session's locks as its
    process exits, after the client has moved on: a claim made just after a release was
    refused on a busy machine (the suite at 4 workers on 2 cores). Here the claim's server
    process is stopped as it is released, and goes on 0.5 s later."""
    from arena.store.postgres import PLAY_LOCK_CLASS, PostgresStore

    store, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    cup = store.create_tournament("cup", {"games": 1}, [])
    held = store.claim_tournament(cup)
    try:
        with _holder_stopped(postgres_url, "classid = %s AND objid = %s",
                             (PLAY_LOCK_CLASS, cup.id), 0.5):
            held.release()
            second.claim_tournament(cup).release()  # before: "being played by another process"
    finally:
        store.close()
        second.close()


def _claimable_soon(store) -> None:
    """Until ``store`` can claim its database (within 10 s): a session ends as its stopped
    server process goes on, and its lock with it."""
    from arena.store import RefusedError

    deadline = time.monotonic() + 10
    while True:
        try:
            store.claim().release()
            return
        except RefusedError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_postgresql_a_claim_let_go_waits_for_a_server_that_does_not_answer_a_moment_only(
        postgres_url, monkeypatch):
    """The unlock waited for the server's answer as long as TCP would: a server stopped, or
    behind a network cut, held release() (on an arena serve's event loop, at a
    tournament's end and at its stop) for minutes. It waits UNLOCK_WAIT_S now, then ends
    the session, whose lock goes with it as the server goes on."""
    from arena.store import postgres
    from arena.store.postgres import SERVE_LOCK, PostgresStore

    monkeypatch.setattr(postgres, "UNLOCK_WAIT_S", 0.5)
    store, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    held = store.claim()
    with _holder_stopped(postgres_url, "objid = %s", (SERVE_LOCK % 2**32,), 5):
        began = time.monotonic()
        held.release()
        assert time.monotonic() - began < 2      # 5 s before
    _claimable_soon(second)
    store.close()
    second.close()


def test_postgresql_a_look_at_a_claim_waits_for_a_server_that_does_not_answer_a_while_only(
        postgres_url, monkeypatch):
    """A look at a claim (Claim.held, in a thread, every 2 s) asked its session whether it
    answers and waited as long as TCP would, holding the claim's lock: a release (on an
    arena serve's event loop) waited behind it, here until the stopped server process
    went on (5 s), behind a network cut for a quarter of an hour. The look waits
    KEEP_WAIT_S now: no answer is a session lost, whose lock another session cannot take
    while it is held, so the claim is lost (the caller stops playing), and the release
    goes at once."""
    from arena.store import postgres
    from arena.store.postgres import SERVE_LOCK, PostgresStore

    monkeypatch.setattr(postgres, "KEEP_WAIT_S", 1.0)
    monkeypatch.setattr(postgres, "UNLOCK_WAIT_S", 0.5)
    store, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    held = store.claim()
    looked = []
    with _holder_stopped(postgres_url, "objid = %s", (SERVE_LOCK % 2**32,), 5):
        look = threading.Thread(target=lambda: looked.append(held.held()))
        look.start()
        time.sleep(0.2)                          # the look waits on the stopped session
        began = time.monotonic()
        held.release()
        assert time.monotonic() - began < 3      # 4.8 s before
        look.join(5)
        assert looked == [False]                 # its lock still held by the stopped session
    _claimable_soon(second)
    store.close()
    second.close()


def test_postgresql_a_lost_connection_is_made_again_by_the_next_call(postgres_url):
    from arena.store.postgres import PostgresStore

    store = PostgresStore(postgres_url, durable=True)
    t = store.create_tournament("cup", {"games": 1}, [])
    _end_session(postgres_url, store)
    assert store.tournament("cup").id == t.id          # before: "the connection is closed"
    _end_session(postgres_url, store)
    store.record_match(t, "k0", "s0", list(NAMES[:3]), played(0))
    assert store.finished_keys(t) == {"k0"}
    assert store.db.execute("SHOW synchronous_commit").fetchone() == ("on",)  # kept
    store.close()


def test_postgresql_a_write_whose_commit_landed_before_the_connection_went_is_stored_once(
        postgres_url):
    """The commit reaches the server, and the session ends before its answer comes back:
    made again, the write finds its own row instead of storing it twice or failing as a
    duplicate."""
    from contextlib import contextmanager

    from arena.store.postgres import PostgresStore

    store = PostgresStore(postgres_url)
    t = store.create_tournament("cup", {"games": 1}, [])
    real = store.db

    class CutAfterCommit:
        @contextmanager
        def transaction(self):
            with real.transaction():
                yield
            real.execute("SELECT pg_terminate_backend(pg_backend_pid())")   # ends itself

        def __getattr__(self, name):
            return getattr(real, name)

    store.db = CutAfterCommit()
    match_id = store.record_match(t, "k0", "s0", list(NAMES[:3]), played(0))
    assert store.db is not real and real.closed    # connected again
    assert _pg(postgres_url, "SELECT id, key FROM matches") == [(match_id, "k0")]
    store.close()


def test_postgresql_the_writer_waits_for_a_restarted_server_and_loses_nothing(
        postgres_server, postgres_url, caplog):
    import asyncio

    from arena.store.postgres import PostgresStore
    from arena.store.writer import StoreWriter

    store = PostgresStore(postgres_url)
    t = store.create_tournament("cup", {"games": 1}, [])

    async def go() -> float:
        with StoreWriter(store) as writer:
            await writer.record_match(t, "k0", "s0", list(NAMES[:3]), played(0))
            postgres_server.stop("fast")           # every session ended; down for 3 s
            back = threading.Timer(3.0, postgres_server.start, args=(postgres_server.port,))
            back.start()
            try:
                # a call in the event loop tries once, at once, and says so
                t0 = time.monotonic()
                with pytest.raises(StoreError, match="connecting again failed"):
                    store.finished_keys(t)
                assert time.monotonic() - t0 < 5
                t0 = time.monotonic()
                await writer.record_match(t, "k1", "s1", list(NAMES[:3]), played(1))
                return time.monotonic() - t0
            finally:
                back.join()

    waited = asyncio.run(go())
    assert waited > 2.0                            # it waited for the server
    assert store.finished_keys(t) == {"k0", "k1"}  # the event loop's connection is back too
    # and said so (an outage of most of a minute went by without a word)
    again = [r.getMessage() for r in caplog.records if "connected again after" in r.getMessage()]
    assert again and all(m.startswith(f"the connection to {store.describe()} was lost (")
                         for m in again), again
    assert _pg(postgres_url, "SELECT count(*) FROM matches") == [(2,)]
    store.close()


def test_postgresql_the_writer_waits_for_a_server_away_at_its_first_write(
        postgres_server, postgres_url):
    """The writer's connection is made at its first write: a server restarted between a
    tournament's start and its first result stopped the run ("cannot connect ...:
    Connection refused"), where one restarted later was waited for. Now its first
    connection waits as its later ones do."""
    import asyncio

    from arena.store.postgres import PostgresStore
    from arena.store.writer import StoreWriter

    store = PostgresStore(postgres_url)
    t = store.create_tournament("cup", {"games": 1}, [])

    async def go() -> None:
        with StoreWriter(store) as writer:
            postgres_server.stop("fast")           # before the writer has connected
            back = threading.Timer(2.0, postgres_server.start, args=(postgres_server.port,))
            back.start()
            try:
                await writer.record_match(t, "k0", "s0", list(NAMES[:3]), played(0))
            finally:
                back.join()

    asyncio.run(go())
    assert store.finished_keys(t) == {"k0"}
    store.close()


def test_postgresql_the_writer_rides_out_a_connection_lost_again_as_it_writes_again(
        postgres_url):
    """A write whose connection went was made again once: were the new connection lost
    too (a failover that flaps, a DBA ending the arena's sessions twice), the write
    failed and the tournament stopped, well inside the writer's 60 s. (Found ending
    every session of the database 5-80 ms apart: a run of 1,200 matches stopped after
    28 reconnections.) Now it connects again as long as its window lasts. A trigger
    ends the writing session itself, at its first two tries, as the server would."""
    from arena.store.postgres import PostgresStore

    store = PostgresStore(postgres_url)
    store.reconnect_window = 30.0                  # as the results' writer has it
    t = store.create_tournament("cup", {"games": 1}, [])
    _pg(postgres_url, """
        CREATE SEQUENCE cuts;
        CREATE FUNCTION cut() RETURNS trigger AS $$ BEGIN
            IF nextval('cuts') <= 2 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
            RETURN NEW;
        END $$ LANGUAGE plpgsql;
        CREATE TRIGGER cut BEFORE INSERT ON match_events FOR EACH ROW EXECUTE FUNCTION cut()""")
    match_id = store.record_match(t, "k0", "s0", list(NAMES[:3]), played(0))
    assert _pg(postgres_url, "SELECT last_value FROM cuts") == [(3,)]   # cut twice, then stored
    assert _pg(postgres_url, "SELECT id, key FROM matches") == [(match_id, "k0")]
    assert _pg(postgres_url, "SELECT count(*) FROM match_events") == [(1,)]
    # a store with no window (a call in the event loop) still tries once more, no longer
    _pg(postgres_url, "ALTER SEQUENCE cuts RESTART")
    store.reconnect_window = 0.0
    with pytest.raises(StoreError, match="terminating connection due to administrator command"):
        store.record_match(t, "k1", "s1", list(NAMES[:3]), played(1))
    assert store.finished_keys(t) == {"k0"}
    store.close()


def test_postgresql_calls_behind_one_that_gave_up_try_once(postgres_server,
                                                                   postgres_url):
    """Each call that met a server gone away waited a window of its own, so the writes
    queued behind one that gave up held a run for another 60 s each (the twenty-seventh
    review: a tournament stopped 120 s after its database, where it says 60); they try
    once. A loss a window's time after a call gave up is a new one, ridden out as the
    first (the twenty-ninth review's: it got no window at all)."""
    from arena.store.postgres import PostgresStore

    store = PostgresStore(postgres_url)
    # a window the server's start (pg_ctl, a second after its stop, below) fits in on a
    # loaded machine: 3 s left it 2 s (review 38, reasoned: it never failed here)
    store.reconnect_window = 5.0
    t = store.create_tournament("cup", {"games": 1}, [])
    postgres_server.stop("fast")
    try:
        took = []
        for i, said in enumerate(["for 5 s", "once (a call before it had tried for its "
                                  "window)"]):
            t0 = time.monotonic()
            with pytest.raises(StoreError, match=re.escape(f"connecting again {said} failed")):
                store.record_match(t, f"k{i}", f"s{i}", list(NAMES[:3]), played(i))
            took.append(time.monotonic() - t0)
    finally:
        postgres_server.start(postgres_server.port)
    assert 2.5 < took[0] < 10 and took[1] < 1, took
    time.sleep(5.5)                                 # the server back, the store idle
    postgres_server.stop("fast")                    # a new loss, of about a second
    failed = []

    def start_again() -> None:
        try:
            postgres_server.start(postgres_server.port)
        except BaseException as exc:     # said by the test, not lost with its thread
            failed.append(exc)
    back = threading.Timer(1.0, start_again)
    back.start()
    try:
        store.record_match(t, "k2", "s2", list(NAMES[:3]), played(2))
    finally:
        back.join()
        assert not failed, failed
    store.record_match(t, "k3", "s3", list(NAMES[:3]), played(3))
    assert store.finished_keys(t) == {"k2", "k3"}
    store.close()


def test_sqlite_a_full_disk_is_a_store_error_and_the_store_goes_on(tmp_path):
    """SQLite rolls a transaction back by itself when the disk is full; the store's own
    ROLLBACK then failed ("no transaction is active") and a raw sqlite3 error reached
    arena tournament as a traceback. A capped page count makes SQLite's "full" error as a
    full disk does."""
    store = open_store(str(tmp_path / "arena.db"))
    t = store.create_tournament("cup", {"games": 1}, [])
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 2}")
    stored = []
    with pytest.raises(StoreError) as err:
        for i in range(50):
            store.record_match(t, f"k{i}", f"s{i}", list(NAMES[:3]), played(i))
            stored.append(f"k{i}")
    assert str(err.value) == f"cannot store a match in {tmp_path / 'arena.db'}: database or disk is full"
    assert not store.db.in_transaction
    assert store.finished_keys(t) == set(stored)          # what was stored is whole
    store.db.execute("PRAGMA max_page_count = 1000000")   # room again: the store goes on
    store.record_match(t, "again", "s", list(NAMES[:3]), played(99))
    assert store.finished_keys(t) == {*stored, "again"}
    store.close()


def _on_read_only_fs(folder: Path, *command: str) -> subprocess.CompletedProcess:
    """``arena COMMAND`` with ``folder`` mounted read-only (a bind mount made by bwrap,
    as a published results volume or a read-only container mount is)."""
    return subprocess.run(["bwrap", "--dev-bind", "/", "/", "--ro-bind", folder, folder,
                           sys.executable, "-m", "arena.cli.main", *command],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_sqlite_reading_commands_open_a_database_on_a_read_only_file_system(tmp_path):
    """SQLite cannot make a WAL database's shared-memory file on a read-only file system,
    so `arena standings` said "unable to open database file". Reading commands open it
    as it is; a -wal beside it (changes not in the file: a writer elsewhere) or an older
    schema (no migration can run there) is refused, saying why."""
    from support.requirements import missing   # here: child processes load this module

    if shutil.which("bwrap") is None:
        missing("bubblewrap (Debian's bubblewrap package) mounts the folder read-only")
    folder = tmp_path / "published"
    folder.mkdir()
    db = folder / "arena.db"
    store = SQLiteStore(db)
    t = tournament(store)
    store.record_match(t, "k1", "s1", ["ada", "bob", "cy"], played(1))
    store.close()
    assert not Path(f"{db}-wal").exists()
    for command, shows in [("standings", "ada"), ("matches", "k1"), ("show", "1")]:
        proc = _on_read_only_fs(folder, command, *(["1"] if command == "show" else []),
                                "--db", str(db))
        assert proc.returncode == 0, proc.stderr
        assert shows in proc.stdout and not proc.stderr
    proc = _on_read_only_fs(folder, "replay", "1", "--db", str(db))
    assert proc.returncode == 0 and "bob is eliminated" in proc.stdout, proc.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["arena.db"]   # nothing written

    Path(f"{db}-wal").write_bytes(b"")
    proc = _on_read_only_fs(folder, "standings", "--db", str(db))
    assert proc.returncode == 2
    assert "on a read-only file system, beside a -wal file of changes not yet in it" \
        in proc.stderr
    Path(f"{db}-wal").unlink()

    old = sqlite3.connect(db)
    old.execute("PRAGMA user_version=2")
    old.commit()
    old.close()
    proc = _on_read_only_fs(folder, "standings", "--db", str(db))
    assert proc.returncode == 2
    assert (f"it was written by an older arena (schema 2, now {SCHEMA_VERSION}), and is on a "
            "read-only file system") in proc.stderr


def test_a_server_on_a_read_only_file_system_says_so(tmp_path):
    """`arena serve` (or `arena tournament`) on a database in a read-only folder said only
    SQLite's "unable to open database file": the operator looked for a missing file."""
    from support.requirements import missing   # here: child processes load this module

    if shutil.which("bwrap") is None:
        missing("bubblewrap (Debian's bubblewrap package) mounts the folder read-only")
    folder = tmp_path / "published"
    folder.mkdir()
    db = folder / "arena.db"
    SQLiteStore(db).close()
    (folder / "arena.db.d").mkdir()
    proc = _on_read_only_fs(folder, "serve", "--db", str(db), "--listen", "127.0.0.1:0")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == (
        f"arena serve: error: cannot open database {db}: unable to open database file "
        f"({folder} is on a read-only file system: SQLite writes the file, and its -wal and "
        "-shm beside it)")


def test_tables_off_a_terminal_are_whole(tmp_path):
    """Piped (`arena matches | grep`), rich took 80 columns: names and endings were cut
    ('last_stan…') or folded onto lines of their own, and a script lost them. Off a
    terminal, tables are as wide as what they hold; $COLUMNS still rules where set."""
    db = tmp_path / "arena.db"
    store = SQLiteStore(db)
    long = [f"{n}-{'x' * 36}" for n in ("ada", "bob", "cy")]
    t = store.create_tournament("cup", {"games": 3, "table_size": 3, "seed": 7},
                                [bot(store, b) for b in long])
    result = played(3)
    store.record_match(t, "t0-d0-r0", "t0-d0", long, result)
    store.close()
    run = [sys.executable, "-m", "arena.cli.main", "matches", "--db", str(db)]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    [row] = [line for line in proc.stdout.splitlines() if "t0-d0-r0" in line]
    assert all(name in row for name in long) and result.termination in row, proc.stdout
    narrow = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**env, "COLUMNS": "60"})
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60
