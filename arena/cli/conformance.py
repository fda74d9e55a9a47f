"""``arena conformance PATH...``: run rules test vectors and report each one.

The files are found and read here, at the edge: :mod:`arena.rules.conformance` runs
parsed vectors only, so the rules package does no I/O."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from arena.rules.conformance import MALFORMED, VectorResult, run_vector
from arena.rules.errors import ConfigError


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``arena conformance PATH...`` to ``sub``."""
    p = sub.add_parser(
        "conformance",
        help="run rules conformance vectors",
        description="Run rules conformance vectors (files, or folders searched for *.json) "
                    "and print one line per vector, then 'N passed, M failed'. Exits 1 when "
                    "any vector fails or is malformed (or none is found), 2 when a PATH is "
                    "not there (nothing is run).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="vector file or folder")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run every vector found, one line each, then the count; 1 if one failed, was
    malformed or none was found. A path that is not there is refused (exit 2) before any
    vector runs: a mistyped name, not a vector that failed."""
    # an empty one (an unset variable) is not the working folder ("" is "." to pathlib)
    if missing := [raw for raw in args.paths if not raw or not Path(raw).exists()]:
        raise ConfigError(f"no such file or folder: {shlex.join(missing)}")
    passed = failed = 0
    for path in find_vectors(args.paths):
        result = run_file(path)
        print(result.line())
        if result.passed:
            passed += 1
        else:
            failed += 1
    if passed + failed == 0:   # exit 1 with no word of why
        print(f"arena conformance: no vector (*.json) found in {' '.join(args.paths)}",
              file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


def find_vectors(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every ``*.json`` file named, or inside a folder named, in sorted order."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.json") if p.is_file())
        else:
            yield path


def run_file(path: Path) -> VectorResult:
    """Load and run the vector in ``path``; an unreadable file is a malformed vector."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return VectorResult(str(path), MALFORMED, f"cannot read it: {exc}")
    except RecursionError:   # it stopped the run: the other vectors' results were lost
        return VectorResult(str(path), MALFORMED, "cannot read it: its JSON nests too deeply")
    name = data.get("name") if isinstance(data, dict) else None
    return run_vector(data, default_name=name if isinstance(name, str) else str(path))
