"""The terminal's picture of a match and of a tournament, as rich renderables: what
`arena watch` shows live and `arena replay` steps through.

A match is drawn from its record as the spectator service sends it (a ``MatchSnapshot``)
at one of its frames: the table (seats, hand sizes, tokens or scores, who is out, whose
turn, the direction, owed cards, the total against the limit as a bar), each seat's
clock, the last plays and the verdicts. A tournament is drawn from its snapshot:
progress, standings with intervals, a crosstable, its live matches and latest results.
Everything is measured against the console's width when it is drawn, so a resized
terminal is simply drawn again at its new size.
"""

from __future__ import annotations

from collections.abc import Sequence

from ono99.v1 import spectator_pb2 as pb
from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from arena.cli.match_log import event_lines, result_text, summary_text, verdict_line
from arena.referee.results import TimeControl
from arena.referee.wire import cards_from_wire
from arena.rules.cards import TOKENS
from arena.rules.events import FORFEIT
from arena.tournament.standings import interval_text
from arena.watch import wire

LOG_LINES = 12          # the last plays shown
BAR_WIDTH = 40          # the total's bar, in cells
CROSSTABLE_MAX = 12     # bots beyond this many: no crosstable (it would not fit)


# ---------------------------------------------------------------- a match

def match_view(record: pb.MatchSnapshot, position: int | None = None, *,
               thinking_ms: int | None = None, status: str = "",
               log_lines: int = LOG_LINES) -> RenderableType:
    """The match at frame ``position`` (None: its latest). ``thinking_ms``: how long the
    seat to act has been thinking (live only); ``status``: a line for the viewer's state
    (live, delayed, paused, the keys...)."""
    frames = record.frames
    summary = record.match
    names = list(summary.names)
    if not frames:
        return Group(_header(summary, status), Text("waiting for the deal...", style="dim"))
    position = len(frames) - 1 if position is None else max(0, min(position, len(frames) - 1))
    frame = frames[position]
    at_end = position == len(frames) - 1 and record.HasField("over")
    parts: list[RenderableType] = [_header(summary, status), _table_line(frame.state, names),
                                   _total_bar(frame.state, summary.rules.limit or 99, names),
                                   _seats(record, position, thinking_ms, at_end)]
    shown = _verdicts_by(record, position)
    if shown:
        parts.append(Text.from_markup("\n".join(verdict_line(names, wire.verdict(v))
                                                for v in shown)))
    if at_end:
        over = record.over
        parts.append(Text("result: " + result_text(
            names, wire.ranking(over.ranking), wire.status_name(over.status), over.termination,
            over.turns, over.duration_s or None), style="bold"))
    parts.append(Panel(_last_plays(frames, position, names, log_lines), title="last plays",
                       title_align="left", box=box.ROUNDED, padding=(0, 1)))
    return Group(*parts)


def _header(summary: pb.MatchSummary, status: str) -> Text:
    rules = summary.rules
    text = Text()
    text.append(f"match {summary.match_id}", style="bold")
    if summary.tournament:
        text.append(f"  ({summary.tournament})")
    text.append(f"  {rules.ruleset}, {rules.seats} seats, limit {rules.limit}")
    scoring = rules.options.get("scoring")
    if scoring:
        text.append(f", {scoring}")
    tc = summary.time_control
    if tc.move_ms:
        text.append("  " + TimeControl(tc.move_ms, tc.bank_ms).describe(), style="dim")
    if status:
        text.append(f"  {status}", style="bold cyan")
    return text


def _table_line(state: pb.PublicState, names: Sequence[str]) -> Text:
    direction = "→ clockwise" if state.direction >= 0 else "← counter-clockwise"
    dealer = names[state.dealer] if 0 <= state.dealer < len(names) else "-"
    return Text(f"round {state.round}   dealer {dealer}   {direction}   draw pile "
                f"{state.draw_size}   discards {state.discard_size}")


def _total_bar(state: pb.PublicState, limit: int, names: Sequence[str]) -> Text:
    """``total ██████░░░░  72 / 98``, greener the further from the limit."""
    share = max(0.0, min(1.0, state.total / limit)) if limit else 0.0
    filled = round(share * BAR_WIDTH)
    colour = "green" if share < 0.7 else "yellow" if share < 0.9 else "red"
    text = Text("total ")
    text.append("█" * filled, style=colour)
    text.append("░" * (BAR_WIDTH - filled), style="dim")
    text.append(f" {state.total:>3} / {limit}", style="bold")
    if state.owed > 1 and 0 <= state.to_act < len(names):
        text.append(f"   {names[state.to_act]} owes {state.owed} cards", style="bold magenta")
    return text


def _seats(record: pb.MatchSnapshot, position: int, thinking_ms: int | None,
           at_end: bool) -> Table:
    frame = record.frames[position]
    state = frame.state
    names = record.match.names
    scoring = record.match.rules.options.get("scoring")
    move_ms = record.match.time_control.move_ms
    hands = {h.seat: h.cards for h in (record.over.hands if at_end else frame.hands)}
    clocks = len(frame.bank_ms) == len(names)     # a record from a database has none
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    columns = (["", "seat", "bot", "cards"] + ([scoring] if scoring else [])
               + (["bank"] if clocks else []) + [""])
    for col in columns:
        table.add_column(col, justify="left" if col in ("", "bot") else "right")
    for seat, (name, info) in enumerate(zip(names, state.seats)):
        to_act = seat == state.to_act
        note = []
        row = [("▶" if to_act else ""), str(seat), escape(name),
               str(info.hand_size) if info.in_game else "-"]
        if scoring:
            row.append(str(info.tokens if scoring == "tokens" else info.score))
        if to_act and thinking_ms is not None:
            note.append(f"thinking {thinking_ms / 1000:.1f} s")
        if clocks:
            left = frame.bank_ms[seat]
            if to_act and thinking_ms is not None:   # the bank runs once the move time is up
                left -= max(0, thinking_ms - move_ms)
            row.append(f"{max(0, left) / 1000:.1f} s")
        if not info.in_game:
            note.append("out")
        elif scoring == "points" and not info.in_round:
            note.append("out of the round")
        if info.revealed:
            note.append("showed " + _cards(info.revealed))
        elif seat in hands:
            note.append(("ended with " if at_end else "hand ") + (_cards(hands[seat]) or "-"))
        table.add_row(*row, escape("   ".join(note)),
                      style="bold yellow" if to_act else "dim" if not info.in_game else None)
    return table


