"""Generate the Go code of the protocol (proto/moon/v1) for the Go bots; `make gen-go`.

    python tools/gen_go.py            # (re)write example_bots/go-heuristic/gen/moonv1
    python tools/gen_go.py --check    # exit 1 if the committed code is stale
    python tools/gen_go.py --out DIR  # write the code into DIR instead
    python tools/gen_go.py --install  # only install the pinned plugins into tools/bin

protoc is the one in grpcio-tools (pinned in pyproject.toml), the plugins protoc-gen-go and
protoc-gen-go-grpc are installed from the Go module proxy at the versions pinned below into
tools/bin, so the output is the same on every machine. The .proto files have no
`go_package` option: the import path is given with protoc's `M` mapping flags instead, and it
does not appear in the generated code (all three files are one Go package, `moonv1`), so
the same files work in any Go module (`moon new-bot --lang go` copies them).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_DIR = ROOT / "proto"
TOOLS_BIN = ROOT / "tools" / "bin"
GO_OUT = ROOT / "example_bots" / "go-heuristic" / "gen" / "moonv1"
GO_PACKAGE = "moonv1"
IMPORT_PATH = "moonbot/gen/moonv1"  # only used by protoc to decide the package; not emitted
PLUGINS = {
    "protoc-gen-go": ("google.golang.org/protobuf/cmd/protoc-gen-go", "v1.36.12"),
    "protoc-gen-go-grpc": ("google.golang.org/grpc/cmd/protoc-gen-go-grpc", "v1.6.0"),
}


class GenError(Exception):
    """The code cannot be generated (no go toolchain, an install or protoc failure)."""


def go_env() -> dict[str, str]:
    """The environment for the go command: usable without $HOME, no VCS stamping."""
    env = dict(os.environ)
    env.setdefault("GOFLAGS", "-buildvcs=false")
    if not env.get("HOME") and not env.get("GOCACHE"):
        cache = Path(tempfile.gettempdir()) / "moon-go"
        env.setdefault("GOPATH", str(cache / "path"))
        env["GOCACHE"] = str(cache / "cache")
    return env


def _installed_version(binary: Path) -> str | None:
    if not binary.is_file():
        return None
    out = subprocess.run(["go", "version", "-m", str(binary)], capture_output=True, text=True,
                         env=go_env())
    for line in out.stdout.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] == "mod":
            return words[2]
    return None


def install_plugins() -> dict[str, Path]:
    """The plugins in tools/bin, installed (`go install`) if missing or of another version.

    Raises:
        GenError: no go toolchain, or `go install` failed.
    """
    if shutil.which("go") is None:
        raise GenError("the go toolchain is not on PATH (https://go.dev/dl)")
    paths = {}
    for name, (module, version) in PLUGINS.items():
        binary = TOOLS_BIN / name
        if _installed_version(binary) != version:
            env = go_env()
            env["GOBIN"] = str(TOOLS_BIN)
            done = subprocess.run(["go", "install", f"{module}@{version}"], env=env,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise GenError(f"go install {module}@{version} failed:\n{done.stderr}")
        paths[name] = binary
    return paths


def generate(out: Path) -> list[Path]:
    """Write the Go code for every proto/moon/v1/*.proto into ``out`` (replacing the
    ``*.go`` files there); returns the files written.

    Raises:
        GenError: see :func:`install_plugins`, or protoc failed.
    """
    plugins = install_plugins()
    protos = sorted(str(p.relative_to(PROTO_DIR)) for p in PROTO_DIR.glob("moon/v1/*.proto"))
    mapping = [f"M{p}={IMPORT_PATH};{GO_PACKAGE}" for p in protos]
    with tempfile.TemporaryDirectory(prefix="moon-gen-go-") as tmp:
        cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}",
               *(f"--plugin={name}={path}" for name, path in plugins.items()),
               f"--go_out={tmp}", "--go_opt=paths=source_relative",
               *(f"--go_opt={m}" for m in mapping),
               f"--go-grpc_out={tmp}", "--go-grpc_opt=paths=source_relative",
               *(f"--go-grpc_opt={m}" for m in mapping), *protos]
        done = subprocess.run(cmd, cwd=PROTO_DIR, capture_output=True, text=True)
        if done.returncode != 0:
            raise GenError(f"protoc failed:\n{done.stderr}")
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*.go"):
            old.unlink()
        written = []
        for f in sorted((Path(tmp) / "moon" / "v1").glob("*.go")):
            written.append(Path(shutil.copy2(f, out / f.name)))
    return written


def stale_files(committed: Path = GO_OUT) -> list[str]:
    """Files of ``committed`` that differ from a fresh generation (or are missing or
    extra); empty when the committed code is fresh."""
    with tempfile.TemporaryDirectory(prefix="moon-gen-go-check-") as tmp:
        generate(Path(tmp))
        fresh = {p.name for p in Path(tmp).glob("*.go")}
        have = {p.name for p in committed.glob("*.go")}
        differ = [n for n in sorted(fresh & have)
                  if not filecmp.cmp(Path(tmp) / n, committed / n, shallow=False)]
        return sorted((fresh ^ have) | set(differ))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=GO_OUT, help="output folder")
    parser.add_argument("--check", action="store_true",
                        help="only check that the code in --out is fresh")
    parser.add_argument("--install", action="store_true",
                        help="only install the pinned plugins into tools/bin")
    args = parser.parse_args(argv)
    try:
        if args.install:
            for name, path in install_plugins().items():
                print(f"{name} {PLUGINS[name][1]}: {path.relative_to(ROOT)}")
            return 0
        if args.check:
            stale = stale_files(args.out)
            if stale:
                print(f"stale Go code in {args.out}: {', '.join(stale)}; run `make gen-go`",
                      file=sys.stderr)
                return 1
            print(f"{args.out}: fresh")
            return 0
        for f in generate(args.out):
            print(f"wrote {f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}")
    except GenError as e:
        print(f"gen_go: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
