"""A bot's setup: once per version, skipped when up to date, failures that say what and
where, a time limit that leaves nothing running, and the CLI's use of it."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.processes import env_for, processes_marked

from arena.bots import setup as bot_setup
from arena.bots.manifest import ManifestError, load_manifest
from arena.bots.setup import LOG, STATE, SetupError, content_hash, ensure_setup, up_to_date

ROOT = Path(__file__).resolve().parents[2]

# A setup that "builds" the bot: copies src/bot.py to build/bot.py and counts its runs.
BUILD = textwrap.dedent("""\
    import pathlib, shutil, sys
    pathlib.Path("build").mkdir(exist_ok=True)
    shutil.copy("src/bot.py", "build/bot.py")
    with open("runs.txt", "a") as f:
        f.write("run\\n")
    print("built", flush=True)
""")


def built_bot(folder: Path, setup: str = '["{python}", "build.py"]', name: str = "built") -> Path:
    """A bot whose program exists only once its setup has run: a copy of bots/random."""
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "bot.py").write_text((ROOT / "bots" / "random" / "bot.py").read_text())
    (folder / "build.py").write_text(BUILD)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ncommand = ["{{python}}", "build/bot.py"]\nsetup = {setup}\n')
    return folder


def runs(folder: Path) -> int:
    path = folder / "runs.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_setup_runs_once_per_version_and_again_when_a_source_changes(tmp_path):
    folder = built_bot(tmp_path / "bot")
    m = load_manifest(folder)          # its program does not exist yet: the setup builds it
    version = content_hash(m)
    assert not up_to_date(m)

    first = ensure_setup(m)
    assert first.ran and first.seconds > 0 and runs(folder) == 1
    assert (folder / "build" / "bot.py").exists() and "built" in (folder / LOG).read_text()
    assert content_hash(m) == version  # what the setup made is not part of the version
    assert up_to_date(m)

    again = ensure_setup(load_manifest(folder))
    assert not again.ran and runs(folder) == 1

    (folder / "src" / "bot.py").write_text((folder / "src" / "bot.py").read_text() + "\n# v2\n")
    m2 = load_manifest(folder)
    assert content_hash(m2) != version and not up_to_date(m2)
    assert ensure_setup(m2).ran and runs(folder) == 2


def test_a_change_to_what_the_arena_lends_a_build_runs_the_setup_again(tmp_path, monkeypatch):
    """A C++ bot compiles the arena's C++ SDK in: built before the SDK changed, it kept the
    old SDK's behaviour (the tests of a fixed SDK ran a stale build). What the arena lends
    a build is here a folder of the test's own, changed between two launches. A bot with
    no CMake build (pip, npm) is not set up again for it."""
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    (sdk / "client.cpp").write_text("// v1\n")
    monkeypatch.setattr(bot_setup, "LENT", (sdk,))
    bot_setup.lent_hash.cache_clear()
    try:
        cpp = built_bot(tmp_path / "cpp")
        (cpp / "CMakeLists.txt").write_text("# a C++ bot's build\n")
        other = built_bot(tmp_path / "other")
        for folder in (cpp, other):
            assert ensure_setup(load_manifest(folder)).ran and runs(folder) == 1
            assert not ensure_setup(load_manifest(folder)).ran

        (sdk / "client.cpp").write_text("// v2\n")
        bot_setup.lent_hash.cache_clear()   # (an arena reads it once, at its start)
        assert not up_to_date(load_manifest(cpp))
        assert ensure_setup(load_manifest(cpp)).ran and runs(cpp) == 2
        assert up_to_date(load_manifest(other)) and runs(other) == 1
    finally:
        bot_setup.lent_hash.cache_clear()   # the arena's own again, for the next test


def test_a_changed_setup_command_runs_again(tmp_path):
    folder = built_bot(tmp_path / "bot")
    ensure_setup(load_manifest(folder))
    toml = (folder / "bot.toml").read_text().replace('"build.py"]', '"build.py", "--again"]')
    (folder / "bot.toml").write_text(toml)
    assert ensure_setup(load_manifest(folder)).ran and runs(folder) == 2


@pytest.mark.parametrize("setup, words", [
    ('["{python}", "-c", "import sys; print(\'no compiler here\'); sys.exit(3)"]',
     ["setup of bot built exited with code 3", LOG, "no compiler here"]),
    ('["no-such-program-xyz"]', ["setup of bot built cannot start", "no-such-program-xyz"]),
    ('["{python}", "-c", "print(1)"]',
     ["bot built: the command's file build/bot.py does not exist after its setup", LOG]),
])
def test_a_failed_setup_names_the_bot_what_happened_and_the_log(tmp_path, setup, words):
    folder = built_bot(tmp_path / "bot", setup)
    with pytest.raises(SetupError) as err:
        ensure_setup(load_manifest(folder))
    for word in words:
        assert word in str(err.value)
    assert not (folder / STATE).exists()      # nothing recorded: the next launch tries again


def test_a_setup_over_its_time_is_stopped_with_everything_it_started(tmp_path, mark):
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "sleep 30 & sleep 30"]')
    env = env_for(mark)
    os.environ.update(env)   # the setup and its children inherit the mark
    try:
        started = time.monotonic()
        with pytest.raises(SetupError) as err:
            ensure_setup(load_manifest(folder), timeout=0.5)
    finally:
        del os.environ["ARENA_TEST_MARK"]
    assert time.monotonic() - started < 5
    assert "did not finish within 0.5 s and was stopped" in str(err.value)
    deadline = time.monotonic() + 5
    while processes_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_marked(mark) == []


def sandboxed() -> None:
    from arena.bots.sandbox import SandboxFactory
    from support.requirements import missing

    if SandboxFactory.unavailable():
        missing(f"the bot sandbox: {SandboxFactory.unavailable()}")


#: Ways a setup filled the host's disk past its limit, or hid it from a measure of its
#: folder from outside (each is a file system full now, in the sandbox's copy): files
#: written one after the other; a file removed but kept open, still written; 20 folders of
#: 250 letters (a path past 4,096 bytes, which a walk by paths could not read) with a file
#: below; 8 nested folders renamed without end by processes of their own, a file written
#: below them by a descriptor (a walk by paths found it in none of 300 walks).
FILLERS = {
    "files": "i=0\nwhile open(f'big{i}', 'wb').write(bytes(2**20)): i += 1",
    "removed but open": textwrap.dedent("""\
        import os
        f = open("held", "wb")
        os.unlink("held")
        while f.write(bytes(2**20)): f.flush()"""),
    "past the path limit": textwrap.dedent("""\
        import os
        for _ in range(20):
            os.mkdir("d" * 250)
            os.chdir("d" * 250)
        f = open("big", "wb")
        while f.write(bytes(2**20)): f.flush()"""),
    "below renamed folders": textwrap.dedent("""\
        import os, time
        above, path = [], "."
        for _ in range(8):
            above.append(os.open(path, os.O_RDONLY))
            os.mkdir(path + "/a")
            path += "/a"
        lowest = os.open(path, os.O_RDONLY)
        for fd in above:
            if os.fork() == 0:
                os.fchdir(fd)
                while True:
                    try:
                        os.rename("a", "b")
                        os.rename("b", "a")
                    except OSError:
                        pass
        time.sleep(0.5)
        fd = os.open("big", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=lowest)
        while os.write(fd, bytes(2**20)): pass"""),
}


@pytest.mark.parametrize("way", list(FILLERS))
def test_a_setup_cannot_add_more_than_its_disk_limit_to_its_folder(tmp_path, monkeypatch, way):
    """A setup's folder is the one place of the host's disk it writes, and it had no
    total: a stranger's setup on a server wrote files of up to 1 GiB each for its whole
    600 s. In the sandbox it works in a copy of its folder on a file system of its own,
    DISK_MB (here made 8) larger than the folder (10 MiB already): it finds it full, and
    fails saying so; nothing of it reaches the host's folder."""
    sandboxed()
    monkeypatch.setattr(bot_setup, "DISK_MB", 8)
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "{python} build.py && {python} fill.py"]')
    (folder / "fill.py").write_text(FILLERS[way])
    (folder / "sources.bin").write_bytes(os.urandom(10 * 2**20))
    before = sorted(p.name for p in folder.iterdir())
    started = time.monotonic()
    with pytest.raises(SetupError) as err:
        ensure_setup(load_manifest(folder), timeout=60)
    assert time.monotonic() - started < 30
    assert "the setup of bot built exited with code 1; its output is in" in str(err.value)
    assert "No space left on device" in str(err.value)
    if way != "removed but open":   # freed as it ended
        assert "arena: the setup's folder is full: it may hold 19 MiB in all" in str(err.value)
    after = [p.name for p in folder.iterdir() if not p.name.startswith(".arena-setup.")]
    assert sorted(after) == before and (folder / LOG).exists()


