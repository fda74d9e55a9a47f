"""The server's registry of bots: the store's rows, kept in memory by their one writer."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import tracemalloc
import zlib
from pathlib import Path

import pytest

from arena.bots.sandbox import SandboxConfig
from arena.referee.lobby import Lobby, token_hash
from arena.referee.server import RefereeServer
from arena.server.client import pack
from arena.server.registry import (
    MAX_FILES, MAX_UNPACKED, NotHostedError, Registry, RegistryError, _unpack,
)
from arena.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


def test_the_registry_answers_from_memory_what_it_wrote_to_the_store(tmp_path):
    """Which bots are active, a bot by name and the list of them come from memory: the
    ladder asks at every pick, and on PostgreSQL each read was a round trip in the event
    loop. What it answers is what the store holds, as a restarted server reads it back."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    registry.add_remote("alpha")
    registry.add_remote("beta")
    registry.add_remote("alpha")
    registry.remove("alpha")   # its first version, so named
    expected = [(b.display, b.status) for b in store.registered_bots(include_removed=True)]
    assert expected == [("alpha", "removed"), ("beta", "active"), ("alpha v2", "active")]
    again = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))   # a restart
    for r in (registry, again):
        assert [(b.display, b.status) for b in r.bots(include_removed=True)] == expected
        assert [b.display for b in r.bots()] == ["beta", "alpha v2"]
        assert set(r.remote) == {"beta", "alpha v2"}
    store.close()   # no read of the store from now on
    assert [b.display for b in registry.active()] == ["beta", "alpha v2"]
    assert registry.find("alpha").display == "alpha v2"
    assert registry.find("alpha", include_removed=True).status == "removed"


def test_a_name_differing_from_an_entered_one_only_in_case_is_refused(tmp_path):
    """'Alpha' beside 'alpha' reads as the same bot in every table, and on a file system
    that ignores case its hosted folders (hosted/NAME/vN) are the other's: refused, also
    when the entered one was removed (its folders stay), saying which name to use."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    registry.add_remote("alpha")
    registry.remove("alpha")
    with pytest.raises(RegistryError) as refused:
        registry.add_remote("Alpha")
    assert str(refused.value) == ("bot name 'Alpha' differs from the entered 'alpha' only in "
                                  "case: use 'alpha' (a new version of it), or another name")
    with pytest.raises(RegistryError):
        asyncio.run(registry.add_hosted("ALPHA", b""))
    assert registry.add_remote("alpha")[0].display == "alpha v2"
    assert [b.name for b in store.registered_bots(include_removed=True)] == ["alpha", "alpha"]
    store.register_bot("Beta", "remote", token_hash="h1")   # both, from before the rule
    store.register_bot("beta", "remote", token_hash="h2")
    again = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    assert again.add_remote("beta")[0].display == "beta v2"
    assert again.add_remote("Beta")[0].display == "Beta v2"


def test_a_name_that_reads_like_an_entered_one_is_refused(tmp_path):
    """A stranger's 'c0unter' beside the known 'counter' passed for it in the standings
    (the nineteenth review: 'c0unter', 'aIpha' and 'fresh.' were accepted). A name that
    reads the same once the look-alikes are read as one (0 and o, 1, I and l, rn and m, vv
    and w, the separators, and a separator at the end skipped) is refused, saying which
    name is entered; others, and new versions of the entered name, are taken."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    for name in ("counter", "alpha", "fresh", "my-bot", "max", "wave", "ilya"):
        registry.add_remote(name)
    for name, entered in (("c0unter", "counter"), ("aIpha", "alpha"), ("a1pha", "alpha"),
                          ("fresh.", "fresh"), ("my_bot", "my-bot"), ("my..bot", "my-bot"),
                          ("rnax", "max"), ("vvave", "wave"), ("Ilya", "ilya"),
                          ("COUNTER", "counter")):
        with pytest.raises(RegistryError) as refused:
            registry.add_remote(name)
        assert f"use {entered!r} (a new version of it), or another name" in str(refused.value)
    assert str(refused.value).startswith("bot name 'COUNTER' differs from the entered "
                                         "'counter' only in case")
    with pytest.raises(RegistryError) as refused:
        asyncio.run(registry.add_hosted("c0unter", b""))
    assert str(refused.value) == (
        "bot name 'c0unter' reads like the entered 'counter' (0 as o, 1 or I as l, rn as m, "
        "vv as w, '.', '_' and '-' as one, a last one skipped): use 'counter' (a new version "
        "of it), or another name")
    for name in ("counters", "alpha2", "fresh2", "ai", "ali", "mybot", "my-bot2"):
        registry.add_remote(name)
    assert registry.add_remote("counter")[0].display == "counter v2"


