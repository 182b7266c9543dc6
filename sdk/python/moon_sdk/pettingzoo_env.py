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

:class:`parallel_env` is the same game as a PettingZoo ``ParallelEnv``: every step takes a
dict of actions of which only the seat to act's is played (the others' masks are all
zero; their actions are ignored), returns every live seat's observation, and ends the
game (``agents`` empty) at its end or at an illegal action (reward -1 for its seat).

The env plays :data:`moon_sdk.rules.fast.GameState`: the compiled core when it is installed
(which then builds the feature vectors too), else the pure engine (``MOON_ENGINE=pure``
chooses it); ``benchmarks/research_envs.py`` measures both.
"""

from __future__ import annotations

import operator
import random
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers

from .features import (
    _BID_SLOTS,
    _HIGH_SLOTS,
    _OFFSET,
    _PHASE_SLOTS,
    INFORMATION_STATE_SIZE,
    OBSERVATION_SIZE,
    observation_features,
)
from .local import resolve_ruleset
from .rules import GameState as PureGameState
from .rules import Observation, Phase, Ruleset, observe
from .rules.actions import NUM_ACTIONS
from .rules.fast import GameState
from .text import table_text


def env(ruleset: Ruleset | str = "moon3", **kwargs: Any) -> AECEnv:
    """A wrapped :class:`raw_env` (illegal actions end the game with reward -1 for the seat
    that made it; actions out of range and a wrong calling order raise). Arguments as
    :class:`raw_env`."""
    e: AECEnv = raw_env(ruleset, **kwargs)
    e = _TerminateIllegal(e, illegal_reward=-1)
    e = _AssertOutOfBounds(e)
    e = _OrderEnforcing(e)
    return e


_HOT = ("agents", "agent_selection", "terminations", "truncations", "rewards", "infos",
        "_cumulative_rewards", "possible_agents")
"""What every step reads from a wrapper: PettingZoo's wrappers forward each read one
``__getattr__`` at a time down every layer (most of the wrapped env's time); these
wrappers read them from the raw env at once."""


def _forwarded(name: str, before_reset: bool) -> property:
    read = operator.attrgetter(name)
    if before_reset:
        def get(self: Any) -> Any:
            return read(self._raw)
    else:  # as PettingZoo's OrderEnforcingWrapper
        def get(self: Any) -> Any:
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return read(self._raw)
    return property(get, doc=f"The raw env's ``{name}``.")


def _fast_wrapper(cls: type) -> type:
    """``cls`` (a PettingZoo wrapper) reading :data:`_HOT` from the raw env directly."""
    def __init__(self: Any, env: AECEnv, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        cls.__init__(self, env, *args, **kwargs)  # type: ignore[misc]  # cls, not an instance's
        self._raw = env.unwrapped
    ordered = cls is wrappers.OrderEnforcingWrapper
    ns: dict[str, Any] = {
        name: _forwarded(name, not ordered or name in ("_cumulative_rewards",
                                                       "possible_agents"))
        for name in _HOT}
    ns["__init__"] = __init__
    ns["__doc__"] = cls.__doc__
    return type(cls.__name__, (cls,), ns)


class _TerminateIllegal(_fast_wrapper(wrappers.TerminateIllegalWrapper)):  # type: ignore[misc]
    """PettingZoo's ``TerminateIllegalWrapper``, judging each action by the game's own legal
    actions. PettingZoo's checks the action mask of the very observation it handed out,
    which is the caller's: writing into it let an illegal action through to
    :meth:`raw_env.step`, which raises."""

    def step(self, action: Any) -> None:
        raw = self._raw
        self._prev_obs = {"action_mask": _Legal(raw._legal(raw.agent_selection))}
        super().step(action)
        raw._legal_now = None  # (an illegal action ended the episode here, not in raw)


class _Legal(frozenset[int]):
    """Legal actions, indexed as a mask is (``legal[action]``)."""

    __slots__ = ()
    __getitem__ = frozenset.__contains__


class _AssertOutOfBounds(_fast_wrapper(wrappers.AssertOutOfBoundsWrapper)):  # type: ignore[misc]
    """PettingZoo's ``AssertOutOfBoundsWrapper``; an int action in range skips the space's
    general check."""

    def step(self, action: Any) -> None:
        if action.__class__ is int and 0 <= action < NUM_ACTIONS:
            self.env.step(action)
        else:
            super().step(action)


class _OrderEnforcing(_fast_wrapper(wrappers.OrderEnforcingWrapper)):  # type: ignore[misc]
    """PettingZoo's ``OrderEnforcingWrapper``, the outermost of :func:`env`'s wrappers.
    After a reset, ``observe``/``last`` ask the raw env at once (the wrappers beneath add
    nothing to an observation), and a legal int action of a live agent goes straight to
    the raw env's ``step`` (what the wrappers beneath would do with it, after checking
    it); any other call takes PettingZoo's path through every wrapper."""

    def observe(self, agent: str) -> Any:
        if self._has_reset:
            return self._raw.observe(agent)
        return super().observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # type: ignore[no-any-return]
        raw = self._raw
        agent = raw.agent_selection
        return (raw.observe(agent) if observe else None, raw._cumulative_rewards[agent],
                raw.terminations[agent], raw.truncations[agent], raw.infos[agent])

    def step(self, action: Any) -> None:
        raw = self._raw
        if (self._has_reset and action.__class__ is int and 0 <= action < NUM_ACTIONS
                and raw.agents):
            agent = raw.agent_selection
            if (not raw.terminations[agent] and not raw.truncations[agent]
                    and action in raw._legal(agent)):
                self._has_updated = True
                raw.step(action)
                return
        super().step(action)


