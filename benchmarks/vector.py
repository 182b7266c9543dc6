"""Decisions per second through Python: one action at a time, the vector, the native loop.

    .venv/bin/python benchmarks/vector.py [--decisions N] [--repeats N] [--preset P]
    .venv/bin/python benchmarks/vector.py --differential 100000

Random play (every game to its end or ``--max-hands`` deals), side by side in one run:

- ``one at a time``: a ``GameState`` (compiled, then pure) driven from Python:
  ``legal_actions()``, a random choice, ``apply()``, a new game at each end;
- ``vector N``: :class:`moon_sdk.vector.VectorGames` (compiled; ``pure`` for N = 64) with
  ``copy=False``, the actions drawn in numpy (``argmax(mask * random int8)``: a random
  legal action, near uniform), the policy's time included; N = 1024 on one thread (the
  default) and on two (``threads=2``: the CPU figure counts both threads, so the wall one
  is its speed, when the machine has two cores free);
- ``N=1024 <mode> lists``: N = 1024 on one thread with ``observations=<mode>`` (float32,
  int8, none) and the policy drawing from ``info["legal_actions"]`` (``legal_actions[i,
  floor(u * legal_count[i])]``, ``u`` uniform in [0, 1): uniform over the legal actions);
- ``native``: ``moon_engine.random_games``, the same random play all inside the core.

The variants take turns, ``--repeats`` times; the table shows decisions per second of
wall-clock time and per CPU-second of this process (min / median / max; on a shared
machine CPU time is the steadier figure) and each CPU median's share of the native one.

``--differential GAMES`` instead steps compiled and pure vectors side by side, one of each
per observation mode (``--modes``; all three unless told), with the same random legal
actions over every configuration of tests/research/test_vector.py until GAMES games have
ended, comparing every array of every step: each mode's compiled and pure arrays, and the
modes with each other (int8 / ``observation_scale`` equal to float32; the masks, legal
lists, rewards, flags and seeds the same in all). It prints the counts (``--threads 2``:
the compiled vectors on two threads).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no BLAS threads spinning in the timing

import numpy as np  # noqa: E402
from moon_sdk import vector  # noqa: E402
from moon_sdk.rules import GameState as PureGameState  # noqa: E402
from moon_sdk.rules import Ruleset, fast  # noqa: E402

CONFIGS: list[tuple[str, dict[str, Any], str, int]] = [
    ("moon3", {}, "observation", 4),
    ("moon4", {}, "information_state", 3),
    ("moon3", {"trump_before_widow": True, "all_pass": "force_dealer", "min_bid": 3},
     "information_state", 5),
    ("moon4", {"scoring": "marks", "team_made_scores": "bid", "allow_no_trump": False},
     "observation", 5),
    ("moon3", {"remove_double_blank": True, "moon_wins_game": False,
               "allow_doubles_trump": False}, "observation", 5),
    ("moon4", {"min_bid": 5, "target_score": 11}, "observation", 20),
]
"""The differential's configurations: (preset, options, features, max_hands)."""


def one_at_a_time(state_class: type, ruleset: Ruleset, max_hands: int,
                  decisions: int) -> Callable[[], int]:
    def run() -> int:
        rng = random.Random(1)
        seed, done = 0, 0
        s = state_class(ruleset, seed)
        while done < decisions:
            if s.is_terminal() or s.hand_number >= max_hands:
                seed += 1
                s = state_class(ruleset, seed)
            s.apply(rng.choice(s.legal_actions()))
            done += 1
        return done
    return run


