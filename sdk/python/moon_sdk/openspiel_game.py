"""Moon as an OpenSpiel game (``pip install 'moon-sdk[openspiel]'``), and OpenSpiel bots in
the arena.

    import pyspiel
    from moon_sdk import openspiel_game          # registers "python_moon"

    game = openspiel_game.load_game("moon3")     # one hand of standard 3-player Moon
    game = pyspiel.load_game("python_moon(players=4,min_bid=3,max_hands=200)")

The game is registered with ``pyspiel.register_game`` as ``python_moon``. Its parameters
are every option of :class:`~moon_sdk.rules.Ruleset` (defaults: standard 3-player Moon;
:func:`load_game` takes a preset name and overrides) and:

- ``max_hands`` (default 1): deals after which the game stops. 1 is one hand, the
  smallest Moon there is; a larger number plays whole games to the target.
- ``returns`` (default ``"scores"``): each player's side's score at the end (points or
  marks: one hand's score changes when ``max_hands=1``), or ``"win"``: +1 for the winning
  side's players, -1 for the others (0 for all when no single side leads at
  ``max_hands``).
- ``first_dealer`` (default -1): the dealer of the first hand, or -1 for a chance node that
  draws one uniformly.

Chance nodes deal every hand, one tile at a time (positions 0-6 to seat 0, 7-13 to
seat 1..., the rest to the widow), each remaining tile equally likely. Player actions are
the engine's action ints (0..71, :mod:`moon_sdk.rules.actions`). A player's information
state is what the arena shows its seat (:func:`moon_sdk.rules.observe`: its tiles, the
widow it took and its discard, the hand's bids, trumps and plays in order, and earlier
hands' public results), as a string and as the tensor of
:func:`moon_sdk.features.information_state_features`; the observation is the shorter
:func:`moon_sdk.features.observation_features` view. ``resample_from_infostate`` deals the
tiles a player has not seen consistently with everything it saw (:mod:`moon_sdk.knowledge`:
voids, hand sizes, the widow), so OpenSpiel's Python information-set MCTS
(``open_spiel.python.algorithms.ismcts``) searches it.

A state serializes at any point (``state.serialize()``, ``pyspiel.serialize_game_and_state``,
``pickle``) and comes back, in this process or another that imported this module, with
``game.deserialize_state`` / ``pyspiel.deserialize_game_and_state`` / ``pickle.loads``.

:class:`OpenSpielBot` enters any ``pyspiel.Bot`` (or a function of a state) in the arena:
each turn it rebuilds an OpenSpiel state from the arena's observation (the hidden tiles
sampled consistently with it) and plays the bot's answer.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from .bot import Bot
from .features import (
    INFORMATION_STATE_SIZE,
    OBSERVATION_PIECES,
    OBSERVATION_SIZE,
    SEQUENCE_PIECE,
    information_state_features,
    observation_features,
)
from .knowledge import determinize, knowledge, sample
from .local import resolve_ruleset
from .rules import (
    GameState,
    HandRecord,
    Observation,
    Ruleset,
    action_name,
    format_tiles,
    observe,
    tile_name,
    tiles_of,
    trump_name,
)
from .rules.actions import NUM_ACTIONS
from .text import table_text

GAME_NAME = "python_moon"
_RULE_DEFAULTS: dict[str, Any] = Ruleset().to_dict()
DEFAULT_PARAMS: dict[str, Any] = {**_RULE_DEFAULTS, "max_hands": 1, "returns": "scores",
                                  "first_dealer": -1}
"""Every parameter of ``python_moon`` and its default (standard 3-player Moon, one hand)."""

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Moon (Texas dominoes), Python",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


def game_params(ruleset: Ruleset | str = "moon3", *, max_hands: int = 1,
                returns: str = "scores", first_dealer: int = -1,
                **options: Any) -> dict[str, Any]:
    """The ``python_moon`` parameters of a ruleset (a preset name or a :class:`Ruleset`,
    with ``options`` overriding its options) and the game's own parameters.

    Raises:
        RulesetError: an unknown preset or option, or a bad value.
    """
    rules, _ = resolve_ruleset(ruleset)
    if options:
        rules = Ruleset.from_dict({**rules.to_dict(), **options})
    return {**rules.to_dict(), "max_hands": max_hands, "returns": returns,
            "first_dealer": first_dealer}


def load_game(ruleset: Ruleset | str = "moon3", **kwargs: Any) -> pyspiel.Game:
    """``pyspiel.load_game("python_moon", game_params(ruleset, **kwargs))``."""
    return pyspiel.load_game(GAME_NAME, game_params(ruleset, **kwargs))


_GAME_ATTRIBUTES = frozenset({"ruleset", "max_hands", "returns_mode", "first_dealer",
                               "hand_length"})


class MoonGame(pyspiel.Game):
    """The ``python_moon`` game (see the module doc).

    Raises:
        RulesetError: a bad ruleset option.
        ValueError: a bad ``max_hands``, ``returns`` or ``first_dealer``.
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**DEFAULT_PARAMS, **(params or {})}
        self._configure(p)
        n = self.ruleset.players
        if self.returns_mode == "win":
            lo, hi = -1.0, 1.0
        elif self.ruleset.scoring == "marks":
            lo, hi = 0.0, float(self.max_hands)
        else:
            lo, hi = -21.0 * self.max_hands, 21.0 * self.max_hands
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=28, num_players=n,
            min_utility=lo, max_utility=hi, utility_sum=None,
            max_game_length=self.max_hands * self.hand_length)
        super().__init__(_GAME_TYPE, info, p)

    def _configure(self, p: dict[str, Any]) -> None:
        """Set the Python-side attributes from the game's parameters."""
        self.ruleset = Ruleset.from_dict({k: p[k] for k in _RULE_DEFAULTS})
        self.max_hands = int(p["max_hands"])
        self.returns_mode = str(p["returns"])
        self.first_dealer = int(p["first_dealer"])
        n = self.ruleset.players
        if self.max_hands < 1:
            raise ValueError(f"python_moon: max_hands must be at least 1, not {self.max_hands}")
        if self.returns_mode not in ("scores", "win"):
            raise ValueError(f"python_moon: returns must be 'scores' or 'win', not "
                             f"{self.returns_mode!r}")
        if not -1 <= self.first_dealer < n:
            raise ValueError(f"python_moon: first_dealer must be -1 (chance) or a seat "
                             f"0..{n - 1}, not {self.first_dealer}")
        self.hand_length = 8 * n + 2
        """Most decisions in one hand: a bid each, a discard, a trump, 7 tricks."""

    def __getattr__(self, name: str) -> Any:
        # A game that pyspiel rebuilt on the C++ side (unpickling a game:
        # ``pickle.loads``, an old state string) can reach Python without the attributes
        # __init__ set: they follow from the parameters, which the C++ side keeps.
        if name in _GAME_ATTRIBUTES and "ruleset" not in self.__dict__:
            self._configure({**DEFAULT_PARAMS, **self.get_parameters()})
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __deepcopy__(self, memo: dict[int, Any]) -> MoonGame:
        return self  # immutable: a cloned state shares its game

    def new_initial_state(self) -> MoonState:
        """The state before the first dealer is drawn (or, with ``first_dealer``, before
        the deal)."""
        return MoonState(self)

    def max_chance_nodes_in_history(self) -> int:
        """A dealer draw, then every tile of every hand dealt."""
        return 1 + self.max_hands * self.ruleset.num_tiles

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None,
                         params: dict[str, Any] | None = None) -> MoonObserver:
        """An observer: the information state (``perfect_recall=True``) or the
        observation, of one player (``private_info=SINGLE_PLAYER``) or of the public
        (``NONE``)."""
        return MoonObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False),
                            params)


