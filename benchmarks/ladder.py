"""Ladder throughput: games per minute end to end with the example bots, at concurrency 1
and 2, and where the wall time goes.

    .venv/bin/python benchmarks/ladder.py [--boards N]

Runs the same small duplicate ladder (heuristic, random, weak; moon3) twice through the
real runner (referee over gRPC, a fresh process per bot and game) and prints, side by
side: games/minute, and the share of wall time outside the bots' own thinking (start-up,
transport, bookkeeping). The bots' own thinking is what the SDK measures around Bot.act
and logs at game end ("game over: N decisions, X ms thinking"), read from each record.
A figure, not a test: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from pathlib import Path

from arena.ladder.config import ladder_from_dict
from arena.ladder.runner import open_store, run_ladder

ROOT = Path(__file__).resolve().parents[1]
THINK = re.compile(r"game over: (\d+) decisions, ([\d.]+) ms thinking")


def run(boards: int, concurrency: int, tmp: Path) -> dict[str, float]:
    data = {"ladder": {"name": f"bench-c{concurrency}", "preset": "moon3", "boards": boards,
                       "seed": 99, "concurrency": concurrency},
            "bots": [{"path": str(ROOT / "example_bots" / b)}
                     for b in ("heuristic", "random", "weak")]}
    cfg = ladder_from_dict(data, tmp / "bench.toml")
    results = tmp / f"c{concurrency}.sqlite"
    store = open_store(cfg, results)
    t0 = time.monotonic()
    summary = asyncio.run(run_ladder(cfg, store, results))
    wall = time.monotonic() - t0
    games = list(store.db.execute("SELECT wall_ms, think_ms, record_path FROM games"))
    game_ms = sum(g[0] for g in games)
    referee_ms = sum(g[1] for g in games)  # decision time seen at the referee
    bot_ms = 0.0
    decisions = 0
    for _, _, path in games:
        for log in json.loads(Path(path).read_text())["logs"].values():
            for n, ms in THINK.findall(log):
                decisions += int(n)
                bot_ms += float(ms)
    store.close()
    return {"games": summary.played, "wall_s": wall, "per_min": summary.played / wall * 60,
            "game_ms": game_ms, "referee_ms": referee_ms, "bot_ms": bot_ms,
            "decisions": decisions}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        rows = {c: run(args.boards, c, Path(d)) for c in (1, 2)}
    print(f"ladder: heuristic/random/weak, moon3, {args.boards} boards x 6 seatings")
    print(f"{'':38}{'concurrency 1':>16}{'concurrency 2':>16}")

    def line(label: str, fmt: str, key) -> None:
        print(f"{label:38}" + "".join(f"{format(key(rows[c]), fmt):>16}" for c in (1, 2)))

    line("games", "d", lambda r: r["games"])
    line("games per minute", ".1f", lambda r: r["per_min"])
    line("wall seconds per game (each game)", ".2f", lambda r: r["game_ms"] / r["games"] / 1000)
    line("decisions per game", ".0f", lambda r: r["decisions"] / r["games"])
    line("bots' own thinking, % of game wall", ".1f",
         lambda r: 100 * r["bot_ms"] / r["game_ms"])
    line("outside the bots' thinking, %", ".1f",
         lambda r: 100 - 100 * r["bot_ms"] / r["game_ms"])
    line("  of which turn round trips, %", ".1f",
         lambda r: 100 * (r["referee_ms"] - r["bot_ms"]) / r["game_ms"])
    line("  of which start-up + bookkeeping, %", ".1f",
         lambda r: 100 - 100 * r["referee_ms"] / r["game_ms"])
    print(f"speed-up from concurrency 2: {rows[2]['per_min'] / rows[1]['per_min']:.2f}x")


if __name__ == "__main__":
    main()
