"""The weak bot: always passes (bids only when the rules force it) and always plays its
lowest legal tile. A floor every real bot must clear."""

from moon_sdk import Bot, run
from moon_sdk.rules import PASS, ActionKind, action_kind


class WeakBot(Bot):
    name = "weak"
    version = "1.0"

    def act(self, obs):
        legal = obs.legal_actions
        if action_kind(legal[0]) is ActionKind.BID:
            return PASS if PASS in legal else legal[0]
        return legal[0]  # the lowest tile / first option


if __name__ == "__main__":
    run(WeakBot())
