"""A warm worker (arena/cluster/warm.py): one game runner per Dask worker for its
lifetime, on a real cluster on 127.0.0.1 (tests/cluster/conftest.py): its fork server
kept across games, a fork server killed mid-game voiding only that game, a stopped
client's game aborted alone; the Node.js example bot on a worker; no traceback of Dask's
when the cluster shuts down under a client."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest
from cluster_support import ROOT, ladder_file, schedule_of
from moon_sdk.rules import Ruleset

from arena.bots.manifest import load_bot
from arena.cluster import DaskExecutor
from arena.core.results import Termination
from arena.core.timecontrol import TimeControl
from arena.errors import InfrastructureError
from arena.executor.local import GameRequest
from arena.ladder.config import load_ladder
from arena.ladder.runner import open_store, records_dir, run_ladder

EXAMPLES = ROOT / "example_bots"


def fork_servers(worker_pid: int) -> list[psutil.Process]:
    """The fork servers a worker process runs (a bot forked from one is titled as its
    script, ``python bot.py``: only the server's command line names the module)."""
    out = []
    for p in psutil.Process(worker_pid).children(recursive=True):
        try:
            if "arena.sandbox.forkserver" in " ".join(p.cmdline()):
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def game(game_id: str, names: tuple[str, ...], seed: int = 9, hands: int = 1
         ) -> GameRequest:
    bots = tuple(load_bot(EXAMPLES / n) for n in names)
    preset = "moon4" if len(bots) == 4 else "moon3"
    return GameRequest(game_id, bots, Ruleset.from_dict({"preset": preset}), preset, seed,
                       TimeControl(startup_ms=60000, max_hands=hands))


def test_a_worker_plays_its_games_with_one_fork_server(own_cluster, tmp_path):
    worker = own_cluster.add_worker("warm", "seats=3")
    seen: list[list[int]] = []

    async def main() -> None:
        async with DaskExecutor(own_cluster.address, tmp_path / "recs", players=3) as ex:
            for i in range(3):
                g = await ex.play(game(f"warm-{i}", ("heuristic", "weak", "random"), seed=i))
                assert g.result.termination.scored and g.faults == ()
                seen.append([p.pid for p in fork_servers(worker.pid)])

    asyncio.run(main())
    # a worker of one game per task used to start a fork server for each game and
    # close it at the game's end: none was left between games
    assert len(seen[0]) == 1, seen
    assert seen == [seen[0]] * 3
    # each game's bots were processes of their own, forked after the game began: the
    # seat logs of the three games came back, one per seat
    logs = sorted(p.name for p in (tmp_path / "recs" / "logs").iterdir())
    assert logs == sorted(f"warm-{i}.seat{s}.log" for i in range(3) for s in range(3))


def test_a_fork_server_killed_mid_game_voids_that_game_and_the_worker_recovers(
        own_cluster, tmp_path):
    worker = own_cluster.add_worker("f1", "seats=3")
    bots = [EXAMPLES / "heuristic", EXAMPLES / "weak", EXAMPLES / "random"]
    lf = ladder_file(tmp_path, bots, boards=1, extra="check = false\n")
    cfg = load_ladder(lf)
    results = tmp_path / "r.sqlite"
    store = open_store(cfg, results)
    killed: list[int] = []
    done = threading.Event()

    def killer() -> None:
        """Kill the worker's fork server while its bots play a game (its children, the
        game's bots, are running), once, after a first game has finished."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed and not done.is_set():
            finished = list(records_dir(results).glob("*.json"))
            servers = fork_servers(worker.pid)
            if finished and servers:
                with_bots = [s for s in servers if len(s.children()) == 3]
                if with_bots:
                    os.kill(with_bots[0].pid, signal.SIGKILL)
                    killed.append(with_bots[0].pid)
                    return
            time.sleep(0.02)

    t = threading.Thread(target=killer)
    t.start()
    try:
        ex = DaskExecutor(own_cluster.address, records_dir(results), capacity=1, players=3)
        summary = asyncio.run(run_ladder(cfg, store, results, executor=ex))
    finally:
        done.set()
        t.join(timeout=150)
    assert killed, "the fork server was not killed mid-game"
    ids = {g.game_id for g in schedule_of(lf)}
    db = sqlite3.connect(results)
    stored = sorted(gid for (gid,) in db.execute("SELECT id FROM games"))
    voided = [gid for (gid,) in db.execute("SELECT game_id FROM voided")]
    assert stored == sorted(ids)  # every game, each once
    assert len(voided) == 1 and set(voided) <= ids  # only the game the server held
    assert (summary.played, summary.voided) == (6, 1)
    paths = [Path(p) for (p,) in db.execute("SELECT record_path FROM games")]
    assert any(p.stem == f"{voided[0]}-retry1" for p in paths)
    # beside the stored games' records, the voided attempt's, as the local pool keeps it
    on_disk = {p.name for p in records_dir(results).glob("*.json")}
    assert on_disk == {p.name for p in paths} | {f"{voided[0]}.json"}
    # every stored game is a whole game, its own record's, with no fault: the killed
    # server's bots were charged nothing
    for gid, path in db.execute("SELECT id, record_path FROM games"):
        assert json.loads(Path(path).read_text())["match_id"] in (gid, f"{gid}-retry1")
    assert list(db.execute("SELECT * FROM faults")) == []
    # the worker recovered: a fork server of its own again, a new one
    now = [p.pid for p in fork_servers(worker.pid)]
    assert len(now) == 1 and now[0] not in killed


def test_the_example_bots_of_four_languages_play_on_a_worker(own_cluster, tmp_path):
    # Go, Rust (through the stdio bridge), Node.js and Python at one table of moon4: each
    # unpacked alone in the worker's cache, built there when it needs a build
    own_cluster.add_worker("n1", "seats=4")
    names = ("go-heuristic", "rust-stdio", "node-heuristic", "heuristic")

    async def main() -> None:
        async with DaskExecutor(own_cluster.address, tmp_path / "recs", players=4) as ex:
            g = await ex.play(game("langs-1", names, hands=2))
            # the Node bot loads the protocol from ../../proto in the repository; alone in
            # the worker's cache it finds the copy its artifact carries
            assert g.faults == () and g.result.termination.scored, g.faults
            # a made moon bid would end the game at hand 1
            assert g.result.hands_played == 2 or (
                g.result.hands_played == 1 and g.result.termination is Termination.MOON)
        record = json.loads((tmp_path / "recs" / "langs-1.json").read_text())
        assert [seat["name"] for seat in record["seats"]] == list(names)

    asyncio.run(main())
    cached = list((own_cluster.cache("n1") / "bots").iterdir())
    node = [c for c in cached if (c / "bot.js").is_file()]
    assert len(node) == 1 and (node[0] / "proto" / "moon" / "v1" / "bot.proto").is_file()
    assert (node[0] / "proto" / "moon" / "v1" / "bot.proto").read_bytes() == (
        ROOT / "proto" / "moon" / "v1" / "bot.proto").read_bytes()


CLIENT = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from test_warm import game
    from arena.cluster import DaskExecutor

    async def main():
        async with DaskExecutor({address!r}, Path({recs!r}), players=3,
                                connect_timeout_s=2.0) as ex:
            await ex.play(game("before", ("random", "random", "random")))
            print("played", flush=True)
            sys.stdin.readline()  # the cluster shuts down meanwhile
            await asyncio.sleep(3.0)
    asyncio.run(main())
    print("closed", flush=True)
""")


