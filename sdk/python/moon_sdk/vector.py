"""N games of Moon stepped in one call, Gymnasium vector-env style (needs numpy: the
``pettingzoo`` extra).

    from moon_sdk.vector import VectorGames

    games = VectorGames(1024, "moon3", max_hands=200)
    obs, info = games.reset(seed=7)              # obs: float32[1024, 397]
    while True:
        actions = policy(obs, info["action_mask"])   # one action per game
        obs, rewards, terminated, truncated, info = games.step(actions)

Each game is one whole game of hands, as :func:`moon_sdk.pettingzoo_env.env` plays it: the
action is the seat's to act (``info["seat"]``), the observation is that seat's
:func:`moon_sdk.features.observation_features` vector (``features="information_state"``:
the 1209-long one) and ``info["action_mask"]`` (``int8[N, 72]``) its legal actions, also
listed: ``info["legal_actions"]`` (``int8[N, 9]``: each row the legal action ids
ascending, then -1; 9, :data:`MAX_LEGAL`, is the widest decision the rules allow) and
``info["legal_count"]`` (``int8[N]``), so a uniformly random policy is
``legal_actions[arange(N), (rng.random(N) * legal_count).astype(int)]``.

``observations`` says what a step writes of the observation: ``"float32"`` (the default:
the vectors above), ``"int8"`` (the same vectors as ``int8[N, size]``, the two fractional
pieces in whole units: ``tricks_taken`` in sevenths of the hand, ``scores`` in points or
marks clipped to twice the target, which must be at most 63; ``obs / observation_scale``
is the float32 observation exactly; a quarter of the memory, the fastest mode that still
observes) or ``"none"`` (nothing: ``obs`` is an empty ``float32[N, 0]``, every other
array as ever; for playouts and random or scripted play, the fastest).
``rewards`` is ``float32[N, players]``: each seat's side's score change when a hand ends in
that step (PettingZoo's ``reward="hand"``). A game that ends (``terminated``: by the rules;
``truncated``: after ``max_hands`` deals) starts the next game at once, with the next seed
of a splitmix64 stream started at the seed of :meth:`VectorGames.reset`; the returned row
is the new game's first decision, ``info["final_scores"]`` (``int64[N, sides]``) holds an
ended game's scores by side (0 in the other rows) and ``info["game_seed"]`` each game's
seed (its deals are `moon play --seed` ones).

``engine="compiled"`` steps the N games in one call of the compiled core (``moon_engine``,
no Python object per game); ``engine="pure"`` runs the pure-Python engine one game at a
time, the same interface and the same numbers (tests/research/test_vector.py compares
them action for action); the default is the compiled core where it is installed (and
``MOON_ENGINE`` is not ``pure``). ``copy=False`` returns the same arrays at every step,
rewritten in place (faster; copy what you keep). The compiled core steps without the GIL;
``threads=2`` splits the games between this thread and a worker (each a contiguous share;
the games that end restart in order on the calling thread, so the numbers are the same on
any number of threads): faster with a core free for it, slower on a machine whose cores
are all busy, hence not the default.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from .features import (
    INFORMATION_STATE_SIZE,
    OBSERVATION_PIECES,
    OBSERVATION_SIZE,
    observation_features,
)
from .local import resolve_ruleset
from .pettingzoo_env import _Features
from .rules import GameState as PureGameState
from .rules import IllegalActionError, Phase, Ruleset, fast, observe
from .rules.actions import NUM_ACTIONS

MAX_LEGAL = 9
"""The most legal actions any decision has, the width of ``info["legal_actions"]``. By
phase (docs/rules.md): a bid is a pass or one of 3..7 and 21, at most 7 (``min_bid=3``); a
discard is one of the bidder's 7 tiles or the widow, 8; trumps are the numbers 0..6,
doubles and no trumps, 9; a play is a tile of a hand of at most 7 tiles. So 9, which every
trump decision of moon3 and moon4 reaches."""
OBSERVATIONS = ("float32", "int8", "none")
"""The observation modes of :class:`VectorGames`."""
INT8_MAX_TARGET = 63
"""The largest ruleset target (points or marks) ``observations="int8"`` takes: the scores
piece holds a score clipped to twice the target, at most 126."""

_GAME_OVER = Phase.GAME_OVER
_MASK64 = (1 << 64) - 1


def _piece(name: str) -> slice:
    """Where the piece ``name`` of :data:`OBSERVATION_PIECES` lies in a feature vector."""
    at = 0
    for piece, size in OBSERVATION_PIECES:
        if piece == name:
            return slice(at, at + size)
        at += size
    raise KeyError(name)


_RULES = _piece("rules")
"""The ``rules`` piece of a feature vector."""
_TRICKS = _piece("tricks_taken")
_SCORES = _piece("scores")
"""The fractional pieces of a feature vector: ``tricks_taken`` (/7), ``scores`` (/target)."""


def splitmix64(state: int) -> tuple[int, int]:
    """One step of the splitmix64 generator: ``(new state, value)``, both in [0, 2**64)."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return state, z ^ (z >> 31)


