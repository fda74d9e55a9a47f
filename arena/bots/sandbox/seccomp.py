"""The seccomp filter every sandboxed process runs under: the system calls refused
in the sandbox, and the program libseccomp makes of them for bwrap."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os


#: System calls that reach what the kernel shares beyond every namespace, refused in the
#: sandbox (EPERM unless said). No bot needs them; Docker's and Flatpak's default filters
#: refuse the keyrings' and io_uring's too.
#:
#: - The keyrings: a key one process adds to its user's keyring, another process of the
#:   same user reads, sandboxed or not: memory across phases (a fresh process recognising
#:   the deal it played before) or a channel between two bots at one table.
#: - The page cache's exact probes and eviction: every bot reads the same host files (its
#:   folder, the runtimes, /usr), whose cached pages outlive its process. A process that
#:   evicted a file's pages (fadvise DONTNEED, madvise COLD or PAGEOUT) and read back the
#:   ones standing for 1 bits left a message that the next phase's process read with
#:   mincore (the file's owner may: bots run as the root that owns most host files),
#:   cachestat, or a read that must not wait (preadv2's RWF_NOWAIT: refused with
#:   EOPNOTSUPP, as for a file that cannot do it, so honest callers read normally). A
#:   tournament's second phase named the opponent's dealt hand in 3 deals of 3. io_uring
#:   goes too: its requests run without passing this filter.
#: - Locks and watches of files: every sandbox reads the same host files (its runtime,
#:   /usr, a bot's folder), and a lock one takes on such a file (flock, a POSIX or an
#:   open file description's record lock) is met by every other, as is a watch of who
#:   opens or reads them (inotify, fanotify, dnotify): two bots at one table passed their
#:   hands through them live, a bit a lock or an open. (inotify's instances, useless without
#:   a watch, go too: they are counted per user, 128 at most, and two sandboxes of one uid,
#:   in two PID namespaces, passed a bit through that count.) Taking or dropping a lock does
#:   nothing and answers success (errno 0): a bot's one process, or an SQLite file it reads,
#:   works as before, where a refusal failed them; the processes of one bot no longer
#:   exclude one another by locks (no bot needs to). Watches are refused, and so are leases
#:   (fcntl F_SETLEASE): the bot's uid 0 owns the host's files, so it could lease any file
#:   nobody had open, and another sandbox's open of it then failed (with O_NONBLOCK: a bit)
#:   or waited while the holder was told (a bit back); the server's own reads of a hosted
#:   bot's folder would wait so, in its loop, up to 45 s (/proc/sys/fs/lease-break-time).
#: - Set-user-ID bits (a mode with 04000, given to a chmod or to a call that makes a
#:   file): a setup writes the bot's host folder as the host's uid 0, and a copy of a
#:   program it made set-user-ID there (``cp /usr/bin/python3 py; chmod 4755 py``) ran as
#:   root for any user of the machine who could reach the folder. The sandbox's own mounts
#:   are nosuid; the host's are not. openat2 takes its mode in a structure no filter can
#:   read: refused as absent (ENOSYS), so callers use openat. Set-group-ID bits are let
#:   be (a filter cannot tell a file from a folder, and a folder's is common: a bot folder
#:   in a group's shared folder has it, and a setup copying its folders with their modes,
#:   shutil.copytree, failed): the setup's files lose theirs once it ends
#:   (arena.bots.setup).
#: - fallocate (EOPNOTSUPP, as from a file system that cannot): it takes a file's blocks
#:   at once, nothing written: a setup took 8 GiB of the host's disk in 15 ms when its
#:   folder was measured from outside, twice a second (its file system of its own holds
#:   it to its room now, fallocate or not). The C library's posix_fallocate then writes a
#:   byte a block: no faster than any writer.
#:
#: - New user namespaces (_NEW_USER_NAMESPACE), where the sandbox runs as a user of its
#:   own and so has no --disable-userns: in one, a process holds every capability over
#:   what it then makes, the kernel's widest surface for a user with none. clone3 takes
#:   its flags in a structure no filter can read: refused as absent (ENOSYS), as Docker
#:   does, so the C library uses clone.
#:
#: Each entry: the call, and the conditions on its arguments (index, mask, value: the call
#: is refused where ``arg & mask == value`` for each), none for every use.
_RWF_NOWAIT = 0x8
_SET_LOCK = (6, 7, 37, 38)      # fcntl's F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
_F_SETLEASE = 1024
_F_NOTIFY = 1026
_CLONE_NEWUSER = 0x10000000
#: flags are the first argument of both on x86-64 and arm64
_NEW_USER_NAMESPACE = ((b"unshare", ((0, _CLONE_NEWUSER, _CLONE_NEWUSER),), errno.EPERM),
                       (b"clone", ((0, _CLONE_NEWUSER, _CLONE_NEWUSER),), errno.EPERM),
                       (b"clone3", (), errno.ENOSYS))
#: The calls that set a file's mode, and the index of their mode argument.
_MODE_ARGUMENT = ((b"chmod", 1), (b"fchmod", 1), (b"fchmodat", 2), (b"fchmodat2", 2),
                  (b"open", 2), (b"openat", 3), (b"creat", 1), (b"mknod", 1), (b"mknodat", 2))
_REFUSED_CALLS: tuple[tuple[bytes, tuple[tuple[int, int, int], ...], int], ...] = (
    (b"add_key", (), errno.EPERM),
    (b"request_key", (), errno.EPERM),
    (b"keyctl", (), errno.EPERM),
    (b"mincore", (), errno.EPERM),
    (b"cachestat", (), errno.EPERM),
    (b"fadvise64", ((3, 0xFFFFFFFF, 4),), errno.EPERM),       # POSIX_FADV_DONTNEED
    (b"madvise", ((2, 0xFFFFFFFF, 20),), errno.EPERM),        # MADV_COLD
    (b"madvise", ((2, 0xFFFFFFFF, 21),), errno.EPERM),        # MADV_PAGEOUT
    (b"process_madvise", (), errno.EPERM),
    (b"preadv2", ((5, _RWF_NOWAIT, _RWF_NOWAIT),), errno.EOPNOTSUPP),
    (b"io_uring_setup", (), errno.EPERM),
    (b"io_uring_enter", (), errno.EPERM),
    (b"io_uring_register", (), errno.EPERM),
    (b"flock", (), 0),
    *((b"fcntl", ((1, 0xFFFFFFFF, command),), 0) for command in _SET_LOCK),
    (b"fcntl", ((1, 0xFFFFFFFF, _F_NOTIFY),), errno.EPERM),
    (b"fcntl", ((1, 0xFFFFFFFF, _F_SETLEASE),), errno.EPERM),
    (b"inotify_init", (), errno.EPERM),
    (b"inotify_init1", (), errno.EPERM),
    (b"inotify_add_watch", (), errno.EPERM),
    (b"fanotify_init", (), errno.EPERM),
    (b"fanotify_mark", (), errno.EPERM),
    *((call, ((index, bit, bit),), errno.EPERM) for call, index in _MODE_ARGUMENT
      for bit in (0o4000,)),
    (b"openat2", (), errno.ENOSYS),
    (b"fallocate", (), errno.EOPNOTSUPP),
    *_NEW_USER_NAMESPACE,
)
#: Calls some architectures do not have (arm64 has only their ``*at`` forms): left out there.
_NOT_EVERYWHERE = {b"chmod", b"open", b"creat", b"mknod", b"inotify_init"}
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO = 0x00050000
_SCMP_CMP_MASKED_EQ = 7


class _ArgCompare(ctypes.Structure):
    """libseccomp's ``struct scmp_arg_cmp``: argument ``arg`` & ``datum_a`` == ``datum_b``."""

    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


