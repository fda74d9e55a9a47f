"""When the ladder sits a bot out for its faults (keeping its opponents waiting, breaking
the rules): the ladder's own rule, fed the results of real matches with the verdicts a
fault leaves."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from arena.bots.sandbox import SandboxConfig
from arena.referee.house import FirstLegal, HouseSession
from arena.referee.lobby import Lobby
from arena.referee.results import Verdict, VerdictKind
from arena.referee.runner import MatchRunner
from arena.server.ladder import BENCH_AFTER, BENCH_OF, Ladder
from arena.server.registry import Registry
from arena.store.sqlite import SQLiteStore
from tests.support.matches import spec

#: flaky's verdict when it drops its connection for good in the middle of a match
LEFT = Verdict(0, VerdictKind.DISCONNECTED, "bot closed its stream; it did not reconnect within "
               "10 s", 10_000_000)


def _benched_after(tmp_path, faults: list[bool], caplog,
                   fault: Verdict = LEFT) -> tuple[list[int], list[str]]:
    """Feed a ladder ``len(faults)`` matches of ``flaky`` against ``steady`` (the ones
    marked True end with flaky's verdict ``fault``: by default, it left, its opponent
    kept waiting); at which match (1-based) flaky sat out, and why."""
    store = SQLiteStore(tmp_path / "arena.db")
    ladder = Ladder(store, Registry(store, Lobby(), tmp_path, SandboxConfig("none")), None)
    caplog.set_level(logging.WARNING, logger="arena.server")
    seated = ["flaky", "steady"]

    async def go() -> list[int]:
        clean = await MatchRunner(spec(seated, seed=1), [HouseSession(FirstLegal()),
                                                         HouseSession(FirstLegal())]).run()
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
