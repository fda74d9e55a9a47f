"""A match as lines of text: what `arena match` prints live, and `arena watch` and
`arena replay` print again from what the spectator service or a record holds. Each kind
of line is written here once, so the three cannot drift apart.

Event and verdict lines are rich markup (colours on a terminal, plain text elsewhere);
result lines are plain text, to be escaped where they are printed as markup.

Off a terminal, `arena watch` and `arena replay` print a match with
:class:`MatchLogPrinter`: ``match ID: a vs b`` when it begins, then one line per event
(the lines of `arena match`), verdicts, and ``match ID: <result line>`` when it ends.
"""

from __future__ import annotations

from collections.abc import Sequence

from ono99.v1 import spectator_pb2 as pb
from rich.console import Console
from rich.markup import escape

from arena.referee.results import Verdict
from arena.rules.cards import TOKENS
from arena.rules.events import DRAW, ELIMINATE, END, FORFEIT, LOSE, PLAY, describe_event
from arena.rules.game import places_of
from arena.watch import wire
from arena.watch.viewer import MatchUpdate

_BAD_NEWS = (LOSE, ELIMINATE, FORFEIT)


def event_lines(events: Sequence[tuple], names: Sequence[str], seat: int | None = None,
                latency_us: int | None = None) -> list[str]:
    """The lines of one step's events: each card played with the total after it (and how
    long it took, when ``latency_us`` is known and ``seat`` played it), everything else
    described. Draws are left out (noise here), and so is the end: a result line follows."""
    lines = []
    for e in events:
        kind = e[0]
        if kind == PLAY:
            took = (f"  [dim]{latency_us / 1000:.1f} ms[/dim]"
                    if latency_us is not None and e[1] == seat else "")
            lines.append(f"  {escape(names[e[1]]):>12} plays [bold]{TOKENS[e[2]]:>3}[/bold] "
                         f"-> {e[3]:>3}{took}")
        elif kind not in (DRAW, END):
            line = escape(describe_event(e, names))
            lines.append(f"  [red]{line}[/red]" if kind in _BAD_NEWS else f"  {line}")
    return lines


def verdict_line(names: Sequence[str], verdict: Verdict) -> str:
    """A verdict against a seat, as it is given."""
    return (f"  [bold red]verdict[/bold red] {escape(names[verdict.seat])}: "
            f"{escape(str(verdict.kind))} ({escape(verdict.detail)})")


def result_text(names: Sequence[str], ranking: Sequence[Sequence[int]], status: str,
                termination: str, turns: int, duration_s: float | None = None) -> str:
    """``1. a   2. b = c   [last_standing, 37 turns, 0.52 s]`` (the time left out when
    unknown), or ``aborted after 12 turns`` for a match with no ranking."""
    if not ranking:
        return f"{status} after {turns} turns"
    places = places_of(ranking, len(names))
    order = "   ".join(f"{places[group[0]]}. " + " = ".join(names[s] for s in group)
                       for group in ranking)
    # to the microsecond first, as an event log keeps it (MatchResult.to_dict): a time
    # just under a half-hundredth (0.1649999 s) printed 0.16 s here, and 0.17 s replayed
    took = "" if duration_s is None else f", {round(duration_s, 6):.2f} s"
    return f"{order}   [{termination}, {turns} turns{took}]"


def start_text(match_id: str, names: Sequence[str]) -> str:
    """``match ID: a vs b vs c``: a match begins (plain text)."""
    return f"match {match_id}: " + " vs ".join(names)


def summary_text(m: pb.MatchSummary) -> str:
    """A listed match's result (plain text): its result line without the time, or while
    it is played, how far it is and TV's interest in it."""
    if m.status == pb.MATCH_STATUS_LIVE:
        return f"live, {m.turns} turns, interest {m.interest:.2f}"
    return result_text(list(m.names), wire.ranking(m.ranking), wire.status_name(m.status),
                       m.termination, m.turns)


class MatchLogPrinter:
    """Prints matches as a spectator stream or a record brings them, one line per event,
    each once: a start line for a match it had not seen, the events of each new frame (a
    verdict just before the frame in which its seat forfeits, as `arena match` prints
    it, or else where it arrives), and the end line."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def print(self, record: pb.MatchSnapshot, update: MatchUpdate) -> None:
        """What ``update`` brought to ``record`` (the match as far as it is known)."""
        summary = record.match
        names = list(summary.names)
        out = self.console
        if update.started:
            out.print(escape(start_text(summary.match_id, names)))
        pending = list(update.verdicts)
        for frame in update.frames:
            events = wire.frame_events(frame)
            forfeits = {e[1] for e in events if e[0] == FORFEIT}
            for v in [v for v in pending if v.seat in forfeits]:
                pending.remove(v)
                out.print(verdict_line(names, wire.verdict(v)))
            for line in event_lines(events, names, *wire.decision(frame)):
                out.print(line)
        for v in pending:
            out.print(verdict_line(names, wire.verdict(v)))
        over = update.over
        if over is not None:
            out.print(escape(f"match {summary.match_id}: " + result_text(
                names, wire.ranking(over.ranking), wire.status_name(over.status),
                over.termination, over.turns, over.duration_s)))
