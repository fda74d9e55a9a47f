"""The one place where a server's domain values become Organizer messages and back, and
where the organiser's requests are made (the client's side imports only this module's
messages: the server's types are needed for their names alone)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ono99.v1 import organizer_pb2 as pb

if TYPE_CHECKING:
    from arena.bots.check import Report
    from arena.server.runs import Event
    from arena.store.base import RegisteredBot
    from arena.tournament.standings import Standings


def remote_added(bot: RegisteredBot, token: str) -> pb.AddRemoteBotResponse:
    """A remote bot entered, with the token it connects with (shown this once)."""
    return pb.AddRemoteBotResponse(name=bot.display, version=bot.version, token=token)


def upload_response(bot: RegisteredBot, report: Report) -> pb.UploadBotResponse:
    """A hosted bot uploaded, with the report of its checks."""
    return pb.UploadBotResponse(
        name=bot.display, version=bot.version, passed=report.failed == 0,
        checks=[pb.Check(name=c.name, passed=c.passed, detail=c.detail) for c in report.checks],
        summary=report.summary())


def bot_list(infos: Iterable[pb.BotInfo]) -> pb.ListBotsResponse:
    """The registered bots, each as :func:`bot_info` gives it."""
    return pb.ListBotsResponse(bots=list(infos))


def bot_info(bot: RegisteredBot, connected: bool, line: Any | None) -> pb.BotInfo:
    """``line``: its ladder standings line (a BotLine), if it played there."""
    return pb.BotInfo(
        name=bot.display, kind=bot.kind, version=bot.version, status=bot.status,
        connected=connected, elo=line.elo if line else 0.0, ci95=line.interval if line else 0.0,
        elo_low=line.low if line else 0.0, elo_high=line.high if line else 0.0,
        matches=line.matches if line else 0, faults=dict(line.faults) if line else {},
        mark=line.mark if line else "")


def bot_removed(bot: RegisteredBot) -> pb.RemoveBotResponse:
    """A bot removed from the server."""
    return pb.RemoveBotResponse(name=bot.display)


def bot_logs(bot: RegisteredBot, text: str) -> pb.BotLogsResponse:
    """The end of a hosted bot's recent output."""
    return pb.BotLogsResponse(name=bot.display, text=text)


def cancelled(name: str, played: int, total: int) -> pb.CancelTournamentResponse:
    """A tournament stopped, with how many of its matches were played."""
    return pb.CancelTournamentResponse(name=name, played=played, total=total)


def progress(event: Event) -> pb.TournamentProgress:
    """One event of a tournament the server runs, as its followers are sent it."""
    d = event.data
    if event.kind == "started":
        return pb.TournamentProgress(started=pb.TournamentStarted(
            name=d["name"], lines=d["lines"], bots=d["bots"], total=d["total"], done=d["done"]))
    if event.kind == "match":
        m = d["match"]
        return pb.TournamentProgress(match=pb.MatchPlayed(
            key=m.key, sample=m.sample, bots=m.bots, places=m.places, termination=m.termination,
            turns=m.turns, verdicts=[pb.SeatVerdict(seat=v.seat, kind=v.kind, detail=v.detail)
                                     for v in m.verdicts]))
    if event.kind == "retired":
        return pb.TournamentProgress(retired=pb.BotRetired(bot=d["bot"], reason=d["reason"]))
    return pb.TournamentProgress(finished=pb.TournamentFinished(
        name=d["name"], played=d["played"], seconds=d["seconds"], error=d.get("error", "")))


def standings(name: str, board: Standings, matches: int,
              los_max_bots: int = 0) -> pb.StandingsResponse:
    """A board as the Organizer service answers it, its likelihoods of superiority only
    for a field of at most ``los_max_bots`` bots (0: any)."""
    data = board.to_dict(los=not los_max_bots or len(board.lines) <= los_max_bots)
    return pb.StandingsResponse(
        tournament=name, matches=matches,
        standings=[pb.StandingsLine(rank=s["rank"], bot=s["bot"], elo=s["elo"], ci95=s["ci95"],
                                    elo_low=s["elo_low"], elo_high=s["elo_high"],
                                    matches=s["matches"], wins=s["wins"],
                                    average_place=s["average_place"], faults=s["faults"],
                                    mark=data["marks"].get(s["bot"], ""))
                   for s in data["standings"]],
        los=[pb.LosRow(bot=bot, los=row) for bot, row in data["los"].items()])


# ---------------------------------------------------------------- the organiser's requests

def add_remote_request(name: str) -> pb.AddRemoteBotRequest:
    """Enter the next version of remote bot ``name``."""
    return pb.AddRemoteBotRequest(name=name)


def upload_chunks(name: str, archive: bytes, chunk: int) -> Iterator[pb.UploadChunk]:
    """A hosted bot's upload: a header naming it, then its gzipped tar, ``chunk`` bytes a
    message."""
    yield pb.UploadChunk(header=pb.UploadHeader(name=name))
    for i in range(0, len(archive), chunk):
        yield pb.UploadChunk(data=archive[i:i + chunk])


def list_request() -> pb.ListBotsRequest:
    """The bots entered on the server."""
    return pb.ListBotsRequest()


def remove_request(name: str) -> pb.RemoveBotRequest:
    """Remove bot ``name`` (a version, or the latest of a name)."""
    return pb.RemoveBotRequest(name=name)


def logs_request(name: str) -> pb.BotLogsRequest:
    """The end of a hosted bot's recent output."""
    return pb.BotLogsRequest(name=name)


def cancel_request(name: str) -> pb.CancelTournamentRequest:
    """Stop the server's tournament ``name``."""
    return pb.CancelTournamentRequest(name=name)


def standings_request(name: str | None, los_max_bots: int = 0) -> pb.StandingsRequest:
    """A tournament's standings (None: the latest), or the ladder's."""
    return pb.StandingsRequest(name=name or "", los_max_bots=los_max_bots)


def tournament_request(name: str, bots: Sequence[str], games: int, table_size: int,
                       ruleset: str, options: Mapping[str, str], move_ms: int, bank_ms: int,
                       duplicate: bool, seed: int) -> pb.TournamentRequest:
    """Run a tournament of ``bots`` on the server, or follow ``name`` (no bots); 0 or ""
    is the server's own setting."""
    return pb.TournamentRequest(
        name=name, bots=bots, games=games, table_size=table_size, ruleset=ruleset,
        options=options, move_ms=move_ms, bank_ms=bank_ms, no_duplicate=not duplicate,
        seed=seed)


def standings_dict(msg: pb.StandingsResponse) -> dict[str, Any]:
    """A StandingsResponse as the local ``arena standings --json`` prints it."""
    return {"tournament": msg.tournament,
            "standings": [{"rank": s.rank, "bot": s.bot, "elo": s.elo, "ci95": s.ci95,
                           "elo_low": s.elo_low, "elo_high": s.elo_high,
                           "matches": s.matches, "wins": s.wins, "average_place": s.average_place,
                           "faults": dict(s.faults)} for s in msg.standings],
            "los": {row.bot: dict(row.los) for row in msg.los},
            "marks": {s.bot: s.mark for s in msg.standings if s.mark}}