def _cards(values) -> str:
    return " ".join(TOKENS[c] for c in cards_from_wire(values))


def _verdicts_by(record: pb.MatchSnapshot, position: int) -> list:
    """The verdicts known at ``position``: all of them at the latest frame; before, those
    whose seat has forfeited by then."""
    if position >= len(record.frames) - 1:
        return list(record.verdicts)
    gone = {e[1] for f in record.frames[:position + 1] for e in wire.frame_events(f)
            if e[0] == FORFEIT}
    return [v for v in record.verdicts if v.seat in gone]


def _last_plays(frames, position: int, names: Sequence[str], count: int) -> Text:
    """The log's last ``count`` lines up to ``position`` (the lines of `arena match`)."""
    lines: list[str] = []
    i = position
    while i >= 0 and len(lines) < count:
        seat, latency_us = wire.decision(frames[i])
        lines[:0] = event_lines(wire.frame_events(frames[i]), names, seat, latency_us)
        i -= 1
    return Text.from_markup("\n".join(lines[-count:]) or " ")


# ---------------------------------------------------------------- tournaments

def tournament_view(snapshot: pb.TournamentSnapshot, live: Sequence[pb.MatchSummary],
                    recent: Sequence[pb.MatchSummary], status: str = "") -> RenderableType:
    """A tournament's progress, standings, crosstable, live matches and latest results."""
    parts: list[RenderableType] = [_progress(snapshot, status),
                                   standings_table(snapshot.standings)]
    cross = crosstable(snapshot.standings)
    if cross is not None:
        parts.append(cross)
    if live:
        parts.append(matches_table(live, "playing now"))
    if recent:
        parts.append(Text.from_markup("\n".join(
            f"  {escape(m.match_id)}: {escape(summary_text(m))}" for m in recent),
            overflow="ellipsis"))
    return Group(*parts)


def _progress(snapshot: pb.TournamentSnapshot, status: str) -> Text:
    text = Text()
    text.append(f"tournament {snapshot.name}", style="bold")
    if snapshot.total:
        share = min(1.0, snapshot.done / snapshot.total)
        filled = round(share * BAR_WIDTH)
        text.append("  ")
        text.append("█" * filled, style="green")
        text.append("░" * (BAR_WIDTH - filled), style="dim")
        text.append(f" {snapshot.done}/{snapshot.total} matches")
    else:
        text.append(f"  {snapshot.done} matches")
    if snapshot.finished:
        text.append("  over", style="bold")
    if status:
        text.append(f"  {status}", style="bold cyan")
    return text


def standings_table(standings: pb.Standings, title: str = "standings") -> Table:
    """Elo with its 95% interval (as distances from it), and each bot's record."""
    table = Table(title=f"{title} ({standings.matches} matches)", title_justify="left")
    marked = any(row.mark for row in standings.rows)      # a ladder's provisional, absent or removed
    columns = ("rank", "bot", "Elo", "95%", "matches", "wins", "avg place", "faults")
    for col in (*columns, "mark") if marked else columns:
        table.add_column(col, justify="left" if col in ("bot", "faults", "mark") else "right")
    for row in standings.rows:
        faults = ", ".join(f"{n} {kind}" for kind, n in sorted(row.faults.items())) or "0"
        table.add_row(str(row.rank) if row.rank else "-", escape(row.bot), f"{row.elo:.0f}",
                      interval_text(row.elo, row.elo_low, row.elo_high, row.ci95) if row.matches
                      else "-", str(row.matches), str(row.wins),
                      f"{row.average_place:.2f}" if row.matches else "-", escape(faults),
                      *([row.mark] if marked else []))
    return table


def crosstable(standings: pb.Standings) -> Table | None:
    """Head to head: each cell ``ahead-behind-level`` from the row bot's side (None with
    more than CROSSTABLE_MAX bots, or none)."""
    rows = {row.bot: {c.opponent: c for c in row.cells} for row in standings.crosstable}
    bots = [r.bot for r in standings.rows if r.bot in rows] or list(rows)
    if not bots or len(bots) > CROSSTABLE_MAX:
        return None
    table = Table(title="head to head (ahead-behind-level)", title_justify="left")
    table.add_column("")
    for bot in bots:
        table.add_column(escape(bot[:10]), justify="right")
    for bot in bots:
        cells = rows[bot]
        table.add_row(escape(bot), *("" if other == bot or other not in cells else
                                     f"{cells[other].ahead}-{cells[other].behind}-"
                                     f"{cells[other].level}" for other in bots))
    return table


def matches_table(matches: Sequence[pb.MatchSummary], title: str) -> Table:
    """Matches in a list: who plays, how far, how it ended."""
    table = Table(title=title, title_justify="left")
    for col in ("match", "tournament", "status", "players", "turns", "result"):
        table.add_column(col, justify="right" if col == "turns" else "left")
    for m in matches:
        table.add_row(escape(m.match_id), escape(m.tournament or "-"), wire.status_name(m.status),
                      escape(" vs ".join(m.names)), str(m.turns), escape(summary_text(m)))
    return table
