"""A scripted referee for the SDKs' tests: a real gRPC server whose every Play stream runs
a script the test writes (read the bot's messages, send any message, end the stream any
way), to say what no real referee says (64-bit turn ids, a silent stream, a goodbye and
an error status at once)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from ono99.v1 import game_pb2, referee_pb2, referee_pb2_grpc


class ScriptedReferee(referee_pb2_grpc.RefereeServicer):
    """Serves ono99.v1.Referee; each Play stream runs ``script(stream)`` (read/write).
    ``done`` holds how the first stream to finish ended; ``first_stream_at`` when the
    first stream came (time.monotonic), None before."""

    def __init__(self, script) -> None:
        self.script = script
        self.done: asyncio.Future | None = None
        self.first_stream_at: float | None = None

    async def Play(self, request_iterator, context):
        if self.first_stream_at is None:
            self.first_stream_at = time.monotonic()
        stream = Stream(context)
        try:
            await self.script(stream)
            if not self.done.done():
                self.done.set_result(None)
        except asyncio.CancelledError:
            # gRPC cancels this handler when the bot ends its call: right after a goodbye
            # that is the bot leaving as it should, even if the goodbye's write had not
            # completed here yet
            if not self.done.done():
                if stream.said_goodbye:
                    self.done.set_result(None)
                else:
                    self.done.set_exception(AssertionError("the bot ended its call early"))
            raise
        except BaseException as exc:  # the test reports it, not grpc's logs
            if not self.done.done():
                self.done.set_exception(exc)
            raise


class Stream:
    def __init__(self, context) -> None:
        self.context = context
        self.said_goodbye = False

    async def read(self, timeout: float = 5) -> referee_pb2.BotMessage:
        msg = await asyncio.wait_for(self.context.read(), timeout)
        assert msg is not grpc.aio.EOF, "the bot closed its stream"
        return msg

    async def send(self, **kind) -> None:
        self.said_goodbye = self.said_goodbye or "goodbye" in kind
        await self.context.write(referee_pb2.RefereeMessage(**kind))

    def fail(self, code: grpc.StatusCode, details: str) -> None:
        """End the stream with this error status once the script returns (rather than
        context.abort, whose exception the script would have to raise)."""
        self.context.set_code(code)
        self.context.set_details(details)


async def serve(script, address: str, tls: tuple[bytes, bytes] | None = None):
    """Serve ``script`` on ``address``; with ``tls`` (PEM key and certificate) over TLS.
    Returns the server, the servicer and the port bound."""
    servicer = ScriptedReferee(script)
    servicer.done = asyncio.get_running_loop().create_future()
    server = grpc.aio.server()
    referee_pb2_grpc.add_RefereeServicer_to_server(servicer, server)
    port = (server.add_secure_port(address, grpc.ssl_server_credentials([tls])) if tls
            else server.add_insecure_port(address))
    await server.start()
    return server, servicer, port


def turn(turn_id: int, hand, legal, total=50, owed=1) -> referee_pb2.TurnRequest:
    """A turn of match m1 for seat 0 of two, holding ``hand``."""
    view = game_pb2.SeatView(
        seat=0, hand=hand, total=total, direction=1, to_act=0, owed=owed, draw_size=40,
        seats=[game_pb2.SeatState(hand_size=4, in_game=True, in_round=True) for _ in range(2)],
        round=1, dealer=1)
    return referee_pb2.TurnRequest(match_id="m1", turn_id=turn_id, view=view, legal=legal,
                                   move_ms=1000, bank_ms=5000)


def match_start() -> referee_pb2.MatchStart:
    """The start of match m1 (modern rules), seat 0 of two, with the largest bot seed."""
    return referee_pb2.MatchStart(
        match_id="m1", seat=0, seat_names=["cpp-counter", "other"],
        rules=game_pb2.Rules(ruleset="modern", seats=2, limit=98,
                             options={"max_total": "98", "max_plays": "1000"}),
        time_control=referee_pb2.TimeControl(move_ms=1000, bank_ms=5000), bot_seed=2**64 - 1)


def plays(count: int) -> list[game_pb2.Event]:
    """``count`` public plays (seat 1 plays a 7): events to flood a match with."""
    return [game_pb2.Event(card_played=game_pb2.CardPlayed(seat=1, card=game_pb2.CARD_7,
                                                           total=50))] * count


async def welcome(stream: Stream) -> None:
    """Read the hello, then welcome the bot (session s1)."""
    await stream.read()
    await stream.send(welcome=referee_pb2.Welcome(protocol_version=1, session_id="s1"))


def late_reconnect(hellos: list) -> Callable:
    """A script for a reconnect window of 3 s: the first connection is welcomed and broken
    0.2 s later; the second is welcomed only after 2.2 s (late in its window), stays 1.5 s
    (longer than the SDKs' quick break, 1 s), then is broken; the third is welcomed and
    told goodbye. Each connection's hello goes to ``hellos``; resume keys k1, k2, k3."""
    async def script(stream: Stream):
        hellos.append((await stream.read()).hello)
        session = len(hellos)
        if session == 2:
            await asyncio.sleep(2.2)   # late in the 3 s window
        await stream.send(welcome=referee_pb2.Welcome(
            protocol_version=1, session_id=f"s{session}", resume_key=f"k{session}"))
        if session == 3:
            await stream.send(goodbye=referee_pb2.Goodbye(reason="scripted"))
            return
        await asyncio.sleep(0.2 if session == 1 else 1.5)
        stream.fail(grpc.StatusCode.INTERNAL, f"scripted break {session}")

    return script


async def reject(stream: Stream, turn_id: int, reason: str, times: int = 1) -> None:
    """Refuse the action of turn ``turn_id`` (ILLEGAL_PLAY, ``reason``), ``times`` times."""
    for _ in range(times):
        await stream.send(rejected=referee_pb2.ActionRejected(
            turn_id=turn_id, code=referee_pb2.ERROR_CODE_ILLEGAL_PLAY, reason=reason))


async def goodbye(stream: Stream) -> None:
    """Welcome the bot, and say goodbye at once."""
    await welcome(stream)
    await stream.send(goodbye=referee_pb2.Goodbye(reason="bye"))


async def finish(proc, timeout: float = 10) -> tuple[int, str]:
    """A bot's exit code and stderr (an asyncio process with its stderr piped), once it
    exits; killed after ``timeout`` s."""
    try:
        _, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"the bot did not exit within {timeout} s") from None
    return proc.returncode, err.decode()


