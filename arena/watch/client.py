"""The spectator service from the viewer's side: where it is by default, how a failed call
reads (one line, and whether trying again may help), and two clients over the same
calls. :class:`SpectatorClient` is `arena watch`'s: connecting, with a clear error
within a few seconds when nothing answers, and streams read in a thread of their own, so
that the viewer can redraw a clock, or take Ctrl-C, while it waits for the next message.
:class:`AsyncSpectatorClient` is the web viewer's, in an event loop (grpc.aio): the loop
that may also run the referee (``--web``), where a thread per open page would not do.

A stream that breaks because the server went away (UNAVAILABLE) is opened again, for up
to RECONNECT_S seconds: a server restarted in that time (arena serve) is followed on,
and since every stream starts with a snapshot, the viewer resyncs from it without
losing or repeating anything (:mod:`arena.watch.viewer`). Any other failure ends the
stream with the server's own message, as one :class:`WatchError` line.

What :class:`SpectatorClient` receives is shown on a terminal: its strings (names, details,
the server's messages) are made printable as they arrive (:mod:`arena.text`), whoever runs
the service. The web viewer's page shows them as text, isolated (static/js/text.js).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

from ono99.transport import grpc
from ono99.v1 import spectator_pb2 as pb, spectator_pb2_grpc

from arena.rpc import REFUSALS, dial_problem
from arena.rules.errors import ConfigError
from arena.server.client import channel_credentials
from arena.text import printable, printable_strings
from arena.watch import wire
from arena.watch.server import MAX_MESSAGE

ENV_ADDRESS = "ONO99_SPECTATORS"
DEFAULT_ADDRESS = "127.0.0.1:50052"      # arena serve's default: its port + 1
CONNECT_TIMEOUT_S = 5.0
RECONNECT_S = 10.0
CALL_TIMEOUT_S = 30.0
POLL_S = 0.2          # how often a wait looks whether it was asked to stop
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", MAX_MESSAGE),
                   # a server that went away is looked for again soon, not after minutes
                   ("grpc.initial_reconnect_backoff_ms", 300),
                   ("grpc.max_reconnect_backoff_ms", 1000)]
# Codes after which the same call may work later: the service is not (yet) there, did not
# answer in time, or stopped under the stream.
_RETRY = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
          grpc.StatusCode.CANCELLED}


def spectator_address(given: str | None) -> str:
    """The service to follow: ``given``, else ``$ONO99_SPECTATORS``, else
    :data:`DEFAULT_ADDRESS`. ConfigError if it is neither HOST:PORT nor unix:PATH (a
    service served on a unix socket: ``--watch unix:PATH``)."""
    address = given if given is not None else os.environ.get(ENV_ADDRESS) or DEFAULT_ADDRESS
    if (problem := dial_problem(address)) is not None:
        said = "(the address arena match --watch, arena tournament --watch or arena serve printed)"
        raise ConfigError(f"{address!r} is not HOST:PORT or unix:PATH {said}"
                          if problem.startswith("not ") else f"{address!r}: {problem}")
    return address


class WatchError(Exception):
    """The spectator service cannot be reached, went away, or refused the call; the
    message is the one line to show. ``retry``: whether the same call may work later.
    ``refused``: the service refused the request as it was made (an unknown match, a
    wrong token), where the others are the call failing (the command line exits 2 for a
    refusal, 1 for a failure). ``code``: the call's gRPC status, where it had one (the
    web viewer answers a download by it: 404 for NOT_FOUND only, 503 for a service that
    is busy or away)."""

    def __init__(self, message: str, retry: bool = False, refused: bool = False,
                 code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.retry = retry
        self.refused = refused
        self.code = code


def call_error(address: str, exc: grpc.RpcError) -> WatchError:
    """A failed call to the service at ``address`` as one line: the server's message, or
    what went wrong."""
    code = exc.code()
    retry = code in _RETRY
    details = printable(exc.details() or "")     # a server's words, shown on a terminal
    if code == grpc.StatusCode.UNAVAILABLE:
        return WatchError(f"no spectator service at {address} ({details})", retry, code=code)
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return WatchError(f"no spectator service at {address} (something answers there, but "
                          "not the Spectator service)", code=code)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return WatchError(f"the spectator service at {address} did not answer in time", retry,
                          code=code)
    if code == grpc.StatusCode.CANCELLED:
        return WatchError(f"the spectator service at {address} ended the stream", retry,
                          code=code)
    return WatchError(details or code.name, refused=code in REFUSALS, code=code)


@dataclass(frozen=True)
class Reconnecting:
    """In a feed: the server went away; the feed is trying to reach it again."""

    reason: str


class SpectatorClient:
    """A connection to a Spectator service at ``address`` (HOST:PORT)."""

    def __init__(self, address: str, token: str | None = None, tls: bool = False,
                 tls_ca: str | None = None) -> None:
        self.address = address
        self.metadata = (("authorization", f"Bearer {token}"),) if token else None
        creds = channel_credentials(tls, tls_ca)
        self.channel = (grpc.secure_channel(address, creds, CHANNEL_OPTIONS) if creds is not None
                        else grpc.insecure_channel(address, CHANNEL_OPTIONS))
        self.stub = spectator_pb2_grpc.SpectatorStub(self.channel)
        self.stopping = False
        self._feeds: list[Feed] = []

    def stop(self) -> None:
        """Ask the waits and streams to end soon (safe in a signal handler: it only sets
        flags, which they look at every POLL_S). Ctrl-C raised as KeyboardInterrupt in the
        middle of gRPC's own code left a channel half closed once, and the process then
        hung at exit closing it again (``_ChannelCallState.__del__``)."""
        self.stopping = True
        for feed in self._feeds:
            feed.stop()

    def connect(self, timeout: float = CONNECT_TIMEOUT_S) -> None:
        """Wait for the connection; WatchError if nothing answers within ``timeout`` s.
        Returns at once, connected or not, once :meth:`stop` is asked."""
        ready = grpc.channel_ready_future(self.channel)
        deadline = time.monotonic() + timeout
        while not self.stopping:
            try:
                ready.result(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
                return
            except grpc.FutureTimeoutError:
                if time.monotonic() >= deadline:
                    raise WatchError(
                        f"no spectator service at {self.address} (nothing answered within "
                        f"{timeout:g} s: is arena serve, arena tournament --watch or arena "
                        "match --watch running there? with TLS, give --tls or --tls-ca)"
                    ) from None
        ready.cancel()

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> SpectatorClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- calls

    def matches(self, tournament: str = "", recent: int = 50) -> list[pb.MatchSummary]:
        """The live matches (most interesting first), then the recent finished ones."""
        answer = self._unary(self.stub.ListMatches, wire.list_request(tournament, recent))
        return list(answer.matches)

    def record(self, match_id: str) -> pb.MatchSnapshot:
        """A finished match's whole record."""
        return self._unary(self.stub.GetRecord, wire.record_request(match_id))

    def watch_match(self, match_id: str, delay: int = 0, organizer_view: bool = False) -> Feed:
        request = wire.watch_match_request(match_id, delay, organizer_view)
        return Feed(self, lambda: self.stub.WatchMatch(request, metadata=self.metadata))

    def watch_tv(self, tournament: str = "", delay: int = 0) -> Feed:
        request = wire.watch_tv_request(tournament, delay)
        return Feed(self, lambda: self.stub.WatchTV(request))

    def watch_tournament(self, name: str = "") -> Feed:
        request = wire.watch_tournament_request(name)
        return Feed(self, lambda: self.stub.WatchTournament(request))

    def _unary(self, method, request):
        try:
            answer = method(request, metadata=self.metadata, timeout=CALL_TIMEOUT_S)
        except grpc.RpcError as exc:
            raise self.error(exc) from None
        printable_strings(answer)
        return answer

    def error(self, exc: grpc.RpcError) -> WatchError:
        return call_error(self.address, exc)


