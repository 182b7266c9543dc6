"""Games on a Dask cluster beside the local pool: games per minute, CPU per game and the
cluster path's overhead per game, the local pool at ``-j 1`` and 1 and 2 workers side
by side in one run, repeated.

    .venv/bin/python benchmarks/distributed.py [--boards N] [--repeat R] [--workers 1 2]
                                               [--max-hands H] [--no-queued]

The ladder is the example bots heuristic, random and weak (Python, CPU-light: a game's
time is the arena's as much as theirs, so what the cluster costs shows), moon3, every
game whole unless ``--max-hands``. Each repetition plays it on the local pool at
``concurrency = 1`` and then on a fresh ``distributed.LocalCluster`` of 1 and of 2
workers on 127.0.0.1 (one process each, one thread and ``seats=3``: one game at a time
per worker, as the local pool; the scheduler in this process), each worker with a bot
cache of its own; and one worker at ``-j 2`` (the ladder hands the cluster two games, so
the next one waits on the scheduler for the worker's seats instead of for the client).
The same ladder, the same games, so the figures compare like with like.

Printed per configuration: median and [min-max] over the repetitions of games/min, its
ratio to the local pool of the same repetition, wall seconds per game, CPU seconds per
game (this process and every process it started and reaped: workers, fork servers,
bots; the cluster's start and stop included), and, for one worker, the overhead per
game: its wall per game less the local pool's of the same repetition, in ms and as a
share of the local pool's. The same again sustained, once every part is warm: from the
first game's end to the last's, per game (what a long ladder or a host sees; the first
game on a worker also pays the worker's start of its pool and fork server). A figure,
not a test: the machine is shared and noisy. Needs moon-arena[cluster].
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

# this file's name is the package's: Python puts its folder first on the path, so that
# `import distributed` would find this file
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]

from arena.cluster import DaskExecutor  # noqa: E402
from arena.executor.local import GameExecutor, LocalExecutor  # noqa: E402
from arena.ladder.config import ladder_from_dict  # noqa: E402
from arena.ladder.runner import open_store, records_dir, run_ladder  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BOTS = ("heuristic", "random", "weak")


def cpu_s() -> float:
    """CPU seconds of this process and of every descendant reaped so far."""
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                  resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Timed:
    """An executor that notes when each of its games ends (``time.monotonic()``)."""

    def __init__(self, executor: GameExecutor) -> None:
        self.executor = executor
        self.ended: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)

    async def __aenter__(self) -> Timed:
        await self.executor.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.executor.__aexit__(*exc)

    async def play(self, request: Any) -> Any:
        try:
            return await self.executor.play(request)
        finally:
            self.ended.append(time.monotonic())


def play(tmp: Path, label: str, boards: int, max_hands: int | None,
         executor: GameExecutor | None = None) -> tuple[int, int, float, float]:
    """Play the ladder; returns games played, games voided, the wall seconds, and the
    sustained seconds per game (from the first game's end to the last's, per game)."""
    tc: dict[str, int] = {"startup_ms": 30000}
    if max_hands:
        tc["max_hands"] = max_hands
    data = {"ladder": {"name": f"dist-{label}", "preset": "moon3", "boards": boards,
                       "seed": 17, "concurrency": 1, "check": False},
            "time_control": tc,
            "bots": [{"path": str(ROOT / "example_bots" / b)} for b in BOTS]}
    cfg = ladder_from_dict(data, tmp / "bench.toml")
    results = tmp / f"{label}.sqlite"
    store = open_store(cfg, results)
    timed = Timed(executor or LocalExecutor(records_dir(results), 1))
    t0 = time.monotonic()
    summary = asyncio.run(run_ladder(cfg, store, results,
                                     executor=cast(GameExecutor, timed)))
    wall = time.monotonic() - t0
    store.close()
    ended = timed.ended
    sustained = (ended[-1] - ended[0]) / (len(ended) - 1) if len(ended) > 1 else wall
    return summary.played, summary.voided, wall, sustained


def measure(tmp: Path, label: str, workers: int, boards: int, max_hands: int | None,
            capacity: int | None = None) -> dict[str, float]:
    """One configuration once (0 workers: the local pool); ``capacity``: games handed to
    the cluster at once (None: as many as the workers' seats hold)."""
    cpu0 = cpu_s()
    if workers == 0:
        games, voided, wall, sustained = play(tmp, label, boards, max_hands)
    else:
        from distributed import LocalCluster

        os.environ["MOON_CLUSTER_CACHE"] = str(tmp / f"cache-{label}")  # workers inherit it
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", resources={"seats": 3},
                          # the HTTP servers too, never on every interface
                          dashboard_address="127.0.0.1:0",
                          worker_dashboard_address="127.0.0.1:0",
                          local_directory=str(tmp / f"dask-{label}")) as cluster:
            # every worker in before the executor counts their seats (its capacity)
            cluster.wait_for_workers(workers)
            ex = DaskExecutor(cluster.scheduler_address,
                              records_dir(tmp / f"{label}.sqlite"), players=3,
                              capacity=capacity)
            games, voided, wall, sustained = play(tmp, label, boards, max_hands, ex)
    cpu = cpu_s() - cpu0
    return {"games": games, "voided": voided, "wall_s": wall,
            "per_min": games / wall * 60, "wall_per_game": wall / games,
            "cpu_per_game": cpu / games, "sustained": sustained}


