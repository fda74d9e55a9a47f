"""A setup step's network of its own (``--setup-network``): slirp4netns, fenced from
this machine's own services and private networks."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import shutil
import subprocess
from pathlib import Path

from arena.bots.sandbox.bwrap import runs_as_user
from arena.bots.sandbox.cgroups import _Cgroups


#: why a setup's network could not be made when its sandbox was gone first
_ENDED = "the setup's sandbox ended before its network was made"


class _SetupNetwork:
    """A setup's network (``--setup-network``, where the sandbox runs as a user of its
    own): the internet, never this machine's own services nor its private network.

    It shared the machine's network before: a stranger's setup reached every service on
    its loopback and its addresses (a database, the referee's and organiser's ports, a Ray
    cluster's job API, which runs any code it is sent), the private network's machines,
    and a cloud's metadata service. Now the sandbox keeps a network namespace of its own,
    and slirp4netns (Debian's package: a user-mode TCP/IP stack, rootless Podman's) carries
    its connections out as this machine's, refusing its loopback (--disable-host-loopback);
    routes in the sandbox refuse (``prohibit``, "Permission denied") the machine's own
    addresses and the networks they are on, and the private, shared, link-local and
    reserved ranges (:data:`_PROHIBITED`). slirp4netns runs in the setup's cgroups.
    Names are looked up through slirp4netns's resolver (10.0.2.3), which asks the
    machine's; where the machine's resolver is on its loopback (systemd-resolved's
    127.0.0.53), through the servers it asks in turn, let through one by one.

    bwrap reports the sandbox's pid (--info-fd) and waits (--block-fd) until slirp4netns
    is up and the routes are set; slirp4netns ends when :meth:`close` closes its exit pipe,
    or when this process dies and the kernel closes it."""

    #: the ranges refused besides the machine's own networks (IPv4 only: slirp4netns
    #: gives the sandbox no IPv6)
    _PROHIBITED = ("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16",
                   "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15",
                   "224.0.0.0/3")
    _GATEWAY = "10.0.2.2"     # slirp4netns's
    _RESOLVER = "10.0.2.3"
    _READY_S = 10.0
    _FILES = 1024   # slirp4netns's descriptors: a socket each for the setup's connections

    def __init__(self) -> None:
        text, self._nameservers = _setup_resolv()
        self._info = os.pipe()
        self._block = os.pipe()
        self._exit = os.pipe()
        self._resolv = os.pipe()
        os.write(self._resolv[1], text.encode())     # (a few lines: within a pipe's buffer)
        os.close(self._resolv[1])
        self._slirp: subprocess.Popen | None = None
        #: the descriptors bwrap is passed
        self.passed = [self._info[1], self._block[0], self._resolv[0]]
        #: this process's own ends, until closed
        self._own = [self._info[0], self._block[1], self._exit[0], self._exit[1]]

    @staticmethod
    def missing() -> str | None:
        """Why a setup cannot have a network of its own here, or None."""
        if not runs_as_user():
            return ("it is made only where the arena runs as root (its bots as users of "
                    "their own)")
        for program, package in (("slirp4netns", "slirp4netns"), ("nsenter", "util-linux"),
                                 ("ip", "iproute2"), ("prlimit", "util-linux")):
            if shutil.which(program) is None:
                return f"{program} is missing (Debian: {package})"
        if not os.path.exists("/dev/net/tun"):
            return "/dev/net/tun is missing (slirp4netns's device: the tun module, or a " \
                   "container given no such device)"
        return None

    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self._info[1]), "--block-fd", str(self._block[0]),
                "--perms", "0644", "--ro-bind-data", str(self._resolv[0]), "/etc/resolv.conf"]

    def started(self) -> None:
        """bwrap has them now (or never will): this process's copies of its ends go, so
        that a bwrap that dies is seen at once."""
        _close_all(self.passed)

    async def connect(self, cgroups: _Cgroups | None) -> None:
        """Once bwrap has made the sandbox: slirp4netns on its network (in the setup's
        ``cgroups``), the routes set, then the sandbox let go on. OSError if any of it
        fails, or takes more than :data:`_READY_S`."""
        try:
            await self._connect(cgroups)
        except TimeoutError:
            raise OSError(f"the setup's network was not ready in {self._READY_S:g} s") from None

    async def _connect(self, cgroups: _Cgroups | None) -> None:
        async with asyncio.timeout(self._READY_S):
            data = await _read(self._info[0], b"}")
            try:
                pid = int(json.loads(data)["child-pid"])
            except (ValueError, KeyError, TypeError):
                raise OSError(_ENDED) from None
            await _loopback_set(pid)
            ready = os.pipe()
            # slirp4netns runs as root, outside the sandbox, and holds a socket of this
            # machine's for each connection the setup makes: one that opened connections
            # in a loop had it at 6,219 descriptors and 83 MB in 10 s (the twenty-sixth
            # review). So it runs in the setup's cgroups (its memory, processes and share
            # of the cores), from its first instruction, with its descriptors capped.
            slirp = ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
                     "--enable-sandbox", "--enable-seccomp", "--ready-fd", str(ready[1]),
                     "--exit-fd", str(self._exit[0]), str(pid), "tap0"]
            joins = [] if cgroups is None else cgroups.join_commands()
            ends = list(ready)
            try:
                self._slirp = subprocess.Popen(
                    ["/bin/sh", "-c", "\n".join([*joins, 'exec "$@"']), "slirp", "prlimit",
                     f"--nofile={self._FILES}:{self._FILES}", "--", *slirp],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, pass_fds=(ready[1], self._exit[0]),
                    start_new_session=True)
                _close_all(ends, ready[1])     # its end (an EOF when slirp4netns ends)
                up = await _read(ready[0], b"1")
            finally:
                _close_all(ends)
            if up != b"1":
                self._slirp.wait()
                why = self._slirp.stderr.read().decode(errors="replace").strip().splitlines()
                raise OSError("slirp4netns could not give the setup a network: "
                              f"{why[-1] if why else 'it ended'}")
            await asyncio.to_thread(self._fence, pid)
        os.write(self._block[1], b"1")

    def _fence(self, pid: int) -> None:
        """The routes that keep the sandbox ``pid`` to the internet: the machine's own
        addresses refused, and the networks they are on (its gateway and neighbours: a
        machine on a public subnet has them outside the private ranges)."""
        own = _own_networks()
        routes = [f"route add prohibit {net}" for net in self._PROHIBITED]
        routes += [f"route add prohibit {net}" for net in sorted(own)]
        routes += [f"route add {address}/32 via {self._GATEWAY} dev tap0"
                   for address in self._nameservers
                   if not any(ipaddress.ip_address(address) in net for net in own)]
        done = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "-batch", "-"],
                              input="\n".join(routes) + "\n", capture_output=True, text=True,
                              timeout=self._READY_S)
        if done.returncode != 0:
            if not os.path.exists(f"/proc/{pid}"):
                raise OSError(_ENDED)
            raise OSError(f"the setup's network could not be fenced: {done.stderr.strip()}")

    def close(self) -> None:
        """The network goes (slirp4netns ends); again: nothing."""
        _close_all(self.passed)
        _close_all(self._own)
        if self._slirp is not None:
            slirp, self._slirp = self._slirp, None
            try:
                slirp.wait(timeout=2)     # it ends at its exit pipe's close, in a few ms
            except subprocess.TimeoutExpired:
                slirp.kill()
                slirp.wait()
            slirp.stderr.close()


async def _loopback_set(pid: int) -> None:
    """Return once bwrap has set up the loopback of the sandbox ``pid`` (127.0.0.1 on
    ``lo``, and ``lo`` up: the address is in the namespace's routing tables then), which
    it does after it has reported the pid. slirp4netns, which brings ``lo`` up itself,
    started in between 1 time in 12 to 60 with 4 to 6 setups at once, and bwrap's own
    request failed: "bwrap: loopback: Failed RTM_NEWADDR: Success", the setup gone."""
    while True:
        try:
            with open(f"/proc/{pid}/net/fib_trie", encoding="ascii") as tables:
                if "127.0.0.1" in tables.read():
                    return
        except OSError:
            raise OSError(_ENDED) from None
        await asyncio.sleep(0.001)


def _close_all(fds: list[int], *only: int) -> None:
    """Close the descriptors of ``fds`` (``only`` these of them), each taken off the list:
    never twice, since a number closed may be another thread's open file the moment
    after."""
    for fd in [fd for fd in fds if not only or fd in only]:
        fds.remove(fd)
        with contextlib.suppress(OSError):
            os.close(fd)


async def _read(fd: int, until: bytes) -> bytes:
    """What the pipe ``fd`` brings until ``until`` is in it, or it ends, read in the event
    loop (a cancel leaves no thread reading it)."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    data = b""
    while until not in data:
        readable = loop.create_future()
        loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
        try:
            await readable
        finally:
            loop.remove_reader(fd)
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if not chunk:
            break
        data += chunk
    return data


def _setup_resolv(host: str = "/etc/resolv.conf",
                  upstream: str = "/run/systemd/resolve/resolv.conf") -> tuple[str, list[str]]:
    """A setup's resolv.conf, and the servers in it to let through its routes. slirp4netns's
    resolver (10.0.2.3) asks the machine's, unless that is on the machine's loopback
    (systemd-resolved's 127.0.0.53), which --disable-host-loopback refuses it: then the
    servers systemd-resolved asks (its ``upstream`` file), named in the sandbox directly."""
    def servers(path: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        found = []
        with contextlib.suppress(OSError):
            for line in Path(path).read_text(errors="replace").splitlines():
                words = line.split()
                if len(words) >= 2 and words[0] == "nameserver":
                    with contextlib.suppress(ValueError):
                        found.append(ipaddress.ip_address(words[1].split("%")[0]))
        return found

    mine = servers(host)
    if mine and all(s.is_loopback for s in mine):
        theirs = [str(s) for s in servers(upstream) if s.version == 4 and not s.is_loopback]
        if theirs:
            return "".join(f"nameserver {s}\n" for s in theirs[:3]), theirs[:3]
    return f"nameserver {_SetupNetwork._RESOLVER}\n", []


def _own_networks() -> set[ipaddress.IPv4Network]:
    """This machine's IPv4 addresses (its loopback's aside), each as a network of one, and
    the networks they are on, from ``ip``."""
    done = subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True,
                          timeout=10)
    if done.returncode != 0:
        raise OSError(f"ip could not list this machine's addresses: {done.stderr.strip()}")
    out = set()
    for link in json.loads(done.stdout):
        for info in link.get("addr_info", ()):
            if "local" not in info or info["local"].startswith("127."):
                continue
            interface = ipaddress.IPv4Interface(f"{info['local']}/{info.get('prefixlen', 32)}")
            out |= {ipaddress.IPv4Network(interface.ip), interface.network}
    return out
