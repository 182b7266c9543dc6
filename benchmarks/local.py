"""The in-process runner against the arena: games per minute for the same random bots.

    .venv/bin/python benchmarks/local.py [--boards N] [--games N] [--processes N]
        [--max-hands N]

Plays the example random bot three times over (3-player Moon, max_hands 200 as the arena's
default time control, or ``--max-hands``) twice, in one run:

- in the arena: a duplicate ladder through the real runner `moon ladder` uses (a referee
  over gRPC, a fresh process per bot and game, records written), at concurrency N;
- in process: :func:`moon_sdk.local.play_games` with the same ``RandomBot`` class, across N
  worker processes, records built (not written).

and prints, side by side, games per minute, decisions per game and decisions per second,
and the ratios, by the wall clock and by CPU time (this process and its children: the
referee, the bot processes, the worker processes). Random bots' games vary a lot in length
(a few hands to the 200-hand limit), so decisions per second is the steadier comparison;
on a shared machine the CPU figures are the steadier ones. A figure, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from moon_sdk.local import play_games

from arena.ladder.config import ladder_from_dict
from arena.ladder.runner import open_store, run_ladder

ROOT = Path(__file__).resolve().parents[1]
RANDOM = ROOT / "example_bots" / "random"


def random_bot_class() -> type:
    """The example random bot's class, from its folder (as the arena runs it)."""
    spec = importlib.util.spec_from_file_location("_bench_random_bot", RANDOM / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # worker processes find the class by this name
    spec.loader.exec_module(module)
    return module.RandomBot  # type: ignore[no-any-return]


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its children that have ended."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def arena(boards: int, concurrency: int, tmp: Path, max_hands: int) -> dict[str, float]:
    """A ladder of three random bots through the ladder's runner."""
    data = {"ladder": {"name": "bench-local", "preset": "moon3", "boards": boards,
                       "seed": 7, "concurrency": concurrency},
            "time_control": {"max_hands": max_hands},
            "bots": [{"path": str(RANDOM), "name": f"random-{c}"} for c in "abc"]}
    cfg = ladder_from_dict(data, tmp / "bench.toml")
    results = tmp / "arena.sqlite"
    store = open_store(cfg, results)
    t0, c0 = time.monotonic(), cpu_seconds()
    summary = asyncio.run(run_ladder(cfg, store, results))
    wall, cpu = time.monotonic() - t0, cpu_seconds() - c0
    decisions = sum(len(json.loads(Path(p).read_text())["actions"])
                    for (p,) in store.db.execute("SELECT record_path FROM games"))
    store.close()
    return {"games": summary.played, "wall_s": wall, "cpu_s": cpu, "decisions": decisions}


def local(games: int, processes: int, max_hands: int) -> dict[str, float]:
    """The same bots, ``games`` seeds, in process."""
    bot = random_bot_class()
    t0, c0 = time.monotonic(), cpu_seconds()
    decisions = 0
    played = 0
    for record in play_games([bot, bot, bot], range(1000, 1000 + games), "moon3",
                             processes=processes, chunksize=8,
                             time_control={"max_hands": max_hands}):
        decisions += len(record["actions"])
        played += 1
    return {"games": played, "wall_s": time.monotonic() - t0, "cpu_s": cpu_seconds() - c0,
            "decisions": decisions}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=4,
                    help="ladder boards (x6 seatings) [default: 4]")
    ap.add_argument("--games", type=int, default=400,
                    help="in-process games [default: 400]")
    ap.add_argument("--processes", type=int, default=2,
                    help="ladder concurrency and worker processes [default: 2]")
    ap.add_argument("--max-hands", type=int, default=200,
                    help="hands a game deals at most [default: 200, the arena's]")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        rows = {"arena": arena(args.boards, args.processes, Path(d), args.max_hands),
                "in-process": local(args.games, args.processes, args.max_hands)}
    for r in rows.values():
        r["per_min"] = r["games"] / r["wall_s"] * 60
        r["per_cpu_min"] = r["games"] / r["cpu_s"] * 60
        r["per_game"] = r["decisions"] / r["games"]
        r["per_s"] = r["decisions"] / r["wall_s"]
        r["per_cpu_s"] = r["decisions"] / r["cpu_s"]
    print(f"random x3, moon3, max_hands {args.max_hands}; {args.processes} games at once "
          f"(ladder concurrency, worker processes)")
    print(f"{'':27}{'games':>6}{'wall s':>8}{'CPU s':>8}{'games/min':>11}"
          f"{'games/CPU-min':>15}{'decisions/game':>16}{'decisions/s':>13}"
          f"{'decisions/CPU-s':>17}")
    for name, label in (("arena", "arena (moon ladder runner)"),
                        ("in-process", "in-process (play_games)")):
        r = rows[name]
        print(f"{label:27}{r['games']:>6.0f}{r['wall_s']:>8.1f}{r['cpu_s']:>8.1f}"
              f"{r['per_min']:>11.1f}{r['per_cpu_min']:>15.1f}{r['per_game']:>16.0f}"
              f"{r['per_s']:>13.0f}{r['per_cpu_s']:>17.0f}")
    a, b = rows["arena"], rows["in-process"]
    print(f"in-process / arena, wall clock: {b['per_min'] / a['per_min']:.0f}x games per "
          f"minute, {b['per_s'] / a['per_s']:.0f}x decisions per second")
    print(f"in-process / arena, CPU time:   {b['per_cpu_min'] / a['per_cpu_min']:.0f}x games "
          f"per CPU-minute, {b['per_cpu_s'] / a['per_cpu_s']:.0f}x decisions per CPU-second")


if __name__ == "__main__":
    main()
