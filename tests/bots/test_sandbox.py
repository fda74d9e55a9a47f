"""The bot sandbox against hostile bots (tests/bots/hostile.py), each in a real tournament
with real processes: what it tries fails or is stopped with a verdict naming the limit,
the tournament finishes for the others, and nothing the bot started is left."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.hostile import hostile
from support.processes import env_for, processes_marked
from support.requirements import missing

from arena.bots.sandbox import USER_BASE, Limits, SandboxFactory, runs_as_user

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "bots" / "random"


@pytest.fixture(autouse=True)
def sandbox_available():
    problem = SandboxFactory.unavailable()
    if problem:
        missing(f"the bot sandbox: {problem}")


def needs_own_user() -> None:
    """Skip where bots do not run as a user of their own (an arena not run as root)."""
    if not runs_as_user():
        pytest.skip("the arena does not run as root here: its bots run as its own user")


def run_sandboxed(argv: list[str], folder: Path, limits: Limits = Limits(),
                  setup: bool = False) -> list[str]:
    """The output lines of ``argv`` run in a sandbox (a setup's, with ``setup``), which
    must exit 0."""
    async def ran() -> str:
        jail, _ = await SandboxFactory(limits).start(argv, folder, {}, setup=setup)
        try:
            out = await asyncio.wait_for(jail.proc.stdout.read(), 30)
            assert await jail.proc.wait() == 0, out
            return out.decode()
        finally:
            jail.close()

    return asyncio.run(ran()).splitlines()


def run(mark: str, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", *map(str, args)], cwd=ROOT,
                          env=env_for(mark), capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def tournament(mark: str, tmp_path: Path, bot: Path, *flags, games: int = 2,
               other: Path = RANDOM) -> dict:
    """A tournament of the hostile bot and another; it finishes (exit 0), every match is
    stored, nothing is left running. Returns the hostile bot's reports, its faults and
    verdicts, and its log."""
    db = tmp_path / "t.db"
    proc = run(mark, "tournament", bot, other, "--games", games, "--db", db, "--logs",
               tmp_path / "logs", "--concurrency", 1, "-q", *flags)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    deadline = time.monotonic() + 5
    while processes_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_marked(mark) == [], "a process of a bot outlived the tournament"
    standings = json.loads(run(mark, "standings", "--db", db, "--json").stdout)
    matches = json.loads(run(mark, "matches", "--db", db, "--json").stdout)
    assert len(matches) == 2 * games and all(m["status"] == "finished" for m in matches)
    line = next(s for s in standings["standings"] if s["bot"] == "hostile")
    verdicts = [v for m in matches for v in m["verdicts"] if m["bots"][v["seat"]] == "hostile"]
    logs = sorted((tmp_path / "logs").glob("hostile*.stderr.log"))
    text = "".join(p.read_text(errors="replace") for p in logs)
    # a report is one line of its own, but the SDK's own lines (on stderr, the same pipe)
    # are two writes: one may end in front of a report, on its line
    decode = json.JSONDecoder().raw_decode
    reports = [decode(line[line.index("HOSTILE {") + 8:])[0] for line in text.splitlines()
               if "HOSTILE {" in line]
    return {"reports": reports, "faults": line["faults"], "verdicts": verdicts, "logs": logs,
            "db": db}


def test_it_cannot_read_outside_its_folder(tmp_path, mark):
    other = shutil.copytree(RANDOM, tmp_path / "random", ignore=shutil.ignore_patterns("__pycache__"))
    files = [tmp_path / "t.db", other / "bot.py", "/etc/shadow", ROOT / "README.md",
             ROOT / "tests" / "bots" / "hostile.py", Path.home() / ".bashrc"]
    # npm's settings, often with the organiser's registry token: for setup steps only
    files += [p for p in [Path("/etc/npmrc")] if p.exists()]
    # the machine's TLS keys: root's alone, and the bot runs as the host's uid 0
    files += [p for p in [Path("/etc/ssl/private")] if p.exists()]
    folders = [ROOT, tmp_path]
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "read", *files, *folders),
                     other=other)
    tried = {r["what"][5:]: r for r in out["reports"] if r["process"] == out["reports"][0]["process"]}
    assert [str(f) for f in files if tried[str(f)]["ok"]] == []
    # a folder above a mounted one shows only the mount points: nothing else of the host
    assert set(tried[str(ROOT)]["result"]) <= {".venv", "arena", "clients", "proto"}
    assert tried[str(tmp_path)]["result"] == ["bot"]


def test_it_cannot_write_outside_its_scratch_folder(tmp_path, mark):
    other = shutil.copytree(RANDOM, tmp_path / "random", ignore=shutil.ignore_patterns("__pycache__"))
    bot = tmp_path / "bot"
    refused = [bot / "mine.txt", other / "bot.py", "/usr/dropped.txt", "/dev/dropped.txt"]
    private = ["/tmp/fine.txt", "/scratch/fine.txt", "/dev/shm/fine.txt"]
    # the folders bwrap made in its own /tmp to bind the bot's folder: root's, where the
    # bot runs as a user of its own; the bot's own (uid 0) before
    (refused if runs_as_user() else private).append(tmp_path / "dropped.txt")
    # the repository: read-only, unless it lies under /tmp (a fresh clone in CI), where the
    # write lands in the sandbox's private /tmp
    (private if ROOT.is_relative_to("/tmp") and not runs_as_user() else refused).append(
        ROOT / "dropped.txt")
    out = tournament(mark, tmp_path, hostile(bot, "write", *refused, *private), other=other)
    ok = {r["what"].split(" ", 1)[1]: r["ok"] for r in out["reports"]}
    assert ok == {**{str(p): False for p in refused}, **{str(p): True for p in private}}
    # and none of it reached the host
    assert (other / "bot.py").read_text() == (RANDOM / "bot.py").read_text()
    new = [bot / "mine.txt", ROOT / "dropped.txt", "/usr/dropped.txt", tmp_path / "dropped.txt"]
    assert [p for p in new if Path(p).exists()] == []


def test_it_has_no_capability_and_cannot_remount_its_mounts_writable(tmp_path, mark):
    """Run by root, bwrap keeps every capability unless told: with CAP_SYS_ADMIN over its
    mount namespace a bot could make its folder, the arena's code or /usr writable (as the
    host's root), and change what the arena runs next."""
    bot = tmp_path / "bot"
    targets = [bot, ROOT / "arena", "/usr"]
    out = tournament(mark, tmp_path, hostile(bot, "remount", *targets))
    caps = [r for r in out["reports"] if r["what"] == "capabilities"]
    assert len(caps) == 2 and all(r["result"] == "0000000000000000" for r in caps), caps
    tried = [r for r in out["reports"] if r["what"].startswith("remount ")]
    assert len(tried) == 2 * len(targets) and not any(r["ok"] for r in tried), tried
    assert all("Operation not permitted" in r["error"] for r in tried), tried


def test_it_cannot_change_the_host_s_kernel_settings(tmp_path, mark):
    """The bot ran as the host's uid 0, and the kernel lets uid 0 write most of
    /proc/sys with no capability: kernel.core_pattern (a program the host's root runs at
    the next crash), kernel.pid_max, vm.drop_caches (every page cache emptied). It could
    open each for writing before (nothing is written here, even then). /proc/sys is
    read-only, and where the arena runs as root the bot runs as a user of its own, whom
    the files' modes refuse first."""
    sysctls = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/pid_max",
               "/proc/sys/vm/drop_caches"]
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "open_for_writing", *sysctls))
    tried = [r for r in out["reports"] if r["what"].startswith("open for writing ")]
    assert len(tried) == 2 * len(sysctls) and not any(r["ok"] for r in tried), tried
    refusal = "Permission denied" if runs_as_user() else "Read-only file system"
    assert all(refusal in r["error"] for r in tried), tried


