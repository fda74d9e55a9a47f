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
  chatty KIB...      at the first turn of its K-th match, reports, then writes the K-th KIB
                     KiB to stderr (in lines of 1 KiB; nothing past the last)
  remount PATH...    reports its capabilities, and remounts each path writable (mount(2)
                     with MS_REMOUNT|MS_BIND, clearing read-only, as root with
                     CAP_SYS_ADMIN could); it writes nothing there
  fill DIR MIB       writes one file of MIB MiB into DIR, then plays on
  open_for_writing PATH...
                     opens each path for writing (a sysctl of /proc/sys), and closes it
                     without writing a byte
  locks FILE         takes shared locks on FILE (a file of its folder, which the test
                     holds locked from outside: flock, a POSIX record lock, an open file
                     description's lock) and reports whether each met that lock; then
                     asks to be told of other processes' opens and reads of its folder
                     (inotify, fanotify, dnotify)
  lease FILE         takes a write lease on FILE (a file of its folder nobody has open),
                     which would make another process's open of it wait (or fail, if it
                     must not wait) and tell this one of it; then lets it go
  identity           reports its user and groups, its capabilities and no_new_privs, then
                     tries to make a user namespace (in which it would hold every
                     capability) and to start a thread (clone3, or clone where clone3 is
                     refused as absent)
  oom                reports its out-of-memory score adjustment, then tries to lower it to
                     -1000 (the one the kernel's out-of-memory killer would spare)
  keyring PREFIX     at every turn, adds a key named PREFIX + its process id, holding its
                     hand, to its user's kernel keyring, and looks for keys named so by
                     another process (/proc/keys)
  pagecache FILE     at its first turn: tries the page cache's exact probes and eviction on
                     FILE (a file of its folder: mincore, cachestat, a read that must not
                     wait, fadvise DONTNEED, madvise COLD and PAGEOUT) and io_uring, and
                     reports each; but first reads back, with mincore, a message another
                     process left in FILE's cached pages (a page a bit); last, leaves its
                     own (its process id and hand), read again at each later turn
  hold_connections N at its first turn, opens N connections to the referee's socket (by
                     helper processes: a bot's process may have only 256 files open),
                     each speaking HTTP/2's preface, and holds them until the sandbox
                     ends, taking again any it can; reports how many the referee kept
                     open after a second
  quit               plays its first match, and exits as its second starts
  slow SECONDS       sleeps SECONDS at every turn (a long match, well within its clock)
  kill_referee TURN SECONDS
                     sleeps SECONDS at every turn, and at its TURN-th turn of a match kills
                     the process that started it (its referee, where it runs outside the
                     sandbox): a match that kills every referee that plays it
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import select
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
    # from a fresh interpreter: forking this one, full of gRPC's threads, would stall it.
    # Its report is awaited (up to 5 s of the bank) and passed on: on a loaded machine the
    # match ended first, its processes with it, and the report was never written (seen once)
    bomber = subprocess.Popen([sys.executable, "-c", BOMB], stdout=subprocess.PIPE)
    if select.select([bomber.stdout], [], [], 5)[0]:
        os.write(1, bomber.stdout.readline())
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


def identity() -> dict:
    status = dict(line.split(":\t", 1) for line in
                  Path("/proc/self/status").read_text().splitlines() if ":\t" in line)
    import getpass
    import pwd
    me = pwd.getpwuid(os.getuid())
    return {"uids": os.getresuid(), "gids": os.getresgid(), "groups": os.getgroups(),
            "name": getpass.getuser(), "home": me.pw_dir,
            "users": [row.split(":")[0] for row in
                      Path("/etc/passwd").read_text().splitlines()],
            **{name: status[name].strip() for name in
               ("CapInh", "CapPrm", "CapEff", "CapAmb", "CapBnd", "NoNewPrivs")}}


CLONE_NEWUSER = 0x10000000


def new_user_namespace() -> str:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), f"unshare: {os.strerror(ctypes.get_errno())}")
    return Path("/proc/self/uid_map").read_text()


def thread() -> str:
    import threading
    done = []
    worker = threading.Thread(target=lambda: done.append(1))
    worker.start()
    worker.join()
    return "ran" if done else "did not run"


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


PAGE = 4096
MAGIC = b"ONO99"
#: A message's room in a file's pages (MAGIC, a length, the text: a page a bit) and how
#: many copies of it are left. Cached pages also go unasked: the kernel's proactive
#: reclaim (DAMON's pageout on these hosts) takes pages of memory it found cold. Measured
#: here, of a message's pages read once: none gone for 5 s, then about 1 in 150 a second
#: (one test in 45 failed on a lost page). So the writer reads them again at each turn,
#: and the reclaim only takes: a reader ORs the copies.
SLOT = 40
COPIES = 6


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.syscall.restype = ctypes.c_long
    return libc


def _called(result: int, libc) -> str:
    return "ok" if result >= 0 else os.strerror(ctypes.get_errno())


