"""`moon serve` over a few hundred short games keeps flat memory: benchmarks/soak.py (the
real server as a subprocess, quick bots over gRPC) run in bounded time, its RSS per window
compared as a ratio of growths, never a wall time. Before the server forgot finished
matches, every window grew by about as much as the 2nd (a ratio near 1)."""

from __future__ import annotations

import json
import subprocess
import sys

from e2e_support import ROOT


def test_moon_serve_memory_stays_flat_over_hundreds_of_games():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--games", "500",
         "--window", "100", "--max-hands", "3", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    r = json.loads(done.stdout.strip().splitlines()[-1])
    assert r["records"] == 500  # every game played to its end and recorded
    growth = r["growth_mb"]
    assert len(growth) == 5 and growth[1] > 0
    # the last window grows by less than half what the 2nd grew (the 2nd fills the
    # server's bounded caches; a server that keeps every match grows alike in each)
    assert r["growth_ratio"] < 0.5, r
