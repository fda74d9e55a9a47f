"""The gRPC servicer: thin. It authenticates the Hello through the lobby and hands every
later message to the session; everything else happens in sessions and match runners."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque

from google.protobuf.message import DecodeError
from ono99.transport import grpc
from ono99.v1 import referee_pb2, referee_pb2_grpc

from arena import __version__
from arena.referee import wire
from arena.referee.liveclock import live_timeout
from arena.referee.lobby import PROTOCOL_VERSION, Lobby, Refused
from arena.referee.session import BotSession
from arena.rpc import details
from arena.text import counted

log = logging.getLogger("arena.referee")
#: The referee logs a bot's stream it ended at most once in this many seconds a bot.
CUT_OFF_LOG_S = 60.0
#: The peers (failed hellos) and bots (cut-offs) the servicer remembers at most, the oldest
#: forgotten first: bounded memory.
REMEMBERED = 10_000

HELLO_TIMEOUT_S = 10.0
#: The largest message the referee's port receives: a bot's messages are at most 4 KiB (the
#: session refuses larger ones); an organiser's upload chunk 32 KiB. Larger ones end their
#: call in gRPC, before a servicer reads them.
MAX_RECEIVE = 64 * 1024
#: why a session ended when its stream did
CLOSED = (f"the bot's stream ended: it closed it, or sent a message over "
          f"{MAX_RECEIVE // 1024} KiB, which gRPC refuses")
REFUSE_READ_S = 1.0           # a blocked host's stream: its hello is awaited this long
MAX_UNAUTHENTICATED = 64      # streams that have not said hello yet, at once (then the
                              # longest waiting is closed for the newest)
MAX_FAILED_HELLOS = 10        # refused hellos from one host within FAILED_WINDOW_S ...
FAILED_WINDOW_S = 60.0        # ... after which only its hellos with a registered token get
                              # in, until it passes

# the gRPC status that ends the stream after each refusal
_REFUSAL_STATUS = {
    referee_pb2.REFUSAL_CODE_BAD_TOKEN: grpc.StatusCode.UNAUTHENTICATED,
    referee_pb2.REFUSAL_CODE_TOKEN_IN_USE: grpc.StatusCode.ALREADY_EXISTS,
    referee_pb2.REFUSAL_CODE_UNSUPPORTED_PROTOCOL: grpc.StatusCode.FAILED_PRECONDITION,
    referee_pb2.REFUSAL_CODE_NO_HELLO: grpc.StatusCode.INVALID_ARGUMENT,
    referee_pb2.REFUSAL_CODE_SHUTTING_DOWN: grpc.StatusCode.UNAVAILABLE,
    referee_pb2.REFUSAL_CODE_TOO_MANY: grpc.StatusCode.RESOURCE_EXHAUSTED,
    referee_pb2.REFUSAL_CODE_BAD_HELLO: grpc.StatusCode.INVALID_ARGUMENT,
}


# Refusals that count against a host: guessing tokens, or not speaking the protocol. A
# valid token still in use (a bot reconnecting before its old stream is noticed gone) or
# a server shutting down is no sign of an attack. Only network hosts are counted: every
# process on a unix socket is the same peer to gRPC ("unix:"), and on the launched bots'
# socket one bot's bad hellos would lock every other bot out (their tokens are 256 bits:
# there is nothing to guess).
_COUNTED = frozenset({referee_pb2.REFUSAL_CODE_BAD_TOKEN, referee_pb2.REFUSAL_CODE_NO_HELLO,
                      referee_pb2.REFUSAL_CODE_BAD_HELLO})


class _Waiting:
    """A stream that has not said hello yet; it may be told to give way."""

    __slots__ = ("timeout", "evicted")

    def __init__(self, timeout: asyncio.Timeout) -> None:
        self.timeout = timeout
        self.evicted = False

    def evict(self) -> None:
        self.evicted = True
        self.timeout.reschedule(asyncio.get_running_loop().time())   # its wait ends now


class RefereeServicer(referee_pb2_grpc.RefereeServicer):
    """``Referee.Play``: one bot session per stream."""

    def __init__(self, lobby: Lobby) -> None:
        self.lobby = lobby
        self._waiting: dict[_Waiting, None] = {}   # streams without a hello, oldest first
        self._failures: dict[str, deque[float]] = {}   # peer host -> times of refused hellos
        #: bot -> when its last cut-off was logged, and how many came after unlogged
        self._cut_offs: dict[str, tuple[float, int]] = {}

    async def Play(self, request_iterator, context):  # noqa: N802 (gRPC's name)
        peer = _host(context.peer())
        # a host refused too often is still heard, briefly: a hello with a registered token
        # gets in, or is told what is wrong with it (behind one NAT, a stranger's guesses
        # must not keep out every bot of the address: a 256-bit token is not guessed); any
        # other is refused as TOO_MANY, without counting
        blocked = self._blocked(peer)
        first = await self._first(context, REFUSE_READ_S if blocked else HELLO_TIMEOUT_S)
        try:
            if isinstance(first, Refused):
                raise first
            if first is grpc.aio.EOF:
                raise Refused(referee_pb2.REFUSAL_CODE_NO_HELLO, "the stream ended before a hello")
            if first.WhichOneof("kind") != "hello":
                raise Refused(referee_pb2.REFUSAL_CODE_NO_HELLO,
                              "the first message of a session must be a hello")
            session = self.lobby.admit(first.hello, context)
        except Refused as refusal:
            if blocked and refusal.code in _COUNTED and not self._registered(first):
                refusal = Refused(referee_pb2.REFUSAL_CODE_TOO_MANY,
                                  f"too many refused hellos from {peer}; "
                                  f"try again in {FAILED_WINDOW_S:g} s")
            await self._refuse(context, refusal, peer, count=not blocked)
            return
        try:
            await session.send(wire.welcome(PROTOCOL_VERSION, f"ono99-arena/{__version__}",
                                            session.name, session.session_id,
                                            session.resume_key))
            await _serve(session, context)
        except asyncio.CancelledError:
            session.close("the stream was cancelled")
            raise
        except DecodeError as exc:   # the session ends, and the bot is told why
            session.close(_not_a_bot_message(exc), by_referee=True)
            await _goodbye(session, context)
            context.set_code(grpc.StatusCode.INVALID_ARGUMENT)
            context.set_details(details(session.close_reason))
        except Exception as exc:  # a broken stream
            session.close(f"the referee closed the stream: {exc.__class__.__name__}: {exc}",
                          by_referee=True)
        finally:
            session.close("the stream ended")
            if session.closed_by_referee:
                self._said_cut_off(session)

    def _said_cut_off(self, session: BotSession) -> None:
        """Log that the referee ended ``session``'s stream, and why (the bot was told; the
        organiser is told here: a remote bot cut off between its matches left no trace on
        the server), at most once a bot every :data:`CUT_OFF_LOG_S` seconds: a bot
        launched by the arena has no hello limit, and cut off, reconnecting and cut off
        again, it wrote 140 lines a second."""
        now = time.monotonic()
        said, since = self._cut_offs.pop(session.name, (-math.inf, 0))
        if now - said < CUT_OFF_LOG_S:
            self._cut_offs[session.name] = (said, since + 1)
            return
        more = f" ({counted(since, 'more cut-off')} since the last said)" if since else ""
        log.warning("bot %s: the referee ended its stream: %s%s", session.name,
                    session.close_reason, more)
        self._cut_offs[session.name] = (now, 0)
        if len(self._cut_offs) > REMEMBERED:     # forget the longest quiet: bounded memory
            self._cut_offs.pop(next(iter(self._cut_offs)))

    async def _first(self, context, wait: float):
        """The stream's first message, gRPC's EOF, or the :class:`Refused` it earns by
        saying nothing within ``wait`` s (or by giving way to newer streams)."""
        me = None
        try:
            async with live_timeout(wait) as timeout:
                # at the cap, the longest waiting stream gives way: silent streams, however
                # many, cannot keep out a bot that says hello at once
                if len(self._waiting) >= MAX_UNAUTHENTICATED:
                    oldest = next(iter(self._waiting))
                    del self._waiting[oldest]
                    oldest.evict()
                me = _Waiting(timeout)
                self._waiting[me] = None
                return await context.read()
        except TimeoutError:
            return (Refused(referee_pb2.REFUSAL_CODE_TOO_MANY, "too many connections waiting "
                            "to say hello: the longest waiting (this one) was closed; try "
                            "again shortly") if me is not None and me.evicted
                    else Refused(referee_pb2.REFUSAL_CODE_NO_HELLO,
                                 f"no hello within {wait:g} s"))
        except DecodeError as exc:
            return Refused(referee_pb2.REFUSAL_CODE_NO_HELLO, _not_a_bot_message(exc))
        finally:
            self._waiting.pop(me, None)

    def _registered(self, first) -> bool:
        """Whether the stream's first message is a hello with a registered token."""
        return isinstance(first, referee_pb2.BotMessage) and first.HasField("hello") \
            and self.lobby.registered(first.hello.token)

    def _blocked(self, peer: str | None) -> bool:
        times = self._failures.get(peer)
        if not times:
            return False
        while times and times[0] < time.monotonic() - FAILED_WINDOW_S:
            times.popleft()
        return len(times) >= MAX_FAILED_HELLOS

    async def _refuse(self, context, refusal: Refused, peer: str | None = None,
                      count: bool = True) -> None:
        self.lobby.refusals.append(refusal.reason)
        if count and peer is not None and refusal.code in _COUNTED:
            self._failures.setdefault(peer, deque(maxlen=MAX_FAILED_HELLOS)).append(time.monotonic())
            if len(self._failures) > REMEMBERED:   # forget the oldest peers: bounded memory
                self._failures.pop(next(iter(self._failures)))
        try:
            await context.write(wire.refusal(refusal.code, refusal.reason))
        except Exception:
            pass
        context.set_code(_REFUSAL_STATUS.get(refusal.code, grpc.StatusCode.PERMISSION_DENIED))
        context.set_details(details(refusal.reason))