class _Engine:
    """The engine state inside an OpenSpiel state. OpenSpiel clones a Python state by
    deep-copying its attributes; this copies the engine with its own (cheap) clone."""

    __slots__ = ("g",)

    def __init__(self, g: GameState) -> None:
        self.g = g

    def __deepcopy__(self, memo: dict[int, Any]) -> _Engine:
        return _Engine(self.g.clone())


def _blank_deal(g: GameState) -> None:
    """Empty every hand and the widow: the chance nodes deal them (the engine dealt from
    its seed, which the OpenSpiel game does not use)."""
    g.hands = [0] * g.n
    g.dealt = (0,) * g.n
    g.widow = 0


class MoonState(pyspiel.State):
    """A ``python_moon`` state: the engine's :class:`~moon_sdk.rules.GameState` plus the
    chance nodes of the deal."""

    # A state's Python attributes are what OpenSpiel serializes (``serialize()`` pickles
    # the instance's __dict__, ``game.deserialize_state`` sets them on a new initial state
    # of the game); they hold only plain data (the engine state, the deal so far, two
    # flags), never the game: a pickled pyspiel game comes back as another game object
    # without its Python attributes. The game is the state's own (``get_game()``).
    def __init__(self, game: MoonGame) -> None:
        super().__init__(game)
        g = GameState(game.ruleset, 0)
        _blank_deal(g)
        self._engine = _Engine(g)
        self._dealt: list[int] = []
        """The tiles dealt so far this hand, in dealing order."""
        self._choose_dealer = game.first_dealer < 0
        self._over = False
        if not self._choose_dealer:
            self._set_first_dealer(game.first_dealer)

    @property
    def _moon(self) -> MoonGame:
        return self.get_game()  # type: ignore[no-any-return]

    # -- the engine inside -------------------------------------------------------------------
    @property
    def game_state(self) -> GameState:
        """The engine state (hands, bids, tricks, scores...); read it, do not change it."""
        return self._engine.g

    def _set_first_dealer(self, dealer: int) -> None:
        g = self._engine.g
        g._first_dealer = dealer
        g.dealer = (dealer + g.hand_number) % g.n
        g.current = (g.dealer + 1) % g.n

    def _dealing(self) -> bool:
        return len(self._dealt) < self._moon.ruleset.num_tiles

    # -- the OpenSpiel API -------------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to act, ``CHANCE`` while dealing, ``TERMINAL`` at the end."""
        if self._over:
            return pyspiel.PlayerId.TERMINAL
        if self._choose_dealer or self._dealing():
            return pyspiel.PlayerId.CHANCE
        return self._engine.g.current

    def _legal_actions(self, player: int) -> list[int]:
        return self._engine.g.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The first dealer (each seat alike), or the next tile dealt (each tile not yet
        dealt alike)."""
        if self._choose_dealer:
            n = self._moon.ruleset.players
            return [(seat, 1.0 / n) for seat in range(n)]
        left = self._moon.ruleset.tile_set
        for t in self._dealt:
            left &= ~(1 << t)
        tiles = tiles_of(left)
        p = 1.0 / len(tiles)
        return [(t, p) for t in tiles]

    def _apply_action(self, action: int) -> None:
        g = self._engine.g
        if self._choose_dealer:
            self._choose_dealer = False
            self._set_first_dealer(int(action))
            return
        if self._dealing():
            position = len(self._dealt)
            self._dealt.append(int(action))
            seat = position // 7
            if seat < g.n:
                g.hands[seat] |= 1 << action
            else:
                g.widow |= 1 << action
            if not self._dealing():
                g.dealt = tuple(g.hands)
            return
        hands_before = len(g.hand_records)
        g.apply(int(action))
        if len(g.hand_records) > hands_before:
            self._over = g.is_terminal() or len(g.hand_records) >= self._moon.max_hands
            if not g.is_terminal():  # the next hand (if played): its deal is chance's
                _blank_deal(g)
                self._dealt = []

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._choose_dealer:
                return f"dealer {action}"
            return f"deal {tile_name(action)}"
        return action_name(action)

    def is_terminal(self) -> bool:
        """True when the game ended by the rules or reached ``max_hands``."""
        return self._over

    def returns(self) -> list[float]:
        """Zero until the end; then each player's side's score (``returns="scores"``) or
        +1/-1 for the winning side and the others (``"win"``)."""
        n = self._moon.ruleset.players
        if not self._over:
            return [0.0] * n
        g = self._engine.g
        side = self._moon.ruleset.side_of
        if self._moon.returns_mode == "scores":
            return [float(g.scores[side(p)]) for p in range(n)]
        if g.outcome is not None:
            winner: int | None = g.outcome.winner
        else:
            top = max(g.scores)
            winner = g.scores.index(top) if g.scores.count(top) == 1 else None
        if winner is None:
            return [0.0] * n
        return [1.0 if side(p) == winner else -1.0 for p in range(n)]

    def view(self, player: int) -> Observation | None:
        """What the arena would show ``player``'s seat now (its tiles dealt so far while
        dealing); None before the first dealer is drawn."""
        if self._choose_dealer:
            return None
        return observe(self._engine.g, player)

    def resample_from_infostate(self, player: int, probability_sampler: Any) -> MoonState:
        """A state ``player`` cannot tell from this one: the same information state, the
        tiles it has not seen dealt anew consistently with what it saw (hand sizes, the
        suits others showed void in, the widow), by :func:`moon_sdk.knowledge.sample`.
        ``probability_sampler()`` (a uniform draw in [0, 1)) seeds the deal.

        The new state's OpenSpiel history holds no actions (its earlier hands are their
        public results): it is for searching onwards from here."""
        if self._choose_dealer or self._dealing() or self._over:
            return self.clone()
        rng = random.Random(float(probability_sampler()))
        return from_observation(self._moon, observe(self._engine.g, player), rng)

    def __str__(self) -> str:
        if self._choose_dealer:
            return "(the first dealer is not drawn yet)"
        return table_text(self._engine.g)


def from_observation(game: MoonGame, obs: Observation, rng: random.Random) -> MoonState:
    """A state of ``game`` at the moment of ``obs``, which its seat cannot tell from the
    real one: the seat's tiles and everything public as observed, the tiles it has not
    seen dealt consistently with what it saw (:func:`moon_sdk.knowledge.sample`), earlier
    hands as their public results. Its OpenSpiel history is empty.

    Raises:
        ValueError: the observation is not of this game's ruleset, or contradicts itself.
    """
    if obs.ruleset != game.ruleset:
        raise ValueError(f"the observation's ruleset {obs.ruleset} is not the game's "
                         f"{game.ruleset}")
    hands, dead = sample(knowledge(obs), rng)
    g = determinize(obs, hands, dead)
    n = game.ruleset.players
    g.hand_records = [HandRecord(h.number, h.dealer, (0,) * n, 0, h.bids, h.bidder, h.bid, -1,
                                 h.trump, (), h.tricks_taken, h.made, h.deltas, h.scores)
                      for h in obs.hands]
    state = game.new_initial_state()
    state._engine = _Engine(g)
    state._choose_dealer = False
    state._dealt = list(range(game.ruleset.num_tiles))  # the deal is done (which is hidden)
    state._over = False
    return state


# -- strings and tensors ------------------------------------------------------------------
def _bids_text(bids: tuple[tuple[int, int], ...]) -> str:
    return " ".join(f"{seat}:{'pass' if v == 0 else v}" for seat, v in bids)


def information_state_text(obs: Observation, private: bool = True) -> str:
    """The information state string of ``obs``'s seat (``private=False``: the public part
    only). Equal strings mean equal knowledge."""
    parts = [f"seat {obs.seat} of {obs.ruleset.players}", f"hand {obs.hand_number}",
             f"dealer {obs.dealer}", "scores " + " ".join(map(str, obs.scores))]
    for h in obs.hands:
        if h.bidder < 0:
            parts.append(f"h{h.number} bids {_bids_text(h.bids)} redeal")
        else:
            parts.append(f"h{h.number} bids {_bids_text(h.bids)} trump {trump_name(h.trump)} "
                         f"tricks {' '.join(map(str, h.tricks_taken))} "
                         f"{'made' if h.made else 'set'}")
    if private:
        parts.append("tiles " + (format_tiles(obs.hand) or "-"))
        if obs.widow:
            parts.append("widow " + format_tiles(obs.widow))
        if obs.discard >= 0:
            parts.append("discard " + tile_name(obs.discard))
    parts.append("bids " + _bids_text(obs.bids))
    if obs.trump >= 0:
        parts.append(f"trump {trump_name(obs.trump)}")
    for t in obs.tricks:
        parts.append("trick " + " ".join(f"{s}:{tile_name(x)}" for s, x in t.plays)
                     + f" >{t.winner}")
    if obs.trick:
        parts.append("playing " + " ".join(f"{s}:{tile_name(x)}" for s, x in obs.trick))
    return " | ".join(parts)


def observation_text(obs: Observation, private: bool = True) -> str:
    """The observation string of ``obs``'s seat: the present, not the order of play."""
    parts = [f"seat {obs.seat}", "scores " + " ".join(map(str, obs.scores))]
    if private:
        parts.append("tiles " + (format_tiles(obs.hand) or "-"))
        if obs.widow:
            parts.append("widow " + format_tiles(obs.widow))
        if obs.discard >= 0:
            parts.append("discard " + tile_name(obs.discard))
    parts.append("bids " + _bids_text(obs.bids))
    if obs.trump >= 0:
        parts.append(f"bidder {obs.bidder} bid {obs.bid} trump {trump_name(obs.trump)}")
    played = [0] * obs.ruleset.players
    for t in obs.tricks:
        for s, x in t.plays:
            played[s] |= 1 << x
    if any(played):
        parts.append("played " + " ".join(f"{s}:{format_tiles(m) or '-'}"
                                          for s, m in enumerate(played)))
    if obs.trick:
        parts.append("playing " + " ".join(f"{s}:{tile_name(x)}" for s, x in obs.trick))
    parts.append("taken " + " ".join(map(str, obs.tricks_taken)))
    return " | ".join(parts)


