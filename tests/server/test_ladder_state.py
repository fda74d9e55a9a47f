"""A ladder's snapshot: a server takes its ladder up from the last one and the matches
stored since, and that is the ladder it would have read from every stored match."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import zlib

import pytest

from arena.referee.house import FirstLegal, Forcer, HouseSession
from arena.referee.lobby import Lobby
from arena.referee.runner import MatchRunner
from arena.bots.sandbox import SandboxConfig
from arena.server import ladder as ladder_module
from arena.server.boards import Boards
from arena.server.ladder import Ladder
from arena.server.ladder_state import FORMAT, LadderState, Snapshot
from arena.server.registry import Registry
from arena.store import rows as rows_module
from arena.store.sqlite import SQLiteStore
from arena.watch.hub import SpectatorHub
from tests.support.matches import spec, store_ladder

BOTS = [f"b{i}" for i in range(6)]


def _ladder(store: SQLiteStore, tmp_path) -> Ladder:
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    return Ladder(store, registry, None, hub=SpectatorHub())


def _taken_up(db, tmp_path) -> tuple[Ladder, dict]:
    """A new server's ladder on ``db``, as it takes up its stored matches; and what it
    made of them."""
    store = SQLiteStore(db)
    try:
        ladder = _ladder(store, tmp_path)
        log_ = ladder._history(BOTS)
    finally:
        store.close()
    s = ladder.state
    return ladder, {
        "through": s.through, "stored": s.stored, "count": ladder.count,
        "unused": ladder.unused, "elo": s.elo.ratings, "games": dict(s.games),
        "meetings": dict(s.meetings), "faults": {b: list(f) for b, f in s.faults.items()},
        "benched": s.benched, "results": log_.results.to_state(),
        "log elo": log_.elo.ratings, "field": sorted(log_.bots)}


def _read(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "the ladder takes up" in r.getMessage()]


def _taken_up_again(db, tmp_path, caplog) -> tuple[dict, list[str]]:
    """What a new server's ladder on ``db`` makes of its stored matches (as
    :func:`_taken_up`), and the warnings it logs as it takes them up."""
    caplog.clear()
    caplog.set_level(logging.INFO, logger="arena.server")
    _, again = _taken_up(db, tmp_path)
    return again, [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


async def _played(seated: list[str], seed: int):
    """A match of house seats (the first legal card; the forcing card)."""
    return await MatchRunner(spec(seated, seed=seed), [HouseSession(FirstLegal()),
                                                        HouseSession(Forcer())]).run()


def _playing(db, tmp_path, body) -> None:
    """``await body(ladder)`` on a ladder taken up from ``db``, then its snapshots saved
    and its writer closed."""
    store = SQLiteStore(db)

    async def scenario() -> None:
        ladder = _ladder(store, tmp_path)
        ladder.hub.follow(ladder._history(BOTS))
        await body(ladder)
        await asyncio.gather(*ladder._saving)
        ladder.writer.close()

    try:
        asyncio.run(scenario())
    finally:
        store.close()


def _board(db) -> tuple[int, list[dict]]:
    """The organiser's standings of the ladder in ``db`` (a server's Boards): over how
    many matches, and each line."""
    store = SQLiteStore(db)

    async def made():
        boards = Boards(store)
        try:
            return await boards.board("ladder")
        finally:
            boards.close()

    try:
        _, board, matches = asyncio.run(made())
    finally:
        store.close()
    return matches, [line.to_dict() for line in board.lines]


def _read_every_match(db, tmp_path) -> dict:
    """What a new server's ladder makes of ``db`` with its snapshot taken away."""
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM tournament_states")
    return _taken_up(db, tmp_path)[1]


