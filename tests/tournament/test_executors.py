"""The executor registry: one constructor shape, chosen by name, with precise refusals."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path

import pytest
from ono99.v1 import spectator_pb2 as hub_pb

from arena.bench import procs
from arena.rules.errors import ConfigError
from arena.store import open_store
from arena.tournament import multiprocess
from arena.tournament.executor import LocalExecutor
from arena.tournament.executors import EXECUTORS, ExecutorSetup, make_executor
from arena.tournament.multiprocess import MultiProcessExecutor
from arena.tournament.tournament import Settings, Tournament
from arena.watch.bus import Bus
from support.hostile import hostile
from support.processes import killed_on_leaving
from support.spectators import CountingHub


def test_every_entry_is_made_from_the_same_setup():
    assert list(EXECUTORS) == ["local", "multiprocess", "ray", "auto"]
    setup = ExecutorSetup([], [], 2)
    assert isinstance(make_executor("local", setup), LocalExecutor)
    assert isinstance(make_executor("multiprocess", setup), MultiProcessExecutor)
    assert type(make_executor("ray", setup)).__name__ == "RayExecutor"


def test_auto_spreads_over_cores_only_when_there_is_something_to_spread():
    assert isinstance(make_executor("auto", ExecutorSetup([], [], 1)), LocalExecutor)
    many = make_executor("auto", ExecutorSetup([], [], 4))
    expected = MultiProcessExecutor if (os.cpu_count() or 1) > 1 else LocalExecutor
    assert isinstance(many, expected)
    # in-process listeners need the matches here
    assert isinstance(make_executor("auto", ExecutorSetup([], [], 4, listeners=[object()])),
                      LocalExecutor)


def test_an_unknown_name_and_listeners_that_cannot_follow_are_refused():
    with pytest.raises(ConfigError, match=r"no executor called 'nope' \(known: local, "
                                          r"multiprocess, ray, auto\)"):
        make_executor("nope", ExecutorSetup([], [], 2))
    for name in ("multiprocess", "ray"):
        with pytest.raises(ConfigError, match="in-process listeners follow matches of this "
                                              "process only"):
            make_executor(name, ExecutorSetup([], [], 2, listeners=[object()]))


@pytest.mark.parametrize("listen, one", [
    ("unix", False), ("tcp", False), ("127.0.0.1:0", False), ("[::]:00", False),
    ("unixbox.example:0", False),             # a host named so: not a socket (review 37)
    ("127.0.0.1:50051", True), ("unix:/tmp/r.sock", True), ("unix-abstract:r", True),
])
def test_one_listen_address_keeps_a_tournament_in_one_process(listen, one):
    """Referees in several processes on one port failed to bind, and on one socket each
    took it from the one before (review 36): such an address is refused where matches
    play elsewhere, and auto keeps them here."""
    setup = ExecutorSetup([], [], 4, listen=listen)
    for name in ("multiprocess", "ray"):
        if one:
            with pytest.raises(ConfigError, match=f"--listen {re.escape(listen)} is one address"):
                make_executor(name, setup)
        else:
            make_executor(name, setup)
    if one or (os.cpu_count() or 1) == 1:
        assert isinstance(make_executor("auto", setup), LocalExecutor)
    else:
        assert isinstance(make_executor("auto", setup), MultiProcessExecutor)


def test_a_bot_with_no_folder_here_plays_on_the_local_executor_only():
    """A server's remote bot has no folder to launch in another process (it connects to
    the server's referee): the executors of other processes refuse it by name, auto keeps
    its tournament here, and the local one seats it as the setup says."""
    setup = ExecutorSetup([None], ["far"], 4, seats_here=lambda referee: [])
    assert isinstance(make_executor("local", setup), LocalExecutor)
    assert isinstance(make_executor("auto", setup), LocalExecutor)
    for name in ("multiprocess", "ray"):
        with pytest.raises(ConfigError, match="far cannot be launched in another process: "
                                              "no folder here"):
            make_executor(name, setup)


ROOT = Path(__file__).resolve().parents[2]
BOTS = [ROOT / "bots" / name for name in ("random", "greedy", "pusher")]


def played(tmp: Path, name: str, executor: str, on_result=None):
    """A tournament of sample bots (deterministic given their seeds) on ``executor``: its
    results by key, and the executor."""
    store = open_store(str(tmp / f"{name}.db"))
    t = Tournament.create(store, name, Settings(bot_dirs=tuple(map(str, BOTS)), table_size=2,
                                                games=8, seed=11))
    ex = make_executor(executor, t.setup(4, log_dir=tmp / f"logs-{name}"))
    asyncio.run(t.play(ex, on_result or (lambda plan, result: None)))
    matches = store.matches(t.record)
    out = {m.key: (m.ranking, m.termination, m.verdicts, store.events(m.id)) for m in matches}
    assert len(out) == len(matches) == len(t.plan), "a match stored twice or lost"
    store.close()
    return out, ex


def test_a_referee_worker_stopped_for_good_is_replaced_and_its_matches_played_again(
        tmp_path, monkeypatch):
    """SIGSTOP of one referee worker (a debugger attached, a frozen cgroup, a worker
    stuck): alive to the parent, it never reported its match, and the run waited for it
    for good (359 of 360 stored, then nothing, found by the seventeenth review). A worker
    with matches in flight that says nothing for STALL_S (shortened here: 30 s) is now
    killed and replaced, as a worker that died is, and its matches are played again, to
    the results of an uninterrupted run."""
    monkeypatch.setattr(multiprocess, "STALL_S", 3.0)
    local, _ = played(tmp_path, "local", "local")
    stopped: list[int] = []

    def stop_one(plan, result) -> None:
        if not stopped and (workers := procs.workers()):
            os.kill(workers[0], signal.SIGSTOP)
            stopped.append(workers[0])

    with killed_on_leaving(stopped):
        elsewhere, ex = played(tmp_path, "multiprocess", "multiprocess", stop_one)
    assert stopped and ex.replaced == 1
    assert elsewhere == local


def test_a_result_that_comes_after_its_worker_was_given_up_for_dead_is_dropped(tmp_path):
    """A worker killed once its result was sent and before the parent read it: the
    parent finds it dead first, deals its matches again (that one too) and then reads its
    result, which must not count (the match would be stored twice, or a replay's result
    taken for its own; no test failed with the guard gone, the twenty-fourth review's).
    The parent is held in a result's callback while a worker's other lanes finish, then
    the worker is killed: it looks for the dead at its next turn, before reading on."""
    local, _ = played(tmp_path, "local", "local")
    killed: list[int] = []

    def kill_one(plan, result) -> None:
        if not killed and (workers := procs.workers()):
            time.sleep(3.0)            # its lanes finish matches meanwhile, their results sent
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])
            time.sleep(0.5)            # dead (a zombie) before the parent goes on

    elsewhere, ex = played(tmp_path, "multiprocess", "multiprocess", kill_one)
    assert killed and ex.replaced == 1
    assert ex.late >= 1, "no result came from the worker after it was given up"
    assert elsewhere == local


def _slow(folder: Path, name: str, seconds: float) -> Path:
    """A bot named ``name`` that thinks ``seconds`` before each card."""
    hostile(folder, "slow", seconds)
    toml = folder / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "hostile"', f'name = "{name}"'))
    return folder


@pytest.mark.parametrize("executor", ["local", "multiprocess"])
def test_a_run_stopped_part_way_leaves_none_of_its_matches_live_for_spectators(tmp_path, executor):
    """A run cancelled with matches in flight: each is aborted, and its spectators hear it
    end. The multi-process executor stopped reading its workers as it told them to stop,
    so the ends of the matches they aborted (and the message its read under way had
    taken) were lost: those matches stayed live in the hub for good, listed, followed by
    TV, their viewers waiting (3 heard starting, 2 ending, found by the twentieth
    review)."""
    bots = [_slow(tmp_path / "a", "slowa", 0.05), _slow(tmp_path / "b", "slowb", 0.05),
            ROOT / "bots" / "random"]
    store = open_store(str(tmp_path / "cut.db"))
    t = Tournament.create(store, "cut", Settings(bot_dirs=tuple(map(str, bots)), table_size=2,
                                                 games=6, seed=3))
    cut: list[str] = []

    class Cutting(CountingHub):
        """Cancels the run at the first frame of the third match to start (a second of
        slow moves from its end)."""
        run: asyncio.Task | None = None

        def frame(self, match_id, frame, hands=None) -> None:
            super().frame(match_id, frame, hands)
            if self.run is not None and len(self.started) >= 3 and frame.seq == 0:
                cut.append(match_id)
                self.run.cancel()
                self.run = None

    hub = Cutting()
    ex = make_executor(executor, t.setup(2, log_dir=tmp_path / "logs", bus=Bus(hub, "cut")))

    async def go() -> None:
        hub.run = asyncio.current_task()
        with pytest.raises(asyncio.CancelledError):
            await t.play(ex, lambda plan, result: None)

    asyncio.run(go())
    stored = len(store.matches(t.record))
    store.close()
    live = [s.match_id for s in hub.summaries("cut") if s.status == hub_pb.MATCH_STATUS_LIVE]
    assert cut and stored < len(t.plan)
    assert live == [] and hub.ended == hub.started
    aborted = {s.match_id for s in hub.summaries("cut") if s.status == hub_pb.MATCH_STATUS_ABORTED}
    assert cut[0] in aborted