class MoonObserver:
    """OpenSpiel's Python observer of ``python_moon``: ``tensor`` (float32) and ``dict``
    (its named pieces, :data:`moon_sdk.features.OBSERVATION_PIECES`)."""

    def __init__(self, iig_obs_type: pyspiel.IIGObservationType,
                 params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"python_moon observers take no parameters; got {params}")
        if not iig_obs_type.public_info:
            raise ValueError("python_moon observers include the public information "
                             "(public_info=True)")
        private = iig_obs_type.private_info
        if private == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("python_moon observers show one player's private tiles or none "
                             "(private_info SINGLE_PLAYER or NONE), not every player's")
        self.private = private == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        pieces = list(OBSERVATION_PIECES)
        if self.perfect_recall:
            pieces.append(SEQUENCE_PIECE)
        size = INFORMATION_STATE_SIZE if self.perfect_recall else OBSERVATION_SIZE
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, n in pieces:
            self.dict[name] = self.tensor[at:at + n]
            at += n

    def set_from(self, state: MoonState, player: int) -> None:
        """Fill :attr:`tensor` with ``player``'s view of ``state``."""
        obs = state.view(player)
        if obs is None:
            self.tensor.fill(0.0)
            return
        f = information_state_features if self.perfect_recall else observation_features
        self.tensor[:] = f(obs, self.private)

    def string_from(self, state: MoonState, player: int) -> str:
        """``player``'s view of ``state`` as text."""
        obs = state.view(player)
        if obs is None:
            return f"seat {player}: before the deal"
        f = information_state_text if self.perfect_recall else observation_text
        return f(obs, self.private)