def test_a_ladder_taken_up_from_its_snapshot_is_the_one_read_from_every_match(tmp_path, caplog):
    """It read every stored match at every start (a minute for each million; a ladder
    that plays flat out stores millions a day). Now it saves a snapshot as it starts (and
    every few thousand matches), and the next start reads only the matches stored since:
    to the last bit what a read of every match gives. Proved by taking the matches the
    snapshot counts out of the database: the ladder and its standings are the same."""
    caplog.set_level(logging.INFO, logger="arena.server")
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=60)
    store_ladder(db, bots=6, matches=20, first=70)    # L61 to L69 not stored (yet)
    first, _ = _taken_up(db, tmp_path)                # no snapshot: all 80 read, one saved
    assert first.state.stored == 80 and first.unused == list(range(61, 70))
    store_ladder(db, bots=6, matches=3, first=63)     # dealt again, then stored
    store_ladder(db, bots=6, matches=10, first=95)    # L90 to L94 not stored
    whole = tmp_path / "whole.db"
    with sqlite3.connect(db) as conn:
        conn.execute("VACUUM INTO ?", (str(whole),))
    with sqlite3.connect(whole) as conn:
        conn.execute("DELETE FROM tournament_states")
    caplog.clear()
    _, from_all = _taken_up(whole, tmp_path)
    with sqlite3.connect(db) as conn:   # what the snapshot counts, gone but its last match
        through = conn.execute("SELECT through FROM tournament_states").fetchone()[0]
        conn.execute("DELETE FROM match_events WHERE match_id < ?", (through,))
        assert conn.execute("DELETE FROM matches WHERE id < ?", (through,)).rowcount == 79
    ladder, from_snapshot = _taken_up(db, tmp_path)
    assert from_snapshot == from_all
    assert from_all["stored"] == 93 and from_all["count"] == 104
    assert from_all["unused"] == [61, 62, 66, 67, 68, 69, 90, 91, 92, 93, 94]
    assert sum(from_all["games"].values()) == 2 * 93
    assert _read(caplog) == [
        "the ladder takes up its 93 stored matches (all read)",
        "the ladder takes up its 93 stored matches (13 read, the rest from its snapshot)"]
    matches, lines = _board(db)                        # the organiser's, from the store
    assert matches == 93 and sum(line["matches"] for line in lines) == 2 * 93


def test_a_snapshot_that_cannot_be_used_is_said_and_every_match_read(tmp_path, caplog):
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=40)
    _, expected = _taken_up(db, tmp_path)
    for data in (b"not zlib", None):
        with sqlite3.connect(db) as conn:
            if data is None:   # a snapshot saved without its spectators' standings
                store = SQLiteStore(db)
                record = store.tournament("ladder")
                store.save_state(record, 40, {"format": FORMAT, "stored": 40, "high": 40,
                                              "missing": [], "elo": {}, "games": {},
                                              "meetings": []})
                store.close()
            else:
                conn.execute("UPDATE tournament_states SET data = ?", (data,))
        again, said = _taken_up_again(db, tmp_path, caplog)
        assert again == expected
        assert len(said) == 1 and said[0].startswith(
            "the ladder reads every stored match again: its snapshot cannot be used ("), said
        assert _read(caplog) == ["the ladder takes up its 40 stored matches (all read)"]


def test_the_ladder_saves_a_snapshot_every_so_many_matches_it_stores(tmp_path, monkeypatch):
    """What it stores as it plays is counted in order, and a snapshot saved as of the last
    match counted: a server killed then takes up from it."""
    monkeypatch.setattr(ladder_module, "SNAPSHOT_EVERY", 4)
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=5)

    async def play(ladder: Ladder) -> None:
        for n in range(6, 16):
            seated = [f"b{n % 6}", f"b{(n + 1) % 6}"]
            await ladder._store(f"L{n}", seated, await _played(seated, n))

    _playing(db, tmp_path, play)
    store = SQLiteStore(db)
    try:
        saved = store.state(store.tournament("ladder"))
        ids = [m.id for m in store.matches(store.tournament("ladder"))]
    finally:
        store.close()
    assert saved.through == ids[12] and saved.data["stored"] == 13   # 5 read, 4 and 4 stored
    _, from_snapshot = _taken_up(db, tmp_path)
    from_all = _read_every_match(db, tmp_path)
    assert from_snapshot == from_all and from_all["stored"] == 15