def test_a_setup_cannot_add_more_than_its_limit_of_entries_or_nest_them_too_deep(
        tmp_path, monkeypatch):
    """Its file system holds as many entries as it has room for: the entries that come
    back are counted (DISK_FILES, here 2,000), and folders nested deeper than DISK_DEPTH
    are refused (the arena's own walks of the folder, and Python's recursive ones, go no
    deeper: 1,500 of them made os.walk raise RecursionError). Nothing of such a setup
    reaches its folder: before, what came back ahead of the refusal stayed (2,000 files
    of the 3,000, 256 folders of the 300)."""
    sandboxed()
    monkeypatch.setattr(bot_setup, "DISK_FILES", 2000)
    for what, fill, words in [
            ("many", "os.mkdir('many')\nfor i in range(3000): open(f'many/{i}', 'w')",
             "it made more than 2,000 files in its folder"),
            ("deep", "for _ in range(300): os.mkdir('d'); os.chdir('d')",
             f"it nested folders more than {bot_setup.DISK_DEPTH} deep in its folder")]:
        folder = built_bot(tmp_path / what, '["sh", "-c", "{python} build.py && {python} fill.py"]')
        (folder / "fill.py").write_text(f"import os\n{fill}\n")
        before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
        with pytest.raises(SetupError) as err:
            ensure_setup(load_manifest(folder), timeout=60)
        assert f"the setup of bot built failed: {words}; its output is in" in str(err.value)
        assert not (folder / STATE).exists()
        after = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                       if not p.name.startswith(".arena-setup."))
        assert after == before, what


