"""Connect a bot to a referee over gRPC and play until the referee says goodbye."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from google.protobuf.message import Message

from ono99.transport import grpc
from ono99.bot import __version__
from ono99.bot.base import Bot
from ono99.bot.driver import Driver, ProtocolError, RefusedError, said
from ono99.v1 import referee_pb2_grpc

log = logging.getLogger("ono99.bot")

SDK = f"ono99-python/{__version__}"
ENV_REFEREE = "ONO99_REFEREE"
ENV_TOKEN = "ONO99_TOKEN"
ENV_NAME = "ONO99_BOT_NAME"
ENV_TLS = "ONO99_TLS"
ENV_TLS_CA = "ONO99_TLS_CA"
ENV_RECONNECT = "ONO99_RECONNECT_TIMEOUT"

# exit codes of run()
EXIT_OK = 0
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_UNREACHABLE = 4
EXIT_BROKEN = 5

# a refusal any bot waits out, even at its first connection: the referee has too many
# connections waiting to say hello, or has refused too many from this host for now
_TOO_MANY = "REFUSAL_CODE_TOO_MANY"
# refusals a reconnecting bot waits out: those, the referee has not yet noticed its old
# stream is gone, or it is stopping (and may be back)
_TRANSIENT = frozenset({_TOO_MANY, "REFUSAL_CODE_TOKEN_IN_USE", "REFUSAL_CODE_SHUTTING_DOWN"})
# pauses between tries: the first soon, then doubling up to a cap, each drawn within 20%
# (as gRPC's own connection backoff) so that bots turned away together do not come back
# together; from a generator of the SDK's own, not the global one a bot may seed
_FIRST_PAUSE, _MAX_PAUSE, _JITTER = 0.2, 2.0, 0.2
_jitter = random.Random()
# the shortest wait for a welcome: a try at the end of a reconnect window has little time
# left, and the referee's answer (a refusal the bot reports as the last failure) must not
# be cut off by a wait of a few milliseconds
_MIN_WELCOME_WAIT = 1.0
# a session that breaks sooner than this (s) after its welcome counts against the running
# reconnect window: a referee that welcomes the bot and fails at once is not tried forever.
# A session that lasted longer gets a fresh window, as a first break does: a bot that came
# back late in its window and broke again seconds later had no time left, and gave up
# without a single try though its seat was still kept.
QUICK_BREAK = 1.0

# A connection whose packets stop arriving (a NAT that forgot it, a route that died) gives
# no error: without pings the bot waited for its next message forever. gRPC pings the
# referee every 10 s and drops the connection if no answer comes within 10 s; the bot
# then reconnects. The referee accepts a ping every 5 s (arena/referee/server.py
# MIN_PING_INTERVAL_MS), so a bot waiting minutes between matches is not cut for pinging;
# max_pings_without_data 0: gRPC would stop pinging after two pings with nothing written.
CHANNEL_OPTIONS = (
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.ping_timeout_ms", 10_000),   # grpcio waits 60 s for a ping's ack otherwise
    ("grpc.http2.max_pings_without_data", 0),
)


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    try:
        return float(value) if value else default
    except ValueError:
        raise SystemExit(f"error: ${name} must be a number of seconds, not {value!r}") from None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """A bot's command line (``--referee``, ``--token``...), defaults from the environment."""
    p = argparse.ArgumentParser(
        description="An ONO 99 bot: connects to a referee and plays until told to stop.")
    p.add_argument("--referee", default=os.environ.get(ENV_REFEREE),
                   help=f"referee address, e.g. localhost:50051 or unix:/path "
                        f"(default: ${ENV_REFEREE})")
    p.add_argument("--token", default=os.environ.get(ENV_TOKEN),
                   help=f"the secret token this bot was given (default: ${ENV_TOKEN})")
    p.add_argument("--name", default=os.environ.get(ENV_NAME),
                   help=f"name to announce (default: ${ENV_NAME} or the bot's own)")
    p.add_argument("--tls", action="store_true", default=os.environ.get(ENV_TLS, "") not in ("", "0"),
                   help=f"speak TLS to the referee, trusting the system's certificates "
                        f"(default: ${ENV_TLS}=1)")
    p.add_argument("--tls-ca", default=os.environ.get(ENV_TLS_CA) or None, metavar="FILE",
                   help=f"speak TLS, trusting the certificate(s) in FILE (PEM), e.g. a "
                        f"server's self-signed one (default: ${ENV_TLS_CA})")
    p.add_argument("--connect-timeout", type=float, default=30.0,
                   help="seconds to keep retrying the connection, then to wait for the "
                        "referee's welcome (default: 30)")
    p.add_argument("--reconnect-timeout", type=float, default=_env_float(ENV_RECONNECT, 10.0),
                   metavar="SECONDS",
                   help=f"when the connection drops, or the referee refuses the bot as one "
                        f"of too many, seconds to keep trying to get it back and go on with "
                        f"the match; 0: give up at once (default: ${ENV_RECONNECT} or 10)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every message")
    return p.parse_args(argv)