_O = _OFFSET
_FEATURES_STATE: type | None = GameState if hasattr(GameState, "features") else None
"""The compiled state class when it builds feature vectors (a core built before it could
is played without), else None."""
_GAME_OVER = Phase.GAME_OVER
_TRICK_SIZE = 4 + 4 * 28
"""One trick in the information-state vector's sequence: its leader, the tile at each
position."""


def _tile_bytes() -> list[bytes]:
    """For each 14-bit mask, its bits as 14 bytes of 0 or 1 (the low bit first)."""
    return [bytes((m >> b) & 1 for b in range(14)) for m in range(1 << 14)]


_HALF: list[bytes] = []
""":func:`_tile_bytes`, made at the first env."""


class _Features:
    """:func:`~moon_sdk.features.observation_features` (or the information-state vector)
    of a seat, built from the engine state of a game the env follows step by step: the
    one-hot pieces set as bytes (a tile set's 28 at once, from a table of 14-bit halves),
    turned into float32 with numpy in one call, then the few fractions. The tiles each seat
    played this hand (and their order) are kept as the game goes, so nothing is read from
    the engine that a compiled state would build objects for (its tricks). Equal to the
    functions of :mod:`moon_sdk.features` of :func:`~moon_sdk.rules.observe` (the tests
    compare them at every step, with either engine)."""

    __slots__ = ("n", "sequence", "template", "rel", "side_rel", "target", "played", "plays",
                 "half", "rules")

    def __init__(self, ruleset: Ruleset, sequence: bool) -> None:
        self.n = n = ruleset.players
        self.sequence = sequence
        size = INFORMATION_STATE_SIZE if sequence else OBSERVATION_SIZE
        # the pieces that do not change (players, rules: all 0 or 1), as the pure function
        # sets them
        first = observation_features(observe(PureGameState(ruleset, 0), 0))
        static = bytearray(size)
        for i in range(_O["players"], _O["phase"]):
            static[i] = int(first[i])
        self.template = bytes(static)
        self.rules = np.asarray(first[_O["rules"]:_O["phase"]], np.float32)
        self.rel = [[(x - me) % n for x in range(n)] for me in range(n)]
        sides = ruleset.num_sides
        self.side_rel = [[(x - ruleset.side_of(me)) % sides for x in range(sides)]
                         for me in range(n)]
        self.target = ruleset.target
        if not _HALF:
            _HALF.extend(_tile_bytes())
        self.half = _HALF
        self.played = [0] * n
        """The tiles each seat played this hand (the trick in progress too)."""
        self.plays: list[tuple[int, int]] = []
        """This hand's plays, in order."""

    def new_hand(self) -> None:
        self.played = [0] * self.n
        self.plays = []

    def played_tile(self, seat: int, tile: int) -> None:
        self.played[seat] |= 1 << tile
        self.plays.append((seat, tile))

    def __call__(self, s: Any, me: int) -> np.ndarray:
        compiled = s.__class__ is _FEATURES_STATE  # (a flag: `is` would narrow s to object)
        if compiled:
            # the compiled core builds the vector, all but the ruleset's options
            vector = np.frombuffer(s.features(me, self.sequence), np.float32).copy()
            vector[_O["rules"]:_O["phase"]] = self.rules
            return vector
        n = self.n
        rel = self.rel[me]
        half = self.half
        out = bytearray(self.template)
        phase = _PHASE_SLOTS.get(s.phase)
        if phase is not None:
            out[_O["phase"] + phase] = 1
        out[_O["dealer"] + rel[s.dealer]] = 1
        current = s.current_player
        if current >= 0:
            out[_O["to_act"] + rel[current]] = 1
        bidder = s.bidder
        bids = _O["bids"]
        bid_of = dict(s.bids)
        for seat in range(n):
            value = bid_of.get(seat)
            out[bids + 8 * rel[seat] + (0 if value is None else _BID_SLOTS[value])] = 1
        out[_O["high_bid"] + _HIGH_SLOTS[s.high_bid]] = 1
        if bidder >= 0:
            out[_O["bidder"] + rel[bidder]] = 1
        trump = s.trump
        if trump >= 0:
            out[_O["trump"] + trump] = 1
        at = _O["hand"]
        m = s.hands[me]
        out[at:at + 28] = half[m & 0x3FFF] + half[m >> 14]
        if bidder == me:
            if s.widow_taken:
                at = _O["widow"]
                m = s.widow
                out[at:at + 28] = half[m & 0x3FFF] + half[m >> 14]
            discard = s.discard
            if discard >= 0:
                out[_O["discard"] + discard] = 1
        played = self.played
        base = _O["played"]
        for seat in range(n):
            m = played[seat]
            if m:
                at = base + 28 * rel[seat]
                out[at:at + 28] = half[m & 0x3FFF] + half[m >> 14]
        plays = self.plays
        in_trick = len(plays) % n
        if in_trick:
            base = _O["trick"]
            for seat, tile in plays[len(plays) - in_trick:]:
                out[base + 28 * rel[seat] + tile] = 1
            out[_O["leader"] + rel[plays[len(plays) - in_trick][0]]] = 1
        if self.sequence:
            base = OBSERVATION_SIZE
            for k, (seat, tile) in enumerate(plays):
                at = base + k // n * _TRICK_SIZE
                position = k % n
                if position == 0:
                    out[at + rel[seat]] = 1
                out[at + 4 + 28 * position + tile] = 1
        vector = np.frombuffer(out, np.uint8).astype(np.float32)
        taken = _O["tricks_taken"]
        for seat, t in enumerate(s.tricks_taken):
            if t:
                vector[taken + rel[seat]] = t / 7
        scores = _O["scores"]
        target = self.target
        side_rel = self.side_rel[me]
        for side, score in enumerate(s.scores):
            if score:
                vector[scores + side_rel[side]] = max(-2.0, min(2.0, score / target))
        return vector


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
        self._features = _Features(rules, features == "information_state")
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
        self._game: PureGameState | None = None
        self._legal_now: tuple[str, list[int]] | None = None

    # -- spaces ----------------------------------------------------------------------------
    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        """The agent's observation space (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space[Any]:
        """``Discrete(72)``: the engine's action ints."""
        return self.action_spaces[agent]

    # -- the game --------------------------------------------------------------------------
    @property
    def game(self) -> PureGameState:
        """The engine state of the game in play (read it, do not change it): the compiled
        core's (``moon_engine.GameState``) when it is installed, else the pure engine's
        (:mod:`moon_sdk.rules.fast`; ``MOON_ENGINE=pure`` chooses the pure one).

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
        self._legal_now = None
        self._features.new_hand()
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
        return {"observation": self._features(self.game, self._seat[agent]),
                "action_mask": self._legal_mask(agent)}

    def _legal(self, agent: str) -> list[int]:
        """``agent``'s legal actions now (none unless it is to act in a live episode); the
        game changes only in step and reset, which forget the last answer."""
        known = self._legal_now
        if known is not None and known[0] == agent:
            return known[1]
        s = self.game
        done = self.terminations.get(agent, True) or self.truncations.get(agent, True)
        legal = s.legal_actions() if s.current_player == self._seat[agent] and not done else []
        self._legal_now = (agent, legal)
        return legal

    def _legal_mask(self, agent: str) -> np.ndarray:
        mask = bytearray(NUM_ACTIONS)
        for a in self._legal(agent):
            mask[a] = 1
        return np.frombuffer(mask, np.int8)

    def step(self, action: Any) -> None:
        """The agent to act plays ``action`` (an int in 0..71; ``None`` for an agent whose
        game is over).

        Raises:
            IllegalActionError: the action is not legal now (:func:`env` ends the game
                with reward -1 instead).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._legal_now = None
            self._was_dead_step(action)
            return
        s = self.game
        hand = s.hand_number
        action = int(action)
        seat = s.current
        self._legal_now = None
        s.apply(action)
        if action < 28:  # a play (tiles 0..27; a discard is 28 + its tile)
            self._features.played_tile(seat, action)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        over = s.phase == _GAME_OVER
        if over or s.hand_number != hand:  # the hand is over
            if self.reward_mode == "hand":
                deltas = s.hand_records[-1].deltas
                for a in self.agents:
                    self.rewards[a] = float(deltas[self.ruleset.side_of(self._seat[a])])
            if not over:
                self._features.new_hand()
        stopped = not over and s.hand_number >= self.max_hands
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

    def _game_rewards(self, s: PureGameState) -> None:
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


