"""The Organizer service: thin. It checks the organiser token, hands each call to the
registry, the tournaments or the standings, and maps their errors to status codes here."""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError
from ono99.transport import grpc
from ono99.v1 import organizer_pb2_grpc

from arena.referee.lobby import token_hash
from arena.rpc import abort
from arena.rules.errors import ConfigError
from arena.server import wire
from arena.server.registry import MAX_UPLOAD, NotHostedError, UnknownBotError
from arena.server.runs import NotRunningError
from arena.store.base import NotFoundError, StoreError

if TYPE_CHECKING:
    from arena.server.app import ArenaServer


#: Domain errors and their codes; any other is a request that cannot be met as it is.
_CODES = ((UnknownBotError, grpc.StatusCode.NOT_FOUND), (NotFoundError, grpc.StatusCode.NOT_FOUND),
          (NotHostedError, grpc.StatusCode.FAILED_PRECONDITION),
          (NotRunningError, grpc.StatusCode.FAILED_PRECONDITION))


class OrganizerServicer(organizer_pb2_grpc.OrganizerServicer):
    """``ono99.v1.Organizer`` for one server."""

    def __init__(self, app: ArenaServer) -> None:
        self.app = app

    async def _authorize(self, context) -> None:
        given = dict(context.invocation_metadata()).get("authorization", "")
        token = given.removeprefix("Bearer ").strip()
        expected = self.app.organizer_hash
        if not token:
            await abort(context, grpc.StatusCode.UNAUTHENTICATED,
                        "the organiser token is missing (give --token, or set "
                        "ONO99_ORGANIZER_TOKEN to the token arena serve printed)")
        if not secrets.compare_digest(token_hash(token), expected):
            await abort(context, grpc.StatusCode.UNAUTHENTICATED,
                        "the organiser token given is not this server's (the one arena serve "
                        "printed when it made its database)")

    async def _fail(self, context, exc: Exception) -> None:
        """End the call with the code of a domain error (organizer.proto): by its type."""
        code = next((c for kind, c in _CODES if isinstance(exc, kind)), grpc.StatusCode.INVALID_ARGUMENT)
        await abort(context, code, str(exc))

    async def AddRemoteBot(self, request, context):  # noqa: N802 (gRPC's names)
        await self._authorize(context)
        try:
            bot, token = self.app.registry.add_remote(request.name)
        except (ConfigError, StoreError) as exc:
            await self._fail(context, exc)
        self.app.ladder_wakeup()
        return wire.remote_added(bot, token)

    async def UploadBot(self, request_iterator, context):  # noqa: N802
        await self._authorize(context)
        name, data = None, bytearray()
        try:
            async for chunk in request_iterator:
                if chunk.HasField("header") != (name is None):   # the header first, once
                    await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "an upload is one "
                                "header naming the bot, then the archive's data")
                if chunk.HasField("header"):
                    name = chunk.header.name
                else:
                    data += chunk.data
                    if len(data) > MAX_UPLOAD:
                        await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, f"the upload is "
                                            f"over the limit of {MAX_UPLOAD // 2**20} MiB")
        except DecodeError as exc:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "a message of the upload is not "
                                f"an UploadChunk: protobuf cannot parse it ({exc})")
        if name is None:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "an upload starts with a header "
                                "naming the bot")
        try:
            upload = await self.app.registry.add_hosted(name, bytes(data),
                                                        self.app.options.setup_timeout)
        except (ConfigError, StoreError) as exc:
            await self._fail(context, exc)
        self.app.ladder_wakeup()
        return wire.upload_response(upload.bot, upload.report)

    async def ListBots(self, request, context):  # noqa: N802
        await self._authorize(context)
        lines = {line.bot: line for line in (await self.app.ladder_standings()).lines}
        registry = self.app.registry
        return wire.bot_list(wire.bot_info(b, registry.connected(b), lines.get(b.display))
                             for b in registry.bots())

    async def RemoveBot(self, request, context):  # noqa: N802
        await self._authorize(context)
        try:
            bot = self.app.registry.remove(request.name)
        except (ConfigError, StoreError) as exc:
            await self._fail(context, exc)
        if self.app.runs is not None:
            self.app.runs.removed(bot.display)
        if self.app.ladder is not None:
            self.app.ladder.removed(bot.display)
        return wire.bot_removed(bot)

    async def BotLogs(self, request, context):  # noqa: N802
        await self._authorize(context)
        try:
            bot = self.app.registry.find(request.name)
            # in a thread: its log folders are walked and read (files of every tournament
            # it played elsewhere), which every match refereed here would wait for
            text = await asyncio.to_thread(self.app.registry.output, bot)
        except (ConfigError, StoreError) as exc:
            await self._fail(context, exc)
        return wire.bot_logs(bot, text)

    async def RunTournament(self, request, context):  # noqa: N802
        await self._authorize(context)
        r = request
        try:
            run = await self.app.runs.start(
                r.name or self.app.new_tournament_name(), list(r.bots), follow=bool(r.name),
                games=r.games or None, table_size=r.table_size or None,
                ruleset=r.ruleset or None, options=dict(r.options) or None,
                move_ms=r.move_ms or None, bank_ms=r.bank_ms or None,
                duplicate=False if r.no_duplicate else None, seed=r.seed or None)
        except (ConfigError, StoreError) as exc:
            await self._fail(context, exc)
        async for event in run.follow():
            yield wire.progress(event)

    async def CancelTournament(self, request, context):  # noqa: N802
        await self._authorize(context)
        try:
            run = await self.app.runs.cancel(request.name)
        except (ConfigError, StoreError) as exc:
            await self._fail(context, exc)
        return wire.cancelled(run.t.name, run.done_before + run.played, run.total)

    async def Standings(self, request, context):  # noqa: N802
        await self._authorize(context)
        if request.los_max_bots < 0:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT,
                        f"los_max_bots must be 0 (any field) or more, not {request.los_max_bots}")
        try:
            name, board, matches = await self.app.standings(request.name or None)
        except (ConfigError, StoreError) as exc:
            await self._fail(context, exc)
        # in a thread: a field of 500 bots has 250,000 likelihoods of superiority to work
        # out and encode, about a second that every match refereed here would wait for
        return await asyncio.to_thread(wire.standings, name, board, matches,
                                       request.los_max_bots)


def add_to(server, app: ArenaServer) -> None:
    """Serve the Organizer service of ``app`` on the gRPC ``server``."""
    organizer_pb2_grpc.add_OrganizerServicer_to_server(OrganizerServicer(app), server)
