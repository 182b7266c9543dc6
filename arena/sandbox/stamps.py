"""Build bot folders when they need it: `make bots` and the tests use this.

    python -m arena.sandbox.stamps example_bots/*     # build what is stale, skip what is fresh
    python -m arena.sandbox.stamps --force DIR...     # build anyway

A bot is built by the sandbox's one build entry point (:func:`arena.sandbox.build`). A
``.build-stamp`` file in its folder records a successful build: the bot is stale when a
file of the folder is newer than the stamp (dependency and output folders such as
``node_modules`` and ``target`` aside), when the build command changed, or when the
built program is gone. A lock file keeps two builds of one folder from running at once
(several `make test` runs may share a checkout). A bot whose build tool is not installed
(no ``go`` on PATH, say), or is installed but does not run (a rustup ``cargo`` with no
default toolchain, as a changed HOME leaves it), is skipped with the reason, not failed.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from ..bots.manifest import BotSpec, load_bot
from ..bots.versions import declared_outputs, is_output
from ..errors import ArenaError
from . import build

STAMP = ".build-stamp"
LOCK = ".build-lock"
SKIP_DIRS = {"node_modules", "target", ".git", "__pycache__", ".venv"}


VERSION_ARGS = {"cargo": ["--version"], "rustc": ["--version"], "go": ["version"],
                "node": ["--version"], "npm": ["--version"], "npx": ["--version"],
                "cmake": ["--version"], "make": ["--version"], "mvn": ["--version"],
                "gradle": ["--version"], "java": ["-version"], "javac": ["-version"],
                "dotnet": ["--version"], "g++": ["--version"], "gcc": ["--version"],
                "clang++": ["--version"]}
"""How to ask a known toolchain program whether it runs (its version); an unknown program
is only looked for on PATH."""
VERSION_TIMEOUT_S = 60.0
"""How long a toolchain program may take to say its version, seconds (a rustup proxy that
installs a toolchain on first use would take longer, and is then taken as not running)."""


def missing_tool(spec: BotSpec) -> str | None:
    """Why the bot cannot be built or run here, in one line, or None: its build or run
    program is not on PATH, or is a known toolchain program (:data:`VERSION_ARGS`) that
    does not run (``cargo --version`` fails: a rustup proxy with no default toolchain)."""
    for command in (spec.build, spec.run):
        words = shlex.split(command) if command else []
        if not words or words[0] == "{python}" or "/" in words[0]:
            continue
        if shutil.which(words[0]) is None:
            return f"{words[0]!r} is not on PATH"
        if words[0] in VERSION_ARGS:
            probe = [words[0], *VERSION_ARGS[words[0]]]
            try:
                done = subprocess.run(probe, cwd=spec.folder, capture_output=True,
                                      text=True, errors="replace", stdin=subprocess.DEVNULL,
                                      timeout=VERSION_TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired) as e:
                return f"{' '.join(probe)!r} does not run: {e}"
            if done.returncode != 0:
                said = next((line.strip() for line in (done.stderr + done.stdout).splitlines()
                             if line.strip()), "")
                return (f"{' '.join(probe)!r} failed (exit {done.returncode})"
                        + (f": {said[:160]}" if said else ""))
    return None


def _inputs(folder: Path) -> Iterator[Path]:
    """The files of ``folder`` a build reads: not its outputs (:data:`SKIP_DIRS`, the
    ``outputs`` its bot.toml declares), stamp or lock."""
    outputs = declared_outputs(folder)
    for root, dirs, files in os.walk(folder):
        here = Path(root).relative_to(folder)
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS
                   and not is_output((here / d).as_posix(), outputs)]
        for name in files:
            if name not in (STAMP, LOCK) and not is_output((here / name).as_posix(), outputs):
                yield Path(root) / name


def _newest(path: Path) -> float:
    """The latest modification time of ``path`` and of everything under it (0 when it is
    gone)."""
    try:
        newest = path.stat().st_mtime
    except OSError:
        return 0.0
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            with contextlib.suppress(OSError):
                newest = max(newest, (Path(root) / name).lstat().st_mtime)
    return newest


def built_by_hand(spec: BotSpec) -> bool:
    """True if the folder holds a build made without the arena (``mvn package`` run by
    hand, as a starter's README says) that is newer than every source: the ``outputs`` its
    bot.toml declares all exist, each written after the last change to any input. Without
    declared outputs the arena cannot tell, and builds."""
    outputs = declared_outputs(spec.folder)
    if not outputs:
        return False
    built = [_newest(spec.folder / o) for o in outputs]
    if not all(built):
        return False
    inputs = [p.stat().st_mtime for p in _inputs(spec.folder)]
    return min(built) >= max(inputs, default=0.0)


def is_stale(spec: BotSpec) -> bool:
    """True if the bot must be (re)built before it can play: no stamp (and no build made
    by hand that is newer than its sources, :func:`built_by_hand`), a stamp of another
    build command, its program or ``node_modules`` gone, or a file newer than the stamp."""
    if not spec.build:
        return False
    stamp = spec.folder / STAMP
    try:
        built_at = stamp.stat().st_mtime
        if stamp.read_text() != spec.build:
            return True
    except FileNotFoundError:
        built_at = None
    except OSError:
        return True
    program = shlex.split(spec.run)[0] if spec.run.strip() else ""
    if "/" in program and not (spec.folder / program).exists():
        return True
    if (spec.folder / "package.json").is_file() and not (spec.folder / "node_modules").is_dir():
        return True
    if built_at is None:
        return not built_by_hand(spec)
    return any(p.stat().st_mtime > built_at for p in _inputs(spec.folder))


def ensure_built(spec: BotSpec, force: bool = False, timeout_s: float = 900.0,
                 say: Callable[[str], None] | None = None,
                 log_path: Path | None = None) -> bool:
    """Build the bot if it is stale (or ``force``); True if it was built now. A build made
    by hand (:func:`built_by_hand`) gets its stamp and is not built again. ``say`` hears of
    a build as it starts and ends (:func:`arena.sandbox.build`); the build's log goes to
    ``log_path`` (a line saying it was up to date when no build ran).

    Raises:
        BotError: the build failed or timed out.
    """
    if not spec.build:
        return False
    with open(spec.folder / LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and not is_stale(spec):
            if not (spec.folder / STAMP).is_file():  # built by hand: fresh from now on
                (spec.folder / STAMP).write_text(spec.build)
            if log_path is not None:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                log_path.write_text(f"{spec.name}: up to date (its build stamp, "
                                    f"{spec.folder / STAMP}, is newer than its sources)\n")
            return False
        (spec.folder / STAMP).unlink(missing_ok=True)
        build(spec, timeout_s=timeout_s, say=say, log_path=log_path)
        (spec.folder / STAMP).write_text(spec.build)
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena.sandbox.stamps",
                                     description="Build bot folders that need it.")
    parser.add_argument("folders", nargs="+", type=Path, help="bot folders")
    parser.add_argument("--force", action="store_true", help="build even if up to date")
    args = parser.parse_args(argv)
    failed = 0
    for folder in args.folders:
        if not (folder / "bot.toml").is_file():
            continue
        try:
            spec = load_bot(folder)
            if not spec.build:
                continue
            if spec.runner != "local":
                print(f"{spec.name}: skipped (runner {spec.runner!r} builds it itself)")
                continue
            why = missing_tool(spec)
            if why:
                print(f"{spec.name}: skipped ({why})")
                continue
            if not ensure_built(spec, force=args.force,
                                say=lambda line: print(line, flush=True)):
                print(f"{spec.name}: up to date", flush=True)
        except ArenaError as e:  # a bad bot.toml, a failed build
            print(f"{folder}: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
