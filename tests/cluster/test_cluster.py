"""Ladders and games on a real Dask cluster (a scheduler and worker processes on
127.0.0.1, tests/cluster/conftest.py): the same games as the local pool, a worker killed
mid-run, bots as content-addressed artifacts, worker resources, an unreachable scheduler.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cluster_support import ladder_file, schedule_of
from moon_sdk.rules import Ruleset

from arena.bots.manifest import load_bot
from arena.bots.versions import bot_version
from arena.cluster import DaskExecutor
from arena.cluster.artifacts import BotCache, pack_folder
from arena.core.timecontrol import TimeControl
from arena.errors import ConfigError, InfrastructureError
from arena.executor.local import GameRequest
from arena.ladder.config import load_ladder
from arena.ladder.runner import open_store, records_dir, run_ladder

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def moon(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200"})


def game_content(record: dict[str, Any]) -> dict[str, Any]:
    """What a game is, without its times: the deal, every bid and play, the result."""
    def no_ms(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: no_ms(v) for k, v in x.items() if not k.endswith("_ms") and k != "ms"}
        if isinstance(x, list):
            return [no_ms(v) for v in x]
        return x
    return {"seed": record["seed"], "seats": [s["name"] for s in record["seats"]],
            "hands": no_ms(record["hands"]), "result": no_ms(record["result"])}


def stored_games(results: Path) -> dict[str, dict[str, Any]]:
    """Each stored game by id: its seats, scores, places, termination and record."""
    db = sqlite3.connect(results)
    out = {}
    for gid, seed, term, winner, scores, places, rec in db.execute(
            "SELECT id, seed, termination, winner, scores, places, record_path FROM games"):
        seats = [b for (b,) in db.execute(
            "SELECT bot FROM seats WHERE game_id = ? ORDER BY seat", (gid,))]
        out[gid] = {"seed": seed, "termination": term, "winner": winner,
                    "scores": json.loads(scores), "places": json.loads(places),
                    "seats": seats, "record": game_content(json.loads(Path(rec).read_text()))}
    return out


def test_a_ladder_on_the_cluster_plays_the_games_of_the_local_pool(cluster, tmp_path, sleepy):
    bots = [ROOT / "example_bots" / "heuristic", ROOT / "example_bots" / "weak", sleepy]
    lf = ladder_file(tmp_path, bots, boards=1)
    local, remote = tmp_path / "local.sqlite", tmp_path / "cluster.sqlite"
    short = ("--bootstrap", "20", "--max-hands", "3")  # games of at most 3 hands
    out = moon("ladder", "run", str(lf), "--results", str(local), *short)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    out = moon("ladder", "run", str(lf), "--results", str(remote), *short,
               "--cluster", cluster.address)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    a, b = stored_games(local), stored_games(remote)
    # one board of three bots: the six seatings of the one deal, each played once
    ids = {g.game_id for g in schedule_of(lf)}
    assert len(ids) == 6 and set(a) == set(b) == ids
    for gid in ids:
        assert b[gid] == a[gid], gid
    assert len({g["seed"] for g in b.values()}) == 1  # one deal, in every seating
    # played on the workers: each unpacked the bots it ran into its own cache
    caches = [cluster.cache(w) / "bots" for w in ("w1", "w2")]
    assert any(c.is_dir() and any(c.iterdir()) for c in caches)
    for c in caches:
        for folder in (c.iterdir() if c.is_dir() else []):
            assert bot_version(folder) == folder.name or (folder / ".build-stamp").exists()
    # the records and seat logs were written here, by the run, as the local pool writes them
    recs = records_dir(remote)
    assert {p.stem for p in recs.glob("b*.json")} == ids
    assert any("sleepy variant A" in p.read_text()
               for p in (recs / "logs").glob("*.seat*.log"))
    # `moon ladder show` reads both alike
    shows = [moon("ladder", "show", str(r), "--format", "json") for r in (local, remote)]
    assert all(s.returncode == 0 for s in shows)
    assert json.loads(shows[0].stdout)["games"] == json.loads(shows[1].stdout)["games"]


def request(game_id: str, folder: Path, runner: str = "local", seed: int = 9
            ) -> GameRequest:
    spec = dataclasses.replace(load_bot(folder), runner=runner)
    return GameRequest(game_id, (spec,) * 3, Ruleset.from_dict({"preset": "moon3"}), "moon3", seed,
                       TimeControl(startup_ms=30000, max_hands=1))


def test_a_changed_bot_folder_is_a_new_version_and_the_stale_one_never_runs(
        cluster, tmp_path, sleepy):
    async def main() -> None:
        async with DaskExecutor(cluster.address, tmp_path / "recs", players=3) as ex:
            first = await ex.play(request("v-a", sleepy))
            (sleepy / "variant").write_text("B\n")  # the same folder, edited mid-run
            second = await ex.play(request("v-b", sleepy))
            (sleepy / "variant").write_text("A\n")  # back: the first version again
            third = await ex.play(request("v-a2", sleepy))
        for g, want in ((first, "A"), (second, "B"), (third, "A")):
            logs = [ex.seat_log(g.request.game_id, s).read_text() for s in range(3)]
            assert all(f"sleepy variant {want}\n" in text for text in logs), logs
            assert g.record_path is not None and Path(g.record_path).is_file()

    version_a = bot_version(sleepy)
    asyncio.run(main())
    (sleepy / "variant").write_text("B\n")
    version_b = bot_version(sleepy)
    assert version_a != version_b
    cached = {p.name for w in ("w1", "w2") if (cluster.cache(w) / "bots").is_dir()
              for p in (cluster.cache(w) / "bots").iterdir()}
    assert {version_a, version_b} <= cached


def test_an_artifact_that_is_not_its_version_is_never_unpacked_into_the_cache(
        tmp_path, sleepy):
    version, data = pack_folder(sleepy)
    (sleepy / "variant").write_text("C\n")
    _, other = pack_folder(sleepy)
    cache = BotCache(tmp_path / "cache")
    with pytest.raises(InfrastructureError, match="hashes to"):
        cache.ensure(version, lambda: other)  # the bytes of another version under its name
    assert not cache.path(version).exists()
    folder = cache.ensure(version, lambda: data)
    assert bot_version(folder) == version and (folder / "variant").read_text() == "A\n"
    assert cache.ensure(version, lambda: b"never fetched: cached") == folder
    assert cache.fetched == 1


def test_a_docker_game_finds_no_worker_without_the_docker_resource(cluster, tmp_path,
                                                                   sleepy):
    async def main() -> None:
        async with DaskExecutor(cluster.address, tmp_path / "recs", players=3,
                                worker_wait_s=1.0) as ex:
            await ex.play(request("d-1", sleepy, runner="docker"))

    with pytest.raises(ConfigError, match=r"docker=3.*Docker engine"):
        asyncio.run(main())
    assert not (tmp_path / "recs" / "d-1.json").exists()


@pytest.mark.docker
def test_a_docker_game_lands_only_on_the_worker_with_docker(own_cluster, tmp_path, sleepy,
                                                            docker_engine):
    own_cluster.add_worker("plain", "seats=6")
    own_cluster.add_worker("boxed", "seats=3,docker=3")

    async def main() -> list[Any]:
        async with DaskExecutor(own_cluster.address, tmp_path / "recs", capacity=2) as ex:
            return list(await asyncio.gather(
                ex.play(request("dock-1", sleepy, runner="docker", seed=1)),
                ex.play(request("dock-2", sleepy, runner="docker", seed=2))))

    games = asyncio.run(main())
    assert all(g.result.termination.scored for g in games)
    assert all(g.record_path is not None and Path(g.record_path).is_file() for g in games)
    # only the worker with docker unpacked the bot: both games ran there
    assert (own_cluster.cache("boxed") / "bots" / bot_version(sleepy)).is_dir()
    assert not (own_cluster.cache("plain") / "bots").exists()


def test_a_worker_killed_mid_ladder_voids_its_game_and_every_game_is_recorded_once(
        own_cluster, tmp_path, sleepy):
    (sleepy / "delay").write_text("0.03\n")  # games of a few seconds: killed mid-game
    own_cluster.add_worker("k1", "seats=3")
    own_cluster.add_worker("k2", "seats=3")
    bots = [ROOT / "example_bots" / "heuristic", ROOT / "example_bots" / "weak", sleepy]
    lf = ladder_file(tmp_path, bots, boards=1, extra="check = false\n")
    cfg = load_ladder(lf)
    results = tmp_path / "r.sqlite"
    store = open_store(cfg, results)
    killed: list[str] = []

    def killer() -> None:
        """Kill a worker whose game has started (its bots play: the executor's started
        event is set) and is still running a moment later. Seeing the game's task
        assigned is not enough: on a loaded machine its bots may still be starting (a
        game killed then is simply run again, not voided), or it may have just ended."""
        from distributed import Client, Event

        def game_started(c: Client, key: str) -> bool:
            game_id, session = key[len("moon-game-"):].rsplit("-", 1)
            return bool(Event(f"moon-started-{session}-{game_id}", client=c).is_set())

        def games_on(c: Client) -> dict[str, set[str]]:
            names = {a: w["name"] for a, w in
                     c.scheduler_info(n_workers=-1)["workers"].items()}
            return {names.get(a): {str(k) for k in keys if str(k).startswith("moon-game-")}
                    for a, keys in c.processing().items()}

        with Client(own_cluster.address, timeout=10, set_as_default=False) as c:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not killed:
                for name, keys in sorted(games_on(c).items()):
                    playing = {k for k in keys if name in ("k1", "k2") and game_started(c, k)}
                    if not playing:
                        continue
                    time.sleep(0.3)  # into the game
                    if playing & games_on(c).get(name, set()):  # still running it
                        own_cluster.kill_worker(name)
                        killed.append(name)
                    break
                time.sleep(0.1)

    t = threading.Thread(target=killer)
    t.start()
    try:
        ex = DaskExecutor(own_cluster.address, records_dir(results), capacity=2, players=3)
        summary = asyncio.run(run_ladder(cfg, store, results, executor=ex))
    finally:
        t.join(timeout=150)
    assert killed, "no worker was killed mid-game"
    ids = {g.game_id for g in schedule_of(lf)}
    db = sqlite3.connect(results)
    stored = [gid for (gid,) in db.execute("SELECT id FROM games")]
    assert sorted(stored) == sorted(ids)  # every game, each once
    voided = [gid for (gid,) in db.execute("SELECT game_id FROM voided")]
    assert len(voided) >= 1 and set(voided) <= ids
    assert summary.played == 6 and summary.voided == len(voided)
    # the record of each stored game is the one attempt that finished (a replay's
    # '-retry<k>' for the voided one), and nothing else was written
    paths = [Path(p) for (p,) in db.execute("SELECT record_path FROM games")]
    assert len(set(paths)) == 6 and all(p.is_file() for p in paths)
    assert {p.name for p in records_dir(results).glob("*.json")} == {p.name for p in paths}
    for v in set(voided):
        assert any(p.stem.startswith(f"{v}-retry") for p in paths)
    # the voided game's replay is the same deal and seats as the game would have been
    for p in paths:
        assert json.loads(p.read_text())["seed"] == {
            g.game_id: g.seed for g in schedule_of(lf)}[p.stem.split("-retry")[0]]


def test_an_unreachable_scheduler_is_one_clear_line_and_nothing_is_lost(tmp_path, sleepy):
    bots = [ROOT / "example_bots" / "weak", ROOT / "example_bots" / "heuristic", sleepy]
    lf = ladder_file(tmp_path, bots, boards=1)
    results = tmp_path / "r.sqlite"
    short = ("--no-check", "--max-hands", "1")
    out = moon("ladder", "run", str(lf), "--results", str(results), "--bootstrap", "20",
               *short)
    assert out.returncode == 0, out.stderr[-2000:]
    before = stored_games(results)
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = moon("ladder", "run", str(lf), "--results", str(results), "--boards", "2",
               *short, "--cluster", f"tcp://127.0.0.1:{port}")
    assert out.returncode == 1
    assert "Traceback" not in out.stderr
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in out.stderr
    assert stored_games(results) == before
    bad = moon("ladder", "run", str(lf), "--results", str(results), "--cluster", "nowhere")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "'nowhere' is not a Dask scheduler's address" in bad.stderr
    # the host says so before it serves (not once it is serving, playing nothing)
    comp = tmp_path / "comp"
    assert moon("host", "init", str(comp), "--trust-local").returncode == 0
    host = moon("host", "run", str(comp), "--address", "127.0.0.1:0",
                "--cluster", f"tcp://127.0.0.1:{port}", timeout=120)
    assert host.returncode == 1 and "Traceback" not in host.stderr
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in host.stderr
    assert "serving" not in host.stdout


def test_ctrl_c_aborts_the_games_on_the_workers_and_keeps_what_finished(
        own_cluster, tmp_path, sleepy):
    import psutil
    from distributed import Client

    (sleepy / "delay").write_text("0.1\n")  # long games: one is surely running
    worker = own_cluster.add_worker("s1", "seats=3")
    bots = [ROOT / "example_bots" / "heuristic", ROOT / "example_bots" / "weak", sleepy]
    lf = ladder_file(tmp_path, bots, boards=1, extra="check = false\n")
    results = tmp_path / "r.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "ladder", "run", str(lf),
                             "--results", str(results), "--cluster", own_cluster.address],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env={**os.environ, "COLUMNS": "400"})
    try:
        def bots_on_worker() -> list[psutil.Process]:
            return [p for p in psutil.Process(worker.pid).children(recursive=True)
                    if "bot.py" in " ".join(p.cmdline())]

        with Client(own_cluster.address, timeout=10, set_as_default=False) as c:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not (
                    any(c.processing().values()) and len(bots_on_worker()) == 3):
                time.sleep(0.2)
            assert len(bots_on_worker()) == 3, "no game started on the worker"
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 130, err[-2000:]
            assert "Traceback" not in err
            assert "run the same command again to resume" in err  # the stop's line
            # the game was aborted on the worker: its bots are gone, the task is over
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (bots_on_worker()
                                                   or any(c.processing().values())):
                time.sleep(0.2)
            assert bots_on_worker() == [] and not any(c.processing().values())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    # what finished is kept, nothing half-written: each stored game has its record
    db = sqlite3.connect(results)
    for gid, path in db.execute("SELECT id, record_path FROM games"):
        assert Path(path).is_file() and json.loads(Path(path).read_text())["match_id"] == gid
