"""`make engine` builds the optional compiled rules engine only with a cargo that runs: with
none, or with one that cannot run (a rustup proxy with no default toolchain, as a changed
HOME leaves it), it skips in one line and succeeds (the SDK runs pure Python), instead of
failing the set-up inside pip's build of sdk/rust."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind", ["missing", "broken"])
def test_make_engine_skips_without_a_cargo_that_runs(tmp_path: Path, kind: str) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make")
    cargo = tmp_path / "cargo"
    if kind == "broken":  # what rustup's proxy does with no toolchain: a message, exit 1
        cargo.write_text("#!/bin/sh\necho 'error: rustup could not choose a version of "
                         "cargo to run' >&2\nexit 1\n")
        cargo.chmod(0o755)
    # -o: the venv's stamp is taken as it is (no set-up is run here)
    done = subprocess.run(["make", "-s", "--no-print-directory", "-o", ".venv/.installed",
                           "engine", f"CARGO={cargo}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == (
        f"engine: skipped (no working cargo: '{cargo} --version' failed or is missing; the "
        "rules engine runs pure Python; tests/rules/test_fast.py skips)"), done.stdout
    assert "rustup" not in done.stdout + done.stderr


def test_make_demo_does_not_wait_for_the_engine_and_make_check_still_builds_it(
        tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make")
    missing = tmp_path / "cargo"  # the engine rule says "skipped" when it is asked for

    def dry_run(target: str) -> str:
        # -n: print the recipes (a recipe line with $(MAKE), the engine's, runs all the same)
        done = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed",
                               "-o", ".venv/.installed-demo",
                               target, f"CARGO={missing}"], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    demo = dry_run("demo")
    assert "moon ladder run ladders/demo.toml" in demo
    assert "engine" not in demo and "sdk/rust" not in demo
    assert "engine: skipped (no working cargo" in dry_run("check")