def test_each_sandbox_runs_as_a_user_of_its_own(tmp_path, mark):
    """Run by root, the sandbox ran its bot as the host's uid 0 (with no capability):
    the owner of most of the host's files, whom the kernel lets do much by its uid alone.
    Each sandbox now runs as a user of its own, USER_BASE + its bwrap's pid: no other
    group, no capability left from the setpriv that made it, no new user namespace (the
    seccomp filter), and threads still start (clone3 is refused as absent; the C library
    falls back to clone). Two bots at one table, each in a sandbox of its own, are two
    users."""
    needs_own_user()
    other = hostile(tmp_path / "other", "identity")
    toml = other / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "hostile"', 'name = "hostile2"'))
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "identity"), other=other)
    tried = {}
    for r in out["reports"]:
        tried.setdefault(r["what"], []).append(r)
    processes = {r["process"] for r in tried["identity"]}
    assert len(processes) >= 2, tried
    assert [len(tried[w]) for w in ("identity", "new user namespace", "thread")] == \
        [len(processes)] * 3, tried
    # each process a uid of its own (bwrap's pid: the host's pids do not come round again
    # within a test)
    assert len({r["result"]["uids"][0] for r in tried["identity"]}) == len(processes), tried
    for r in tried["identity"]:
        got = r["result"]
        uid = got["uids"][0]
        assert USER_BASE < uid < USER_BASE + 2**22, got          # (pid_max: 2^22 at most)
        assert got["uids"] == [uid] * 3 and got["gids"] == [uid] * 3, got
        assert got["groups"] == [], got
        assert {got[c] for c in ("CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd")} == \
            {"0" * 16}, got
        assert got["NoNewPrivs"] == "1", got
        # named, in files of its own: the host's users are not shown
        assert (got["name"], got["home"], got["users"]) == \
            ("bot", "/scratch", ["root", "nobody", "bot"]), got
    assert not any(r["ok"] for r in tried["new user namespace"]), tried["new user namespace"]
    assert all("Operation not permitted" in r["error"] for r in tried["new user namespace"])
    assert all(r["ok"] and r["result"] == "ran" for r in tried["thread"]), tried["thread"]


def test_the_machine_s_page_counts_read_empty(tmp_path, mark):
    """/proc/kpagecount (and kpageflags, kpagecgroup) show every physical page of the
    machine, and the bot's uid 0 could read them: one sandbox mapping a page of a shared
    file 60 times was seen by another as that page's count going from 0 to 60."""
    files = [f"/proc/{name}" for name in ("kpagecount", "kpageflags", "kpagecgroup")
             if os.path.exists(f"/proc/{name}")]
    if not files:       # a kernel without them (no CONFIG_PROC_PAGE_MONITOR): nothing to hide
        pytest.skip("this kernel has no /proc/kpagecount, kpageflags or kpagecgroup")
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "read", *files))
    tried = [r for r in out["reports"] if r["what"].startswith("read ")]
    assert len(tried) == 2 * len(files), tried
    assert all(r["ok"] and r["result"] == "" for r in tried), tried


