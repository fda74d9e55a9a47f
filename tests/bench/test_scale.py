"""``arena bench scale`` at its smallest: one run on each executor of a 24-match tournament,
through the command (a local Ray cluster of this machine's cores started and stopped by
it), on a 40-column terminal.

Its summary line is the contract checked from outside (one line, R with 2 decimals, O in
ms); both executors stored every match once; the figures the docs' model reads are sane.
"""

from __future__ import annotations

import re

from arena.bench import scale
from arena.cli.main import main

LINE = (r"scale: ray = (\d+\.\d\d) x multiprocess on the same cores; "
        r"overhead (\d+(?:\.\d+)?) ms per match")


def test_the_scale_bench_ends_with_its_line_and_stores_every_match(monkeypatch, capsys):
    got = []
    real = scale.run
    monkeypatch.setattr(scale, "run", lambda *a, **k: got.append(real(*a, **k)) or got[-1])
    monkeypatch.setenv("COLUMNS", "40")   # rich would wrap a long line at this width

    assert main(["bench", "scale", "--games", "2", "--repeats", "1"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    m = re.fullmatch(LINE, last)
    assert m, last
    figs = got[0]
    assert float(m[1]) == round(figs.ratio, 2) > 0
    assert [r.executor for r in figs.runs] == ["multiprocess", "ray"]
    for r in figs.runs:
        assert r.stored == r.planned == 24, r   # 6 tables x 2 deals x 2 rotations, each once
        assert r.matches == 24 - 2 and r.rate > 0 and r.driver_cpu > 0 and r.others_cpu > 0
    ray_run = figs.median["ray"]
    assert len(ray_run.overheads) == ray_run.matches
    assert sum(ray_run.nodes.values()) == 24
    assert 0 < figs.overhead_p50_ms <= figs.overhead_p99_ms
    bounds = [least for *_, least in figs.projection]
    assert bounds == sorted(bounds) and bounds[0] > 0   # more nodes never project less


def test_a_joined_cluster_whose_cpu_is_not_counted_sets_no_nodes_bound():
    # With --ray-address the actors are the cluster's processes, not this one's children:
    # their CPU reads 0, and the model divided by it (a ZeroDivisionError after the runs).
    runs = [scale.ScaleRun("multiprocess", 22, 1.0, 0.01, 0.03, 0.7),
            scale.ScaleRun("ray", 22, 1.2, 0.01, 0.06, 0.0)]
    figs = scale.summarise(runs, cores=2)
    assert figs.node_cpu_s == 0
    for n, nodes_bound, driver_bound, store_bound, least in figs.projection:
        assert nodes_bound == float("inf")
        assert least == min(driver_bound, store_bound) > 0
