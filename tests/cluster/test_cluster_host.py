"""`moon host run --cluster`: a hosted competition whose validation and rated games are
played on a real Dask cluster's workers (tests/cluster/conftest.py), its database and
records written by the host alone."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
from host_support import (  # noqa: E402
    EXAMPLES,
    HostProcess,
    make_competition,
    tar_folder,
    wait_for,
)

from arena.bots.versions import bot_version  # noqa: E402


def cluster_host(folder: Path, address: str) -> HostProcess:
    """`moon host run FOLDER --cluster ADDRESS` (SQLite), started; it may take longer to
    start than a local host (it checks the scheduler first)."""
    return HostProcess(folder, None, args=("--cluster", address)).start(timeout=90.0)


def test_a_competition_plays_its_games_on_the_cluster(cluster, tmp_path: Path) -> None:
    host = cluster_host(make_competition(tmp_path / "comp"), cluster.address)
    try:
        alice, bob = host.register("alice"), host.register("bob")
        v_h = host.submit(alice, tar_folder(EXAMPLES / "heuristic")).json()
        v_w = host.submit(bob, tar_folder(EXAMPLES / "weak")).json()
        # validation games against the reference bot, on the workers
        for token, v in ((alice, v_h), (bob, v_w)):
            assert host.wait_version(token, v["id"])["status"] == "active"

        def some_rated() -> list[dict]:
            games = host.ok("GET", "/api/games", params={"status": "finished",
                                                        "limit": 500})["games"]
            rated = [g for g in games if g["kind"] == "rated"]
            return rated if len(rated) >= 3 else []

        rated = wait_for(some_rated, 180, "three rated games")
    finally:
        host.stop()
    # every finished game's record was written by the host, in its folder
    records = tmp_path / "comp" / "records"
    for g in rated:
        assert (records / f"{g['id']}.json").is_file(), g
    # the bots ran on the workers: the stored versions were unpacked into their caches
    store = tmp_path / "comp" / "store" / "versions"
    versions = {p.name for p in store.iterdir()}
    cached = {p.name for w in ("w1", "w2") if (cluster.cache(w) / "bots").is_dir()
              for p in (cluster.cache(w) / "bots").iterdir()}
    assert {bot_version(store / v) for v in versions} <= cached
