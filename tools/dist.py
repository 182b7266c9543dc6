"""Build the distributions (`make dist`) and a wheelhouse of their dependencies.

    python tools/dist.py                          # sdists and wheels into dist/
    python tools/dist.py --no-isolation --outdir DIR
                                                  # with this environment's setuptools
    python tools/dist.py --wheelhouse dist/wheelhouse
                                                  # also the wheels of every dependency
                                                  # (and pip), for installing offline

Each project of :data:`PROJECTS` is built with ``python -m build``: its sdist, then its
wheel *from that sdist*, so an sdist that lacks a file fails here. The wheelhouse holds
the third-party wheels only (never our own, which are rebuilt): it is filled with ``pip
download`` the first time and reused while it satisfies the requirements (no network),
under a lock, so that the referee image (`make image`) and tests/packaging install
offline. Both raise :class:`DistError` with the tool's output when a step fails.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ("sdk/python", ".")
"""Folders with a pyproject.toml whose distributions `make dist` builds, in order."""
OURS = ("moon_sdk-", "moon_arena-")
"""File name prefixes of our distributions (never kept in a wheelhouse)."""


class DistError(RuntimeError):
    """A build or download failed; the message ends with the tool's output."""


def _run(argv: list[str], what: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise DistError(f"{what} failed ({' '.join(argv)}):\n{done.stdout}{done.stderr}")


def build(outdir: Path, isolation: bool = True,
          projects: tuple[str, ...] = PROJECTS) -> list[Path]:
    """Build the sdist and wheel of each project into ``outdir`` (created; earlier
    ``*.whl`` and ``*.tar.gz`` directly in it are removed first); returns the wheels.

    Raises:
        DistError: a build failed.
    """
    outdir.mkdir(parents=True, exist_ok=True)
    for old in [*outdir.glob("*.whl"), *outdir.glob("*.tar.gz")]:
        old.unlink()
    env = dict(os.environ)
    if "SOURCE_DATE_EPOCH" not in env:
        env.update(_commit_time())
    for project in projects:
        argv = [sys.executable, "-m", "build", "--outdir", str(outdir)]
        _run([*argv, *([] if isolation else ["--no-isolation"]), str(ROOT / project)],
             f"building {project}", env)
    return sorted(outdir.glob("*.whl"))


def _commit_time() -> dict[str, str]:
    """``{"SOURCE_DATE_EPOCH": <time of the last commit>}`` (empty outside a git
    checkout): the wheels' file times, so the same sources build the same bytes (and an
    image build reuses its cached layers)."""
    git = shutil.which("git")
    done = subprocess.run([git, "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True,
                          text=True) if git else None
    stamp = done.stdout.strip() if done is not None and done.returncode == 0 else ""
    return {"SOURCE_DATE_EPOCH": stamp} if stamp.isdigit() else {}


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _drop_ours(folder: Path) -> None:
    for f in folder.iterdir():
        if f.name.startswith(OURS):
            f.unlink()


def fill_wheelhouse(wheels: list[Path], wheelhouse: Path) -> bool:
    """Put into ``wheelhouse`` the wheels of every dependency of ``wheels`` (for this
    interpreter's Python and platform) and of pip; True if something had to be
    downloaded, False when the wheelhouse had it all (then no network is used).

    Raises:
        DistError: pip could not find or download a dependency.
    """
    links = sorted({str(w.parent) for w in wheels})
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(wheelhouse),
            "--find-links", str(wheelhouse), *(f"--find-links={d}" for d in links),
            # the arena with its host extra: the referee's image runs `moon host` too
            *(f"{w}[host]" if w.name.startswith("moon_arena-") else str(w) for w in wheels),
            "pip"]
    with _locked(wheelhouse):
        _drop_ours(wheelhouse)
        try:
            _run([*argv, "--no-index"], "checking the wheelhouse")
            return False
        except DistError:
            _run(argv, "downloading the dependencies")
            return True
        finally:
            _drop_ours(wheelhouse)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=ROOT / "dist")
    parser.add_argument("--no-isolation", action="store_true",
                        help="build with this environment's setuptools (no download)")
    parser.add_argument("--wheelhouse", type=Path, default=None,
                        help="also fill this folder with the dependencies' wheels")
    args = parser.parse_args()
    try:
        wheels = build(args.outdir, isolation=not args.no_isolation)
        for w in [*wheels, *sorted(args.outdir.glob("*.tar.gz"))]:
            print(f"{w.relative_to(ROOT) if w.is_relative_to(ROOT) else w}: "
                  f"{w.stat().st_size // 1024} KiB")
        if args.wheelhouse is not None:
            fetched = fill_wheelhouse(wheels, args.wheelhouse)
            print(f"{args.wheelhouse}: {len(list(args.wheelhouse.glob('*.whl')))} wheels"
                  + (" (downloaded)" if fetched else " (all there already)"))
    except DistError as e:
        print(f"dist: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
