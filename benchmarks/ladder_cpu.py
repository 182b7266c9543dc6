"""Ladder CPU per game: the CPU seconds (user + system) that a ladder game costs the
machine, with the example bots started as processes (the opt-out, ``fork_server =
false``) and forked from the fork server (the default, :mod:`arena.sandbox.forkserver`), side by
side in one run.

    .venv/bin/python benchmarks/ladder_cpu.py [--boards 2] [--reps 3]

Each repetition runs the same small duplicate ladder (heuristic, random, weak; moon3; no
admission check) through the real runner (:func:`arena.ladder.runner.run_ladder`: the
referee over gRPC, a fresh bot process per seat and game, records and results file) once
per mode, the modes alternating so that the machine's load hits both alike. A run's CPU
is this process's (``RUSAGE_SELF``: the referee, the runner, the bookkeeping) plus its
children's (``RUSAGE_CHILDREN``: every bot process, every tool that starts one, and the
fork server with the bots it forked, counted once it has exited at the end of the run),
from before the run to after it; divided by the games played. The figures are medians over
the repetitions.

A figure, not a test: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from arena.ladder.config import ladder_from_dict
from arena.ladder.runner import open_store, run_ladder

ROOT = Path(__file__).resolve().parents[1]
MODES = {"processes": False, "fork server": None}
"""Each mode's ``fork_server`` in the ladder file: processes is the opt-out; the fork
server is the default (the key unset, ``MOON_FORK_SERVER`` cleared)."""


def cpu() -> tuple[float, float]:
    """(this process's CPU seconds, its reaped children's)."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


def run(boards: int, fork: bool | None, tmp: Path, tag: str) -> dict[str, float]:
    """One ladder; its games, wall seconds and CPU seconds (self, children)."""
    data = {"ladder": {"name": f"cpu-{tag}", "preset": "moon3", "boards": boards,
                       "seed": 99, "concurrency": 1, "check": False},
            "bots": [{"path": str(ROOT / "example_bots" / b)}
                     for b in ("heuristic", "random", "weak")]}
    if fork is not None:
        data["ladder"]["fork_server"] = fork
    cfg = ladder_from_dict(data, tmp / "bench.toml")
    results = tmp / f"{tag}.sqlite"
    store = open_store(cfg, results)
    s0, c0 = cpu()
    t0 = time.monotonic()
    summary = asyncio.run(run_ladder(cfg, store, results))
    wall = time.monotonic() - t0
    s1, c1 = cpu()
    store.close()
    return {"games": summary.played, "wall": wall, "self": s1 - s0, "children": c1 - c0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=2, help="boards (6 games each); default 2")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each mode; default 3")
    args = ap.parse_args()
    os.environ.pop("MOON_FORK_SERVER", None)  # the default column is the shipped default
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as d:
        for rep in range(args.reps):
            for mode, fork in MODES.items():
                tag = f"{'proc' if fork is False else 'fork'}{rep}"
                rows[mode].append(run(args.boards, fork, Path(d), tag))

    def med(mode: str, key) -> float:
        return statistics.median(key(r) for r in rows[mode])

    games = rows["processes"][0]["games"]
    print(f"ladder CPU per game: heuristic/random/weak, moon3, {args.boards} boards x 6 "
          f"seatings = {games} games per run, concurrency 1; median of {args.reps} runs")
    print(f"{'':40}{'processes':>12}{'fork server':>14}{'ratio':>8}")
    print(f"{'':40}{'(opt-out)':>12}{'(default)':>14}")

    def line(label: str, key, unit: float = 1000, fmt: str = ".0f") -> None:
        a, b = med("processes", key) * unit, med("fork server", key) * unit
        print(f"{label:40}{format(a, fmt):>12}{format(b, fmt):>14}"
              f"{(b / a if a else float('nan')):>8.2f}")

    line("CPU ms per game (all processes)", lambda r: (r["self"] + r["children"]) / r["games"])
    line("  of which the arena process", lambda r: r["self"] / r["games"])
    line("  of which bots and their tools", lambda r: r["children"] / r["games"])
    line("wall ms per game", lambda r: r["wall"] / r["games"])
    print("ratio: fork server over processes (the aim: at most 0.5 for the CPU per game)")


if __name__ == "__main__":
    main()
