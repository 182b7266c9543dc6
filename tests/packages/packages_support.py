"""Helpers of the packaging tests: the distributions built once per session (tools/dist.py,
the same code as `make dist`), the files git tracks, fresh virtual environments outside
the repository that install the wheels offline from the wheelhouse."""

from __future__ import annotations

import email.parser
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = Path(os.environ.get("MOON_WHEELHOUSE") or ROOT / "dist" / "wheelhouse")
"""Third-party wheels for offline installs, shared with `make image` (MOON_WHEELHOUSE
moves it)."""


def load_dist_tool() -> ModuleType:
    """tools/dist.py as a module."""
    spec = importlib.util.spec_from_file_location("moon_dist_tool", ROOT / "tools" / "dist.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Dists:
    """What one session built: the wheels and sdists by distribution name, and the
    wheelhouse of their dependencies."""

    outdir: Path
    wheels: dict[str, Path]
    sdists: dict[str, Path]
    wheelhouse: Path


def build_dists(outdir: Path) -> Dists:
    """Build every distribution into ``outdir`` (no build isolation: this environment's
    setuptools) and fill the wheelhouse."""
    tool = load_dist_tool()
    wheels = tool.build(outdir, isolation=False)
    tool.fill_wheelhouse(wheels, WHEELHOUSE)

    def by_name(files: list[Path]) -> dict[str, Path]:
        return {f.name.split("-")[0].replace("_", "-"): f for f in files}

    return Dists(outdir, by_name(wheels), by_name(sorted(outdir.glob("*.tar.gz"))),
                 WHEELHOUSE)


def tracked(folder: str) -> list[str]:
    """Files git tracks under ``folder`` (relative to the repository), sorted."""
    git = shutil.which("git")
    assert git, "git is needed to compare the packages with the repository"
    out = subprocess.run([git, "ls-files", "-z", "--", folder], cwd=ROOT, check=True,
                         capture_output=True).stdout.decode()
    return sorted(p for p in out.split("\0") if p and (ROOT / p).is_file())


def wheel_metadata(wheel: Path) -> Message:
    """The METADATA of a wheel, parsed."""
    with zipfile.ZipFile(wheel) as z:
        [name] = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(z.read(name).decode())


def clean_env(venv: Path | None = None) -> dict[str, str]:
    """This process's environment without anything that points into the repository or its
    virtualenv (PYTHONPATH, VIRTUAL_ENV, MOON_*, the .venv on PATH), with ``venv``'s bin
    first on PATH."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
           and not k.startswith("MOON_")}
    dev_bin = str(Path(sys.prefix) / "bin")
    path = [p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if p and p != dev_bin and not p.startswith(str(ROOT))]
    if venv is not None:
        path.insert(0, str(venv / "bin"))
    env["PATH"] = os.pathsep.join(path)
    env["COLUMNS"] = "200"
    return env


def make_venv(where: Path, dists: Dists, *requirements: str) -> Path:
    """A fresh virtual environment at ``where`` with ``requirements`` installed from the
    built wheels and the wheelhouse only (``--no-index``: no network). The environment has
    no pip of its own: pip runs from its wheel in the wheelhouse."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True,
                   env=clean_env())
    [pip] = sorted(dists.wheelhouse.glob("pip-*.whl"))[-1:]
    done = subprocess.run(
        [str(where / "bin" / "python"), f"{pip}/pip", "install", "--quiet", "--no-index",
         "--no-compile", "--disable-pip-version-check", "--find-links", str(dists.outdir),
         "--find-links", str(dists.wheelhouse), *requirements],
        cwd=where.parent, env=clean_env(where), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"pip install {' '.join(requirements)}:\n{done.stderr}"
    return where


def run_in(venv: Path, cwd: Path, *argv: str, timeout: float = 300
           ) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (a command of the venv's bin, e.g. ``moon``) in ``cwd`` with a clean
    environment."""
    program = venv / "bin" / argv[0]
    return subprocess.run([str(program) if program.exists() else argv[0], *argv[1:]],
                          cwd=cwd, env=clean_env(venv), capture_output=True, text=True,
                          timeout=timeout)