def test_a_lock_or_a_watch_on_a_shared_file_passes_nothing_between_sandboxes(tmp_path, mark):
    """Every sandbox reads the same host files (its runtime, /usr, a bot's folder), and a
    lock on one, or a watch of who opens it, is seen from every other: two bots at one
    table passed their hands through them live, a bit a lock. Here the test holds the
    locks from outside, where another sandbox would: a bot's lock is taken as if free (it
    holds within nothing: the lock calls do nothing in the sandbox), and the watches are
    refused."""
    bot = hostile(tmp_path / "bot", "locks", "pad.bin")
    pad(bot / "pad.bin")
    with open(bot / "pad.bin", "r+b") as held:
        import fcntl
        fcntl.flock(held, fcntl.LOCK_EX)
        fcntl.lockf(held, fcntl.LOCK_EX)      # a POSIX record lock, which OFD locks meet too
        out = tournament(mark, tmp_path, bot)
    tried = {r["what"]: r for r in out["reports"] if r["process"] == out["reports"][0]["process"]}
    assert {what: r["ok"] for what, r in tried.items()} == {
        "flock": True, "posix lock": True, "ofd lock": True,
        "inotify": False, "fanotify": False, "dnotify": False}, tried
    assert all("Operation not permitted" in tried[w]["error"]
               for w in ("inotify", "fanotify", "dnotify")), tried


def test_a_lease_on_a_shared_file_is_refused(tmp_path, mark):
    """A write lease is another lock on a file every sandbox shares: the bot's uid 0 owns
    the host's files, so it could take one on any file nobody had open, and another
    sandbox's open of that file then failed (O_NONBLOCK: a bit) or waited while the holder
    was told of it; the server's own reads of a hosted bot's folder (its bot.toml) would
    wait so, up to 45 s, in its loop. It is refused."""
    bot = hostile(tmp_path / "bot", "lease", "lease.txt")
    (bot / "lease.txt").write_text("nobody else opens this\n")
    out = tournament(mark, tmp_path, bot)
    tried = [r for r in out["reports"] if r["what"] == "lease"]
    assert tried and not any(r["ok"] for r in tried), tried
    assert all("Operation not permitted" in r["error"] for r in tried), tried


def test_a_bot_holding_connections_keeps_no_other_bot_from_connecting(tmp_path, mark):
    """Every bot the arena launched reached the referee by one shared unix socket, whose
    gRPC server takes only so many connections at once (2,000, or a quarter of the
    open-files limit): one bot holding them (HTTP/2 spoken, so none timed out) kept every
    other bot from (re)starting, and they were charged with it. Each bot process has a
    socket of its own now, which takes 8. Here the arena may open 1,024 files (256
    connections a socket, as before), the hostile bot holds 300 at its first turn, and its
    opponent exits as the second game starts, to be started again for the third."""
    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    holding = hostile(tmp_path / "holding", "hold_connections", 300)
    quitting = hostile(tmp_path / "quitting", "quit")
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli.main", "match", holding, quitting, "--games", "3",
         "--out", tmp_path / "out", "--connect-timeout", "5", "-q"], cwd=ROOT,
        env=env_for(mark), capture_output=True, text=True, timeout=120, preexec_fn=few_files)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in out, out
    verdicts = [[(v["seat"], v["kind"]) for v in json.loads(
        (tmp_path / "out" / f"game-{i}.jsonl").read_text().splitlines()[-1])["verdicts"]]
        for i in (1, 2, 3)]
    assert verdicts == [[], [(1, "crashed")], []], out
    log = (tmp_path / "out").glob("*.stderr.log")
    held = [json.loads(line[line.index("{"):]) for path in log
            for line in path.read_text().splitlines() if "HOSTILE {" in line]
    assert [r["result"] for r in held] == [8 - 1], held   # its SDK's connection is the 8th


def test_each_bot_process_has_a_socket_of_its_own_for_as_long_as_it_runs():
    """Two processes of one bot, and a process started again, each reach the referee by a
    socket no other has; a stopped process's socket is gone, and the referee's folder
    with the last of them when it stops. A process run without the sandbox, which has the
    network, is given none."""
    from arena.bots.launcher import LocalBot
    from arena.bots.manifest import load_manifest
    from arena.bots.sandbox import PlainFactory
    from arena.referee.server import RefereeServer

    manifest = load_manifest(RANDOM)

    async def go() -> None:
        server = await RefereeServer.start("unix")
        bots = [LocalBot(manifest, server.lobby, server.address, f"random-{i}",
                         factory=SandboxFactory(Limits()), open_socket=server.bot_socket)
                for i in range(2)]
        try:
            for bot in bots:
                await bot.start()
            paths = [bot.process.socket.path for bot in bots]
            assert len(set(paths)) == 2 and all(map(os.path.exists, paths)), paths
            await bots[0].start()                        # started again
            assert bots[0].process.socket.path not in paths and not os.path.exists(paths[0])
            await bots[0].stop()
            assert bots[0].process.socket is None
            plain = LocalBot(manifest, server.lobby, server.address, "plain",
                             factory=PlainFactory(Limits()), open_socket=server.bot_socket)
            await plain.start()
            assert plain.process.socket is None
            await plain.stop()
            assert os.path.exists(paths[1])
        finally:
            await server.stop()
            await bots[1].stop()
        assert not os.path.exists(os.path.dirname(paths[1]))   # the running one's with it

    asyncio.run(go())


@pytest.mark.parametrize("place", ["/scratch", "/tmp", "/dev/shm"])
def test_its_scratch_and_tmp_are_capped_in_size(tmp_path, mark, place):
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "fill", place, 40),
                     "--limit", "scratch=16")
    fills = [r for r in out["reports"] if r["what"].startswith("fill ")]
    assert len(fills) == 2 and not any(r["ok"] for r in fills), fills
    assert all("No space left on device" in r["error"] for r in fills), fills


