"""``arena.web`` (templates, static files, view models) is below the host and the CLI: no
module of it imports ``arena.host`` or ``arena.cli``, at the top or inside a function,
absolutely or relatively."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "arena" / "web"
ABOVE = ("arena.host", "arena.cli")


def package_of(path: Path) -> str:
    """The package a module of the repository is in (``arena.web`` for its files)."""
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__") if path.name == "__init__.py" \
        else name.rpartition(".")[0]


def imported(path: Path, package: str) -> list[str]:
    """Every module the module ``path`` of ``package`` imports, by its absolute name
    (``from . import x`` as ``package`` and ``package.x``)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                up = parts[:len(parts) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            names += [base] + [f"{base}.{a.name}" for a in node.names]
    return names


def above(name: str) -> bool:
    return any(name == top or name.startswith(top + ".") for top in ABOVE)


def test_the_check_reads_relative_and_nested_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..host import service\n"
                     "    from .. import cli\n    import arena.host.app\n"
                     "    from .render import html_page\n")
    assert sorted(n for n in imported(probe, "arena.web") if above(n)) == [
        "arena.cli", "arena.host", "arena.host.app", "arena.host.service"]
    assert package_of(WEB / "views.py") == package_of(WEB / "__init__.py") == "arena.web"
    assert not above("arena.hostile") and above("arena.cli.replay")


MODULES = sorted(WEB.rglob("*.py"))


def test_web_has_modules() -> None:
    assert {"templating.py", "replay.py", "views.py"} <= {p.name for p in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_web_imports_nothing_from_the_host_or_the_cli(path: Path) -> None:
    bad = [n for n in imported(path, package_of(path)) if above(n)]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
