"""The learned bot: a small network trained by train.py beside it (REINFORCE in self-play
on moon_sdk.vector), its weights in weights.npz. Each turn it computes the observation
features the vector trained on and plays the legal action of highest logit."""

from pathlib import Path

import numpy as np
from moon_sdk import Bot, run
from moon_sdk.features import observation_features

WEIGHTS = Path(__file__).with_name("weights.npz")


class LearnedBot(Bot):
    name = "learned"
    version = "1.0"

    def __init__(self, weights: Path = WEIGHTS) -> None:
        with np.load(weights) as w:
            self.w1, self.b1, self.w2, self.b2 = (
                w[k].astype(np.float32) for k in ("w1", "b1", "w2", "b2"))

    def logits(self, obs) -> np.ndarray:
        x = np.asarray(observation_features(obs), np.float32)
        return np.tanh(x @ self.w1 + self.b1) @ self.w2 + self.b2

    def act(self, obs):
        logits = self.logits(obs)
        return max(obs.legal_actions, key=lambda a: logits[a])


if __name__ == "__main__":
    run(LearnedBot())
