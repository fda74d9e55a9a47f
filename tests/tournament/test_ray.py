"""Tournaments on a real two-node Ray cluster on this machine (``ray.cluster_utils``: a
head and a second node, each with its own CPU and its own raylet), driven from this
process through the executor registry, the bots real processes in their sandboxes on
the nodes, the results in a real SQLite file.

A tournament stores, match for match, the results of the local executor for the same
seeds (the sample bots are deterministic given their seeds) and its matches ran on both
nodes; kill -9 of the second node part way loses no match and stores none twice (its
matches in flight are played again on the head, to the same results).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.hostile import hostile
from support.processes import killed_on_leaving, process_names, running
from support.requirements import needs_module

ray = needs_module("ray", module_level=True)
from ray.cluster_utils import Cluster  # noqa: E402

from arena.bots.sandbox import SandboxConfig  # noqa: E402
from arena.referee.listeners import END  # noqa: E402
from arena.store import open_store  # noqa: E402
from arena.store.base import StoreError  # noqa: E402
from arena.tournament.executors import make_executor  # noqa: E402
from arena.tournament.tournament import Settings, Tournament  # noqa: E402
from arena.watch.bus import Bus  # noqa: E402
from ono99.v1 import spectator_pb2  # noqa: E402
from support.spectators import CountingHub  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BOTS = [ROOT / "bots" / name for name in ("random", "greedy", "pusher")]


@pytest.fixture(scope="module")
def head():
    """A Ray head node with one CPU; this process is its driver. Node failures are
    noticed within about a second (the default waits much longer)."""
    cluster = Cluster(initialize_head=True, connect=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False,
        "_system_config": {"health_check_period_ms": 200, "health_check_failure_threshold": 3,
                           "health_check_initial_delay_ms": 0}})
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture
def second(head):
    """A second node (its own raylet and CPU), removed after the test if still there."""
    node = head.add_node(num_cpus=1)
    head.wait_for_nodes()
    yield node
    if node in head.worker_nodes:
        head.remove_node(node)


def play(tmp: Path, name: str, executor: str, on_result=None, games: int = 6, bus=None,
         concurrency: int = 4, made: list | None = None):
    """A tournament of the sample bots on ``executor``: its results by key, the executor
    (also put in ``made`` as soon as it is made)."""
    store = open_store(str(tmp / f"{name}.db"))
    settings = Settings(bot_dirs=tuple(map(str, BOTS)), table_size=2, games=games, seed=11)
    t = Tournament.create(store, name, settings)
    ex = make_executor(executor, t.setup(concurrency, log_dir=tmp / f"logs-{name}", bus=bus))
    if made is not None:
        made.append(ex)

    def seen(plan, result) -> None:
        if on_result is not None:
            on_result(plan, result)

    asyncio.run(t.play(ex, seen))
    matches = store.matches(t.record)
    out = {m.key: (m.ranking, m.termination, m.verdicts, store.events(m.id)) for m in matches}
    assert len(out) == len(matches) == len(t.plan), "a match stored twice or lost"
    store.close()
    return out, ex


def test_a_tournament_on_two_nodes_stores_what_the_local_executor_does(tmp_path, second):
    local, _ = play(tmp_path, "local", "local")
    on_ray, ex = play(tmp_path, "ray", "ray")
    assert on_ray == local
    assert len(ex.nodes) == 2, ex.nodes          # both nodes played
    assert ex.replaced == 0
    assert len(ex.overheads) == len(local)


def test_spectators_hear_every_match_played_on_the_nodes(tmp_path, second):
    """The listener bus reaches the actors: what their taps send comes back to the hub."""
    hub = CountingHub()
    results, _ = play(tmp_path, "watched", "ray", games=3, bus=Bus(hub, "watched"))
    assert len(hub.started) == len(hub.ended) == len(results)
    assert hub.frames > len(results)


@dataclass(frozen=True)
class EndsHeldOff:
    """A spectator tap whose listener, on a node other than ``head``, never sends the end
    of a match (the rest of its batch goes): a node lost after a result was taken, before
    its stream brought the match's end."""

    tap: object
    head: str

    def listener(self, send):
        if ray.get_runtime_context().get_node_id() == self.head:
            return self.tap.listener(send)
        return self.tap.listener(lambda batch: send([m for m in batch if m[0] != END]))


ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])   # the actors import no test


