"""The console script's own Ctrl-C handling, around everything before a command runs."""

from __future__ import annotations

import pytest

import arena.cli
from arena.cli import main as cli_main


def test_ctrl_c_while_the_command_line_is_read_is_one_line_and_exit_130(monkeypatch, capsys):
    """On a busy machine the imports and parsing take seconds: `timeout -s INT 8 arena
    watch ...` came while the arguments were parsed, and printed a traceback."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "build_parser", interrupted)
    monkeypatch.setattr("sys.argv", ["arena", "watch", "127.0.0.1:1", "--tv"])
    try:
        code = arena.cli.run()
    except KeyboardInterrupt:   # as it escaped before (it would end this whole test run)
        pytest.fail("the KeyboardInterrupt escaped the console script")
    assert code == 130
    assert capsys.readouterr().err == "arena: interrupted\n"
