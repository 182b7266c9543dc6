"""The game state: phases, legal actions, a validating `apply`, clone and replay.

A game is a `Ruleset`, a seed and a list of actions: the deals come from the seed
(:func:`deal`), everything else from the actions, so a replay is bit-for-bit identical.
Model: OpenSpiel's state API (``current_player``, ``legal_actions``, ``apply``,
``is_terminal``, ``clone``).

    >>> from moon_sdk.rules import GameState, Ruleset
    >>> s = GameState(Ruleset.preset("moon3"), seed=7)
    >>> s.phase.name, len(s.legal_actions()) > 0
    ('BIDDING', True)
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .actions import (
    DISCARD_BASE,
    MOON,
    MOON_BID,
    NUM_ACTIONS,
    PASS,
    TRUMP_BASE,
    Action,
    ActionKind,
    action_kind,
    action_name,
    bid,
    bid_value,
)
from .ruleset import Ruleset
from .tiles import (
    _CHUNKS,
    DOUBLES,
    FOLLOW_MASK,
    LED_SUIT,
    LED_TRUMPS,
    NO_TRUMP,
    RANK,
    SUIT_NAMES,
    TILE_NAMES,
    Tile,
    TileSet,
    Trump,
    format_tiles,
    tiles_of,
    trump_name,
)

_MASK64 = (1 << 64) - 1
_C0, _C1, _C2 = _CHUNKS  # tiles_of()'s tables, for the inlined copy in legal_actions
_new_tuple = tuple.__new__
_new_object = object.__new__
_set_attribute = object.__setattr__
_NEXT_SEAT = {n: tuple((seat + 1) % n for seat in range(n)) for n in (3, 4)}


class IllegalActionError(ValueError):
    """An action the rules do not allow now; the message says why
    (e.g. ``"must follow sixes: holds 6-2"``)."""


class Phase(enum.IntEnum):
    """Phases of a hand. DEAL and HAND_OVER are instantaneous (nobody acts in them): the
    state passes through them inside :meth:`GameState.apply` and is never left in them."""

    DEAL = 0
    BIDDING = 1
    DISCARD = 2
    """The bidder holds the widow (8 tiles) and discards one."""
    TRUMP = 3
    PLAY = 4
    HAND_OVER = 5
    GAME_OVER = 6


# The phases as module constants for the hot paths: reading ``Phase.PLAY`` is an enum class
# lookup (~0.1 µs), and every decision would pay it several times.
_DEAL, _BIDDING, _DISCARD, _TRUMP, _PLAY, _HAND_OVER, _GAME_OVER = (
    Phase.DEAL, Phase.BIDDING, Phase.DISCARD, Phase.TRUMP, Phase.PLAY, Phase.HAND_OVER,
    Phase.GAME_OVER)


class Termination(enum.Enum):
    """How a game ended."""

    TARGET = "target"
    """A side reached the target and was strictly ahead at the end of a hand."""
    MOON = "moon"
    """A made bid of 21 with ``moon_wins_game``."""


@dataclass(frozen=True)
class Outcome:
    """The end of a game."""

    termination: Termination
    winner: int
    """The winning side (a seat in 3-player Moon, a partnership 0/1 in 4-player)."""
    scores: tuple[int, ...]
    """Final score of each side (points or marks)."""
    places: tuple[int, ...]
    """Finishing place of each side, 1 = first; sides with equal scores share a place,
    and the winner is always alone in first place."""


class Trick(NamedTuple):
    """A completed trick (a named tuple: cheap to build, seven times a hand)."""

    leader: int
    plays: tuple[tuple[int, Tile], ...]
    """``(seat, tile)`` in play order, the lead first."""
    winner: int


@dataclass(frozen=True)
class HandRecord:
    """Everything about a finished hand (hidden tiles included: for records, not bots)."""

    number: int
    """0-based count of deals in the game, redeals included."""
    dealer: int
    dealt: tuple[TileSet, ...]
    """Each seat's 7 dealt tiles."""
    widow: TileSet
    bids: tuple[tuple[int, int], ...]
    """``(seat, value)`` in bidding order; value 0 is a pass, 21 the moon."""
    bidder: int
    """Seat that won the auction, or -1 if everyone passed (a redeal)."""
    bid: int
    discard: Tile
    """The bidder's discard, or -1 (no widow, or passed out)."""
    trump: Trump
    """The contract named, or -1 if passed out."""
    tricks: tuple[Trick, ...]
    tricks_taken: tuple[int, ...]
    """Tricks taken by each seat."""
    made: bool | None
    """Whether the contract was made; None if passed out."""
    deltas: tuple[int, ...]
    """Change of each side's score (points or marks)."""
    scores: tuple[int, ...]
    """Each side's score after the hand."""


