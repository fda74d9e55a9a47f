"""arena new-bot: a starter in each language that passes check-bot as written, and the
three starters playing one match; refusals that say what is wrong."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.processes import env_for, processes_marked
from support.requirements import missing

from arena.bots.templates import REPO, new_bot
from arena.rules.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
NEEDS = {"python": [], "node": ["node", "npm"], "cpp": ["cmake", "protoc", "grpc_cpp_plugin"]}


def arena(mark: str, *args, timeout: float = 600, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "arena.cli.main", *map(str, args)], cwd=cwd,
                          env=env_for(mark), capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert processes_marked(mark) == [], "bot processes left running"
    return proc


def require(lang: str) -> None:
    absent = [tool for tool in NEEDS[lang] if shutil.which(tool) is None]
    if absent:
        missing(f"a {lang} bot needs {', '.join(absent)} (see clients/{lang}/README.md)")


@pytest.fixture(scope="module")
def starters(tmp_path_factory):
    """One starter per language, written by the real command."""
    folder = tmp_path_factory.mktemp("starters")
    made = {}
    for lang in NEEDS:
        value = f"new-bot-{lang}"
        proc = subprocess.run([sys.executable, "-m", "arena.cli.main", "new-bot",
                               str(folder / f"my-{lang}"), "--lang", lang, "--name", value],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == f"next: arena check-bot {folder / f'my-{lang}'}"
        made[lang] = folder / f"my-{lang}"
    return made


@pytest.mark.timeout(900)
@pytest.mark.parametrize("lang", list(NEEDS))
def test_each_starter_passes_check_bot_as_written(starters, mark, lang):
    require(lang)
    folder = starters[lang]
    assert (folder / "bot.toml").exists() and (folder / "README.md").exists()
    proc = arena(mark, "check-bot", folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == f"check-bot: new-bot-{lang}: 13 passed, 0 failed"


@pytest.mark.timeout(900)
def test_a_match_between_the_three_starters_finishes(starters, mark, tmp_path):
    for lang in NEEDS:
        require(lang)
    proc = arena(mark, "match", *starters.values(), "--games", 2, "-q", "--out", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for game in (1, 2):
        assert f"game {game} (seed " in proc.stdout
    assert "3 game(s)" not in proc.stdout and "2 game(s)" in proc.stdout
    assert "verdict" not in proc.stdout


def test_inside_the_repository_the_sdk_path_is_relative(tmp_path):
    folder = REPO / "bots" / f".new-bot-test-{tmp_path.name}"
    try:
        new_bot(folder, "node", "rel")
        assert "require(process.env.ONO99_NODE_SDK || \"../../clients/node\")" in (folder / "bot.js").read_text()
        shutil.rmtree(folder)
        new_bot(folder, "cpp", "rel")
        assert 'set(ONO99_CPP_CLIENT "../../clients/cpp"' in (folder / "CMakeLists.txt").read_text()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    outside = tmp_path / "out"
    new_bot(outside, "node", "abs")
    assert f"|| \"{REPO / 'clients' / 'node'}\")" in (outside / "bot.js").read_text()


def test_the_commands_its_readme_gives_work_from_where_it_was_made(tmp_path, mark):
    """Made outside the repository, its README said `arena match mine bots/counter`, and
    there is no bots/counter there: the sample bots are named as they are reached from
    where the bot was made."""
    proc = arena(mark, "new-bot", "mine", "--lang", "python", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    readme = (tmp_path / "mine" / "README.md").read_text()
    args = shlex.split(re.search(r"Play it: `arena ([^`]+)`", readme).group(1))
    assert args[:3] == ["match", "mine", str(REPO / "bots" / "counter")], args
    args[args.index("--games") + 1] = "1"
    proc = arena(mark, *args, "-q", "--out", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_its_readme_runs_a_python_bot_by_hand_with_the_arena_s_python(tmp_path, mark):
    """It said `python bot.py`: a Python other than the arena's finds no ono99 (the SDK is
    installed with the arena), so the line failed as written."""
    new_bot(tmp_path / "mine", "python")
    readme = " ".join((tmp_path / "mine" / "README.md").read_text().split())
    args = shlex.split(re.search(r"Run it by hand against a referee[^`]*: `([^`]+)`", readme)[1])
    assert args[:2] == [sys.executable, "bot.py"], args
    proc = subprocess.run([*args[:2], "--referee", f"unix:{tmp_path}/nobody.sock", "--token", "t",
                           "--connect-timeout", "0.5"], cwd=tmp_path / "mine", env=env_for(mark),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4 and "no referee" in proc.stderr, proc.stderr   # the SDK found


def test_the_language_may_be_given_as_language_too(tmp_path, mark):
    """`--language node` was "the following arguments are required: --lang"."""
    proc = arena(mark, "new-bot", tmp_path / "x", "--language", "node")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "x" / "bot.js").exists()


@pytest.mark.parametrize("args, words", [
    (["--lang", "python", "--name", "has space"], ["bot name 'has space' is not allowed"]),
    (["--lang", "python", "--name=-dash"], ["bot name '-dash' is not allowed"]),
])
def test_refusals_say_what_is_wrong(tmp_path, mark, args, words):
    proc = arena(mark, "new-bot", tmp_path / "x", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    for word in words:
        assert word in proc.stderr
    assert not (tmp_path / "x").exists()


def test_an_existing_folder_is_never_overwritten(tmp_path, mark):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.py").write_text("keep me\n")
    proc = arena(mark, "new-bot", tmp_path / "taken", "--lang", "python")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"arena new-bot: error: {tmp_path / 'taken'} already exists and "
                                   "is not an empty folder; choose a new one")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.py"]
    with pytest.raises(ConfigError, match="--lang 'rust' is not known"):
        new_bot(tmp_path / "r", "rust")


def test_a_folder_that_cannot_be_made_is_one_line(tmp_path, mark):
    """A folder under /proc (or on a read-only or full disk) was a FileNotFoundError
    traceback."""
    proc = arena(mark, "new-bot", "/proc/ono99-new-bot", "--lang", "python")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("arena new-bot: error: cannot write the bot to /proc/ono99-new-bot: "
                           "no such file or directory\n")
