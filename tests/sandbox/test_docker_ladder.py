"""A ladder file picks the runner per bot: a Docker bot and local bots in one ladder."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena.ladder.config import load_ladder
from arena.ladder.runner import open_store, run_ladder

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.docker
def test_ladder_with_a_docker_bot(tmp_path, docker_engine):
    lf = tmp_path / "l.toml"
    lf.write_text(f"""[ladder]
name = "mixed"
boards = 1
seed = 4
concurrency = 2

[time_control]
startup_ms = 30000

[sandbox]
memory_mb = 256
pids = 64

[[bots]]
path = "{ROOT}/example_bots/heuristic"
runner = "docker"
name = "heuristic-docker"

[[bots]]
path = "{ROOT}/example_bots/random"

[[bots]]
path = "{ROOT}/example_bots/weak"
""")
    cfg = load_ladder(lf)
    assert cfg.bots[0].runner == "docker" and cfg.bots[1].runner == "local"
    assert cfg.docker_limits is not None and cfg.docker_limits.memory_mb == 256
    results = tmp_path / "r.sqlite"
    store = open_store(cfg, results)
    summary = asyncio.run(run_ladder(cfg, store, results))
    assert summary.skipped_bots == {}
    assert summary.played == 6
    rows = store.db.execute("SELECT termination FROM games").fetchall()
    assert {r[0] for r in rows} <= {"target", "moon"}  # no faults, nobody forfeited
    assert store.db.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 0
    # no container is left behind
    left = docker_engine.containers.list(all=True, filters={"label": "moon-arena"})
    assert [c for c in left if c.labels.get("moon-arena.match", "").startswith("b0-")] == []
