"""The fuzzer's side of the wire: raw gRPC calls from an event loop of its own.

Hypothesis runs rules as plain functions; the calls they make live in an asyncio loop in
a thread (:class:`Loop`), so a stream keeps reading what the server sends while a rule
decides what to send next. Every call is made with identity serializers on the method's
path: a request may be any bytes at all, and what comes back is kept as bytes too, parsed
by the caller (a reply that does not parse is itself a finding).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from ono99.transport import grpc
from ono99.v1 import referee_pb2

PLAY = "/ono99.v1.Referee/Play"


def _same(data: bytes) -> bytes:
    return data


class Loop:
    """An event loop in a daemon thread; :meth:`run` waits for a coroutine from outside."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fuzz-client",
                                       daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine, timeout: float = 30.0) -> Any:
        """The coroutine's result; TimeoutError after ``timeout`` s (the coroutine is then
        cancelled)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def spawn(self, coro: Coroutine) -> asyncio.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.run(shutdown(), 10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


@dataclass
class Outcome:
    """How a call ended: its status, and for a unary call its reply (bytes)."""

    code: grpc.StatusCode
    details: str
    reply: bytes | None = None
    replies: list[bytes] = field(default_factory=list)
    #: a write of ours failed because the server had ended the call: gRPC's client then
    #: reports INTERNAL ('Internal error from Core'), whatever status the server sent
    write_failed: bool = False

    @property
    def ok(self) -> bool:
        return self.code == grpc.StatusCode.OK


class Channels:
    """One channel per address, made in the loop, closed together."""

    #: replies may be big (a long match's snapshot)
    OPTIONS = [("grpc.max_receive_message_length", 64 * 2**20),
               ("grpc.max_send_message_length", 64 * 2**20),
               ("grpc.enable_retries", 0)]

    def __init__(self, loop: Loop) -> None:
        self.loop = loop
        self._channels: dict[str, grpc.aio.Channel] = {}

    def get(self, address: str) -> grpc.aio.Channel:
        """The channel to ``address`` (call from the loop)."""
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = grpc.aio.insecure_channel(address, self.OPTIONS)
        return channel

    def close(self) -> None:
        async def close_all() -> None:
            await asyncio.gather(*(c.close() for c in self._channels.values()),
                                 return_exceptions=True)

        self.loop.run(close_all(), 10)
        self._channels.clear()


async def unary(channel: grpc.aio.Channel, path: str, request: bytes,
                metadata: tuple | None = None, timeout: float = 20.0) -> Outcome:
    """A unary call with raw bytes; never raises for a status."""
    call = channel.unary_unary(path, request_serializer=_same, response_deserializer=_same)
    try:
        reply = await call(request, metadata=metadata, timeout=timeout)
    except grpc.aio.AioRpcError as exc:
        return Outcome(exc.code(), exc.details() or "")
    return Outcome(grpc.StatusCode.OK, "", reply)


async def server_stream(channel: grpc.aio.Channel, path: str, request: bytes,
                        metadata: tuple | None = None, limit: int = 3,
                        wait: float = 0.5, timeout: float = 20.0) -> Outcome:
    """A server-streaming call: its first ``limit`` replies, waiting up to ``wait`` s for
    each; a stream still open then is cancelled by us (status CANCELLED)."""
    call = channel.unary_stream(path, request_serializer=_same, response_deserializer=_same)(
        request, metadata=metadata, timeout=timeout)
    replies: list[bytes] = []
    try:
        while len(replies) < limit:
            try:
                async with asyncio.timeout(wait):
                    reply = await call.read()
            except TimeoutError:
                break
            if reply is grpc.aio.EOF:
                break
            replies.append(reply)
        else:
            pass
        if not call.done():
            call.cancel()
            return Outcome(grpc.StatusCode.CANCELLED, "cancelled by the fuzzer", replies=replies)
        return Outcome(await call.code(), await call.details() or "", replies=replies)
    except grpc.aio.AioRpcError as exc:
        return Outcome(exc.code(), exc.details() or "", replies=replies)


async def client_stream(channel: grpc.aio.Channel, path: str, requests: list[bytes],
                        metadata: tuple | None = None, timeout: float = 60.0) -> Outcome:
    """A client-streaming call with raw messages, written one by one until the server
    ends the call; never raises for a status."""
    call = channel.stream_unary(path, request_serializer=_same, response_deserializer=_same)(
        metadata=metadata, timeout=timeout)
    failed = False
    try:
        for r in requests:
            if call.done():
                break
            try:
                await call.write(r)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                failed = True
                break
        if not failed and not call.done():
            await call.done_writing()
        reply = await call
    except grpc.aio.AioRpcError as exc:
        return Outcome(exc.code(), exc.details() or "", write_failed=failed)
    return Outcome(grpc.StatusCode.OK, "", reply)


class Inbox:
    """What every stream of a machine received, and a condition to wait on."""

    def __init__(self) -> None:
        self.changed = threading.Condition()

    def wait(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Until ``ready()`` (checked whenever something arrives) or ``timeout`` s."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not ready():
                left = deadline - time.monotonic()
                if left <= 0:
                    return ready()
                self.changed.wait(min(left, 0.25))
        return True

    def notify(self) -> None:
        with self.changed:
            self.changed.notify_all()


class RawStream:
    """One ``Referee.Play`` stream spoken raw: it sends bytes, and keeps every message the
    referee sends (parsed: :class:`ono99.v1.referee_pb2.RefereeMessage`), then the status
    the stream ended with."""

    def __init__(self, loop: Loop, channel_of: Callable[[], grpc.aio.Channel], inbox: Inbox,
                 label: str = "") -> None:
        self.loop = loop
        self.inbox = inbox
        self.label = label
        self.received: list[referee_pb2.RefereeMessage] = []
        self.undecodable: list[bytes] = []       # replies that are not a RefereeMessage
        self.code: grpc.StatusCode | None = None  # set when the stream has ended
        self.details = ""
        self.sent = 0
        #: a write failed because the call was over: gRPC's client then reports INTERNAL
        #: ('Internal error from Core') for the call, whatever status the server sent
        self.write_failed = False
        self._call = None
        self._reader: asyncio.Future | None = None

        async def open_() -> None:
            channel = channel_of()
            self._call = channel.stream_stream(PLAY, request_serializer=_same,
                                               response_deserializer=_same)()
            self._reader = asyncio.ensure_future(self._read())

        loop.run(open_(), 10)

    async def _read(self) -> None:
        call = self._call
        try:
            while True:
                data = await call.read()
                if data is grpc.aio.EOF:
                    break
                try:
                    msg = referee_pb2.RefereeMessage.FromString(data)
                except Exception:   # a finding: recorded, the machine fails on it
                    self.undecodable.append(data)
                    continue
                self.received.append(msg)
                self.inbox.notify()
            code, details = await call.code(), await call.details()
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
        except asyncio.CancelledError:
            code, details = grpc.StatusCode.CANCELLED, "cancelled by the fuzzer"
        self.details = details or ""
        self.code = code
        self.inbox.notify()

    @property
    def ended(self) -> bool:
        return self.code is not None

    def send(self, data: bytes | referee_pb2.BotMessage) -> bool:
        """Write one message (bytes as they are); False if the stream is already over."""
        if not isinstance(data, bytes):
            data = data.SerializeToString()
        self.sent += 1

        async def write() -> bool:
            try:
                await self._call.write(data)
                return True
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
                return False
            except Exception:
                return False

        ok = self.loop.run(write(), 30)
        self.write_failed |= not ok
        return ok

    def close_writes(self) -> None:
        async def done() -> None:
            try:
                await self._call.done_writing()
            except Exception:
                pass

        self.loop.run(done(), 10)

    def cancel(self) -> None:
        """Drop the connection's stream, as a bot that dies would."""
        async def cancel() -> None:
            self._call.cancel()
            if self._reader is not None:
                await asyncio.gather(self._reader, return_exceptions=True)

        self.loop.run(cancel(), 10)