def test_an_upload_whose_check_did_not_finish_is_failed_not_validating(tmp_path):
    """An upload cut short during its check (its client gone, the server stopped or
    killed) stayed 'validating' for good, also after a restart, never entered."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        toml = b'name = "slow"\ncommand = "{python} -c pass"\nsetup = "sleep 3"\n'
        info = tarfile.TarInfo("bot.toml")
        info.size = len(toml)
        tar.addfile(info, io.BytesIO(toml))

    async def cut_short():
        upload = asyncio.create_task(registry.add_hosted("slow", archive.getvalue()))
        while not [b for b in registry.bots() if b.status == "validating"]:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)                     # its setup is running
        upload.cancel()
        await asyncio.gather(upload, return_exceptions=True)

    asyncio.run(cut_short())
    [bot] = registry.bots()
    assert bot.status == "failed" and "the upload was cancelled" in bot.report["error"]
    # a server killed while it checked one: the next start fails it
    left = store.register_bot("left", "hosted", status="validating")
    again = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    found = again.find("left", include_removed=True)
    assert found.status == "failed" and "the server stopped meanwhile" in found.report["error"]
    assert store.registered_bots()[-1].id == left.id and store.registered_bots()[-1].status == "failed"
    store.close()


def test_an_upload_cancelled_while_it_unpacks_is_failed_not_validating(tmp_path):
    """An upload's archive unpacks in a thread (seconds for a big one); an upload whose
    call ended meanwhile (its client gone, the server stopping) stayed 'validating' until
    the server restarted, as one cut short during its check did before."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    archive = _archive({"bot.toml": b'name = "alpha"\ncommand = "{python} -c pass"\n'})

    async def cut_short():
        upload = asyncio.create_task(registry.add_hosted("alpha", archive))
        await asyncio.sleep(0)       # it runs to its first wait: the thread that unpacks
        assert [b.status for b in registry.bots(include_removed=True)] == ["validating"]
        upload.cancel()
        await asyncio.gather(upload, return_exceptions=True)
        assert upload.cancelled()

    asyncio.run(cut_short())
    [bot] = store.registered_bots(include_removed=True)
    assert bot.status == "failed" and "the upload was cancelled" in bot.report["error"]
    assert registry.find("alpha", include_removed=True).status == "failed"
    store.close()


