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


def _commands(parser, prefix=("arena",)):
    """Every (sub)command's parser under ``parser``, with its words (``arena bots list``)."""
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name), sub
                yield from _commands(sub, (*prefix, name))


def test_every_command_s_help_says_what_it_does_and_arena_help_the_exit_statuses():
    """`arena bots list --help` (and remove, logs) showed only its options; the exit
    statuses were said nowhere a user of the command line would look."""
    parser = cli_main.build_parser()
    commands = dict(_commands(parser))
    assert len(commands) > 20
    for words, sub in commands.items():
        assert sub.description and len(sub.description) > 30, " ".join(words)
    text = " ".join(parser.format_help().split())
    assert "Exit status: 0 done; 1 failed" in text and "2 refused as asked" in text, text
    assert "130 stopped by Ctrl-C" in text
    # the commands a stop ends as they are meant to end exit 0 (it said 130 for every one)
    assert "(arena serve, web, watch and replay, which end that way, exit 0)" in text


def _top_commands(parser) -> list[str]:
    return [words[1] for words, _ in _commands(parser) if len(words) == 2]


def test_each_command_is_read_by_its_own_module_alone():
    """Every command imported every command's module (the whole arena, the web viewer,
    numpy): 0.45 s of CPU before any of them began. COMMANDS names each command's module,
    in the order `arena --help` lists them, and a command's parser is its module's alone."""
    assert _top_commands(cli_main.build_parser()) == list(cli_main.COMMANDS)
    for command, module in cli_main.COMMANDS.items():
        alone = _top_commands(cli_main.build_parser(command))
        assert alone == [c for c, m in cli_main.COMMANDS.items() if m == module], command


def test_a_command_imports_no_other_command_s_module():
    import subprocess
    import sys
    script = ("import sys\nfrom arena.cli.main import main\n"
              "try:\n    main(['standings', '--help'])\nexcept SystemExit:\n    pass\n"
              "print(sorted(m for m in sys.modules if m.startswith('arena.cli.')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "usage: arena standings" in done.stdout
    loaded = done.stdout.strip().splitlines()[-1]
    for other in ("serve", "web", "bench", "check_bot", "replay", "watch'", "tournament'"):
        assert f"arena.cli.{other}" not in loaded, loaded
