"""A TCP relay between a bot and the referee, to break the network on purpose: drop a
connection (both ends see it), black-hole it (the bot's end closes, the referee's end
stays open and hears nothing more, as when a route dies), stall it (both ends stay open
and nothing more passes either way: no end is told, as when a NAT forgets the
connection), refuse new connections, hold back the referee's replies (a welcome that
never arrives), or hold them to relay them in one burst."""

from __future__ import annotations

import asyncio
import contextlib


class Relay:
    """Listens on a free loopback port and relays each connection to ``target`` (HOST:PORT)."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.refusing = False
        #: while set, what the referee sends on its streams (HTTP/2 frames of a stream id
        #: other than 0: a call's headers and messages) is kept back, never relayed; the
        #: connection's own frames (settings, pings) still pass, so the bot's calls go on
        #: and its hello reaches the referee. Plaintext HTTP/2 only; a connection that had
        #: frames held back is of no more use (its header compression is out of step):
        #: drop it.
        self.withholding = False
        self.links: list[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = []
        self.silent: list[asyncio.StreamWriter] = []   # referee ends left open, kept alive
        self.stalled: set[asyncio.StreamWriter] = set()   # ends open, nothing written to them
        #: while set, what the referee sends is kept, to be relayed at once by release():
        #: the bot then reads a burst of messages and the stream's end together
        self.holding = False
        self._held: dict[asyncio.StreamWriter, list[bytes]] = {}
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task] = set()

    async def __aenter__(self) -> Relay:
        self._server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc) -> None:
        self._server.close()
        self.drop()
        for referee in self.silent:
            referee.transport.abort()
        for task in list(self._pumps):
            task.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)

    @property
    def address(self) -> str:
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"{host}:{port}"

    def drop(self) -> None:
        """Reset every connection at both ends."""
        for bot, referee in self.links:
            bot.transport.abort()
            referee.transport.abort()
        self.links.clear()

    def black_hole(self) -> None:
        """Reset the bot's end of every connection; the referee's end stays open, silent."""
        for bot, referee in self.links:
            bot.transport.abort()
            self.silent.append(referee)
        self.links.clear()

    def stall(self) -> None:
        """From now on relay nothing on the connections open, either way, and close none
        of their ends: what each end sends is read and thrown away. New connections are
        relayed as usual."""
        for bot, referee in self.links:
            self.stalled.update((bot, referee))
            self.silent.extend((bot, referee))   # closed on exit
        self.links.clear()

    def release(self) -> None:
        """Relay what was held, each connection's in one write, and stop holding."""
        self.holding = False
        for dst, frames in self._held.items():
            if not dst.transport.is_closing():
                dst.write(b"".join(frames))
        self._held.clear()

    async def _link(self, bot_r: asyncio.StreamReader, bot_w: asyncio.StreamWriter) -> None:
        if self.refusing:
            bot_w.transport.abort()
            return
        self.accepted += 1
        ref_r, ref_w = await asyncio.open_connection(*self.target)
        self.links.append((bot_w, ref_w))
        for pump in (self._pump(bot_r, ref_w), self._pump_replies(ref_r, bot_w)):
            task = asyncio.create_task(pump)
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _pump(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await src.read(65536):
                if dst.transport.is_closing():
                    return
                if dst in self.stalled:
                    continue
                dst.write(data)
                await dst.drain()

    async def _pump_replies(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        """The referee's side, frame by frame (a server's HTTP/2 starts with a frame: no
        preface), so that :attr:`withholding` can keep back a stream's frames."""
        with contextlib.suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
            while True:
                header = await src.readexactly(9)   # length (24 bits), type, flags, stream
                frame = header + await src.readexactly(int.from_bytes(header[:3], "big"))
                if dst.transport.is_closing():
                    return
                if dst in self.stalled or (self.withholding
                                           and int.from_bytes(header[5:9], "big") & 0x7FFFFFFF):
                    continue
                if self.holding:
                    self._held.setdefault(dst, []).append(frame)
                    continue
                dst.write(frame)
                await dst.drain()
