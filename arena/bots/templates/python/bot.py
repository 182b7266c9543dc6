"""__NAME__: a Moon bot in Python (see README.md). Change `act`: it is the strategy.

The SDK (moon_sdk) does the protocol: it joins the seat, calls `act` for every turn and
sends the action back. `obs` has everything this seat may know; `obs.legal_actions` lists
every legal action, and moon_sdk.rules has the helpers to read them (action_kind,
action_tile, bid_value, ...). example_bots/heuristic/bot.py is a fuller example.
"""

import random

from moon_sdk import Bot, run


class MyBot(Bot):
    name = "__NAME__"
    version = "0.1"

    def act(self, obs):
        # Any element of obs.legal_actions is a legal answer: this picks one at random.
        return random.choice(obs.legal_actions)


if __name__ == "__main__":
    run(MyBot())
