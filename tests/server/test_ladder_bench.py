"""When the ladder sits a bot out for its faults (keeping its opponents waiting, breaking
the rules): the ladder's own rule, fed the results of real matches with the verdicts a
fault leaves."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sqlite3

from arena.bots.sandbox import SandboxConfig
from arena.referee.house import FirstLegal, HouseSession
from arena.referee.lobby import Lobby
from arena.referee.results import Verdict, VerdictKind
from arena.referee.runner import MatchRunner
from arena.server.ladder import Ladder
from arena.server.ladder_state import BENCH_AFTER, BENCH_OF, BENCH_S
from arena.server.registry import Registry
from arena.store.sqlite import SQLiteStore
from tests.support.matches import spec

#: flaky's verdict when it drops its connection for good in the middle of a match
LEFT = Verdict(0, VerdictKind.DISCONNECTED, "bot closed its stream; it did not reconnect within "
               "10 s", 10_000_000)


def _ladder(store: SQLiteStore, tmp_path) -> Ladder:
    """A server's ladder on ``store`` (no spectators, bots as plain processes)."""
    return Ladder(store, Registry(store, Lobby(), tmp_path, SandboxConfig("none")), None)


async def _played(seated: list[str], seed: int, verdicts: list[Verdict], ago: float = 0.0):
    """A match of ``seated`` (house seats: the first legal card) given ``verdicts``, as if
    it had started ``ago`` seconds earlier."""
    result = await MatchRunner(spec(seated, seed=seed), [HouseSession(FirstLegal()),
                                                         HouseSession(FirstLegal())]).run()
    return dataclasses.replace(result, verdicts=verdicts, started_at=result.started_at - ago)


def _benched_after(tmp_path, faults: list[bool], caplog,
                   fault: Verdict = LEFT) -> tuple[list[int], list[str]]:
    """Feed a ladder ``len(faults)`` matches of ``flaky`` against ``steady`` (the ones
    marked True end with flaky's verdict ``fault``: by default, it left, its opponent
    kept waiting); at which match (1-based) flaky sat out, and why."""
    store = SQLiteStore(tmp_path / "arena.db")
    ladder = _ladder(store, tmp_path)
    caplog.set_level(logging.WARNING, logger="arena.server")
    seated = ["flaky", "steady"]

    async def go() -> list[int]:
        clean = await _played(seated, 1, [])
        faulty = dataclasses.replace(clean, verdicts=[fault])
        sat_out = []
        for n, its_fault in enumerate(faults, 1):
            before = ladder.benched.get("flaky")
            ladder._bench(seated, faulty if its_fault else clean)
            if ladder.benched.get("flaky") != before:
                sat_out.append(n)
        return sat_out

    try:
        sat_out = asyncio.run(go())
    finally:
        ladder.writer.close()
        store.close()
    return sat_out, [r.getMessage() for r in caplog.records if "sits out" in r.getMessage()]


def test_a_bot_that_leaves_every_third_match_sits_out(tmp_path, caplog):
    """A remote bot that dropped its connection every third ladder match (each drop kept
    its opponent waiting the reconnect grace, 10 s) was never benched: the rule was 3
    such matches in a row, and it always had clean ones between (the thirtieth review:
    75 of 318 matches). Three in its last ten now bench it."""
    sat_out, said = _benched_after(tmp_path, [n % 3 == 0 for n in range(1, 31)], caplog)
    assert sat_out == [9, 18, 27]
    assert said[0] == ("ladder: flaky sits out for 300 s: 3 of its last 9 matches ended in a "
                       "fault of its own (the last: disconnected)")
    assert "steady" not in " ".join(said)


def test_a_bot_that_keeps_its_opponents_waiting_now_and_then_plays_on(tmp_path, caplog):
    """Two faults in any ten matches (a slow start, a dropped connection) bench nobody."""
    faults = [n % 5 == 0 for n in range(1, 61)]          # 1 in 5: 2 in every 10
    assert (BENCH_AFTER, BENCH_OF) == (3, 10)
    sat_out, said = _benched_after(tmp_path, faults, caplog)
    assert sat_out == [] and said == []


def test_three_faults_in_a_row_bench_a_bot_at_once(tmp_path, caplog):
    sat_out, said = _benched_after(tmp_path, [True] * 3, caplog)
    assert sat_out == [3]
    assert "3 of its last 3 matches ended in a fault" in said[0]


def test_a_bot_that_keeps_breaking_the_rules_sits_out(tmp_path, caplog):
    """A bot forfeiting by too many refused actions keeps nobody waiting, but it forfeited
    every match in a few round trips (42 in 35 s beside two sample bots, each stored and
    rated), seated again at once each time. It sits out as a bot that keeps its
    opponents waiting does."""
    illegal = Verdict(0, VerdictKind.ILLEGAL, "6 refused actions in this match (the limit is "
                      "5); the last: ERROR_CODE_MALFORMED", 3_000)
    sat_out, said = _benched_after(tmp_path, [n % 3 == 0 for n in range(1, 13)], caplog,
                                   illegal)
    assert sat_out == [9]
    assert said == ["ladder: flaky sits out for 300 s: 3 of its last 9 matches ended in a "
                    "fault of its own (the last: illegal)"]


