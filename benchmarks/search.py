"""How many playouts a second does the search bot (example_bots/search) play, on the pure
engine and with the compiled core, side by side?

    .venv/bin/python benchmarks/search.py [--samples 200] [--runs 3] [--points 40]

The bot decides at the same decision points (bids, discards, trumps and plays from seeded
random games of moon3 and moon4, ``--points`` of each) with a fixed number of deals per
decision (``--samples``), so both runs do the same work; each run is a fresh process with
``MOON_ENGINE=pure`` or ``MOON_ENGINE=compiled`` (the bot's playout and quick count are then
its Python functions or the compiled core's), timed in CPU seconds (``time.process_time``).
Playouts a decision are counted in an untimed pass. The runs alternate and the best of each
is kept; the two must make the same decisions with the same values (the same seed, the
same deals: the compiled functions are the Python ones move for move), which is checked.
Nothing here is asserted in the tests; the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def decision_points(points: int) -> list[object]:
    """Observations of the seat to act at random moments of seeded random games."""
    from moon_sdk.rules import GameState, Ruleset, observe

    out: list[object] = []
    rng = random.Random(1)
    for preset in ("moon3", "moon4"):
        got = 0
        seed = 0
        while got < points:
            s = GameState(Ruleset.preset(preset), seed)
            seed += 1
            while not s.is_terminal() and s.hand_number < 2 and got < points:
                if rng.random() < 0.1 and len(s.legal_actions()) > 1:
                    out.append(observe(s, s.current_player))
                    got += 1
                s.apply(rng.choice(s.legal_actions()))
    return out


def child(samples: int, points: int) -> None:
    """One run (in this process, with the engine MOON_ENGINE chose): print JSON."""
    sys.path.insert(0, str(ROOT / "example_bots" / "search"))
    import moon_search.search as search_module
    from moon_search import Searcher
    from moon_search.playout import COMPILED

    obs = decision_points(points)

    def decide() -> tuple[list[object], int]:
        searcher = Searcher(seed=1, min_samples=samples, max_samples=samples)
        out: list[object] = []
        deals = 0
        for o in obs:
            a = searcher.act(o, think_s=0.0)
            out.append((a, [round(v, 9) for v in searcher.last_values]))
            deals += searcher.last_samples
        return out, deals

    # the count of playouts: an untimed pass through a counting wrapper
    real = search_module.playout
    calls = 0

    def counting(*args: object, **kw: object) -> object:
        nonlocal calls
        calls += 1
        return real(*args, **kw)

    search_module.playout = counting
    decide()
    search_module.playout = real
    start = time.process_time()
    decisions, deals = decide()
    elapsed = time.process_time() - start
    digest = hashlib.sha256(json.dumps(decisions).encode()).hexdigest()[:16]
    print(json.dumps({"compiled": COMPILED, "seconds": elapsed, "deals": deals,
                      "playouts": calls, "decisions": len(decisions), "digest": digest}))


def run(engine: str, samples: int, points: int) -> dict[str, Any]:
    env = {**os.environ, "MOON_ENGINE": engine}
    out = subprocess.run([sys.executable, __file__, "--child", "--samples", str(samples),
                          "--points", str(points)], capture_output=True, text=True,
                         env=env, check=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=200, help="deals per decision (200)")
    p.add_argument("--points", type=int, default=40, help="decisions per preset (40)")
    p.add_argument("--runs", type=int, default=3, help="runs per figure, best kept (3)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.samples, args.points)
        return
    results: dict[str, list[dict[str, Any]]] = {"pure": [], "compiled": []}
    for _ in range(args.runs):
        for engine in results:
            try:
                results[engine].append(run(engine, args.samples, args.points))
            except subprocess.CalledProcessError as e:
                if engine == "compiled" and "MOON_ENGINE=compiled but" in e.stderr:
                    print("compiled core not installed: " + e.stderr.strip().splitlines()[-1])
                    results.pop("compiled")
                    break
                raise
    print(f"search bot: {2 * args.points} decisions (moon3 and moon4) x {args.samples} deals, "
          f"best of {args.runs}, CPU time")
    header = (f"{'engine':>8} | {'seconds':>7} {'deals/s':>9} {'playouts/s':>10} "
              f"{'x pure':>6} | decisions")
    print(header)
    print("-" * len(header))
    best = {e: min(rs, key=lambda r: r["seconds"]) for e, rs in results.items()}
    base = best["pure"]["seconds"]
    for engine, r in best.items():
        sec = r["seconds"]
        print(f"{engine:>8} | {sec:>7.2f} {r['deals'] / sec:>9,.0f} "
              f"{r['playouts'] / sec:>10,.0f} {base / sec:>5.2f}x | {r['digest']}")
    digests = {r["digest"] for rs in results.values() for r in rs}
    print("same decisions and values on both engines" if len(digests) == 1
          else f"DIFFERENT decisions: {sorted(digests)}")


if __name__ == "__main__":
    main()
