"""Who may connect: tokens bound to bots, and the sessions they hold.

A token is bound to one bot (a name). A Hello with an unknown token, another protocol
version, or a token whose session is still live is refused with a precise reason.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import deque
from dataclasses import dataclass, field

from ono99.v1 import referee_pb2

from arena.referee.session import BotSession

PROTOCOL_VERSION = 1


@dataclass
class Refused(Exception):
    """A refused Hello: the code to send and the reason."""

    code: int
    reason: str


@dataclass
class Registration:
    """A bot allowed to connect with one token, and its current session."""

    token: str
    name: str
    session: BotSession | None = None
    _waiters: list[asyncio.Future] = field(default_factory=list)


class Lobby:
    """Tokens, and the sessions connected with them."""

    def __init__(self) -> None:
        self._by_token: dict[str, Registration] = {}
        self.closing = False
        self.refusals: deque[str] = deque(maxlen=64)   # the latest refused hellos' reasons

    def register(self, name: str, token: str | None = None) -> Registration:
        """Allow a bot called ``name`` to connect; returns its registration (with a fresh
        secret token unless one is given)."""
        token = token or secrets.token_urlsafe(24)
        if token in self._by_token:
            raise ValueError("token already registered")
        reg = Registration(token, name)
        self._by_token[token] = reg
        return reg

    def unregister(self, token: str) -> None:
        self._by_token.pop(token, None)

    def admit(self, hello: referee_pb2.Hello, context) -> BotSession:
        """A session for a Hello, or :class:`Refused`."""
        if self.closing:
            raise Refused(referee_pb2.REFUSAL_CODE_SHUTTING_DOWN, "the referee is shutting down")
        if hello.protocol_version != PROTOCOL_VERSION:
            raise Refused(referee_pb2.REFUSAL_CODE_UNSUPPORTED_PROTOCOL,
                          f"protocol version {hello.protocol_version} is not supported; "
                          f"this referee speaks version {PROTOCOL_VERSION}")
        reg = None
        for token, candidate in self._by_token.items():
            if secrets.compare_digest(token.encode(), hello.token.encode()):
                reg = candidate
        if reg is None:
            raise Refused(referee_pb2.REFUSAL_CODE_BAD_TOKEN,
                          "unknown token" if hello.token else "no token in the hello")
        if reg.session is not None and not reg.session.closed:
            raise Refused(referee_pb2.REFUSAL_CODE_TOKEN_IN_USE,
                          f"token of bot {reg.name!r} is already in use by session "
                          f"{reg.session.session_id}")
        session = BotSession(reg.token, reg.name, context, hello.sdk)
        reg.session = session
        for waiter in reg._waiters:
            if not waiter.done():
                waiter.set_result(session)
        reg._waiters.clear()
        return session

    async def wait_session(self, token: str, timeout: float) -> BotSession:
        """The live session of ``token``, waiting up to ``timeout`` s for it to connect."""
        reg = self._by_token[token]
        if reg.session is not None and not reg.session.closed:
            return reg.session
        waiter = asyncio.get_running_loop().create_future()
        reg._waiters.append(waiter)
        return await asyncio.wait_for(waiter, timeout)

    def sessions(self) -> list[BotSession]:
        return [r.session for r in self._by_token.values()
                if r.session is not None and not r.session.closed]
