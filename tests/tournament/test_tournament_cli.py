"""``arena tournament``, ``standings``, ``matches`` and ``show`` as a user runs them: the real
command in a subprocess, real bot processes, a SQLite file in a temporary folder.

A refused request is one error line, a non-zero exit, no traceback and nothing stored; a
bot that keeps crashing is retired and its remaining matches are forfeits; a tournament
killed with SIGKILL or interrupted with Ctrl-C resumes to the very results an
uninterrupted run stores. After every run no bot process is left: each run gets a unique
environment variable, which the bots inherit, and /proc is searched for it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from support.launch import launched
from support.processes import (
    env_for, kill_marked, new_mark, processes_marked, reaped, wait_unmarked,
)
from support.requirements import missing, needs_module

from arena.bench import procs
from arena.store import SQLiteStore, is_url

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
SAMPLES = [BOTS / "random", BOTS / "greedy", BOTS / "counter"]
ROGUE = ROOT / "tests" / "bots" / "rogue.py"

# The interrupted tournaments: long enough (120 matches, about 3 s alone, twice that beside
# the rest of the suite) to be stopped part way; 240 took 2.7 s more of every test here.
LONG = ["--games", "20", "--concurrency", "2", "--seed", "7", "-q"]
LONG_TOTAL = 3 * 20 * 2


# ---------------------------------------------------------------- processes

def command(*args) -> list[str]:
    return [sys.executable, "-m", "arena.cli.main", *map(str, args)]


def arena(mark: str, *args, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``arena ARGS`` to its end; no traceback, no bot process left."""
    proc = subprocess.run(command(*args), cwd=ROOT, env=env_for(mark), capture_output=True,
                          text=True, timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert processes_marked(mark) == [], "bot processes left running"
    return proc


def ok(mark: str, *args, timeout: float = 60) -> subprocess.CompletedProcess:
    proc = arena(mark, *args, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def read_json(mark: str, *args):
    return json.loads(ok(mark, *args, "--json").stdout)


def error_line(proc: subprocess.CompletedProcess, command_name: str = "tournament") -> str:
    """The one error line of a refused command (exit 2, nothing on stdout)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"arena {command_name}: error: "), proc.stderr
    return lines[0]


# ---------------------------------------------------------------- bot folders and the store

def copy_bot(sample: Path, folder: Path, name: str) -> Path:
    """A copy of a sample bot under another name."""
    shutil.copytree(sample, folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml.replace(f'name = "{sample.name}"', f'name = "{name}"'))
    return folder


def rogue_bot(folder: Path, mode: str, trigger: int, name: str = "rogue") -> Path:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["{{python}}", "rogue.py", "{mode}", "{trigger}"]\n')
    shutil.copy(ROGUE, folder / "rogue.py")
    return folder


def stored(db: Path) -> dict[str, int]:
    """Rows of every table, read-only."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}


def copy_db(source: Path, target: Path) -> None:
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    dst.close()
    src.close()


def pg_rows(url: str, sql: str, *params) -> list[tuple]:
    """Every row of one query on a PostgreSQL database, on a connection of its own."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql, params or None).fetchall()


def stored_matches(db: Path | str) -> int:
    """Rows of ``matches`` (0 before the table exists), read while a tournament writes."""
    if is_url(str(db)):
        import psycopg

        try:
            return pg_rows(db, "SELECT COUNT(*) FROM matches")[0][0]
        except psycopg.errors.UndefinedTable:
            return 0
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def keys_stored(db: Path | str, name: str) -> list[str]:
    """Every stored key of tournament ``name``, duplicates included."""
    if is_url(str(db)):
        return [r[0] for r in pg_rows(
            db, "SELECT m.key FROM matches m JOIN tournaments t ON t.id = m.tournament_id "
            "WHERE t.name = %s", name)]
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [r[0] for r in conn.execute(
            "SELECT m.key FROM matches m JOIN tournaments t ON t.id = m.tournament_id "
            "WHERE t.name = ?", (name,))]


# ---------------------------------------------------------------- a tournament and its reports

def test_a_tournament_prints_its_schedule_and_standings_and_stores_every_match(tmp_path, mark):
    db = tmp_path / "arena.db"
    proc = ok(mark, "tournament", *SAMPLES, "--games", 3, "--name", "three", "--db", db,
              "--logs", tmp_path / "logs")
    out = proc.stdout
    assert proc.stderr == ""
    assert "3 bots, 3 tables of 2, 3 deals each x 2 seat rotations (duplicate): 18 matches\n" in out
    assert "[18/18] " in out  # a line per match when the output is not a terminal
    assert "standings of three (batch fit)" in out
    assert "likelihood of superiority" in out
    assert f"saved in {db}; see: arena standings three --db {db}" in out
    standing_rows = [line for line in out.splitlines() if line.startswith("│")
                     and any(f" {b} " in line for b in ("random", "greedy", "counter"))]
    assert len(standing_rows) >= 3

    matches = read_json(mark, "matches", "three", "--db", db)
    assert len(matches) == 18
    assert len({m["key"] for m in matches}) == 18
    assert {m["tournament"] for m in matches} == {"three"}
    assert all(m["status"] == "finished" and m["verdicts"] == [] for m in matches)
    assert all(sorted(s for g in m["ranking"] for s in g) == [0, 1] for m in matches)
    for bot in ("random", "greedy", "counter"):
        assert sum(bot in m["bots"] for m in matches) == 12
    samples = {}
    for m in matches:
        samples.setdefault(m["sample"], []).append(m)
    assert len(samples) == 9
    for group in samples.values():  # a duplicate deal: one seed, both seatings
        assert len(group) == 2 and group[0]["seed"] == group[1]["seed"]
        assert group[0]["bots"] == group[1]["bots"][::-1]

    board = read_json(mark, "standings", "three", "--db", db)
    assert board["tournament"] == "three"
    lines = board["standings"]
    assert [line["rank"] for line in lines] == [1, 2, 3]
    assert {line["bot"] for line in lines} == {"random", "greedy", "counter"}
    assert all(line["matches"] == 12 and line["faults"] == {} for line in lines)
    assert sum(line["wins"] for line in lines) == 18
    assert [line["elo"] for line in lines] == sorted((line["elo"] for line in lines), reverse=True)
    assert set(board["los"]) == {"random", "greedy", "counter"}
    assert all(set(row) == {"random", "greedy", "counter"} for row in board["los"].values())
    assert math.isclose(board["los"]["random"]["greedy"] + board["los"]["greedy"]["random"], 1,
                        abs_tol=2e-4)

    first = matches[0]
    shown = read_json(mark, "show", first["id"], "--db", db)
    assert {k: v for k, v in shown.items() if k != "events"} == first
    assert shown["events"] and shown["events"][0]["kind"] == "deal"
    assert any(e["kind"] == "play" for e in shown["events"])
    # by the id spectators see (arena watch prints it), as arena replay takes it
    assert read_json(mark, "show", first["match_uid"], "--db", db) == shown
    missing = error_line(arena(mark, "show", "feedfacefeedface", "--db", db), "show")
    assert missing.endswith(f"no match 'feedfacefeedface' in {db} (give the number arena "
                            "matches shows, or the match id spectators see)")

    text = ok(mark, "standings", "three", "--db", db).stdout
    assert "standings of three (18 matches)" in text and "counter" in text
    text = ok(mark, "matches", "three", "--db", db).stdout
    assert "matches of three" in text and first["key"] in text
    text = ok(mark, "show", first["id"], "--db", db).stdout
    assert text.startswith(f"match {first['id']} ({first['key']}) of three: modern, seed {first['seed']}")
    assert "result: " in text
    # with no name, the latest tournament
    assert read_json(mark, "standings", "--db", db)["tournament"] == "three"
    # printed a match at a time, as json.dumps prints the list
    store = SQLiteStore(db)
    try:
        every = [m.to_dict() for m in store.matches(store.tournament("three"))]
    finally:
        store.close()
    assert ok(mark, "matches", "--db", db, "--json").stdout == json.dumps(every, indent=2) + "\n"
    assert read_json(mark, "matches", "--db", db, "--limit", 5) == every[-5:]
    assert read_json(mark, "matches", "--db", db, "--limit", 500) == every
    for limit in (0, -1):   # an empty table, without a word, before
        proc = arena(mark, "matches", "--db", db, "--limit", limit)
        assert proc.returncode == 2 and proc.stderr == (f"arena matches: error: --limit must be "
                                                        f"at least 1, not {limit}\n"), proc.stderr


@pytest.mark.parametrize("case", ["3 seats of 4 bots", "no duplicates", "3 seats, no duplicates"])
def test_table_size_and_duplicates_decide_the_match_count(tmp_path, mark, case):
    table_size, duplicate, games = {"3 seats of 4 bots": (3, True, 2),
                                    "no duplicates": (2, False, 3),
                                    "3 seats, no duplicates": (3, False, 2)}[case]
    bots = SAMPLES + ([copy_bot(BOTS / "random", tmp_path / "random2", "random2")]
                      if table_size == 3 else [])
    n = len(bots)
    tables = math.comb(n, table_size)
    expected = tables * games * (table_size if duplicate else 1)
    db = tmp_path / "arena.db"
    args = ["--table-size", table_size, "--games", games] + ([] if duplicate else ["--no-duplicate"])
    proc = ok(mark, "tournament", *bots, *args, "--name", "t", "--db", db, "--logs",
              tmp_path / "logs", "-q")
    rotations = f"x {table_size} seat rotations (duplicate)" if duplicate else "(no duplicates)"
    assert (f"{n} bots, {tables} tables of {table_size}, {games} deals each {rotations}: "
            f"{expected} matches\n") in proc.stdout

    matches = read_json(mark, "matches", "t", "--db", db)
    assert len(matches) == expected
    assert len({m["key"] for m in matches}) == expected
    assert all(len(m["bots"]) == table_size and len(set(m["bots"])) == table_size for m in matches)
    assert all(m["status"] == "finished" for m in matches)
    per_sample = table_size if duplicate else 1
    assert len({m["sample"] for m in matches}) == expected // per_sample
    lines = read_json(mark, "standings", "t", "--db", db)["standings"]
    assert len(lines) == n
    # every bot sits at C(n-1, K-1) of the tables
    assert {line["matches"] for line in lines} == {expected * table_size // n}


# ---------------------------------------------------------------- refusals

@pytest.fixture(scope="module")
def known_db(tmp_path_factory):
    """A database holding one small finished tournament called ``known``."""
    folder = tmp_path_factory.mktemp("known")
    db = folder / "arena.db"
    value = new_mark()
    try:
        ok(value, "tournament", BOTS / "random", BOTS / "greedy", "--games", 1, "--name", "known",
           "--db", db, "--logs", folder / "logs", "-q")
    finally:
        kill_marked(value)
    return db


REFUSALS = {
    # case: (arguments, uses the database with "known", expected in the error line)
    "table larger than the bots": ([BOTS / "random", BOTS / "greedy", "--table-size", 3], False,
                                   "--table-size 3 needs at least 3 bots, but 2 were given"),
    "two bots of one name": ([BOTS / "random", "{random copy}"], False,
                             "two bots are named 'random'"),
    # they read alike in every table, and their log folders are one where case is ignored
    "two bots of one name but for case": ([BOTS / "random", "{Random copy}"], False,
                                          "two bots are named 'random' and 'Random'"),
    "one bot": ([BOTS / "random"], False, "a tournament needs at least 2 bot folders, got 1"),
    "no bot": ([], False, "a tournament needs at least 2 bot folders, got 0"),
    "resume with bot folders": ([BOTS / "random", BOTS / "greedy", "--resume", "known"], True,
                                "--resume takes the bots and settings stored with the "
                                "tournament; give no bot folders"),
    "resume an unknown name": (["--resume", "nope"], True,   # the latest first
                               "no tournament called 'nope' in {db}; known: old, known"),
    "resume without a database": (["--resume", "known"], False, "no database at {db}"),
    "resume with another --games": (["--resume", "known", "--games", 5], True,
                                    "--resume keeps the stored settings; drop --games"),
    # given at all, even equal to its default (10): the stored tournament may differ
    "resume with --games at its default": (["--resume", "known", "--games", 10,
                                            "--move-time", 1],
                                           True, "--resume keeps the stored settings; drop "
                                           "--games, --move-time"),
    "resume with another --seed and --table-size": (
        ["--resume", "known", "--seed", 3, "--table-size", 3], True,
        "--resume keeps the stored settings; drop --table-size, --seed"),
    "resume without duplicates or phases": (
        ["--resume", "known", "--no-duplicate", "--no-phases"], True,
        "--resume keeps the stored settings; drop --no-duplicate, --no-phases"),
    # a repeatable option: its check was a traceback
    "resume with an --option": (["--resume", "known", "--option", "max_total=99"], True,
                                "--resume keeps the stored settings; drop --option"),
    # how its bots run is part of it: half a tournament unsandboxed, or on other limits
    "resume with the sandbox off and other limits": (
        ["--resume", "known", "--sandbox", "none", "--limit", "memory=512"], True,
        "--resume keeps the stored settings; drop --sandbox, --limit"),
    "resume a tournament of an older arena": (["--resume", "old"], True,
                                              "tournament 'old' was stored by an older arena, "
                                              "whose deals came from public seeds"),
    "a name that exists": ([BOTS / "counter", "{random copy}", "--name", "known"], True,
                           "a tournament called 'known' already exists in {db}"),
    "no concurrency": ([BOTS / "random", BOTS / "greedy", "--concurrency", 0], False,
                       "--concurrency must be at least 1"),
    "no retirement": ([BOTS / "random", BOTS / "greedy", "--retire-after", 0], False,
                      "--retire-after must be at least 1"),
    # as arena match refuses them: 0 s failed every bot's start; -1 was taken
    "no connect time": ([BOTS / "random", BOTS / "greedy", "--connect-timeout", 0], False,
                        "--connect-timeout must be positive"),
    "negative rejections": ([BOTS / "random", BOTS / "greedy", "--max-rejections", -1], False,
                            "--max-rejections must be at least 0"),
    "a cluster address without ray": ([BOTS / "random", BOTS / "greedy", "--ray-address",
                                       "10.0.0.5:6379"], False,
                                      "--ray-address is the cluster of --executor ray"),
    "a cluster address that is none": ([BOTS / "random", BOTS / "greedy", "--executor", "ray",
                                        "--ray-address", "head-node"], False,
                                       "--ray-address 'head-node' is not HOST:PORT"),
    # exit 1 after a name lookup or a connect (review 36)
    "a cluster address with no host": ([BOTS / "random", BOTS / "greedy", "--executor", "ray",
                                        "--ray-address", ":6379"], False,
                                       "--ray-address ':6379' is not HOST:PORT"),
    "a cluster port past 65535": ([BOTS / "random", BOTS / "greedy", "--executor", "ray",
                                   "--ray-address", "127.0.0.1:99999"], False,
                                  "--ray-address '127.0.0.1:99999' is not HOST:PORT"),
    "no games": ([BOTS / "random", BOTS / "greedy", "--games", 0], False,
                 "--games 0 is not allowed; every table plays at least one deal"),
    # the printed commands (--resume NAME, arena standings NAME) read it as an option
    "a name like an option": ([BOTS / "random", BOTS / "greedy", "--name=-x"], False,
                              "--name '-x' is not allowed: it may not start with '-' (it would "
                              "read as an option)"),
    "an empty name": ([BOTS / "random", BOTS / "greedy", "--name", ""], False,
                      "--name '' is not allowed: 1 to 64 characters"),
    "a name with a format character": ([BOTS / "random", BOTS / "greedy", "--name", "a\u202eb"],
                                       False, "--name 'a\\u202eb' is not allowed: no control or "
                                       "format characters (it holds U+202E)"),
    # its plan grew to 400 MB in 8 s without a word, on its way to every byte there is
    "a typo of a game count": ([BOTS / "random", BOTS / "greedy", "--games", 99999999999], False,
                               "--games 99,999,999,999 makes a tournament of 199,999,999,998 "
                               "matches, more than one tournament plays (at most 1,000,000)"),
}


def failed_line(proc: subprocess.CompletedProcess, command_name: str = "tournament") -> str:
    """The one error line of a command that failed (exit 1, nothing on stdout)."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"arena {command_name}: error: "), proc.stderr
    return lines[0]


def test_a_cluster_address_where_something_else_answers_is_refused_at_once(tmp_path, mark):
    """A --ray-address whose port answered, but not as Ray (the review gave PostgreSQL's),
    held the tournament in Ray's retries for over 2 minutes, with no word of the arena's.
    A cluster not there is a failure (exit 1), as a server not there is; it exited 2, as a
    bad option does."""
    with socket.create_server(("127.0.0.1", 0)) as listener:   # accepts, never speaks
        port = listener.getsockname()[1]
        t0 = time.monotonic()
        proc = arena(mark, "tournament", BOTS / "random", BOTS / "greedy", "--executor", "ray",
                     "--ray-address", f"127.0.0.1:{port}", "--db", tmp_path / "t.db",
                     "--logs", tmp_path / "logs")
    assert time.monotonic() - t0 < 30
    assert (f"127.0.0.1:{port} answers, but not as a Ray cluster (no gRPC there within 5 s): "
            "give the address 'ray start --head' printed") in failed_line(proc)
    assert not (tmp_path / "t.db").exists()
    proc = arena(mark, "tournament", BOTS / "random", BOTS / "greedy", "--executor", "ray",
                 "--ray-address", f"127.0.0.1:{port}", "--db", tmp_path / "t.db",
                 "--logs", tmp_path / "logs")          # the port closed: nobody runs it
    assert failed_line(proc).endswith(f"cannot reach the Ray cluster at 127.0.0.1:{port}: "
                                      "Connection refused (is 'ray start --head' running there?)")
    assert not (tmp_path / "t.db").exists()


def test_a_cluster_address_where_another_grpc_service_answers_is_refused_at_once(tmp_path, mark):
    """A --ray-address of a gRPC server that is not Ray's (a referee's, an arena server's
    port) held the tournament in ray.init for 13 minutes, its empty tournament stored,
    then named a token this machine has as the cause."""
    server = grpc.server(ThreadPoolExecutor(1))   # serves nothing: UNIMPLEMENTED to all
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        t0 = time.monotonic()
        proc = arena(mark, "tournament", BOTS / "random", BOTS / "greedy", "--executor", "ray",
                     "--ray-address", f"127.0.0.1:{port}", "--db", tmp_path / "t.db",
                     "--logs", tmp_path / "logs")
    finally:
        server.stop(None)
    assert time.monotonic() - t0 < 30
    assert failed_line(proc).endswith(f"127.0.0.1:{port} answers gRPC, but not as a Ray cluster "
                                      "(another service): give the address 'ray start --head' "
                                      "printed (its GCS port, 6379 by default)")
    assert not (tmp_path / "t.db").exists()


def test_a_cluster_that_asks_for_a_token_not_sent_is_refused_at_once(tmp_path, mark, monkeypatch):
    """A head started with token authentication, joined by address where RAY_AUTH_MODE is
    not set (Ray then sends no token): Ray was refused after 20 s of retries, and the
    tournament's empty row was left stored, the latest for `arena standings`."""
    needs_module("ray")
    with socket.socket() as probe:     # a free port for the head's GCS
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray_cli = Path(sys.executable).with_name("ray")
    ours = new_mark()      # the head's processes, apart from the arena's bots
    env = {**env_for(ours), "RAY_AUTH_MODE": "token"}
    head = subprocess.Popen([ray_cli, "start", "--head", "--block", "--port", str(port),
                             "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
                             "--include-dashboard", "false", "--disable-usage-stats"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _answers_grpc(address) and time.monotonic() < deadline:
            assert head.poll() is None, "ray start --head failed"
            time.sleep(0.5)
        t0 = time.monotonic()
        proc = arena(mark, "tournament", BOTS / "random", BOTS / "greedy", "--executor", "ray",
                     "--ray-address", address, "--db", tmp_path / "t.db",
                     "--logs", tmp_path / "logs")
        took = time.monotonic() - t0
        # RAY_AUTH_MODE set, but not to token ('disabled', as Ray's notice at every local
        # start suggests): Ray sends no token either, and was refused after 20 s
        monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
        t0 = time.monotonic()
        disabled = arena(mark, "tournament", BOTS / "random", BOTS / "greedy", "--executor",
                         "ray", "--ray-address", address, "--db", tmp_path / "t.db",
                         "--logs", tmp_path / "logs")
        took_disabled = time.monotonic() - t0
        # a wrong token, sent: the check leaves it to Ray, which refuses it as this process
        # joins, before anything is stored
        monkeypatch.setenv("RAY_AUTH_MODE", "token")
        monkeypatch.setenv("RAY_AUTH_TOKEN", "0" * 32)
        wrong = arena(mark, "tournament", BOTS / "random", BOTS / "greedy", "--executor", "ray",
                      "--ray-address", address, "--db", tmp_path / "t.db",
                      "--logs", tmp_path / "logs", timeout=120)
    finally:
        kill_marked(ours)        # the head's processes (SIGTERM took 'ray start' > 30 s)
        head.wait(30)
    assert took < 15 and took_disabled < 15
    for refused in (proc, disabled):
        assert failed_line(refused).endswith(
            f"the Ray cluster at {address} asks for a token (it was started with token "
            "authentication): set RAY_AUTH_MODE=token here, with the cluster's token in "
            "~/.ray/auth_token or RAY_AUTH_TOKEN")
    assert not (tmp_path / "t.db").exists()
    assert wrong.returncode == 1, wrong.stderr
    assert f"arena tournament: error: cannot reach the Ray cluster at {address}" in wrong.stderr
    assert "Resume with" not in wrong.stderr
    assert not (tmp_path / "t.db").exists()       # an empty tournament was left stored


def test_a_name_taken_is_refused_before_the_cluster_is_joined(tmp_path, mark, monkeypatch):
    """What the database refuses at once (a --name taken, a database another process
    holds) is said before the executor's cluster is joined: the join, moved before the
    tournament is stored, came first, and a name taken started a local Ray cluster for
    nothing (14 s before the error line, where it took 1 s)."""
    needs_module("ray")
    db = tmp_path / "t.db"
    ok(mark, "tournament", BOTS / "random", BOTS / "greedy", "--games", 1, "--name", "taken",
       "--db", db, "--logs", tmp_path / "logs", "--quiet")
    # a temporary folder short enough for Ray's sockets: a local cluster keeps its
    # sessions there (ray/), which is how one started is seen
    short = Path(tempfile.mkdtemp(prefix="o99t-", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(short))
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    try:
        proc = arena(mark, "tournament", BOTS / "random", BOTS / "greedy", "--name", "taken",
                     "--executor", "ray", "--db", db, "--logs", tmp_path / "logs")
        started = (short / "ray").exists()
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert "a tournament called 'taken' already exists in" in error_line(proc)
    assert not started


def _answers_grpc(address: str) -> bool:
    channel = grpc.insecure_channel(address)
    try:
        grpc.channel_ready_future(channel).result(timeout=1)
        return True
    except grpc.FutureTimeoutError:
        return False
    finally:
        channel.close()


@pytest.mark.timeout(300)
def test_a_ray_cluster_that_lost_its_only_node_is_said_at_once(tmp_path, mark):
    """kill -9 of the only raylet (the review's, on its own cluster): the run stopped 2.5
    minutes later, at the placement limit, saying "no node with a free CPU". It stops
    once no actor has been placed for 10 s and the cluster knows no live node, saying so,
    with what is stored and the resume line. What the cluster reports goes to the log, a
    line each: Ray's driver printed some 25 lines of the raylet's state dump on stdout."""
    from arena.bench.procs import descendants

    needs_module("ray")
    db = tmp_path / "t.db"
    proc = subprocess.Popen(command("tournament", BOTS / "ismcts", BOTS / "greedy", "--games", 100,
                                    "--name", "lost", "--db", db, "--logs", tmp_path / "logs",
                                    "--executor", "ray", "--concurrency", 2, "-q"),
                            # the cluster it starts notices a lost node in about a second
                            # (Ray's system settings; its default waits some 15 s more)
                            cwd=ROOT, env={**env_for(mark), "RAY_health_check_period_ms": "200",
                                           "RAY_health_check_failure_threshold": "3"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        deadline = time.monotonic() + 120
        while (not db.exists() or stored_matches(db) < 4) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.2)
        raylets = [pid for pid, cmd in descendants(proc.pid) if b"raylet/raylet" in cmd]
        assert len(raylets) == 1, raylets
        os.kill(raylets[0], signal.SIGKILL)
        killed = time.monotonic()
        stdout, stderr = proc.communicate(timeout=150)
    took = time.monotonic() - killed
    assert proc.returncode == 1, stderr
    assert "raylet" not in stdout.lower() and stdout.count("\n") == 2, stdout   # its header
    assert "the Ray cluster says: " in stderr and "state-dump" not in stderr, stderr
    assert ("arena tournament: error: the Ray cluster has no live node left (its raylets were "
            "lost); --resume plays what is left on a cluster that has one") in stderr, stderr
    assert "arena tournament --resume lost --db" in stderr and "--executor ray" in stderr
    assert took < 90, f"said {took:.0f} s after the raylet's loss"
    assert wait_unmarked(mark, 10) == [], "processes left running"


#: A cluster of its own for a test (a head and a second node, one CPU each, lost nodes
#: noticed within about a second), in a process of its own: it prints its address, kills
#: its head's raylet at a line on stdin, and ends (the cluster with it) at stdin's end.
OWN_CLUSTER = """
import sys
from ray.cluster_utils import Cluster
cluster = Cluster(initialize_head=True, connect=False, head_node_args={
    "num_cpus": 1, "include_dashboard": False,
    "_system_config": {"health_check_period_ms": 200, "health_check_failure_threshold": 3,
                       "health_check_initial_delay_ms": 0}})
cluster.add_node(num_cpus=1)
cluster.wait_for_nodes()
print(cluster.address, flush=True)
try:
    if sys.stdin.readline():
        cluster.head_node.all_processes["raylet"][0].process.kill()
        print("killed", flush=True)
        sys.stdin.readline()
finally:
    cluster.shutdown()
"""


@contextlib.contextmanager
def ended_by_stdin(proc: subprocess.Popen):
    """``proc`` told to end by the end of its stdin on leaving, and waited for (killed,
    a cluster's processes were left running)."""
    try:
        yield proc
    finally:
        proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=60)


def test_a_run_whose_own_node_is_lost_says_so_at_once(tmp_path, mark):
    """kill -9 of the raylet of the node the driver joined the cluster through, the other
    node alive (the twenty-seventh review's): every actor was lost to the driver, none
    placed again, and the run stopped at the placement limit, 2 minutes later, saying
    "no node with a free CPU". It says what happened, once no actor has been placed for
    10 s."""
    needs_module("ray")
    db = tmp_path / "t.db"
    cluster = subprocess.Popen([sys.executable, "-c", OWN_CLUSTER], env=env_for(mark), text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    with reaped(cluster), ended_by_stdin(cluster):
        address = cluster.stdout.readline().strip()
        assert address, "the cluster did not start"
        proc = subprocess.Popen(command("tournament", BOTS / "random", BOTS / "greedy",
                                        "--games", 100, "--name", "own", "--db", db,
                                        "--executor", "ray", "--ray-address", address,
                                        "--concurrency", 2, "-q"),
                                cwd=ROOT, env=env_for(mark), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        with reaped(proc):
            deadline = time.monotonic() + 120
            while (not db.exists() or stored_matches(db) < 4) and time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.2)
            print("kill", file=cluster.stdin, flush=True)
            assert cluster.stdout.readline() == "killed\n"
            killed = time.monotonic()
            _, stderr = proc.communicate(timeout=150)
        took = time.monotonic() - killed
    assert proc.returncode == 1, stderr
    assert ("arena tournament: error: the Ray node this process joined the cluster through "
            "was lost (its raylet); --resume plays what is left") in stderr, stderr
    assert "arena tournament --resume own --db" in stderr
    assert took < 60, f"said {took:.0f} s after the raylet's loss"
    assert wait_unmarked(mark, 10) == [], "processes left running"


def test_one_listen_address_is_refused_for_referees_in_several_processes(tmp_path, mark):
    """The thirty-sixth review: every referee process was given the one --listen. On a
    port, the workers after the first failed to bind (exit 1, the tournament stored with
    none of its matches); on a unix socket, each took it over from the one before, and
    bots reached another process's referee, which refused their tokens: *crashed* and
    *retired* verdicts, the arena's fault charged to the bots. Refused before anything is
    stored; `auto` plays such a tournament on the local executor, on that address."""
    where = f"unix:{tmp_path / 'r.sock'}"
    refused = subprocess.run(command("tournament", BOTS / "random", BOTS / "greedy", "--db",
                                     tmp_path / "t.db", "--executor", "multiprocess",
                                     "--listen", where), cwd=ROOT, env=env_for(mark),
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stdout == "", refused.stdout
    assert error_line(refused) == (
        f"arena tournament: error: --listen {where} is one address, and each referee process "
        "needs its own: give 'unix', 'tcp' or HOST:0 (a free port each), or use the local "
        "executor")
    assert not (tmp_path / "t.db").exists()
    played = subprocess.run(command("tournament", BOTS / "random", BOTS / "greedy",
                                    BOTS / "counter", "--games", 4, "--concurrency", 2, "--db",
                                    tmp_path / "t.db", "--listen", where, "-q"),
                            cwd=ROOT, env=env_for(mark), capture_output=True, text=True,
                            timeout=120)
    assert played.returncode == 0, played.stderr
    assert "24 matches played" in played.stdout and "faults: none" in played.stdout, played.stdout


def test_the_ray_executor_without_ray_installed_is_one_line(tmp_path, mark):
    """In a Python without Ray (an install without its dependencies), --executor ray was
    a traceback ending in "No module named 'ray'"."""
    script = ("import sys; sys.modules['ray'] = None\n"   # as if not installed: import fails
              "from arena.cli.main import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", script, "tournament", str(BOTS / "random"),
                           str(BOTS / "greedy"), "--executor", "ray", "--db",
                           str(tmp_path / "t.db")], cwd=ROOT, env=env_for(mark),
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "--executor ray needs Ray, which is not installed in this Python: pip install " \
        "'ray>=2.9'" in error_line(proc), proc.stderr


def test_how_its_bots_run_is_stored_with_a_tournament_for_its_resume(tmp_path, mark):
    """--resume took --sandbox none and other limits: half a tournament could be played
    unsandboxed, or on other limits. They are stored with it now, and its resume uses
    them (and refuses the flags: see REFUSALS)."""
    from arena.tournament.tournament import Settings

    db = tmp_path / "arena.db"
    ok(mark, "tournament", BOTS / "random", BOTS / "greedy", "--games", 1, "--name", "kept",
       "--sandbox", "none", "--limit", "memory=512", "--limit", "cpu=60", "--db", db,
       "--logs", tmp_path / "logs", "-q")
    with sqlite3.connect(db) as conn:
        stored = json.loads(conn.execute("SELECT settings FROM tournaments").fetchone()[0])
    conn.close()
    assert (stored["sandbox"], stored["limits"]) == ("none", ["memory=512", "cpu=60"])
    settings = Settings.from_dict(stored)
    assert (settings.sandbox, settings.limits) == ("none", ("memory=512", "cpu=60"))


def test_an_unnamed_tournament_takes_a_number_where_its_default_name_is_taken(tmp_path):
    """Two tournaments started in one second into one database both took the default
    name t-DATE-TIME: the second was refused and told to resume the first, which another
    process was playing."""
    from arena.cli.tournament_here import _create_unnamed
    from arena.store import open_store
    from arena.tournament.tournament import Settings

    store = open_store(str(tmp_path / "arena.db"))
    try:
        settings = Settings(bot_dirs=(str(BOTS / "random"), str(BOTS / "greedy")), games=1)
        names = [_create_unnamed(store, "t-20261204-193427", settings).name for _ in range(3)]
        assert names == ["t-20261204-193427", "t-20261204-193427-2", "t-20261204-193427-3"]
    finally:
        store.close()


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refused_tournament_is_one_line_and_stores_nothing(tmp_path, mark, known_db, case):
    args, existing, expected = REFUSALS[case]
    if existing:
        db = tmp_path / "arena.db"
        copy_db(known_db, db)
        with sqlite3.connect(db) as conn:   # as an arena before secret seeds stored it
            settings = json.loads(conn.execute("SELECT settings FROM tournaments").fetchone()[0])
            for key in ("seeding", "secret", "phases"):
                del settings[key]
            conn.execute("INSERT INTO tournaments (name, created_at, settings) VALUES (?, ?, ?)",
                         ("old", 0.0, json.dumps({**settings, "seed": 1})))
        conn.close()
        before = stored(db)
    else:
        db = tmp_path / "new.db"
    if "{random copy}" in args:  # a second folder whose bot.toml also says "random"
        copy = shutil.copytree(BOTS / "random", tmp_path / "random-copy",
                               ignore=shutil.ignore_patterns("__pycache__"))
        (copy / "extra.txt").write_text("a version no database has seen\n")
        args = [copy if a == "{random copy}" else a for a in args]
    if "{Random copy}" in args:  # the same, its bot.toml saying "Random"
        copy = shutil.copytree(BOTS / "random", tmp_path / "Random-copy",
                               ignore=shutil.ignore_patterns("__pycache__"))
        toml = copy / "bot.toml"
        toml.write_text(toml.read_text().replace('name = "random"', 'name = "Random"'))
        args = [copy if a == "{Random copy}" else a for a in args]
    proc = arena(mark, "tournament", *args, "--db", db, "--logs", tmp_path / "logs")
    line = error_line(proc)
    assert expected.format(db=db) in line
    if existing:
        assert stored(db) == before, "a refused tournament changed the database"
    else:
        assert not db.exists(), "a refused tournament created the database"
    assert not (tmp_path / "logs").exists()


def test_the_readers_refuse_a_missing_or_empty_database(tmp_path, mark, known_db):
    missing = tmp_path / "missing.db"
    for reader in (["standings"], ["matches"], ["show", 1]):
        line = error_line(arena(mark, *reader, "--db", missing), reader[0])
        assert line.endswith(f"no database at {missing} (give --db PATH|URL; tournaments write "
                             "./arena.db by default)")
    assert not missing.exists()

    empty = tmp_path / "empty.db"
    from arena.store import open_store
    open_store(str(empty)).close()  # a database with the schema and no tournament
    for reader in (["standings"], ["standings", "--json"], ["matches"]):
        line = error_line(arena(mark, *reader, "--db", empty), reader[0])
        assert line.endswith(f"no tournament in {empty} yet")
    assert error_line(arena(mark, "show", 1, "--db", empty), "show").endswith(f"no match 1 in {empty}")
    line = error_line(arena(mark, "standings", "nope", "--db", known_db), "standings")
    assert line.endswith(f"no tournament called 'nope' in {known_db}; known: known")


def test_a_database_that_does_not_answer_is_exit_1_and_one_that_is_none_exit_2(tmp_path, mark):
    """Exit 2 is a request to change (a file that is no database); exit 1 a database that
    failed (no server answers at the URL), which may work later: every command exited 2
    for both, as for a bad option."""
    needs_module("psycopg")
    url = "postgresql://arena@127.0.0.1:1/arena"          # nothing listens at port 1
    garbage = tmp_path / "garbage.db"
    garbage.write_text("not a database\n")
    for args in (["standings"], ["matches"], ["show", "1"],
                 ["tournament", BOTS / "random", BOTS / "greedy", "--games", 1,
                  "--logs", tmp_path / "logs"]):
        proc = arena(mark, *args, "--db", url)
        assert proc.returncode == 1 and proc.stdout == "", proc.stdout + proc.stderr
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            f"arena {args[0]}: error: cannot connect to {url}: "), proc.stderr
        line = error_line(arena(mark, *args, "--db", garbage), args[0])
        assert line.endswith(f"cannot open database {garbage}: file is not a database")


@pytest.mark.parametrize("reader", [["matches", "--json"], ["standings", "--json"], ["show", "1"]])
def test_a_reader_whose_output_is_closed_stops_quietly(mark, known_db, reader):
    """``arena matches --json | head``: whoever reads the output goes away. The JSON
    readers ended with a BrokenPipeError traceback; now every reader stops quietly, exit
    status 1 (what rich does for the tables)."""
    proc = subprocess.Popen(command(*reader, "--db", known_db), cwd=ROOT, env=env_for(mark),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()                  # gone before a byte is written: the write fails
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 1, stderr
    assert stderr == ""


# ---------------------------------------------------------------- retirement

@pytest.mark.parametrize("executor", ["local", "multiprocess", "ray"])
def test_a_bot_that_keeps_crashing_is_retired_and_forfeits_the_rest(tmp_path, mark, executor):
    """One rule, whichever executor plays: the ledger counts crashes from the results."""
    crasher = rogue_bot(tmp_path / "crasher", "exit", 1)  # exits at its first turn
    db = tmp_path / "arena.db"
    proc = ok(mark, "tournament", BOTS / "random", BOTS / "greedy", crasher, "--games", 2,
              "--retire-after", 2, "--concurrency", 1, "--name", "r", "--db", db,
              "--logs", tmp_path / "logs", "--executor", executor, timeout=120)
    retire = [line for line in proc.stdout.splitlines() if "is retired" in line]
    assert retire == ["rogue is retired: after 2 crashes or failed starts (last: bot "
                      "process exited with code 1)"], proc.stdout

    matches = read_json(mark, "matches", "r", "--db", db)
    assert len(matches) == 12
    assert all(m["status"] == "finished" for m in matches)
    kinds = []
    for m in matches:
        if "rogue" not in m["bots"]:
            assert m["verdicts"] == [] and m["turns"] > 0 and m["termination"] == "last_standing"
            continue
        seat = m["bots"].index("rogue")
        other = 1 - seat
        assert [v["seat"] for v in m["verdicts"]] == [seat]
        assert m["ranking"] == [[other], [seat]]
        kinds.append(m["verdicts"][0]["kind"])
    # in the order played: two crashes, then forfeits
    assert kinds == ["crashed"] * 2 + ["retired"] * 6
    assert (tmp_path / "logs").is_dir()

    lines = {line["bot"]: line for line in read_json(mark, "standings", "r", "--db", db)["standings"]}
    assert lines["rogue"]["faults"] == {"crashed": 2, "retired": 6}
    assert lines["rogue"]["wins"] == 0 and lines["rogue"]["matches"] == 8
    assert lines["random"]["faults"] == lines["greedy"]["faults"] == {}
    assert lines["random"]["wins"] + lines["greedy"]["wins"] == 12


def test_what_a_crashing_bot_printed_stays_out_of_every_verdict(tmp_path, mark):
    """A verdict goes to every seat of the match, to the spectators and into the stored
    record; a crash's quoted the bot's last stderr lines, and a failed start's its folder
    too (on a server: where the organiser keeps it). A sandboxed bot printed what it
    could read and crashed, and the world was shown it. They stay in its log."""
    blurter = tmp_path / "blurter"
    blurter.mkdir()
    (blurter / "bot.toml").write_text('name = "blurter"\ncommand = ["{python}", "bot.py"]\n')
    (blurter / "bot.py").write_text(
        "import os, sys\nfrom ono99.bot import Bot, run\n\n"
        "class Blurter(Bot):\n"
        "    def choose(self, view):\n"
        "        print('SECRET-0451', file=sys.stderr, flush=True)\n"
        "        os._exit(3)\n\n"
        "raise SystemExit(run(Blurter(), []))\n")
    quitter = tmp_path / "quitter"           # exits before it connects
    quitter.mkdir()
    (quitter / "bot.toml").write_text(
        'name = "quitter"\ncommand = ["{python}", "-c", '
        '"import sys; sys.stderr.write(\'SECRET-0452\\\\n\'); sys.exit(7)"]\n')
    db = tmp_path / "arena.db"
    ok(mark, "tournament", BOTS / "random", blurter, quitter, "--games", 1, "--concurrency", 1,
       "--name", "b", "--db", db, "--logs", tmp_path / "logs", "-q", timeout=120)
    details = [v["detail"] for m in read_json(mark, "matches", "b", "--db", db)
               for v in m["verdicts"]]
    assert "bot process exited with code 3" in details, details
    assert "bot quitter exited with code 7 before connecting" in details, details
    assert not [d for d in details if "SECRET" in d or str(tmp_path) in d], details
    logs = "".join(f.read_text() for f in (tmp_path / "logs").rglob("*.log"))
    assert "SECRET-0451" in logs and "SECRET-0452" in logs


# ---------------------------------------------------------------- interrupted and resumed

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The long tournament played without interruption: its database."""
    folder = tmp_path_factory.mktemp("reference")
    db = folder / "arena.db"
    value = new_mark()
    try:
        ok(value, "tournament", *SAMPLES, *LONG, "--name", "reference", "--db", db,
           "--logs", folder / "logs", timeout=60)
    finally:
        kill_marked(value)
    return db


def start_long(mark: str, tmp_path: Path, name: str, db: Path | str, *flags: str,
               under: Sequence[str] = (), **env: str) -> subprocess.Popen:
    """Start the long tournament (with ``flags`` after its own, run by the command
    ``under`` if given, and ``env`` added to its environment); return once about a third
    of it is stored."""
    with (tmp_path / "stdout").open("w") as stdout:
        proc = subprocess.Popen(
            # Ctrl-C as at a terminal, even if this test runs where SIGINT is ignored
            launched([*under, *command("tournament", *SAMPLES, *LONG, "--name", name, "--db", db,
                                       "--logs", tmp_path / "logs", *flags)]),
            cwd=ROOT, env={**env_for(mark), **env}, stdout=stdout, stderr=subprocess.PIPE, text=True)
    # a generous deadline: 30 s, once, stored 77 of the 80 on a loaded machine (in
    # PostgreSQL), and the test went on to interrupt it too early
    deadline = time.monotonic() + 120
    poll = 0.05 if is_url(str(db)) else 0.01    # a PostgreSQL poll is a new connection
    while stored_matches(db) < LONG_TOTAL // 3 and proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            pytest.fail(f"the tournament stored {stored_matches(db)} of {LONG_TOTAL} in 120 s")
        time.sleep(poll)
    if proc.poll() is not None:
        pytest.fail(f"the tournament ended (exit {proc.returncode}) before it could be interrupted: "
                    f"{proc.stderr.read()}")
    return proc


def same_results(db: Path | str, name: str, reference_db: Path, mark: str) -> None:
    """The resumed tournament stored exactly what the uninterrupted one did."""
    keys = keys_stored(db, name)
    assert len(keys) == len(set(keys)) == LONG_TOTAL, "a match is missing or stored twice"
    mine = {m["key"]: m for m in read_json(mark, "matches", name, "--db", db)}
    theirs = {m["key"]: m for m in read_json(mark, "matches", "reference", "--db", reference_db)}
    assert set(mine) == set(theirs)
    for key, m in mine.items():
        assert m["status"] == "finished" and m["verdicts"] == [], m
        for field in ("seed", "sample", "bots", "ranking", "termination", "turns"):
            assert m[field] == theirs[key][field], (key, field)

    board = read_json(mark, "standings", name, "--db", db)
    expected = read_json(mark, "standings", "reference", "--db", reference_db)
    assert board["tournament"] == name
    assert [line["bot"] for line in board["standings"]] == [line["bot"] for line in expected["standings"]]
    for line, other in zip(board["standings"], expected["standings"]):
        assert line.keys() == other.keys()
        for k in line:
            if isinstance(line[k], float):
                assert math.isclose(line[k], other[k], abs_tol=1e-6), (line["bot"], k)
            else:
                assert line[k] == other[k], (line["bot"], k)
    for a, row in board["los"].items():
        for b, v in row.items():
            assert math.isclose(v, expected["los"][a][b], abs_tol=1e-6), (a, b)


def test_a_tournament_killed_with_sigkill_resumes_to_the_same_results(tmp_path, mark, reference):
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "killed", db)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stderr.close()
    played = stored_matches(db)
    assert LONG_TOTAL // 3 <= played < LONG_TOTAL
    # the bots notice their connection is gone and exit
    left = wait_unmarked(mark, 5)
    assert left == [], "bot processes outlived the killed arena: " + "; ".join(
        open(f"/proc/{p}/cmdline").read().replace("\0", " ") for p in left)

    resumed = ok(mark, "tournament", "--resume", "killed", "--db", db, "-q",
                 "--logs", tmp_path / "logs")
    assert f"resuming: {played} of {LONG_TOTAL} already played" in resumed.stdout
    assert "standings of killed (batch fit)" in resumed.stdout
    same_results(db, "killed", reference, mark)

    again = ok(mark, "tournament", "--resume", "killed", "--db", db, "-q")
    assert f"resuming: {LONG_TOTAL} of {LONG_TOTAL} already played" in again.stdout
    assert len(keys_stored(db, "killed")) == LONG_TOTAL


#: as a script's background job: SIGINT ignored (a Ctrl-C at the script's terminal must not
#: reach it)
BACKGROUND = ["sh", "-c", 'trap "" INT; exec "$@"', "sh"]


@pytest.mark.parametrize("sig, under", [(signal.SIGINT, []), (signal.SIGTERM, []),
                                        (signal.SIGHUP, []), (signal.SIGTERM, BACKGROUND)],
                         ids=["ctrl-c", "sigterm", "sighup", "sigterm-background"])
def test_ctrl_c_or_sigterm_stops_a_tournament_that_then_resumes_to_the_same_results(
        tmp_path, mark, reference, sig, under):
    """SIGHUP is a closed terminal (an SSH connection dropped): before, it ended the
    tournament as kill -9 does, with no goodbye to its bots and no line to resume it. So
    did SIGTERM to a script's background job (SIGINT ignored), as a script's kill sends."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "interrupted", db, under=under)
    proc.send_signal(sig)
    # it stops, the matches under way cut short (what is stored shows it: not all of them),
    # with goodbyes and the line to resume it. Within 5 s was asked too: 6.1 s once, on a
    # loaded machine, for SIGTERM
    try:
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr + (tmp_path / "stdout").read_text()
    assert processes_marked(mark) == [], "bot processes left running"
    played = stored_matches(db)
    assert 0 < played < LONG_TOTAL
    lines = stderr.splitlines()
    assert lines[0] == (f"interrupted: {played} of {LONG_TOTAL} matches are stored; the matches "
                        "in flight will be played again from their seeds. Resume with:"), stderr
    assert lines[1:] == [f"  arena tournament --resume interrupted --db {db}"], stderr

    # the printed command, as given
    resume = shlex.split(lines[1])
    assert resume[0] == "arena"
    resumed = ok(mark, *resume[1:], "-q", "--logs", tmp_path / "logs")
    assert f"resuming: {played} of {LONG_TOTAL} already played" in resumed.stdout
    same_results(db, "interrupted", reference, mark)


def test_a_closed_terminal_stops_a_live_tournament_as_ctrl_c_does(tmp_path, mark, reference):
    """The terminal closes (its pseudo-terminal's master: a tmux session killed, an SSH
    connection dropped): the kernel hangs up the whole foreground group. Before, the live
    view's next write failed (EIO) and replaced the stop with 'error: [Errno 5]
    Input/output error', and multiprocessing's resource tracker, killed by the hangup,
    was started again and printed a KeyError traceback for every queue released."""
    import pty
    import threading

    db = tmp_path / "arena.db"
    master, slave = pty.openpty()
    with (tmp_path / "stderr").open("w") as stderr:
        proc = subprocess.Popen(
            launched(command("tournament", *SAMPLES, *[f for f in LONG if f != "-q"], "--name",
                             "hangup", "--db", db, "--logs", tmp_path / "logs"), ctty=True),
            cwd=ROOT, env=env_for(mark), stdin=subprocess.DEVNULL, stdout=slave, stderr=stderr)
    os.close(slave)
    shown = bytearray()

    def drain() -> None:        # the live view's output, as a terminal reads it
        try:
            while chunk := os.read(master, 65536):
                shown.extend(chunk)
        except OSError:
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    deadline = time.monotonic() + 30
    while stored_matches(db) < LONG_TOTAL // 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, (tmp_path / "stderr").read_text()
    assert b"hangup" in shown                        # it was showing the live view
    os.close(master)                                 # the terminal is gone
    try:
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = (tmp_path / "stderr").read_text()
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "error" not in text, text
    played = stored_matches(db)
    assert text.splitlines()[0].startswith(f"interrupted: {played} of {LONG_TOTAL} matches are stored")
    assert wait_unmarked(mark, 5) == [], "bot processes left running"
    ok(mark, "tournament", "--resume", "hangup", "--db", db, "-q", "--logs", tmp_path / "logs")
    same_results(db, "hangup", reference, mark)


def test_a_resumed_tournament_reports_standings_from_what_is_stored(tmp_path, mark):
    """A resume showed every bot at 0 matches and 1500, and off a terminal printed its
    provisional Elo line after every new match until it passed the first tenth again:
    the stored matches were left out. Now its reports come at the tenths still ahead,
    counting the stored matches."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "again", db)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=15)
    done = stored_matches(db)
    resumed = ok(mark, "tournament", "--resume", "again", "--db", db, "--logs", tmp_path / "logs")
    reports = [int(line.split("after ")[1].split()[0]) for line in resumed.stdout.splitlines()
               if line.startswith("  provisional Elo after ")]
    assert reports and reports[-1] == LONG_TOTAL
    first_tenth = (done * 10 // LONG_TOTAL + 1) / 10
    assert reports[0] >= first_tenth * LONG_TOTAL, (done, reports)
    assert len(reports) <= 10 - done * 10 // LONG_TOTAL, (done, reports)


@pytest.mark.parametrize("args", [
    # their first line is printed once a server runs: the spectators', the arena's
    ["match", BOTS / "random", BOTS / "greedy", "--games", 1, "--watch", "127.0.0.1:0"],
    ["serve", "--listen", "127.0.0.1:0", "--db"],
])
def test_a_closed_output_stops_a_command_s_servers_in_order(tmp_path, mark, args):
    """The review of the change: `arena tournament --watch ... | head -2` and `arena serve
    | head -1` exited 1 with "Exception ignored in: Server.__del__ ... Event loop is
    closed" and "coroutine 'AioServer.shutdown' was never awaited": the line that met the
    closed output was printed after a server had started but before the block that stops
    it (the server's database and bots were left to the interpreter's exit). Here the
    output is closed before the first line (a reader that went at once)."""
    where = tmp_path / "t.db" if args[-1] == "--db" else tmp_path / "out"
    proc = subprocess.Popen(command(*args, where) if args[-1] == "--db" else
                            command(*args, "--out", where),
                            cwd=ROOT, env=env_for(mark), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        proc.stdout.close()
        _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr
    assert "Exception ignored" not in stderr and "never awaited" not in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert wait_unmarked(mark, 5) == [], "processes left running"


@pytest.mark.parametrize("where,read", [([], 3), (["--executor", "local"], 3), ([], 1)])
def test_a_closed_output_stops_a_tournament_with_its_resume_line(tmp_path, mark, where, read):
    """arena tournament ... | head -3: the run stopped after 2 of 60 matches, exit 1,
    without a word (rich's own SystemExit on a closed pipe). It still stops, as a writer
    to a closed pipe does, but says on stderr what is stored and how to resume: where it
    ran too, when that was asked for (the line of a Ray run resumed on this machine).
    With | head -1 it stopped on its second line, before the run, still without a word."""
    db = tmp_path / "arena.db"
    proc = subprocess.Popen(command("tournament", *SAMPLES, "--games", 10, "--name", "piped",
                                    "--db", db, "--logs", tmp_path / "logs", *where),
                            cwd=ROOT, env=env_for(mark), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines = [proc.stdout.readline() for _ in range(read)]   # as head -3 (-1) reads
    proc.stdout.close()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr
    assert lines[0].startswith("tournament piped in ")
    played = stored_matches(db)
    assert stderr.splitlines() == [
        f"arena tournament: its output was closed (the reader of a pipe went): {played} of 60 "
        "matches are stored; the matches in flight will be played again from their seeds. "
        "Resume with:", " ".join(["  arena tournament --resume piped --db", str(db), *where])], stderr
    assert wait_unmarked(mark, 5) == [], "bot processes left running"
    resumed = ok(mark, "tournament", "--resume", "piped", "--db", db, "-q", "--logs", tmp_path / "logs")
    assert not played or f"resuming: {played} of 60 already played" in resumed.stdout
    assert stored_matches(db) == 60


def test_under_nohup_a_hangup_changes_nothing(tmp_path, mark, reference):
    """nohup ignores SIGHUP for the command it runs, and the arena leaves it so: the
    tournament plays on to the results of an undisturbed run."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "nohup", db, under=["nohup"])
    proc.send_signal(signal.SIGHUP)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    same_results(db, "nohup", reference, mark)


# ---------------------------------------------------------------- chaos

def test_a_referee_worker_killed_with_sigkill_is_replaced_and_its_matches_played_again(
        tmp_path, mark, reference):
    """kill -9 of one of the multi-process executor's referee workers, mid-tournament: a
    new worker takes its place, the matches it had in flight are played again, and the
    tournament ends with every match stored once and the results of an uninterrupted run."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "chaos", db)
    workers = procs.workers(proc.pid)
    assert len(workers) == 2, "the long tournament runs on two referee workers"
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert "referee worker arena-worker-0 died (exit code -9)" in stderr, stderr
    assert "played again on a new worker" in stderr
    assert wait_unmarked(mark, 5) == [], "bot processes of the killed worker outlived it"
    same_results(db, "chaos", reference, mark)


def kill_newborn_workers(proc: subprocess.Popen, count: int) -> None:
    """kill -9 the arena's one referee worker, then each of the ``count`` workers started
    in its place as soon as it appears: before it is ready, with no bot of its own."""
    workers = procs.workers(proc.pid)
    assert len(workers) == 1, "the tournament runs on one referee worker"
    os.kill(workers[0], signal.SIGKILL)
    seen = set(workers)
    for _ in range(count):
        deadline = time.monotonic() + 20
        while not (new := set(procs.workers(proc.pid)) - seen) and time.monotonic() < deadline:
            time.sleep(0.002)
        assert new, "no referee worker took the killed one's place"
        (pid,) = new
        assert procs.descendants(pid) == [], "the new worker had started its bots"
        os.kill(pid, signal.SIGKILL)
        seen.add(pid)


def with_newborns_killed(mark: str, tmp_path: Path, name: str, db: Path,
                         count: int) -> tuple[int, str]:
    """The long tournament on one referee worker, killed, then ``count`` of the workers
    that replace it killed as they start: its exit code and what it printed on stderr (no
    traceback, no bot process left)."""
    proc = start_long(mark, tmp_path, name, db, "--executor", "multiprocess", "--concurrency", "1")
    kill_newborn_workers(proc, count)
    _, stderr = proc.communicate(timeout=60)
    assert "Traceback" not in stderr, stderr
    assert wait_unmarked(mark, 5) == []
    return proc.returncode, stderr


def test_workers_killed_before_they_are_ready_only_deal_their_matches_again(
        tmp_path, mark, reference):
    """The match in flight at the first kill -9 is dealt to two workers in turn that are
    killed before they begin it: it counts one death, not three (three stop the run as a
    match that kills referees), and the tournament ends as an uninterrupted run."""
    db = tmp_path / "arena.db"
    returncode, stderr = with_newborns_killed(mark, tmp_path, "newborns", db, 2)
    assert returncode == 0, stderr
    assert stderr.count("died (exit code -9)") == 3, stderr
    same_results(db, "newborns", reference, mark)


def test_workers_that_keep_dying_before_they_are_ready_stop_the_run_and_resume_plays_the_rest(
        tmp_path, mark, reference):
    """Three workers in a row that die before they are ready, with no match played in
    between, mean workers cannot start: one clear error, not an endless round of new
    ones; --resume plays the rest to the results of an uninterrupted run."""
    db = tmp_path / "arena.db"
    returncode, stderr = with_newborns_killed(mark, tmp_path, "stillborn", db, 3)
    assert returncode == 1, stderr
    assert ("arena tournament: error: 3 referee workers died before they were ready, with no "
            "match played in between (the last with exit code -9); the run stops") in stderr, stderr
    assert "arena tournament --resume stillborn" in stderr, stderr
    ok(mark, "tournament", "--resume", "stillborn", "--db", db, "-q", "--logs", tmp_path / "logs")
    same_results(db, "stillborn", reference, mark)


def test_a_database_locked_for_a_while_delays_the_tournament_and_changes_nothing(
        tmp_path, mark, reference):
    """Another process holds the write lock on the file for 1.5 s mid-tournament: the
    arena waits for it (its busy timeout) and stores every match as an undisturbed run."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "locked", db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    time.sleep(1.5)
    holder.execute("ROLLBACK")
    holder.close()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    same_results(db, "locked", reference, mark)


def test_a_database_locked_too_long_stops_the_tournament_with_a_clear_error_then_resumes(
        tmp_path, mark, reference):
    """Held past the busy timeout ($ONO99_DB_TIMEOUT, 1 s here): one clear error, no
    traceback, what was stored is kept, and --resume plays the rest to the same results."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "locked", db, ONO99_DB_TIMEOUT="1")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        _, stderr = proc.communicate(timeout=60)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr, stderr
    assert f"arena tournament: error: database {db} is locked by another process (waited 1 s" \
        in stderr, stderr
    assert "matches are stored; the others will be played again from their seeds" in stderr
    assert "arena tournament --resume locked" in stderr
    assert wait_unmarked(mark, 5) == []
    ok(mark, "tournament", "--resume", "locked", "--db", db, "-q", "--logs", tmp_path / "logs")
    same_results(db, "locked", reference, mark)


def test_a_full_log_disk_changes_no_result(tmp_path, mark):
    """The bots' logs go to a 64 KiB tmpfs (bubblewrap mounts it for the arena) that a bot
    writing 2 KB to stderr every turn fills at once: its log stops, the bot never blocks
    on its output, and every match is stored as with room for the logs."""
    if shutil.which("bwrap") is None:
        missing("bubblewrap (Debian's bubblewrap package) mounts the tiny log disk")
    noisy = ROOT / "tests" / "bots" / "noisy"
    bots = [noisy, BOTS / "random", BOTS / "greedy"]
    args = ["--games", "10", "--seed", "3", "-q", "--concurrency", "2"]
    db = tmp_path / "arena.db"
    roomy = ok(mark, "tournament", *bots, *args, "--db", db, "--name", "roomy",
               "--logs", tmp_path / "logs")
    disk = tmp_path / "full-logs"     # bwrap makes the mount point: here, not left in /tmp
    full = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--size", "65536", "--tmpfs", disk,
         *command("tournament", *bots, *args, "--db", db, "--name", "full", "--logs", disk)],
        cwd=ROOT, env=env_for(mark), capture_output=True, text=True, timeout=120)
    assert full.returncode == 0, full.stderr
    assert "Traceback" not in full.stdout + full.stderr, full.stderr
    assert "faults: none" in full.stdout and "faults: none" in roomy.stdout
    mine = {m["key"]: m for m in read_json(mark, "matches", "full", "--db", db)}
    theirs = {m["key"]: m for m in read_json(mark, "matches", "roomy", "--db", db)}
    assert len(mine) == 60 and mine.keys() == theirs.keys()
    for key, m in mine.items():
        assert m["verdicts"] == [] and m["ranking"] == theirs[key]["ranking"], key


def test_a_full_database_disk_stops_the_tournament_with_its_resume_line(tmp_path, mark):
    """The database on a 512 KiB tmpfs (bubblewrap mounts it for the arena) fills up part
    way: the tournament stops with one error line and its resume line, where a raw sqlite3
    error ended it with a traceback."""
    if shutil.which("bwrap") is None:
        missing("bubblewrap (Debian's bubblewrap package) mounts the tiny database disk")
    disk = tmp_path / "full-db"       # bwrap makes the mount point: here, not left in /tmp
    full = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--size", str(512 * 1024), "--tmpfs", disk,
         *command("tournament", *SAMPLES, "--games", "300", "--seed", "3", "-q",
                  "--db", disk / "arena.db", "--name", "full", "--logs", tmp_path / "logs")],
        cwd=ROOT, env=env_for(mark), capture_output=True, text=True, timeout=180)
    assert full.returncode == 1, full.stdout + full.stderr
    assert "Traceback" not in full.stdout + full.stderr, full.stderr
    line = full.stderr.splitlines()[0]
    assert line == (f"arena tournament: error: cannot store a match in {disk / 'arena.db'}: "
                    "database or disk is full"), full.stderr
    assert f"arena tournament --resume full --db {disk / 'arena.db'}" in full.stderr
    assert wait_unmarked(mark, 5) == []


def bot_pids(mark: str, name: str) -> list[int]:
    """The marked processes running ``bots/NAME/bot.py`` (not their bubblewrap parents)."""
    found = []
    for pid in processes_marked(mark):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline and not cmdline[0].endswith(b"bwrap") and b"bot.py" in cmdline \
                and f"/{name}".encode() in Path(f"/proc/{pid}/cwd").resolve().as_posix().encode():
            found.append(pid)
    return found


def test_a_stalled_bot_process_times_out_and_the_tournament_goes_on(tmp_path, mark):
    """SIGSTOP to a bot process mid-tournament (its stream stalls, it reads nothing): the
    match it is in ends with a timeout verdict on its clock, the process is replaced, and
    every match is stored once; nothing is left running."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "stalled", db)
    greedy = bot_pids(mark, "greedy")
    assert greedy, "no greedy process found"
    os.kill(greedy[0], signal.SIGSTOP)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    assert wait_unmarked(mark, 5) == [], "a bot process (the stopped one?) was left behind"
    keys = keys_stored(db, "stalled")
    assert len(keys) == len(set(keys)) == LONG_TOTAL
    verdicts = [v for m in read_json(mark, "matches", "stalled", "--db", db) for v in m["verdicts"]]
    assert verdicts and {v["kind"] for v in verdicts} == {"timeout"}, verdicts
    assert len(verdicts) == 1, "the stopped process played on after its timeout"


def test_a_tournament_is_played_by_one_process_at_a_time(tmp_path, mark, reference):
    """A second arena tournament --resume while the first still plays (two terminals, a
    cron job): both played the same matches and the second stopped on "already stored",
    saying to resume what the first was playing. Now it is refused at once."""
    db = tmp_path / "arena.db"
    with reaped(start_long(mark, tmp_path, "busy", db)) as proc:
        second = arena(new_mark(), "tournament", "--resume", "busy", "--db", db, "-q")
        assert error_line(second) == (
            f"arena tournament: error: tournament 'busy' is being played by another process "
            f"on {db} (an arena tournament, or an arena serve); two would play the same "
            "matches and refuse each other's results: wait for it to end, or stop it (what "
            "it stored is kept)")
        assert proc.poll() is None                 # the first plays on
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    same_results(db, "busy", reference, mark)
    again = ok(mark, "tournament", "--resume", "busy", "--db", db, "-q")   # let go at its end
    assert "already played" in again.stdout


def test_a_paused_arena_charges_no_bot_for_its_pause(tmp_path, mark):
    """SIGSTOP, then SIGCONT, to the arena and its referee workers (Ctrl-Z then fg, a paused
    virtual machine), three times for 2 s, on a 0.2 s + 0.5 s clock: the bots, waiting on
    the referee, answered in time. The referee charged them the pause: timeout verdicts
    ("200 ms + -1305 ms of bank", with a bank run below zero), 5 in 600 matches. Now it
    times bots on its live clock, which leaves a pause of its own out."""
    db = tmp_path / "arena.db"
    with reaped(subprocess.Popen(
            command("tournament", BOTS / "random", BOTS / "greedy", "--games", "150",
                    "--move-time", "0.2", "--bank", "0.5", "--seed", "7", "--concurrency", "2",
                    "-q", "--name", "paused", "--db", db, "--logs", tmp_path / "logs"),
            cwd=ROOT, env=env_for(mark), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)) as proc:
        deadline = time.monotonic() + 60
        while stored_matches(db) < 20 and proc.poll() is None:
            assert time.monotonic() < deadline, "the tournament stored nothing in 60 s"
            time.sleep(0.05)
        referees = [proc.pid, *procs.workers(proc.pid)]
        assert len(referees) == 3, referees          # the arena and its two workers
        for _ in range(3):
            for pid in referees:
                os.kill(pid, signal.SIGSTOP)
            time.sleep(2.0)
            paused_at = stored_matches(db)
            for pid in referees:
                os.kill(pid, signal.SIGCONT)
            time.sleep(0.5)
        assert paused_at < 300, "the tournament was over before its last pause"
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert stored_matches(db) == 300
    verdicts = [v for m in read_json(mark, "matches", "paused", "--db", db) for v in m["verdicts"]]
    assert verdicts == []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:   # gone
        return b""


def test_a_long_pause_of_the_arena_charges_no_bot_for_it(tmp_path, mark, reference):
    """Ctrl-Z for more than 20 s, then fg (SIGSTOP and SIGCONT of the arena and its referee
    workers; its bots run on, in sessions of their own). The bots' SDK pings its referee
    every 10 s and gives up on it 10 s after an unanswered ping, and exits: the referee,
    running again, found their processes gone and recorded *crashed* verdicts (2 in 360
    matches by hand; 3 retire a bot), which an uninterrupted run has not (left by the
    seventeenth review). The pause was the arena's (its live clock knows it): the run
    stops, saying so, with its resume line, and the resume plays those matches again,
    every seat a fresh process. Here the bots are lost during a pause of 7 s (killed: the
    SDKs leaving on their own take 20 s of it, tests/sdk and tests/clients show they do):
    a pause of 5 s or more is one in which a lost bot is not charged."""
    db = tmp_path / "arena.db"
    with reaped(start_long(mark, tmp_path, "paused", db)) as proc:
        referees = [proc.pid, *procs.workers(proc.pid)]
        for pid in referees:
            os.kill(pid, signal.SIGSTOP)
        bots = [pid for pid in processes_marked(mark) if pid not in referees
                and b"resource_tracker" not in _cmdline(pid)]   # multiprocessing's own
        assert bots
        for pid in bots:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(7)
        for pid in referees:
            os.kill(pid, signal.SIGCONT)
        _, stderr = proc.communicate(timeout=120)
    if proc.returncode == 0:
        # no bot it killed was at a table (each was between two matches, and started
        # again for its next): the run went on, and charged nobody (as checked below)
        assert "this arena was stopped" not in stderr, stderr
    else:
        assert proc.returncode == 1, stderr
        assert re.search(r"this arena was stopped for \d+ s \(Ctrl-Z, SIGSTOP, a paused "
                         r"machine\) during match [0-9a-f]{16}, and \S+'s bot was lost "
                         r"meanwhile", stderr), stderr
        assert "Resume with:\n  arena tournament --resume paused" in stderr, stderr
        ok(mark, "tournament", "--resume", "paused", "--db", db, "--logs", tmp_path / "logs",
           "-q", timeout=120)
    same_results(db, "paused", reference, mark)


def test_an_arena_out_of_open_files_stops_with_its_resume_line_and_blames_no_bot(tmp_path, mark):
    """The arena's own open-files limit (ulimit -n 40) too low for 8 matches at once: it
    could not start bot processes, and charged each failure to the bot as a crash; every
    bot was retired and the tournament "finished" (exit 0) with 60 forfeits. Now it stops
    with one error saying why, and its resume line; no stored match holds a verdict."""
    db = tmp_path / "arena.db"
    proc = subprocess.run(
        launched(command("tournament", *SAMPLES, BOTS / "pusher", "--games", "5", "--concurrency",
                         "8", "-q", "--name", "cramped", "--db", db, "--logs", tmp_path / "logs"),
                 nofile=(40, 40)),
        cwd=ROOT, env=env_for(mark), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "the arena cannot start a process for bot" in proc.stderr
    assert "Too many open files (the arena's open-files limit, ulimit -n, is 40" in proc.stderr
    assert f"arena tournament --resume cramped --db {db}" in proc.stderr
    assert "ONO99_TOKEN" not in proc.stderr      # the error quoted bwrap's arguments, a token too
    assert [m["verdicts"] for m in read_json(mark, "matches", "cramped", "--db", db)
            if m["verdicts"]] == []
    assert wait_unmarked(mark, 5) == []


def test_standings_read_while_a_tournament_writes_always_work(tmp_path, mark):
    """Readers beside the writer (WAL): arena standings, again and again, while the long
    tournament stores its matches; every read answers, none waits for the writer."""
    db = tmp_path / "arena.db"
    proc = start_long(mark, tmp_path, "busy", db)
    reads, reader = 0, new_mark()   # the readers' own mark: the tournament's bots run
    while proc.poll() is None:
        started = time.monotonic()
        board = read_json(reader, "standings", "busy", "--db", db)
        assert board["tournament"] == "busy"
        assert time.monotonic() - started < 10
        reads += 1
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert reads >= 1


# ---------------------------------------------------------------- results in PostgreSQL

def test_a_tournament_with_its_results_in_postgresql_and_its_standings_read_back(
        tmp_path, mark, postgres_url):
    proc = ok(mark, "tournament", *SAMPLES, "--games", 2, "--name", "pg", "--db", postgres_url,
              "--logs", tmp_path / "logs")
    assert (f"in {postgres_url}: 3 bots, 3 tables of 2, 2 deals each x 2 seat rotations "
            "(duplicate): 12 matches") in proc.stdout
    assert f"saved in {postgres_url}; see: arena standings pg --db {postgres_url}" in proc.stdout
    keys = keys_stored(postgres_url, "pg")
    assert len(keys) == len(set(keys)) == 12

    board = read_json(mark, "standings", "--db", postgres_url)     # the latest: pg
    assert board["tournament"] == "pg"
    assert {line["bot"] for line in board["standings"]} == {"random", "greedy", "counter"}
    assert sum(line["matches"] for line in board["standings"]) == 12 * 2
    matches = read_json(mark, "matches", "pg", "--db", postgres_url)
    assert sorted(m["key"] for m in matches) == sorted(keys)
    # a tournament of that name is refused, naming the database without a password
    url = postgres_url.replace("postgresql://arena@", "postgresql://arena:hunter2@")
    line = error_line(arena(mark, "tournament", *SAMPLES, "--name", "pg", "--db", url))
    assert "a tournament called 'pg' already exists in postgresql://arena:***@" in line
    assert "hunter2" not in line


def test_a_postgresql_restart_mid_tournament_is_waited_out_and_nothing_is_lost(
        tmp_path, mark, reference, postgres_server, postgres_url):
    """A restart or failover of the database server ends every session: the tournament
    stopped at the next write (exit 1, "terminating connection due to administrator
    command"); it now waits for the server and goes on."""
    proc = start_long(mark, tmp_path, "restarted", postgres_url)
    postgres_server.restart(2.0)                  # every session ended; down for 2 s
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr
    same_results(postgres_url, "restarted", reference, mark)


def claimers(url: str) -> list[int]:
    """The sessions (their server pids) holding a tournament's claim in ``url``."""
    from arena.store.postgres import PLAY_LOCK_CLASS

    return [pid for pid, in pg_rows(url, "SELECT pid FROM pg_locks WHERE locktype = 'advisory' "
                                    "AND classid = %s AND granted", PLAY_LOCK_CLASS)]


@pytest.mark.parametrize("fault", ["restart", "terminate"])
def test_a_tournament_keeps_its_claim_through_a_lost_postgresql_session(
        tmp_path, mark, postgres_server, postgres_url, fault):
    """The claim that lets one process play a tournament is a PostgreSQL session's
    advisory lock: a restart of the server (or a DBA's pg_terminate_backend of that
    session) ended it, the tournament rode the restart out and played on without it, and
    a --resume then was let in: both played the same matches, and the resume stopped on
    "match ... is already stored". The run now takes its claim again once the server is
    back, so the resume is refused as at any other time."""
    proc = start_long(mark, tmp_path, "held", postgres_url, "--games", "300")
    with reaped(proc):
        [held] = claimers(postgres_url)
        if fault == "restart":
            postgres_server.restart(1.0)          # every session ended; down for 1 s
        else:
            pg_rows(postgres_url, "SELECT pg_terminate_backend(%s)", held)
        # time for the run to take it again, on a session of its own: the lock of the
        # terminated one is still listed until its backend has gone (pg_terminate_backend
        # only signals it), and a wait that stopped at it let the resume in once it had
        # gone, before the run's next look (one CI run in many)
        deadline = time.monotonic() + 10
        while claimers(postgres_url) in ([], [held]) and time.monotonic() < deadline \
                and proc.poll() is None:
            time.sleep(0.1)
        second = arena(new_mark(), "tournament", "--resume", "held", "--db", postgres_url, "-q")
        assert "tournament 'held' is being played by another process" in error_line(second)
        assert second.returncode == 2
        # it plays on, claimed (not to its end: 1,800 matches took 25 s of the suite)
        assert claimers(postgres_url) and proc.poll() is None
        stored = stored_matches(postgres_url)
        deadline = time.monotonic() + 30
        while stored_matches(postgres_url) < stored + 20:
            assert time.monotonic() < deadline and proc.poll() is None, "it stopped storing"
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    keys = keys_stored(postgres_url, "held")
    assert len(keys) == len(set(keys)) > stored


def test_a_tournament_whose_claim_another_process_took_stops_and_says_so(
        tmp_path, mark, postgres_url):
    """Where another process took the claim between the loss of this run's session and
    its next look, this run stops (two would play the same matches), saying why, with no
    line to resume what the other plays; what it stored stays."""
    import psycopg

    from arena.store.postgres import PLAY_LOCK_CLASS

    proc = start_long(mark, tmp_path, "taken", postgres_url, "--games", "300")
    with reaped(proc), psycopg.connect(postgres_url, autocommit=True) as other:
        [held] = claimers(postgres_url)
        [(tid,)] = pg_rows(postgres_url, "SELECT id FROM tournaments WHERE name = 'taken'")
        pg_rows(postgres_url, "SELECT pg_terminate_backend(%s)", held)
        deadline = time.monotonic() + 5
        while not other.execute("SELECT pg_try_advisory_lock(%s::int4, %s::int4)",
                                (PLAY_LOCK_CLASS, tid)).fetchone()[0]:
            assert time.monotonic() < deadline, "the session's end did not let the claim go"
        _, stderr = proc.communicate(timeout=30)
        played = stored_matches(postgres_url)
    assert proc.returncode == 1 and "Traceback" not in stderr, stderr
    assert stderr.splitlines()[-1] == (
        "arena tournament: error: this process lost its claim on tournament 'taken' in "
        f"{postgres_url} (its database session ended: a restart of the database server?) "
        "and another process plays it now: this one stops, and what it stored is kept")
    keys = keys_stored(postgres_url, "taken")
    assert len(keys) == len(set(keys)) == played < 3 * 300 * 2


def test_a_reader_of_an_unreachable_postgresql_server_gets_one_error_line(mark):
    from support.postgres import free_port

    url = f"postgresql://arena:hunter2@127.0.0.1:{free_port()}/arena"
    proc = arena(mark, "standings", "--db", url)
    # exit 1: a database that fails, which may work later (it was 2, as a bad option)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    [line] = proc.stderr.splitlines()
    assert f"cannot connect to {url.replace('hunter2', '***')}: " in line and "hunter2" not in line


def test_a_tournament_in_postgresql_killed_with_sigkill_resumes_to_the_same_results(
        tmp_path, mark, reference, postgres_url):
    proc = start_long(mark, tmp_path, "killed", postgres_url)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stderr.close()
    played = stored_matches(postgres_url)
    assert LONG_TOTAL // 3 <= played < LONG_TOTAL
    # its referee workers and bots notice their connection is gone and exit
    left = wait_unmarked(mark, 5)
    assert left == [], "processes outlived the killed arena: " + "; ".join(
        Path(f"/proc/{p}/cmdline").read_text().replace("\0", " ") for p in left)

    resumed = ok(mark, "tournament", "--resume", "killed", "--db", postgres_url, "-q",
                 "--logs", tmp_path / "logs")
    assert f"resuming: {played} of {LONG_TOTAL} already played" in resumed.stdout
    same_results(postgres_url, "killed", reference, mark)   # every match once, as uninterrupted


def test_a_server_s_ladder_resumed_here_is_refused_saying_so(tmp_path, mark):
    """`arena tournament --resume ladder` on a server's database was a TypeError
    traceback (the ladder's settings are not a tournament's)."""
    from arena.seeds import fresh_master

    db = tmp_path / "arena.db"
    store = SQLiteStore(db)
    store.create_tournament("ladder", {"ladder": True, "table_size": 2, "seed": fresh_master(),
                                       "secret": True, "bot_dirs": [], "bots": []}, [])
    store.close()
    proc = arena(mark, "tournament", "--resume", "ladder", "--db", db, "-q")
    assert proc.returncode == 2, proc.stderr
    assert error_line(proc) == (
        "arena tournament: error: 'ladder' is an arena serve's ladder, which is never over: "
        "it goes on when the server starts on this database")


def test_a_server_s_tournament_resumed_here_is_refused_saying_where_it_resumes(tmp_path, mark):
    """A tournament of an arena serve's registered bots, --resume'd without --server on
    its database: its bots have no folders here, and the run failed as "referee worker 1
    failed: IndexError: list index out of range", then told to run the same command
    again. Now it is refused at once, saying where it resumes."""
    from arena.tournament.tournament import Settings, Tournament

    db = tmp_path / "arena.db"
    store = SQLiteStore(db)
    Tournament.create_registered(store, "cup", Settings(bots=("alice", "bob")))
    store.close()
    proc = arena(mark, "tournament", "--resume", "cup", "--db", db, "-q")
    assert proc.returncode == 2, proc.stderr
    assert error_line(proc) == (
        "arena tournament: error: tournament 'cup' is an arena serve's, of the bots "
        "registered there: it resumes by itself when the server starts on this database "
        "(follow it with arena tournament --resume cup --server ADDR)")
    assert stored_matches(db) == 0


@pytest.mark.parametrize("args, message", [
    (["--seed", "-1"], "--seed -1 is not allowed on a server: 0 to 2**64 - 1 (0: a secret one)"),
    (["--seed", str(2**64)], f"--seed {2**64} is not allowed on a server"),
    (["--games", "3000000000"], "--games 3000000000 is not allowed on a server: 1 to 2,147,483,647"),
    (["--games", "0"], "--games 0 is not allowed on a server"),   # the server played 10
])
def test_a_server_tournament_s_numbers_are_checked_before_it_is_asked(mark, args, message):
    # out of the request's range they were a traceback; nothing listens at port 1
    proc = arena(mark, "tournament", "a", "b", "--server", "127.0.0.1:1", *args)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(f"arena tournament: error: {message}")


@pytest.mark.parametrize("args, message", [
    # the server plays with its own database, referee, sandbox and limits: these were
    # ignored without a word
    (["a", "b", "--db", "x.db", "--concurrency", "1"],
     "--concurrency, --db are for a tournament played here; the server plays with its own: "
     "drop them"),
    (["a", "b", "--limit", "memory=100"], "--limit is for a tournament played here"),
    (["--resume", "t", "--logs", "here"], "--logs is for a tournament played here"),
    # as a local --resume: the stored settings are kept, so a changed one is refused
    (["--resume", "t", "--games", "3"],
     "--resume follows the server's tournament with its stored settings; drop --games"),
    (["--resume", "t", "--name", "u"], "--resume NAME names the tournament; drop --name"),
])
def test_a_server_tournament_refuses_what_only_a_local_one_uses(mark, args, message):
    proc = arena(mark, "tournament", *args, "--server", "127.0.0.1:1")   # nothing listens there
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(f"arena tournament: error: {message}")


def test_a_logs_folder_that_cannot_be_made_is_refused_before_anything_is_stored(tmp_path, mark):
    """A file where the bots' logs go stopped the tournament once its first referee
    started, its row already stored (and with a stray traceback of gRPC's)."""
    taken = tmp_path / "taken"
    taken.write_text("a file\n")
    db = tmp_path / "new.db"
    built = tmp_path / "built"   # a bot with a setup: refused before the setup runs
    built.mkdir()
    (built / "bot.toml").write_text('name = "built"\nsetup = "touch ran"\ncommand = "true"\n')
    for logs in (taken, taken / "under"):
        proc = arena(mark, "tournament", BOTS / "random", built, "--games", 1, "--db",
                     db, "--logs", logs)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert error_line(proc) == (f"arena tournament: error: the bots' logs cannot go in {logs}: "
                                    f"{taken} is not a folder (give --logs DIR)")
        assert not db.exists() and not (built / "ran").exists()


def test_the_line_after_the_matches_counts_one_match_in_the_singular():
    from collections import Counter

    from arena.cli.live_view import played_line

    assert played_line(1, 2.0, Counter()) == "1 match played in 2.0 s (0.5/s); faults: none"
    assert played_line(2, 2.0, Counter({"timeout": 1})) == \
        "2 matches played in 2.0 s (1.0/s); faults: 1 timeout"
