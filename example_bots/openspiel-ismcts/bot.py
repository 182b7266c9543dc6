"""An OpenSpiel bot in the arena: information-set Monte Carlo tree search.

OpenSpiel's Python ISMCTS (``open_spiel.python.algorithms.ismcts``) searches the hand in
play as the ``python_moon`` game: each simulation deals the tiles this seat has not seen
anew, consistently with everything it saw (``resample_from_infostate``), and plays on
with random rollouts. :class:`moon_sdk.openspiel_game.OpenSpielBot` turns it into an arena
bot: any ``pyspiel.Bot`` enters the same way (docs/research.md).

Simulations per decision: ``MOON_ISMCTS_SIMULATIONS`` (default 100).
"""

import os
import sys

try:
    import numpy as np
    from moon_sdk.openspiel_game import OpenSpielBot
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError as e:
    print(f"this bot needs OpenSpiel ({e}): pip install 'moon-sdk[openspiel]'",
          file=sys.stderr)
    sys.exit(2)

from moon_sdk import run


def simulations() -> int:
    """Simulations per decision, from ``MOON_ISMCTS_SIMULATIONS`` (default 100)."""
    try:
        return max(1, int(os.environ.get("MOON_ISMCTS_SIMULATIONS", "100")))
    except ValueError:
        return 100


def make(game, seat):
    """The OpenSpiel bot for ``seat`` of ``game`` (a one-hand ``python_moon``)."""
    rng = np.random.RandomState(seat)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    return ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=simulations(),
                            random_state=rng)


class IsmctsBot(OpenSpielBot):
    name = "openspiel-ismcts"
    version = "1.0"

    def __init__(self) -> None:
        super().__init__(make, scope="hand", seed=0)


if __name__ == "__main__":
    run(IsmctsBot())
