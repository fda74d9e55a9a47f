"""Every benchmark's summary line is one line, however narrow the terminal: run piped,
with COLUMNS=40 (where rich would otherwise wrap at the width it assumes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from support.requirements import needs_module

CASES = {
    "engine": (["engine", "--seconds", "0.05"], r"engine: \d+ decisions/s \(modern, 4 seats\)"),
    # RLCard measured beside ours (the case skips where rlcard is not installed)
    "engine --rlcard": (["engine", "--seconds", "0.05", "--rlcard"],
                        r"engine: \d+ decisions/s \(modern, 4 seats\) = [\d.]+ x RLCard UNO "
                        r"\(\d+ decisions/s\)"),
    "fuzz": (["fuzz", "--seconds", "0", "--examples", "1", "--no-healthy"],
             r"fuzz: \d+ s, \d+ messages, 0 server errors, 0 wrong answers, 0 sessions disturbed; "
             r"server RSS [+-]\d+%"),
    "ratings": (["ratings", "--seeds", "1", "--budget", "200"],
                r"ratings: tau -?[\d.]+ duplicate, -?[\d.]+ plain; matches to separate [\d,inf]+ "
                r"duplicate, [\d,inf]+ plain"),
    # a short load run, through the multi-process executor: nothing lost or stored twice
    "load": (["load", "--matches", "60", "--bots", "4", "--concurrency", "4"],
             r"load: 60 matches, 0 lost, 0 duplicated; memory [+-][\d.]+% from first to last "
             r"fifth; turn p99 [\d.]+ ms"),
    "ratings --coverage": (["ratings", "--coverage", "--fields", "2"],
                           r"ratings coverage: [\d.]+% overall, \d+/\d+ cells in 93%-97%, farthest "
                           r"[\d.]+% \(\d seats, \d+ matches/bot, [\d+-]+ Elo\); fit of 20 bots x "
                           r"5,000 matches [\d.]+ s"),
}


@pytest.mark.parametrize("case", CASES)
def test_the_summary_line_is_never_wrapped(case):
    args, pattern = CASES[case]
    if "--rlcard" in args:
        needs_module("rlcard.games.uno.game")
    out = subprocess.run([sys.executable, "-m", "arena.cli.main", "bench", *args],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": "40"})
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(pattern, last), last
