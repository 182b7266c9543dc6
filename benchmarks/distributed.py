"""Games on a Dask cluster: games per minute with 1, 2 and 3 workers, beside the local
pool, on the same ladder in the same run.

    .venv/bin/python benchmarks/distributed.py [--boards N] [--workers 1 2 3] [--delay S]

The ladder is three waiting bots (benchmarks/bots/waiter: the last legal action after
``--delay`` seconds), games of at most two hands, so a game's time is mostly the bots'
waiting and two cores are not the limit: what is measured is how games spread over
workers. Each worker is a process of a ``distributed.LocalCluster`` on 127.0.0.1 with
one thread and ``seats=3`` (one game at a time, as a one-core machine would be given),
its bot cache a folder of its own; the local pool plays one game at a time too
(``concurrency = 1``), so "local" and "1 worker" differ by what the cluster costs.
Printed: games, wall seconds, games per minute, and the speed-up over one worker
(near-linear is the aim). A figure, not a test: the machine is shared and noisy. Needs
moon-arena[cluster].
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# this file's name is the package's: Python puts its folder first on the path, so that
# `import distributed` would find this file
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]

from arena.cluster import DaskExecutor  # noqa: E402
from arena.executor.local import GameExecutor, LocalExecutor  # noqa: E402
from arena.ladder.config import ladder_from_dict  # noqa: E402
from arena.ladder.runner import open_store, records_dir, run_ladder  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def play(tmp: Path, label: str, boards: int, bot: Path,
         executor: GameExecutor | None = None) -> dict[str, float]:
    data = {"ladder": {"name": f"dist-{label}", "preset": "moon3", "boards": boards,
                       "seed": 17, "concurrency": 1, "check": False},
            "time_control": {"startup_ms": 30000, "max_hands": 2},
            "bots": [{"path": str(bot), "name": f"waiter{i}"} for i in range(3)]}
    cfg = ladder_from_dict(data, tmp / "bench.toml")
    results = tmp / f"{label}.sqlite"
    store = open_store(cfg, results)
    if executor is None:
        executor = LocalExecutor(records_dir(results), 1)
    t0 = time.monotonic()
    summary = asyncio.run(run_ladder(cfg, store, results, executor=executor))
    wall = time.monotonic() - t0
    store.close()
    return {"games": summary.played, "voided": summary.voided, "wall_s": wall,
            "per_min": summary.played / wall * 60}


def on_cluster(tmp: Path, workers: int, boards: int, bot: Path) -> dict[str, float]:
    from distributed import LocalCluster

    os.environ["MOON_CLUSTER_CACHE"] = str(tmp / f"cache-{workers}")  # the workers inherit it
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      host="127.0.0.1", resources={"seats": 3},
                      # the scheduler's and workers' HTTP servers too, never every interface
                      dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
                      local_directory=str(tmp / f"dask-{workers}")) as cluster:
        ex = DaskExecutor(cluster.scheduler_address, records_dir(tmp / f"w{workers}.sqlite"),
                          players=3)
        return play(tmp, f"w{workers}", boards, bot, ex)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=2, help="boards (6 games each)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--delay", type=float, default=0.05, help="seconds a bot waits a turn")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="moon-bench-dist-") as t:
        tmp = Path(t)
        bot = tmp / "waiter"
        shutil.copytree(ROOT / "benchmarks" / "bots" / "waiter", bot)
        (bot / "delay").write_text(f"{args.delay}\n")
        rows = [("local pool, 1 game at once", play(tmp, "local", args.boards, bot))]
        for n in args.workers:
            rows.append((f"Dask, {n} worker{'s' if n > 1 else ''}",
                         on_cluster(tmp, n, args.boards, bot)))
    base = next((r for label, r in rows if label == "Dask, 1 worker"), rows[0][1])
    print(f"{args.boards} board(s) of 3 waiting bots ({args.delay:g} s a turn), moon3, "
          "games of at most 2 hands")
    print(f"{'':28} {'games':>6} {'voided':>6} {'wall s':>8} {'games/min':>10} {'x 1 worker':>10}")
    for label, r in rows:
        print(f"{label:28} {r['games']:6.0f} {r['voided']:6.0f} {r['wall_s']:8.1f} "
              f"{r['per_min']:10.1f} {r['per_min'] / base['per_min']:10.2f}")


if __name__ == "__main__":
    main()