def test_a_setup_leaves_the_files_it_did_not_change_as_they_were(tmp_path):
    """The folder comes back whole, as a tar stream: a file the setup did not change (its
    size and time to the nanosecond) is not written again, so that it is still a source
    of the bot's version, not an output; a changed or new one is, and what it removed is
    removed (a folder with what it held, a link as a link)."""
    sandboxed()
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "{python} build.py && echo x >> kept.txt'
                                         ' && rm -r gone.txt old old-link && ln -s /usr/bin/env '
                                         'env-link"]')
    (folder / "same.txt").write_text("same\n")
    (folder / "kept.txt").write_text("kept\n")
    (folder / "gone.txt").write_text("gone\n")
    (folder / "old" / "deeper").mkdir(parents=True)
    (folder / "old" / "deeper" / "stale.o").write_text("stale\n")
    (folder / "old-link").symlink_to(folder / "same.txt")
    times = {n: (folder / n).stat().st_mtime_ns for n in ("same.txt", "kept.txt", "bot.toml")}
    assert ensure_setup(load_manifest(folder)).ran
    assert (folder / "same.txt").stat().st_mtime_ns == times["same.txt"]
    assert (folder / "bot.toml").stat().st_mtime_ns == times["bot.toml"]
    assert (folder / "kept.txt").read_text() == "kept\nx\n"
    assert not (folder / "gone.txt").exists() and not (folder / "old").exists()
    assert not os.path.lexists(folder / "old-link") and (folder / "same.txt").exists()
    assert os.readlink(folder / "env-link") == "/usr/bin/env"
    assert (folder / "build" / "bot.py").exists()
    assert not ensure_setup(load_manifest(folder)).ran     # found up to date


def test_a_setup_cannot_allocate_disk_at_once(tmp_path):
    """fallocate takes a file's blocks at once, nothing written: a setup (its files 1 GiB
    each, 1,024 open) took 8 GiB of the host's disk in 15 ms while its folder was measured
    from outside, twice a second. It is refused in the sandbox as by a file system that
    cannot (EOPNOTSUPP): the C library's posix_fallocate then writes a byte a block, as
    fast as any writer (0.3 GiB/s here), and no faster."""
    sandboxed()
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "{python} grab.py; {python} build.py"]')
    (folder / "grab.py").write_text(textwrap.dedent("""\
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
        fd = os.open("grabbed", os.O_CREAT | os.O_WRONLY, 0o644)
        print("fallocate", libc.fallocate(fd, 0, 0, 2**30), ctypes.get_errno(), flush=True)
    """))
    assert ensure_setup(load_manifest(folder)).ran
    assert f"fallocate -1 {errno.EOPNOTSUPP}" in (folder / LOG).read_text()
    assert (folder / "grabbed").stat().st_blocks == 0


def test_the_disk_usage_counts_allocated_blocks_once_per_file_and_follows_no_link(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 10_000)
    os.link(tmp_path / "a", tmp_path / "b")                 # one file, two names
    with open(tmp_path / "sparse", "wb") as f:              # 1 GiB long, nothing written
        f.truncate(2**30)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c").write_bytes(b"y" * 5000)
    os.symlink("/usr", tmp_path / "usr")                    # not followed
    size, entries = bot_setup.disk_usage(tmp_path)
    assert entries == 6
    blocks = sum(os.lstat(tmp_path / n).st_blocks * 512 for n in ("a", "sparse", "sub", "sub/c", "usr"))
    assert size == blocks and size < 2**20


def test_a_check_cancelled_during_its_setup_stops_the_setup_at_once(tmp_path, mark):
    """check-bot runs the setup in a thread, which a cancelled check (an upload cut
    short, a server stopping) did not stop: the setup ran on to its end or its timeout
    (600 s on a server), and a stopping server waited for it. Now it is killed within a
    moment, with everything it started."""
    import asyncio

    from arena.bots.check import check_bot
    from arena.bots.sandbox import SandboxConfig

    folder = built_bot(tmp_path / "bot", '["sh", "-c", "touch started; sleep 30 & sleep 30"]')
    env = env_for(mark)
    os.environ.update(env)   # the setup and its children inherit the mark

    async def go() -> float:
        task = asyncio.create_task(check_bot(load_manifest(folder), setup_timeout=60,
                                             sandbox=SandboxConfig("none")))
        while not (folder / "started").exists():
            await asyncio.sleep(0.02)
        task.cancel()
        cancelled = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await task
        return cancelled

    try:
        cancelled = asyncio.run(go())   # asyncio.run waits for the thread's end too
    finally:
        del os.environ["ARENA_TEST_MARK"]
    while processes_marked(mark) and time.monotonic() < cancelled + 5:
        time.sleep(0.05)
    assert processes_marked(mark) == []
    assert time.monotonic() - cancelled < 5
    assert not up_to_date(load_manifest(folder))


# A setup that puts links to the host's files where the arena writes its own (its folder is
# writable while it runs; the arena may run as root): argv[1] is the folder of the victims.
LINKS = textwrap.dedent("""\
    import os, pathlib, sys
    victims = pathlib.Path(sys.argv[1])
    for name, victim in ((".arena-setup.json", "state"), (".arena-setup.log", "log")):
        if os.path.lexists(name):
            os.unlink(name)
        os.symlink(victims / victim, name)
    print("linked", flush=True)
""")


@pytest.mark.parametrize("fails", [False, True])
def test_links_in_place_of_the_arenas_files_are_never_followed(tmp_path, fails):
    victims = tmp_path / "victims"
    victims.mkdir()
    for name in ("state", "log"):
        (victims / name).write_text("SECRET of the host\n")
    folder = built_bot(tmp_path / "bot", f'["{{python}}", "links.py", "{victims}"]')
    (folder / "links.py").write_text(LINKS + ("raise SystemExit(1)\n" if fails else BUILD))
    # and it arrives with a link where the lock goes (the arena would create its target)
    (folder / ".arena-setup.lock").symlink_to(victims / "created")
    if fails:
        with pytest.raises(SetupError) as err:
            ensure_setup(load_manifest(folder))
        assert "linked" in str(err.value) and "SECRET" not in str(err.value)
    else:
        assert ensure_setup(load_manifest(folder)).ran
        assert up_to_date(load_manifest(folder))
    assert sorted(p.name for p in victims.iterdir()) == ["log", "state"]
    assert all(p.read_text() == "SECRET of the host\n" for p in victims.iterdir())
    for name in ([LOG, ".arena-setup.lock"] if fails else [STATE, LOG, ".arena-setup.lock"]):
        assert (folder / name).is_file() and not (folder / name).is_symlink(), name
    assert "linked" in (folder / LOG).read_text()