#: libseccomp's program, once: [bytes], or [None] where libseccomp is missing
_seccomp_made: list[bytes | None] = []


@contextlib.contextmanager
def _seccomp():
    """bwrap's flags for the filter (``--seccomp FD``: bwrap reads it before it runs
    anything) and the descriptor to pass it, in a file closed after; none without
    libseccomp."""
    program = _seccomp_program()
    if program is None:
        yield [], ()
        return
    fd = os.memfd_create("ono99-seccomp")
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield ["--seccomp", str(fd)], (fd,)
    finally:
        os.close(fd)


def _seccomp_program() -> bytes | None:
    """The seccomp filter bwrap loads for every sandboxed process (``--seccomp``): a
    classic BPF program made by libseccomp (Debian's ``libseccomp2``, through ctypes)
    that refuses _REFUSED_CALLS and allows the rest; calls of another ABI (32-bit, x32)
    kill the process, libseccomp's default. None where libseccomp is not installed (or
    fails)."""
    if not _seccomp_made:
        try:
            _seccomp_made.append(_make_seccomp_program())
        except OSError:
            _seccomp_made.append(None)
    return _seccomp_made[0]


def _make_seccomp_program() -> bytes | None:
    name = ctypes.util.find_library("seccomp")
    if name is None:
        return None
    lib = ctypes.CDLL(name)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    # the array form of seccomp_rule_add: no C varargs through ctypes
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.c_void_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        return None
    fd = os.memfd_create("ono99-seccomp-build")
    try:
        for call, conditions, code in _REFUSED_CALLS:
            number = lib.seccomp_syscall_resolve_name(call)
            if number < 0 and call in _NOT_EVERYWHERE:
                continue
            compare = (_ArgCompare * max(1, len(conditions)))(
                *(_ArgCompare(index, _SCMP_CMP_MASKED_EQ, mask, value)
                  for index, mask, value in conditions))
            if number < 0 or lib.seccomp_rule_add_array(
                    ctx, _SCMP_ACT_ERRNO | code, number, len(conditions), compare) != 0:
                raise OSError(f"libseccomp cannot refuse {call.decode()}")
        if lib.seccomp_export_bpf(ctx, fd) != 0:
            raise OSError("libseccomp cannot export its filter")
        return os.pread(fd, os.fstat(fd).st_size, 0)
    finally:
        os.close(fd)
        lib.seccomp_release(ctx)
