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
from collections.abc import Iterable
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


def first_dealer(seed: int, players: int) -> int:
    """The dealer of a game's first hand, drawn from the match seed (RULES.md, "Deal")."""
    return _splitmix64((seed ^ 0x5EED5EED) & _MASK64)[1] % players


def deal(seed: int, hand_number: int, ruleset: Ruleset) -> tuple[tuple[TileSet, ...], TileSet]:
    """The deal of hand ``hand_number`` of a game with ``seed``: ``(hands, widow)``.

    A SplitMix64 stream seeded by ``(seed, hand_number)`` drives a Fisher–Yates shuffle of
    the tile set (ascending), each 64-bit output serving four swaps by multiplication
    (docs/rules.md gives the exact steps); seat ``i`` gets shuffled tiles ``7i..7i+6`` and
    the rest is the widow. It depends on nothing else (not the dealer, not the bots), so a
    board plays the same deals in every seating.
    """
    tiles = [1 << t for t in tiles_of(ruleset.tile_set)]  # shuffled as bits: sums are masks
    x = (seed ^ ((hand_number + 1) * 0xD1B54A32D192ED03)) & _MASK64
    z = left = 0
    for i in range(len(tiles) - 1, 0, -1):
        if not left:  # a fresh SplitMix64 output (inlined) serves four swaps
            x = (x + 0x9E3779B97F4A7C15) & _MASK64
            z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
            z ^= z >> 31
            left = 4
        # j = floor(z * (i + 1) / 2^64); the low 64 bits of the product carry the rest of
        # the entropy to the next swap (batched ranged random integers: Brackett-Rozinsky
        # & Lemire, 2024).
        z *= i + 1
        j = z >> 64
        z &= _MASK64
        left -= 1
        tiles[i], tiles[j] = tiles[j], tiles[i]
    n = ruleset.players
    return tuple(sum(tiles[7 * seat: 7 * seat + 7]) for seat in range(n)), sum(tiles[7 * n:])


class GameState:
    """A game of Moon in progress: a whole game to the target, hand after hand.

    Attributes are read-only for callers; change the state only with :meth:`apply`.
    """

    __slots__ = (
        "ruleset", "seed", "n", "phase", "hand_number", "dealer", "current", "hands",
        "dealt", "widow", "widow_taken", "discard", "bids", "high_bid", "bidder", "trump",
        "led", "trick", "tricks", "tricks_taken", "played", "scores", "history",
        "hand_records", "outcome", "_first_dealer", "_trump_actions",
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
        self._trump_actions = tuple(TRUMP_BASE + t for t in ruleset.allowed_trumps)
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
        """In the play phase, the tiles the current seat may play, as a mask (RULES.md,
        "Following"): the tiles following the suit led if it holds any, else its hand."""
        hand = self.hands[self.current]
        if self.trick:
            f = hand & FOLLOW_MASK[self.trump][self.led]
            if f:
                return f
        return hand

    def legal_actions(self) -> list[Action]:
        """The current seat's legal actions, sorted ascending; empty only at game end."""
        phase = self.phase
        if phase == _PLAY:  # legal_plays(), inlined: this is the hot path
            hand = self.hands[self.current]
            if self.trick:
                f = hand & FOLLOW_MASK[self.trump][self.led]
                if f:
                    return tiles_of(f)
            return tiles_of(hand)
        if phase == _BIDDING:
            return list(self._legal_bids())
        if phase == _DISCARD:
            return [DISCARD_BASE + t for t in tiles_of(self.hands[self.current])]
        if phase == _TRUMP:
            return list(self._trump_actions)
        return []

    def _legal_bids(self) -> tuple[Action, ...]:
        r = self.ruleset
        forced = (self.bidder < 0 and self.current == self.dealer
                  and r.all_pass == "force_dealer")
        return _BIDS[forced][max(r.min_bid, self.high_bid + 1)]

    # -- apply ---------------------------------------------------------------------------
    def apply(self, action: Action) -> None:
        """Apply the current seat's ``action`` and advance the game.

        Raises:
            IllegalActionError: the action is not legal now; the message says why and the
                state is unchanged.
        """
        phase = self.phase
        if action.__class__ is not int:  # not a bool, float or str: the history is ints
            raise IllegalActionError(self._why_illegal(action))
        if phase == _PLAY:
            hand = self.hands[self.current]
            if self.trick:  # legal_plays(), inlined
                f = hand & FOLLOW_MASK[self.trump][self.led]
                if f:
                    hand = f
            if not (0 <= action < 28 and (hand >> action) & 1):
                raise IllegalActionError(self._why_illegal(action))
            self.history.append(action)
            # _play(action), inlined up to the end of a trick: this is the hot path
            seat = self.current
            bit = 1 << action
            self.hands[seat] ^= bit
            self.played |= bit
            trick = self.trick
            if not trick:
                self.led = LED_SUIT[self.trump][action]
            trick.append((seat, action))
            if len(trick) < self.n:
                self.current = _NEXT_SEAT[self.n][seat]
            else:
                self._end_trick()
        elif phase == _BIDDING:
            if action not in self._legal_bids():
                raise IllegalActionError(self._why_illegal(action))
            self.history.append(action)
            self._bid(bid_value(action))
        elif phase == _DISCARD:
            if not (DISCARD_BASE <= action < PASS
                    and (self.hands[self.current] >> (action - DISCARD_BASE)) & 1):
                raise IllegalActionError(self._why_illegal(action))
            self.history.append(action)
            self._discard(action - DISCARD_BASE)
        elif phase == _TRUMP:
            if action not in self._trump_actions:
                raise IllegalActionError(self._why_illegal(action))
            self.history.append(action)
            self._name_trump(action - TRUMP_BASE)
        else:
            raise IllegalActionError(self._why_illegal(action))

    def _bid(self, value: int) -> None:
        seat = self.current
        self.bids.append((seat, value))
        if value:
            self.high_bid = value
            self.bidder = seat
        if value == MOON_BID or seat == self.dealer:
            self._end_auction()
        else:
            self.current = (seat + 1) % self.n

    def _end_auction(self) -> None:
        if self.bidder < 0:  # everyone passed: redeal, the deal moves on (RULES.md)
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

    def _end_trick(self) -> None:
        trick = self.trick
        ranks = RANK[self.trump][self.led]
        winner, top = -1, -2
        for p_seat, p_tile in trick:
            if ranks[p_tile] > top:
                winner, top = p_seat, ranks[p_tile]
        self.tricks.append(Trick(trick[0][0], tuple(trick), winner))
        self.tricks_taken[winner] += 1
        self.trick = []
        self.current = winner
        if len(self.tricks) == 7:
            self._score_hand()

    # -- scoring (RULES.md, "Scoring — 3 players" and "— 4 players") ---------------------
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
        self.hand_records.append(HandRecord(  # positional: number, dealer, dealt, widow,
            self.hand_number, self.dealer, self.dealt, self.widow,  # bids, bidder, bid,
            tuple(self.bids), self.bidder, self.high_bid, self.discard,  # discard, trump,
            self.trump, tuple(self.tricks), tuple(self.tricks_taken),  # tricks, tricks_taken,
            made, deltas, tuple(self.scores)))  # made, deltas, scores
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
