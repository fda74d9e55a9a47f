"""Regenerate the Python stubs of the protocol from ../../proto (needs grpcio-tools).

    python clients/python/generate.py            # rewrite clients/python/ono99/v1/*_pb2*.py
    python clients/python/generate.py --out DIR  # write them under DIR instead (the tests compare)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE.parent.parent / "proto"
PROTOS = ("ono99/v1/game.proto", "ono99/v1/referee.proto", "ono99/v1/organizer.proto",
          "ono99/v1/spectator.proto")


def generate(out: Path) -> None:
    from grpc_tools import protoc

    out.mkdir(parents=True, exist_ok=True)
    args = ["protoc", f"-I{PROTO_ROOT}", f"--python_out={out}", f"--pyi_out={out}",
            f"--grpc_python_out={out}", *(str(PROTO_ROOT / p) for p in PROTOS)]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    # game.proto has no service: its empty gRPC module is noise
    (out / "ono99" / "v1" / "game_pb2_grpc.py").unlink(missing_ok=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    generate(parser.parse_args().out)
    sys.exit(0)
