"""The host's default runner: submissions built and run in Docker containers against a
real engine (the validation game and rated games), while the reference bot runs locally."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for


@pytest.mark.docker
def test_docker_runner(tmp_path: Path, docker_engine) -> None:
    from arena.sandbox.docker import LABEL

    folder = make_competition(tmp_path / "comp", runner="docker")
    assert 'kind = "docker"' in (folder / "competition.toml").read_text()
    host = HostProcess(folder, None).start()
    try:
        tokens = [host.register(n) for n in ("dora", "dan")]
        vs = [host.submit(t, tar_folder(EXAMPLES / b)).json()
              for t, b in zip(tokens, ("random", "weak"), strict=True)]
        for t, v in zip(tokens, vs, strict=True):
            done = host.wait_version(t, v["id"], timeout=240)
            assert done["status"] == "active", host.call(
                "GET", f"/api/versions/{v['id']}/log", t).text
        games = wait_for(lambda: (lambda p: p["games"] if p["total"] >= 3 else None)(
            host.ok("GET", "/api/games", params={"status": "finished"})), 240,
            "3 rated games in containers")
        for g in games:
            assert g["termination"] in ("target", "moon", "hand_limit"), g
            assert not g["faults"], g
        assert host.ok("GET", "/api/status")["runner"] == "docker"
        ids = {g["id"] for g in host.ok("GET", "/api/games", params={"limit": 500})["games"]}
    finally:
        host.stop()
    # every game's containers are gone once the host has stopped
    left = docker_engine.containers.list(all=True, filters={"label": LABEL})
    assert [c.name for c in left if c.labels.get(f"{LABEL}.match") in ids] == []
