"""An SDK bot that always takes the first legal action: it passes every auction, so a
table of passers redeals for ever (moon3, ``all_pass = redeal``) until the hand limit."""

from moon_sdk import Bot, run


class Passer(Bot):
    name = "passer"

    def act(self, obs):
        return obs.legal_actions[0]


run(Passer())
