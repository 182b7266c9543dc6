"""An SDK bot that counts what the referee sends it, for the ``Join.quiet`` tests.

Usage: listener.py quiet|loud   (MOON_ADDRESS, MOON_TOKEN from the environment)

It plays the last legal action, asks for the public events (``loud``) or not (``quiet``),
and at the end writes to stderr one line ``LISTENED turns=N events=K kinds=a,b,...``.
"""

from __future__ import annotations

import sys
from collections import Counter

from moon_sdk import Bot, run


class Listener(Bot):
    name = "listener"
    wants_events = sys.argv[1] == "loud"

    def __init__(self) -> None:
        self.turns = 0
        self.events: Counter[str] = Counter()

    def act(self, obs):
        self.turns += 1
        return obs.legal_actions[-1]  # deterministic: bids 21, plays its highest legal tile

    def on_event(self, event):
        self.events[event.WhichOneof("kind")] += 1

    def on_game_over(self, result):
        kinds = ",".join(sorted(self.events))
        print(f"LISTENED turns={self.turns} events={sum(self.events.values())} kinds={kinds}",
              file=sys.stderr, flush=True)


run(Listener())