pyspiel.register_game(_GAME_TYPE, MoonGame)


# -- OpenSpiel bots in the arena ----------------------------------------------------------
class OpenSpielBot(Bot):
    """An OpenSpiel bot (a ``pyspiel.Bot``, or a function of a ``python_moon`` state that
    returns an action) as an arena :class:`~moon_sdk.Bot`.

    Each turn it builds a ``python_moon`` state from the observation with
    :func:`from_observation` (the hidden tiles dealt anew, consistently with what the seat
    saw) and plays ``bot.step(state)``. ``scope="hand"`` (default) presents the hand in
    play as a one-hand game (``max_hands=1``, scores 0, no earlier hands: the game that
    policies trained with ``max_hands=1`` and searches of one hand know);
    ``scope="game"`` presents the whole game (scores and earlier hands, to
    ``max_hands``). The bot is made by ``make(game, seat)`` at the first turn (and again
    if a later turn is of another ruleset).

        from open_spiel.python.algorithms import ismcts, mcts
        def make(game, seat):
            return ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(), uct_c=2.0,
                                    max_simulations=100)
        run(OpenSpielBot(make))

    Raises (from ``act``):
        ValueError: the OpenSpiel bot answered an action that is not legal.
    """

    name = "openspiel"
    version = "1"

    def __init__(self, make: Callable[[pyspiel.Game, int], Any], *, scope: str = "hand",
                 max_hands: int = 200, returns: str = "scores", seed: int | None = None
                 ) -> None:
        if scope not in ("hand", "game"):
            raise ValueError(f"scope must be 'hand' or 'game', not {scope!r}")
        self.make = make
        self.scope = scope
        self.max_hands = max_hands
        self.returns = returns
        self.rng = random.Random(seed)
        self.game: Any = None
        """The ``python_moon`` game the bot plays in (made at its first turn)."""
        self.player: Any = None
        """What ``make`` returned."""

    def _ensure(self, ruleset: Ruleset, seat: int) -> MoonGame:
        if self.game is None or self.game.ruleset != ruleset:
            self.game = load_game(ruleset, returns=self.returns,
                                  max_hands=1 if self.scope == "hand" else self.max_hands)
            self.player = self.make(self.game, seat)
        return self.game  # type: ignore[no-any-return]

    def act(self, obs: Observation) -> int:
        """The OpenSpiel bot's action in a state rebuilt from ``obs``."""
        game = self._ensure(obs.ruleset, obs.seat)
        if self.scope == "hand":
            obs = dataclasses.replace(obs, hand_number=0, hands=(),
                                      scores=(0,) * len(obs.scores))
        state = from_observation(game, obs, self.rng)
        step = getattr(self.player, "step", self.player)
        action = int(step(state))
        if action not in obs.legal_actions:
            raise ValueError(f"the OpenSpiel bot answered {action}, which is not legal here "
                             f"(legal: {list(obs.legal_actions)})")
        return action


__all__ = ["DEFAULT_PARAMS", "GAME_NAME", "MoonGame", "MoonObserver", "MoonState",
           "OpenSpielBot", "from_observation", "game_params", "information_state_text",
           "load_game", "observation_text"]
