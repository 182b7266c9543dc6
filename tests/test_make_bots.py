"""`make bots` (python -m arena.sandbox.stamps) skips, in one line, a bot whose toolchain program
is on PATH but does not run (a rustup proxy with no default toolchain, as a changed HOME
leaves it), as it skips one whose toolchain is missing: make demo goes on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind", ["missing", "broken"])
def test_a_bot_whose_toolchain_does_not_run_is_skipped(tmp_path: Path, kind: str) -> None:
    bot = tmp_path / "rust-stdio"
    shutil.copytree(ROOT / "example_bots" / "rust-stdio", bot,
                    ignore=shutil.ignore_patterns("target", ".build-*"))
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("sh", "env"):  # a PATH of its own: the real cargo is not on it
        os.symlink(shutil.which(tool) or f"/bin/{tool}", fake / tool)
    if kind == "broken":  # what rustup's proxy does with no toolchain: a message, exit 1
        cargo = fake / "cargo"
        cargo.write_text("#!/bin/sh\necho 'error: rustup could not choose a version of "
                         "cargo to run' >&2\necho 'help: run rustup default stable' >&2\n"
                         "exit 1\n")
        cargo.chmod(0o755)
    env = {**os.environ, "PATH": str(fake),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk" / "python")])}
    done = subprocess.run([sys.executable, "-m", "arena.sandbox.stamps", str(bot)], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    why = ("'cargo' is not on PATH" if kind == "missing" else
           "'cargo --version' failed (exit 1): error: rustup could not choose a version of "
           "cargo to run")
    assert done.stdout == f"rust-stdio: skipped ({why})\n"
    assert not (bot / ".build-stamp").exists()


def test_a_declared_output_written_after_the_build_does_not_make_it_stale(
        tmp_path: Path) -> None:
    """A file the build writes (listed in ``outputs``) that is newer than the stamp is not a
    changed source; a source newer than the stamp is."""
    from arena.bots.manifest import load_bot
    from arena.sandbox.stamps import STAMP, ensure_built, is_stale

    bot = tmp_path / "b"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "b"\nbuild = "cp main.txt prog && mkdir -p obj && '
                                  'touch obj/x.o"\nrun = "./prog"\noutputs = ["prog", "obj/"]\n')
    (bot / "main.txt").write_text("source\n")
    spec = load_bot(bot)
    assert ensure_built(spec) and not is_stale(spec)
    later = (bot / STAMP).stat().st_mtime + 100
    for out in ("prog", "obj/x.o"):  # rewritten after the stamp (a second build by hand)
        os.utime(bot / out, (later, later))
    assert not is_stale(spec)
    os.utime(bot / "main.txt", (later, later))
    assert is_stale(spec)
