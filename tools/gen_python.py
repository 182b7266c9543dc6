"""Generate the Python protocol code (``moon_sdk.v1``) from ``proto/moon/v1``.

protoc names a generated module after its proto path (``moon/v1/game.proto`` ->
``moon.v1.game_pb2``) and imports its dependencies by that absolute name. The SDK ships
them as ``moon_sdk.v1`` instead, so that installing a bot's one dependency never adds a
top-level package called ``moon`` that could clash with another: the imports between the
generated modules are made relative (``from . import game_pb2``). The proto package, the
message and service names and the descriptors' file names stay ``moon.v1`` and
``moon/v1/*.proto``: the wire protocol and server reflection are unchanged.

    python tools/gen_python.py            # regenerate sdk/python/moon_sdk/v1 (`make proto`)
    python tools/gen_python.py --check    # exit 1 when the committed files are stale

:func:`generate` is also what ``tests/test_proto.py`` compares the committed files with.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_DIR = ROOT / "proto"
OUT_DIR = ROOT / "sdk" / "python" / "moon_sdk" / "v1"
PATTERNS = ("*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py")
_ABSOLUTE = re.compile(r"^from moon\.v1 import ", re.MULTILINE)


def generate() -> dict[str, str]:
    """Run protoc (grpcio-tools, pinned in pyproject.toml) on every ``proto/moon/v1/*.proto``
    and return ``{file name: text}`` of the generated modules, imports made relative.

    Raises:
        subprocess.CalledProcessError: protoc failed (its stderr is in the exception).
    """
    protos = sorted(str(p.relative_to(ROOT)) for p in (PROTO_DIR / "moon" / "v1").glob("*.proto"))
    with tempfile.TemporaryDirectory(prefix="moon-gen-") as tmp:
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", "-I", "proto",
             f"--python_out={tmp}", f"--pyi_out={tmp}", f"--grpc_python_out={tmp}", *protos],
            cwd=ROOT, check=True, capture_output=True, text=True)
        gen = Path(tmp) / "moon" / "v1"
        return {p.name: _ABSOLUTE.sub("from . import ", p.read_text())
                for pattern in PATTERNS for p in sorted(gen.glob(pattern))}


def committed() -> dict[str, str]:
    """``{file name: text}`` of the generated modules committed in ``moon_sdk/v1``."""
    return {p.name: p.read_text() for pattern in PATTERNS for p in sorted(OUT_DIR.glob(pattern))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the committed files differ from what protoc generates")
    args = parser.parse_args()
    fresh = generate()
    if args.check:
        stale = sorted(set(fresh) ^ set(committed()) | {
            n for n, text in committed().items() if fresh.get(n) != text})
        if stale:
            print(f"stale: {', '.join(stale)}: run `make proto`", file=sys.stderr)
            return 1
        return 0
    for old in committed():
        (OUT_DIR / old).unlink()
    for name, text in fresh.items():
        (OUT_DIR / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
