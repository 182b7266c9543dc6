"""A bot's build command (arena.sandbox.local.run_build_command): its log, its failures,
and that nothing it starts outlives it: not when it ends, not when it times out, not when
the arena exits while it runs (a host stopped mid-build)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.bots.manifest import BotSpec
from arena.errors import BotError
from arena.sandbox.local import BUILD_LOG_CHARS, BuildOutput, run_build_command


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not reaped by its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, within_s: float = 10.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _spec(folder: Path, build: str) -> BotSpec:
    return BotSpec(name="builder", folder=folder, run="true", build=build)


def test_the_log_is_stdout_then_stderr_and_a_failure_ends_with_its_tail(tmp_path: Path) -> None:
    assert run_build_command(_spec(tmp_path, "echo out; echo err >&2")) == "out\nerr\n"
    with pytest.raises(BotError, match=r"build failed \(exit 3\):\nno compiler\n$"):
        run_build_command(_spec(tmp_path, "echo no compiler >&2; exit 3"))


def test_output_that_is_not_utf8_is_kept_not_raised(tmp_path: Path) -> None:
    assert run_build_command(_spec(tmp_path, r"printf 'caf\351\n'")) == "caf\ufffd\n"


def test_what_a_build_leaves_running_is_killed_when_it_ends(tmp_path: Path) -> None:
    """A build that starts a background process (a daemon, a forgotten server) and exits:
    the process does not outlive the build, even one that left the build's process group
    and closed the build's pipes."""
    run_build_command(_spec(tmp_path, "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > bg"))
    bg = int((tmp_path / "bg").read_text())
    assert _wait_gone(bg), f"the build's background process {bg} still runs"


@pytest.mark.timeout(60)
def test_a_build_that_times_out_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    """The shell's child holds the build's output pipe: killing the shell alone (what a
    plain subprocess timeout does) would leave the read of the log waiting for it, for
    as long as it sleeps (600 s)."""
    with pytest.raises(BotError, match=r"build timed out after 1 s"):
        run_build_command(_spec(tmp_path, "sleep 600 & echo $! > bg; wait"), timeout_s=1.0)
    bg = int((tmp_path / "bg").read_text())
    assert _wait_gone(bg), f"the timed-out build's process {bg} still runs"


@pytest.mark.timeout(60)
def test_a_build_running_when_the_arena_exits_is_killed(tmp_path: Path) -> None:
    """The host runs a build in a daemon thread so that a stop never waits for it; the
    build's processes must not stay behind when the interpreter exits."""
    script = textwrap.dedent(f"""
        import threading, time
        from pathlib import Path
        from arena.bots.manifest import BotSpec
        from arena.sandbox.local import BUILD_LOG_CHARS, BuildOutput, run_build_command
        folder = Path({str(tmp_path)!r})
        spec = BotSpec(name="builder", folder=folder, run="true",
                       build="sleep 600 & echo $! > bg; wait")
        threading.Thread(target=run_build_command, args=(spec,), daemon=True).start()
        while not (folder / "bg").exists() or not (folder / "bg").read_text().strip():
            time.sleep(0.02)
        print("building", flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=50, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "building"
    bg = int((tmp_path / "bg").read_text())
    assert _wait_gone(bg), f"the build's process {bg} outlived the arena that ran it"


def test_build_output_keeps_its_head_and_tail_as_a_whole_copy_would() -> None:
    """The kept output is, by a simple second model (the whole output kept, then cut), its
    first quarter and last three quarters with the count of what was left out between."""
    rng = random.Random(5)
    for limit in (8, 40, 1000):
        for _ in range(50):
            pieces = ["".join(rng.choice("ab\n") for _ in range(rng.randrange(0, 3 * limit)))
                      for _ in range(rng.randrange(0, 12))]
            kept = BuildOutput(limit)
            for p in pieces:
                kept.add(p)
            whole = "".join(pieces)
            head, tail = limit // 4, limit - limit // 4
            want = whole if len(whole) <= limit else (
                whole[:head] + f"\n[... {len(whole) - limit} characters of output left out "
                "...]\n" + whole[len(whole) - tail:])
            assert kept.text() == want, (limit, pieces)


def test_a_build_that_prints_without_end_keeps_only_its_head_and_tail(tmp_path: Path) -> None:
    """A build printing 30 MB (it could print for its whole time limit): the arena keeps its
    first and last lines and BUILD_LOG_CHARS in all, not every byte in memory."""
    n = 30_000_000
    out = run_build_command(_spec(tmp_path, f"echo first; head -c {n} /dev/zero "
                                            "| tr '\\0' x; echo; echo last >&2"))
    stdout = 6 + n + 1  # "first\n", the x's, "\n"
    assert out.startswith("first\nxxx")
    assert out.endswith("xxx\nlast\n")
    gap = f"\n[... {stdout - BUILD_LOG_CHARS} characters of output left out ...]\n"
    assert gap in out
    assert len(out) == BUILD_LOG_CHARS + len(gap) + len("last\n")
