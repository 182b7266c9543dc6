"""Bot versions: a version is the content hash of its folder.

The hash covers what makes the bot (its sources and its ``bot.toml``), not what a build
makes or leaves behind: build outputs (``node_modules``, ``target``, ``__pycache__``,
virtualenvs, and whatever the bot's ``bot.toml`` lists in ``outputs``, such as a Go
build's ``bot`` or a CMake ``build/`` folder), the build stamp and lock files, and
version-control folders are skipped, so the same sources always give the same version on
every machine, built or not. Results,
ratings and pages are keyed by version; people see it as ``name@abc123`` (the first
:data:`SHORT` hex digits).
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "target", "__pycache__",
                       ".venv", "venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
"""Folders that are never part of a version (VCS data, build outputs, caches)."""
SKIP_FILES = frozenset({".build-stamp", ".build-lock", ".DS_Store"})
"""Files that are never part of a version (the build stamp and lock of
:mod:`arena.sandbox.stamps`)."""
SKIP_SUFFIXES = (".pyc", ".pyo")
SHORT = 12
"""Hex digits of the hash shown in ``name@hash``."""


def declared_outputs(folder: Path) -> tuple[str, ...]:
    """What the ``bot.toml`` in ``folder`` lists in ``outputs`` (the paths its ``build``
    writes, relative to the folder, ``/``-separated, without a trailing ``/``); empty when
    it lists none or cannot be read (:func:`arena.bots.manifest.load_bot` reports a bad one)."""
    try:
        data = tomllib.loads((folder / "bot.toml").read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return ()
    outputs = data.get("outputs", ())
    if not isinstance(outputs, list):
        return ()
    return tuple(o.strip().strip("/") for o in outputs
                 if isinstance(o, str) and o.strip().strip("/"))


def is_output(rel: str, outputs: tuple[str, ...]) -> bool:
    """True if the ``/``-separated relative path ``rel`` is one of ``outputs`` or lies in
    one of them (an output names a file or a whole folder)."""
    return any(rel == o or rel.startswith(o + "/") for o in outputs)


def version_files(folder: Path) -> list[Path]:
    """The files that make a bot version, as paths relative to ``folder``, sorted: every
    file but those of :data:`SKIP_DIRS`, :data:`SKIP_FILES` and :data:`SKIP_SUFFIXES`, and
    the ``outputs`` its ``bot.toml`` declares (:func:`declared_outputs`).

    Symbolic links are included as links (their target text), never followed: a link to
    a folder too, so what it points at is part of the version.
    """
    outputs = declared_outputs(folder)
    out: list[Path] = []
    for root, dirs, files in os.walk(folder):
        here = Path(root).relative_to(folder)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                         and not is_output((here / d).as_posix(), outputs))
        out += [here / d for d in dirs if os.path.islink(os.path.join(root, d))]
        for name in files:
            if name in SKIP_FILES or name.endswith(SKIP_SUFFIXES):
                continue
            rel = here / name
            if not is_output(rel.as_posix(), outputs):
                out.append(rel)
    return sorted(out, key=lambda p: p.as_posix())


def bot_version(folder: str | Path) -> str:
    """The version of the bot in ``folder``: the sha256 (64 hex digits) of every file of
    :func:`version_files` — its relative path, whether it is executable or a link, and its
    bytes — in path order. Renaming, editing or chmod-ing a source changes it; building,
    or copying the folder elsewhere, does not.

    Raises:
        FileNotFoundError: ``folder`` is not a folder.
    """
    base = Path(folder)
    if not base.is_dir():
        raise FileNotFoundError(f"{folder}: not a folder")
    h = hashlib.sha256()
    for rel in version_files(base):
        path = base / rel
        name = rel.as_posix().encode()
        if path.is_symlink():
            kind, data = b"l", os.readlink(path).encode()
            h.update(kind + len(name).to_bytes(4, "big") + name
                     + len(data).to_bytes(8, "big") + data)
            continue
        kind = b"x" if os.access(path, os.X_OK) else b"f"
        h.update(kind + len(name).to_bytes(4, "big") + name
                 + path.stat().st_size.to_bytes(8, "big"))
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 16), b""):
                h.update(chunk)
    return h.hexdigest()


def version_label(name: str, version: str) -> str:
    """How people see a version: ``name@`` and the first :data:`SHORT` digits of the
    hash (``heuristic@3f2a9c01b7de``)."""
    return f"{name}@{version[:SHORT]}"