def test_two_arenas_setting_up_one_folder_run_the_setup_once(tmp_path):
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "sleep 0.5 && {python} build.py"]'
                       .replace("{python}", sys.executable))
    code = f"from arena.bots.setup import ensure_setup; from arena.bots.manifest import load_manifest; " \
           f"print(ensure_setup(load_manifest({str(folder)!r})).ran)"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = sorted(p.communicate(timeout=30)[0].strip() for p in procs)
    assert outs == ["False", "True"] and runs(folder) == 1


def test_a_bot_without_setup_must_have_its_program(tmp_path):
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "x"\ncommand = "./missing"\n')
    with pytest.raises(ManifestError, match="the command's program ./missing does not exist"):
        load_manifest(folder)


# ---------------------------------------------------------------- the CLI


def arena(mark: str, *args) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", *map(str, args)], cwd=ROOT,
                          env=env_for(mark), capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert processes_marked(mark) == []
    return proc


def test_arena_match_runs_the_setup_before_launching_and_only_once(tmp_path, mark):
    folder = built_bot(tmp_path / "bot")
    first = arena(mark, "match", folder, ROOT / "bots" / "random", "-q", "--out", tmp_path / "a")
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines() == [
        f"bot built: running its setup ({sys.executable} build.py), output in {folder / LOG}",
        first.stderr.splitlines()[1]]
    assert first.stderr.splitlines()[1].startswith("bot built: set up in ")
    second = arena(mark, "match", folder, ROOT / "bots" / "random", "-q", "--out", tmp_path / "b")
    assert second.returncode == 0 and second.stderr == "" and runs(folder) == 1


def test_no_setup_refuses_a_bot_that_was_never_built(tmp_path, mark):
    folder = built_bot(tmp_path / "bot")
    proc = arena(mark, "match", folder, ROOT / "bots" / "random", "--no-setup", "--out", tmp_path / "a")
    assert proc.returncode == 2 and runs(folder) == 0
    assert proc.stderr.splitlines() == [
        f"arena match: error: bot built ({folder}): the command's file build/bot.py does not "
        "exist; its setup has not run (drop --no-setup)"]


def test_a_failed_setup_stops_a_tournament_before_anything_is_stored(tmp_path, mark):
    folder = built_bot(tmp_path / "bot", '["{python}", "-c", "raise SystemExit(4)"]')
    db = tmp_path / "t.db"
    proc = arena(mark, "tournament", folder, ROOT / "bots" / "random", "--games", 1, "--db", db)
    assert proc.returncode == 2 and not db.exists()
    [line] = proc.stderr.splitlines()[-1:]
    assert line.startswith("arena tournament: error: the setup of bot built exited with code 4; "
                           f"its output is in {folder / LOG}")


PROBE = textwrap.dedent("""\
    import json, pathlib, socket
    seen = {}
    for name, address in json.loads(pathlib.Path("targets.json").read_text()).items():
        try:
            socket.create_connection(tuple(address), timeout=5).close()
            seen[name] = "reached"
        except OSError as exc:
            seen[name] = exc.strerror or type(exc).__name__
    seen["resolver"] = pathlib.Path("/etc/resolv.conf").read_text().split()[:2]
    pathlib.Path("seen.json").write_text(json.dumps(seen))
""")

#: where the internet is reached from: the package index the README installs from
INDEX = ("pypi.org", 443)