def test_a_match_whose_store_the_stop_cut_short_is_not_hidden_by_the_last_snapshot(tmp_path):
    """A server that stops cancels the matches in flight, but a write already asked of the
    writer thread lands; the matches kept while the database was away are stored after it,
    with higher ids. The last snapshot, saved after those, counted them and not the one
    that landed, whose id it passed: the next start never read that match, and dealt its
    key again (played, then dropped as already stored, at every start)."""
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=5)
    store = SQLiteStore(db)

    async def scenario() -> None:
        ladder = _ladder(store, tmp_path)             # no bot registered: no table seated
        played = {}
        for n, seated in ((6, ["b0", "b1"]), (7, ["b2", "b3"])):
            played[n] = seated, await _played(seated, n)
        running = asyncio.create_task(ladder.run())
        while ladder.log is None:                     # its history read
            await asyncio.sleep(0.01)
        ladder.kept.append(("L7", *played[7]))        # the database could not take it
        storing = asyncio.create_task(ladder._store("L6", *played[6]))   # a match ends
        await asyncio.sleep(0)                        # its write asked of the writer
        storing.cancel()                              # and the server stops
        running.cancel()
        await asyncio.gather(storing, running, return_exceptions=True)

    try:
        asyncio.run(scenario())
        keys = [m.key for m in store.matches(store.tournament("ladder"))]
    finally:
        store.close()
    assert keys == ["L1", "L2", "L3", "L4", "L5", "L6", "L7"]
    _, from_snapshot = _taken_up(db, tmp_path)
    from_all = _read_every_match(db, tmp_path)
    assert from_all["stored"] == 7 and from_all["unused"] == []
    assert from_snapshot == from_all


def test_a_damaged_or_foreign_snapshot_neither_stops_the_ladder_nor_counts_twice(tmp_path, caplog,
                                                                                  monkeypatch):
    """A row that does not hold what a snapshot holds (JSON of another shape, a through
    that cannot be the snapshot's) is said and every match read. A list where an object
    was stopped the ladder at every start ("the ladder stopped: 'list' object has no
    attribute 'items'": its spectators waited for it for ever) and failed the organiser's
    standings; a through of 0 or below had every match counted twice, without a word;
    a keep below 1 had the spectators' standings halve for ever at the next match, in the
    event loop (a server that answered no one). A rating that is not a number, a negative
    count or a key missing outside L1..L<high> was taken up: it spoilt pairings and
    standings without a word; a row that inflates without end was inflated whole. A
    finite rating 123,000 below another's overflowed Elo's 10 ** (difference / 400) at
    the bot's next match (OverflowError as the ladder counted it)."""
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=20)
    _, expected = _taken_up(db, tmp_path)
    expected_board = _board(db)
    with sqlite3.connect(db) as conn:
        through, data = conn.execute("SELECT through, data FROM tournament_states").fetchone()
    intact = json.loads(zlib.decompress(data))

    def damaged(change) -> dict:
        data = json.loads(json.dumps(intact))
        change(data)
        return data
    rows = {
        "elo a list": (through, damaged(lambda d: d.update(elo=[]))),
        "games a list": (through, damaged(lambda d: d.update(games=[1]))),
        "ratings a list": (through, damaged(lambda d: d.update(ratings=[1]))),
        "faults a list": (through, damaged(lambda d: d["results"]["lines"][0].__setitem__(4, []))),
        "sets a list": (through, damaged(lambda d: d["results"].update(sets=[]))),
        "stored infinite": (through, damaged(lambda d: d.update(stored=float("inf")))),
        "keep negative": (through, damaged(lambda d: d["results"].update(keep=-1))),
        "halvings past 63": (through, damaged(lambda d: d["results"].update(halvings=70))),
        "through 0": (0, intact),
        "through -5": (-5, intact),
        "through past any id": (2 ** 70, intact),
        "through past the last id": (through + 5, intact),     # a later match skipped
        "through before its last": (through - 1, intact),      # its last counted twice
        "through infinite": (float("inf"), intact),
        "nested deep": (through, b"[" * 100_000 + b"]" * 100_000),
        "a rating not a number": (through, damaged(lambda d: d["elo"].update(A=float("nan")))),
        "spectators' rating infinite": (through, damaged(
            lambda d: d["ratings"].update(A=float("inf")))),
        "a rating past Elo's range": (through, damaged(
            lambda d: d["elo"].update({next(iter(d["elo"])): -2e5}))),
        "spectators' rating past Elo's range": (through, damaged(
            lambda d: d["ratings"].update({next(iter(d["ratings"])): 2e5}))),
        "games negative": (through, damaged(lambda d: d["games"].update(A=-1))),
        "a meeting negative": (through, damaged(lambda d: d["meetings"][0].__setitem__(2, -2))),
        "a key missing below L1": (through, damaged(lambda d: d.update(missing=[-3]))),
        "a key missing past the last": (through, damaged(
            lambda d: d.update(missing=[d["high"] + 5]))),
        "wins negative": (through, damaged(lambda d: d["results"]["lines"][0].__setitem__(2, -1))),
        "a tally negative": (through, damaged(
            lambda d: d["results"]["tally"]["tables"][0].__setitem__(1, -4))),
        "inflates past the limit": (through, json.dumps(intact).encode() + b" " * 2**20),
    }
    monkeypatch.setattr(rows_module, "STATE_LIMIT", 2**20)   # 256 MiB in the test's memory
    for what, (row_through, data) in rows.items():
        blob = zlib.compress(data if isinstance(data, bytes) else json.dumps(data).encode())
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE tournament_states SET through = ?, data = ?",
                         (row_through if isinstance(row_through, float) else str(row_through),
                          blob))
        again, said = _taken_up_again(db, tmp_path, caplog)
        assert again == expected, what
        assert len(said) == 1 and said[0].startswith(
            "the ladder reads every stored match again: its snapshot cannot be used ("), what
        with sqlite3.connect(db) as conn:            # the one saved as it started, again
            conn.execute("UPDATE tournament_states SET through = ?, data = ?",
                         (row_through if isinstance(row_through, float) else str(row_through),
                          blob))
        assert _board(db) == expected_board, what