def game_seeds(seed: int, count: int) -> list[int]:
    """The first ``count`` game seeds a :meth:`VectorGames.reset` with ``seed`` draws (each
    63 bits: the splitmix64 values shifted right by one)."""
    state, out = seed & _MASK64, []
    for _ in range(count):
        state, z = splitmix64(state)
        out.append(z >> 1)
    return out


def compiled_available() -> bool:
    """True when the compiled core in use (:mod:`moon_sdk.rules.fast`) has the vector."""
    return fast.core is not None and hasattr(fast.core, "VectorCore")


class VectorGames(VectorEnv):
    """``num_games`` games of one ruleset (see the module doc), a Gymnasium ``VectorEnv``
    (``num_envs``, ``single_observation_space`` ``Box(-2, 2, (size,))``,
    ``single_action_space`` ``Discrete(72)``, same-step autoreset) but for two things:
    ``rewards`` has a column per seat, and an ended game's last observation is not kept.
    ``observations`` is ``"float32"``, ``"int8"`` or ``"none"`` (see the module doc); the
    observation spaces follow it (``int8``: ``Box`` of int8, bounds ``±2 *
    observation_scale``; ``"none"``: width 0).

    Raises:
        RulesetError: an unknown preset or option.
        ValueError: a bad ``num_games``, ``max_hands``, ``features``, ``engine``,
            ``threads`` or ``observations``, or ``"int8"`` with a target above 63.
        ImportError: ``engine="compiled"`` without the compiled core's vector.
    """

    def __init__(self, num_games: int, ruleset: Ruleset | str = "moon3", *,
                 max_hands: int = 200, features: str = "observation",
                 engine: str | None = None, copy: bool = True, threads: int = 1,
                 observations: str = "float32", **options: Any) -> None:
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
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be a whole number of at least 1, not {threads!r}")
        if observations not in OBSERVATIONS:
            raise ValueError(f"observations must be 'float32', 'int8' or 'none', not "
                             f"{observations!r}")
        if observations == "int8" and rules.target > INT8_MAX_TARGET:
            raise ValueError(f"observations='int8' needs a target of at most "
                             f"{INT8_MAX_TARGET} (twice it in an int8), not {rules.target}")
        if engine is None:
            engine = "compiled" if compiled_available() else "pure"
        if engine not in ("compiled", "pure"):
            raise ValueError(f"engine must be 'compiled' or 'pure', not {engine!r}")
        if engine == "compiled" and not compiled_available():
            raise ImportError("engine='compiled' needs the compiled core with its vector "
                              f"({fast.REASON or 'moon_engine has no VectorCore: rebuild it'})")
        self.ruleset = rules
        self.num_games = num_games
        self.max_hands = max_hands
        self.engine = engine
        """``"compiled"`` or ``"pure"``: what steps the games."""
        self.copy = copy
        self.threads = threads
        """Threads a compiled step uses (the pure engine: one)."""
        self.observations = observations
        """``"float32"``, ``"int8"`` or ``"none"``: what a step writes of the observations."""
        self._sequence = features == "information_state"
        full = INFORMATION_STATE_SIZE if self._sequence else OBSERVATION_SIZE
        self.size = 0 if observations == "none" else full
        """Length of an observation row (0 with ``observations="none"``)."""
        scale = np.ones(full, np.float32)
        scale[_TRICKS], scale[_SCORES] = 7, rules.target
        self.observation_scale = scale[:self.size]
        """float32[size]: ``int8 observations / observation_scale`` are the float32 ones,
        exactly: 1 but in ``tricks_taken`` (7) and ``scores`` (the target)."""
        self._dtype = np.int8 if observations == "int8" else np.float32
        self._rules = observation_features(observe(PureGameState(rules, 0), 0))[_RULES]
        self._core: Any = None
        if engine == "compiled":
            assert fast.core is not None
            self._core = fast.core.VectorCore(rules, num_games, max_hands, self._sequence,
                                              self._rules, threads, observations)
        self._games: list[PureGameState] = []
        self._features: list[_Features] = []
        self._seeds: list[int] = []
        self._stream = 0
        self._out = self._arrays()
        self._core_view = self._core_out(self._out)
        self._started = False
        self.num_envs = num_games
        if observations == "int8":
            high = (2 * self.observation_scale).astype(np.int8)
            self.single_observation_space = spaces.Box(-high, high, (self.size,), np.int8)
            self.observation_space = spaces.Box(np.tile(-high, (num_games, 1)),
                                                np.tile(high, (num_games, 1)),
                                                (num_games, self.size), np.int8)
        else:
            self.single_observation_space = spaces.Box(-2.0, 2.0, (self.size,), np.float32)
            self.observation_space = spaces.Box(-2.0, 2.0, (num_games, self.size),
                                                np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.action_space = spaces.MultiDiscrete(np.full(num_games, NUM_ACTIONS))
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """obs, mask, seats, seeds, rewards, terminated, truncated, final_scores,
        legal_actions, legal_count."""
        k, r = self.num_games, self.ruleset
        return (np.zeros((k, self.size), self._dtype), np.zeros((k, NUM_ACTIONS), np.int8),
                np.zeros(k, np.int64), np.zeros(k, np.int64),
                np.zeros((k, r.players), np.float32), np.zeros(k, bool), np.zeros(k, bool),
                np.zeros((k, r.num_sides), np.int64), np.full((k, MAX_LEGAL), -1, np.int8),
                np.zeros(k, np.int8))

    def _next_out(self) -> tuple[np.ndarray, ...]:
        if self.copy:
            self._out = self._arrays()
            self._core_view = self._core_out(self._out)
        return self._out

    def _core_out(self, out: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        # the core writes the flags as bytes
        return out[:5] + (out[5].view(np.uint8), out[6].view(np.uint8)) + out[7:]

    @property
    def game_seeds(self) -> list[int]:
        """Each game's seed now (its deals are `moon play --seed` ones)."""
        return [int(x) for x in self._out[3]]

    def state(self, i: int) -> Any:
        """A copy of game ``i``'s engine state (a compiled or pure ``GameState``).

        Raises:
            RuntimeError: before :meth:`reset`.
        """
        if not self._started:
            raise RuntimeError("call reset() first")
        if self._core is not None:
            return self._core.state(i)
        return self._games[i].clone()

    # -- the pure path ------------------------------------------------------------------
    def _start(self, i: int) -> None:
        self._stream, z = splitmix64(self._stream)
        g = PureGameState(self.ruleset, z >> 1)
        if i < len(self._games):
            self._games[i] = g
            self._seeds[i] = z >> 1
            self._features[i].new_hand()
        else:
            self._games.append(g)
            self._seeds.append(z >> 1)
            self._features.append(_Features(self.ruleset, self._sequence))

    def _row(self, i: int, out: tuple[np.ndarray, ...]) -> None:
        s = self._games[i]
        seat = s.current
        out[2][i] = seat
        out[3][i] = self._seeds[i]
        if self.size:
            row = self._features[i](s, seat)
            row[_RULES] = self._rules
            out[0][i] = np.rint(row * self.observation_scale) if self._dtype is np.int8 else row
        legal = s.legal_actions()
        out[1][i] = 0
        out[1][i, legal] = 1
        out[8][i] = -1
        out[8][i, :len(legal)] = legal
        out[9][i] = len(legal)

    def _pure_step(self, acts: list[int], out: tuple[np.ndarray, ...]) -> None:
        _, _, _, _, rewards, terminated, truncated, final, _, _ = out
        n = self.ruleset.players
        sides = [self.ruleset.side_of(p) for p in range(n)]
        for i, action in enumerate(acts):
            s = self._games[i]
            hand, seat = s.hand_number, s.current
            s.apply(action)
            if action < 28:  # a play
                self._features[i].played_tile(seat, action)
            over = s.phase == _GAME_OVER
            rewards[i] = 0
            if over or s.hand_number != hand:
                deltas = s.hand_records[-1].deltas
                rewards[i] = [deltas[sides[p]] for p in range(n)]
                if not over:
                    self._features[i].new_hand()
            stopped = not over and s.hand_number >= self.max_hands
            terminated[i], truncated[i] = over, stopped
            final[i] = s.scores if over or stopped else 0
            if over or stopped:
                self._start(i)
            self._row(i, out)

    # -- the interface ------------------------------------------------------------------
    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start ``num_games`` new games (seeds drawn from ``seed``; none: a random one);
        their first decisions: ``(obs, {"action_mask", "seat", "game_seed",
        "legal_actions", "legal_count"})``; ``options`` are ignored."""
        stream = random.getrandbits(64) if seed is None else int(seed) & _MASK64
        out = self._next_out()
        if self._core is not None:
            self._core.reset(stream, self._core_view)
        else:
            self._stream = stream
            self._games, self._features, self._seeds = [], [], []
            for i in range(self.num_games):
                self._start(i)
                self._row(i, out)
        self._started = True
        return out[0], {"action_mask": out[1], "seat": out[2], "game_seed": out[3],
                        "legal_actions": out[8], "legal_count": out[9]}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """Play one action in each game (``actions[i]`` for game ``i``, by its seat to
        act): ``(obs, rewards, terminated, truncated, info)`` (see the module doc).

        Raises:
            RuntimeError: before :meth:`reset`.
            ValueError: not one whole-number action per game.
            IllegalActionError: an action is not legal ("game i: ..."; no game has moved).
        """
        if not self._started:
            raise RuntimeError("call reset() first")
        acts = np.asarray(actions)
        k = self.num_games
        if acts.shape != (k,) or (acts.size and acts.dtype.kind not in "iu"):
            raise ValueError(f"{k} games need {k} actions (whole numbers), not an array of "
                             f"shape {acts.shape} and type {acts.dtype}")
        acts = np.ascontiguousarray(acts, np.int64)
        out = self._next_out()
        if self._core is not None:
            self._core.step(acts, self._core_view)
        else:
            listed = acts.tolist()
            for i, (s, action) in enumerate(zip(self._games, listed, strict=True)):
                if not s.is_legal(action):
                    try:
                        s.clone().apply(action)
                    except IllegalActionError as e:
                        raise IllegalActionError(f"game {i}: {e}") from None
            self._pure_step(listed, out)
        return out[0], out[4], out[5], out[6], {"action_mask": out[1], "seat": out[2],
                                                "game_seed": out[3], "final_scores": out[7],
                                                "legal_actions": out[8], "legal_count": out[9]}


__all__ = ["INT8_MAX_TARGET", "MAX_LEGAL", "OBSERVATIONS", "VectorGames", "compiled_available",
           "game_seeds", "splitmix64"]