def scripted_run(argv: list, script, tmp_path: Path, *args: str, timeout: float = 15,
                 env: dict[str, str] | None = None,
                 cwd: Path | None = None) -> tuple[int, str, float]:
    """The bot ``argv`` (given ``--referee ADDR --token t ARGS``) against ``script`` on a
    scripted referee, on a unix socket in ``tmp_path``: its exit code, its stderr, and the
    seconds from its first connection to its exit (its start, slow on a loaded machine,
    left out). It is killed after ``timeout`` s."""
    address = f"unix:{tmp_path / 'ref.sock'}"

    async def scenario():
        server, servicer, _ = await serve(script, address)
        try:
            started = time.monotonic()
            proc = await asyncio.create_subprocess_exec(
                *map(str, argv), "--referee", address, "--token", "t", *args, env=env, cwd=cwd,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            ended = await finish(proc, timeout)
            return (*ended, time.monotonic() - (servicer.first_stream_at or started))
        finally:
            await server.stop(0)

    return asyncio.run(scenario())


def told_goodbye(start_bot: Callable, serve_at: str) -> tuple[int, str]:
    """A referee on ``serve_at`` that welcomes a bot and says goodbye; ``start_bot()``
    (a coroutine) starts the bot, an asyncio process with its stderr piped. Its exit code
    and stderr once the referee is done with it (it is killed after 10 s more)."""
    async def scenario():
        server, servicer, _ = await serve(goodbye, serve_at)
        try:
            proc = await start_bot()
            await asyncio.wait_for(asyncio.shield(servicer.done), 15)
            return await finish(proc)
        finally:
            await server.stop(0.5)

    return asyncio.run(scenario())