def test_a_kept_match_whose_commit_landed_is_not_passed_by_a_snapshot(tmp_path, monkeypatch):
    """A write whose commit landed but whose answer was lost (PostgreSQL, a connection
    that went during the commit and did not come back within the writer's window) fails:
    the match is kept, and when the database takes writes again it is "already stored"
    and dropped, never counted. The matches stored meanwhile, after it, were counted and
    a snapshot saved as of them passed its id: no start read that match again, and its
    key, never counted, was dealt again (played, then dropped) at every start. Here its
    commit is the store's own record_match, made before the ladder's."""
    monkeypatch.setattr(ladder_module, "SNAPSHOT_EVERY", 1)
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=5)

    async def play(ladder: Ladder) -> None:
        played = {}
        for n, seated in ((6, ["b0", "b1"]), (7, ["b2", "b3"])):
            played[n] = seated, await _played(seated, n)
        ladder.store.record_match(ladder.record, "L6", "L6", *played[6])   # it landed
        ladder.kept.append(("L6", *played[6]))        # and its write failed: kept
        await ladder._store("L7", *played[7])         # a match in flight, stored after it
        await ladder._store_kept()                    # "already stored": dropped

    _playing(db, tmp_path, play)
    _, from_snapshot = _taken_up(db, tmp_path)
    from_all = _read_every_match(db, tmp_path)
    assert from_all["stored"] == 7 and from_all["unused"] == []
    assert from_snapshot == from_all


