"""The house's layering: every module imports alone, and imports point one way.

1. Every module of ``arena`` and ``moon_sdk`` imports alone in a fresh interpreter (a
   cycle between two modules shows here as an ImportError of the one imported first; in
   the manner of pip-tools' ``test_circular_imports``).
2. Every import between two of arena's packages, wherever it stands (top of a module,
   inside a function, under ``TYPE_CHECKING``), is an edge of :data:`ALLOWED`: the core
   imports nothing above it, the web pages never import the host, the SDK imports no arena
   code. docs/architecture.md draws the same table.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SDK = ROOT / "sdk" / "python"

_RULES = {"core", "errors"}
_WIRE = _RULES | {"protocol", "records"}
_PLAY = _WIRE | {"referee", "bots", "sandbox", "executor"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "core": {"errors"},
    "protocol": {"core", "errors"},
    "records": {"core", "errors", "protocol"},
    "referee": _WIRE,
    "bots": {"core", "errors"},
    "sandbox": {"core", "errors", "bots"},
    "executor": _WIRE | {"referee", "bots", "sandbox"},
    "cluster": _PLAY,
    "check": _PLAY,
    "stats": set(),
    "ladder": _PLAY | {"cluster", "stats"},
    "web": _WIRE | {"bots", "stats", "ladder"},
    "host": _PLAY | {"cluster", "check", "stats", "ladder", "web", "table"},
    "table": _PLAY | {"web"},
    "cli": _PLAY | {"cluster", "check", "stats", "ladder", "web", "host", "table"},
}
"""Package → the packages it may import (``arena/__init__.py``, the version, is open to
all). Lower layers never import higher ones."""


def _modules(top: Path, package: str) -> dict[str, Path]:
    """Every module under ``top/package`` (templates and migrations are data, not code)."""
    out = {}
    for p in sorted((top / package).rglob("*.py")):
        rel = p.relative_to(top).with_suffix("")
        if {"templates", "alembic", "v1"} & set(rel.parts):
            continue
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


ARENA = _modules(ROOT, "arena")
MOON_SDK = _modules(SDK, "moon_sdk")


def _imports(module: str, path: Path) -> list[str]:
    """The absolute names of every module ``path`` imports, anywhere in it."""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = base[: len(base) - (node.level - 1)]
                target = ".".join(up + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append(target)
            found += [f"{target}.{a.name}" for a in node.names if target == "arena"]
    return found


def _package(module: str) -> str:
    """``arena.core.text`` → ``core``; ``arena.errors`` → ``errors``; ``arena`` → ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_table_names_every_package():
    packages = {_package(m) for m in ARENA} - {""}
    assert packages == set(ALLOWED), packages ^ set(ALLOWED)


def test_imports_between_packages_follow_the_table():
    wrong = []
    for module, path in ARENA.items():
        here = _package(module)
        for target in _imports(module, path):
            there = _package(target) if target.startswith("arena.") else ""
            if target.split(".")[0] != "arena" or there in ("", "__version__", here):
                continue
            if there not in ALLOWED.get(here, set()):
                wrong.append(f"{module} imports {target} ({here} -> {there})")
    assert wrong == []


def test_every_import_of_arena_names_a_module_that_exists():
    # an import inside a function runs only when it is called: a module that moved and was
    # imported there under its old name fails here, not in a user's hands
    files = {**ARENA, **{f"tests.{p.stem}": p for p in (ROOT / "tests").rglob("*.py")},
             **{f"benchmarks.{p.stem}": p for p in (ROOT / "benchmarks").rglob("*.py")}}
    wrong = [f"{path.relative_to(ROOT)} imports {t}" for m, path in files.items()
             for t in _imports(m, path)
             if t.split(".")[0] == "arena" and t not in ARENA
             and t.rpartition(".")[0] not in ARENA and t != "arena.no_such_module"]
    assert wrong == []


def test_no_submodule_shadows_a_name_of_its_package():
    # `from arena.sandbox import build` gave the function until arena/sandbox/build.py
    # existed; once anything imported that module, the package's `build` was the module
    wrong = []
    for module, path in ARENA.items():
        if path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text())
        names = {n.name for n in tree.body
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        names |= {t.id for n in tree.body if isinstance(n, ast.Assign)
                  for t in n.targets if isinstance(t, ast.Name)}
        wrong += [f"{module}.{n}" for n in sorted(names) if f"{module}.{n}" in ARENA]
    assert wrong == []


# The steps of a build, called by the one build entry point (arena.sandbox.build) alone.
BUILD_STEPS = {"run_build_command", "build_image"}


def _calls(path: Path) -> set[str]:
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr
            for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name | ast.Attribute)}


def test_every_build_goes_through_the_one_entry_point():
    # a second way into a build (a host, a check, a CLI calling the build command or the
    # image build itself) would skip what the entry point decides: the runner, the
    # refusal of an untrusted Docker bot's host build, the log
    wrong = [f"{module} calls {step}" for module, path in ARENA.items()
             if module != "arena.sandbox" for step in sorted(_calls(path) & BUILD_STEPS)]
    assert wrong == []
    assert _calls(ARENA["arena.sandbox"]) >= BUILD_STEPS  # the check looks at real names


def test_the_sdk_imports_no_arena_code():
    wrong = [f"{m} imports {t}" for m, p in MOON_SDK.items() for t in _imports(m, p)
             if t == "arena" or t.startswith("arena.")]
    assert wrong == []


def test_the_table_would_catch_a_wrong_edge(tmp_path):
    # the check itself: a web module that imports the host is named
    bad = tmp_path / "arena" / "web" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f():\n    from ..host import service\n")
    found = _imports("arena.web.bad", bad)
    assert found == ["arena.host"]
    assert _package(found[0]) not in ALLOWED["web"]


ALONE = sorted(m for m in [*ARENA, *MOON_SDK] if not m.endswith("__main__"))


@pytest.mark.slow  # a fresh interpreter each: about a minute in all; the full tier
@pytest.mark.parametrize("module", ALONE)
def test_every_module_imports_alone(module):
    # one test a module, so that the slow tier's workers share them out
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, (done.stderr.strip().splitlines() or ["?"])[-1]