def _own_address() -> str:
    """This machine's address on the way out (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))
        return probe.getsockname()[0]


def _neighbour(address: str) -> str:
    """Another address of the network ``address`` is on (its gateway, a neighbour), from
    ``ip``: one a setup must not reach, whether a machine has it or not."""
    import ipaddress
    links = json.loads(subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True,
                                      text=True, check=True).stdout)
    [prefix] = [info["prefixlen"] for link in links for info in link.get("addr_info", ())
                if info.get("local") == address]
    network = ipaddress.IPv4Interface(f"{address}/{prefix}").network
    return str(next(host for host in network.hosts() if str(host) != address)
               if network.num_addresses > 2 else network.network_address)


def test_a_setup_s_network_is_the_internet_never_this_machine_s_services(tmp_path, mark):
    """A setup had no network, or with --setup-network the machine's own: a stranger's
    setup then reached the services on its loopback and its addresses (a database, the
    organiser's port, a Ray cluster's job API that runs any code), its private network
    and a cloud's metadata service. Now --setup-network gives it a network of its own
    (slirp4netns) that reaches the internet and nothing of the machine's, of the network
    it is on (its gateway and neighbours: reached before the twenty-sixth review, where
    that network is no private range) or of the private ranges, and names are looked up
    through slirp4netns."""
    sandboxed()
    needs_own_network()
    try:
        socket.create_connection(INDEX, timeout=10).close()
    except OSError as exc:
        pytest.skip(f"this machine does not reach {INDEX[0]} itself ({exc})")
    with socket.create_server(("0.0.0.0", 0)) as server:
        port = server.getsockname()[1]
        targets = {"index": INDEX, "loopback": ("127.0.0.1", port),
                   "own address": (_own_address(), port), "slirp's gateway": ("10.0.2.2", port),
                   "neighbour": (_neighbour(_own_address()), port),
                   "metadata": ("169.254.169.254", 80), "private": ("10.1.2.3", port)}
        seen = {}
        for allowed in (False, True):
            folder = built_bot(tmp_path / f"bot-{allowed}",
                               '["sh", "-c", "{python} probe.py && {python} build.py"]')
            (folder / "probe.py").write_text(PROBE)
            (folder / "targets.json").write_text(json.dumps(targets))
            proc = arena(mark, "match", folder, ROOT / "bots" / "random", "-q", "--sandbox",
                         "bwrap", "--out", tmp_path / f"out-{allowed}",
                         *(["--setup-network"] if allowed else []))
            assert proc.returncode == 0, proc.stderr
            assert "notice" not in proc.stderr, proc.stderr
            seen[allowed] = json.loads((folder / "seen.json").read_text())
    # (the sandbox's own loopback, where nothing listens)
    refused, prohibited, unreachable = \
        "Connection refused", "Permission denied", "Network is unreachable"
    # (without a network its name is not found: how the resolver says so varies)
    assert seen[False].pop("index") != "reached", seen
    assert seen[False] == {"loopback": refused, "own address": unreachable,
                           "neighbour": unreachable,
                           "slirp's gateway": unreachable, "metadata": unreachable,
                           "private": unreachable, "resolver": seen[False]["resolver"]}, seen
    # (slirp4netns answers for the machine's loopback as a network it cannot reach)
    assert seen[True] == {"index": "reached", "loopback": refused, "own address": prohibited,
                          "neighbour": prohibited,
                          "slirp's gateway": unreachable, "metadata": prohibited,
                          "private": prohibited, "resolver": ["nameserver", "10.0.2.3"]}, seen


def needs_own_network() -> None:
    from arena.bots.sandbox.network import _SetupNetwork
    from support.requirements import missing

    if (why := _SetupNetwork.missing()) is not None:
        if "root" in why:
            pytest.skip(f"a setup's network of its own: {why}")
        missing(f"a setup's network of its own: {why}")


def _lo_up_in(pid: int) -> None:
    """Bring ``lo`` up in the network namespace of ``pid``, as slirp4netns --configure does
    first (an ioctl), from a thread of this process, which alone joins that namespace."""
    import ctypes
    import fcntl
    import struct
    import threading

    def join_and_set() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        with open(f"/proc/{pid}/ns/net") as ns:
            assert libc.setns(ns.fileno(), 0x40000000) == 0, os.strerror(ctypes.get_errno())
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", 0x1 | 0x40))  # SIOCSIFFLAGS
    thread = threading.Thread(target=join_and_set)
    thread.start()
    thread.join()


def test_a_setup_s_network_waits_for_bwrap_s_own_loopback():
    """bwrap reports the sandbox's pid, then sets up its loopback (127.0.0.1 on lo, lo
    up); slirp4netns, started at the pid, brings lo up itself, and when it came first
    bwrap's own request failed and the setup with it ("bwrap: loopback: Failed
    RTM_NEWADDR: Success"): 3 runs of the npmrc test in 168 with 4 to 6 at once, and 26
    sandboxes of 400 here, lo brought up at the pid. The network is made once bwrap's
    loopback is set (:func:`_loopback_set`): none of 200."""
    sandboxed()
    needs_own_network()
    from arena.bots.sandbox.network import _loopback_set

    failed = []
    for _ in range(200):
        info, block = os.pipe(), os.pipe()
        proc = subprocess.Popen(
            ["bwrap", "--unshare-net", "--unshare-pid", "--die-with-parent", "--ro-bind", "/",
             "/", "--dev", "/dev", "--proc", "/proc", "--info-fd", str(info[1]),
             "--block-fd", str(block[0]), "true"],
            pass_fds=(info[1], block[0]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(info[1])
        os.close(block[0])
        data = b""
        while b"}" not in data and (chunk := os.read(info[0], 100)):
            data += chunk
        os.close(info[0])
        try:
            pid = json.loads(data)["child-pid"]
            asyncio.run(_loopback_set(pid))
            _lo_up_in(pid)
            os.write(block[1], b"1")
        except (OSError, ValueError, KeyError):
            pass              # bwrap ended: its message says why
        finally:
            os.close(block[1])
        _, err = proc.communicate(timeout=10)
        if proc.returncode != 0:
            failed.append(err.decode().strip())
    assert failed == [], failed[:3]


def test_where_a_setup_s_network_cannot_be_its_own_the_arena_says_so(monkeypatch):
    """Without slirp4netns (or where the arena is not root), a setup given the network
    gets the machine's own, loopback services and all, as before: the organiser is told
    in the factory's one-line notice, and why."""
    sandboxed()
    from arena.bots import sandbox

    which = shutil.which
    monkeypatch.setattr(sandbox.shutil, "which",
                        lambda name, *a, **k: None if name == "slirp4netns" else which(name))
    assert sandbox.SandboxFactory(sandbox.Limits()).notice is None or \
        "setups" not in sandbox.SandboxFactory(sandbox.Limits()).notice
    notice = sandbox.SandboxFactory(sandbox.Limits(), setup_network=True).notice
    assert notice is not None and "setups get this machine's network, its own services and " \
        "private network too, not the internet alone: " in notice, notice
    if sandbox.runs_as_user():
        assert notice.endswith("slirp4netns is missing (Debian: slirp4netns)"), notice