def _splitmix64(x: int) -> tuple[int, int]:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x, z ^ (z >> 31)


def _bid_list(forced: bool, lo: int) -> tuple[Action, ...]:
    """The legal bids when no bid below ``lo`` is allowed (``forced``: the dealer may not
    pass); ``lo`` 8 leaves the pass (if allowed) and the moon."""
    return (() if forced else (PASS,)) + tuple(bid(v) for v in range(max(lo, 3), 8)) + (MOON,)


_BIDS: tuple[tuple[tuple[Action, ...], ...], ...] = tuple(
    tuple(_bid_list(forced, lo) for lo in range(9)) for forced in (False, True)
)
"""``_BIDS[forced][lo]``, lo = max(min_bid, high bid + 1): the legal bids, precomputed."""


@functools.cache
def _bid_tables(min_bid: int, force_dealer: bool) -> tuple[
        tuple[tuple[Action, ...], ...], tuple[Action, ...]]:
    """The legal bids by the high bid so far (0..21), and the dealer's when everyone else
    passed (docs/rules.md, "Bidding")."""
    by_high = tuple(_BIDS[False][min(max(min_bid, high + 1), 8)] for high in range(MOON_BID + 1))
    return by_high, _BIDS[force_dealer][min_bid]


_BID_VALUE = tuple(bid_value(a) if PASS <= a <= MOON else -1 for a in range(NUM_ACTIONS))
"""``_BID_VALUE[action]``: the value of a bid action (0 for a pass), -1 for others."""


def first_dealer(seed: int, players: int) -> int:
    """The dealer of a game's first hand, drawn from the match seed (docs/rules.md, "Deal and
    dealer")."""
    return _splitmix64((seed ^ 0x5EED5EED) & _MASK64)[1] % players


DEAL_VERSION = 2
"""The version of the deal algorithm below: a game record made with another version deals
other tiles from the same seed (version 1, before 2026-11-30, drew each swap by
multiplication, four swaps per 64-bit output)."""