def test_a_restarted_server_remembers_who_sits_out_and_who_is_close_to_it(tmp_path, caplog):
    """The counts and the benches followed the matches in memory only: a server restarted
    (an upgrade, a crash) seated a bot sitting out for its faults at once, and a bot two
    faults from sitting out began afresh. They follow the stored matches now: after a
    restart, from the matches (every one, or the ladder's snapshot and those since, the
    same to the bit), a bot sits out what is left of its bench, never more than a bench;
    one benched long enough ago plays, and so does one that played since its bench (its
    times an hour ahead) and one removed since."""
    db, whole = tmp_path / "arena.db", tmp_path / "whole.db"
    caplog.set_level(logging.WARNING, logger="arena.server")

    async def played(seated: list[str], n: int, fault: int | None, ago: float = 0.0):
        """Match Ln of ``seated``: the seat ``fault`` left it, ``ago`` seconds ago."""
        return await _played(seated, n, [] if fault is None else
                             [dataclasses.replace(LEFT, seat=fault)], ago)

    async def stored(playing: Ladder, matches: list, first: int) -> None:
        """``playing`` stores ``matches`` (seated, the seat at fault, how long ago) from
        L``first``, then closes its writer."""
        for n, (seated, fault, ago) in enumerate(matches, first):
            await playing._store(f"L{n}", seated, await played(seated, n, fault, ago))
        await asyncio.get_running_loop().run_in_executor(None, playing.writer.close)

    async def before() -> None:
        store = SQLiteStore(db)
        try:
            first = _ladder(store, tmp_path)
            for name in ("old", "ahead", "back", "gone", "flaky", "shaky", "steady"):
                first.registry.add_remote(name)
            # "ahead" and "back": their matches ended an hour from now (the clock has gone
            # back since); "back" played once more after its bench
            await stored(first, [*[(["old", "steady"], 0, 700.0)] * 3,
                                 *[(["ahead", "steady"], 0, -3600.0)] * 3,
                                 *[(["back", "steady"], 0, -3600.0)] * 3,
                                 (["back", "steady"], None, -3600.0),
                                 *[(["gone", "steady"], 0, 0.0)] * 3,
                                 (["flaky", "steady"], 0, 0.0)], 1)
            second = _ladder(store, tmp_path)
            await second._read_history()               # a snapshot saved, as of L14
            await stored(second, [*[(["flaky", "steady"], 0, 0.0)] * 2,
                                  *[(["steady", "shaky"], 1, 0.0)] * 2], 15)
            assert set(second.benched) == {"ahead", "gone", "flaky"}
            second.registry.remove("gone")
        finally:
            store.close()

    async def after(path) -> tuple[dict, dict[str, float], list[str], int]:
        caplog.clear()
        store = SQLiteStore(path)
        try:
            through = store.state(store.tournament("ladder"))
            third = _ladder(store, tmp_path)
            await third._read_history()
            now = third._clock()
            left = {b: until - now for b, until in third.benched.items() if until > now}
            read = {"faults": {b: list(f) for b, f in third.state.faults.items()},
                    "benched": {b: t.hex() for b, t in third.state.benched.items()}}
            await stored(third, [(["steady", "shaky"], 1, 0.0)], 19)
            said = [r.getMessage() for r in caplog.records]
        finally:
            store.close()
        return read, left, said, 0 if through is None else through.through

    asyncio.run(before())
    with sqlite3.connect(db) as conn:
        conn.execute("VACUUM INTO ?", (str(whole),))
    with sqlite3.connect(whole) as conn:
        conn.execute("DELETE FROM tournament_states")
    reads = []
    for path, snapshot in ((db, 14), (whole, 0)):
        read, left, said, through = asyncio.run(after(path))
        reads.append(read)
        assert through == snapshot                      # 14 from a snapshot, 4 read since
        assert set(left) == {"flaky", "ahead"}, path
        assert BENCH_S - 60 < left["flaky"] <= BENCH_S, path
        assert BENCH_S - 5 < left["ahead"] <= BENCH_S, path   # not an hour more
        for line, bot in zip(sorted(said[:2]), ["ahead", "flaky"]):
            assert line.startswith(f"ladder: {bot} sits out for "), said
            assert line.endswith(" s: it sat out for its faults as this server last "
                                 "stopped"), said
        assert said[-1] == ("ladder: shaky sits out for 300 s: 3 of its last 3 matches "
                            "ended in a fault of its own (the last: disconnected)"), said
    assert reads[0] == reads[1]
    assert set(reads[0]["benched"]) == {"old", "ahead", "gone", "flaky"}


def test_a_fault_in_a_match_already_stored_under_its_key_still_counts(tmp_path, caplog):
    """A match whose key is stored already (a kept match's commit that landed though its
    write failed) is not stored again, but its faults count, as a restart counts the
    match stored under that key (they counted as the match ended until 2026-12-07)."""
    store = SQLiteStore(tmp_path / "arena.db")
    caplog.set_level(logging.WARNING, logger="arena.server")
    ladder = _ladder(store, tmp_path)
    seated = ["flaky", "steady"]

    async def go() -> None:
        for n in (1, 2, 3):
            result = await _played(seated, n, [LEFT])
            if n == 3:   # stored first by another connection
                other = SQLiteStore(tmp_path / "arena.db")
                other.record_match(other.tournament("ladder"), "L3", "L3", seated, result)
                other.close()
            await ladder._store(f"L{n}", seated, result)
        await asyncio.get_running_loop().run_in_executor(None, ladder.writer.close)

    try:
        asyncio.run(go())
    finally:
        store.close()
    said = [r.getMessage() for r in caplog.records]
    assert said[0].startswith("ladder match L3 (") and "was played but not stored" in said[0]
    assert ("ladder: flaky sits out for 300 s: 3 of its last 3 matches ended in a fault of "
            "its own (the last: disconnected)") in said, said
