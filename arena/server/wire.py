"""The one place where a server's domain values become Organizer messages and back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ono99.v1 import organizer_pb2 as pb

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
        matches=line.matches if line else 0, faults=dict(line.faults) if line else {})


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
                                    average_place=s["average_place"], faults=s["faults"])
                   for s in data["standings"]],
        los=[pb.LosRow(bot=bot, los=row) for bot, row in data["los"].items()])


def standings_dict(msg: pb.StandingsResponse) -> dict[str, Any]:
    """A StandingsResponse as the local ``arena standings --json`` prints it."""
    return {"tournament": msg.tournament,
            "standings": [{"rank": s.rank, "bot": s.bot, "elo": s.elo, "ci95": s.ci95,
                           "elo_low": s.elo_low, "elo_high": s.elo_high,
                           "matches": s.matches, "wins": s.wins, "average_place": s.average_place,
                           "faults": dict(s.faults)} for s in msg.standings],
            "los": {row.bot: dict(row.los) for row in msg.los}}
