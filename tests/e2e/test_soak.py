"""`moon serve` over a few hundred short games keeps flat memory: benchmarks/soak.py (the
real server as a subprocess, quick bots over gRPC) run in bounded time, its RSS per window
compared with a second server that keeps every finished match, never a wall time."""

from __future__ import annotations

import json
import subprocess
import sys

from e2e_support import ROOT


def test_moon_serve_memory_stays_flat_over_hundreds_of_games():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--games", "500",
         "--window", "100", "--max-hands", "3", "--compare", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    forgets, keeps = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    assert forgets["keep_finished"] is None and keeps["keep_finished"] == 500
    for r in (forgets, keeps):
        assert r["records"] == 500  # every game played to its end and recorded
        assert len(r["growth_mb"]) == 5
    # after the first two windows (start-up, the server's bounded caches filling), the
    # server grows by far less than a second server that keeps every finished match (the
    # model of a leak of whole matches), over the same games: a server that kept a fifth of
    # each match would fail
    late_forgets, late_keeps = sum(forgets["growth_mb"][2:]), sum(keeps["growth_mb"][2:])
    assert late_keeps > 0, keeps
    assert late_forgets < late_keeps / 5, (forgets, keeps)
