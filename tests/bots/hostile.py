"""A hostile bot: it plays its first legal card, and tries one thing a bot must not do.

    hostile.py MODE [ARG...]

It reports what it managed on stdout, one line each, "HOSTILE " + JSON (the arena keeps
its output in its log). Modes (done once, at its first turn, unless said otherwise):

  read PATH...       reads each path (a file, or a folder's listing)
  write PATH...      writes a file at each path
  connect PORT       opens a TCP connection to 127.0.0.1:PORT
  tokens             looks for other bots' tokens in /proc/*/environ and cmdline
  fork_bomb          forks sleeping children until it cannot (at most 5000)
  alloc              allocates memory until it is stopped
  flood              writes to stdout without end
  burn_cpu           spins until it is stopped
  hog N              starts N processes that spin until the sandbox ends, then plays on
  work N             at every turn, spins N loop iterations first and reports the wall time
                     they took (its share of the cores while the others run)
  big_file           writes one file to /tmp until it is stopped
  ignore_term        ignores SIGTERM, and keeps running after the goodbye
  daemon             leaves a detached child (new session) that sleeps for ten minutes
  persist            at every turn, writes what it holds to every place it can write, and
                     reads back what another process of it left there
  env                reports the names of its environment variables
  long_line          writes one 200 KiB line to stderr, then plays on
  remount PATH...    reports its capabilities, and remounts each path writable (mount(2)
                     with MS_REMOUNT|MS_BIND, clearing read-only, as root with
                     CAP_SYS_ADMIN could); it writes nothing there
  fill DIR MIB       writes one file of MIB MiB into DIR, then plays on
  oom                reports its out-of-memory score adjustment, then tries to lower it to
                     -1000 (the one the kernel's out-of-memory killer would spare)
  keyring PREFIX     at every turn, adds a key named PREFIX + its process id, holding its
                     hand, to its user's kernel keyring, and looks for keys named so by
                     another process (/proc/keys)
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

from ono99.bot import Bot, run

MODE = sys.argv[1]
ARGS = sys.argv[2:]
ME = uuid.uuid4().hex          # this process (pids repeat inside PID namespaces)


def report(**fields) -> None:
    # one write (atomic on a pipe up to 4 KiB): a forked child and its parent share the
    # output, where print's text and newline, two writes, could be split by the other's
    line = "HOSTILE " + json.dumps({"mode": MODE, "process": ME, **fields}) + "\n"
    os.write(1, line.encode())


def attempt(what, fn) -> None:
    try:
        result = fn()
        report(what=what, ok=True, result=result)
    except Exception as exc:   # the sandbox refused it: that is the point
        report(what=what, ok=False, error=f"{exc.__class__.__name__}: {exc}")


def read(path: str):
    p = Path(path)
    return sorted(os.listdir(p))[:5] if p.is_dir() else p.read_bytes()[:40].hex()


def write(path: str):
    Path(path).write_text(f"written by {ME}\n")
    return path


def connect(port: str):
    with socket.create_connection(("127.0.0.1", int(port)), timeout=2) as s:
        s.sendall(b"stolen")
    return port


def tokens():
    found = []
    own = os.environ.get("ONO99_TOKEN")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        for name in ("environ", "cmdline"):
            try:
                data = (entry / name).read_bytes()
            except OSError:
                continue
            for item in data.split(b"\0"):
                if item.startswith(b"ONO99_TOKEN=") and item[12:].decode() != own:
                    found.append(entry.name)
    return {"pids_seen": sum(1 for e in Path("/proc").iterdir() if e.name.isdigit()),
            "other_tokens": found}


BOMB = """
import json, os, time
made = 0
try:
    while made < 5000:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        made += 1
    result = {"forked": made}
except OSError as exc:
    result = {"forked": made, "stopped_by": str(exc)}
os.write(1, ("HOSTILE " + json.dumps({"mode": "fork_bomb", "process": "bomber",
                                      "what": "fork_bomb", "ok": True, "result": result})
             + "\\n").encode())   # one write, as report()
time.sleep(600)
"""


def fork_bomb():
    # from a fresh interpreter: forking this one, full of gRPC's threads, would stall it
    subprocess.Popen([sys.executable, "-c", BOMB])
    return "started"


def alloc():
    hog = []
    while True:
        hog.append(bytearray(16 * 2**20))
        report(what="allocated", mib=16 * len(hog))


def flood():
    line = "x" * 1000 + "\n"
    while True:
        sys.stdout.write(line)


def burn_cpu():
    while True:
        pass


def hog(count: str):
    # fresh interpreters (forking this one, full of gRPC's threads, could stall it)
    for _ in range(int(count)):
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
    return int(count)


def work(iterations: int) -> None:
    start = time.perf_counter()
    for _ in range(iterations):
        pass
    report(what="work", ms=(time.perf_counter() - start) * 1000)


def big_file():
    with open("/tmp/big", "wb") as f:
        block = b"\0" * 2**20
        while True:
            f.write(block)
            f.flush()


def daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)
    return "left a detached child"


MS_REMOUNT, MS_BIND = 32, 4096


def oom_score() -> int:
    return int(Path("/proc/self/oom_score_adj").read_text())


def capabilities() -> str:
    return next(line.split()[1] for line in Path("/proc/self/status").read_text().splitlines()
                if line.startswith("CapEff:"))


def remount(path: str):
    """Writes nothing: a test that fails must not have changed the host's files."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(None, path.encode(), None, MS_REMOUNT | MS_BIND, None) != 0:
        raise OSError(ctypes.get_errno(), f"mount: {os.strerror(ctypes.get_errno())}")
    return {"read_only": bool(os.statvfs(path).f_flag & os.ST_RDONLY)}


