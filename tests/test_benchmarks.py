"""Every benchmark script still runs: each is played once with the smallest workload it
takes (its figures are not checked here: speed is never asserted in a test, and these
machines are shared), so a refactor that breaks a benchmark is caught by ``make test``
rather than by the next person who needs the figure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"

# The smallest run of each benchmark script; a new script needs its entry here.
SMOKE_ARGS: dict[str, list[str]] = {
    "crowd.py": ["--clients", "4", "--seconds", "1"],
    "distributed.py": ["--boards", "1", "--workers", "1", "--repeat", "1", "--max-hands", "1"],
    "engine.py": ["--seconds", "0.2", "--runs", "1"],
    "escapees.py": ["--games", "1"],
    "host.py": ["--games", "12", "--window", "6", "--repeat", "1", "--diagnostics"],
    "ladder.py": ["--boards", "1"],
    "ladder_cpu.py": ["--boards", "1", "--reps", "1"],
    "local.py": ["--boards", "1", "--games", "4", "--max-hands", "4"],
    "rating_coverage.py": ["--ladders", "4", "--bootstrap", "20",
                           "--only", "3p 3 bots  4 boards luck 0"],
    "pages.py": ["--games", "300,600", "--views", "1", "--between", "1", "--others"],
    # one K of several matches at once (the code of every K is the same; K=1 is its warm-up)
    "referee.py": ["--quick", "--concurrency", "2"],
    "research_envs.py": ["--games", "1", "--repeats", "1", "--max-hands", "2"],
    "search.py": ["--samples", "10", "--points", "3", "--runs", "1"],
    "soak.py": ["--games", "4", "--window", "2", "--parallel", "2", "--max-hands", "1"],
    "tables.py": ["--concurrency", "2", "--tables", "1", "--seconds", "1", "--repeat", "1"],
    "vector.py": ["--decisions", "2000", "--repeats", "1", "--max-hands", "2"],
}


def test_every_benchmark_has_a_smoke_run():
    scripts = sorted(p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")
                     and not p.name.endswith("_support.py"))
    assert scripts == sorted(SMOKE_ARGS), "add the new benchmark's smallest run to SMOKE_ARGS"


@pytest.mark.parametrize("script", sorted(SMOKE_ARGS))
def test_benchmark_runs(script, tmp_path):
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *SMOKE_ARGS[script]],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip(), f"{script} printed nothing"
