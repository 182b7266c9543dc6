"""Generated code for other languages is fresh: the Go code committed in
example_bots/go-heuristic/gen/moonv1 is exactly what `make gen-go` makes from proto/ today
(protoc from grpcio-tools, protoc-gen-go and protoc-gen-go-grpc at pinned versions)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_gen_go() -> ModuleType:
    path = ROOT / "tools" / "gen_go.py"
    spec = importlib.util.spec_from_file_location("gen_go", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_go = _load_gen_go()


def test_committed_go_code_is_fresh() -> None:
    if shutil.which("go") is None:
        pytest.skip("the go toolchain is not installed, so protoc-gen-go cannot be built "
                    "(CI has it; `make gen-go` needs it)")
    try:
        stale = gen_go.stale_files()
    except gen_go.GenError as e:
        pytest.fail(f"cannot generate the Go code: {e}")
    assert not stale, (f"the Go code in {gen_go.GO_OUT.relative_to(ROOT)} is stale "
                       f"({', '.join(stale)}): run `make gen-go`")


def test_go_code_covers_every_proto() -> None:
    protos = sorted(p.stem for p in (ROOT / "proto" / "moon" / "v1").glob("*.proto"))
    generated = {p.name for p in gen_go.GO_OUT.glob("*.go")}
    assert protos and all(f"{name}.pb.go" in generated for name in protos)
