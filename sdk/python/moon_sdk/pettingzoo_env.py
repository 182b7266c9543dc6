"""Moon as a PettingZoo AEC environment (``pip install 'moon-sdk[pettingzoo]'``).

    from moon_sdk.pettingzoo_env import env

    e = env("moon3", render_mode="ansi")
    e.reset(seed=7)                      # the deals of `moon play --seed 7`
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, info = e.last()
        if terminated or truncated:
            action = None
        else:
            action = e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

Agents are ``seat_0`` .. ``seat_2`` (or ``seat_3``), one per seat, acting in the rules'
order (docs/rules.md), through whole games of hands until the target (``termination``)
or ``max_hands`` deals (``truncation``). Every option of :class:`~moon_sdk.rules.Ruleset`
works: give a preset name, a ``Ruleset``, or a preset name and option overrides
(``env("moon3", min_bid=3, all_pass="force_dealer")``).

- Actions: ``Discrete(72)``, the engine's action ints (:mod:`moon_sdk.rules.actions`).
- Observations: ``{"observation": float32[397], "action_mask": int8[72]}``: the vector of
  :func:`moon_sdk.features.observation_features` of what the arena would show the seat
  (``features="information_state"``: the 1209-long perfect-recall-within-the-hand one),
  and the legal actions of the seat to act (all zero for the others).
- Rewards: ``reward="hand"`` (default): at the end of each hand, every seat gets its
  side's score change (points or marks, docs/rules.md "Scoring"), so a game's rewards sum
  to its final scores; ``reward="game"``: at the end only, +1 to the winning side's
  seats and -1 to the others (0 to all when a game stopped at ``max_hands`` has no
  single leader).
- ``render_mode="ansi"``: :meth:`raw_env.render` returns the table as text.

:func:`env` wraps :class:`raw_env` in PettingZoo's usual wrappers: an illegal action ends
the game with reward -1 for the seat that made it (``TerminateIllegalWrapper``, judging by
the game's own legal actions). Observations (the dict and its arrays) are new at every
``observe()``/``last()``, the caller's to change: writing into the mask or the features
changes nothing the env knows.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .features import (
    INFORMATION_STATE_SIZE,
    OBSERVATION_SIZE,
    information_state_features,
    observation_features,
)
from .local import Observer, resolve_ruleset
from .rules import GameState, Observation, Ruleset, observe
from .rules.actions import NUM_ACTIONS
from .text import table_text


def env(ruleset: Ruleset | str = "moon3", **kwargs: Any) -> AECEnv:
    """A wrapped :class:`raw_env` (illegal actions end the game with reward -1 for the seat
    that made it; actions out of range and a wrong calling order raise). Arguments as
    :class:`raw_env`."""
    e: AECEnv = raw_env(ruleset, **kwargs)
    e = _TerminateIllegal(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class _TerminateIllegal(wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper``, judging each action by the game's own legal
    actions. PettingZoo's checks the action mask of the very observation it handed out,
    which is the caller's: writing into it let an illegal action through to
    :meth:`raw_env.step`, which raises."""

    def step(self, action: Any) -> None:
        self._prev_obs = {"action_mask": self.env.unwrapped._legal_mask(self.agent_selection)}
        super().step(action)