def test_a_version_removed_during_its_check_stays_removed(tmp_path):
    """An upload is checked for as long as its setup takes (minutes, for a build); the
    organiser's removal of it meanwhile was overwritten when the check passed: the version
    entered, and played the ladder. It stays removed, and its upload says so."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    archive = _archive({
        "bot.toml": b'name = "slow"\ncommand = "{python} bot.py"\nsetup = "sleep 1"\n',
        "bot.py": (ROOT / "bots" / "random" / "bot.py").read_bytes()})

    async def removed_meanwhile():
        upload = asyncio.create_task(registry.add_hosted("slow", archive))
        while not [b for b in registry.bots() if b.status == "validating"]:
            await asyncio.sleep(0.05)
        registry.remove("slow")
        with pytest.raises(RegistryError) as refused:
            await upload
        return str(refused.value)

    said = asyncio.run(removed_meanwhile())
    assert said.startswith("slow was removed while its check ran (check-bot: slow: "), said
    assert said.endswith("it does not enter"), said
    assert registry.active() == []
    [bot] = store.registered_bots(include_removed=True)
    assert bot.status == "removed" and bot.report["checks"], bot
    store.close()


def _archive(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_an_upload_s_files_are_unpacked_readable_by_every_user(tmp_path):
    """A server run as root runs each hosted bot as a user of its own (not root: see
    arena.bots.sandbox), who reads the bot's folder as any user of the machine: an upload
    of files of mode 0600 (an author's umask 077) shut the bot out of its own files. They
    are unpacked readable by all; programs stay programs, and no write bit is added."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, mode, data in [("lib", 0o700, None), ("bot.py", 0o600, b"pass\n"),
                                 ("run.sh", 0o700, b"#!/bin/sh\n"), ("lib/w.bin", 0o400, b"w")]:
            info = tarfile.TarInfo(name)
            info.mode = mode
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    folder = tmp_path / "hosted" / "alpha"
    _unpack(out.getvalue(), folder)
    modes = {p.relative_to(folder).as_posix(): p.stat().st_mode & 0o7777
             for p in [folder, *folder.rglob("*")]}
    assert modes == {".": 0o755, "lib": 0o755, "bot.py": 0o644, "run.sh": 0o755,
                     "lib/w.bin": 0o644}


def test_an_upload_the_data_folder_cannot_take_fails_saying_so(tmp_path):
    """A data folder that cannot take an upload's folder (read-only, full, a file in the
    way): the upload failed with "Unexpected <class 'OSError'>" and a traceback in the
    server's log, its version left 'validating' until a restart. Now it fails, saying
    where and that the fault is the server's."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    (tmp_path / "hosted").mkdir()
    (tmp_path / "hosted" / "alpha").write_text("")          # mkdir under it: ENOTDIR
    archive = _archive({"bot.toml": b'name = "alpha"\ncommand = "{python} -c pass"\n'})
    with pytest.raises(RegistryError) as refused:
        asyncio.run(registry.add_hosted("alpha", archive))
    assert (f"alpha: the server cannot store the upload in {tmp_path}/hosted/alpha: Not a "
            "directory; the fault is the server's, not the bot's") == str(refused.value)
    [bot] = store.registered_bots()
    assert bot.status == "failed"
    store.close()


def test_an_upload_with_no_temporary_folder_to_unzip_in_fails_saying_so(tmp_path, monkeypatch):
    """An upload is unzipped into a temporary file: a server whose temporary folder is
    gone (or full, read-only) failed the upload with "Unexpected <class
    'FileNotFoundError'>", its version left 'validating' until a restart. Now it fails,
    saying the fault is the server's."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    archive = _archive({"bot.toml": b'name = "alpha"\ncommand = "{python} -c pass"\n'})
    with pytest.raises(RegistryError) as refused:
        asyncio.run(registry.add_hosted("alpha", archive))
    assert str(refused.value).startswith("alpha: the server cannot hold the upload to unpack "
                                         "it: No such file or directory")
    [bot] = store.registered_bots()
    assert bot.status == "failed"
    store.close()