@pytest.mark.parametrize("flags", [(), ("--setup-network",)], ids=["", "setup_network"])
def test_it_has_no_network(tmp_path, mark, flags):
    """A bot has no network, even where its setup has one (--setup-network): a mutation
    that gave bots the setups' network passed every test before (the twenty-fourth
    review)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "connect", port),
                         "--listen", "tcp", *flags)
        with pytest.raises(BlockingIOError):
            listener.accept()                 # nobody came
    finally:
        listener.close()
    assert out["reports"] and not any(r["ok"] for r in out["reports"]), out["reports"]


def test_it_sees_no_other_process_and_no_token(tmp_path, mark):
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "tokens"))
    seen = [r["result"] for r in out["reports"]]
    assert len(seen) == 2                     # a process in each phase
    for s in seen:
        assert s["other_tokens"] == []
        assert s["pids_seen"] <= 3            # its sandbox's init and itself


def test_a_bot_folder_shut_to_other_users_is_refused_saying_so(tmp_path):
    """A sandbox run as a user of its own cannot read a folder of mode 0700: the bot
    would fail on its first file with "Permission denied", far from the cause. The start
    is refused, saying what to do."""
    needs_own_user()
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o700)
    folder.chmod(0o700)
    with pytest.raises(PermissionError) as refused:
        asyncio.run(SandboxFactory(Limits()).start(["/bin/true"], folder, {}))
    assert str(refused.value) == (
        f"[Errno 13] the bot's folder {folder} is shut to other users (mode 0700), and the "
        "sandbox runs each bot as a user of its own: make it readable by all (chmod -R a+rX)")


def test_no_command_line_of_the_host_holds_a_bot_s_token(tmp_path):
    """Any user of the machine reads every process's command line (ps): bwrap's held the
    bot's environment, its token among them (--setenv), with which such a user could take
    the bot's seat at the referee's port (a hosted bot's on a server, while its process
    restarts). The environment now travels as the process's own, which only root reads."""
    token = "ono99-token-that-only-the-bot-may-know"
    folder = tmp_path / "bot"
    folder.mkdir()

    async def started() -> None:
        jail, env = await SandboxFactory(Limits()).start(
            ["/bin/sh", "-c", 'echo "ready $ONO99_TOKEN"; exec sleep 60'], folder,
            {"ONO99_TOKEN": token})
        try:
            line = await asyncio.wait_for(jail.proc.stdout.readline(), 30)
            assert line.decode().split() == ["ready", token]      # the bot has it
            lines = []
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    try:
                        lines.append((entry / "cmdline").read_bytes())
                    except OSError:
                        pass                                       # gone meanwhile
            assert [c for c in lines if token.encode() in c] == []
        finally:
            jail.signal(signal.SIGKILL)
            await jail.proc.wait()
            jail.close()

    asyncio.run(started())


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_the_out_of_memory_killer_takes_a_bot_first(tmp_path, mark, sandbox):
    """Bots' limits may add up to more than the machine has: when it runs out, the kernel
    kills the process it scores highest, which could be the referee. Every bot process
    runs with the highest score; sandboxed (no capabilities), it cannot ask to be spared.
    (Unsandboxed, a bot run by root with CAP_SYS_RESOURCE could: trusted bots only.)"""
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "oom"), "--sandbox", sandbox)
    scores = [r for r in out["reports"] if r["what"] == "oom score"]
    assert len(scores) == 2 and all(r["result"] == 1000 for r in scores), scores
    spared = [r for r in out["reports"] if r["what"] == "oom spare me"]
    assert len(spared) == 2
    if sandbox == "bwrap":
        assert not any(r["ok"] for r in spared), spared
    assert int(Path("/proc/self/oom_score_adj").read_text()) < 1000     # not the arena's


def test_its_environment_holds_nothing_of_the_arena(tmp_path, mark, monkeypatch):
    monkeypatch.setenv("ORGANISER_SECRET", "not for bots")
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "env"))
    assert [(r["what"], r["ok"]) for r in out["reports"]] == [("env", True)] * 2, out["reports"]
    for report in out["reports"]:             # one a phase: the loop below checks two
        assert set(report["result"]) <= {
            "PATH", "LANG", "HOME", "TMPDIR", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
            "ONO99_REFEREE", "ONO99_TOKEN", "ONO99_BOT_NAME", "ONO99_RECONNECT_TIMEOUT",
            "ONO99_NODE_SDK", "ONO99_CPP_SDK", "ARENA_TEST_MARK", "ROGUE_SLEEP",
            "GRPC_EXPERIMENTS", "PWD"}, report["result"]   # PWD: bwrap, its own folder


def test_a_very_long_output_line_does_not_block_the_bot(tmp_path, mark):
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "long_line"))
    assert out["faults"] == {} and len(out["reports"]) == 2
    assert all("y" * 200 * 1024 in log.read_text() for log in out["logs"])


def test_a_fork_bomb_is_held_at_its_process_limit(tmp_path, mark):
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "fork_bomb"),
                     "--limit", "processes=64")
    bombs = [r["result"] for r in out["reports"] if r["process"] == "bomber"]
    assert bombs, out["reports"]
    for bomb in bombs:
        assert bomb["forked"] < 64 and "Resource temporarily unavailable" in bomb["stopped_by"]