def test_losing_a_node_mid_run_loses_no_match_and_duplicates_none(tmp_path, head, second):
    local, _ = play(tmp_path, "local", "local", games=10)
    made = []

    def kill_second(plan, result) -> None:
        # at the first result from it: it has other matches in flight (its lanes and the
        # one queued), and its stream never brings that match's end
        if made[0].nodes[second.node_id] == 1 and second in head.worker_nodes:
            print(f"removing node {second.node_id}", file=sys.stderr)
            head.remove_node(second, allow_graceful=False)   # SIGKILL of its processes

    hub = CountingHub()
    bus = Bus(hub, "ray")
    bus.tap = EndsHeldOff(bus.tap, head.head_node.node_id)
    on_ray, ex = play(tmp_path, "ray", "ray", kill_second, games=10, bus=bus, made=made)
    assert ex.replaced >= 1, "the second node's actors were not lost"
    assert ex.replayed >= 1, "no match was in flight on the lost node"
    assert on_ray == local    # replayed from their seeds: the same results
    # the spectators heard every match end, the lost attempts' played again in their place,
    # the one whose end its node never sent as its result came
    assert hub.started == hub.ended and len(hub.ended) == len(on_ray)
    assert all(m.summary.status == spectator_pb2.MATCH_STATUS_FINISHED
               and [f.seq for f in m.frames] == list(range(len(m.frames)))
               for m in hub.matches.values())