class parallel_env(ParallelEnv):  # type: ignore[misc]  # noqa: N801 (PettingZoo's name)
    """Moon as a ``ParallelEnv`` over :class:`raw_env` (see the module doc); arguments as
    :class:`raw_env`."""

    metadata = {"render_modes": ["ansi"], "name": "moon_parallel_v0"}

    def __init__(self, ruleset: Ruleset | str = "moon3", **kwargs: Any) -> None:
        self.aec = raw_env(ruleset, **kwargs)
        """The turn-based env underneath (read it, do not step it)."""
        self.possible_agents = self.aec.possible_agents[:]
        self.agents: list[str] = []
        self.render_mode = self.aec.render_mode

    def observation_space(self, agent: str) -> gymnasium.Space[Any]:
        return self.aec.observation_space(agent)

    def action_space(self, agent: str) -> gymnasium.Space[Any]:
        return self.aec.action_space(agent)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """A new game (``seed`` as :meth:`raw_env.reset`): every seat's observation."""
        self.aec.reset(seed, options)
        self.agents = self.aec.agents[:]
        return {a: self.aec.observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float],
                                                     dict[str, bool], dict[str, bool],
                                                     dict[str, dict[str, Any]]]:
        """Play the action of the seat to act (``actions[agent]``; the others' are ignored).

        Raises:
            ValueError: after the game's end, or no action for the seat to act.
        """
        aec = self.aec
        if not self.agents:
            raise ValueError("the game is over: call reset()")
        agent = aec.agent_selection
        if agent not in actions:
            raise ValueError(f"{agent} is to act: actions must hold its action")
        action = actions[agent]
        legal = (isinstance(action, (int, np.integer)) and not isinstance(action, bool)
                 and int(action) in aec._legal(agent))
        if legal:
            aec.step(int(action))
            rewards = {a: float(aec.rewards[a]) for a in self.agents}
            terms = {a: bool(aec.terminations[a]) for a in self.agents}
            truncs = {a: bool(aec.truncations[a]) for a in self.agents}
        else:
            rewards = {a: -1.0 if a == agent else 0.0 for a in self.agents}
            terms = dict.fromkeys(self.agents, True)
            truncs = dict.fromkeys(self.agents, False)
        aec._legal_now = None
        obs = {a: aec.observe(a) for a in self.agents}
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        if not legal:
            infos[agent] = {"illegal_action": action}
            for o in obs.values():
                o["action_mask"][:] = 0  # (the caller's copies: the game is over)
        if any(terms.values()) or any(truncs.values()):
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        """Nothing to release."""


__all__ = ["env", "parallel_env", "raw_env"]
