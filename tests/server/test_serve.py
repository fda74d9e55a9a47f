"""``arena serve`` as organisers and bot authors use it: the real server in a subprocess on
a TCP port, the real commands, bots in their own processes (the Python SDK and Node.js)
reaching it with ``ONO99_REFEREE`` and ``ONO99_TOKEN``, hosted bots uploaded, checked and
run in the sandbox, a SQLite file that outlives the server."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from ono99.transport import grpc
from ono99.v1 import spectator_pb2, spectator_pb2_grpc

from arena.server.app import CLAIM_CHECK_S
from arena.rules.errors import ConfigError
from arena.watch.viewer import WatchedTournament
from support.launch import launched
from support.processes import (bot_env_names, env_for, kill_marked, new_mark, process_names,
                               processes_marked)
from support.matches import grow_ladder, store_ladder
from support.requirements import missing
from support.serve import BOTS, ROOT, Served, command

STANDINGS_KEYS = {"rank", "bot", "elo", "ci95", "elo_low", "elo_high", "matches", "wins",
                  "average_place", "faults"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the tests of this module that only add to it, with the hosted bot
    ``counter`` entered (its upload's output in ``counter_upload``: each test may run
    alone, or on its own worker). A remote bot due at a match is waited for 2 s."""
    value = new_mark()
    served = Served(tmp_path_factory.mktemp("serve") / "arena.db", value, "--absent-after", "2")
    served.counter_upload = served.ok("bots", "add", "counter", "--dir", BOTS / "counter").stdout
    yield served
    served.stop()
    kill_marked(value)


def test_the_organizer_token_is_printed_once_and_required(server, tmp_path):
    assert re.fullmatch(r"[A-Za-z0-9_-]{40,}", server.token)
    proc = server.arena("bots", "list", ONO99_ORGANIZER_TOKEN="")
    assert proc.returncode == 2
    assert "organiser commands need the organiser token" in proc.stderr
    proc = server.arena("bots", "list", ONO99_ORGANIZER_TOKEN="not-the-token")
    assert proc.returncode == 2, proc.stderr
    assert "the organiser token given is not this server's" in proc.stderr, proc.stderr
    # the token is kept hashed: not in the database
    assert server.token.encode() not in server.db.read_bytes()


