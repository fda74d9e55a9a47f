"""The generated stubs committed in clients/python/ono99/v1 match proto/ono99/v1 exactly.

After editing a .proto, regenerate with ``python clients/python/generate.py`` and commit
the result. The generated code names the protoc/grpcio-tools version that produced it,
so this test also fails when the installed grpcio-tools differs from that version.
"""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATE = ROOT / "clients" / "python" / "generate.py"
COMMITTED = ROOT / "clients" / "python" / "ono99" / "v1"
GENERATED_NAMES = re.compile(r".*_pb2(_grpc)?\.pyi?$")


def test_committed_stubs_are_what_generate_py_writes(tmp_path):
    proc = subprocess.run([sys.executable, str(GENERATE), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    fresh = {p.name: p for p in (tmp_path / "ono99" / "v1").iterdir()}
    committed = {p.name: p for p in COMMITTED.iterdir() if GENERATED_NAMES.match(p.name)}
    assert {"game_pb2.py", "referee_pb2.py", "referee_pb2_grpc.py"} <= set(fresh)
    assert sorted(fresh) == sorted(committed), "generated and committed stub files differ in name"
    stale = []
    for name, path in sorted(fresh.items()):
        new, old = path.read_bytes(), committed[name].read_bytes()
        if new != old:
            diff = difflib.unified_diff(old.decode(errors="replace").splitlines(),
                                        new.decode(errors="replace").splitlines(),
                                        f"committed/{name}", f"generated/{name}", lineterm="", n=1)
            stale.append("\n".join(list(diff)[:20]))
    assert not stale, ("stubs are out of date; run `python clients/python/generate.py`:\n"
                       + "\n\n".join(stale))