def vectored(n: int, preset: str, max_hands: int, decisions: int, engine: str,
             threads: int = 1, observations: str = "float32",
             lists: bool = False) -> Callable[[], int]:
    """A run of ``decisions`` random decisions (``lists``: drawn from the legal lists, else
    by argmax of the mask times noise)."""
    games = vector.VectorGames(n, preset, max_hands=max_hands, engine=engine, copy=False,
                               threads=threads, observations=observations)
    noise = np.random.default_rng(0).integers(1, 128, (16, n, 72), dtype=np.int8)
    uniform = np.random.default_rng(0).random((16, n))
    rows = np.arange(n)
    steps = max(1, decisions // n)

    def run() -> int:
        _, info = games.reset(seed=1)
        if lists:
            legal, count = info["legal_actions"], info["legal_count"]
            for t in range(steps):
                games.step(legal[rows, (uniform[t & 15] * count).astype(np.intp)])
        else:
            mask = info["action_mask"]
            for t in range(steps):
                games.step(np.argmax(mask * noise[t & 15], axis=1))
        return steps * n
    return run


def native(ruleset: Ruleset, max_hands: int, decisions: int) -> Callable[[], int]:
    assert fast.core is not None
    core = fast.core
    per_game = max(1, core.random_games(ruleset, 20, 99, max_hands) // 20)

    def run() -> int:
        return int(core.random_games(ruleset, max(1, decisions // per_game), 1, max_hands))
    return run


def timed(run: Callable[[], int]) -> tuple[float, float]:
    """(decisions per wall second, per CPU second) of one call."""
    w, c = time.perf_counter(), time.process_time()
    done = run()
    w, c = time.perf_counter() - w, time.process_time() - c
    return done / w, done / max(c, 1e-9)


def benchmark(args: argparse.Namespace) -> None:
    ruleset = Ruleset.preset(args.preset)
    d, mh = args.decisions, args.max_hands
    variants: dict[str, Callable[[], int]] = {}
    if vector.compiled_available():
        variants["one at a time (compiled)"] = one_at_a_time(fast.GameState, ruleset, mh, d // 4)
    variants["one at a time (pure)"] = one_at_a_time(PureGameState, ruleset, mh, d // 40)
    variants["vector N=64 (pure)"] = vectored(64, args.preset, mh, d // 40, "pure")
    if vector.compiled_available():
        for n in (1, 64):
            variants[f"vector N={n} (compiled)"] = vectored(n, args.preset, mh,
                                                            d // 8 if n == 1 else d, "compiled")
        for t in (1, 2):
            variants[f"vector N=1024 ({t} thread{'s' * (t > 1)})"] = vectored(
                1024, args.preset, mh, d, "compiled", threads=t)
        for mode in vector.OBSERVATIONS:
            variants[f"N=1024 {mode} lists"] = vectored(1024, args.preset, mh, d, "compiled",
                                                        observations=mode, lists=True)
        variants["native"] = native(ruleset, mh, d * 4)
    for run in variants.values():  # warm-up
        run()
    wall: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(args.repeats):
        for label, run in variants.items():
            w, c = timed(run)
            wall[label].append(w)
            cpu[label].append(c)
    load = os.getloadavg()[0]
    print(f"random play, {args.preset} (max_hands {mh}), {args.repeats} repeats, "
          f"load average {load:.1f} on {os.cpu_count()} CPUs; million decisions per second")
    print(f"{'':28}{'wall min':>9}{'median':>8}{'max':>7}{'CPU min':>9}{'median':>8}{'max':>7}"
          f"{'CPU / native':>14}")
    base = statistics.median(cpu["native"]) if "native" in cpu else None
    for label in variants:
        ws, cs = wall[label], cpu[label]
        share = f"{statistics.median(cs) / base:>13.3f}x" if base else ""
        print(f"{label:28}{min(ws) / 1e6:>9.3f}{statistics.median(ws) / 1e6:>8.3f}"
              f"{max(ws) / 1e6:>7.3f}{min(cs) / 1e6:>9.3f}{statistics.median(cs) / 1e6:>8.3f}"
              f"{max(cs) / 1e6:>7.3f}{share}")


def _same(x: Any, y: Any) -> bool:
    return bool(x.dtype == y.dtype and np.array_equal(x, y))


def differential(games: int, num_games: int, only: list[int] | None = None,
                 threads: int = 1, modes: tuple[str, ...] = vector.OBSERVATIONS) -> None:
    if not vector.compiled_available():
        sys.exit("the differential needs the compiled core with its vector (make setup)")
    chosen = [c for i, c in enumerate(CONFIGS) if only is None or i in only]
    per = -(-games // len(chosen))
    total = {"games": 0, "terminated": 0, "truncated": 0, "decisions": 0}
    start = time.perf_counter()
    for number, (preset, options, features, max_hands) in enumerate(CONFIGS):
        if only is not None and number not in only:
            continue
        pairs = {m: tuple(vector.VectorGames(num_games, preset, max_hands=max_hands,
                                             features=features, engine=e, threads=t,
                                             observations=m, **options)
                          for e, t in (("compiled", threads), ("pure", 1)))
                 for m in modes}
        scale = pairs[modes[0]][0].observation_scale
        first = {m: (a.reset(seed=1000 + number), b.reset(seed=1000 + number))
                 for m, (a, b) in pairs.items()}
        for m, ((oa, ia), (ob, ib)) in first.items():
            if not (_same(oa, ob) and all(_same(ia[k], ib[k]) for k in ia)):
                sys.exit(f"{preset} {options} {m}: the first decisions differ")
        ia = first[modes[0]][0][1]
        rng = np.random.default_rng(number)
        ended = terminated = steps = 0
        while ended < per:
            noise = rng.integers(1, 128, ia["action_mask"].shape, dtype=np.int8)
            actions = np.argmax(ia["action_mask"] * noise, axis=1)
            results = {m: (a.step(actions), b.step(actions)) for m, (a, b) in pairs.items()}
            for m, (ra, rb) in results.items():
                same = all(_same(x, y) for x, y in zip(ra[:4], rb[:4], strict=True))
                same = same and ra[4].keys() == rb[4].keys()
                same = same and all(_same(ra[4][k], rb[4][k]) for k in ra[4])
                if not same:
                    sys.exit(f"{preset} {options} {m}: step {steps} differs")
            ra = results[modes[0]][0]
            for m, (rm, _) in results.items():  # the modes agree with each other
                same = all(_same(x, y) for x, y in zip(ra[1:4], rm[1:4], strict=True))
                same = same and all(_same(ra[4][k], rm[4][k]) for k in ra[4])
                if not same:
                    sys.exit(f"{preset} {options} {modes[0]}, {m}: step {steps} differs")
            if "float32" in results and "int8" in results:
                f32, i8 = results["float32"][0][0], results["int8"][0][0]
                if not np.array_equal(f32, i8.astype(np.float32) / scale):
                    sys.exit(f"{preset} {options}: step {steps}: int8 / scale is not float32")
            ia = ra[4]
            steps += 1
            ended += int(ra[2].sum() + ra[3].sum())
            terminated += int(ra[2].sum())
        total["games"] += ended
        total["terminated"] += terminated
        total["truncated"] += ended - terminated
        total["decisions"] += steps * num_games
        print(f"{preset} {options} {features} max_hands {max_hands}: {ended} games "
              f"({terminated} to the end), {steps * num_games} decisions, all equal",
              flush=True)
    print(f"differential: {total['games']} games ({total['terminated']} to the end, "
          f"{total['truncated']} stopped at max_hands), {total['decisions']} decisions, "
          f"compiled and pure vectors ({', '.join(modes)}; threads {threads}) equal at "
          f"every step ({time.perf_counter() - start:.0f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=2_000_000,
                    help="decisions per vector measurement (fewer for the slow ones) [2e6]")
    ap.add_argument("--repeats", type=int, default=5, help="measurements per variant [5]")
    ap.add_argument("--preset", default="moon3", help="ruleset preset [moon3]")
    ap.add_argument("--max-hands", type=int, default=200, help="deals per game at most [200]")
    ap.add_argument("--differential", type=int, metavar="GAMES",
                    help="compare the compiled and pure vectors over GAMES games instead")
    ap.add_argument("--num-games", type=int, default=256,
                    help="games per vector in the differential [256]")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of the compiled vector in the differential [1]")
    ap.add_argument("--modes", default=",".join(vector.OBSERVATIONS),
                    help="the differential's observation modes (comma-separated) "
                    "[float32,int8,none]")
    ap.add_argument("--configs", help="the differential's configurations to run, by number "
                    "from 0 (comma-separated; to split it over processes) [all]")
    args = ap.parse_args()
    if args.differential:
        only = [int(x) for x in args.configs.split(",")] if args.configs else None
        modes = tuple(args.modes.split(","))
        if not modes or any(m not in vector.OBSERVATIONS for m in modes):
            ap.error(f"--modes: some of {', '.join(vector.OBSERVATIONS)}")
        differential(args.differential, args.num_games, only, args.threads, modes)
    else:
        benchmark(args)


if __name__ == "__main__":
    main()
