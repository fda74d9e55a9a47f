"""``arena conformance PATH...``: run rules test vectors and report each one."""

from __future__ import annotations

import argparse
import sys

from arena.rules.conformance import find_vectors, run_file


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "conformance",
        help="run rules conformance vectors",
        description="Run rules conformance vectors (files, or folders searched for *.json) "
                    "and print one line per vector, then 'N passed, M failed'. Exits 1 when "
                    "any vector fails or is malformed.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="vector file or folder")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    passed = failed = 0
    for path in find_vectors(args.paths):
        if not path.exists():
            print(f"FAIL (malformed) {path}: no such file")
            failed += 1
            continue
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
