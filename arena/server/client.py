"""The organiser's side of a server: the Organizer service over gRPC, for the CLI.

Every call carries the organiser token; every failure becomes one line that says what
went wrong: a :class:`ConfigError` where the server refused the request as it was made (a
wrong token, an unknown bot...), a :class:`ServerError` where the call failed (no server
there, no answer in time, an error of the server's).
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ono99.transport import grpc
from ono99.v1 import organizer_pb2 as pb
from ono99.v1 import organizer_pb2_grpc

from arena.rpc import REFUSALS, dial_problem
from arena.rules.errors import ConfigError
from arena.server import wire

ENV_TOKEN = "ONO99_ORGANIZER_TOKEN"
ENV_TLS_CA = "ONO99_TLS_CA"
CHUNK = 32 * 1024   # under the server's 64 KiB cap on what it receives
STANDINGS_TIMEOUT_S = 300.0   # the server fits them when asked: a 500-bot ladder's, ~20 s


class ServerError(Exception):
    """A call to the server failed: nothing answers at its address, it did not answer in
    time, or it failed itself. Not the request's fault: it may work later (the command
    line exits 1; 2 for the :class:`ConfigError` of a refused request)."""


def channel_credentials(tls: bool, tls_ca: str | None) -> grpc.ChannelCredentials | None:
    """TLS credentials (trusting ``tls_ca``, else the system's roots), or None for plain."""
    tls_ca = tls_ca or os.environ.get(ENV_TLS_CA)
    if tls_ca:
        try:
            return grpc.ssl_channel_credentials(root_certificates=Path(tls_ca).read_bytes())
        except OSError as exc:
            raise ConfigError(f"cannot read the TLS certificate {tls_ca}: {exc.strerror}") from None
    return grpc.ssl_channel_credentials() if tls else None


class OrganizerClient:
    """A connection to a server's Organizer service."""

    def __init__(self, address: str, token: str | None, tls: bool = False,
                 tls_ca: str | None = None) -> None:
        token = token or os.environ.get(ENV_TOKEN)
        if not token:
            raise ConfigError(f"organiser commands need the organiser token: give --token, or "
                              f"set {ENV_TOKEN} (arena serve printed it when it created its "
                              "database)")
        if (problem := dial_problem(address)) is not None:
            # gRPC took 'localhost' as localhost:443, and said no server answers there
            raise ConfigError(f"{address!r} is {problem} (the address arena serve printed)"
                              if problem.startswith("not ") else f"{address!r}: {problem}")
        self.address = address
        creds = channel_credentials(tls, tls_ca)
        # a ladder of 500 bots' standings are 4 MiB (their likelihoods of superiority,
        # pair by pair): the default limit refused them
        options = [("grpc.max_receive_message_length", 64 * 2**20)]
        self.channel = (grpc.secure_channel(address, creds, options) if creds is not None
                        else grpc.insecure_channel(address, options))
        self.stub = organizer_pb2_grpc.OrganizerStub(self.channel)
        self.metadata = (("authorization", f"Bearer {token}"),)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> OrganizerClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method, request, timeout: float | None = 30.0):
        try:
            return method(request, metadata=self.metadata, timeout=timeout)
        except grpc.RpcError as exc:
            raise self._error(exc) from None

    def _error(self, exc: grpc.RpcError) -> ConfigError | ServerError:
        code = exc.code()
        if code == grpc.StatusCode.UNAVAILABLE:
            return ServerError(f"no arena server answers at {self.address} (is arena serve "
                               f"running there? with TLS, give --tls or --tls-ca): {exc.details()}")
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return ServerError(f"the server at {self.address} did not answer in time")
        return (ConfigError if code in REFUSALS else ServerError)(exc.details() or code.name)

    # ---------------------------------------------------------------- calls

    def add_remote(self, name: str) -> pb.AddRemoteBotResponse:
        """Enter a remote bot; the answer holds its token."""
        return self._call(self.stub.AddRemoteBot, wire.add_remote_request(name))

    def upload(self, name: str, folder: Path, timeout: float = 1800.0) -> pb.UploadBotResponse:
        """Upload a bot folder as hosted bot ``name``; the answer holds its checks."""
        from arena.server.registry import MAX_UPLOAD   # the server's, which refuses more

        archive = pack(folder)
        if len(archive) > MAX_UPLOAD:   # a folder to change (the server's refusal: a failure)
            raise ConfigError(f"the upload is over the limit of {MAX_UPLOAD // 2**20} MiB: "
                              f"{folder} packs to {len(archive) / 2**20:.1f} MiB, gzipped")
        return self._call(self.stub.UploadBot, wire.upload_chunks(name, archive, CHUNK), timeout)

    def list(self) -> pb.ListBotsResponse:
        """The bots on the server."""
        return self._call(self.stub.ListBots, wire.list_request(), STANDINGS_TIMEOUT_S)

    def remove(self, name: str) -> pb.RemoveBotResponse:
        """Remove a bot from the server."""
        return self._call(self.stub.RemoveBot, wire.remove_request(name))

    def logs(self, name: str) -> pb.BotLogsResponse:
        """The end of a hosted bot's recent output."""
        return self._call(self.stub.BotLogs, wire.logs_request(name))

    def cancel(self, name: str) -> pb.CancelTournamentResponse:
        """Stop the server's tournament ``name``."""
        return self._call(self.stub.CancelTournament, wire.cancel_request(name))

    def standings(self, name: str | None, los_max_bots: int = 0) -> pb.StandingsResponse:
        """A tournament's standings; its likelihoods of superiority only for a field of at
        most ``los_max_bots`` bots (0: any)."""
        # a tournament's standings are fitted when asked for: seconds for hundreds of bots
        return self._call(self.stub.Standings, wire.standings_request(name, los_max_bots),
                          STANDINGS_TIMEOUT_S)

    def tournament(self, name: str, bots: Sequence[str], games: int, table_size: int,
                   ruleset: str, options: Mapping[str, str], move_ms: int, bank_ms: int,
                   duplicate: bool, seed: int) -> Iterator[pb.TournamentProgress]:
        """Run a tournament on the server, or follow the one called ``name`` (no ``bots``):
        its progress, as it happens, until it is over. A setting of 0 or "" is the
        server's own (``name``: a fresh one; ``seed``: a secret one)."""
        return self._follow(wire.tournament_request(name, bots, games, table_size, ruleset,
                                                    options, move_ms, bank_ms, duplicate, seed))

    def _follow(self, request: pb.TournamentRequest) -> Iterator[pb.TournamentProgress]:
        try:
            yield from self.stub.RunTournament(request, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise self._error(exc) from None


def pack(folder: Path) -> bytes:
    """A bot folder as a gzipped tar, its files at the top (no links, no build leftovers of
    the arena's own: ``.arena*`` and ``__pycache__``)."""
    folder = Path(folder)
    if not (folder / "bot.toml").is_file():
        raise ConfigError(f"{folder} has no bot.toml: give the folder of a bot")
    out = io.BytesIO()

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        name = Path(info.name)
        if info.issym() or info.islnk() or "__pycache__" in name.parts or name.name.startswith(".arena"):
            return None
        return info

    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for path in sorted(folder.iterdir()):
            tar.add(path, arcname=path.name, filter=keep)
    return out.getvalue()
