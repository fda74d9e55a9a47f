"""``arena bench load``: many matches through the real tournament code, counted.

B cheap bots (half on the Python SDK, copies of ``bots/random``; half on the raw protocol,
:mod:`arena.bench.rawbot`, answering at once) play a round robin of 4-seat tables, plain
deals, through :class:`~arena.tournament.tournament.Tournament` on the executor it picks
(a referee process per core), into a real SQLite file: by default at least 20,000 matches.

Reported: matches/s; the referee-measured turn latency (every move: p50, p99, max); the
results lost (scheduled but not stored) and duplicated (stored twice), read back from the
file; and after each fifth of the run, the memory (RSS) of this process and of every
referee worker process, their open file descriptors, and the bot processes alive. Ends
with ``load: N matches, L lost, D duplicated; memory +G% from first to last fifth; turn p99
X ms`` (G: the referee and worker processes' RSS, summed).
"""

from __future__ import annotations

import asyncio
import gc
import math
import shutil
import sqlite3
import tempfile
import time
from array import array
from dataclasses import dataclass
from pathlib import Path

from arena.bench import procs
from arena.store.sqlite import SQLiteStore
from arena.tournament.tournament import Settings, Tournament, default_concurrency

ROOT = Path(__file__).resolve().parents[2]
TABLE = 4


@dataclass
class Fifth:
    done: int
    seconds: float
    parent_mb: float
    workers_mb: float
    workers: int
    fds: int
    bots: int

    @property
    def referee_mb(self) -> float:
        return self.parent_mb + self.workers_mb


def _bots(folder: Path, count: int) -> list[str]:
    dirs = []
    for i in range(count):
        d = folder / f"bot{i}"
        d.mkdir(parents=True)
        if i % 2 == 0:
            shutil.copy(ROOT / "bots" / "random" / "bot.py", d / "bot.py")
            name = f"sdk-{i}"
        else:
            shutil.copy(Path(__file__).with_name("rawbot.py"), d / "bot.py")
            name = f"raw-{i}"
        (d / "bot.toml").write_text(f'name = "{name}"\ncommand = "{{python}} bot.py"\n')
        dirs.append(str(d))
    return dirs


def _sample(done: int, seconds: float) -> Fifth:
    gc.collect()
    children = procs.descendants()
    workers = [pid for pid, cmd in children if procs.is_worker(cmd)]
    bots = [pid for pid, cmd in children if b"bot.py" in cmd and b"bwrap" not in cmd]
    return Fifth(done, seconds, procs.rss_mb(), sum(procs.rss_mb(p) for p in workers),
                 len(workers), procs.open_fds() + sum(procs.open_fds(p) for p in workers),
                 len(bots))


def _percentile(ordered: list[int], q: float) -> float:
    """The ``q`` quantile of values already sorted (0 if there are none)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def run(console, matches: int = 20_000, bots: int = 8, concurrency: int | None = None) -> dict:
    from rich.table import Table

    if bots < TABLE:
        raise ValueError(f"--bots must be at least {TABLE} (4-seat tables)")
    concurrency = concurrency or 4 * default_concurrency()
    folder = Path(tempfile.mkdtemp(prefix="ono99-bench-load-"))
    try:
        db = folder / "load.db"
        store = SQLiteStore(db)
        tables = math.comb(bots, TABLE)
        settings = Settings(bot_dirs=tuple(_bots(folder, bots)), table_size=TABLE,
                            games=max(1, math.ceil(matches / tables)), duplicate=False,
                            seed=11, move_ms=5000, bank_ms=20_000)
        t = Tournament.create(store, "load", settings)
        total = len(t.plan)
        console.print(f"load: {total} matches ({tables} tables of {TABLE} of {bots} bots, half "
                      f"SDK, half raw protocol), concurrency {concurrency}, SQLite in {db}",
                      highlight=False)
        latencies = array("I")
        fifths: list[Fifth] = []
        marks = {total * k // 5 for k in range(1, 6)}
        done = [0]
        started = time.perf_counter()

        def on_result(plan, result) -> None:
            done[0] += 1
            for stats in result.stats:
                latencies.extend(stats.latencies_us)
            if done[0] in marks:
                fifths.append(_sample(done[0], time.perf_counter() - started))

        asyncio.run(t.run(concurrency, on_result, log_dir=folder / "logs"))
        seconds = time.perf_counter() - started
        store.close()
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            keys = [r[0] for r in conn.execute("SELECT key FROM matches")]
        conn.close()
        planned = {p.key for p in t.plan}
        lost = len(planned - set(keys))
        duplicated = len(keys) - len(set(keys))
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    table = Table(title=f"load: {total} matches, after each fifth (RSS of this process and of "
                        "every referee worker process)")
    for col in ("matches", "s", "matches/s so far", "this process MB", "workers MB",
                "workers", "open fds", "bot processes"):
        table.add_column(col, justify="right")
    for f in fifths:
        table.add_row(str(f.done), f"{f.seconds:.0f}", f"{f.done / f.seconds:.1f}",
                      f"{f.parent_mb:.1f}", f"{f.workers_mb:.1f}", str(f.workers), str(f.fds),
                      str(f.bots))
    console.print(table)
    ordered = sorted(latencies)   # once, for every quantile
    p50, p99 = (_percentile(ordered, q) / 1000 for q in (0.5, 0.99))
    worst = ordered[-1] / 1000 if ordered else 0.0
    growth = 100 * (fifths[-1].referee_mb / fifths[0].referee_mb - 1) if fifths else 0.0
    console.print(f"{total} matches in {seconds:.1f} s: {total / seconds:.1f} matches/s; "
                  f"{len(latencies)} turns: p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {worst:.1f} ms",
                  highlight=False, soft_wrap=True)
    console.print(f"load: {total} matches, {lost} lost, {duplicated} duplicated; memory "
                  f"{growth:+.1f}% from first to last fifth; turn p99 {p99:.1f} ms",
                  highlight=False, soft_wrap=True)
    return {"matches": total, "lost": lost, "duplicated": duplicated, "growth": growth,
            "p99_ms": p99, "rate": total / seconds}