def test_a_key_found_stored_that_the_ladder_did_not_count_has_every_match_read_again(
        tmp_path, caplog):
    """A snapshot that passed a stored match it did not count (as one saved before the
    kept matches held snapshots back could) left that match out at every start, and its
    key dealt again, played and dropped as already stored, start after start. Found
    stored, it has the next start read every match, and says why."""
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=5)
    store_ladder(db, bots=6, matches=1, first=7)
    _taken_up(db, tmp_path)                           # a snapshot as of L7: L6 not dealt
    store_ladder(db, bots=6, matches=1, first=6)
    with sqlite3.connect(db) as conn:                 # one past L6 that does not count it
        conn.execute("UPDATE tournament_states SET through = (SELECT MAX(id) FROM matches)")

    async def play(ladder: Ladder) -> None:
        assert ladder.unused == [6]
        n = ladder._number()
        seated = ["b0", "b1"]
        assert not await ladder._store(f"L{n}", seated, await _played(seated, n))

    _playing(db, tmp_path, play)
    again, said = _taken_up_again(db, tmp_path, caplog)
    assert said == ["the ladder reads every stored match again: its snapshot cannot be used "
                    "(key L6 is stored by a match it did not count (a kept match whose commit "
                    "landed though its write failed))"]
    from_all = _read_every_match(db, tmp_path)
    assert again == from_all and from_all["stored"] == 7 and from_all["unused"] == []


def test_a_snapshot_through_another_tournaments_match_is_refused_and_every_match_read(
        tmp_path, caplog):
    """A snapshot's ``through`` must be one of the ladder's own matches: a foreign row's
    (here another tournament's match, stored after the ladder's last) past the ladder's
    later matches would have those skipped at every start, and the organiser's standings
    too. Refused, said, and every match read. (Mutation review: saved_misfit no longer
    checking whose match ``through`` is: the five later matches were never counted.)"""
    db = tmp_path / "ladder.db"
    store_ladder(db, bots=6, matches=20)
    _taken_up(db, tmp_path)                            # a snapshot as of L20
    store_ladder(db, bots=6, matches=5, first=21)      # stored since
    store = SQLiteStore(db)
    try:
        other = store.create_tournament("other", {"table_size": 2, "seed": 1, "bot_dirs": [],
                                                  "bots": []}, [])
        result = asyncio.run(_played(["b0", "b1"], 99))
        foreign = store.record_match(other, "t0-d0-r0", "t0-d0", ["b0", "b1"], result)
    finally:
        store.close()
    whole = tmp_path / "whole.db"
    with sqlite3.connect(db) as conn:
        conn.execute("VACUUM INTO ?", (str(whole),))
    expected = _read_every_match(whole, tmp_path)
    expected_board = _board(whole)
    assert expected["stored"] == 25
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT MAX(id) FROM matches").fetchone()[0] == foreign
        conn.execute("UPDATE tournament_states SET through = ?", (foreign,))
    again, said = _taken_up_again(db, tmp_path, caplog)
    assert again == expected
    assert said == ["the ladder reads every stored match again: its snapshot cannot be used "
                    f"(match {foreign} is none of tournament 'ladder''s)"]
    with sqlite3.connect(db) as conn:                 # the one saved as it started, again
        conn.execute("UPDATE tournament_states SET through = ?", (foreign,))
    assert _board(db) == expected_board               # the organiser's standings


@pytest.mark.parametrize("field, value", [
    ("faults", "0x1"), ("faults", "01" * 6), ("faults", 101), ("faults", [True]),
    ("benched", "1e9"), ("benched", True), ("benched", -5.0), ("benched", float("nan")),
    ("benched", None)])
def test_a_snapshot_with_a_damaged_count_or_bench_is_not_used(field, value):
    """A bot's last faults and when its bench ends, read back: a damaged or foreign row
    is no snapshot (every match is read again, and the log says why), not a count that
    benches a bot wrongly or a bench that never ends."""
    data = Snapshot(LadderState()).to_data()
    data[field] = {"b0": value}
    with pytest.raises(ValueError):
        Snapshot.from_data(40, json.loads(json.dumps(data)))
    data[field] = {"b0": "0110" if field == "faults" else 1.8e9}
    read = Snapshot.from_data(40, json.loads(json.dumps(data))).state
    assert (list(read.faults["b0"]) == [False, True, True, False] if field == "faults"
            else read.benched == {"b0": 1.8e9})