def test_a_setup_s_names_are_looked_up_where_the_machine_s_are(tmp_path):
    """A setup's resolver is slirp4netns's, which asks the machine's; where that one is on
    the machine's loopback (systemd-resolved's 127.0.0.53), which slirp4netns may not
    reach, the servers systemd-resolved asks are named instead (and let through)."""
    from arena.bots.sandbox.network import _setup_resolv

    host, upstream = tmp_path / "resolv.conf", tmp_path / "upstream.conf"
    host.write_text("# from DHCP\nsearch example.org\nnameserver 10.255.255.53\n")
    assert _setup_resolv(str(host), str(upstream)) == ("nameserver 10.0.2.3\n", [])
    host.write_text("nameserver 127.0.0.53\noptions edns0 trust-ad\n")
    assert _setup_resolv(str(host), str(upstream)) == ("nameserver 10.0.2.3\n", [])
    upstream.write_text("nameserver 10.1.0.2\nnameserver fe80::1%eth0\nnameserver 9.9.9.9\n")
    assert _setup_resolv(str(host), str(upstream)) == (
        "nameserver 10.1.0.2\nnameserver 9.9.9.9\n", ["10.1.0.2", "9.9.9.9"])


@pytest.mark.skipif(not Path("/etc/npmrc").exists(), reason="no /etc/npmrc on this machine")
def test_a_setup_without_the_network_does_not_see_npm_s_settings(tmp_path):
    """/etc/npmrc (often the organiser's registry token) was bound into every setup so
    that npm could use it, network or not; a setup writes its folder, and its bot, which
    may not read the file, read the copy: a hosted stranger's bot crashed in a ladder
    match with the file's line in its verdict, which every spectator is sent. A setup
    sees it only with the network (--setup-network), where npm can use it."""
    sandboxed()
    from arena.bots.sandbox import Limits, SandboxFactory

    seen = {}
    for network in (False, True):
        folder = built_bot(tmp_path / f"bot-{network}",
                           '["sh", "-c", "cp /etc/npmrc kept.txt; {python} build.py"]')
        assert ensure_setup(load_manifest(folder), factory=SandboxFactory(Limits(), network)).ran
        seen[network] = (folder / "kept.txt").exists()
    assert seen == {False: False, True: True}


#: A setup that tries every way to leave a set-user-ID or set-group-ID program in its
#: folder, going on past each refusal, then builds the bot.
SETUID = textwrap.dedent("""\
    import os, shutil, stat, sys
    for bit, name in ((0o4000, "uid"), (0o2000, "gid")):
        tries = {
            "chmod": lambda p: (shutil.copy(sys.executable, p), os.chmod(p, 0o755 | bit)),
            "fchmod": lambda p: (shutil.copy(sys.executable, p),
                                 os.chmod(os.open(p, os.O_RDONLY), 0o755 | bit)),
            "open": lambda p: os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o755 | bit)),
            "mknod": lambda p: os.mknod(p, stat.S_IFREG | 0o755 | bit),
        }
        for how, make in tries.items():
            try:
                make(f"set{name}-{how}")
            except OSError as exc:
                print(how, name, exc)
""")


def test_a_setup_cannot_leave_a_set_user_id_program_in_the_host_s_folder(tmp_path):
    """A setup writes its folder on the host as the host's uid 0: a copy of python3 it
    made set-user-ID there ran as root for any user of the machine who could reach the
    folder (a hosted bot's is under the server's data folder). Each way is refused; a
    set-group-ID bit is cleared once the setup ends (a folder's is let be: see below)."""
    sandboxed()
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "{python} setuid.py; {python} build.py"]')
    (folder / "setuid.py").write_text(SETUID)
    assert ensure_setup(load_manifest(folder)).ran
    made = sorted(p.name for p in folder.iterdir() if p.name.startswith("set"))
    assert len(made) >= 4, made                  # where a call was refused, no file at all
    special = [p.name for p in folder.iterdir() if p.stat().st_mode & 0o6000]
    assert special == [], special
    assert (folder / LOG).read_text().count("Operation not permitted") == 4   # the uid ways


def test_what_a_private_setup_makes_its_bot_can_read(tmp_path):
    """A setup that makes its files private (umask 077, mktemp, chmod 600) passed, and its
    bot, run as another user than root (the sandbox's own), then failed on its own build
    with "Permission denied" in every match. What a setup leaves is made readable by all
    (no write bit added); programs stay programs."""
    sandboxed()
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "umask 077 && mkdir data && '
                                         'echo w > data/w.txt && chmod 700 data/w.txt && '
                                         '{python} build.py"]')
    assert ensure_setup(load_manifest(folder)).ran, (folder / LOG).read_text()
    modes = {p: (folder / p).stat().st_mode & 0o7777 for p in ("data", "data/w.txt")}
    assert modes == {"data": 0o755, "data/w.txt": 0o755}

    async def read() -> bytes:
        from arena.bots.sandbox import Limits, SandboxFactory
        jail, _ = await SandboxFactory(Limits()).start(["cat", "data/w.txt"], folder, {})
        try:
            return await asyncio.wait_for(jail.proc.stdout.read(), 30)
        finally:
            await jail.proc.wait()
            jail.close()
    assert asyncio.run(read()) == b"w\n"