@pytest.mark.parametrize("mode, limit, words", [
    ("alloc", "memory=200", "it exceeded its memory limit (200 MiB)"),
    ("flood", "output=1", "it wrote more than its output limit (1 MiB)"),
    ("burn_cpu", "cpu=2", "it exceeded its CPU time limit (2 s)"),
    ("big_file", "file-size=8", "it exceeded its file size limit (8 MiB)"),   # EFBIG: Python
                                                                             # ignores SIGXFSZ
])
def test_a_bot_past_a_limit_is_stopped_with_a_verdict_naming_it(tmp_path, mark, mode, limit, words):
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", mode), "--limit", limit)
    assert out["faults"].get("crashed", 0) >= 1, out["faults"]
    assert any(words in v["detail"] for v in out["verdicts"]), out["verdicts"]
    if mode == "flood":   # each process's output stops at the cap (restarts share a log)
        # and a verdict shows the end of each of its last lines (of 1,000 x): 2,600
        # characters long before
        assert all(len(v["detail"]) < 800 for v in out["verdicts"]), out["verdicts"]
        for log in out["logs"]:
            stops = log.read_text(errors="replace").count("[arena: output limit of 1 MiB")
            assert stops >= 1 and log.stat().st_size <= stops * (2**20 + 200)


def test_a_bot_that_thinks_every_move_is_not_stopped_by_its_cpu_limit_across_matches(
        tmp_path, mark):
    """The CPU limit holds for a process's whole life, and a process plays many matches
    (a phase; a server's ladder, for days). A bot thinking some ms a move was stopped
    once its process had used the limit up, a *crashed* verdict in the middle of a match
    it played within its clock, and retired after 3 (ismcts, 50 ms a move, against the
    default 3600 s after some 4,000 matches). A process past half of it now plays no
    further match: a fresh one does."""
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "work", 1_000_000),
                     "--limit", "cpu=2", games=8)
    assert out["faults"] == {}, out["verdicts"]
    assert sum(r["ms"] for r in out["reports"] if r["what"] == "work") > 2 * 2000
    assert len(out["logs"]) > 2, out["logs"]   # more than one process a phase


def test_a_reused_process_is_not_stopped_for_what_it_wrote_in_earlier_matches(tmp_path, mark):
    """The output limit holds for a process's whole life, and a process plays match after
    match: one past half of it, or too near it for twice its largest match's output,
    plays no further match. A match longer than that was still stopped in its middle, a
    *crashed* verdict for what the process had written in earlier ones (a ladder's bot
    writing 20 KB a move: 1 run of a test in many). Here the first match writes 100 KiB and
    the second 950 KiB, which alone is within the 1 MiB limit: the process plays it to
    its end, its output no longer kept past the limit, and a new one plays the next."""
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "chatty", 100, 950),
                     "--limit", "output=1", games=3)
    assert out["faults"] == {}, out["verdicts"]
    chats = [(r["match"], r["kib"]) for r in out["reports"] if r["what"] == "chatty"]
    assert chats.count((2, 950)) == 2, chats              # each phase's process, reused
    logs = [log.read_bytes() for log in out["logs"]]
    cut = [log for log in logs if b"its output is no longer kept" in log]
    assert len(cut) == 2 and all(len(log) <= 2**20 + 200 for log in cut), [len(x) for x in logs]
    assert len(logs) > 2                                  # a new process after each


def test_a_bots_logs_stay_within_four_times_its_output_limit(tmp_path, mark):
    """Each process of a bot may write up to its output limit, and a server restarts its
    bots for days: the bot's logs in one folder are cut to 4 times the limit, oldest
    output first. Two tournaments of 3 flooding processes each (retired after 3) into one
    log folder wrote 6 MiB on a 1 MiB limit before."""
    bot = hostile(tmp_path / "bot", "flood")
    logs = tmp_path / "logs"
    for k in range(2):
        proc = run(mark, "tournament", bot, RANDOM, "--games", 2, "--limit", "output=1",
                   "--db", tmp_path / f"{k}.db", "--logs", logs, "--concurrency", 1, "-q")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    kept = sorted(logs.glob("hostile*.stderr.log"), key=lambda p: p.stat().st_mtime)
    text = b"".join(p.read_bytes() for p in kept)
    assert 3 * 2**20 < len(text) <= 4 * 2**20 + 1000, [(p.name, p.stat().st_size) for p in kept]
    assert b"[arena: output limit of 1 MiB" in kept[-1].read_bytes()   # the newest, whole
    assert list(logs.glob("random*.stderr.log"))                       # another bot's: its own


def test_a_bot_named_like_another_s_second_process_keeps_its_own_log(tmp_path, mark):
    """A bot's K-th process in a tournament logs to ``NAME+K.stderr.log``. With
    ``NAME-K``, the flooding bot's second process wrote into the log of a bot called
    ``hostile-2``, and its trimming of its own logs deleted that bot's output."""
    other = tmp_path / "hostile-2"
    shutil.copytree(RANDOM, other)
    (other / "bot.toml").write_text('name = "hostile-2"\ncommand = "{python} bot.py"\n')
    logs = tmp_path / "logs"
    proc = run(mark, "tournament", hostile(tmp_path / "bot", "flood"), other, "--games", 2,
               "--limit", "output=1", "--db", tmp_path / "t.db", "--logs", logs,
               "--concurrency", 1, "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (logs / "hostile+2.stderr.log").exists(), sorted(p.name for p in logs.iterdir())
    for own in logs.glob("hostile-2*"):
        assert b"x" * 1000 not in own.read_bytes(), own.name


def test_a_bot_that_ignores_sigterm_and_stays_is_gone_at_the_end(tmp_path, mark):
    started = time.monotonic()
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "ignore_term"))
    assert any(r["what"] == "lingering after goodbye" for r in out["reports"])
    assert time.monotonic() - started < 60