_TILE_BITS: dict[TileSet, tuple[int, ...]] = {}
"""A tile set's tiles as single-bit masks, ascending (filled on first use)."""
_DEAL_WORDS = {k: -(-(math.factorial(k).bit_length() + 48) // 64) for k in range(29)}
"""64-bit outputs a deal of ``k`` tiles draws: at least 48 bits more than ``k!`` needs."""
_DEAL_STEPS = {k: tuple((i, i + 1) for i in range(k - 1, 0, -1)) for k in range(29)}
"""``(i, i + 1)`` for the Fisher–Yates steps of ``k`` tiles, ``i`` from ``k - 1`` down."""


def deal(seed: int, hand_number: int, ruleset: Ruleset) -> tuple[tuple[TileSet, ...], TileSet]:
    """The deal of hand ``hand_number`` of a game with ``seed``: ``(hands, widow)``.

    A SplitMix64 stream seeded by ``(seed, hand_number)`` gives one random integer ``R`` of
    2 or 3 outputs (128 bits for 21 or 22 tiles, 192 for 28); a Fisher–Yates shuffle of the
    tile set (ascending) takes its swaps as the mixed-radix digits of ``R``
    (``R, j = divmod(R, i + 1)``: docs/rules.md gives the exact steps, :data:`DEAL_VERSION`
    its version). Seat ``i`` gets shuffled tiles ``7i..7i+6`` and the rest is the widow.
    It depends on nothing else (not the dealer, not the bots), so a board plays the same
    deals in every seating.
    """
    bits = _TILE_BITS.get(ruleset.tile_set)
    if bits is None:
        bits = _TILE_BITS[ruleset.tile_set] = tuple(1 << t for t in tiles_of(ruleset.tile_set))
    tiles = list(bits)  # shuffled as single bits, so that a hand's mask is a sum
    k = len(tiles)
    x = (seed ^ ((hand_number + 1) * 0xD1B54A32D192ED03)) & _MASK64
    r = 0
    for _ in range(_DEAL_WORDS[k]):  # SplitMix64 (inlined): the outputs, first one highest
        x = (x + 0x9E3779B97F4A7C15) & _MASK64
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        r = r << 64 | z ^ (z >> 31)
    # R's digits in the mixed radix (k, k-1, ..., 2) are a uniform Fisher-Yates draw, up to
    # a bias below 2^-48 (R has 48 more bits than k! needs).
    for i, i1 in _DEAL_STEPS[k]:
        r, j = divmod(r, i1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    if ruleset.players == 3:
        return (sum(tiles[0:7]), sum(tiles[7:14]), sum(tiles[14:21])), sum(tiles[21:])
    return (sum(tiles[0:7]), sum(tiles[7:14]), sum(tiles[14:21]), sum(tiles[21:28])), 0


class GameState:
    """A game of Moon in progress: a whole game to the target, hand after hand.

    Attributes are read-only for callers; change the state only with :meth:`apply`.
    """

    __slots__ = (
        "ruleset", "seed", "n", "phase", "hand_number", "dealer", "current", "hands",
        "dealt", "widow", "widow_taken", "discard", "bids", "high_bid", "bidder", "trump",
        "led", "trick", "tricks", "tricks_taken", "played", "scores", "history",
        "hand_records", "outcome", "_first_dealer", "_trump_actions", "_open_bids",
        "_dealer_alone_bids", "_next_seat",
    )

    def __init__(self, ruleset: Ruleset, seed: int) -> None:
        """Start a game and deal its first hand.

        Args:
            ruleset: the rules (see :class:`Ruleset`).
            seed: any int; it fixes the first dealer and every deal.
        """
        self.ruleset = ruleset
        self.seed = seed
        self.n = ruleset.players
        self.history: list[Action] = []
        """Every action applied, in order: with the ruleset and seed, the whole game."""
        self.hand_records: list[HandRecord] = []
        """Finished hands (redeals included), oldest first."""
        self.scores = [0] * ruleset.num_sides
        """Each side's score (points or marks, per ``ruleset.scoring``)."""
        self.outcome: Outcome | None = None
        self.hand_number = 0
        self._first_dealer = first_dealer(seed, self.n)
        self._next_seat = _NEXT_SEAT[self.n]
        self._trump_actions = tuple(TRUMP_BASE + t for t in ruleset.allowed_trumps)
        self._open_bids, self._dealer_alone_bids = _bid_tables(
            ruleset.min_bid, ruleset.all_pass == "force_dealer")
        self._start_hand()

    # -- the deal ------------------------------------------------------------------------
    def _start_hand(self) -> None:
        self.phase = _DEAL
        self.dealer = (self._first_dealer + self.hand_number) % self.n
        hands, self.widow = deal(self.seed, self.hand_number, self.ruleset)
        self.hands = list(hands)
        """Tiles each seat holds now."""
        self.dealt = hands
        self.widow_taken = False
        self.discard = -1
        self.bids: list[tuple[int, int]] = []
        self.high_bid = 0
        self.bidder = -1
        self.trump: Trump = -1
        self.led = -1
        self.trick: list[tuple[int, Tile]] = []
        """Plays of the trick in progress, ``(seat, tile)``."""
        self.tricks: list[Trick] = []
        """Completed tricks of this hand."""
        self.tricks_taken = [0] * self.n
        self.played: TileSet = 0
        """Tiles played so far this hand."""
        self.phase = _BIDDING
        self.current = (self.dealer + 1) % self.n

    # -- queries -------------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        """The seat to act, or -1 when the game is over."""
        return -1 if self.phase == _GAME_OVER else self.current

    def is_terminal(self) -> bool:
        """True when the game is over (:attr:`outcome` is set)."""
        return self.phase == _GAME_OVER

    def side_of(self, seat: int) -> int:
        """Scoring side of ``seat`` (see :meth:`Ruleset.side_of`)."""
        return seat if self.n == 3 else seat % 2

    def legal_plays(self) -> TileSet:
        """In the play phase, the tiles the current seat may play, as a mask (docs/rules.md,
        "Play"): the tiles following the suit led if it holds any, else its hand."""
        hand = self.hands[self.current]
        if self.trick:
            f = hand & FOLLOW_MASK[self.trump][self.led]
            if f:
                return f
        return hand

    def legal_actions(self) -> list[Action]:
        """The current seat's legal actions, sorted ascending; empty only at game end."""
        phase = self.phase
        if phase == _PLAY:  # legal_plays() and tiles_of(), inlined: this is the hot path
            hand = self.hands[self.current]
            if self.trick:
                hand = (hand & FOLLOW_MASK[self.trump][self.led]) or hand
            return _C0[hand & 1023] + _C1[hand >> 10 & 1023] + _C2[hand >> 20]
        if phase == _BIDDING:
            return list(self._legal_bids())
        if phase == _DISCARD:
            return [DISCARD_BASE + t for t in tiles_of(self.hands[self.current])]
        if phase == _TRUMP:
            return list(self._trump_actions)
        return []

    def _legal_bids(self) -> tuple[Action, ...]:
        """docs/rules.md, "Bidding": higher than the high bid and at least ``min_bid``; the dealer
        after everyone passed may not pass with ``all_pass=force_dealer``."""
        if self.bidder < 0 and self.current == self.dealer:
            return self._dealer_alone_bids
        return self._open_bids[self.high_bid]

    # -- apply ---------------------------------------------------------------------------
    def is_legal(self, action: Action) -> bool:
        """Whether the current seat may take ``action`` now: the legality check
        (docs/rules.md, "Bidding", "Widow, discard, trumps", "Play"), which :meth:`apply`
        applies. True exactly for the actions :meth:`legal_actions` lists.

        >>> s = GameState(Ruleset.preset("moon3"), seed=7)
        >>> all(s.is_legal(a) for a in s.legal_actions()), s.is_legal(-1), s.is_legal(True)
        (True, False, False)
        """
        if action.__class__ is not int:  # not a bool, float or str: the history is ints
            return False
        phase = self.phase
        if phase == _PLAY:
            held = self.hands[self.current]
            legal = (held & FOLLOW_MASK[self.trump][self.led]) or held if self.trick else held
            return action >= 0 and (legal >> action) & 1 == 1  # (no bit past 27)
        if phase == _BIDDING:  # _legal_bids(), inlined
            if self.bidder < 0 and self.current == self.dealer:
                return action in self._dealer_alone_bids
            return action in self._open_bids[self.high_bid]
        if phase == _DISCARD:
            return (DISCARD_BASE <= action < PASS
                    and (self.hands[self.current] >> (action - DISCARD_BASE)) & 1 == 1)
        if phase == _TRUMP:
            return action in self._trump_actions
        return False

    def apply(self, action: Action) -> None:
        """Apply the current seat's ``action`` and advance the game.

        Raises:
            IllegalActionError: the action is not legal now (:meth:`is_legal`); the
                message says why and the state is unchanged.
        """
        if self.phase == _PLAY:  # the hot path, inlined: is_legal()'s check, then _play()
            seat = self.current  # (tests/rules/test_properties.py holds them the same)
            held = self.hands[seat]
            trick = self.trick
            legal = (held & FOLLOW_MASK[self.trump][self.led]) or held if trick else held
            if action.__class__ is not int or action < 0 or not (legal >> action) & 1:
                raise IllegalActionError(self._why_illegal(action))
            self.history.append(action)
            bit = 1 << action
            self.hands[seat] = held ^ bit
            self.played |= bit
            if not trick:
                self.led = LED_SUIT[self.trump][action]
            trick.append((seat, action))
            if len(trick) < self.n:
                self.current = self._next_seat[seat]
                return
            self._end_trick()
        elif self.is_legal(action):
            self.apply_unchecked(action)
        else:
            raise IllegalActionError(self._why_illegal(action))

    def apply_unchecked(self, action: Action) -> None:
        """Apply ``action`` without checking it: for searches and simulations that only
        ever apply an action :meth:`legal_actions` gave (cheaper than :meth:`apply`). An
        illegal action corrupts the state; anything that comes from a bot or a file goes
        through :meth:`apply`."""
        phase = self.phase
        if phase == _PLAY:
            self._play(action)
        elif phase == _BIDDING:
            self.history.append(action)
            # the bid: recorded; a moon or the dealer's turn ends the auction
            seat = self.current
            value = _BID_VALUE[action]
            self.bids.append((seat, value))
            if value:
                self.high_bid = value
                self.bidder = seat
            if value == MOON_BID or seat == self.dealer:
                self._end_auction()
            else:
                self.current = self._next_seat[seat]
        elif phase == _DISCARD:
            self.history.append(action)
            self._discard(action - DISCARD_BASE)
        elif phase == _TRUMP:
            self.history.append(action)
            self._name_trump(action - TRUMP_BASE)

    def _play(self, tile: Tile) -> None:
        """The current seat plays ``tile`` (legal: not checked here)."""
        seat = self.current
        self.history.append(tile)
        bit = 1 << tile
        self.hands[seat] ^= bit
        self.played |= bit
        trick = self.trick
        if not trick:
            self.led = LED_SUIT[self.trump][tile]
        trick.append((seat, tile))
        if len(trick) < self.n:
            self.current = self._next_seat[seat]
            return
        self._end_trick()

    def _end_trick(self) -> None:
        """The trick is complete: the highest rank wins it (docs/rules.md, "Play")."""
        trick = self.trick
        ranks = RANK[self.trump][self.led]
        winner, top = -1, -2
        for p_seat, p_tile in trick:
            if ranks[p_tile] > top:
                winner, top = p_seat, ranks[p_tile]
        tricks = self.tricks
        tricks.append(_new_tuple(Trick, (trick[0][0], tuple(trick), winner)))
        self.tricks_taken[winner] += 1
        self.trick = []
        self.current = winner
        if len(tricks) == 7:
            self._score_hand()

    def _end_auction(self) -> None:
        if self.bidder < 0:  # everyone passed: redeal, the deal moves on (docs/rules.md)
            self._finish_hand(made=None, deltas=(0,) * self.ruleset.num_sides)
            return
        self.current = self.bidder
        if self.widow and not self.ruleset.trump_before_widow:
            self._take_widow()
        else:
            self.phase = _TRUMP

    def _take_widow(self) -> None:
        self.hands[self.bidder] |= self.widow
        self.widow_taken = True
        self.phase = _DISCARD

    def _discard(self, t: Tile) -> None:
        self.hands[self.bidder] &= ~(1 << t)
        self.discard = t
        if self.trump >= 0:
            self._start_play()
        else:
            self.phase = _TRUMP

    def _name_trump(self, trump: Trump) -> None:
        self.trump = trump
        if self.widow and not self.widow_taken:
            self._take_widow()
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.phase = _PLAY
        self.current = self.bidder

    # -- scoring (docs/rules.md, "Scoring") -----------------------------------------------
    def _score_hand(self) -> None:
        r = self.ruleset
        n = self.n
        sides = 3 if n == 3 else 2
        bside = self.bidder if n == 3 else self.bidder % 2
        if n == 3:
            taken = list(self.tricks_taken)
        else:
            t = self.tricks_taken
            taken = [t[0] + t[2], t[1] + t[3]]
        moon = self.high_bid == MOON_BID
        made = taken[bside] >= (7 if moon else self.high_bid)
        if r.scoring == "marks":
            deltas = [1 if (side == bside) == made else 0 for side in range(sides)]
        else:
            deltas = taken
            if not made:
                deltas[bside] = -self.high_bid
            elif moon:
                deltas[bside] = MOON_BID
            elif self.n == 3 or r.team_made_scores == "bid":
                deltas[bside] = self.high_bid
            # else: a made team contract scores the tricks taken (already in deltas)
        self._finish_hand(made=made, deltas=tuple(deltas))

    def _finish_hand(self, made: bool | None, deltas: tuple[int, ...]) -> None:
        self.phase = _HAND_OVER
        for side, d in enumerate(deltas):
            self.scores[side] += d
        # HandRecord(...) with its fields set at once: a frozen dataclass's __init__ sets
        # them one by one through object.__setattr__, which costs twice as much.
        record = _new_object(HandRecord)
        _set_attribute(record, "__dict__", {
            "number": self.hand_number, "dealer": self.dealer, "dealt": self.dealt,
            "widow": self.widow, "bids": tuple(self.bids), "bidder": self.bidder,
            "bid": self.high_bid, "discard": self.discard, "trump": self.trump,
            "tricks": tuple(self.tricks), "tricks_taken": tuple(self.tricks_taken),
            "made": made, "deltas": deltas, "scores": tuple(self.scores)})
        self.hand_records.append(record)
        r = self.ruleset
        if made and self.high_bid == MOON_BID and r.moon_wins_game:
            self._end_game(Termination.MOON, self.side_of(self.bidder))
            return
        top = max(self.scores)
        if top >= r.target and self.scores.count(top) == 1:
            self._end_game(Termination.TARGET, self.scores.index(top))
            return
        self.hand_number += 1
        self._start_hand()

    def _end_game(self, termination: Termination, winner: int) -> None:
        self.phase = _GAME_OVER
        scores = tuple(self.scores)
        places = tuple(
            1 if side == winner else 1 + sum(
                1 for o in range(len(scores)) if o == winner or scores[o] > scores[side])
            for side in range(len(scores))
        )
        self.outcome = Outcome(termination, winner, scores, places)

    # -- why an action is illegal --------------------------------------------------------
    def _why_illegal(self, action: Action) -> str:
        if action.__class__ is not int or not 0 <= action < NUM_ACTIONS:
            return f"not an action: {action!r}"
        if self.phase == Phase.GAME_OVER:
            return "the game is over"
        seat = self.current
        kind = action_kind(action)
        want = {Phase.BIDDING: ActionKind.BID, Phase.DISCARD: ActionKind.DISCARD,
                Phase.TRUMP: ActionKind.TRUMP, Phase.PLAY: ActionKind.PLAY}[self.phase]
        if kind != want:
            return (f"seat {seat} must {want.name.lower()} now ({self.phase.name} phase), "
                    f"not {action_name(action)}")
        r = self.ruleset
        if kind == ActionKind.BID:
            v = bid_value(action)
            if v == 0:
                return ("the dealer may not pass when everyone else passed "
                        "(all_pass=force_dealer)")
            if v < r.min_bid:
                return f"bid {v} is below the minimum bid {r.min_bid} (min_bid)"
            return f"bid {v} must be higher than the bid {self.high_bid} already made"
        if kind == ActionKind.TRUMP:
            t = action - TRUMP_BASE
            if t == 0:
                return "trump 0 cannot be named: this tile set has no tile with a blank"
            if t == DOUBLES:
                return "doubles may not be named trumps (allow_doubles_trump=false)"
            if t == NO_TRUMP:
                return "no trumps may not be named (allow_no_trump=false)"
        if kind == ActionKind.DISCARD:
            name = TILE_NAMES[action - DISCARD_BASE]
            return f"cannot discard {name}: seat {seat} does not hold it"
        # a play
        if not (self.hands[seat] >> action) & 1:
            return f"cannot play {TILE_NAMES[action]}: seat {seat} does not hold it"
        suit = "trumps" if self.led == LED_TRUMPS else SUIT_NAMES[self.led]
        return f"must follow {suit}: holds {format_tiles(self.legal_plays())}"

    # -- copying and replay --------------------------------------------------------------
    def clone(self) -> GameState:
        """An independent copy (immutable parts shared)."""
        c = GameState.__new__(GameState)
        for name in GameState.__slots__:
            setattr(c, name, getattr(self, name))
        c.hands = self.hands[:]
        c.bids = self.bids[:]
        c.trick = self.trick[:]
        c.tricks = self.tricks[:]
        c.tricks_taken = self.tricks_taken[:]
        c.scores = self.scores[:]
        c.history = self.history[:]
        c.hand_records = self.hand_records[:]
        return c

    @classmethod
    def from_deal(cls, ruleset: Ruleset, hands: Sequence[TileSet], widow: TileSet = 0, *,
                  dealer: int, seed: int = 0, scores: Sequence[int] | None = None
                  ) -> GameState:
        """A game whose first hand is this deal, checked: for tests and tools that need a
        chosen position (in the manner of a chess FEN), not for games, which deal from
        their seed (docs/rules.md, "Deal and dealer").

        Args:
            hands: each seat's 7 tiles as a mask, seat 0 first (``ruleset.players`` of
                them).
            widow: the widow's tile as a mask (one tile with a widow in the ruleset, else
                0).
            dealer: the seat that dealt this hand; the seat after it bids first.
            seed: deals the later hands (hand ``k`` as a game with this seed would), and
                the dealer moves on from ``dealer``. Such a game is not replayable from
                its seed and actions alone.
            scores: each side's score before this hand (points or marks), as if earlier
                hands had been played; zeros by default.

        Raises:
            ValueError: not every tile of ``ruleset.tile_set`` exactly once among the hands
                and the widow, a hand without 7 tiles, a widow of the wrong size, a dealer
                that is no seat, or scores for another number of sides; the message says
                which.

        >>> from moon_sdk.rules import mask_of, parse_tile
        >>> r = Ruleset.preset("moon3")
        >>> tiles = tiles_of(r.tile_set)
        >>> hands = [mask_of(tiles[7 * i:7 * i + 7]) for i in range(3)]
        >>> s = GameState.from_deal(r, hands, mask_of(tiles[21:]), dealer=2)
        >>> s.current, s.hands[0] == hands[0], s.is_legal(PASS)
        (0, True, True)
        >>> GameState.from_deal(r, hands, 0, dealer=2)
        Traceback (most recent call last):
        ...
        ValueError: the widow has 0 tiles; this ruleset's has 1
        """
        n = ruleset.players
        if len(hands) != n:
            raise ValueError(f"{len(hands)} hands for {n} players")
        if not 0 <= dealer < n:
            raise ValueError(f"dealer {dealer} is not a seat (0..{n - 1})")
        seen = 0
        for seat, h in enumerate(hands):
            if h.bit_count() != 7:
                raise ValueError(f"seat {seat} has {h.bit_count()} tiles; a hand has 7")
            if h & seen:
                raise ValueError(f"{format_tiles(h & seen)} dealt twice (seat {seat})")
            seen |= h
        want = ruleset.tile_set.bit_count() - 7 * n
        if widow.bit_count() != want:
            raise ValueError(f"the widow has {widow.bit_count()} tiles; this ruleset's "
                             f"has {want}")
        if widow & seen:
            raise ValueError(f"{format_tiles(widow & seen)} in a hand and in the widow")
        seen |= widow
        if seen != ruleset.tile_set:  # as many tiles as the set, none twice: one outside
            raise ValueError(f"{format_tiles(seen & ~ruleset.tile_set)} not in this "
                             "ruleset's tile set")
        if scores is not None and len(scores) != ruleset.num_sides:
            raise ValueError(f"{len(scores)} scores for {ruleset.num_sides} sides")
        s = cls(ruleset, seed)
        s._first_dealer = dealer
        s.dealer = dealer
        s.current = s._next_seat[dealer]
        s.hands = list(hands)
        s.dealt = tuple(hands)
        s.widow = widow
        if scores is not None:
            s.scores = list(scores)
        return s

    @classmethod
    def replay(cls, ruleset: Ruleset, seed: int, actions: Iterable[Action]) -> GameState:
        """The state after applying ``actions`` to a new game with ``seed``.

        Raises:
            IllegalActionError: an action in the list is illegal where it stands; the
                message gives its index.
        """
        s = cls(ruleset, seed)
        for i, a in enumerate(actions):
            try:
                s.apply(a)
            except IllegalActionError as e:
                raise IllegalActionError(f"action {i} ({a}): {e}") from None
        return s

    def __repr__(self) -> str:
        return (f"<GameState hand={self.hand_number} phase={self.phase.name} "
                f"seat={self.current_player} scores={self.scores}"
                + (f" trump={trump_name(self.trump)}" if self.trump >= 0 else "") + ">")