def test_a_setup_copies_folders_that_have_a_set_group_id_bit(tmp_path):
    """A bot folder in a group's shared folder has the set-group-ID bit on its folders
    (the group's files stay the group's): a setup that copied one with its mode
    (shutil.copytree, as CMake's file(COPY) and cp -a do) failed once the sandbox refused
    the bit to every chmod. The bit is let be on folders; files lose theirs."""
    sandboxed()
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "{python} copy.py && {python} build.py"]')
    (folder / "copy.py").write_text(textwrap.dedent("""\
        import os, shutil
        shutil.copytree("assets", "copied")
        os.chmod("copied/tool", 0o2755)     # a set-group-ID file: allowed, and cleared after
    """))
    (folder / "assets").mkdir()
    (folder / "assets" / "tool").write_text("#!/bin/sh\n")
    (folder / "assets").chmod(0o2755)
    folder.chmod(0o2755)   # the bot's folder too, in that shared folder
    assert ensure_setup(load_manifest(folder)).ran, (folder / LOG).read_text()
    assert (folder / "copied").stat().st_mode & 0o7777 == 0o2755
    assert (folder / "copied" / "tool").stat().st_mode & 0o7777 == 0o755
    # what it made is the arena's user's, never the sandbox's (a later sandbox may have
    # that uid); the folder itself keeps its mode
    assert {p.stat().st_uid for p in folder.rglob("*")} == {os.getuid()}
    assert folder.stat().st_mode & 0o7777 == 0o2755



def test_a_setup_may_replace_a_folder_by_a_file_and_a_file_by_a_folder(tmp_path):
    """What the setup made of its copy comes back, whatever stood at a name before: a
    folder it replaced by a file (``rm -r out && touch out``), a file by a folder, a link
    by a folder or by a file, and a link out of the folder (a venv's python) made again.
    Unpacked over the folder as it was, the file met the folder (EISDIR), the folder the
    file (ENOTDIR), a file went through the link to the file it named, and a link to
    /usr/bin/env standing there was refused as 'outside the destination': a setup that
    succeeded failed, its folder half written, or a source overwritten."""
    sandboxed()
    folder = built_bot(tmp_path / "bot", '["sh", "-c", "{python} build.py && rm -r out notes'
                                         ' link file-link && echo new > out && mkdir -p notes/a'
                                         ' link && echo b > notes/a/b && echo mine > file-link'
                                         ' && ln -sf /usr/bin/env env-link"]')
    (folder / "out" / "deeper").mkdir(parents=True)
    (folder / "out" / "deeper" / "old.o").write_text("old\n")
    (folder / "notes").write_text("a file\n")
    (folder / "link").symlink_to(folder / "notes")
    (folder / "source.txt").write_text("source\n")
    (folder / "file-link").symlink_to("source.txt")
    (folder / "env-link").symlink_to("/usr/bin/env")
    assert ensure_setup(load_manifest(folder)).ran
    assert (folder / "out").read_text() == "new\n"
    assert (folder / "notes" / "a" / "b").read_text() == "b\n"
    assert (folder / "link").is_dir() and not (folder / "link").is_symlink()
    assert (folder / "source.txt").read_text() == "source\n"
    assert (folder / "file-link").read_text() == "mine\n"
    assert not (folder / "file-link").is_symlink()
    assert os.readlink(folder / "env-link") == "/usr/bin/env"
    assert (folder / "build" / "bot.py").exists()


def _sent_back(folder: Path, members: list) -> str | None:
    """``_take_folder`` of a stream of ``members`` ((TarInfo, data or None), after "."),
    as a setup could write it on its pipe."""
    import io
    import tarfile
    import threading

    sent = io.BytesIO()
    with tarfile.open(fileobj=sent, mode="w:", format=tarfile.PAX_FORMAT) as tar:
        root = tarfile.TarInfo(".")
        root.type, root.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(root)
        for member, data in members:
            tar.addfile(member, None if data is None else io.BytesIO(data))
    out, into = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(into, sent.getvalue()), os.close(into)))
    writer.start()
    try:
        return bot_setup._take_folder(out, folder, 64, 100)
    finally:
        writer.join()


def test_a_folder_sent_back_with_a_device_is_refused(tmp_path):
    """The setup may write anything on the pipe its folder comes back on (its shell holds
    it open: /proc/PPID/fd/9). Python's tar filter keeps devices, and an arena that runs
    as root made them (mknod): a node for the host's disk or memory in the bot's folder,
    there for whatever reads it next. Refused, and nothing of the stream is written."""
    import tarfile

    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text("kept\n")
    note = tarfile.TarInfo("./note.txt")
    note.size = 3
    members = [(note, b"hi\n")]
    for kind, name, major, minor in [(tarfile.CHRTYPE, "./mem", 1, 1),
                                     (tarfile.BLKTYPE, "./disk", 8, 0)]:
        node = tarfile.TarInfo(name)
        node.type, node.devmajor, node.devminor = kind, major, minor
        members.append((node, None))
    refused = _sent_back(folder, members)
    assert refused is not None and "mem" in refused
    assert sorted(p.name for p in folder.iterdir()) == ["bot.toml"]


