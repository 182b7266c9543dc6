"""N games of Moon stepped in one call, Gymnasium vector-env style (a start; needs the
``pettingzoo`` extra for numpy).

    from moon_sdk.vector import VectorGames

    games = VectorGames(64, "moon3", max_hands=200)
    obs, info = games.reset(seed=7)              # obs: float32[64, 397]
    while True:
        actions = policy(obs, info["action_mask"])   # one action per game
        obs, rewards, terminated, truncated, info = games.step(actions)

Each game is one whole game of hands, as :func:`moon_sdk.pettingzoo_env.env` plays it: the
action is the seat's to act (``info["seat"]``), the observation is that seat's
:func:`moon_sdk.features.observation_features` vector (``features="information_state"``:
the 1209-long one) and ``info["action_mask"]`` its legal actions. ``rewards`` is
``float32[N, players]``: each seat's side's score change when a hand ends in that step
(PettingZoo's ``reward="hand"``). A game that ends (``terminated``: by the rules;
``truncated``: after ``max_hands`` deals) starts the next game at once (its seed drawn
from the seed of :meth:`VectorGames.reset`); the returned row is the new game's first
decision, and ``info["final_scores"]`` holds the ended games' scores by side.

The games run on :data:`moon_sdk.rules.fast.GameState` (the compiled core when it is
installed, which also builds the vectors; else the pure engine), one call per game inside
each :meth:`VectorGames.step`; batching the N games into one call of the compiled core is
the next step. An illegal action raises ``IllegalActionError`` (the game unchanged).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from .features import INFORMATION_STATE_SIZE, OBSERVATION_SIZE
from .local import resolve_ruleset
from .pettingzoo_env import _Features
from .rules import Phase, Ruleset
from .rules.actions import NUM_ACTIONS
from .rules.fast import GameState

_GAME_OVER = Phase.GAME_OVER


class VectorGames:
    """``num_games`` games of one ruleset (see the module doc).

    Raises:
        RulesetError: an unknown preset or option.
        ValueError: a bad ``num_games``, ``max_hands`` or ``features``.
    """

    def __init__(self, num_games: int, ruleset: Ruleset | str = "moon3", *,
                 max_hands: int = 200, features: str = "observation", **options: Any) -> None:
        rules, _ = resolve_ruleset(ruleset)
        if options:
            rules = Ruleset.from_dict({**rules.to_dict(), **options})
        if not isinstance(num_games, int) or num_games < 1:
            raise ValueError(f"num_games must be a whole number of at least 1, not "
                             f"{num_games!r}")
        if not isinstance(max_hands, int) or max_hands < 1:
            raise ValueError(f"max_hands must be a whole number of at least 1, not {max_hands!r}")
        if features not in ("observation", "information_state"):
            raise ValueError(f"features must be 'observation' or 'information_state', "
                             f"not {features!r}")
        self.ruleset = rules
        self.num_games = num_games
        self.max_hands = max_hands
        self._sequence = features == "information_state"
        self.size = INFORMATION_STATE_SIZE if self._sequence else OBSERVATION_SIZE
        """Length of an observation row."""
        n = rules.players
        self._sides = [rules.side_of(p) for p in range(n)]
        self._seeds = random.Random()
        self.games: list[Any] = []
        """The engine states of the games in play (read them, do not change them)."""
        self.game_seeds: list[int] = []
        """Each game's seed (its deals are `moon play --seed` ones)."""
        self._features: list[_Features] = []

    def _start(self, i: int) -> None:
        seed = self._seeds.getrandbits(63)
        self.game_seeds[i] = seed
        self.games[i] = GameState(self.ruleset, seed)
        self._features[i].new_hand()

    def _row(self, i: int, obs: np.ndarray, mask: np.ndarray, seats: np.ndarray) -> None:
        s = self.games[i]
        seat = s.current
        seats[i] = seat
        obs[i] = self._features[i](s, seat)
        mask[i, s.legal_actions()] = 1

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start ``num_games`` new games (seeds drawn from ``seed``); their first
        decisions: ``(obs, {"action_mask", "seat"})``."""
        if seed is not None:
            self._seeds = random.Random(seed)
        k = self.num_games
        self.games = [None] * k
        self.game_seeds = [0] * k
        self._features = [_Features(self.ruleset, self._sequence) for _ in range(k)]
        obs = np.zeros((k, self.size), np.float32)
        mask = np.zeros((k, NUM_ACTIONS), np.int8)
        seats = np.zeros(k, np.int64)
        for i in range(k):
            self._start(i)
            self._row(i, obs, mask, seats)
        return obs, {"action_mask": mask, "seat": seats}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Play one action in each game (``actions[i]`` for game ``i``, by its seat to
        act): ``(obs, rewards, terminated, truncated, info)`` (see the module doc).

        Raises:
            ValueError: not one action per game.
            IllegalActionError: an action is not legal (the games before it have moved).
        """
        acts = [int(a) for a in actions]
        k = self.num_games
        if len(acts) != k:
            raise ValueError(f"{k} games need {k} actions, not {len(acts)}")
        n = self.ruleset.players
        obs = np.zeros((k, self.size), np.float32)
        mask = np.zeros((k, NUM_ACTIONS), np.int8)
        seats = np.zeros(k, np.int64)
        rewards = np.zeros((k, n), np.float32)
        terminated = np.zeros(k, bool)
        truncated = np.zeros(k, bool)
        final: dict[int, list[int]] = {}
        sides = self._sides
        for i, action in enumerate(acts):
            s = self.games[i]
            hand = s.hand_number
            seat = s.current
            s.apply(action)
            if action < 28:  # a play
                self._features[i].played_tile(seat, action)
            over = s.phase == _GAME_OVER
            if over or s.hand_number != hand:
                deltas = s.hand_records[-1].deltas
                rewards[i] = [deltas[sides[p]] for p in range(n)]
                if not over:
                    self._features[i].new_hand()
            stopped = not over and s.hand_number >= self.max_hands
            if over or stopped:
                terminated[i] = over
                truncated[i] = stopped
                final[i] = list(s.scores)
                self._start(i)
            self._row(i, obs, mask, seats)
        return obs, rewards, terminated, truncated, {"action_mask": mask, "seat": seats,
                                                     "final_scores": final}


__all__ = ["VectorGames"]