_END = object()


class Feed:
    """A stream of the service read in a thread of its own, opened again when the server
    goes away. Iterate :meth:`messages`; :meth:`close` (or leaving) cancels it."""

    def __init__(self, client: SpectatorClient, open_call: Callable[[], grpc.Call]) -> None:
        self.client = client
        self._open_call = open_call
        self._queue: queue.Queue = queue.Queue()
        self._call = None
        self._closed = False
        self._stopping = client.stopping
        client._feeds.append(self)
        self._thread = threading.Thread(target=self._read, name="spectator-feed", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Have :meth:`messages` end soon (a flag: safe in a signal handler)."""
        self._stopping = True

    def messages(self, tick: float | None = None) -> Iterator:
        """The stream's messages, and a :class:`Reconnecting` when the server went away;
        with ``tick``, None whenever ``tick`` seconds pass without one (time to redraw).
        Ends with the stream, or soon after :meth:`stop`; WatchError if it failed."""
        quiet_since = time.monotonic()
        while not self._stopping:
            try:
                item = self._queue.get(timeout=POLL_S if tick is None else min(tick, POLL_S))
            except queue.Empty:
                if tick is not None and time.monotonic() - quiet_since >= tick:
                    quiet_since = time.monotonic()
                    yield None
                continue
            quiet_since = time.monotonic()
            if item is _END:
                return
            if isinstance(item, WatchError):
                raise item
            yield item

    def close(self) -> None:
        self._closed = True
        call = self._call
        if call is not None:
            call.cancel()

    def __enter__(self) -> Feed:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read(self) -> None:
        gone_since: float | None = None
        while not self._closed:
            try:
                self._call = call = self._open_call()
                if self._closed:               # closed while it was being opened
                    call.cancel()
                    return
                for message in call:
                    gone_since = None
                    printable_strings(message)
                    for one in wire.unbatched(message):
                        self._queue.put(one)
                self._queue.put(_END)
                return
            except grpc.RpcError as exc:
                if self._closed:
                    return
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    self._queue.put(self.client.error(exc))
                    return
                now = time.monotonic()
                if gone_since is None:
                    gone_since = now
                    self._queue.put(Reconnecting(exc.details() or "the connection was lost"))
                left = gone_since + RECONNECT_S - now
                try:
                    if left <= 0:
                        raise grpc.FutureTimeoutError
                    grpc.channel_ready_future(self.client.channel).result(timeout=left)
                except grpc.FutureTimeoutError:
                    self._queue.put(WatchError(
                        f"the spectator service at {self.client.address} went away and did not "
                        f"come back within {RECONNECT_S:g} s"))
                    return
                time.sleep(0.1)
        self._queue.put(_END)


class AsyncSpectatorClient:
    """The spectator service at ``address`` from an event loop (grpc.aio), made in the loop
    that uses it. Its streams are async iterators of the service's messages; one that
    fails ends with a :class:`WatchError` whose ``retry`` says whether opening it again may
    help (its caller decides: the web page opens it again, and starts over from the
    snapshot every stream begins with)."""

    def __init__(self, address: str, tls: bool = False, tls_ca: str | None = None) -> None:
        self.address = address
        creds = channel_credentials(tls, tls_ca)
        self.channel = (grpc.aio.secure_channel(address, creds, CHANNEL_OPTIONS)
                        if creds is not None else grpc.aio.insecure_channel(address, CHANNEL_OPTIONS))
        self.stub = spectator_pb2_grpc.SpectatorStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def check(self) -> str | None:
        """Why the service cannot be used now (one line), or None if it answers."""
        try:
            await self.matches(recent=1)
        except WatchError as exc:
            return str(exc)
        return None

    async def matches(self, tournament: str = "", recent: int = 50) -> pb.ListMatchesResponse:
        """The live matches (most interesting first), then the recent finished ones."""
        return await self._unary(self.stub.ListMatches, wire.list_request(tournament, recent))

    async def record(self, match_id: str) -> pb.MatchSnapshot:
        """A finished match's whole record."""
        return await self._unary(self.stub.GetRecord, wire.record_request(match_id))

    def watch_match(self, match_id: str, delay: int = 0) -> AsyncIterator[pb.MatchFeed]:
        return self._stream(self.stub.WatchMatch(wire.watch_match_request(match_id, delay)))

    def watch_tv(self, tournament: str = "", delay: int = 0) -> AsyncIterator[pb.MatchFeed]:
        return self._stream(self.stub.WatchTV(wire.watch_tv_request(tournament, delay)))

    def watch_tournament(self, name: str = "") -> AsyncIterator[pb.TournamentFeed]:
        """A tournament or the ladder. One not (yet) followed there may start later: that
        NOT_FOUND is worth trying again."""
        return self._stream(self.stub.WatchTournament(wire.watch_tournament_request(name)),
                            retry_not_found=True)

    async def _unary(self, method, request):
        try:
            return await method(request, timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            raise call_error(self.address, exc) from None

    async def _stream(self, call, retry_not_found: bool = False) -> AsyncIterator:
        try:
            async for message in call:
                for one in wire.unbatched(message):
                    yield one
        except grpc.aio.AioRpcError as exc:
            error = call_error(self.address, exc)
            error.retry = error.retry or (retry_not_found and exc.code() == grpc.StatusCode.NOT_FOUND)
            raise error from None
        finally:
            call.cancel()
