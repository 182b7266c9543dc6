"""Decisions per second of the research interfaces, side by side, for random play.

    .venv/bin/python benchmarks/research_envs.py [--games N] [--repeats N] [--preset P]

Plays the same ``--games`` seeds (``--max-hands`` deals at most, 200 as the arena's
default time control) with uniformly random legal actions through:

- ``play_local``: :func:`moon_sdk.local.play_local`, a random :class:`~moon_sdk.Bot` in
  every seat (the observation each turn, the record at the end);
- ``pettingzoo``: :func:`moon_sdk.pettingzoo_env.env` (the wrapped AEC env), the action
  drawn from the ``action_mask`` of ``env.last()``, which also builds the 397-float
  observation every step, with the compiled core (``MOON_ENGINE=compiled``, when
  ``moon_engine`` is installed) and with the pure engine (``MOON_ENGINE=pure``);
- ``openspiel``: the ``python_moon`` game (``max_hands`` as above), the chance nodes
  dealt from ``chance_outcomes()``, the action drawn from ``legal_actions()`` (no tensors
  asked for).

Each measurement runs in a fresh process (the engine is chosen at import; imports, set-up
and a warm-up game are not timed) and the variants take turns, ``--repeats`` times; the
table shows decisions per CPU-second of the measuring process (min / median / max over
the repeats: on a shared machine CPU time is the steadier figure) and each median's
ratio to ``play_local``'s. A figure, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

VARIANTS: dict[str, tuple[str, str]] = {
    "play_local": ("play_local", "auto"),
    "pettingzoo (compiled)": ("pettingzoo", "compiled"),
    "pettingzoo (pure)": ("pettingzoo", "pure"),
    "openspiel": ("openspiel", "auto"),
}
"""Row label: (what is measured, MOON_ENGINE)."""


def measure_play_local(preset: str, max_hands: int) -> Callable[[range], int]:
    from moon_sdk import Bot
    from moon_sdk.local import play_local
    from moon_sdk.rules import Ruleset

    class Random(Bot):
        name = "random"

        def __init__(self, seed: int) -> None:
            self.rng = random.Random(seed)

        def act(self, obs: Any) -> int:
            return self.rng.choice(obs.legal_actions)  # type: ignore[no-any-return]

    n = Ruleset.preset(preset).players

    def play(seeds: range) -> int:
        decisions = 0
        for seed in seeds:
            record = play_local([Random(seed * 10 + i) for i in range(n)], preset, seed=seed,
                                time_control={"max_hands": max_hands})
            decisions += len(record["actions"])
        return decisions
    return play


def measure_pettingzoo(preset: str, max_hands: int) -> Callable[[range], int]:
    import numpy as np
    from moon_sdk.pettingzoo_env import env

    e = env(preset, max_hands=max_hands)

    def play(seeds: range) -> int:
        decisions = 0
        for seed in seeds:
            rng = random.Random(seed)
            e.reset(seed=seed)
            for _agent in e.agent_iter():
                obs, _, terminated, truncated, _ = e.last()
                if terminated or truncated:
                    e.step(None)
                    continue
                legal = np.flatnonzero(obs["action_mask"])
                e.step(int(legal[rng.randrange(len(legal))]))
                decisions += 1
        return decisions
    return play


def measure_openspiel(preset: str, max_hands: int) -> Callable[[range], int]:
    from moon_sdk import openspiel_game

    game = openspiel_game.load_game(preset, max_hands=max_hands)

    def play(seeds: range) -> int:
        decisions = 0
        for seed in seeds:
            rng = random.Random(seed)
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    outcomes = s.chance_outcomes()
                    s.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                    continue
                legal = s.legal_actions()
                s.apply_action(legal[rng.randrange(len(legal))])
                decisions += 1
        return decisions
    return play


MEASURES = {"play_local": measure_play_local, "pettingzoo": measure_pettingzoo,
            "openspiel": measure_openspiel}


def child(what: str, preset: str, games: int, max_hands: int) -> None:
    """Measure one variant in this process; print its figures as JSON."""
    from moon_sdk.rules import fast

    play = MEASURES[what](preset, max_hands)  # imports and set-up, untimed
    play(range(1, 2))  # a warm-up game
    c0, t0 = time.process_time(), time.perf_counter()
    decisions = play(range(1000, 1000 + games))
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    print(json.dumps({"decisions": decisions, "cpu_s": cpu, "wall_s": wall,
                      "compiled": fast.COMPILED}))


def run(label: str, args: argparse.Namespace) -> dict[str, Any] | None:
    what, engine = VARIANTS[label]
    done = subprocess.run(
        [sys.executable, __file__, "--child", what, "--preset", args.preset,
         "--games", str(args.games), "--max-hands", str(args.max_hands)],
        capture_output=True, text=True, env={**os.environ, "MOON_ENGINE": engine})
    if done.returncode != 0:
        if "MOON_ENGINE=compiled" in done.stderr:
            return None  # no compiled core here
        raise RuntimeError(f"{label}: {done.stderr}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20, help="games per measurement [20]")
    ap.add_argument("--repeats", type=int, default=5, help="measurements per variant [5]")
    ap.add_argument("--preset", default="moon3", help="ruleset preset [moon3]")
    ap.add_argument("--max-hands", type=int, default=200, help="deals per game at most [200]")
    ap.add_argument("--child", choices=sorted(MEASURES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.preset, args.games, args.max_hands)
        return
    rates: dict[str, list[float]] = {label: [] for label in VARIANTS}
    decisions: dict[str, int] = {}
    for _ in range(args.repeats):
        for label in VARIANTS:
            r = run(label, args)
            if r is None:
                continue
            rates[label].append(r["decisions"] / r["cpu_s"])
            decisions[label] = r["decisions"]
    print(f"random play, {args.preset}, {args.games} games (max_hands {args.max_hands}), "
          f"{args.repeats} repeats; decisions per CPU-second")
    print(f"{'':24}{'decisions':>10}{'min':>10}{'median':>10}{'max':>10}"
          f"{'median / play_local':>21}")
    base = statistics.median(rates["play_local"])
    for label, rs in rates.items():
        if not rs:
            print(f"{label:24}  (not available: no compiled core)")
            continue
        med = statistics.median(rs)
        print(f"{label:24}{decisions[label]:>10}{min(rs):>10.0f}{med:>10.0f}{max(rs):>10.0f}"
              f"{med / base:>20.2f}x")


if __name__ == "__main__":
    main()
