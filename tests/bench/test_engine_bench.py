"""``arena bench engine --rlcard`` without RLCard installed: a clear refusal, before any
measuring (the summary line with RLCard is checked in test_summary_lines.py)."""

from __future__ import annotations

from support.requirements import needs_module

from arena.bench import engine
from arena.cli.main import main


def test_rlcard_missing_is_refused_with_how_to_install(monkeypatch, capsys):
    monkeypatch.setattr(engine, "rlcard_available", lambda: False)
    assert main(["bench", "engine", "--seconds", "0.01", "--rlcard"]) == 2
    out = capsys.readouterr()
    assert "pip install rlcard" in out.err
    assert "decisions/s" not in out.out     # refused before the table


def test_compare_rlcard_alternates_and_counts_both():
    needs_module("rlcard.games.uno.game")
    ours, theirs = engine.compare_rlcard(0.06, slices=2)
    assert (ours.ruleset, ours.seats, theirs.seats) == ("modern", 4, 4)
    assert ours.decisions > 0 and theirs.decisions > 0