def test_a_detached_child_is_gone_at_the_end(tmp_path, mark):
    out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "daemon"))
    assert [r["ok"] for r in out["reports"]] == [True, True]   # it left one in each phase


def test_nothing_written_in_one_phase_is_found_in_the_next(tmp_path, mark):
    # in the sandbox: each process has its own scratch HOME and /tmp, its folder is read-only
    out = tournament(mark, tmp_path / "boxed", hostile(tmp_path / "boxed" / "bot", "persist"),
                     games=3)
    persisted = [r for r in out["reports"] if r["what"] == "persist"]
    assert len({r["process"] for r in persisted}) == 2                  # two phases, two processes
    assert all(r["wrote"] for r in persisted)                           # it did write
    assert [r["found_from_others"] for r in persisted if r["found_from_others"]] == []
    # without the sandbox the same bot finds its earlier phase's hands: the attack is real
    plain = tournament(mark, tmp_path / "plain", hostile(tmp_path / "plain" / "bot", "persist"),
                       "--sandbox", "none", games=3)
    later = [r for r in plain["reports"] if r["what"] == "persist" and r["found_from_others"]]
    assert later, "without the sandbox the second phase should find the first one's files"
    for place in ("/tmp", str(Path.home())):
        for leftover in Path(place).glob("hands-*.txt"):
            leftover.unlink()


def test_nothing_put_in_the_kernel_keyring_is_found_by_another_process(tmp_path, mark):
    """The kernel's keyrings are shared beyond every namespace: without the sandbox's
    seccomp filter a bot's process added a key holding its hand to its user's keyring, and
    its next phase's process (or another bot) read it back (/proc/keys, keyctl)."""
    if os.uname().machine not in KEYCTL:
        missing(f"the keyring test on {os.uname().machine}")
    prefix = f"ono99-hostile-{mark}-"
    try:
        out = tournament(mark, tmp_path, hostile(tmp_path / "bot", "keyring", prefix), games=3)
        tried = [r for r in out["reports"] if r["what"] == "keyring"]
        assert len({r["process"] for r in tried}) == 2                  # two phases
        assert not any(r["added"] for r in tried), tried
        assert all(r["error"] == "Operation not permitted" for r in tried), tried
        assert [r["found_from_others"] for r in tried if r["found_from_others"]] == []
    finally:
        remove_keys(prefix)


def test_the_page_cache_cannot_be_probed_or_evicted_to_pass_a_message_on(tmp_path, mark):
    """The cached pages of the files every bot reads outlive its process: without the
    seccomp filter's refusals, a process evicted the pages of a file of its folder and
    read back those standing for 1 bits, and the next phase's process read its hand
    from them with mincore (a found hole: it named the opponent's dealt hand in 3 deals
    of 3). Each exact probe and eviction is refused, and io_uring with them."""
    boxed = hostile(tmp_path / "boxed" / "bot", "pagecache", "pad.bin")
    pad(boxed / "pad.bin")
    out = tournament(mark, tmp_path / "boxed", boxed, games=3)
    tried = [r for r in out["reports"] if r["what"] == "pagecache"]
    assert len({r["process"] for r in tried}) == 2                       # two phases
    refused = {"mincore": "Operation not permitted", "cachestat": "Operation not permitted",
               "read nowait": "Operation not supported",
               "fadvise dontneed": "Operation not permitted",
               "madvise cold": "Operation not permitted",
               "madvise pageout": "Operation not permitted",
               "io_uring": "Operation not permitted"}
    assert all(r["probes"] == refused for r in tried), tried
    assert not any(r["wrote"] or r["found_from_others"] for r in tried), tried
    # without the sandbox the same bot reads its earlier phase's hand: the attack is real
    # (where this file system's pages can be evicted and probed at all)
    if not evictable(tmp_path / "probe.bin"):
        return
    plain = hostile(tmp_path / "plain" / "bot", "pagecache", "pad.bin")
    pad(plain / "pad.bin")
    out = tournament(mark, tmp_path / "plain", plain, "--sandbox", "none", games=3)
    tried = [r for r in out["reports"] if r["what"] == "pagecache"]
    assert [r["wrote"] for r in tried] == [True, True], tried
    first, second = sorted(tried, key=lambda r: bool(r["found_from_others"]))  # logs' order
    assert first["found_from_others"] == [], tried
    assert [m.split()[0] for m in second["found_from_others"]] == [first["process"][:8]], tried


def pad(path: Path) -> None:
    """An 8 MiB file of 2,048 pages, on the disk (clean pages, which eviction drops): room
    for the hostile bot's six copies of a message in its pages."""
    with open(path, "wb") as f:
        f.write(b"\0" * 2**23)
        f.flush()
        os.fsync(f.fileno())


def evictable(path: Path) -> bool:
    """Whether, here, a file's pages leave the cache when told (not on tmpfs)."""
    pad(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        try:
            os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT)
        except BlockingIOError:
            return True
        return False
    finally:
        os.close(fd)
        path.unlink()


#: keyctl(2) by machine (glibc has no wrapper)
KEYCTL = {"x86_64": 250, "aarch64": 219}