def address_problem(address: str, tls: bool = False) -> str | None:
    """Why ``address`` cannot name a referee, or None if it may: HOST:PORT, unix:PATH,
    unix-abstract:NAME, a form gRPC resolves itself (dns:, ipv4:, ipv6:), or with ``tls``
    a HOST alone (port 443 to gRPC: a referee behind an HTTPS proxy). gRPC takes any
    string and fails only at the connect timeout: a plaintext ``localhost`` or
    ``http://host:port`` was 30 s of silence, then "no referee reachable". Other schemes
    of gRPC's (vsock:, xds:) and named ports (``:https``) are refused: not a referee's."""
    scheme, colon, rest = address.partition(":")
    scheme = scheme.lower()                  # as gRPC reads a scheme
    if colon and scheme in ("unix", "unix-abstract"):
        if not rest.lstrip("/") or (rest.startswith("//") and not rest.startswith("///")):
            return "a unix socket is unix:/PATH (or unix-abstract:NAME)"
        return None
    if colon and scheme in ("dns", "ipv4", "ipv6"):
        return None
    if "://" in address:
        return "not a URL: HOST:PORT, e.g. localhost:50051"
    host, colon, port = address.rpartition(":")
    if _ipv6(host) or _ipv6(address):
        return "write an IPv6 address in brackets, with a port: [::1]:50051"
    if not colon or (address.startswith("[") and address.endswith("]")):    # a host alone
        if tls and address and not re.search(r"[\s/]", address):
            return None
        return ("no port: gRPC would dial 443, TLS's port; write HOST:PORT (e.g. "
                "localhost:50051), or give --tls for a referee that speaks TLS on 443")
    bracketed = host.startswith("[") and host.endswith("]")
    # its zeros dropped before int(): Python refuses an int of more than 4,300 digits
    if (not host or (":" in host and not bracketed) or not re.fullmatch(r"[0-9]+", port)
            or len(port.lstrip("0")) > 5 or not 0 < int(port) < 65536):
        return "not HOST:PORT (e.g. localhost:50051), unix:/PATH or unix-abstract:NAME"
    return None


def is_unix_address(address: str) -> bool:
    """A unix socket (unix:, unix-abstract:, in any case, as gRPC reads a scheme) is always
    plaintext: it never leaves the machine (`arena match` gives its bots one, whatever TLS
    settings they inherit)."""
    scheme, colon, _ = address.partition(":")
    return bool(colon) and scheme.lower() in ("unix", "unix-abstract")


def _ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 6
    except ValueError:
        return False


def credentials(tls: bool, tls_ca: str | None) -> grpc.ChannelCredentials | None:
    """TLS credentials trusting ``tls_ca`` (a PEM file), else the system's roots when
    ``tls``; None for plaintext. OSError if the file cannot be read."""
    if tls_ca:
        return grpc.ssl_channel_credentials(root_certificates=Path(tls_ca).read_bytes())
    return grpc.ssl_channel_credentials() if tls else None


def run(bot: Bot, argv: Sequence[str] | None = None) -> int:
    """Play ``bot`` against the referee named on the command line or in the environment.

    Returns an exit code: 0 after the referee's goodbye, 3 refused (as one of too many:
    for the whole reconnect timeout), 4 unreachable, 5 the connection broke (and could not
    be restored).
    """
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING,
                        format=f"%(asctime)s {bot.name} %(levelname)s %(message)s")
    if args.verbose:    # our messages, not asyncio's and grpc's chatter
        log.setLevel(logging.DEBUG)
    # blanks around it are not the address's (a secret mounted from a file ends with a
    # newline), as gRPC's C core reads it
    referee = (args.referee or "").strip()
    if not referee or args.token is None:
        print(f"error: give the referee address and token (--referee/--token or "
              f"${ENV_REFEREE}/${ENV_TOKEN})", file=sys.stderr)
        return EXIT_USAGE
    if (problem := address_problem(referee, args.tls or bool(args.tls_ca))) is not None:
        print(f"error: the referee address {referee!r} (--referee or ${ENV_REFEREE}): "
              f"{problem}", file=sys.stderr)
        return EXIT_USAGE
    creds = None
    if not is_unix_address(referee):   # as the Node.js and C++ SDKs: nothing to read for one
        try:
            creds = credentials(args.tls, args.tls_ca)
        except OSError as exc:
            print(f"error: cannot read the TLS certificate {args.tls_ca}: {exc.strerror}",
                  file=sys.stderr)
            return EXIT_USAGE
    return play(bot, referee, args.token, args.name, args.connect_timeout,
                creds, args.reconnect_timeout)