def _os_call(fn) -> str:
    try:
        fn()
        return "ok"
    except BlockingIOError:
        return "ok"           # a page not cached: the probe answered
    except OSError as exc:
        return exc.strerror


def resident(path: str, libc) -> list[int] | str:
    """Whether each page of ``path`` is cached (mincore), or mincore's error."""
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        try:
            vec = ctypes.create_string_buffer(size // PAGE)
            if libc.mincore(addr, size, vec) != 0:
                return os.strerror(ctypes.get_errno())
            return [b & 1 for b in vec.raw]
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def page_probes(path: str) -> dict[str, str]:
    """What each exact probe or eviction of the page cache, and io_uring, answers."""
    libc = _libc()
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        got = {"mincore": "ok" if isinstance(resident(path, libc), list) else resident(path, libc)}
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        got["madvise cold"] = _called(libc.madvise(addr, size, 20), libc)
        got["madvise pageout"] = _called(libc.madvise(addr, size, 21), libc)
        libc.munmap(addr, size)
        got["fadvise dontneed"] = _os_call(lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED))
        got["read nowait"] = _os_call(lambda: os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT))
        span, stat = (ctypes.c_uint64 * 2)(), (ctypes.c_uint64 * 8)()
        got["cachestat"] = _called(libc.syscall(451, fd, span, stat, 0), libc)   # every arch
        params = (ctypes.c_uint8 * 120)()                                       # io_uring_params
        ring = libc.syscall(425, 1, params)                                     # io_uring_setup
        got["io_uring"] = _called(ring, libc)
        if ring >= 0:
            os.close(ring)
        return got
    finally:
        os.close(fd)


def read_message(path: str) -> str | None:
    """The message another process left in ``path``'s cached pages (MAGIC, a length,
    the text: a page a bit, cached for 1, in COPIES slots, ORed), if mincore shows one."""
    bits = resident(path, _libc())
    if not isinstance(bits, list) or len(bits) < COPIES * SLOT * 8:
        return None
    ored = [max(bits[k * SLOT * 8 + i] for k in range(COPIES)) for i in range(SLOT * 8)]
    data = bytes(int("".join(map(str, ored[i:i + 8])), 2) for i in range(0, len(ored), 8))
    if not data.startswith(MAGIC):
        return None
    return data[len(MAGIC) + 1:len(MAGIC) + 1 + data[len(MAGIC)]].decode(errors="replace")


def _message_pages(text: str) -> list[int]:
    """The pages that stand for the 1 bits of ``text``'s message (cut to its slot), in
    each copy's slot."""
    body = text.encode()[:SLOT - len(MAGIC) - 1]
    message = MAGIC + bytes([len(body)]) + body
    return [k * SLOT * 8 + i * 8 + j for k in range(COPIES) for i, byte in enumerate(message)
            for j in range(8) if byte >> (7 - j) & 1]


def leave_message(path: str, text: str) -> bool:
    """Leave ``text`` in ``path``'s cached pages: evict them all, then read the pages of
    the 1 bits. Whether it could."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)                                    # clean pages: eviction drops them
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead: one page a read
        for page in _message_pages(text):
            os.pread(fd, 1, page * PAGE)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def refresh_message(path: str, text: str) -> None:
    """Read the pages of ``text``'s 1 bits again (at each later turn): the pages stay warm
    for the reclaim, and any it took come back."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        for page in _message_pages(text):
            os.pread(fd, 1, page * PAGE)
    finally:
        os.close(fd)


def open_for_writing(path: str):
    os.close(os.open(path, os.O_WRONLY))   # nothing written: a host's sysctl stays as it is
    return path


def locks(path: str) -> None:
    """Each lock a bot at one table could take on a file every sandbox shares (its
    runtime, /usr, its folder) for another to find taken: a bit of its hand a lock."""
    import fcntl
    import struct
    fd = os.open(path, os.O_RDONLY)
    try:
        attempt("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
        attempt("posix lock", lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
        ofd = struct.pack("hh4xqqi4x", fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0)   # struct flock
        attempt("ofd lock", lambda: fcntl.fcntl(fd, fcntl.F_OFD_SETLK, ofd) and None)
    finally:
        os.close(fd)
    libc = _libc()
    folder = os.getcwd().encode()
    in_open = 0x20

    def checked(result: int) -> int:
        if result < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return result

    def inotify():
        fd = checked(libc.inotify_init1(0))
        try:
            return checked(libc.inotify_add_watch(fd, folder, in_open))
        finally:
            os.close(fd)

    def fanotify():
        fan_report_fid, fan_mark_add, fan_open, at_fdcwd = 0x200, 1, 0x20, -100
        fd = checked(libc.fanotify_init(fan_report_fid, os.O_RDONLY))
        libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64,
                                       ctypes.c_int, ctypes.c_char_p]
        try:
            return checked(libc.fanotify_mark(fd, fan_mark_add, fan_open, at_fdcwd, folder))
        finally:
            os.close(fd)

    def dnotify():
        fd = os.open(folder, os.O_RDONLY)
        try:
            return fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS)
        finally:
            os.close(fd)

    attempt("inotify", inotify)
    attempt("fanotify", fanotify)
    attempt("dnotify", dnotify)