def remove_keys(prefix: str) -> None:
    """Invalidate every key named from ``prefix`` (a failing test leaves none behind)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for line in Path("/proc/keys").read_text().splitlines():
        if prefix in line:
            libc.syscall(KEYCTL[os.uname().machine], 21,   # KEYCTL_INVALIDATE
                         ctypes.c_int(int(line.split()[0], 16)))


CPU_CGROUPS = Path("/sys/fs/cgroup/cpu")   # cgroup v1's cpu controller, as on this kind of host


@pytest.fixture
def cpu_cgroup():
    """A cpu cgroup of the test's own, of a large weight (other tests' load barely moves
    what runs in it): an arena run in it is as one in a container or a service's cgroup,
    where the kernel's per-session autogroups do not apply and the scheduler shares the
    cores among threads, not among bots."""
    if os.geteuid() != 0 or not os.access(CPU_CGROUPS, os.W_OK):
        pytest.skip("needs root and cgroup v1's cpu controller (/sys/fs/cgroup/cpu)")
    group = CPU_CGROUPS / f"arena-test-{os.getpid()}-{time.monotonic_ns()}"
    group.mkdir()
    (group / "cpu.shares").write_text("8192")
    yield group
    for _ in range(100):   # its last processes may still be leaving
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.05)


def work_ms(mark: str, tmp_path: Path, group: Path, opponent: Path) -> float:
    """The median wall time of a fixed piece of work per move, by a bot playing
    ``opponent`` in an arena run inside ``group``."""
    out = tmp_path / opponent.name
    argv = [sys.executable, "-m", "arena.cli.main", "match", hostile(out / "work", "work", 300_000),
            opponent, "--games", "1", "--move-time", "10", "--out", out / "logs"]
    proc = subprocess.run(["sh", "-c", f'echo $$ > {group / "cgroup.procs"} && exec "$@"', "sh",
                           *map(str, argv)], cwd=ROOT, env=env_for(mark), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    times = [json.loads(line[len("HOSTILE "):])["ms"]
             for line in (out / "logs" / "hostile.stderr.log").read_text().splitlines()
             if line.startswith("HOSTILE ") and '"what": "work"' in line]
    assert len(times) >= 5, times
    return sorted(times)[len(times) // 2]


def test_a_bot_spinning_many_processes_gets_one_share_of_the_cores(tmp_path, mark, cpu_cgroup):
    """A bot that starts 16 busy processes while its opponent thinks: each bot has a cpu
    group of its own, which weighs as one thread, so the opponent's share of the cores
    stays. Without them (in a cgroup, where autogroups do not apply), the same work took
    12 times as long (55 ms a move against 4.5); with them, about twice (10 against 5)."""
    calm = work_ms(mark, tmp_path, cpu_cgroup, RANDOM)
    hog = tmp_path / "hog"
    hog.mkdir()
    hogged = work_ms(mark, tmp_path, cpu_cgroup, hostile(hog / "hog", "hog", 16))
    assert hogged < 4 * calm, (calm, hogged)


LEFTOVERS = r'''
import json, os, sys
from pathlib import Path
from arena.bots.sandbox import Limits
from arena.bots.sandbox.cgroups import _Cgroups

cpu = Path(sys.argv[1])
me = os.getpid()
# what an arena of this PID killed before left (in a container the arena is often PID 1)
(cpu / f"ono99-{me}-p1").mkdir()
odd = [cpu / "ono99-99999999999", cpu / "ono99-77777-backup"]   # not groups of ours
for d in odd:
    d.mkdir()
got = _Cgroups.make(Limits())
print(json.dumps({"got": sorted(got.dirs) if got else [],
                  "odd_kept": [d.is_dir() for d in odd],
                  "stale_gone": not (cpu / f"ono99-{me}-p1").is_dir()
                                or str(got.dirs.get("cpu")) == str(cpu / f"ono99-{me}-p1")}))
got.remove()
for d in odd:
    d.rmdir()
'''


def test_leftover_groups_of_an_arena_of_the_same_pid_do_not_leave_a_bot_without_its_own(
        cpu_cgroup):
    """An arena killed with kill -9 leaves its bots' groups; the next one of the same PID
    (as PID 1 in a container) took them for its own, still running: its first bot's
    ``mkdir`` failed and the bot ran without a cpu group. The sweep now takes groups of
    its own PID for a dead arena's, and names that are not its own for someone else's
    (one with a number too big for a PID crashed it)."""
    proc = subprocess.run(["sh", "-c", f'echo $$ > {cpu_cgroup / "cgroup.procs"} && exec "$@"',
                           "sh", sys.executable, "-c", LEFTOVERS, str(cpu_cgroup)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "cpu" in out["got"] and out["odd_kept"] == [True, True] and out["stale_gone"], out


def test_without_a_user_of_its_own_the_sandbox_runs_as_before(tmp_path, monkeypatch):
    """Where the sandbox cannot run a bot as a user of its own (no libseccomp or setpriv,
    or the arena is not root), it runs as before: bwrap's user namespace, no capability,
    the arena's own uid. That mode is not the one this machine's probe picks, so it is
    set here: a bot still writes its scratch folders and only them, and a setup still
    builds its folder, which comes back as the arena's."""
    from arena.bots import sandbox
    from arena.bots.manifest import load_manifest
    from arena.bots.sandbox import bwrap
    from arena.bots.setup import ensure_setup
    monkeypatch.setattr(bwrap, "_bwrap_checked", [bwrap._Bwrap(
        None, ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"],
        False)])
    assert not sandbox.runs_as_user()
    folder = tmp_path / "bot"
    folder.mkdir()

    lines = run_sandboxed(["/bin/sh", "-c", "id -u; grep CapEff /proc/self/status; "
                           "touch /tmp/a /scratch/b /dev/shm/c && echo wrote; touch x 2>&1; "
                           "cat /proc/self/uid_map"], folder)
    assert lines[0] == str(os.getuid()), lines
    assert lines[1].split() == ["CapEff:", "0" * 16], lines
    assert lines[2] == "wrote", lines
    assert "Read-only file system" in lines[3], lines
    assert lines[4].split()[:2] == [str(os.getuid())] * 2, lines   # its own uid, mapped to itself
    (folder / "bot.toml").write_text(
        'name = "old"\ncommand = ["sh", "-c", "true"]\nsetup = ["sh", "-c", "echo built > out"]\n')
    assert ensure_setup(load_manifest(folder), factory=SandboxFactory(Limits())).ran
    assert (folder / "out").read_text() == "built\n"
    assert (folder / "out").stat().st_uid == os.getuid()