class raw_env(AECEnv, EzPickle):  # noqa: N801 (PettingZoo's name for it)
    """Moon, one whole game per episode (see the module doc)."""

    metadata = {"render_modes": ["ansi"], "name": "moon_v0", "is_parallelizable": False}

    def __init__(self, ruleset: Ruleset | str = "moon3", *, render_mode: str | None = None,
                 max_hands: int = 200, reward: str = "hand",
                 features: str = "observation", **options: Any) -> None:
        """
        Args:
            ruleset: a preset name or a :class:`Ruleset`; ``options`` override its
                options (``min_bid=3``...).
            max_hands: deals after which a game that has not ended is truncated.
            reward: ``"hand"`` or ``"game"`` (see the module doc).
            features: ``"observation"`` or ``"information_state"``.

        Raises:
            RulesetError: an unknown preset or option, or a bad value.
            ValueError: a bad ``render_mode``, ``reward``, ``features`` or ``max_hands``.
        """
        EzPickle.__init__(self, ruleset, render_mode=render_mode, max_hands=max_hands,
                          reward=reward, features=features, **options)
        super().__init__()
        rules, _ = resolve_ruleset(ruleset)
        if options:
            rules = Ruleset.from_dict({**rules.to_dict(), **options})
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if reward not in ("hand", "game"):
            raise ValueError(f"reward must be 'hand' or 'game', not {reward!r}")
        if features not in ("observation", "information_state"):
            raise ValueError(f"features must be 'observation' or 'information_state', "
                             f"not {features!r}")
        if not isinstance(max_hands, int) or max_hands < 1:
            raise ValueError(f"max_hands must be a whole number of at least 1, not {max_hands!r}")
        self.ruleset = rules
        self.render_mode = render_mode
        self.max_hands = max_hands
        self.reward_mode = reward
        self._features = (information_state_features if features == "information_state"
                          else observation_features)
        size = INFORMATION_STATE_SIZE if features == "information_state" else OBSERVATION_SIZE
        self.possible_agents = [f"seat_{i}" for i in range(rules.players)]
        self.agents = self.possible_agents[:]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(-2.0, 2.0, (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})
            for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._seeds = random.Random()
        self.game_seed = 0
        """The seed of the game in play (its deals are `moon play --seed` ones)."""
        self._game: GameState | None = None
        self._observer = Observer()

    # -- spaces ----------------------------------------------------------------------------
    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        """The agent's observation space (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space[Any]:
        """``Discrete(72)``: the engine's action ints."""
        return self.action_spaces[agent]

    # -- the game --------------------------------------------------------------------------
    @property
    def game(self) -> GameState:
        """The engine state of the game in play (read it, do not change it).

        Raises:
            RuntimeError: before the first :meth:`reset`.
        """
        if self._game is None:
            raise RuntimeError("call reset() first")
        return self._game

    def moon_observation(self, agent: str) -> Observation:
        """What the arena would show ``agent``'s seat now: the
        :class:`~moon_sdk.rules.Observation` a :class:`~moon_sdk.Bot` gets in ``act``."""
        return observe(self.game, self._seat[agent])

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game. ``seed``: its deals and first dealer are those of `moon play
        --seed SEED` (docs/rules.md, "Deal and dealer"), and the games of later resets
        without a seed follow from it; ``options`` are ignored."""
        if seed is not None:
            self._seeds = random.Random(seed)
            self.game_seed = int(seed)
        else:
            self.game_seed = self._seeds.getrandbits(63)
        self._game = GameState(self.ruleset, self.game_seed)
        self._observer = Observer()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._game.current]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": features, "action_mask": legal actions}`` of ``agent``'s seat
        (no legal action once its episode is over: after a truncation the features show
        the game as it would go on, the next hand dealt). The dict and its arrays are new
        at every call, the caller's to change: what the env takes as legal is the game's
        own (writing a 1 into the mask makes no action legal)."""
        seat = self._seat[agent]
        s = self.game
        legal = self._legal(agent)
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask[legal] = 1
        view = self._observer(s, seat, legal)  # = observe(s, seat), kept up as the game goes
        return {"observation": np.asarray(self._features(view), np.float32),
                "action_mask": mask}

    def _legal(self, agent: str) -> list[int]:
        """``agent``'s legal actions now (none unless it is to act in a live episode)."""
        s = self.game
        done = self.terminations.get(agent, True) or self.truncations.get(agent, True)
        return s.legal_actions() if s.current_player == self._seat[agent] and not done else []

    def _legal_mask(self, agent: str) -> np.ndarray:
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask[self._legal(agent)] = 1
        return mask

    def step(self, action: Any) -> None:
        """The agent to act plays ``action`` (an int in 0..71; ``None`` for an agent whose
        game is over).

        Raises:
            IllegalActionError: the action is not legal now (:func:`env` ends the game
                with reward -1 instead).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        s = self.game
        hands_before = len(s.hand_records)
        s.apply(int(action))
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if len(s.hand_records) > hands_before and self.reward_mode == "hand":
            deltas = s.hand_records[-1].deltas
            for a in self.agents:
                self.rewards[a] = float(deltas[self.ruleset.side_of(self._seat[a])])
        over = s.is_terminal()
        stopped = not over and len(s.hand_records) >= self.max_hands
        if over or stopped:
            if self.reward_mode == "game":
                self._game_rewards(s)
            flags = self.terminations if over else self.truncations
            for a in self.agents:
                flags[a] = True
        else:
            self.agent_selection = self.possible_agents[s.current]
        self._accumulate_rewards()
        if over or stopped:
            self._deads_step_first()

    def _game_rewards(self, s: GameState) -> None:
        if s.outcome is not None:
            winner: int | None = s.outcome.winner
        else:
            top = max(s.scores)
            winner = s.scores.index(top) if s.scores.count(top) == 1 else None
        for a in self.agents:
            side = self.ruleset.side_of(self._seat[a])
            self.rewards[a] = 0.0 if winner is None else (1.0 if side == winner else -1.0)

    def render(self) -> str | None:
        """The table as text (``render_mode="ansi"``): scores, the hand's bids, trumps,
        every seat's tiles and the trick in progress. None without a render mode."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode (use 'ansi')")
            return None
        return table_text(self.game)

    def close(self) -> None:
        """Nothing to release."""


__all__ = ["env", "raw_env"]