def lease(path: str) -> None:
    import fcntl
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)   # nobody else waits on it
    finally:
        os.close(fd)


#: HTTP/2's client preface and an empty SETTINGS frame: a connection past its handshake
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HOLDER_CONNECTIONS = 150    # per helper process, within its open-files limit


def hold_connections(count: int) -> int:
    """Helpers that open ``count`` connections and hold them; how many are still open."""
    path = os.environ["ONO99_REFEREE"].removeprefix("unix:")
    helpers = []
    while count > 0:
        n = min(count, HOLDER_CONNECTIONS)
        helpers.append(subprocess.Popen([sys.executable, __file__, "_holder", path, str(n)],
                                        stdout=subprocess.PIPE, text=True))
        count -= n
    return sum(int(h.stdout.readline() or 0) for h in helpers)


def holder(path: str, count: int) -> None:
    """Opens ``count`` connections to ``path``; after a second, prints how many the other
    end has not closed; then, until killed, takes again any connection it can (one more
    every 50 ms while it holds fewer than ``count``), as one freed by another bot."""
    held = [s for s in (connection(path) for _ in range(count)) if s is not None]
    time.sleep(1.0)
    held = [s for s in held if still_open(s)]
    print(len(held), flush=True)
    while True:
        time.sleep(0.05)
        held = [s for s in held if still_open(s)]
        if len(held) < count and (s := connection(path)) is not None:
            held.append(s)


def connection(path: str) -> socket.socket | None:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(1.0)
        s.connect(path)
        s.sendall(PREFACE)
        s.setblocking(False)
        return s
    except OSError:
        s.close()
        return None


def still_open(s: socket.socket) -> bool:
    """Whether the other end has not closed ``s`` (what it sent is read and dropped)."""
    try:
        while s.recv(65536):
            pass
    except BlockingIOError:
        return True
    except OSError:
        pass
    s.close()
    return False


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
        if MODE == "slow":
            time.sleep(float(ARGS[0]))
        elif MODE == "kill_referee":
            time.sleep(float(ARGS[1]))
            turns = self.turns = getattr(self, "turns", {})
            turns[view.match.match_id] = turns.get(view.match.match_id, 0) + 1
            if turns[view.match.match_id] == int(ARGS[0]):
                os.kill(os.getppid(), signal.SIGKILL)
        if MODE == "chatty":
            seen = self.chatted = getattr(self, "chatted", [])
            if view.match.match_id not in seen:
                seen.append(view.match.match_id)
                kib = int(ARGS[len(seen) - 1]) if len(seen) <= len(ARGS) else 0
                report(what="chatty", match=len(seen), kib=kib)    # before: its log may end
                for _ in range(kib):
                    sys.stderr.write("c" * 1023 + "\n")
                sys.stderr.flush()
        if MODE == "persist":
            self.persist(view)
        elif MODE == "work":
            work(int(ARGS[0]))
        elif MODE == "keyring":
            keyring(ARGS[0], " ".join(view.hand))
        elif MODE == "pagecache" and not self.done:
            self.done = True
            found = read_message(ARGS[0])                # before the probes evict it
            probes = page_probes(ARGS[0])
            text = f"{ME[:8]} {' '.join(view.hand)}"
            wrote = leave_message(ARGS[0], text)
            self.left = text if wrote else None
            others = [found] if found and not found.startswith(ME[:8]) else []
            report(what="pagecache", probes=probes, wrote=wrote, found_from_others=others)
        elif MODE == "pagecache" and getattr(self, "left", None):
            refresh_message(ARGS[0], self.left)
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
            elif MODE == "identity":
                attempt("identity", identity)
                attempt("new user namespace", new_user_namespace)
                attempt("thread", thread)
            elif MODE == "remount":
                attempt("capabilities", capabilities)
                for path in ARGS:
                    attempt(f"remount {path}", lambda p=path: remount(p))
            elif MODE == "hog":
                attempt("hog", lambda: hog(ARGS[0]))
            elif MODE == "open_for_writing":
                for path in ARGS:
                    attempt(f"open for writing {path}", lambda p=path: open_for_writing(p))
            elif MODE == "locks":
                locks(ARGS[0])
            elif MODE == "lease":
                attempt("lease", lambda: lease(ARGS[0]))
            elif MODE == "hold_connections":
                attempt("hold connections", lambda: hold_connections(int(ARGS[0])))
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

    def on_match_start(self, match) -> None:
        self.matches = getattr(self, "matches", 0) + 1
        if MODE == "quit" and self.matches == 2:
            os._exit(0)

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
    if MODE == "_holder":
        holder(ARGS[0], int(ARGS[1]))
    raise SystemExit(main())