def test_a_setup_needs_no_room_for_the_files_it_did_not_change(tmp_path):
    """The folder comes back through a spool on its own disk (so that one refused leaves
    it as it was), but only what is to be unpacked takes room there: the data of a file
    found unchanged is left out. A spool of the whole stream needed as much free room as
    the folder: here 40 MiB of weights on a disk with 24 MiB free failed every setup
    ("No space left on device") that succeeded before. The folder is on a file system
    of 64 MiB, mounted for the test (where this machine lets it)."""
    sandboxed()
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("a file system of 64 MiB cannot be mounted here (root only)")
    try:
        folder = built_bot(disk / "bot")
        weights = os.urandom(40 * 2**20)
        (folder / "weights.bin").write_bytes(weights)
        before = (folder / "weights.bin").stat().st_mtime_ns
        assert ensure_setup(load_manifest(folder), timeout=60).ran
        assert (folder / "weights.bin").stat().st_mtime_ns == before   # not written again
        assert (folder / "weights.bin").read_bytes() == weights
        (folder / "src" / "bot.py").write_text((folder / "src" / "bot.py").read_text() + "\n")
        assert ensure_setup(load_manifest(folder), timeout=60).ran        # and again
        assert (folder / "build" / "bot.py").exists()
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_files_linked_in_the_folder_come_back_whole(tmp_path):
    """Two names of one file (a hard link), which the setup leaves as they are: the link
    comes back as a link to the other name, whose data the spool leaves out. Where a name
    stood, tarfile copied the data instead, from the spool: 1 MiB of zeros, less the
    first 7 KiB, written into the file under both names."""
    sandboxed()
    folder = built_bot(tmp_path / "bot")
    data = os.urandom(2**20)
    (folder / "model.bin").write_bytes(data)
    os.link(folder / "model.bin", folder / "model-link.bin")
    for _ in range(2):
        (folder / "src" / "bot.py").write_text((folder / "src" / "bot.py").read_text() + "\n")
        assert ensure_setup(load_manifest(folder), timeout=60).ran
        assert (folder / "model.bin").read_bytes() == data
        assert (folder / "model-link.bin").read_bytes() == data
        assert (folder / "model.bin").stat().st_ino == (folder / "model-link.bin").stat().st_ino


def test_a_folder_sent_back_cannot_link_to_a_file_outside_it(tmp_path):
    """A setup can write its own stream on the pipe its folder comes back on (its shell
    holds it open: /proc/PPID/fd/N), and Python's tar filter keeps a hard link to
    anywhere: the arena linked the bot's folder to any file of its disk (here the
    organiser's), which the next setup's file of that name overwrote, and which came back
    to the bot copied. A hard link must name a file sent before it in the stream."""
    sandboxed()
    victim = tmp_path / "organiser.txt"
    victim.write_text("the organiser's file\n")
    folder = built_bot(tmp_path / "bot", '["{python}", "inject.py"]')
    (folder / "inject.py").write_text(textwrap.dedent(f'''\
        import io, os, runpy, tarfile
        runpy.run_path("build.py")
        link = tarfile.TarInfo("./stolen")
        link.type, link.linkname = tarfile.LNKTYPE, {str(victim)!r}
        stream = io.BytesIO()
        tarfile.open(fileobj=stream, mode="w:", format=tarfile.PAX_FORMAT).addfile(link)
        fds = f"/proc/{{os.getppid()}}/fd"
        out = min((n for n in os.listdir(fds) if int(n) > 2), key=int)   # dash: 10 and $1
        with open(f"{{fds}}/{{out}}", "wb") as pipe:    # the real stream follows
            pipe.write(stream.getvalue())
        '''))
    with pytest.raises(SetupError, match="its folder could not be taken back"):
        ensure_setup(load_manifest(folder), timeout=60)
    assert victim.stat().st_nlink == 1
    assert not os.path.lexists(folder / "stolen")


def test_a_hostile_stream_is_refused_before_anything_is_unpacked(tmp_path):
    """Streams tar never sends, each refused before a byte is unpacked: a link out of the
    folder, then a file below it (the filter refused the file only as it was unpacked,
    the link made: the folder half written); a name sent twice; a file below a folder
    the stream never sent."""
    import tarfile

    def member(name: str, kind=tarfile.REGTYPE, linkname: str = "", data: bytes = b"x\n"):
        info = tarfile.TarInfo(name)
        info.type, info.linkname = kind, linkname
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        return info, data if kind == tarfile.REGTYPE else None

    for what, members in {
        "a file below a link out of the folder": [
            member("./first.txt"), member("./etc", tarfile.SYMTYPE, "/etc"),
            member("./etc/passwd")],
        "a name sent twice": [member("./first.txt"), member("./first.txt", data=b"again\n")],
        "a file below a folder not sent": [member("./first.txt"), member("./deep/x.txt")],
    }.items():
        folder = tmp_path / what.replace(" ", "-")
        folder.mkdir()
        (folder / "bot.toml").write_text("kept\n")
        refused = _sent_back(folder, members)
        assert refused is not None and "could not be taken back" in refused, what
        assert sorted(p.name for p in folder.iterdir()) == ["bot.toml"], what


def test_the_spool_of_a_folder_sent_back_is_not_removed_as_a_file_the_setup_removed(tmp_path):
    """Where the folder's file system has no unnamed files (NFS), the spool of the stream
    is a named file in the folder, unlinked while open and kept by NFS under a name of its
    own (.nfsXXXX): what the setup did not send back is removed, and that would have been
    it (EBUSY there, the setup failed). The spool is spared by its inode."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "kept.txt").write_text("sent back\n")
    (folder / "removed.txt").write_text("not sent back\n")
    with open(folder / ".nfs000000000001", "w+b") as spool:
        bot_setup._remove_unsent(folder, {".", "kept.txt"}, os.fstat(spool.fileno()))
    assert sorted(p.name for p in folder.iterdir()) == [".nfs000000000001", "kept.txt"]
