"""An SDK bot that thinks for a long time over every decision (``PONDER_S`` seconds,
default 30), then takes the first legal action: a stream that stays open mid-turn."""

import os
import time

from moon_sdk import Bot, run


class Ponder(Bot):
    name = "ponder"

    def act(self, obs):
        time.sleep(float(os.environ.get("PONDER_S", "30")))
        return obs.legal_actions[0]


run(Ponder())
