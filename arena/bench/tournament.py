"""``arena bench tournament``: tournament throughput, storage cost and memory.

A 2-seat round-robin of 4 random bots (copies of ``bots/random`` under four names), a few
hundred matches with duplicate deals (the first tenth, while bot processes start, is not
timed), run twice through the real tournament code (real
referee, real bot processes, a real SQLite file): at concurrency 1, then 2. It prints
matches/s for both and their ratio, the storage time per match (the transaction that
writes a finished match and its events) against the match time, and the referee
process's memory and its referee workers' after each third of the matches (it must not grow with matches played).
"""

from __future__ import annotations

import asyncio
import gc
import resource
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from arena.bench import procs
from arena.store.sqlite import SQLiteStore
from arena.tournament.tournament import Settings, Tournament

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class TournamentFigures:
    concurrency: int
    matches: int
    seconds: float
    storage_seconds: float
    rss_mb: list[float] = field(default_factory=list)   # this process, after each third
    workers_mb: list[float] = field(default_factory=list)   # its referee workers, summed

    @property
    def rate(self) -> float:
        return self.matches / self.seconds

    @property
    def storage_share(self) -> float:
        """Storage time as a share of the time per match (wall clock, this concurrency)."""
        return self.storage_seconds / self.seconds


def statistics_of(runs: list[TournamentFigures]) -> TournamentFigures:
    """The run with the median rate (its own figures, memory included)."""
    return sorted(runs, key=lambda f: f.rate)[len(runs) // 2]


def _bots(folder: Path) -> list[str]:
    dirs = []
    for letter in "abcd":
        d = folder / f"random-{letter}"
        d.mkdir(parents=True)
        shutil.copy(ROOT / "bots" / "random" / "bot.py", d / "bot.py")
        (d / "bot.toml").write_text(f'name = "random-{letter}"\ncommand = "{{python}} bot.py"\n')
        dirs.append(str(d))
    return dirs


def measure(concurrency: int, games: int, folder: Path, rep: int = 0) -> TournamentFigures:
    db = folder / f"bench-c{concurrency}-{rep}.db"
    store = SQLiteStore(db)
    settings = Settings(bot_dirs=tuple(_bots(folder / f"c{concurrency}-{rep}")), table_size=2,
                        games=games, seed=7, move_ms=5000, bank_ms=10_000)
    t = Tournament.create(store, f"bench-c{concurrency}", settings)
    total = len(t.plan)
    warmup = max(1, total // 10)   # bot processes start during the first matches: not timed
    fig = TournamentFigures(concurrency, total - warmup, 0.0, 0.0)
    done = [0]
    marks: dict[str, float] = {}

    def on_result(plan, result) -> None:
        done[0] += 1
        if done[0] == warmup:
            marks["start"] = time.perf_counter()
            marks["storage"] = t.write_seconds
        if done[0] in (total // 3, 2 * total // 3, total):
            gc.collect()  # what is still reachable, not garbage awaiting a collection
            fig.rss_mb.append(procs.rss_mb())
            fig.workers_mb.append(sum(procs.rss_mb(pid) for pid in procs.workers()))

    asyncio.run(t.run(concurrency, on_result, log_dir=folder / "logs"))
    fig.seconds = time.perf_counter() - marks["start"]
    fig.storage_seconds = t.write_seconds - marks["storage"]
    store.close()
    return fig


def run(console, games: int = 40, repeats: int = 3) -> list[TournamentFigures]:
    from rich.table import Table

    folder = Path(tempfile.mkdtemp(prefix="ono99-bench-tournament-"))
    try:  # alternate the two, so that the machine's drift weighs on both alike
        runs = [measure(c, games, folder, r) for r in range(repeats) for c in (1, 2)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figs = [statistics_of([f for f in runs if f.concurrency == c]) for c in (1, 2)]
    console.print("matches/s of every run, in order: " + ", ".join(
        f"c{f.concurrency} {f.rate:.0f}" for f in runs), highlight=False)
    table = Table(title=f"tournament: 4 random bots, 2 seats, duplicate deals, {figs[0].matches} "
                        f"timed matches per run, median of {repeats} runs each, alternated "
                        "(real referee, bot processes, SQLite)")
    for col in ("concurrency", "matches/s", "ms per match", "storage ms per match", "storage share",
                "this process after 1/3, 2/3, 3/3 (MB)", "its referee workers (MB)"):
        table.add_column(col, justify="right")
    for f in figs:
        table.add_row(str(f.concurrency), f"{f.rate:.1f}", f"{1000 / f.rate:.2f}",
                      f"{1000 * f.storage_seconds / f.matches:.3f}", f"{100 * f.storage_share:.1f}%",
                      ", ".join(f"{m:.1f}" for m in f.rss_mb),
                      ", ".join(f"{m:.1f}" for m in f.workers_mb) if any(f.workers_mb) else "none")
    console.print(table)
    one, two = figs
    console.print(f"peak memory of this process: "
                  f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f} MB", highlight=False)
    console.print(f"tournament: concurrency 2 = {two.rate / one.rate:.2f} x concurrency 1; "
                  f"storage {100 * one.storage_share:.1f}% of match time", highlight=False)
    return figs