def spread(values: list[float], fmt: str) -> str:
    """``median [min-max]`` of ``values``."""
    return (f"{format(statistics.median(values), fmt)} "
            f"[{format(min(values), fmt)}-{format(max(values), fmt)}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=2, help="boards (6 games each)")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--max-hands", type=int, default=None,
                    help="games of at most this many hands (default: whole games)")
    ap.add_argument("--no-queued", action="store_true",
                    help="leave out 1 worker at -j 2 (a game waiting on the scheduler)")
    args = ap.parse_args()
    # (workers, games handed at once): the local pool, each cluster, and one worker
    # with a second game waiting on the scheduler (`-j 2`) for as soon as its seats free
    configs: list[tuple[int, int | None]] = [(0, None), *((n, None) for n in args.workers)]
    if 1 in args.workers and not args.no_queued:
        configs.insert(2, (1, 2))
    runs: dict[tuple[int, int | None], list[dict[str, float]]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="moon-bench-dist-") as t:
        for r in range(args.repeat):
            for n, cap in configs:
                label = f"r{r}-w{n}-j{cap or 0}"
                Path(t, label).mkdir()
                runs[n, cap].append(measure(Path(t) / label, label, n, args.boards,
                                            args.max_hands, cap))
    games = int(runs[0, None][0]["games"])
    hands = f"at most {args.max_hands} hands" if args.max_hands else "whole games"
    print(f"{args.boards} board(s), {games} games of {', '.join(BOTS)} (moon3, {hands}), "
          f"{args.repeat} repetitions: median [min-max]")
    print(f"{'':24} {'voided':>6} {'games/min':>20} {'x local -j 1':>20} "
          f"{'wall s/game':>20} {'CPU s/game':>20} {'overhead ms/game (%)':>35} "
          f"{'sustained s/game':>20} {'sustained overhead':>26}")
    local = runs[0, None]
    for n, cap in configs:
        rs = runs[n, cap]
        label = ("local pool, -j 1" if n == 0 else f"Dask, {n} worker{'s' * (n > 1)}"
                 + (f", -j {cap}" if cap else ""))
        ratio = [r["per_min"] / lo["per_min"] for r, lo in zip(rs, local, strict=True)]
        line = (f"{label:24} {sum(r['voided'] for r in rs):6.0f} "
                f"{spread([r['per_min'] for r in rs], '.1f'):>20} "
                f"{spread(ratio, '.2f'):>20} "
                f"{spread([r['wall_per_game'] for r in rs], '.3f'):>20} "
                f"{spread([r['cpu_per_game'] for r in rs], '.3f'):>20}")
        if n == 1:  # the cluster path's cost per game, over the local pool's
            line += f" {overhead(rs, local, 'wall_per_game'):>35}"
        else:
            line += f" {'':35}"
        line += f" {spread([r['sustained'] for r in rs], '.3f'):>20}"
        if n == 1:  # the same once every part is warm: first game's end to the last's
            line += f" {overhead(rs, local, 'sustained'):>26}"
        print(line)
    print("overhead: wall per game less the local pool's of the same repetition (ms, and %"
          " of the local pool's); sustained: from the first game's end to the last's")


def overhead(rs: list[dict[str, float]], local: list[dict[str, float]], key: str) -> str:
    """The cluster's extra ``key`` (seconds per game) over the local pool's of the same
    repetition: ``ms [spread] (share %)``."""
    over = [(r[key] - lo[key]) * 1000 for r, lo in zip(rs, local, strict=True)]
    share = [o / (lo[key] * 1000) * 100 for o, lo in zip(over, local, strict=True)]
    return f"{spread(over, '.0f')} {spread(share, '.1f')}%"

if __name__ == "__main__":
    main()