async def _serve(session: BotSession, context) -> None:
    """Read the bot's messages until its stream ends, or until the referee closes the
    session (its token withdrawn, a reconnection replacing it): the stream then ends too,
    with a goodbye saying why unless one was said."""
    reader = asyncio.ensure_future(_read(session, context))
    closed = asyncio.ensure_future(session.wait_closed())
    try:
        await asyncio.wait((reader, closed), return_when=asyncio.FIRST_COMPLETED)
    finally:
        closed.cancel()
        if not reader.done():
            reader.cancel()
            await asyncio.wait((reader,))
    if not reader.cancelled():
        reader.result()   # the stream ended: its error, if any, is raised here
    elif not session.farewell:
        await _goodbye(session, context)
    else:
        # dropped (no goodbye to say): the handler must not return with the writer's
        # write under way (the welcome, right after the bot was let in): gRPC then cannot
        # end the call (GRPC_CALL_ERROR_TOO_MANY_OPERATIONS) and the bot's stream stays open
        await session.stop_writer()


async def _goodbye(session: BotSession, context) -> None:
    """Write a goodbye with the session's close reason, after whatever the session's
    writer was writing (it stops)."""
    session.farewell = True
    await session.stop_writer()
    try:   # a stream that is gone must not hold the referee up
        async with asyncio.timeout(1.0):
            await context.write(wire.goodbye(session.close_reason))
    except Exception:
        pass


async def _read(session: BotSession, context) -> None:
    while True:
        msg = await context.read()
        if msg is grpc.aio.EOF:
            # gRPC ends a stream whose message is over MAX_RECEIVE as if the bot had
            # closed it (the bot gets RESOURCE_EXHAUSTED): the referee cannot tell which
            session.close(CLOSED)
            return
        if not session.take(msg):
            await session.on_message(msg)


def _not_a_bot_message(exc: DecodeError) -> str:
    return f"a message is not a BotMessage: protobuf cannot parse it ({exc})"


def _host(peer: str) -> str | None:
    """The host part of a gRPC peer (``ipv4:1.2.3.4:5678`` -> ``ipv4:1.2.3.4``): failures
    count per host, whatever port a client dials from. None for a peer that is no network
    host (a unix socket's: every process on it is the same peer, "unix:"), which is never
    counted or blocked (see _COUNTED)."""
    return peer.rsplit(":", 1)[0] if peer.startswith(("ipv4:", "ipv6:")) else None