#: forks sleeping children until a fork fails (at most 60), then prints how many it made
_FORKS = """
import os, sys, time
n = 0
while n < 60:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print(n, flush=True)
"""


def test_without_a_pids_cgroup_a_sandbox_s_own_user_is_held_to_its_process_limit(
        tmp_path, monkeypatch):
    """Root ignores RLIMIT_NPROC, so a bot run as uid 0 could be held to its process
    limit only by a pids cgroup, which a machine may not let the arena make (a container
    without cgroup delegation). A sandbox's own user is no root, and all its processes
    are the bot's: the limit binds it there too."""
    needs_own_user()
    from arena.bots.sandbox import cgroups
    monkeypatch.setattr(cgroups._Cgroups, "_base", {})     # as where there are none
    folder = tmp_path / "bot"
    folder.mkdir()

    async def forked() -> str:
        jail, _ = await SandboxFactory(Limits(processes=20)).start(
            [sys.executable, "-c", _FORKS], folder, {})
        try:
            out = await asyncio.wait_for(jail.proc.stdout.readline(), 30)
        finally:
            jail.signal(signal.SIGKILL)
            await jail.proc.wait()
            jail.close()
        return out.decode().strip()

    started = int(asyncio.run(forked()))
    assert 10 <= started < 20, started


def test_a_sandbox_s_own_user_has_a_name(tmp_path):
    """A sandbox's own user was a uid no /etc/passwd named: `id -un` failed, and so did
    what a runtime asks of its user (Node's os.userInfo() threw ENOENT, Python's
    getpass.getuser() raised without $USER), where tools look up a home or a cache
    folder. Each sandbox has a passwd and group file of its own, naming it ``bot`` (the
    scratch folder its home), read-only, with no descriptor left open; a setup too."""
    needs_own_user()
    if shutil.which("node") is None:
        missing("Node.js (Debian: nodejs)")
    folder = tmp_path / "bot"
    folder.mkdir()
    folder.chmod(0o755)
    script = ("id -un; id -gn; node -e 'const u = require(\"os\").userInfo(); "
              "console.log(u.username, u.homedir, u.uid === process.getuid())'; "
              "ls /proc/self/fd | wc -l; echo x 2>/dev/null >> /etc/passwd || echo refused")

    for setup in (False, True):
        # (ls's own descriptors: 0, 1, 2 and the folder it reads)
        assert run_sandboxed(["/bin/sh", "-c", script], folder, setup=setup) == \
            ["bot", "bot", "bot /scratch true", "4", "refused"]


@pytest.mark.parametrize("why", ["machine", "setpriv fails"])
def test_a_root_arena_whose_bots_cannot_have_a_user_of_their_own_says_so(why, monkeypatch):
    """Where the sandbox cannot run bots as a user of their own (a machine its filter is
    not written for, no setpriv or libseccomp, a root that is none outside its own user
    namespace: rootless containers), it runs them as uid 0 in bwrap's user namespace, as
    before. That fell back in silence: it says so now, and why."""
    if os.geteuid() != 0:
        pytest.skip("the arena does not run as root here: its bots run as its own user")
    from arena.bots import sandbox
    from arena.bots.sandbox import bwrap
    monkeypatch.setattr(bwrap, "_bwrap_checked", [])
    if why == "machine":
        monkeypatch.setattr(bwrap, "_AS_USER_MACHINES", ())
        expected = f"its seccomp filter is not written for {os.uname().machine}"
    else:
        monkeypatch.setattr(bwrap, "_setpriv", lambda uid: ["setpriv", "--no-such-option", "--"])
        expected = "bwrap and setpriv cannot make it here ("
    factory = sandbox.SandboxConfig().factory()
    assert isinstance(factory, SandboxFactory) and not sandbox.runs_as_user()
    assert factory.notice.startswith("bots run as the host's uid 0 (with no capabilities), "
                                     "not as a user of their own: " + expected), factory.notice


#: opens /dev/null until it may not (at most 1000), then prints the highest descriptor it
#: got and the error that stopped it
_DESCRIPTORS = """
import errno, os
highest, stopped = -1, "none"
for _ in range(1000):
    try:
        highest = os.open("/dev/null", os.O_RDONLY)
    except OSError as exc:
        stopped = errno.errorcode[exc.errno]
        break
print(highest, stopped, flush=True)
"""


def test_a_bot_is_held_to_its_open_files_limit(tmp_path):
    """``Limits(open_files=N)`` is the bot's RLIMIT_NOFILE: it gets EMFILE at or before
    its N-th descriptor (numbered from 0), not N x 4 of them: a bot's descriptors are
    the kernel's memory, and its sockets the arena's ports. (Mutation review: ``ulimit -n
    N`` changed to ``N*4``, and nothing failed.)"""
    folder = tmp_path / "bot"
    folder.mkdir()
    folder.chmod(0o755)

    [line] = run_sandboxed([sys.executable, "-c", _DESCRIPTORS], folder, Limits(open_files=64))
    highest, stopped = line.split()
    assert stopped == "EMFILE", (highest, stopped)
    assert 40 <= int(highest) <= 63, highest      # the interpreter holds a few of its own