def test_a_node_whose_raylet_dies_leaves_no_actor_and_no_bot_behind(tmp_path, head, second):
    """kill -9 of a node's raylet alone (the twenty-seventh review's; the kernel's
    out-of-memory killer would do it): Ray's worker ends when its raylet is gone, but takes
    one that has died and not been reaped (here, by this process, which started it) for
    alive, so the node's referee actor and its bots played on for nobody, for good. The
    actor now sees its parent go, stops its bots and ends; the run plays its matches on."""
    from arena.bench.procs import descendants

    local, _ = play(tmp_path, "local", "local")
    raylet = second.all_processes["raylet"][0].process
    made, left = [], []

    def kill_raylet(plan, result) -> None:
        if made[0].nodes[second.node_id] == 1 and not left:   # its first result: it plays
            left.extend(referee_actors(raylet.pid))
            left.extend(pid for actor in list(left) for pid, _ in descendants(actor))
            raylet.kill()

    on_ray, ex = play(tmp_path, "ray", "ray", kill_raylet, made=made)
    assert on_ray == local and ex.replaced >= 1
    assert len(left) > 1, "no actor with its bots on the node"
    deadline = time.monotonic() + 10
    while (alive := [pid for pid in left if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive, process_names(alive)


def referee_actors(root: int | None = None) -> list[int]:
    """The pids of the referee actor processes of this test's cluster (its processes are
    this one's descendants; Ray names an actor's process by its class), or of ``root``."""
    from arena.bench.procs import descendants

    named = [pid for pid, cmd in descendants(root) if cmd.startswith(b"ray::RefereeNode")]
    # a process an actor forks bears its name until it execs (a bot being started): it
    # was taken for a second actor, and the test failed at random (2 runs in 6 here)
    forked = {pid for actor in named for pid, _ in descendants(actor)}
    return [pid for pid in named if pid not in forked]


@pytest.mark.parametrize("lanes", [1, 4])
def test_actors_lost_again_and_again_with_matches_played_between_do_not_stop_the_run(
        tmp_path, head, lanes):
    """kill -9 of the one referee actor after every 6th result, 6 times: each replacement
    plays on, and the run ends with every match stored once and the local results.
    Before, the run stopped once more than 3 actors per lane had died in all, however long
    it had played between the losses (both cases). With 4 lanes, the matches a lost actor
    had are dealt first to the next, whose bots start cold: one can still be waiting for
    its bots when that actor is killed in turn, and it counted a loss even so; three such
    stopped the run as a match that kills referees (in about half the runs). A match now
    counts a loss only once its bots are seated. And a match slow to finish on each cold
    replacement was in flight at three kills in one run in 8, which stopped the run too: a
    match with two deaths is now played alone, where no result (and so no kill) comes
    before its own."""
    local, _ = play(tmp_path, "local", "local", games=10)
    done = [0]
    kills = []

    def kill_actor(plan, result) -> None:
        done[0] += 1
        if done[0] % 6 == 0 and len(kills) < 6:
            actors = referee_actors()
            assert len(actors) == 1, actors
            os.kill(actors[0], signal.SIGKILL)
            kills.append(actors[0])

    on_ray, ex = play(tmp_path, "ray", "ray", kill_actor, games=10, concurrency=lanes)
    assert len(kills) == 6
    assert ex.replaced == 6
    assert on_ray == local


@pytest.mark.timeout(180)     # before, it waited for good
@pytest.mark.parametrize("lanes", [2])   # 1 lane too passed when written (17 s each)
def test_an_actor_stopped_for_good_is_killed_and_its_matches_played_again(
        tmp_path, head, lanes, monkeypatch):
    """SIGSTOP of the referee actor (a frozen cgroup, a debugger, a stuck actor): Ray saw it
    alive, its matches never came back, and the run waited for good (598 of 600 stored,
    found by the seventeenth review). An actor that holds matches and does not answer for
    STALL_S (shortened here) is now killed, and its matches are played again on its
    replacement, to the local results."""
    from arena.tournament import ray_executor

    monkeypatch.setattr(ray_executor, "STALL_S", 5.0)
    local, _ = play(tmp_path, "local", "local", games=10)
    done = [0]
    stopped = []

    def stop_actor(plan, result) -> None:
        done[0] += 1
        if done[0] == 6:
            [actor] = referee_actors()
            os.kill(actor, signal.SIGSTOP)
            stopped.append(actor)

    with killed_on_leaving(stopped):
        on_ray, ex = play(tmp_path, "ray", "ray", stop_actor, games=10, concurrency=lanes)
    assert stopped and ex.replaced == 1
    assert on_ray == local


def named_bot(folder: Path, name: str) -> Path:
    """``folder``'s bot, called ``name`` (the hostile bot's modes all call it hostile)."""
    toml = folder / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "hostile"', f'name = "{name}"'))
    return folder


@pytest.mark.parametrize("executor", ["multiprocess", "ray"])
def test_a_match_that_kills_referees_is_told_from_one_that_was_only_beside_it(
        tmp_path, head, executor):
    """One referee plays three matches at once; two of them (with a bot that kills the
    process that started it, outside the sandbox) kill it each time, and the third, a slow
    one, is in flight at each death. Before, the third death stopped the run naming the
    slow match (the first of the three). A match with two deaths is now played alone: the
    slow one finishes and is stored, and the run stops naming a match that killed the
    referee playing it alone."""
    slow = named_bot(hostile(tmp_path / "slow", "slow", "0.1"), "slow")
    killer = named_bot(hostile(tmp_path / "killer", "kill_referee", "4", "0.25"), "killer")
    store = open_store(str(tmp_path / "t.db"))
    settings = Settings(bot_dirs=(str(slow), str(BOTS[0]), str(killer)), table_size=2, games=1,
                        duplicate=False, seed=3)
    t = Tournament.create(store, "t", settings)
    deadly = {p.key for p in t.plan if 2 in p.seats}
    innocent = t.plan[0]
    assert innocent.key not in deadly and len(t.plan) == 3, t.plan
    ex = make_executor(executor, t.setup(3, workers=1, sandbox=SandboxConfig("none"),
                                         log_dir=tmp_path / "logs"))
    with pytest.raises(RuntimeError, match="the last playing it alone") as stopped:
        asyncio.run(t.play(ex, lambda plan, result: None))
    named = str(stopped.value).split()[1]
    assert named in deadly, stopped.value
    assert innocent.key in {m.key for m in store.matches(t.record)}
    store.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("executor, lanes", [("ray", 1), ("ray", 4), ("multiprocess", 2),
                                             ("local", 2)])
def test_a_result_the_store_cannot_keep_stops_the_run_saying_so(tmp_path, head, executor, lanes,
                                                                monkeypatch):
    """On Ray, a store error (PostgreSQL away past its window; here another process holding
    the SQLite file's lock past the busy timeout) escaped from the lane that met it into a
    task nobody awaited: the run lost that match and ended with exit 0 and no resume line
    (4 lanes), or waited for good. Every executor stops with the error, as the
    multi-process one did; what was kept stays, --resume plays the rest."""
    monkeypatch.setenv("ONO99_DB_TIMEOUT", "0.5")   # the write waits 0.5 s for the lock
    db = tmp_path / "t.db"
    store = open_store(str(db))
    settings = Settings(bot_dirs=tuple(map(str, BOTS)), table_size=2, games=6, seed=11)
    t = Tournament.create(store, "t", settings)
    ex = make_executor(executor, t.setup(lanes, log_dir=tmp_path / "logs"))
    heard, holder = [], sqlite3.connect(db, isolation_level=None)

    def lock_after_second(plan, result) -> None:
        heard.append(plan.key)
        if len(heard) == 2:
            holder.execute("BEGIN EXCLUSIVE")      # held until the run has stopped

    try:
        with pytest.raises(StoreError, match="locked"):
            asyncio.run(t.play(ex, lock_after_second))
    finally:
        holder.close()
    kept = {m.key for m in store.matches(t.record)}
    assert kept == set(heard) and len(kept) < len(t.plan), (heard, kept)
    resumed = Tournament.resume(store, "t")
    assert len(resumed.pending()) == len(t.plan) - len(kept)
    store.close()


def test_the_cli_on_two_nodes_with_results_in_postgresql_matches_a_local_run(
        tmp_path, head, second, postgres_url):
    """As an organiser runs it: ``arena tournament --executor ray --ray-address ADDR --db
    postgresql://...`` in its own process, joining the two-node cluster; its standings
    read back with ``arena standings --json``; match for match the results of the
    same tournament on the local executor in SQLite."""
    args = [*map(str, BOTS), "--games", "4", "--seed", "5", "--name", "both", "-q"]
    arena = [sys.executable, "-m", "arena.cli.main"]
    ray_run = subprocess.run(
        [*arena, "tournament", *args, "--executor", "ray", "--ray-address", head.address,
         "--db", postgres_url], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert ray_run.returncode == 0, ray_run.stdout + ray_run.stderr
    assert "24 matches played" in ray_run.stdout, ray_run.stdout
    local_db = str(tmp_path / "local.db")
    local_run = subprocess.run([*arena, "tournament", *args, "--executor", "local", "--db",
                                local_db], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert local_run.returncode == 0, local_run.stdout + local_run.stderr

    def stored(location: str) -> dict:
        store = open_store(location)
        try:
            t = store.tournament("both")
            return {m.key: (m.ranking, m.termination, m.verdicts, m.seed, store.events(m.id))
                    for m in store.matches(t)}
        finally:
            store.close()

    on_ray, local = stored(postgres_url), stored(local_db)
    assert len(on_ray) == 24 and on_ray == local

    def standings(location: str) -> list:
        proc = subprocess.run([*arena, "standings", "both", "--db", location, "--json"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return [(r["bot"], r["matches"], r["wins"]) for r in json.loads(proc.stdout)["standings"]]

    assert standings(postgres_url) == standings(local_db)


def test_a_local_cluster_under_a_deep_temporary_folder_starts(tmp_path, mark):
    """Ray keeps its sessions under $TMPDIR/ray, some 66 bytes above its deepest unix socket:
    under a TMPDIR of 46 bytes it failed to start ("AF_UNIX path length cannot exceed 107
    bytes"). The arena's own local cluster then keeps them in /tmp/ray."""
    from support.processes import env_for

    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "tournament", *map(str, BOTS[:2]), "--games", "1",
         "--executor", "ray", "--db", str(tmp_path / "t.db"), "--seed", "3"],
        cwd=ROOT, env={**env_for(mark), "TMPDIR": str(deep)}, capture_output=True, text=True,
        timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "saved in" in proc.stdout
    # nothing of Ray's own on the arena's stderr (it warned of its token authentication
    # on every run of a local cluster)
    assert "Token authentication" not in proc.stderr, proc.stderr


def test_a_node_without_the_sandbox_refuses_to_play_where_this_machine_has_it(
        tmp_path, monkeypatch):
    """``--sandbox auto`` on every node fell back, where bubblewrap was missing or could
    not work (a pod without user namespaces), to plain processes, its notice in a worker's
    log nobody reads: strangers' bots ran with the node's files, processes and network
    (the cluster's job API among them). Where the driver sandboxes its bots, the nodes are
    sent ``bwrap``, and a node without it cannot start its referee, saying why (the run
    then stops with that line: ``serve`` above)."""
    from arena.bots.sandbox import SandboxConfig, SandboxFactory
    from arena.rules.errors import ConfigError
    from arena.tournament.ray_executor import NodeSetup, RefereeNode
    from support.requirements import missing

    if SandboxFactory.unavailable():
        missing(f"the bot sandbox: {SandboxFactory.unavailable()}")
    store = open_store(str(tmp_path / "t.db"))
    t = Tournament.create(store, "t", Settings(bot_dirs=tuple(map(str, BOTS)), games=1))
    setup = t.setup(2, log_dir=tmp_path / "logs")
    assert setup.sandbox == SandboxConfig()                      # auto, as by default
    node = NodeSetup.of(setup)
    assert node.sandbox.mode == "bwrap"
    monkeypatch.setenv("PATH", str(tmp_path))                   # a node with no bubblewrap
    with pytest.raises(ConfigError, match="--sandbox bwrap: bubblewrap is not installed"):
        asyncio.run(RefereeNode(node, 1, "ray1").start())
    store.close()


def test_what_the_cluster_reports_is_logged_a_line_each_with_a_traceback_s_last(caplog):
    """Ray's driver printed what its cluster reports on the arena's stdout (25 lines of a
    raylet's state dump a node lost); logged at WARNING, the first line of each message
    said all of a raylet's loss, but only "Traceback (most recent call last):" of a
    worker's failure (a worker of another Ray version: the twenty-ninth review). Its last
    line comes too; the whole message at DEBUG."""
    from arena.tournament.ray_executor import _cluster_said

    dump = ("Raylet is terminated. Last 20 lines of the Raylet logs:\n"
            "    [state-dump] NodeManager ...\n    [state-dump] \n")
    failed = ("Traceback (most recent call last):\n  File \"worker.py\", line 3, in main\n"
              "RuntimeError: Version mismatch: Ray 2.60.0 here, 2.59.0 on the node\n")
    introduced = "The autoscaler failed with the following error:\nno such node type\n"
    with caplog.at_level("DEBUG", logger="arena.executor"):
        _cluster_said({"lines": [dump, failed, "", introduced], "pid": "raylet", "is_err": False})
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warned == [
        "the Ray cluster says: Raylet is terminated. Last 20 lines of the Raylet logs:",
        "the Ray cluster says: Traceback (most recent call last): ... RuntimeError: Version "
        "mismatch: Ray 2.60.0 here, 2.59.0 on the node",
        "the Ray cluster says: The autoscaler failed with the following error: ... no such "
        "node type"]
    assert [r.getMessage() for r in caplog.records if r.levelname == "DEBUG"] == [
        f"the Ray cluster says: {m}" for m in (dump, failed, introduced)]