def test_a_cluster_that_shuts_down_under_a_client_prints_no_traceback(own_cluster,
                                                                       tmp_path):
    own_cluster.add_worker("s1", "seats=3")
    script = CLIENT.format(tests=str(Path(__file__).parent), address=own_cluster.address,
                           recs=str(tmp_path / "recs"))
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline() == "played\n"
        own_cluster.stop()  # workers, then the scheduler: the cluster shuts down
        proc.stdin.write("\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0, err[-3000:]
    assert out == "closed\n"
    # Dask's client logged the closed connection at INFO with the CommClosedError's
    # traceback; now the executor says it in one line
    assert "Traceback" not in err, err[-3000:]
    assert "CommClosedError" not in err
    assert f"cluster {own_cluster.address}: stopping:" in err
    assert all(len(line) < 300 for line in err.splitlines())


def test_a_game_the_client_stops_is_aborted_and_the_worker_plays_on(own_cluster,
                                                                    tmp_path, sleepy):
    (sleepy / "delay").write_text("0.2\n")  # a long game: still playing at the stop
    worker = own_cluster.add_worker("a1", "seats=3")
    slow = dataclasses.replace(load_bot(sleepy))

    async def stopped() -> None:
        async with DaskExecutor(own_cluster.address, tmp_path / "recs", players=3,
                                grace_s=0.0) as ex:
            long = GameRequest("long", (slow,) * 3, Ruleset.from_dict({"preset": "moon3"}),
                               "moon3", 1, TimeControl(startup_ms=60000))
            task = asyncio.ensure_future(ex.play(long))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any(
                    len(s.children()) == 3 for s in fork_servers(worker.pid)):
                await asyncio.sleep(0.1)
            assert any(len(s.children()) == 3 for s in fork_servers(worker.pid))
        # leaving the executor stopped the game on the worker: its bots are gone
        with pytest.raises(InfrastructureError):
            await asyncio.wait_for(task, 30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(s.children()
                                                  for s in fork_servers(worker.pid)):
            await asyncio.sleep(0.1)
        assert not any(s.children() for s in fork_servers(worker.pid))

    asyncio.run(stopped())
    server = [p.pid for p in fork_servers(worker.pid)]

    async def again() -> None:  # the same runner plays the next client's game
        async with DaskExecutor(own_cluster.address, tmp_path / "recs2", players=3) as ex:
            g = await ex.play(game("next", ("heuristic", "weak", "random")))
            assert g.result.termination.scored

    asyncio.run(again())
    assert [p.pid for p in fork_servers(worker.pid)] == server

