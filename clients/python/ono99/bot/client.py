"""Connect a bot to a referee over gRPC and play until the referee says goodbye."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence


from ono99.transport import grpc
from ono99.bot import __version__
from ono99.bot.base import Bot
from ono99.bot.driver import Driver, RefusedError
from ono99.v1 import referee_pb2_grpc

log = logging.getLogger("ono99.bot")

SDK = f"ono99-python/{__version__}"
ENV_REFEREE = "ONO99_REFEREE"
ENV_TOKEN = "ONO99_TOKEN"
ENV_NAME = "ONO99_BOT_NAME"

# exit codes of run()
EXIT_OK = 0
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_UNREACHABLE = 4
EXIT_BROKEN = 5


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="An ONO 99 bot: connects to a referee and plays until told to stop.")
    p.add_argument("--referee", default=os.environ.get(ENV_REFEREE),
                   help=f"referee address, e.g. localhost:50051 or unix:/path "
                        f"(default: ${ENV_REFEREE})")
    p.add_argument("--token", default=os.environ.get(ENV_TOKEN),
                   help=f"the secret token this bot was given (default: ${ENV_TOKEN})")
    p.add_argument("--name", default=os.environ.get(ENV_NAME),
                   help=f"name to announce (default: ${ENV_NAME} or the bot's own)")
    p.add_argument("--connect-timeout", type=float, default=30.0,
                   help="seconds to keep retrying the connection (default: 30)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every message")
    return p.parse_args(argv)


def run(bot: Bot, argv: Sequence[str] | None = None) -> int:
    """Play ``bot`` against the referee named on the command line or in the environment.

    Returns an exit code: 0 after the referee's goodbye, 3 refused, 4 unreachable,
    5 the connection broke.
    """
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format=f"%(asctime)s {bot.name} %(levelname)s %(message)s")
    if not args.referee or args.token is None:
        print(f"error: give the referee address and token (--referee/--token or "
              f"${ENV_REFEREE}/${ENV_TOKEN})", file=sys.stderr)
        return EXIT_USAGE
    return play(bot, args.referee, args.token, args.name, args.connect_timeout)


def play(bot: Bot, referee: str, token: str, name: str | None = None,
         connect_timeout: float = 30.0) -> int:
    """Connect to ``referee`` and play until goodbye; returns an exit code as :func:`run`.

    The stream runs on grpc.aio in this thread's event loop; the bot's ``choose`` is
    called synchronously in it (a bot has nothing else to do meanwhile). One thread, no
    hand-offs: measured about 20% faster per turn than the sync gRPC stream."""
    return asyncio.run(_play(Driver(bot), referee, token, name, connect_timeout))


async def _play(driver: Driver, referee: str, token: str, name: str | None,
                connect_timeout: float) -> int:
    async with grpc.aio.insecure_channel(referee) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), connect_timeout)
        except TimeoutError:
            print(f"error: no referee reachable at {referee} within {connect_timeout:g} s",
                  file=sys.stderr)
            return EXIT_UNREACHABLE
        call = referee_pb2_grpc.RefereeStub(channel).Play()
        try:
            await call.write(driver.hello(token, name, SDK))
            while not driver.finished:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    break
                for answer in driver.handle(msg):
                    await call.write(answer)
        except RefusedError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_REFUSED
        except grpc.aio.AioRpcError as exc:
            if driver.finished:
                return EXIT_OK
            print(f"error: connection to the referee broke: {exc.code().name}: {exc.details()}",
                  file=sys.stderr)
            return EXIT_BROKEN
        finally:
            call.cancel()
    if not driver.finished:
        print("error: the referee closed the stream without a goodbye", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK
