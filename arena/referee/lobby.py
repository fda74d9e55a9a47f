"""Who may connect: tokens bound to bots, and the sessions they hold.

A token is bound to one bot (a name); the lobby keeps its hash, never the token of a bot it
did not launch itself. A Hello with an unknown token, another protocol version, or a
token whose session is still live is refused with a precise reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
import time
from collections import deque
from dataclasses import dataclass, field

from ono99.v1 import referee_pb2

from arena.referee.liveclock import live_timeout
from arena.referee.session import MAX_BOT_MESSAGE, BotSession

PROTOCOL_VERSION = 1
MAX_HELLOS = 60          # hellos a remote bot's token is let in with within HELLO_WINDOW_S
HELLO_WINDOW_S = 60.0    # ... (each costs a session, and may replace a live one: a bot
                         # stuck in a reconnection loop is slowed, honest reconnections never
                         # are). Not a launched bot's: the arena starts its processes, and a
                         # bot that exits after each match is started again for the next


@dataclass
class Refused(Exception):
    """A refused Hello: the code to send and the reason."""

    code: int
    reason: str


#: The longest each text field of a Hello may be, in characters.
HELLO_LIMITS = {"name": 64, "token": 256, "sdk": 100, "resume_key": 256}


def check_hello(hello: referee_pb2.Hello) -> None:
    """Refuse (REFUSAL_CODE_BAD_HELLO) a hello too large, or with a field too long or
    holding control characters (which a name or an SDK shown in an organiser's terminal
    could use to rewrite it)."""
    size = hello.ByteSize()
    if size > MAX_BOT_MESSAGE:
        raise Refused(referee_pb2.REFUSAL_CODE_BAD_HELLO,
                      f"the hello is {size} bytes; at most {MAX_BOT_MESSAGE} are accepted")
    for name, limit in HELLO_LIMITS.items():
        value = getattr(hello, name)
        if len(value) > limit:
            raise Refused(referee_pb2.REFUSAL_CODE_BAD_HELLO,
                          f"hello.{name} is {len(value)} characters; at most {limit} are "
                          "accepted")
        if not value.isprintable():
            raise Refused(referee_pb2.REFUSAL_CODE_BAD_HELLO,
                          f"hello.{name} holds control characters")


def token_hash(token: str) -> str:
    """What the lobby and the database keep of a token: its SHA-256 (tokens are 32 random
    bytes, so a fast hash is enough; a leaked database leaks no token)."""
    return hashlib.sha256(token.encode()).hexdigest()


#: Every token starts with it: never with "-" (which a command line such as ``--token
#: -x...`` reads as an option: 1 token in 64 of bare URL-safe text), and a leaked token is
#: recognisable to secret scanners.
TOKEN_PREFIX = "ono99_"


def new_token() -> str:
    """A fresh secret token: 32 bytes from the operating system, URL-safe text."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


@dataclass
class Registration:
    """A bot allowed to connect with one token (kept as its hash), and its current session."""

    token_hash: str
    name: str
    token: str | None = None      # the token itself, only for bots this process launches
    session: BotSession | None = None
    hellos: deque[float] = field(default_factory=deque)   # when it was let in, lately
    _waiters: list[asyncio.Future] = field(default_factory=list)