def play(bot: Bot, referee: str, token: str, name: str | None = None,
         connect_timeout: float = 30.0, tls: grpc.ChannelCredentials | None = None,
         reconnect_timeout: float = 10.0) -> int:
    """Connect to ``referee`` and play until goodbye; returns an exit code as :func:`run`.
    ``tls``: channel credentials (see :func:`credentials`), None for plaintext. When the
    connection drops (after the referee welcomed the bot, or before its welcome came), or
    the referee refuses the bot as one of too many for now, it is tried again for up to
    ``reconnect_timeout`` seconds, and the bot goes on where it was.

    The stream runs on grpc.aio in this thread's event loop; the bot's ``choose`` is
    called synchronously in it (a bot has nothing else to do meanwhile). One thread, no
    hand-offs: measured about 20% faster per turn than the sync gRPC stream."""
    link = _Link(referee, token, name, tls)
    return asyncio.run(_play(Driver(bot), link, connect_timeout, reconnect_timeout))


class _Unreachable(Exception):
    pass


class _Broken(Exception):
    pass


@dataclass(frozen=True)
class _Link:
    referee: str
    token: str
    name: str | None
    tls: grpc.ChannelCredentials | None

    def channel(self) -> grpc.aio.Channel:
        if self.tls is not None and not is_unix_address(self.referee):
            return grpc.aio.secure_channel(self.referee, self.tls, CHANNEL_OPTIONS)
        return grpc.aio.insecure_channel(self.referee, CHANNEL_OPTIONS)


async def _session(driver: Driver, link: _Link, connect_timeout: float,
                   resume_key: str = "", welcomed: Callable[[], None] | None = None) -> None:
    """One connection, played until the referee's goodbye. Raises :class:`_Unreachable`,
    :class:`RefusedError`, or :class:`_Broken` (with what happened). ``welcomed`` is
    called once the referee has admitted the bot. The welcome is awaited for up to
    ``connect_timeout`` s (at least 1 s) after the hello: a server that takes the stream and says
    nothing breaks it, as a dropped connection does (a referee answers at once)."""
    async with link.channel() as channel:
        try:
            async with asyncio.timeout(connect_timeout):
                await channel.channel_ready()
        except TimeoutError:
            raise _Unreachable from None
        call = referee_pb2_grpc.RefereeStub(channel).Play()
        # read through the iterator, not call.read(): once the call has ended, read()
        # raises its status at once, dropping what the referee wrote before it (a
        # match_end, its goodbye) when it ends the stream with an error right after them
        messages = aiter(call)
        verbose = log.isEnabledFor(logging.DEBUG)
        writing = True
        welcome_wait = max(connect_timeout, _MIN_WELCOME_WAIT)
        try:
            hello = driver.hello(link.token, link.name, SDK, resume_key)
            if verbose:
                log.debug("-> %s", shown(hello))
            await call.write(hello)
            while not driver.finished:
                try:
                    async with asyncio.timeout(None if driver.welcome else welcome_wait):
                        msg = await anext(messages)
                except StopAsyncIteration:
                    raise _Broken("the referee closed the stream without a goodbye") from None
                except TimeoutError:
                    raise _Broken(f"no welcome from the referee within {welcome_wait:g} s "
                                  f"of the hello") from None
                if verbose:
                    log.debug("<- %s", shown(msg))
                try:
                    for answer in driver.handle(msg):
                        if verbose:
                            log.debug("-> %s", shown(answer))
                        if writing:
                            writing = await _sent(call, answer)
                except ProtocolError as exc:
                    raise _Broken(str(exc)) from None
                if welcomed is not None and driver.welcome is not None:
                    welcomed()
                    welcomed = None
        except grpc.aio.AioRpcError as exc:
            if not driver.finished:
                raise _Broken(f"connection to the referee broke: {exc.code().name}: "
                              f"{said(exc.details() or '')}") from None
        finally:
            call.cancel()


async def _sent(call, msg: Message) -> bool:
    """Write ``msg``; False if the call is over. The referee may have ended it after
    writing its last messages (a match_end, the goodbye): they are read all the same,
    and the reading says how the stream ended."""
    try:
        await call.write(msg)
        return True
    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
        return False


