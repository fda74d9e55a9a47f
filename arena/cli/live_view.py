"""What a tournament shows while it runs (here or on a server): the progress bar and the
provisional standings, or plain lines when the output is not a terminal, and the line
after its matches."""

from __future__ import annotations

import time
from collections import Counter

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from arena.referee.results import MatchResult
from arena.rules.events import describe_ranking
from arena.text import counted
from arena.tournament.ratings import OnlineElo, Placing
from arena.tournament.schedule import PlannedMatch
from arena.tournament.standings import BotLine, Played, count_match


def played_line(played: int, seconds: float, faults: Counter) -> str:
    """The line after a tournament's matches: how many were played, how fast, and the
    faults seen (by kind)."""
    said = ", ".join(f"{n} {kind}" for kind, n in sorted(faults.items())) or "none"
    return (f"{counted(played, 'match', 'matches')} played in {seconds:.1f} s "
            f"({played / max(seconds, 1e-9):.1f}/s); faults: {said}")


class LiveView:
    """Progress and provisional standings while a tournament runs (plain lines when the
    output is not a terminal)."""

    def __init__(self, names: list[str], total: int, done: int, console: Console,
                 quiet: bool) -> None:
        self.names = list(names)
        self.total = total
        self.done = done
        self.console = console
        self.quiet = quiet
        self.elo = OnlineElo(names)
        self.faults = Counter()
        self.lines = {b: BotLine(b) for b in names}
        self.started = time.perf_counter()
        self.played = 0
        self.live = console.is_terminal and not quiet
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeRemainingColumn(), TextColumn("{task.fields[faults]}"),
            console=console)
        self.task = self.progress.add_task("matches", total=total, completed=done,
                                           rate="", faults="faults 0")
        self._live: Live | None = None
        self._next_report = 0.1

    def __enter__(self) -> LiveView:
        if self.live:
            self._live = Live(Group(self.progress, _Renderable(self._table)), console=self.console,
                              refresh_per_second=4, transient=True)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        """Stop the live display (again: nothing); what is printed after goes to the
        console as plain lines."""
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None

    def earlier(self, matches: list[Played]) -> None:
        """Matches stored before this run (a resume): counted in the provisional standings
        and faults, not in this run's rate (they showed every bot at 0 matches and 1500,
        and the Elo line reported after each new match until it caught up)."""
        for m in matches:
            self._count(list(m.bots), list(m.places), m.sample, m.verdicts)
        self.progress.update(self.task, faults=f"faults {sum(self.faults.values())}")
        self._next_report = (int(self.done / self.total * 10) + 1) / 10

    def _count(self, names: list[str], places: list[int], sample: str, verdicts) -> None:
        """One finished match into the online Elo, the bots' lines and the faults."""
        self.elo.update(Placing(names, places, sample))
        count_match(self.lines, names, places, verdicts)
        for _, kind in verdicts:
            self.faults[kind] += 1

    def retired(self, bot: str, reason: str) -> None:
        """Say that a bot is retired, above the live display when there is one."""
        # the reason may say it ("retired after 3 crashes ..."): once is enough
        msg = f"[bold red]{escape(bot)} is retired:[/bold red] {escape(reason.removeprefix('retired '))}"
        (self._live.console if self._live else self.console).print(msg, soft_wrap=True)

    def result(self, plan: PlannedMatch, result: MatchResult) -> None:
        """A match of this machine's tournament has ended."""
        self.match(plan.key, plan.sample, list(result.spec.names), result.places(),
                   result.termination, result.turns, [(v.seat, v.kind) for v in result.verdicts])

    def match(self, key: str, sample: str, names: list[str], places: list[int], termination: str,
              turns: int, verdicts: list[tuple[int, str]]) -> None:
        """A match has ended (here, or on a server)."""
        self.done += 1
        self.played += 1
        self._count(names, places, sample, verdicts)
        elapsed = time.perf_counter() - self.started
        rate = self.played / elapsed if elapsed > 0 else 0.0
        self.progress.update(self.task, completed=self.done, rate=f"{rate:.1f} matches/s",
                             faults=f"faults {sum(self.faults.values())}")
        if self.live or self.quiet:
            return
        ranking = [tuple(s for s, p in enumerate(places) if p == place)
                   for place in sorted(set(places)) if place]
        order = describe_ranking(ranking, names)
        said = "".join(f"; {names[seat]} {kind}" for seat, kind in verdicts)
        self.console.print(f"[{self.done:>{len(str(self.total))}}/{self.total}] {key}: "
                           f"{escape(order)} ({termination}, {turns} turns{escape(said)})",
                           soft_wrap=True)
        if self.done / self.total >= self._next_report or self.done == self.total:
            self._next_report += 0.1
            board = ", ".join(f"{b} {r:.0f}" for b, r in
                              sorted(self.elo.ratings.items(), key=lambda kv: -kv[1]))
            self.console.print(f"  provisional Elo after {counted(self.done, 'match', 'matches')} "
                               f"({rate:.1f}/s): {escape(board)}",
                               soft_wrap=True)

    def _table(self) -> Table:
        table = Table(title="provisional standings (online Elo, updated live)", title_justify="left")
        for col in ("rank", "bot", "Elo*", "matches", "wins", "avg place"):
            table.add_column(col, justify="left" if col == "bot" else "right")
        ranked = sorted(self.names, key=lambda b: -self.elo.ratings[b])
        for i, bot in enumerate(ranked, 1):
            line = self.lines[bot]
            table.add_row(str(i), escape(bot), f"{self.elo.ratings[bot]:.0f}", str(line.matches),
                          str(line.wins), f"{line.average_place:.2f}" if line.matches else "-")
        return table


class _Renderable:
    """Builds its renderable each time rich draws it: the live standings table is made
    anew at every refresh, from the counts as they are then."""

    def __init__(self, build) -> None:
        self.build = build

    def __rich__(self):
        return self.build()
