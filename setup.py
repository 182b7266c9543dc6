"""The one build step of moon-arena that pyproject.toml cannot declare: the CLI needs the
repository's top-level ``example_bots/`` and ``proto/`` at run time (``moon play heuristic
random``, ``moon new-bot --lang node``), so

- the sdist carries those folders as they are in the repository (``sdist`` below), and
- the wheel carries copies of them in ``arena/_data/`` (``build_py`` below), which
  ``arena.bots.resources`` finds when the arena is installed.

Both are made from the folders themselves at every build, with one rule for what is left
out (:func:`bundled_files`: build outputs, caches, stamps); the repository holds no copy
that could go stale, and ``tests/packaging`` compares a built wheel with ``git ls-files``.
Everything else (metadata, dependencies, package data) is in pyproject.toml.
"""

from __future__ import annotations

import runpy
import shlex
import shutil
import tomllib
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
BUNDLED: tuple[str, ...] = runpy.run_path(str(ROOT / "arena" / "bots" / "resources.py"))["BUNDLED"]
DATA = Path("arena") / "_data"
SKIP_DIRS = {"node_modules", "target", "__pycache__", ".venv", ".git", ".mypy_cache",
             ".pytest_cache", ".ruff_cache"}
"""Folders never copied: dependencies, build outputs and caches of the bots' toolchains."""
SKIP_FILES = {".build-stamp", ".build-lock", ".DS_Store"}
SKIP_SUFFIXES = {".pyc", ".pyo"}


def _built_programs(folder: Path) -> set[Path]:
    """What a bot's build makes and its ``run`` starts by a path (``./bot`` after ``go
    build -o bot .``): a build output, not a source."""
    manifest = folder / "bot.toml"
    if not manifest.is_file():
        return set()
    try:
        data = tomllib.loads(manifest.read_text())
        words = shlex.split(str(data.get("run", "")))
    except (tomllib.TOMLDecodeError, ValueError):
        return set()
    if not data.get("build") or not words or "/" not in words[0]:
        return set()
    return {(folder / words[0]).resolve()}


def bundled_files(top: str, repository: Path = ROOT) -> list[Path]:
    """The files of the folder ``top`` of ``repository`` that the packages carry, relative
    to ``repository``, sorted: every file but those in :data:`SKIP_DIRS`, the bots' build
    stamps and locks, compiled Python, and each bot's built program.

    Raises:
        SystemExit: the folder is missing (a build from an incomplete tree).
    """
    root = repository / top
    if not root.is_dir():
        raise SystemExit(f"setup.py: {root} is missing: build from a checkout or an sdist")
    built: set[Path] = set()
    for manifest in root.rglob("bot.toml"):
        built |= _built_programs(manifest.parent)
    found = []
    for path in root.rglob("*"):
        rel = path.relative_to(repository)
        if (path.is_dir() or SKIP_DIRS & set(rel.parts) or path.name in SKIP_FILES
                or path.suffix in SKIP_SUFFIXES or path.resolve() in built):
            continue
        found.append(rel)
    return sorted(found)


def _copy(files: list[Path], dest: Path) -> None:
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)


class BuildPy(build_py):
    """``build_py`` that also copies the bundled folders into ``arena/_data/`` of the build
    (not in an editable install, which reads the checkout's folders directly)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = Path(self.build_lib) / DATA
        shutil.rmtree(dest, ignore_errors=True)  # a build folder left from an earlier build
        for top in BUNDLED:
            _copy(bundled_files(top), dest)


class Sdist(sdist):
    """``sdist`` that also puts the bundled folders, as they are in the repository, into
    the source archive (so that a wheel built from it has them)."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        for top in BUNDLED:
            _copy(bundled_files(top), Path(base_dir))


if __name__ == "__main__":  # as setuptools runs it (tests import bundled_files)
    setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
