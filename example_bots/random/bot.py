"""The random bot: a uniformly random legal action every turn. The baseline."""

import random

from moon_sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1.0"

    def act(self, obs):
        return random.choice(obs.legal_actions)


if __name__ == "__main__":
    run(RandomBot())
