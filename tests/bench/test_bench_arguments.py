"""Every benchmark's numbers are checked before it runs: a count of 0 was a traceback
(a median of nothing, a division by zero), and --seconds nan ran for ever."""

from __future__ import annotations

import pytest

from arena.cli.main import main


@pytest.mark.parametrize("args, message", [
    (["engine", "--seconds", "nan"], "argument --seconds: nan must be a positive, finite number"),
    (["engine", "--seconds", "-1"], "argument --seconds: -1 must be a positive, finite number"),
    (["referee", "--rounds", "0"], "argument --rounds: 0 must be at least 1"),
    (["referee", "--seconds", "0"], "argument --seconds: 0 must be a positive, finite number"),
    (["tournament", "--repeats", "0"], "argument --repeats: 0 must be at least 1"),
    (["scale", "--games", "0"], "argument --games: 0 must be at least 1"),
    (["watch", "--repeats", "0"], "argument --repeats: 0 must be at least 1"),
    (["ratings", "--seeds", "0"], "argument --seeds: 0 must be at least 1"),
    (["ratings", "--table-size", "9"], "argument --table-size: 9 is not a table size: 2 to 8"),
    (["ratings", "--coverage", "--fields", "-1"], "argument --fields: -1 must be at least 1"),
    (["load", "--matches", "x"], "argument --matches: 'x' is not a whole number"),
    (["fuzz", "--examples", "0"], "argument --examples: 0 must be at least 1"),
    (["fuzz", "--seconds", "inf"], "argument --seconds: inf must be a positive, finite number"),
    (["fuzz", "--seconds", "-1"], "argument --seconds: -1 must be a positive, finite number"),
])
def test_a_bad_number_is_one_line_and_exit_2_before_anything_runs(capsys, args, message):
    with pytest.raises(SystemExit) as exit:
        main(["bench", *args])
    out = capsys.readouterr()
    assert exit.value.code == 2 and out.out == ""
    line = out.err.splitlines()[-1]
    assert line.startswith(f"arena bench {args[0]}: error: ") and message in line
    assert "Traceback" not in out.err