def test_an_upload_whose_tar_unzips_past_the_limit_is_refused_as_it_unzips(tmp_path):
    """A pax header's data is read whole by tarfile before the member it describes, and
    no member's size counts it: an upload of 1 MB holding a 1 GiB header took 1 GiB of the
    server's memory and its loop for 24 s, and was accepted (32 MiB of upload: 32 GiB).
    Now the tar is unzipped a megabyte at a time, and refused past its limit."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    header = tarfile.TarInfo("PaxHeader")
    # past what the limit's files and each one's headers (4 KiB at most) can come to
    header.type, header.size = tarfile.XHDTYPE, MAX_UNPACKED + MAX_FILES * 4096 + 2**20
    zipping = zlib.compressobj(9, zlib.DEFLATED, 31)          # gzip, its zeros tiny
    parts = [zipping.compress(header.tobuf(format=tarfile.USTAR_FORMAT))]
    parts += [zipping.compress(bytes(2**20)) for _ in range(header.size // 2**20)]
    archive = b"".join([*parts, zipping.flush()])
    assert len(archive) < 2 * 2**20                            # a sixteenth of the limit
    with pytest.raises(RegistryError) as refused:
        asyncio.run(registry.add_hosted("alpha", archive))
    assert str(refused.value) == "alpha: the upload unpacks to more than 256 MiB"
    assert not (tmp_path / "hosted" / "alpha" / "v1").exists()
    [bot] = store.registered_bots()
    assert bot.status == "failed"
    store.close()


def test_a_version_and_a_bot_named_like_it_keep_their_logs_apart(tmp_path):
    """"alpha v2" and a bot called "alpha-v2" shared the log folder ``logs/alpha-v2``:
    ``arena bots logs alpha-v2`` showed alpha v2's output too, and a new alpha-v2 found a
    folder to move aside. Each version has a folder of its own."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    registry.add_remote("alpha")
    registry.add_remote("alpha")                       # alpha v2
    logs = registry.logs_dir("alpha v2")
    assert logs == tmp_path / "logs" / "alpha+v2"
    logs.mkdir(parents=True)
    (logs / "alpha+v2.stderr.log").write_text("alpha v2's own output\n")
    archive = _archive({"bot.toml": b'name = "alpha-v2"\ncommand = "{python} -c pass"\n'})
    asyncio.run(registry.add_hosted("alpha-v2", archive, setup_timeout=30))
    assert registry.logs_dir("alpha-v2") == tmp_path / "logs" / "alpha-v2"
    bot, text = registry.logs("alpha-v2")
    assert bot.display == "alpha-v2" and "alpha v2's own output" not in text
    assert (logs / "alpha+v2.stderr.log").read_text() == "alpha v2's own output\n"
    assert [p.name for p in (tmp_path / "logs").iterdir() if "orphaned" in p.name] == []
    store.close()


def test_a_bot_s_logs_are_read_from_their_ends(tmp_path):
    """``arena bots logs`` read each log file whole to keep its last 64 KiB: a bot's
    folder holds up to 64 MiB, read in the event loop that referees the matches at every
    call (70 ms for 80 MB). Each file is read from its end; one gone meanwhile (pruned) is
    passed over, where its stat ended the call with an unexpected error."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    archive = _archive({"bot.toml": b'name = "chatty"\ncommand = "{python} -c pass"\n'})
    asyncio.run(registry.add_hosted("chatty", archive, setup_timeout=30))
    logs = registry.logs_dir("chatty")
    logs.mkdir(parents=True, exist_ok=True)
    old, new = logs / "chatty.stderr.log", logs / "chatty+2.stderr.log"
    with old.open("wb") as f:            # 64 MiB, nearly all of it a hole: cheap to make
        f.truncate(64 * 2**20 - 60_000)
        f.seek(0, os.SEEK_END)
        f.write(b"o" * 59_999 + b"\n")
    new.write_text("the newest line\n")
    os.utime(old, (1, 1))
    tracemalloc.start()
    try:
        text = registry.logs("chatty")[1]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"{peak / 2**20:.0f} MiB taken to read 64 KiB"
    assert len(text.encode()) == 64 * 1024 and text.endswith("o\nthe newest line\n")
    new.unlink()
    assert registry.logs("chatty")[1].endswith("o" * 100 + "\n")
    store.close()


def test_an_older_server_s_log_folder_of_a_version_moves_to_its_own_name(tmp_path):
    """A server before the change kept "beta v2"'s logs in ``logs/beta-v2``: started on
    that data folder, it moves them to ``logs/beta+v2``, where ``arena bots logs`` reads;
    a folder that a bot called like it ("beta-v3") has now stays that bot's."""
    store = SQLiteStore(tmp_path / "arena.db")
    registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    archive = _archive({"bot.toml": b'name = "beta"\ncommand = "{python} -c pass"\n'})
    for _ in range(3):                                 # beta, beta v2, beta v3
        asyncio.run(registry.add_hosted("beta", archive, setup_timeout=30))
    registry.add_remote("beta-v3")
    for version in (2, 3):                             # as an older server left them
        old = tmp_path / "logs" / f"beta-v{version}"
        registry.logs_dir(f"beta v{version}").rename(old)
        (old / f"beta v{version}.stderr.log").write_text(f"beta v{version} before\n")
    restarted = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
    assert not (tmp_path / "logs" / "beta-v2").exists()
    assert "beta v2 before" in restarted.logs("beta v2")[1]
    assert (tmp_path / "logs" / "beta-v3" / "beta v3.stderr.log").exists()
    assert not (tmp_path / "logs" / "beta+v3").exists()
    store.close()

