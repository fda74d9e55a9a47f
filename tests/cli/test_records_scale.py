"""`arena standings`, `arena matches` on a long ladder's database: what they read stays
bounded by what they print, not by the matches stored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.matches import grow_ladder, store_ladder

ROOT = Path(__file__).resolve().parents[2]

#: Runs an arena command in this process, then prints its peak memory (MiB) on stderr:
#: VmHWM, this program's own (getrusage's ru_maxrss keeps the parent's across exec).
_MEASURED = ("import re, sys\n"
             "from arena.cli.main import main\n"
             "rc = main(sys.argv[1:])\n"
             "sys.stdout.flush()\n"
             "status = open('/proc/self/status').read()\n"
             "print(int(re.search(r'VmHWM:\\s+(\\d+) kB', status)[1]) // 1024, file=sys.stderr)\n"
             "sys.exit(rc)\n")


def _measured(*args) -> tuple[str, int]:
    """``arena ARGS``'s output and its peak memory in MiB."""
    proc = subprocess.run([sys.executable, "-c", _MEASURED, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, int(proc.stderr.splitlines()[-1])


def test_standings_and_matches_of_a_long_ladder_read_a_page_at_a_time(tmp_path):
    """Both read every match whole, as records (4 KB each): `arena matches --limit 5` on
    a ladder of 100,000 matches took 300 MiB more than on 50 to print five of them. Now `matches --limit`
    reads the last ones only, `matches --json` and `standings` a page at a time (and
    `standings` of a ladder starts from its snapshot, when the server saved one)."""
    small, db = tmp_path / "small.db", tmp_path / "long.db"
    store_ladder(small, bots=8, matches=50)
    store_ladder(db, bots=8, matches=50)
    grow_ladder(db, 1999)                                     # 100,000 matches
    _, baseline = _measured("standings", "ladder", "--db", small, "--json")
    out, peak = _measured("standings", "ladder", "--db", db, "--json")
    assert sum(line["matches"] for line in json.loads(out)["standings"]) == 2 * 100_000
    assert peak - baseline < 40, (baseline, peak)        # 27 MiB more; 302 before
    out, peak = _measured("matches", "ladder", "--db", db, "--limit", 5, "--json")
    assert [m["key"] for m in json.loads(out)] == [f"L{n}" for n in range(99_996, 100_001)]
    assert peak - baseline < 10, (baseline, peak)        # none; 301 before
    out, peak = _measured("matches", "ladder", "--db", db, "--json")
    assert out.count('"key": ') == 100_000
    assert peak - baseline < 40, (baseline, peak)        # 26 MiB more; 923 before
