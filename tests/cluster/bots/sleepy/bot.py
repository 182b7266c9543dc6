"""tests/cluster's deterministic bot: the last legal action, after ``./delay`` seconds; it
says which ``./variant`` it is on stderr (so a test sees which version of it ran)."""

import sys
import time
from pathlib import Path

from moon_sdk import Bot, run

HERE = Path(__file__).resolve().parent
DELAY = float((HERE / "delay").read_text())
VARIANT = (HERE / "variant").read_text().strip()


class SleepyBot(Bot):
    name = "sleepy"
    version = "1.0"

    def act(self, obs):
        if DELAY:
            time.sleep(DELAY)
        return obs.legal_actions[-1]


if __name__ == "__main__":
    print(f"sleepy variant {VARIANT}", file=sys.stderr, flush=True)
    run(SleepyBot())