#: add_key(2) by machine (glibc has no wrapper)
ADD_KEY = {"x86_64": 248, "aarch64": 217}[os.uname().machine] if MODE == "keyring" else None
KEY_SPEC_USER_KEYRING = -4


def keyring(prefix: str, hand: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    data = hand.encode()
    serial = libc.syscall(ADD_KEY, b"user", (prefix + ME).encode(), data, len(data),
                          ctypes.c_int(KEY_SPEC_USER_KEYRING))
    error = None if serial >= 0 else os.strerror(ctypes.get_errno())
    try:
        keys = Path("/proc/keys").read_text()
    except OSError:
        keys = ""
    found = {word.rstrip(":") for word in keys.split()
             if word.startswith(prefix) and ME not in word}
    report(what="keyring", added=serial >= 0, error=error, found_from_others=sorted(found))


def fill(folder: str, mib: str):
    with open(os.path.join(folder, "fill"), "wb") as f:
        block = b"\0" * 2**20
        for _ in range(int(mib)):
            f.write(block)
            f.flush()
    return int(mib)


class Hostile(Bot):
    name = "hostile"

    def __init__(self) -> None:
        super().__init__()
        self.done = False

    def choose(self, view):
        if MODE == "persist":
            self.persist(view)
        elif MODE == "work":
            work(int(ARGS[0]))
        elif MODE == "keyring":
            keyring(ARGS[0], " ".join(view.hand))
        elif not self.done:
            self.done = True
            if MODE == "read":
                for path in ARGS:
                    attempt(f"read {path}", lambda p=path: read(p))
            elif MODE == "write":
                for path in ARGS:
                    attempt(f"write {path}", lambda p=path: write(p))
            elif MODE == "connect":
                attempt(f"connect {ARGS[0]}", lambda: connect(ARGS[0]))
            elif MODE == "tokens":
                attempt("tokens", tokens)
            elif MODE == "fork_bomb":
                attempt("fork_bomb", fork_bomb)
            elif MODE == "daemon":
                attempt("daemon", daemon)
            elif MODE == "oom":
                attempt("oom score", oom_score)
                attempt("oom spare me", lambda: Path("/proc/self/oom_score_adj").write_text("-1000"))
            elif MODE == "env":
                attempt("env", lambda: sorted(os.environ))
            elif MODE == "remount":
                attempt("capabilities", capabilities)
                for path in ARGS:
                    attempt(f"remount {path}", lambda p=path: remount(p))
            elif MODE == "hog":
                attempt("hog", lambda: hog(ARGS[0]))
            elif MODE == "fill":
                attempt(f"fill {ARGS[0]}", lambda: fill(*ARGS))
            elif MODE == "long_line":
                sys.stderr.write("y" * 200 * 1024 + "\n")
                sys.stderr.flush()
                report(what="long line written", ok=True)
            elif MODE in ("alloc", "flood", "burn_cpu", "big_file"):
                {"alloc": alloc, "flood": flood, "burn_cpu": burn_cpu, "big_file": big_file}[MODE]()
        return view.legal[0]

    def persist(self, view) -> None:
        places = [os.environ.get("HOME", ""), "/tmp", "/dev/shm", "/var/tmp", os.getcwd()]
        hand = " ".join(view.hand)
        found, wrote = [], []
        for place in filter(None, places):
            try:
                for old in Path(place).glob("hands-*.txt"):
                    if old.name != f"hands-{ME}.txt":
                        found.append(str(old))
            except OSError:
                pass
            try:
                with open(Path(place) / f"hands-{ME}.txt", "a") as f:
                    f.write(f"{view.match.match_id} {hand}\n")
                wrote.append(place)
            except OSError:
                pass
        report(what="persist", wrote=wrote, found_from_others=sorted(set(found)))

    def on_match_end(self, result, match) -> None:
        if MODE == "ignore_term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)


def main() -> int:
    if MODE == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    code = run(Hostile(), [])
    if MODE == "ignore_term":   # told goodbye: stay, ignoring SIGTERM
        report(what="lingering after goodbye")
        while True:
            time.sleep(1)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
