"""Settings and fixtures for every test."""

import fcntl
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from support.postgres import postgres_ascii_url, postgres_server, postgres_url  # noqa: F401 (fixtures for every test)
from support.processes import bot_env_names, mark  # noqa: F401 (mark: a fixture for every test)
from support.requirements import missing

NODE_SDK = Path(__file__).resolve().parents[1] / "clients" / "node"

# Unix sockets have paths of at most 107 bytes, and the suite makes them in its temporary
# folders: a test's own (pytest-of-USER/pytest-N/popen-gwN/TEST_NAME0/ref.sock: some 85
# bytes below the temporary folder), its bots', a Ray node's session (68). Under a
# temporary folder deeper than SHORT_TMP bytes, the whole run (this process and the ones
# it starts) uses one of its own in /tmp. The arena itself copes with a deep one:
# tests/referee/test_servicer_limits.py, tests/test_rpc.py and tests/tournament/test_ray.py
# try it.
SHORT_TMP = 20
if len(os.fsencode(os.path.realpath(tempfile.gettempdir()))) > SHORT_TMP:
    # readable by others, as /tmp is: PostgreSQL's tests run initdb as the postgres user
    # (the suite as root) in a folder under it
    short = f"/tmp/ono99-tests-{os.getuid()}"
    os.makedirs(short, mode=0o755, exist_ok=True)
    held = os.lstat(short)
    if not stat.S_ISDIR(held.st_mode) or held.st_uid != os.getuid() or held.st_mode & 0o022:
        short = tempfile.mkdtemp(prefix="ono99-tests-", dir="/tmp")   # not ours: a fresh one
    os.chmod(short, 0o755)
    os.environ["TMPDIR"] = tempfile.tempdir = short

# The arena passes a bot none of its own environment but the variables named here: the
# mark tests find leftover processes by, and the rogue bot's settings (with those the
# runner named, e.g. PYTHONPATH in a git worktree: see support.processes.bot_env_names).
os.environ["ONO99_BOT_ENV"] = bot_env_names()

# The commands the tests start get Ctrl-C and a hangup as from a terminal, however the suite
# itself was started: a shell's background job (`pytest &` in a script) ignores SIGINT, and
# `nohup pytest` SIGHUP, and an ignored signal stays ignored across exec, so the arena under
# test ignored the Ctrl-C a test sent it (7 tests failed under `nohup ... &`). A handler of
# this process's own is reset to the default action by exec; this process still ignores
# what it was told to.
for _signal in (signal.SIGINT, signal.SIGHUP):
    if signal.getsignal(_signal) == signal.SIG_IGN:
        signal.signal(_signal, lambda *_: None)


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` program, with clients/node's dependencies installed (``npm ci`` once,
    when node_modules is missing or older than package-lock.json). Skips only when node
    itself is missing."""
    program = shutil.which("node")
    if program is None:
        missing("node is not installed: the Node.js SDK (clients/node) needs node >= 20")
    version = subprocess.run([program, "--version"], capture_output=True, text=True, check=True).stdout
    major = int(version.strip().lstrip("v").split(".")[0])
    assert major >= 20, f"clients/node needs node >= 20, this is {version.strip()}"
    installed = NODE_SDK / "node_modules" / ".package-lock.json"
    lock = NODE_SDK / "package-lock.json"
    # the suite's workers (pytest-xdist) each ask: one installs while the others wait
    with open(NODE_SDK / ".npm-ci.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
            npm = shutil.which("npm")
            assert npm is not None, "npm is needed to install clients/node's dependencies (npm ci)"
            proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_SDK,
                                  capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, f"npm ci in {NODE_SDK} failed:\n{proc.stdout}\n{proc.stderr}"
    return program
