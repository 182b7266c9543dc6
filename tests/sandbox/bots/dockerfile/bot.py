"""A bot that lives in its own image: the first legal action, and where it runs."""

import os
import sys

from moon_sdk import Bot, run


class FirstLegal(Bot):
    name = "dockerfile-bot"
    version = "1"

    def act(self, obs):
        return obs.legal_actions[0]


if __name__ == "__main__":
    print(f"IMAGE BOT in {os.getcwd()}: {sorted(os.listdir('.'))}", file=sys.stderr, flush=True)
    run(FirstLegal())
