"""The trivial bot of benchmarks/referee.py: always the last legal action.

Not the first one: in the auction that is a pass, and when every seat passes, ``moon3``
redeals, forever. The last one bids the moon (or passes when it cannot), names the highest
trump and plays the highest legal tile, so games end (a few dozen to a thousand decisions).
With ``--events`` it asks for every public event; by default it joins ``quiet``.
"""

import sys

from moon_sdk import Bot, run


class TrivialBot(Bot):
    name = "trivial"
    version = "1.0"
    wants_events = True if "--events" in sys.argv else None  # None: the SDK joins quiet

    def act(self, obs):
        return obs.legal_actions[-1]


if __name__ == "__main__":
    run(TrivialBot())