def shown(msg: Message) -> str:
    """A message on one line for ``--verbose``, with the token and resume key hidden: a
    bot's log may be shown to others."""
    kind = msg.WhichOneof("kind")
    if kind in ("hello", "welcome"):      # both carry a resume key; a hello, the token
        msg = type(msg).FromString(msg.SerializeToString())
        inner = getattr(msg, kind)
        if kind == "hello" and inner.token:
            inner.token = "<hidden>"
        if inner.resume_key:
            inner.resume_key = "<hidden>"
    return text_format.MessageToString(msg, as_one_line=True)


async def _play(driver: Driver, link: _Link, connect_timeout: float,
                reconnect_timeout: float) -> int:
    try:
        await _session(driver, link, connect_timeout)
        return _done(driver)
    except _Unreachable:
        # a plaintext bot and a TLS referee (or the reverse) never connect: say what to check
        hint = ("" if is_unix_address(link.referee)
                else " (does it speak TLS, with that certificate?)" if link.tls is not None
                else " (a referee that speaks TLS needs --tls-ca FILE or --tls)")
        print(f"error: no referee reachable at {link.referee} within {connect_timeout:g} s{hint}",
              file=sys.stderr)
        return EXIT_UNREACHABLE
    except RefusedError as exc:
        # any refusal the referee sent is final, but one of too many: that passes
        if exc.code != _TOO_MANY or reconnect_timeout <= 0:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_REFUSED
        failure: _Broken | RefusedError = exc
    except _Broken as exc:   # before the welcome or after: no refusal was said
        failure = exc
    while True:
        if reconnect_timeout <= 0:
            print(f"error: {failure}", file=sys.stderr)
            return EXIT_BROKEN
        outcome = await _reconnect(driver, link, reconnect_timeout, failure)
        if isinstance(outcome, int):
            return outcome
        failure = outcome


def _done(driver: Driver) -> int:
    reason = said(driver.goodbye) if driver.goodbye else "no reason given"
    print(f"the referee said goodbye: {reason}", file=sys.stderr)
    return EXIT_OK


async def _reconnect(driver: Driver, link: _Link, timeout: float,
                     failure: _Broken | RefusedError) -> int | _Broken:
    """After ``failure`` (the connection broke, or the referee refused the bot as one of
    too many): connect again, with back-off, for up to ``timeout`` seconds, and play on;
    with the resume key of the session it was welcomed to, if any. An exit code, or how
    the new connection broke in its turn, after it had played for at least
    ``QUICK_BREAK`` s (the caller tries again, in a fresh window). A session that breaks
    sooner after its welcome counts against this window: a referee that welcomes the bot
    and then fails at once is not tried forever."""
    welcome = driver.welcome
    resume_key = welcome.resume_key if welcome is not None else ""
    again = "reconnecting" if welcome is not None else "trying again"
    # the lines the Node.js and C++ SDKs print, word for word
    print(f"warning: {failure}; {again} for up to {timeout:g} s", file=sys.stderr)
    started = time.monotonic()
    delay = _FIRST_PAUSE
    last = str(failure)
    welcomed_at = 0.0

    def welcomed() -> None:
        nonlocal welcomed_at
        welcomed_at = time.monotonic()
        print(f"{'re' if welcome is not None else ''}connected to the referee after "
              f"{welcomed_at - started:.1f} s", file=sys.stderr)

    while (left := timeout - (time.monotonic() - started)) > 0:
        driver.welcome = None
        driver.finished = False
        try:
            await _session(driver, link, left, resume_key, welcomed)
            return _done(driver)
        except RefusedError as exc:
            if exc.code not in _TRANSIENT:
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_REFUSED
            last = str(exc)
        except _Unreachable:
            last = f"no referee reachable at {link.referee}"
        except _Broken as exc:
            if driver.welcome is not None:
                if time.monotonic() - welcomed_at >= QUICK_BREAK:
                    return exc
                resume_key = driver.welcome.resume_key   # the newest session's place
            last = str(exc)
        pause = delay * _jitter.uniform(1 - _JITTER, 1 + _JITTER)
        await asyncio.sleep(min(pause, max(0.0, timeout - (time.monotonic() - started))))
        delay = min(delay * 2, _MAX_PAUSE)
    print(f"error: could not {'re' if welcome is not None else ''}connect to the referee "
          f"within {timeout:g} s (last: {last})", file=sys.stderr)
    return EXIT_REFUSED if isinstance(failure, RefusedError) else EXIT_BROKEN
