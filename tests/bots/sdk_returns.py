"""A Python SDK bot whose act() returns something other than a plain int, for the SDK tests.

Usage: sdk_returns.py MODE   (MOON_ADDRESS, MOON_TOKEN from the environment)

- numpy: every action as a ``numpy.int64`` (a random legal one);
- no_action: its first turn answers 1062, its second ``None`` (no actions at all), every
  later one a random legal action; it prints ``REJECTED <reason>`` on stderr for each
  rejection.
"""

from __future__ import annotations

import random
import sys

import numpy as np
from moon_sdk import Bot, run

MODE = sys.argv[1]


class Returns(Bot):
    name = f"sdk-{MODE}"

    def __init__(self) -> None:
        self.turns = 0
        self.rng = random.Random(5)

    def act(self, obs):
        self.turns += 1
        if MODE == "no_action" and self.turns == 1:
            return 1062
        if MODE == "no_action" and self.turns == 2:
            return None
        choice = self.rng.choice(obs.legal_actions)
        return np.int64(choice) if MODE == "numpy" else choice

    def on_rejected(self, rejected) -> None:
        print(f"REJECTED {rejected.reason}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    run(Returns())