def test_a_remote_bot_and_a_hosted_one_answer_the_same_questions(tmp_path):
    """Whatever its kind, a bot is asked the same things of the registry (whether it is
    ready to be seated now, where its seats come from, its output), each kind answering
    for itself, here with a real bot of each: the remote one is ready only while it is
    connected and not playing, the hosted one whenever it is entered."""
    store = SQLiteStore(tmp_path / "arena.db")
    lobby = Lobby()
    registry = Registry(store, lobby, tmp_path / "data", SandboxConfig("none"))

    async def scenario():
        referee = await RefereeServer.start("tcp", lobby=lobby)
        proc = None
        try:
            far_bot, token = registry.add_remote("far")
            upload = await registry.add_hosted("near", pack(ROOT / "bots" / "random"),
                                               setup_timeout=60)
            near = upload.bot
            assert near.status == "active", upload.report.to_dict()
            assert registry.ready(near) and registry.connected(near)
            assert not registry.ready(far_bot) and not registry.connected(far_bot)
            proc = subprocess.Popen([sys.executable, str(ROOT / "bots" / "random" / "bot.py")],
                                    env={**os.environ, "ONO99_REFEREE": referee.address,
                                         "ONO99_TOKEN": token},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await lobby.wait_session_hash(token_hash(token), 60)
            assert registry.ready(far_bot) and registry.connected(far_bot)
            remote = registry.provider(far_bot, referee)
            hosted = registry.provider(near, referee)
            # the remote bot's one connection is shared; the hosted bot's processes are
            # each tournament's own, and kept warm by the ladder
            assert registry.provider(far_bot, referee) is remote
            assert registry.provider(near, referee) is not hosted
            assert hosted.runs_processes and not remote.runs_processes
            try:
                seats = [await remote.lease(), await hosted.lease()]
                assert all(seat.session is not None for seat in seats)
                assert not registry.ready(far_bot)           # playing: not seated twice
                assert registry.ready(near)
                remote.release(seats[0], None)
                hosted.release(seats[1], None)
                assert registry.ready(far_bot)
            finally:
                await hosted.close("the test is over")
            assert registry.logs("near")[0] == near
            with pytest.raises(NotHostedError, match="far is a remote bot"):
                registry.logs("far")
            registry.remove("far")
            assert remote.retired and not registry.connected(far_bot)
        finally:
            if proc is not None:
                proc.kill()
                proc.wait()
            await referee.stop()

    try:
        asyncio.run(scenario())
    finally:
        store.close()


def test_a_bot_s_name_finds_its_latest_version_among_several(tmp_path):
    """A base name with no version of that display name (its first, removed) finds the
    latest of its versions, here of two active ones, as a tournament or the ladder asked
    for 'alpha' means; also after a restart, whose registry reads the store again.
    (Mutation review: ``found[-1]`` changed to ``found[0]`` in ``find`` survived: the
    only test had one active version.)"""
    store = SQLiteStore(tmp_path / "arena.db")
    try:
        registry = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
        for _ in range(3):
            registry.add_remote("alpha")
        registry.remove("alpha")     # its first version, so named
        again = Registry(store, Lobby(), tmp_path, SandboxConfig("none"))
        for r in (registry, again):
            assert [b.display for b in r.bots()] == ["alpha v2", "alpha v3"]
            assert r.find("alpha").display == "alpha v3"
            assert r.find("alpha", active_only=True).display == "alpha v3"
            assert r.find("alpha v2").display == "alpha v2"
    finally:
        store.close()
