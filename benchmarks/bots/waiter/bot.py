"""The waiting bot of benchmarks/distributed.py: the last legal action (it bids the moon
or passes, names the highest trump, plays the highest legal tile) after sleeping the
seconds in ``./delay``."""

import time
from pathlib import Path

from moon_sdk import Bot, run

DELAY = float((Path(__file__).resolve().parent / "delay").read_text())


class WaiterBot(Bot):
    name = "waiter"
    version = "1.0"

    def act(self, obs):
        time.sleep(DELAY)
        return obs.legal_actions[-1]


if __name__ == "__main__":
    run(WaiterBot())