class Lobby:
    """Tokens (by hash), and the sessions connected with them."""

    def __init__(self) -> None:
        self._by_hash: dict[str, Registration] = {}
        self.closing = False
        self.refusals: deque[str] = deque(maxlen=64)   # the latest refused hellos' reasons

    def register(self, name: str, token: str | None = None) -> Registration:
        """Allow a bot called ``name`` to connect; returns its registration (with a fresh
        secret token unless one is given)."""
        token = token or new_token()
        reg = self.register_hash(name, token_hash(token))
        reg.token = token
        return reg

    def register_hash(self, name: str, hashed: str) -> Registration:
        """Allow a bot whose token has the hash ``hashed`` (a server's registered bot: the
        server keeps no token) to connect."""
        if hashed in self._by_hash:
            raise ValueError(f"cannot register bot {name!r}: its token is already bot "
                             f"{self._by_hash[hashed].name!r}'s (a token names one bot)")
        reg = Registration(hashed, name)
        self._by_hash[hashed] = reg
        return reg

    def unregister(self, token: str) -> None:
        self.unregister_hash(token_hash(token))

    def unregister_hash(self, hashed: str) -> None:
        reg = self._by_hash.pop(hashed, None)
        if reg is not None and reg.session is not None:
            reg.session.close("its token was withdrawn")

    def admit(self, hello: referee_pb2.Hello, context) -> BotSession:
        """A session for a Hello, or :class:`Refused`."""
        if self.closing:
            raise Refused(referee_pb2.REFUSAL_CODE_SHUTTING_DOWN, "the referee is shutting down")
        check_hello(hello)
        if hello.protocol_version != PROTOCOL_VERSION:
            raise Refused(referee_pb2.REFUSAL_CODE_UNSUPPORTED_PROTOCOL,
                          f"protocol version {hello.protocol_version} is not supported; "
                          f"this referee speaks version {PROTOCOL_VERSION}")
        hashed = token_hash(hello.token)
        reg = self._by_hash.get(hashed)
        if reg is None or not secrets.compare_digest(reg.token_hash, hashed):
            raise Refused(referee_pb2.REFUSAL_CODE_BAD_TOKEN,
                          "unknown token" if hello.token else "no token in the hello")
        remote = reg.token is None   # registered by hash: a server's remote bot
        now = time.monotonic()
        if remote:
            while reg.hellos and reg.hellos[0] <= now - HELLO_WINDOW_S:
                reg.hellos.popleft()
            if len(reg.hellos) >= MAX_HELLOS:
                raise Refused(referee_pb2.REFUSAL_CODE_TOO_MANY,
                              f"too many hellos with the token of bot {reg.name!r}: "
                              f"{len(reg.hellos)} within {HELLO_WINDOW_S:g} s; try again in "
                              f"{math.ceil(reg.hellos[0] + HELLO_WINDOW_S - now)} s")
        old = reg.session
        if old is not None and not old.closed and hello.resume_key and \
                secrets.compare_digest(hello.resume_key.encode(), old.resume_key.encode()):
            old.close("replaced by a reconnection of the same bot")
        if reg.session is not None and not reg.session.closed:
            raise Refused(referee_pb2.REFUSAL_CODE_TOKEN_IN_USE,
                          f"token of bot {reg.name!r} is already in use by session "
                          f"{reg.session.session_id}")
        session = BotSession(reg.token_hash, reg.name, context, hello.sdk)
        reg.session = session
        if remote:
            reg.hellos.append(now)
        for waiter in reg._waiters:
            if not waiter.done():
                waiter.set_result(session)
        reg._waiters.clear()
        return session

    async def wait_session(self, token: str, timeout: float) -> BotSession:
        """The live session of ``token``, waiting up to ``timeout`` s for it to connect."""
        return await self.wait_session_hash(token_hash(token), timeout)

    async def wait_session_hash(self, hashed: str, timeout: float) -> BotSession:
        """The live session of the token with hash ``hashed``, waiting up to ``timeout`` s;
        TimeoutError if none comes, at once if the token is not registered (withdrawn:
        none ever will)."""
        reg = self._by_hash.get(hashed)
        if reg is None:
            raise TimeoutError("its token is not registered")
        if reg.session is not None and not reg.session.closed:
            return reg.session
        waiter = asyncio.get_running_loop().create_future()
        reg._waiters.append(waiter)
        try:
            async with live_timeout(timeout):       # a pause of this process not counted
                return await waiter
        finally:
            if waiter in reg._waiters:
                reg._waiters.remove(waiter)

    def drop(self, hashed: str, reason: str) -> None:
        """End the stream of the token's session, if any, without a goodbye: the bot may
        reconnect (to this referee started again)."""
        reg = self._by_hash.get(hashed)
        if reg is not None and reg.session is not None:
            reg.session.drop(reason)

    def registered(self, token: str) -> bool:
        """Whether ``token`` is registered (connected or not)."""
        return token_hash(token) in self._by_hash

    def connected(self, hashed: str) -> bool:
        reg = self._by_hash.get(hashed)
        return reg is not None and reg.session is not None and not reg.session.closed

    def sessions(self) -> list[BotSession]:
        return [r.session for r in self._by_hash.values()
                if r.session is not None and not r.session.closed]