def test_a_server_that_does_not_answer_is_exit_1_and_one_that_refuses_exit_2(server):
    """Exit 2 is a request to change (the server refused it: an unknown bot, a wrong
    token); exit 1 a server that failed the call (nothing answers at the address), which
    may work later. The organiser's commands exited 2 for both, where arena watch exited
    1 for a server that is not there."""
    with socket.socket() as closed:      # a port nothing listens at
        closed.bind(("127.0.0.1", 0))
        nowhere = f"127.0.0.1:{closed.getsockname()[1]}"
    for args in (["bots", "list"], ["bots", "remove", "nobody"], ["standings", "nope"],
                 ["tournament", "a", "b", "--games", "1"]):
        proc = subprocess.run(command(*args, "--server", nowhere), cwd=ROOT,
                              env=server.env(), capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1 and proc.stdout == "", proc.stdout + proc.stderr
        assert proc.stderr.splitlines() == [proc.stderr.strip()] and proc.stderr.startswith(
            f"arena {args[0]}: error: no arena server answers at {nowhere} "), proc.stderr
        refused = server.arena(*args)
        if args[0] != "bots" or args[1] != "list":     # the one that is not refused
            assert refused.returncode == 2 and refused.stdout == "", refused.stderr
            assert refused.stderr.splitlines() == [refused.stderr.strip()], refused.stderr
        # no port: a bad argument (exit 2), as arena watch says; it was taken as port 443,
        # where no server answered (exit 1)
        proc = subprocess.run(command(*args, "--server", "localhost"), cwd=ROOT,
                              env=server.env(), capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and proc.stderr == (
            f"arena {args[0]}: error: 'localhost' is not HOST:PORT with a port from 0 to 65535 "
            "(the address arena serve printed)\n"), proc.stderr


def test_remote_and_hosted_bots_play_a_tournament_on_the_server(server, node):
    py_token = server.add_remote("pyrandom")
    node_token = server.add_remote("nodecounter")
    hosted = server.counter_upload
    assert re.search(r"^check-bot: counter: \d+ passed, 0 failed", hosted, re.M), hosted
    assert "bot counter (version 1) entered" in hosted
    bots = [server.remote_bot("random/bot.py", py_token),
            server.remote_bot("node-counter/bot.js", node_token)]
    server.wait_connected("pyrandom")
    server.wait_connected("nodecounter")
    listed = {b["name"]: b for b in server.json("bots", "list")}
    assert {n: (listed[n]["kind"], listed[n]["connected"]) for n in ("pyrandom", "nodecounter", "counter")} \
        == {"pyrandom": ("remote", True), "nodecounter": ("remote", True), "counter": ("hosted", True)}

    proc = server.ok("tournament", "pyrandom", "nodecounter", "counter", "--games", "4",
                     "--name", "mixed")
    assert "tournament mixed on" in proc.stdout
    assert re.search(r"^12 matches played in [\d.]+ s \([\d.]+/s\); faults: none$", proc.stdout, re.M), proc.stdout
    table = server.json("standings", "mixed")
    assert table["tournament"] == "mixed"
    assert {row["bot"] for row in table["standings"]} == {"pyrandom", "nodecounter", "counter"}
    assert all(set(row) == STANDINGS_KEYS for row in table["standings"])
    assert sum(row["matches"] for row in table["standings"]) == 24
    assert set(table["los"]) == {"pyrandom", "nodecounter", "counter"}
    # the remote bots are still there, between matches, for the next tournament
    assert server.bot("pyrandom")["connected"] and server.bot("nodecounter")["connected"]

    # a second process with a bot's token is refused; the first plays on
    second = subprocess.run(command_bot("random/bot.py"), cwd=ROOT, capture_output=True, text=True,
                            env=server.env(ONO99_REFEREE=server.address, ONO99_TOKEN=py_token),
                            timeout=30)
    assert second.returncode == 3 and "REFUSAL_CODE_TOKEN_IN_USE" in second.stderr
    wrong = subprocess.run(command_bot("random/bot.py"), cwd=ROOT, capture_output=True, text=True,
                           env=server.env(ONO99_REFEREE=server.address, ONO99_TOKEN="guess"),
                           timeout=30)
    assert wrong.returncode == 3 and "REFUSAL_CODE_BAD_TOKEN" in wrong.stderr

    # removing a remote bot withdraws its token: its process is let go, its results stay
    assert "bot pyrandom removed" in server.ok("bots", "remove", "pyrandom").stdout
    assert bots[0].wait(30) == 0
    assert "the referee said goodbye: its token was withdrawn" in server.bot_stderr(bots[0])
    assert "pyrandom" not in {b["name"] for b in server.json("bots", "list")}
    assert server.json("standings", "mixed")["standings"]
    bots[1].terminate()
    bots[1].wait(10)


def command_bot(script: str) -> list[str]:
    return [sys.executable, str(BOTS / script)]


def test_a_new_version_of_a_bot_has_its_own_rating(server):
    first = server.ok("bots", "add", "lowest", "--dir", BOTS / "lowest").stdout
    second = server.ok("bots", "add", "lowest", "--dir", BOTS / "lowest").stdout
    assert "bot lowest (version 1) entered" in first
    assert "bot lowest v2 (version 2) entered" in second
    names = {b["name"]: b["version"] for b in server.json("bots", "list")}
    assert names["lowest"] == 1 and names["lowest v2"] == 2
    server.ok("tournament", "lowest", "lowest v2", "--games", "2", "--name", "versions")
    rows = {r["bot"] for r in server.json("standings", "versions")["standings"]}
    assert rows == {"lowest", "lowest v2"}


def test_a_hosted_bot_that_fails_its_check_does_not_enter(server, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text('name = "broken"\ncommand = "{python} bot.py"\n')
    (broken / "bot.py").write_text("import sys\nprint('no referee for me', file=sys.stderr)\nsys.exit(1)\n")
    proc = server.arena("bots", "add", "broken", "--dir", broken)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^FAIL ", proc.stdout, re.M)
    assert "bot broken (version 1) did not pass its check: it does not enter" in proc.stdout
    assert server.bot("broken")["status"] == "failed"
    proc = server.arena("tournament", "broken", "counter", "--games", "1")
    assert proc.returncode != 0 and "broken" in proc.stderr, proc.stderr


@pytest.mark.timeout(900)
def test_hosted_node_and_cpp_bots_find_the_server_s_sdks(server, node, tmp_path):
    """A Node.js or C++ bot found its SDK by a path into its author's repository
    (../../clients/node), which the server's copy of its folder does not have: the sample
    bots failed their check at upload ("Cannot find module"). Every bot the arena
    launches, and its setup, is told where the arena's SDKs are."""
    proc = server.ok("bots", "add", "node-counter", "--dir", BOTS / "node-counter")
    assert re.search(r"^check-bot: node-counter: 13 passed, 0 failed$", proc.stdout, re.M), proc.stdout
    absent = [tool for tool in ("cmake", "protoc", "grpc_cpp_plugin") if shutil.which(tool) is None]
    if absent:
        missing(f"a C++ bot needs {', '.join(absent)} (clients/cpp/install-deps.sh)")
    # its sources only (a build folder of this machine's is no part of an upload)
    folder = tmp_path / "cpp-counter"
    shutil.copytree(BOTS / "cpp-counter", folder, ignore=shutil.ignore_patterns("build"))
    proc = server.ok("bots", "add", "cpp-counter", "--dir", folder, timeout=900)
    assert re.search(r"^check-bot: cpp-counter: 13 passed, 0 failed$", proc.stdout, re.M), proc.stdout
    proc = server.ok("tournament", "node-counter", "cpp-counter", "--games", "2", "--name", "sdks")
    assert re.search(r"^4 matches played in [\d.]+ s \([\d.]+/s\); faults: none$", proc.stdout,
                     re.M), proc.stdout


def test_an_upload_over_the_limit_is_refused(server, tmp_path):
    big = tmp_path / "big"
    big.mkdir()
    (big / "bot.toml").write_text('name = "big"\ncommand = "{python} bot.py"\n')
    (big / "bot.py").write_text("")
    (big / "weights.bin").write_bytes(os.urandom(33 * 2**20))   # gzip cannot shrink it
    proc = server.arena("bots", "add", "big", "--dir", big)
    # a folder to change: exit 2 (the server's RESOURCE_EXHAUSTED is a failure, exit 1)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("arena bots: error: the upload is over the limit of 32 MiB: "
                                  f"{big} packs to 33.0 MiB"), proc.stderr
    assert "big" not in {b["name"] for b in server.json("bots", "list")}


def test_a_remote_bot_that_is_not_there_forfeits_as_absent(server):
    server.add_remote("ghost")
    proc = server.ok("tournament", "ghost", "counter", "--games", "1", "--name", "ghostly")
    # a table with a remote bot plays plain deals: one match for one game
    assert "tables with a remote bot play each deal once, unrotated: 1 match\n" in proc.stdout
    assert "; ghost absent)" in proc.stdout
    assert re.search(r"faults: 1 absent$", proc.stdout, re.M), proc.stdout
    rows = {r["bot"]: r for r in server.json("standings", "ghostly")["standings"]}
    assert rows["ghost"]["faults"] == {"absent": 1} and rows["counter"]["wins"] == 1


@pytest.mark.parametrize("executor", ["local", "multiprocess", "ray", "auto"])
def test_a_hosted_bot_removed_during_a_tournament_plays_no_more_of_it(request, tmp_path, mark,
                                                                      executor):
    """`arena bots remove` said "it plays no more", and a remote bot did not, but a hosted
    one played the rest of every tournament it was in: its later seats now forfeit. Under
    --executor multiprocess or ray it went on playing them even then, while the
    tournament's followers heard it was retired. (`arena serve --executor` takes every
    executor of the registry: it took all but ``auto``, from a list of its own.)"""
    if executor == "local":
        server = request.getfixturevalue("server")
    else:
        server = Served(tmp_path / f"{executor}.db", mark, "--executor", executor)
        server.ok("bots", "add", "counter", "--dir", BOTS / "counter")
    try:
        server.ok("bots", "add", "leaver", "--dir", BOTS / "random")
        follower = following(server, "leaving", 20, "leaver", "counter", "--games", "150", "-q")
        try:
            server.ok("bots", "remove", "leaver")
            before = matches_in(server.db, "leaving")
            out, err = follower.communicate(timeout=120)
        finally:
            follower.kill()
    finally:
        if executor != "local":
            assert server.stop() == 0
    assert follower.returncode == 0, out + err
    assert "leaver is retired: removed from the server" in out, out
    assert before < 300
    with sqlite3.connect(f"file:{server.db}?mode=ro", uri=True, timeout=5) as con:
        rows = con.execute("SELECT m.verdicts FROM matches m JOIN tournaments t ON "
                           "m.tournament_id = t.id WHERE t.name = 'leaving' "
                           "ORDER BY m.id").fetchall()
    con.close()
    removed = [json.loads(v) for (v,) in rows]
    removed = [v for v in removed if v and v[0]["detail"] == "removed from the server"]
    # every match that started after the removal (a few were playing it then)
    assert len(removed) >= 300 - before - 8, (before, len(removed))
    assert all(v[0]["kind"] == "retired" for v in removed)
    if executor == "auto" and (os.cpu_count() or 1) > 1:
        # on a server, auto is multiprocess where there are cores: a referee per process
        assert (tmp_path / "auto.db.d" / "logs" / "tournaments" / "leaving" / "worker0").is_dir()


@pytest.mark.parametrize("executor,gone", [
    ("local", "remote"), ("local", "hosted, its folder deleted"), ("multiprocess", "hosted"),
    ("multiprocess", "hosted, its folder deleted")])
def test_a_tournament_resumes_after_a_restart_without_the_bot_removed_from_it(tmp_path, mark,
                                                                            executor, gone):
    """A tournament interrupted after one of its bots was removed could never resume: "no bot
    called 'gone' on this server" at every restart and every --resume. The removed bot's
    seats forfeit, and the rest is played: on the server's referee (a remote bot), or
    elsewhere (hosted bots, --executor multiprocess), where it played them before. A
    removed hosted bot whose folder an operator deleted stopped the resumed tournament
    (its bot.toml read for a bot that is never launched): it forfeits there too."""
    flags = ("--absent-after", "0.2", "--executor", executor)
    served = Served(tmp_path / "gone.db", mark, *flags)
    if gone == "remote":
        served.add_remote("gone")                    # never connects: absent, quickly
    else:
        served.ok("bots", "add", "gone", "--dir", BOTS / "random")
    served.ok("bots", "add", "counter", "--dir", BOTS / "counter")
    # long enough to be cut part way: a remote bot never there forfeits each match at once
    games = 3000 if gone == "remote" else 500
    follower = following(served, "cut", 5, "gone", "counter", "--games", str(games), "-q")
    try:
        served.ok("bots", "remove", "gone")
        served.stop(signal.SIGKILL)
        follower.communicate(timeout=30)
    finally:
        follower.kill()
    if "deleted" in gone:
        shutil.rmtree(tmp_path / "gone.db.d" / "hosted" / "gone")
    before = matches_in(served.db, "cut")
    again = Served(tmp_path / "gone.db", mark, *flags, token=served.token)
    try:
        proc = again.arena("tournament", "--resume", "cut", "-q")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        # each deal twice, seats swapped, unless a remote bot is at the table
        assert matches_in(again.db, "cut") == (games if gone == "remote" else 2 * games) > before
        with sqlite3.connect(f"file:{again.db}?mode=ro", uri=True, timeout=5) as con:
            last = json.loads(con.execute("SELECT verdicts FROM matches ORDER BY id DESC "
                                          "LIMIT 1").fetchone()[0])
        con.close()
        assert [(v["kind"], v["detail"]) for v in last] == [("retired", "removed from the server")]
    finally:
        assert again.stop() == 0


def test_a_hosted_bot_s_logs_are_readable_and_its_errors_clear(server):
    logs = server.ok("bots", "logs", "counter")   # it may have printed nothing: no error
    # nothing printed was nothing at all, which looked like a command that did not work
    assert logs.stderr == ("" if logs.stdout else "arena bots logs: counter has no recent "
                           "output (its processes wrote nothing)\n")
    proc = server.arena("bots", "logs", "nobody")
    assert proc.returncode != 0 and "nobody" in proc.stderr
    proc = server.arena("bots", "add", "bad name!")
    assert proc.returncode != 0 and "name" in proc.stderr


# ---------------------------------------------------------------- restarts


def test_a_server_on_a_unix_socket_serves_its_spectators_beside_it(tmp_path, mark):
    """`arena serve --listen unix:PATH` (its organiser commands take unix:PATH) ended in a
    traceback: the spectators' default, the next port, was read from the path
    (`int('/...')`). Beside a socket they are on PATH.spectators; a remote bot, the
    organiser and a spectator each reach theirs."""
    where = f"unix:{tmp_path / 'r.sock'}"
    served = Served(tmp_path / "arena.db", mark, listen=where)
    remote = None
    try:
        assert served.address == where
        text = served._wait_for(r"spectators at \S+:")
        assert f"spectators at {where}.spectators: arena watch {where}.spectators" in text
        remote = served.remote_bot("lowest/bot.py", served.add_remote("stayer"))
        served.wait_connected("stayer")
        watched = subprocess.run(command("watch", f"{where}.spectators"), cwd=ROOT,
                                 env=served.env(), capture_output=True, text=True, timeout=60)
        assert watched.returncode == 0, watched.stderr
    finally:
        assert served.stop() == 0
        if remote is not None:
            remote.wait(30)


def test_a_default_spectators_address_that_cannot_be_served_is_refused_before_the_database(
        tmp_path, mark):
    """A unix socket's path of 100 bytes may be served, but not its spectators' beside it
    (111 bytes; the most is 107): refused with the arguments, no database made."""
    path = tmp_path / ("r" * (100 - len(str(tmp_path)) - len("/.sock")) + ".sock")
    assert len(str(path)) == 100, path
    proc = subprocess.run(command("serve", "--db", tmp_path / "arena.db", "--listen",
                                  f"unix:{path}"), cwd=ROOT, env=env_for(mark),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"arena serve: error: spectators cannot be served on "
                                  f"'unix:{path}.spectators' (the default beside --listen; "
                                  "--watch chooses): a unix socket's path has at most 107 bytes")
    assert not (tmp_path / "arena.db").exists()


def test_spectators_are_served_on_the_port_after_the_servers_by_default(tmp_path, mark):
    """The tests' servers take any free port for their spectators (Served): serve's own
    default, the next port, is this test's."""
    for _ in range(20):   # two free ports in a row
        with socket.socket() as first, socket.socket() as second:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            try:
                second.bind(("127.0.0.1", port + 1))
                break
            except OSError:
                continue
    served = Served(tmp_path / "arena.db", mark, listen=f"127.0.0.1:{port}",
                    next_port_spectators=True)
    try:
        assert served.address == f"127.0.0.1:{port}"
        assert (f"spectators at 127.0.0.1:{port + 1}: arena watch 127.0.0.1:{port + 1}"
                in served.output), served.output
    finally:
        assert served.stop() == 0


def test_the_ladder_plays_and_survives_a_restart(tmp_path, mark):
    """Hosted bots and a remote one on the ladder; the server stops and starts again on its
    database, on the same port: the ladder goes on from its stored ratings, and the remote
    bot, told no goodbye, reconnects by itself."""
    served = Served(tmp_path / "ladder.db", mark, "--ladder", listen="127.0.0.1:0")
    remote = None
    try:
        for name in ("random", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        remote = served.remote_bot("lowest/bot.py", served.add_remote("stayer"))
        served.wait_connected("stayer")
        before = wait_ladder(served, 10)
        assert {r["bot"] for r in before["standings"]} >= {"random", "greedy"}
        assert all(set(r) == STANDINGS_KEYS for r in before["standings"])
    finally:
        assert served.stop() == 0
    assert "arena server stopped" in served.output
    again = Served(tmp_path / "ladder.db", mark, "--ladder", token=served.token,
                   listen=served.address)
    try:
        assert "organizer token" not in again.output          # printed once, ever
        assert "3 bots entered; ladder on" in again.output
        played = sum(r["matches"] for r in before["standings"])
        after = wait_ladder(again, played // 2 + 5)
        assert sum(r["matches"] for r in after["standings"]) > played
        again.wait_connected("stayer")
        assert remote.poll() is None
        assert "reconnected to the referee" in served.bot_stderr(remote)
    finally:
        again.stop()
        if remote is not None:
            remote.wait(30)


def test_a_ladder_on_postgresql_rides_out_a_restart_of_the_database_server(
        tmp_path, mark, postgres_server, postgres_ascii_url):
    """On a SQL_ASCII database (what a cluster made under the C locale gives) the server
    answered every organiser command with a TypeError; and after a restart of the database
    server its connections stayed dead: every organiser command failed, and the ladder's
    results were lost without a word. Now the commands work again once the server is back,
    and the matches played meanwhile are stored, once each."""
    import psycopg

    served = Served(postgres_ascii_url, mark, "--ladder", "--data", str(tmp_path / "data"),
                    out=tmp_path / "serve.log")
    try:
        for name in ("random", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        before = sum(r["matches"] for r in wait_ladder(served, 5)["standings"]) // 2
        postgres_server.restart(2.0)                 # every session ended; down for 2 s
        assert {b["name"] for b in served.json("bots", "list")} == {"random", "greedy"}
        wait_ladder(served, before + 10)
    finally:
        assert served.stop() == 0
    with psycopg.connect(postgres_ascii_url, autocommit=True) as conn:
        keys = [r[0] for r in conn.execute("SELECT key FROM matches")]
    assert len(keys) == len(set(keys)) >= before + 10
    assert "Traceback" not in served.output and "is kept until" not in served.output


def test_a_server_serves_while_its_ladder_reads_the_matches_it_stored(tmp_path, mark,
                                                                       postgres_url):
    """A server read its ladder's stored matches in the event loop before it answered
    anyone: on 300,000 matches nobody was answered for 15 s or more, and remote bots, which
    try to reconnect for 10 s, gave up. The ladder reads them in a thread now. Here that
    read waits for as long as the test likes (another session locks the matches): the
    server starts and enters a bot meanwhile; once the lock goes, the ladder plays on
    after the keys stored. A spectator asking for the ladder meanwhile was told there was
    no such tournament (`arena watch --tournament ladder` exited 2 at once): now it waits
    for the ladder and follows it."""
    import psycopg

    first = Served(postgres_url, mark, "--ladder", "--data", str(tmp_path / "data"),
                   out=tmp_path / "a.log")
    try:
        for name in ("random", "greedy"):
            first.ok("bots", "add", name, "--dir", BOTS / name)
        wait_ladder(first, 3)
    finally:
        assert first.stop() == 0
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        before = {r[0] for r in conn.execute("SELECT key FROM matches")}
    with psycopg.connect(postgres_url) as lock:
        lock.execute("LOCK TABLE matches IN ACCESS EXCLUSIVE MODE")   # until the commit
        served = Served(postgres_url, mark, "--ladder", "--data", str(tmp_path / "data"),
                        token=first.token, out=tmp_path / "b.log")
        spectators = re.search(r"spectators at (\S+):", served.output).group(1)
        watched = tmp_path / "watch.log"
        watch = subprocess.Popen(command("watch", spectators, "--tournament", "ladder"),
                                 cwd=ROOT, env=served.env(), stdout=watched.open("w"),
                                 stderr=subprocess.STDOUT, text=True)
        try:
            added = served.ok("bots", "add", "alice")
            assert "bot token: " in added.stdout, added.stdout
            with pytest.raises(subprocess.TimeoutExpired):   # it waits (the old code: exit 2)
                watch.wait(5)
        except BaseException:
            watch.kill()
            served.stop()         # while the lock holds: a stop waits for no read
            raise
    try:
        wait_ladder(served, len(before) + 3)
        deadline = time.monotonic() + 60
        while "tournament ladder: " not in watched.read_text():
            assert watch.poll() is None and time.monotonic() < deadline, watched.read_text()
            time.sleep(0.1)
    finally:
        watch.kill()
        watch.wait()
        assert served.stop() == 0
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        keys = [r[0] for r in conn.execute("SELECT key FROM matches")]
    assert len(keys) == len(set(keys))
    assert sorted(int(k[1:]) for k in keys) == list(range(1, len(keys) + 1))
    assert "Traceback" not in served.output


def test_after_a_database_restart_one_server_at_a_time_still_holds(tmp_path, mark,
                                                                   postgres_server, postgres_url):
    """A PostgreSQL restart ends the session that holds a server's lock: a second server
    started then got it, and both played the ladder (550 matches, none stored: each
    'already stored'). Now the first takes its lock again when the database is back, or,
    where the second was quicker, stops with an error: one of the two serves on."""
    first = Served(postgres_url, mark, "--data", str(tmp_path / "a"), out=tmp_path / "a.log")
    second = None
    try:
        postgres_server.restart(1.0)                 # every session ended; down for 1 s
        with (tmp_path / "b.log").open("w") as out:
            second = subprocess.Popen(
                launched(command("serve", "--db", postgres_url, "--listen", "127.0.0.1:0",
                                 "--data", tmp_path / "b")),
                cwd=ROOT, env=env_for(mark), stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 30
        while first.proc.poll() is None and second.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3 * CLAIM_CHECK_S)                # time for the first to find out
        gone = [p for p in (first.proc, second) if p.poll() is not None]
        assert len(gone) == 1, (first.output, (tmp_path / "b.log").read_text())
        if gone[0] is second:                        # the first took its lock again
            assert second.returncode == 2
            assert "another arena serve is already using" in (tmp_path / "b.log").read_text()
        else:                                        # the second was quicker
            assert first.proc.returncode == 1
            assert "arena serve: error: another arena serve holds" in first.output
            assert "arena server at" in (tmp_path / "b.log").read_text()
    finally:
        first.stop()
        if second is not None and second.poll() is None:
            second.send_signal(signal.SIGTERM)
            second.wait(30)


def test_the_ladder_keeps_what_it_plays_while_its_database_cannot_take_it(tmp_path, mark):
    """Another process holds a write lock on the SQLite file past the busy timeout (a
    backup, a shell left in a transaction; a full disk is alike). The ladder's matches
    played meanwhile were lost ("could not be stored"), and it went on dealing matches it
    could not store. Now it keeps the one it played, starts nothing new until that is
    stored, and stores it once it can: every ladder match is stored, L1 to Ln."""
    db = tmp_path / "ladder.db"
    served = Served(db, mark, "--ladder", env={"ONO99_DB_TIMEOUT": "1"})
    try:
        for name in ("random", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        wait_ladder(served, 5)
        holder = sqlite3.connect(db, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            wait_logged(served, "the ladder waits for its database: database")
            # the match in flight ends and waits its busy timeout (1 s) before it is kept:
            # 3 s for both was short on a loaded machine; then time for a second one, which
            # a ladder that went on playing would keep (a match takes well under a second)
            wait_logged(served, "is kept until the database can store it")
            time.sleep(3)
            kept = served.output.count("is kept until the database can store it")
            assert kept == 1, served.output       # one table: one match played, kept
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        wait_logged(served, "the ladder's database is back")
        played = ladder_played(served)
        wait_ladder(served, played + 5)           # and it plays on
    finally:
        assert served.stop() == 0
    with sqlite3.connect(db) as conn:
        keys = sorted(int(k[1:]) for (k,) in conn.execute("SELECT key FROM matches"))
    assert keys == list(range(1, len(keys) + 1)), keys
    assert served.output.count(", kept, is stored") == 1, served.output
    assert "not stored" not in served.output and "Traceback" not in served.output


def test_a_bot_lost_while_the_server_stood_still_is_not_charged_on_the_ladder(tmp_path, mark):
    """The server stopped (Ctrl-Z, SIGSTOP) for longer than a bot waits for a referee that
    does not answer: a tournament plays such a match again, but the ladder stored it with
    the bot's crash, rated it, and counted it towards sitting the bot out (a copy of the
    local executor's code without its check; the thirty-first review). Here the bots are
    killed during a pause of 7 s (the SDKs leave on their own after 20 s): the match in
    flight is not stored, its n is dealt again, and the ladder plays on."""
    db = tmp_path / "ladder.db"
    # ismcts thinks (20 ms a move): a match is in flight all but a few ms of the time
    served = Served(db, mark, "--ladder", env={"ONO99_BOT_ENV": bot_env_names() + ",ONO99_THINK_MS",
                                              "ONO99_THINK_MS": "20"})
    # a follower of the ladder, as `arena watch --tournament ladder` and web pages are
    spectators = re.search(r"spectators at (\S+): arena watch", served.output).group(1)
    channel = grpc.insecure_channel(spectators)
    heard = []

    def follow() -> None:
        with contextlib.suppress(grpc.RpcError):
            for message in spectator_pb2_grpc.SpectatorStub(channel).WatchTournament(
                    spectator_pb2.WatchTournamentRequest(name="ladder")):
                heard.append(message)

    try:
        for name in ("random", "ismcts"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        threading.Thread(target=follow, daemon=True).start()
        wait_ladder(served, 2)
        server = served.proc.pid
        os.kill(server, signal.SIGSTOP)
        try:
            bots = [pid for pid in processes_marked(mark) if pid != server]
            assert bots
            for pid in bots:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(7)
        finally:
            os.kill(server, signal.SIGCONT)
        wait_ladder(served, ladder_played(served) + 3)       # with fresh processes
        followed = WatchedTournament()
        for message in list(heard):
            followed.apply(message)
    finally:
        assert served.stop() == 0
        channel.close()
    # (killed between two matches, the bots are started afresh for the next: nothing lost)
    if "is not stored" in served.output:
        dropped = re.search(r"ladder match L\d+ \((\S+)\) is not stored: this server was "
                            r"stopped for \d+ s \(Ctrl-Z, SIGSTOP, a paused machine\) and "
                            r"(random|ismcts)'s bot was lost meanwhile; it is dealt again",
                            served.output)
        assert dropped, served.output
        # its followers heard it start, and are told it is not live (it stayed live on
        # their pages: the thirty-second review)
        assert dropped.group(1) not in followed.live
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, verdicts FROM matches").fetchall()
    assert [(k, v) for k, v in rows if json.loads(v)] == []
    keys = sorted(int(k[1:]) for k, _ in rows)
    assert keys == list(range(1, len(keys) + 1)), keys   # the n not stored, dealt again
    assert "sits out" not in served.output and "Traceback" not in served.output


@pytest.mark.parametrize("fault,rogue,flags,env", [
    ("timeout", ("sleep", "1"), ("--move-time", "0.1", "--bank", "0.2"),
     {"ROGUE_SLEEP": "3600"}),
    ("illegal", ("garbage_always",), (), {}),
], ids=["never_answers", "breaking_the_rules"])
def test_a_remote_bot_at_fault_match_after_match_sits_out_of_the_ladder(tmp_path, mark, fault,
                                                                         rogue, flags, env):
    """A remote bot that stays connected and never answers cost each ladder opponent a
    whole clock, match after match, for as long as it stayed; one that answers every turn
    with a card outside the Card enum (and every refusal again) forfeited each match in a
    few round trips, seated again at once: 42 such matches in 35 s beside two sample bots,
    each stored and rated. After 3 such matches either sits out (for 5 minutes), logged,
    still connected; the others play on without it."""
    db = tmp_path / "ladder.db"
    served = Served(db, mark, "--ladder", *flags)
    rogue_bot = None
    try:
        for name in ("random", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        rogue_bot = served.remote_bot("../tests/bots/rogue.py", served.add_remote("rogue"),
                                      *rogue, **env)
        sits_out(served, "ladder: rogue sits out for 300 s: 3 of its last 3 matches ended in "
                 f"a fault of its own (the last: {fault})", 20)
        assert served.bot("rogue")["connected"]
    finally:
        assert served.stop() == 0
        if rogue_bot is not None:
            rogue_bot.kill()
            rogue_bot.wait()
    with sqlite3.connect(db) as conn:
        tables = [(json.loads(bots), json.loads(verdicts))
                  for bots, verdicts in conn.execute("SELECT bots, verdicts FROM matches")]
    its = [verdicts for bots, verdicts in tables if "rogue" in bots]
    assert [[v["kind"] for v in vs] for vs in its] == [[fault]] * 3, its
    assert len(tables) - len(its) >= 20
    assert "the referee ended its stream" not in served.output


SWITCHED = """\
import os
import sys
from ono99.bot import Bot, run

SWITCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "switch")


class Switched(Bot):
    name = "{name}"

    def choose(self, view):
        if os.path.exists(SWITCH):      # made by the test once the bot has entered
            {when_switched}
        return view.legal[0]


if __name__ == "__main__":
    raise SystemExit(run(Switched()))
"""


def switched_bot(folder: Path, name: str, when_switched: str) -> Path:
    """A bot to enter on a server, in ``folder``/``name``: it plays its first legal card,
    and runs the statement ``when_switched`` at each move once :func:`switch` is called."""
    bot = folder / name
    bot.mkdir()
    (bot / "bot.toml").write_text(f'name = "{name}"\ncommand = "{{python}} bot.py"\n')
    (bot / "bot.py").write_text(SWITCHED.format(name=name, when_switched=when_switched))
    return bot


def switch(data: Path, name: str) -> None:
    """Switch the hosted copy (version 1, under the server's data folder ``data``) of a
    :func:`switched_bot`."""
    (data / "hosted" / name / "v1" / "switch").write_text("")


def test_a_hosted_bot_that_keeps_crashing_sits_out_of_the_ladder(tmp_path, mark):
    """A hosted bot retired by its crashes (3, over the whole life of the server) was
    seated again at once, match after match, each an instant forfeit: 14,000 such
    matches in 70 s on a 5-bot ladder, in the database, and not a word in the log. Now it
    sits out for 5 minutes, logged, and plays again after that with fresh processes."""
    bot = switched_bot(tmp_path, "crashy", 'raise RuntimeError("crashy crashes")')
    db = tmp_path / "ladder.db"
    served = Served(db, mark, "--ladder", listen="127.0.0.1:0")
    try:
        for name, folder in (("random", BOTS / "random"), ("greedy", BOTS / "greedy"),
                             ("crashy", bot)):
            served.ok("bots", "add", name, "--dir", folder)
        wait_ladder(served, 6)
        switch(tmp_path / "ladder.db.d", "crashy")
        sits_out(served, "ladder: crashy sits out for 300 s: retired after 3 crashes or failed "
                 "starts (last: ", 30)
    finally:
        assert served.stop() == 0
    kinds = Counter(v["kind"] for v in stored_verdicts(db))
    assert kinds["crashed"] == 3 and kinds["retired"] == 0, kinds
    assert "Traceback" not in served.output


def test_a_database_restored_from_an_older_backup_takes_uploads_again(tmp_path, mark):
    """A database restored from a backup older than the data folder numbers the next
    version of a bot as one it has forgotten, whose folder is still there: every upload of
    that name failed ("Unexpected <class 'FileExistsError'>"), the version left
    'validating' until a restart. Now the forgotten folder and logs are moved aside, said
    in the log, and the upload enters with its own files."""
    db = tmp_path / "arena.db"
    served = Served(db, mark)
    backup = tmp_path / "backup.db"
    try:
        served.ok("bots", "add", "random", "--dir", BOTS / "random")
        with sqlite3.connect(db) as live, sqlite3.connect(backup) as copy:
            live.backup(copy)                     # as docs/storage.md says to back up
        served.ok("bots", "add", "later", "--dir", BOTS / "greedy")
    finally:
        assert served.stop() == 0
    for suffix in ("", "-wal", "-shm"):           # restored as docs/storage.md says
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(backup, db)
    again = Served(db, mark, token=served.token)
    try:
        upload = again.ok("bots", "add", "later", "--dir", BOTS / "lowest").stdout
        assert "bot later (version 1) entered" in upload, upload
        listed = {b["name"]: b["status"] for b in again.json("bots", "list")}
        assert listed == {"random": "active", "later": "active"}, listed
    finally:
        assert again.stop() == 0
    hosted = tmp_path / "arena.db.d" / "hosted" / "later"
    assert (hosted / "v1" / "bot.py").read_text() == (BOTS / "lowest" / "bot.py").read_text()
    [aside] = [p for p in hosted.iterdir() if p.name != "v1"]
    assert aside.name.startswith("v1.orphaned-")
    assert (aside / "bot.py").read_text() == (BOTS / "greedy" / "bot.py").read_text()
    assert "was left from a version this database does not have" in again.output
    assert "Traceback" not in again.output


def test_a_chatty_hosted_bot_s_ladder_process_is_replaced_before_its_output_limit(
        tmp_path, mark):
    """The output limit holds for a process's whole life, and the ladder keeps a hosted
    bot's process between its matches: a bot writing a little each move was stopped in
    the middle of a match once its process had written the limit (16 MiB; 2,000 matches
    of a bot writing 400 bytes a move), a *crashed* verdict, again and again. Now a
    process that has written half its limit plays no further match: a new one does.

    The ladder plays until the bot's processes have written twice its limit in all (a
    dozen matches): one process kept for them all would have been stopped at the limit,
    in the middle of a match. Sixty matches, asked for before, took over 120 s on a
    loaded machine, each worn process replaced by a fresh sandboxed one."""
    bot = switched_bot(tmp_path, "chatty",
                       'sys.stderr.write("thinking " + "." * 20_000 + "\\n")   # 20 KB a move')
    db = tmp_path / "ladder.db"
    logs = tmp_path / "ladder.db.d" / "logs" / "chatty"
    served = Served(db, mark, "--ladder", "--limit", "output=1", listen="127.0.0.1:0")
    try:
        for name, folder in (("random", BOTS / "random"), ("chatty", bot)):
            served.ok("bots", "add", name, "--dir", folder)
        switch(tmp_path / "ladder.db.d", "chatty")
        # its logs hold all it wrote: 2 MiB is within what they keep (4 times the limit)
        deadline = time.monotonic() + 180
        while sum(p.stat().st_size for p in logs.glob("*.log")) < 2 * 2**20:
            assert time.monotonic() < deadline, f"the ladder played too little:\n{served.output}"
            time.sleep(0.3)
    finally:
        assert served.stop() == 0
    assert stored_verdicts(db) == []


IDLER = """\
import os
import sys
import threading
from ono99.bot import Bot, run

SWITCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "switch")


class Idler(Bot):
    name = "idler"
    writer = None

    def choose(self, view):
        sys.stderr.write(f"move in {view.match.match_id}\\n")
        if os.path.exists(SWITCH) and self.writer is None:   # once: 600 KiB a second later
            self.writer = threading.Timer(1.0, self.idle)
            self.writer.start()
        return view.legal[0]

    def idle(self):
        sys.stderr.write(("i" * 1023 + "\\n") * 600)
        sys.stderr.write("idle output written\\n")
        sys.stderr.flush()


if __name__ == "__main__":
    raise SystemExit(run(Idler()))
"""


def test_a_process_that_wrote_much_while_idle_is_not_seated_again(tmp_path, mark):
    """A process past half its output limit plays no further match, judged as a match
    ended; one that wrote while idle between matches (a thread of its own), here 600 KiB
    of a 1 MiB limit during its rest on the ladder, was seated again (review 37). It is
    judged as it is leased too: a new process plays the next match."""
    bot = tmp_path / "idler"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "idler"\ncommand = "{python} bot.py"\n')
    (bot / "bot.py").write_text(IDLER)
    db = tmp_path / "ladder.db"
    logs = tmp_path / "ladder.db.d" / "logs" / "idler"
    served = Served(db, mark, "--ladder", "--ladder-rest", "3", "--limit", "output=1",
                    listen="127.0.0.1:0")
    try:
        for name, folder in (("random", BOTS / "random"), ("idler", bot)):
            served.ok("bots", "add", name, "--dir", folder)
        switch(tmp_path / "ladder.db.d", "idler")
        deadline = time.monotonic() + 60
        while not (idle := [p for p in logs.glob("*.log") if b"idle output written"
                            in p.read_bytes()]):
            assert time.monotonic() < deadline, f"no idle output:\n{served.output}"
            time.sleep(0.2)
        wait_ladder(served, ladder_played(served) + 2)
    finally:
        assert served.stop() == 0
    after = idle[0].read_bytes().split(b"idle output written", 1)[1]
    assert b"move in" not in after, after[:300]        # that process played no more
    assert stored_verdicts(db) == []


def wait_logged(served: Served, text: str, timeout: float = 30) -> None:
    """Until the server's output holds ``text``."""
    deadline = time.monotonic() + timeout
    while text not in served.output:
        assert time.monotonic() < deadline, f"the server did not log {text!r}:\n{served.output}"
        time.sleep(0.1)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_one_server_at_a_time_on_a_database_and_a_killed_one_lets_go(
        tmp_path, mark, backend, request):
    """Two servers on one database each dealt the ladder's matches L1, L2, ... and threw
    away the other's results ("already stored"); now the second is refused at once."""
    from support.processes import env_for

    db = tmp_path / "arena.db" if backend == "sqlite" else request.getfixturevalue("postgres_url")
    first = Served(db, mark, "--data", str(tmp_path / "data"), out=tmp_path / "first.log")
    try:
        second = subprocess.run(
            command("serve", "--db", db, "--listen", "127.0.0.1:0", "--data", tmp_path / "data2"),
            cwd=ROOT, env=env_for(mark), capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stdout + second.stderr   # as every refused start
        assert "another arena serve is already using" in second.stderr
        assert "Traceback" not in second.stderr
        assert first.proc.poll() is None
    finally:
        first.stop(signal.SIGKILL)
    # killed, it holds nothing: a server starts on the database at once
    again = Served(db, mark, "--data", str(tmp_path / "data"), out=tmp_path / "again.log",
                   token=first.token)
    assert again.stop() == 0
    third = Served(db, mark, "--data", str(tmp_path / "data"), out=tmp_path / "third.log",
                   token=first.token)           # and a stopped one lets go too
    assert third.stop() == 0


def test_a_ladder_served_again_at_another_table_size_or_clock_is_refused(tmp_path, mark):
    """A server restarted with another --table-size, --move-time or --bank rated its
    ladder's new matches with the old ones in one Elo, and said nothing. It is refused,
    before it listens, saying what the ladder was played at."""
    db = tmp_path / "arena.db"
    flags = ("--ladder", "--data", str(tmp_path / "data"))
    first = Served(db, mark, *flags, "--move-time", "0.5")
    assert first.stop() == 0
    for other, said in [(["--table-size", "3", "--move-time", "0.5"], "--table-size 2, not --table-size 3"),
                        (["--bank", "4", "--move-time", "0.5"], "--bank 10, not --bank 4"),
                        ([], "--move-time 0.5, not --move-time 1")]:
        refused = subprocess.run(
            command("serve", "--db", db, "--listen", "127.0.0.1:0", *flags, *other),
            cwd=ROOT, env=env_for(mark), capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.splitlines()[-1] == (
            f"arena serve: error: the ladder in this database was played at {said}: one "
            "rating would mix the two. Serve it as it was played (another ladder needs "
            "another database)"), refused.stderr
    again = Served(db, mark, *flags, "--move-time", "0.5", token=first.token)
    assert again.stop() == 0


def test_a_newer_arena_refused_beside_a_running_server_leaves_its_database_as_it_was(
        tmp_path, mark):
    """An upgrade started while the older server still ran (a second unit, a restart
    that did not wait) was refused, as one server at a time may serve a database, but
    had already brought the schema up to its own version: the older arena, still the one
    serving, could not open it again ("has schema version 5, newer than this arena's
    4"), and going back meant restoring a backup. Now a server claims the database
    before it migrates it."""
    from arena.store.migrations import schema_version

    db = tmp_path / "arena.db"
    first = Served(db, mark, "--data", str(tmp_path / "data"))
    try:
        with sqlite3.connect(db) as conn:   # as an older arena left it: one version behind
            conn.execute("DROP TABLE tournament_states")    # the last migration's
            conn.execute(f"PRAGMA user_version={schema_version('sqlite') - 1}")
        second = subprocess.run(
            command("serve", "--db", db, "--listen", "127.0.0.1:0", "--data", tmp_path / "data"),
            cwd=ROOT, env=env_for(mark), capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "another arena serve is already using" in second.stderr
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == schema_version("sqlite") - 1
    finally:
        assert first.stop() == 0
    again = Served(db, mark, "--data", str(tmp_path / "data"), token=first.token)
    try:
        assert again.json("bots", "list") == []
    finally:
        assert again.stop() == 0
    with sqlite3.connect(db) as conn:       # the server that serves it migrates it
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema_version("sqlite")


def test_ladder_rest_paces_each_bot(tmp_path, mark):
    """Without a rest the ladder seats a bot again as soon as its match ends: 4 bots played
    19,000 matches in 8 minutes, and the database grew with them. With --ladder-rest 1,
    each bot waits a second between its matches."""
    served = Served(tmp_path / "ladder.db", mark, "--ladder", "--ladder-rest", "1")
    try:
        for name in ("random", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        first = sum(r["matches"] for r in wait_ladder(served, 1)["standings"]) // 2
        started = time.monotonic()
        time.sleep(5)
        played = ladder_played(served)
        elapsed = time.monotonic() - started
        # one table of the two bots: at most a match a second (and the one under way)
        assert 1 <= played - first <= elapsed + 2, (first, played, elapsed)
    finally:
        assert served.stop() == 0


def sits_out(served: Served, logged: str, matches: int) -> None:
    """Wait for the server to log ``logged`` (a bot sitting out of the ladder), then for
    the ladder to play ``matches`` more: the others play on, without it."""
    wait_logged(served, logged, timeout=60)
    wait_ladder(served, ladder_played(served) + matches)


def stored_verdicts(db: Path) -> list[dict]:
    """Every verdict of every match stored in SQLite file ``db``."""
    with sqlite3.connect(db) as conn:
        return [v for (vs,) in conn.execute("SELECT verdicts FROM matches")
                for v in json.loads(vs)]


def ladder_played(served: Served) -> int:
    """How many matches the ladder has played (each counts once for each of its 2 seats)."""
    return sum(r["matches"] for r in served.json("standings", "ladder")["standings"]) // 2


def wait_ladder(served: Served, matches: int, timeout: float = 60) -> dict:
    """The ladder's standings once it has ``matches`` matches. On SQLite the matches
    stored are counted in the file first (each `arena standings` asked was a process's
    start, 0.5-0.9 s of CPU, and a fit in the server, every 0.3 s of the wait)."""
    deadline = time.monotonic() + timeout
    while isinstance(served.db, Path) and matches_in(served.db, "ladder") < matches:
        assert time.monotonic() < deadline, f"the ladder played too little:\n{served.output[-4000:]}"
        time.sleep(0.2)
    while True:
        table = served.json("standings", "ladder")
        if sum(r["matches"] for r in table["standings"]) >= 2 * matches:
            return table
        assert time.monotonic() < deadline, f"the ladder played too little: {table}"
        time.sleep(0.3)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP],
                         ids=["kill-9", "sigterm", "sighup"])
def test_a_tournament_resumes_after_the_server_is_killed(tmp_path, mark, sig):
    """Its follower says the server went, and how to follow the tournament again. Stopped
    with SIGTERM, the server told it the tournament had finished (exit 2, "error:
    CANCELLED" from the standings it then asked for); killed, the error had no way on."""
    served = Served(tmp_path / "t.db", mark)
    for name in ("random", "greedy"):
        served.ok("bots", "add", name, "--dir", BOTS / name)
    follower = following(served, "long", 20, "random", "greedy", "--games", "150")
    done = matches_in(served.db, "long")
    served.stop(sig)
    out, err = follower.communicate(timeout=30)
    assert follower.returncode == 1, out + err
    err = " ".join(err.split())
    assert "Traceback" not in out + err and "CANCELLED" not in err, err
    assert f"arena tournament --resume long --server {served.address}" in err, err
    if sig != signal.SIGKILL:   # SIGHUP: its terminal closed; it was as kill -9 before
        assert "the server stopped; the tournament resumes when the server starts again" in err
    else:
        assert "arena tournament: error: lost the server while following tournament long" in err
    again = Served(tmp_path / "t.db", mark, token=served.token)
    try:
        proc = again.ok("tournament", "--resume", "long")
        assert re.search(r"resuming: \d+ of 300 already played", proc.stdout), proc.stdout
        table = again.json("standings", "long")
        assert sum(r["matches"] for r in table["standings"]) == 600
        assert matches_in(again.db, "long") == 300 > done
    finally:
        again.stop()


def following(served: Served, name: str, stored: int, *args: str) -> subprocess.Popen:
    """``arena tournament ARGS --name NAME --server ...`` running, once ``stored`` of its
    matches are in the server's database."""
    follower = subprocess.Popen(
        command("tournament", *args, "--name", name, "--server", served.address), cwd=ROOT,
        env=served.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while matches_in(served.db, name) < stored:
        assert time.monotonic() < deadline and follower.poll() is None, follower.communicate()
        time.sleep(0.05)
    return follower


def matches_in(db: Path, tournament: str) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
        try:
            return con.execute("SELECT COUNT(*) FROM matches m JOIN tournaments t ON "
                               "m.tournament_id = t.id WHERE t.name = ?", (tournament,)).fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def test_two_remote_bots_play_matches_at_once_without_waiting_for_each_other(tmp_path, mark):
    """Two matches at once, the same two remote bots in opposite seats: leasing them seat by
    seat, each match would hold one bot and wait forever for the other. The leases must
    wait for that to show: with both bots connected, a match leases both seats without
    giving way, and the second match cannot start between them. Here east connects only
    once both matches wait for it: the first (east, west) holds east's seat, the second
    (west, east), leasing by seat, would hold west's and wait for east's for good."""
    served = Served(tmp_path / "arena.db", mark, "--absent-after", "60")
    bots, follower = [], None
    try:
        east, west = (served.add_remote(name) for name in ("east", "west"))
        bots.append(served.remote_bot("random/bot.py", west))
        served.wait_connected("west")
        out = tmp_path / "crossed.out"
        follower = subprocess.Popen(
            command("tournament", "east", "west", "--games", "12", "--name", "crossed",
                    "--server", served.address), cwd=ROOT, env=served.env(),
            stdout=out.open("w"), stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 60
        while "tournament crossed on " not in out.read_text():
            assert follower.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        time.sleep(1.0)          # both matches are leasing (the server does nothing else)
        bots.append(served.remote_bot("random/bot.py", east))
        try:
            follower.wait(60)
        except subprocess.TimeoutExpired:
            raise AssertionError("the two matches wait for each other's bots:\n"
                                 + out.read_text() + served.output[-2000:]) from None
        assert follower.returncode == 0, out.read_text()
        assert re.search(r"^12 matches played in .* faults: none$", out.read_text(), re.M), \
            out.read_text()
    finally:
        if follower is not None and follower.poll() is None:
            follower.kill()
            follower.wait(10)
        for bot in bots:
            bot.terminate()
            bot.wait(10)
        assert served.stop() == 0


def ladder_keys(db: Path) -> list[str]:
    """Every stored key of the ladder, duplicates included."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
        return [r[0] for r in con.execute(
            "SELECT m.key FROM matches m JOIN tournaments t ON m.tournament_id = t.id "
            "WHERE t.name = 'ladder'")]


def test_the_ladder_loses_and_repeats_nothing_when_the_server_is_killed(tmp_path, mark):
    """kill -9 of the server mid-ladder, two tables at once, then a restart on its database:
    every ladder match stored before is still there, none is stored twice, the ladder goes
    on, and the numbers of the matches cut short are dealt again: no gap in the keys."""
    db = tmp_path / "ladder.db"
    flags = ("--ladder", "--ladder-concurrency", "2")
    served = Served(db, mark, *flags, listen="127.0.0.1:0")
    slow = None
    try:
        for name in ("random", "greedy", "lowest"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        # a remote ismcts thinking 20 ms a move: its table's match is in flight, with a
        # lower number, while the other table stores later ones
        slow = served.remote_bot("ismcts/bot.py", served.add_remote("slow"), ONO99_THINK_MS="20")
        served.wait_connected("slow")
        wait_ladder(served, 20)
    finally:
        served.stop(signal.SIGKILL)
    before = ladder_keys(db)
    assert len(before) >= 20 and len(before) == len(set(before))
    again = Served(db, mark, *flags, token=served.token, listen=served.address)
    try:
        wait_ladder(again, len(before) + 20)
    finally:
        assert again.stop() == 0
        if slow is not None:
            slow.kill()
            slow.wait(10)
    after = ladder_keys(db)
    assert set(before) <= set(after) and len(after) == len(set(after)) > len(before)
    # the numbers in flight at the kill are dealt again; those in flight at the last stop
    # (one table of two, at most) will be after the next start
    numbers = {int(k[1:]) for k in after}
    assert set(range(1, max(int(k[1:]) for k in before) + 1)) <= numbers
    assert len(set(range(1, max(numbers) + 1)) - numbers) <= 1


@pytest.mark.parametrize("tables", ["1", "2"])
def test_the_ladder_starts_the_next_match_as_one_ends_and_seats_a_bot_once(tmp_path, mark,
                                                                           tables):
    """Two fast bots, one table or two at once: a bot plays one ladder match at a time,
    and the next starts as soon as one ends. It waited half a second after each (the loop
    missed the wake of a match that ended: 2 matches a second at most); and with two
    tables at once both bots were seated at both (the loop picked the second table before
    the first table's task had marked its bots as playing)."""
    db = tmp_path / "ladder.db"
    served = Served(db, mark, "--ladder", "--ladder-concurrency", tables, listen="127.0.0.1:0")
    try:
        for name in ("random", "lowest"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        wait_ladder(served, 12)
    finally:
        assert served.stop() == 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
        times = sorted((start, start + duration) for start, duration in con.execute(
            "SELECT m.started_at, m.duration_s FROM matches m "
            "JOIN tournaments t ON m.tournament_id = t.id WHERE t.name = 'ladder'"))
    gaps = [b[0] - a[1] for a, b in zip(times, times[1:])]
    assert len(gaps) >= 11 and min(gaps) >= 0, gaps               # never two at once
    assert sorted(gaps)[len(gaps) // 2] < 0.25, gaps


def bot_interpreters(mark: str) -> dict[int, Path]:
    """The marked Python bots' interpreters running now (not their sandboxes' bwrap), each
    with its working folder."""
    found = {}
    for pid in processes_marked(mark):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"bot.py" in argv and b"bwrap" not in argv[0]:
                found[pid] = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:   # gone
            pass
    return found


def test_the_ladder_keeps_only_the_hosted_bots_seated_last_running(tmp_path, mark):
    """Five hosted bots, one table at a time, one kept warm: a bot's process is stopped
    once it is not among the idle ones seated last, and started again when seated. It
    ran one process per hosted bot for as long as the server ran (40 MB each: 12 GB for
    300 bots). The ladder plays on as before, without faults."""
    db = tmp_path / "ladder.db"
    served = Served(db, mark, "--ladder", "--ladder-concurrency", "1", "--ladder-warm", "1",
                    listen="127.0.0.1:0")

    try:
        for i in range(5):
            served.ok("bots", "add", f"r{i}", "--dir", BOTS / "random")
        wait_ladder(served, 10)
        seen, counts = set(), []
        # watched until a bot's process has been started again and the running ones have
        # been no more than three (a loaded machine plays fewer matches a second: three
        # seconds of it once saw the same two seated throughout)
        deadline = time.monotonic() + 30
        while not (len(seen) > 5 and min(counts) <= 3) and time.monotonic() < deadline:
            alive = set(bot_interpreters(mark))
            seen |= alive
            counts.append(len(alive))
            time.sleep(0.1)
        table = wait_ladder(served, 30)
    finally:
        assert served.stop() == 0
    # started again and again (one process per bot: 5, all the time), and often no more
    # than the two seated and the one warm (the others stop as the next match starts)
    assert len(seen) > 5 and min(counts) <= 3, (len(seen), counts)
    assert all(r["faults"] == {} for r in table["standings"]), table


def test_a_new_server_s_database_and_data_folder_are_its_owner_s_alone(tmp_path, mark):
    """The database holds every tournament's master seed (each deal, live hands too,
    follows from it) and the data folder strangers' uploaded bots and their output: made
    under the usual umask, both were every local user's to read."""
    db = tmp_path / "arena.db"
    served = Served(db, mark, listen="127.0.0.1:0")
    try:
        modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()
                 if p.name in ("arena.db", "arena.db-wal", "arena.db.d")}
    finally:
        assert served.stop() == 0
    assert modes == {"arena.db": 0o600, "arena.db-wal": 0o600, "arena.db.d": 0o700}, modes


def test_a_removed_hosted_bot_s_warm_process_is_stopped(tmp_path, mark):
    """The ladder keeps a hosted bot's process between its matches (``--ladder-warm``):
    one removed kept running, idle, for as long as the server did while fewer bots than
    that were idle beside it (a bot removed for what it does went on doing it). It is
    stopped as it is removed (or as its match ends)."""
    served = Served(tmp_path / "ladder.db", mark, "--ladder", "--ladder-concurrency", "1",
                    listen="127.0.0.1:0")

    def folders() -> set[str]:
        """The hosted folders bot interpreters run in now."""
        return {folder.parent.name for folder in bot_interpreters(mark).values()}

    try:
        for name in ("r0", "r1", "r2"):
            served.ok("bots", "add", name, "--dir", BOTS / "random")
        wait_ladder(served, 6)
        assert folders() == {"r0", "r1", "r2"}      # each kept warm
        served.ok("bots", "remove", "r2")
        deadline = time.monotonic() + 15
        while "r2" in folders() and time.monotonic() < deadline:
            time.sleep(0.2)
        left = folders()
    finally:
        assert served.stop() == 0
    assert "r2" not in left, left


def test_a_hosted_bot_whose_folder_is_gone_sits_out_and_the_ladder_plays_on(tmp_path, mark):
    """A hosted bot's folder removed from the server's data folder (by hand, a full
    disk's cleanup) while it is not running: the ladder's task for its table raised out,
    and the bots seated with it stayed 'playing' for good (with three bots, the ladder
    stopped). Now that bot sits out, said in the log, and the others play on."""
    db = tmp_path / "ladder.db"
    served = Served(db, mark, "--ladder", "--ladder-warm", "0", listen="127.0.0.1:0")
    try:
        for name in ("random", "lowest", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        wait_ladder(served, 6)
        shutil.rmtree(tmp_path / "ladder.db.d" / "hosted" / "greedy")
        wait_logged(served, "ladder: greedy sits out for 300 s: ")
        played = ladder_played(served)
        wait_ladder(served, played + 10)
    finally:
        assert served.stop() == 0
    assert "Traceback" not in served.output


@pytest.mark.parametrize("args,said", [
    (["--ladder-concurrency", "0"], "--ladder-concurrency must be at least 1"),
    (["--table-size", "9"], "--table-size 9 is not allowed; tables seat 2 to 8"),
    # arena match's words, a traceback here (review 37), and a bare IPv6 host
    (["--listen", "unix"], "arena serve listens where bots and organisers reach it: --listen "
                           "HOST:PORT or unix:PATH, not 'unix'"),
    (["--listen", "tcp"], "arena serve listens where bots and organisers reach it: --listen "
                          "HOST:PORT or unix:PATH, not 'tcp'"),
    (["--listen", "::1"], "the referee cannot listen on '::1': write an IPv6 address in "
                          "brackets, with a port: [::1]:PORT"),
])
def test_a_bad_setting_of_the_server_is_one_line_before_serving(tmp_path, args, said):
    proc = subprocess.run(command("serve", "--db", tmp_path / "x.db", "--listen", "127.0.0.1:0",
                                  *args), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [f"arena serve: error: {said}"]
    assert not (tmp_path / "x.db").exists()


def test_a_tournament_the_ray_cluster_cannot_play_stops_with_why_and_the_server_goes_on(
        tmp_path, mark):
    """A Ray cluster with no CPU for a referee (a head started with --num-cpus 0 and no
    worker yet): the server's tournament stops at once, its follower hears why (exit 1, the
    error, how to go on), its spectators that it is over, and the server keeps serving; a
    local one says the same."""
    from ray.cluster_utils import Cluster
    cluster = Cluster(initialize_head=True, connect=False,
                      head_node_args={"num_cpus": 0, "include_dashboard": False})
    served = Served(tmp_path / "nocpu.db", mark, "--executor", "ray",
                    "--ray-address", cluster.address)
    try:
        for name in ("random", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        proc = served.arena("tournament", "random", "greedy", "--games", "2", "--name", "nocpu")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert ("error: tournament nocpu stopped on the server: the Ray cluster has no CPU to "
                "place a referee on" in " ".join(proc.stderr.split())), proc.stderr
        assert "arena tournament --resume nocpu" in " ".join(proc.stderr.split())
        assert served.output.count("tournament nocpu stopped") == 1
        # one line in the server's log, the counts with the reason (it was an ERROR line,
        # then an INFO "ended" line saying it again)
        assert "tournament nocpu stopped: 0 of 4 matches played in " in served.output
        assert "tournament nocpu ended" not in served.output
        # its spectators hear it is over (they waited for good: the twentieth review)
        spectators = re.search(r"spectators at (\S+):", served.output).group(1)
        watched = subprocess.run(command("watch", spectators, "--tournament", "nocpu"), cwd=ROOT,
                                 env=served.env(), capture_output=True, text=True, timeout=30)
        assert watched.returncode == 0, watched.stdout + watched.stderr
        # following it again plays what is left: here it stops again, for the same reason
        proc = served.arena("tournament", "--resume", "nocpu")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "stopped on the server: the Ray cluster has no CPU" in " ".join(proc.stderr.split())
        assert served.output.count("tournament nocpu stopped") == 2
        assert [b["name"] for b in served.json("bots", "list")] == ["random", "greedy"]
        # the same run played here, not on a server: the same reason, how to go on, exit 1
        proc = subprocess.run(command("tournament", BOTS / "random", BOTS / "greedy", "--games",
                                      "2", "--db", tmp_path / "local.db", "--name", "here",
                                      "--executor", "ray", "--ray-address", cluster.address),
                              cwd=ROOT, env=served.env(), capture_output=True, text=True,
                              timeout=120)
        err = " ".join(proc.stderr.split())
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "arena tournament: error: the Ray cluster has no CPU to place a referee on" in err
        assert "0 of 4 matches are stored" in err and "arena tournament --resume here" in err
    finally:
        assert served.stop() == 0
        cluster.shutdown()


def test_a_tournament_of_hosted_bots_plays_on_ray_and_a_remote_bot_s_on_the_server(tmp_path, mark):
    """``arena serve --executor ray``: hosted bots only: on a (local) Ray cluster, their
    matches followed and stored as on the server's referee; a table with a remote bot,
    which connects to this server, plays here."""
    served = Served(tmp_path / "ray.db", mark, "--executor", "ray")
    remote = None
    try:
        # its local cluster started with the server, before the server's threads: forked
        # later, from among gRPC's threads, Ray's raylet once hung before it could exec
        assert "raylet" in process_names(processes_marked(mark))
        for name in ("random", "greedy"):
            served.ok("bots", "add", name, "--dir", BOTS / name)
        goodbyes = served.ok("bots", "logs", "random").stdout.count("the referee said goodbye")
        proc = served.ok("tournament", "random", "greedy", "--games", "4", "--name", "onray",
                         "--seed", "3")
        assert "8 matches played" in proc.stdout, proc.stdout
        # its processes on the Ray nodes wrote their logs there: arena bots logs reads them
        assert served.ok("bots", "logs", "random").stdout.count(
            "the referee said goodbye") > goodbyes
        table = served.json("standings", "onray")
        assert sum(r["matches"] for r in table["standings"]) == 16
        assert all(r["faults"] == {} for r in table["standings"]), table
        logs = tmp_path / "ray.db.d" / "logs" / "tournaments" / "onray"
        assert sorted(p.name for p in logs.glob("ray*/*.stderr.log")), "no bot ran on Ray"

        remote = served.remote_bot("lowest/bot.py", served.add_remote("far"))
        served.wait_connected("far")
        proc = served.ok("tournament", "random", "far", "--games", "2", "--name", "mixed")
        assert matches_in(served.db, "mixed") == 2
        assert not (tmp_path / "ray.db.d" / "logs" / "tournaments" / "mixed").exists()
    finally:
        assert served.stop() == 0
        if remote is not None:
            remote.wait(30)


def test_strangers_opening_connections_by_the_hundred_leave_the_server_its_files(tmp_path, mark):
    """Each port holds at most a quarter of the server's open-files limit (arena.files):
    at 2,000 connections a port under a limit of 1,024 (systemd's default), raw sockets
    opened by the hundred took every descriptor the server had, for a bot's process, the
    database or the organiser."""
    limit = 400
    served = Served(tmp_path / "files.db", mark, nofile=(limit, limit))
    try:
        host, port = served.address.rsplit(":", 1)
        fds = Path(f"/proc/{served.proc.pid}/fd")
        before = len(list(fds.iterdir()))
        held = []
        try:
            for _ in range(limit):
                held.append(socket.create_connection((host, int(port)), timeout=5))
            time.sleep(1)                            # all accepted, or closed at once
            during = len(list(fds.iterdir()))
        finally:
            for sock in held:
                sock.close()
        assert during - before <= limit // 4 + 5, (before, during)
        time.sleep(0.5)
        assert served.json("bots", "list") == []     # and it serves on
    finally:
        assert served.stop() == 0


def test_the_server_raises_its_open_files_limit_to_what_the_system_allows(tmp_path, mark):
    """A soft limit of 1,024 under a hard one of half a million (systemd's defaults) gave
    each port a quarter of 1,024: the arena raises the soft limit first, as Go's runtime
    does."""
    served = Served(tmp_path / "limit.db", mark, nofile=(256, 4096))
    try:
        limits = Path(f"/proc/{served.proc.pid}/limits").read_text()
        assert re.search(r"^Max open files\s+4096\s+4096\s+files", limits, re.M), limits
    finally:
        assert served.stop() == 0


def _peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M).group(1)) / 1024


def test_a_long_ladder_s_server_starts_without_holding_all_its_matches(tmp_path, mark):
    """A server reads its ladder's stored matches as it starts. It read them whole, as
    records (4 KB each), twice, the second time in its event loop: on 300,000 matches
    of a months-old ladder it took 1.2 GB and 17 s to start, then served nothing for
    10 s more; each month of matches made that worse. Now it reads them once, a page
    at a time (an index of each tournament's matches in order, schema 5), keeping what
    the ratings read of each."""
    empty = Served(tmp_path / "empty.db", mark, "--ladder")
    try:
        empty.json("standings", "ladder")
        baseline = _peak_rss_mb(empty.proc.pid)
    finally:
        assert empty.stop() == 0
    db = tmp_path / "long.db"
    store_ladder(db, bots=8, matches=50)
    grow_ladder(db, 1999)                     # 50 played, stored again as 100,000
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM matches").fetchone()[0] == 100_000
    served = Served(db, mark, "--ladder")
    try:
        table = served.json("standings", "ladder")
        assert sum(r["matches"] for r in table["standings"]) == 2 * 100_000
        grown = _peak_rss_mb(served.proc.pid) - baseline
    finally:
        assert served.stop() == 0
    assert grown < 120, f"the server's peak memory grew by {grown:.0f} MB"   # 320 MB before


def test_a_data_folder_that_is_a_file_is_one_line_before_serving(tmp_path):
    # it served, and every hosted upload then failed with NotADirectoryError
    (tmp_path / "afile").write_text("")
    proc = subprocess.run(command("serve", "--db", tmp_path / "x.db", "--data", tmp_path / "afile",
                                  "--listen", "127.0.0.1:0"),
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines()[-1] == (f"arena serve: error: the data folder "
                                            f"{tmp_path / 'afile'} cannot be made: File exists")
    assert not (tmp_path / "x.db").exists()


def quick_calls_during(organiser, name: str) -> tuple[object, float, list[float]]:
    """Ask for ``name``'s standings (with every likelihood of superiority) and, until they
    come, make quick calls one after another: the standings, how long they took, and how
    long each quick call waited."""
    waits = []
    with ThreadPoolExecutor(1) as pool:
        t0 = time.monotonic()
        board = pool.submit(organiser.standings, name)
        while not board.done():
            t = time.monotonic()
            with pytest.raises(ConfigError, match="no bot called 'nobody'"):
                organiser.logs("nobody")
            waits.append(time.monotonic() - t)
        return board.result(), time.monotonic() - t0, waits


def test_standings_carry_the_likelihoods_of_superiority_only_for_a_field_as_small_as_asked(
        tmp_path, mark):
    """The likelihood of superiority of every two bots is n^2 values (4 MB for 500 bots),
    and `arena standings` prints it only for up to 12 bots: it asks for them only then."""
    from arena.server.client import OrganizerClient

    db = tmp_path / "ladder.db"
    store_ladder(db, 14, 80)
    served = Served(db, mark)
    try:
        with OrganizerClient(served.address, served.token) as organiser:
            every = organiser.standings("ladder")
            assert len(every.standings) == 14 and len(every.los) == 14
            assert all(len(row.los) == 14 for row in every.los)
            assert len(organiser.standings("ladder", 14).los) == 14
            small = organiser.standings("ladder", 13)
            assert not small.los and small.standings == every.standings
            with pytest.raises(ConfigError, match="los_max_bots must be 0 .* not -1"):
                organiser.standings("ladder", -1)
        printed = served.ok("standings", "ladder").stdout
        assert "b13" in printed and "likelihood of superiority" not in printed
        assert len(served.json("standings", "ladder")["los"]) == 14
    finally:
        assert served.stop() == 0


def test_a_big_field_s_likelihoods_of_superiority_are_worked_out_off_the_event_loop(
        tmp_path, mark):
    """Once a big ladder's fit was done, its likelihoods of superiority (250,000 for 500
    bots) were worked out and encoded in the server's event loop, where every match it
    referees and every other call waited for them. Now in a thread: a quick call made
    meanwhile is answered at once."""
    from arena.server.client import OrganizerClient

    db = tmp_path / "big.db"
    store_ladder(db, 500, 2000)
    served = Served(db, mark)
    try:
        with OrganizerClient(served.address, served.token) as organiser:
            assert not organiser.standings("ladder", 12).los       # fitted, no LOS
            answer, took, waits = quick_calls_during(organiser, "ladder")
            assert len(answer.los) == 500
            assert took > 0.1 and max(waits) < took / 2, (took, sorted(waits)[-5:])
    finally:
        assert served.stop() == 0


def test_a_big_ladder_s_standings_are_fitted_without_stalling_the_server(tmp_path, mark):
    """The standings of a ladder of 150 bots: the fit took about half a second (minutes in
    pure Python, before numpy), in the server's event loop, where every match it referees
    and every other call waited for it. Now it runs in a thread of its own: a quick call
    made meanwhile is answered at once, and asking again reuses the fit."""
    from arena.server.client import OrganizerClient

    db = tmp_path / "big.db"
    store_ladder(db, 150, 900)
    served = Served(db, mark)
    try:
        with OrganizerClient(served.address, served.token) as organiser:
            answer, took, waits = quick_calls_during(organiser, "ladder")
            assert len(answer.standings) == 150 and answer.matches == 900
            assert took > 0.2 and max(waits) < took / 2, (took, sorted(waits)[-5:])
            t0 = time.monotonic()
            again = organiser.standings("ladder")
            assert again == answer and time.monotonic() - t0 < took / 2
    finally:
        assert served.stop() == 0


def test_a_cancelled_tournament_stops_is_not_resumed_by_a_restart_and_plays_on_when_followed(
        tmp_path, mark):
    """There was no way to stop a server tournament: killing the server only paused it
    (it resumes at every start). Cancelled, its matches in flight are dropped, those
    played stay; its follower says so; a restart leaves it; --resume plays what is left."""
    served = Served(tmp_path / "t.db", mark)
    for name in ("random", "greedy"):
        served.ok("bots", "add", name, "--dir", BOTS / name)
    follower = following(served, "long", 20, "random", "greedy", "--games", "150")
    proc = served.ok("tournament", "--cancel", "long")
    said = re.fullmatch(r"tournament long cancelled on \S+ after (\d+) of 300 matches; it is not "
                        r"resumed when the server restarts\. What is left plays with: arena "
                        r"tournament --resume long --server \S+\n", " ".join(proc.stdout.split())
                        + "\n")
    assert said, proc.stdout
    played = int(said.group(1))
    assert 20 <= played < 300 and matches_in(served.db, "long") == played
    out, err = follower.communicate(timeout=30)
    assert follower.returncode == 1, out + err
    assert (f"cancelled by the organiser after {played} of 300 matches; following it by name "
            "plays what is left") in " ".join(err.split()), err
    # the one form of every command's error (README), as a local tournament's stop says it
    assert err.startswith("arena tournament: error: tournament long stopped on the server"), err
    time.sleep(0.5)
    assert matches_in(served.db, "long") == played          # nothing plays on
    again = served.arena("tournament", "--cancel", "long")
    assert again.returncode == 2
    assert "tournament 'long' is not running: cancelled by the organiser" in again.stderr
    missing = served.arena("tournament", "--cancel", "nope")
    assert missing.returncode == 2 and "no tournament called 'nope' on this server" in missing.stderr
    served.stop()
    # the server's journal: who entered, what started and how it ended
    assert journal(served) == [
        "bot random entered: hosted, its check 13 passed, 0 failed",
        "bot greedy entered: hosted, its check 13 passed, 0 failed",
        "tournament long started: random, greedy, 300 of 300 matches to play",
        f"tournament long ended: {played} of 300 matches played in S s: cancelled by the "
        f"organiser after {played} of 300 matches; following it by name plays what is left"]

    restarted = Served(tmp_path / "t.db", mark, token=served.token)
    try:
        time.sleep(1.0)
        assert matches_in(restarted.db, "long") == played   # not resumed by the restart
        left = restarted.arena("tournament", "--cancel", "long")
        assert left.returncode == 2 and "is not running: it was cancelled" in left.stderr
        proc = restarted.ok("tournament", "--resume", "long")
        assert f"resuming: {played} of 300 already played" in proc.stdout, proc.stdout
        assert matches_in(restarted.db, "long") == 300
        restarted.ok("bots", "remove", "greedy")
    finally:
        restarted.stop()
    assert journal(restarted) == [
        f"tournament long resumed: random, greedy, {300 - played} of 300 matches to play",
        "tournament long finished: 300 of 300 matches played in S s",
        "bot greedy removed"]


def journal(served: Served) -> list[str]:
    """The server's INFO lines, without their time stamps and durations."""
    return [re.sub(r" in [\d.]+ s", " in S s", line.split(" INFO arena.server: ", 1)[1])
            for line in served.output.splitlines() if " INFO arena.server: " in line]
