"""What one seat may know: :func:`observe` is the only place hidden tiles are filtered.

It feeds the protocol (each turn carries a seat's observation), the logs and the viewers.
A seat sees its own tiles, the widow only if it is the bidder and has taken it, its own
discard, and the public history: bids, trumps, plays, trick winners, scores.
"""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Action
from .ruleset import Ruleset
from .state import GameState, Outcome, Phase, Trick
from .tiles import Tile, TileSet, Trump


@dataclass(frozen=True)
class HandSummary:
    """The public result of a finished hand."""

    number: int
    dealer: int
    bids: tuple[tuple[int, int], ...]
    bidder: int
    """-1 if everyone passed (a redeal)."""
    bid: int
    trump: Trump
    tricks_taken: tuple[int, ...]
    made: bool | None
    deltas: tuple[int, ...]
    scores: tuple[int, ...]


@dataclass(frozen=True)
class Observation:
    """One seat's view of the game (docs/rules.md, "What a seat sees")."""

    seat: int
    ruleset: Ruleset
    phase: Phase
    hand_number: int
    dealer: int
    current_player: int
    """Seat to act, -1 when the game is over."""
    hand: TileSet
    """Tiles this seat holds now."""
    widow: TileSet
    """The widow, if this seat is the bidder and has taken it; else 0."""
    discard: Tile
    """This seat's own discard, else -1."""
    bids: tuple[tuple[int, int], ...]
    """``(seat, value)`` of this hand's auction so far; 0 is a pass, 21 the moon."""
    bidder: int
    bid: int
    trump: Trump
    """Named trumps, -1 before they are named."""
    tricks: tuple[Trick, ...]
    """Completed tricks of this hand."""
    trick: tuple[tuple[int, Tile], ...]
    """Plays of the trick in progress."""
    tricks_taken: tuple[int, ...]
    scores: tuple[int, ...]
    """Each side's score: seats in 3-player Moon, partnerships (seat % 2) in 4-player."""
    hands: tuple[HandSummary, ...]
    """Earlier hands of this game, public results only."""
    legal_actions: tuple[Action, ...]
    """This seat's legal actions if it is to act, else empty."""
    outcome: Outcome | None


def summarize(state: GameState) -> tuple[HandSummary, ...]:
    """Public summaries of the finished hands of ``state``."""
    return tuple(
        HandSummary(h.number, h.dealer, h.bids, h.bidder, h.bid, h.trump, h.tricks_taken,
                    h.made, h.deltas, h.scores)
        for h in state.hand_records
    )


def observe(state: GameState, seat: int) -> Observation:
    """What ``seat`` may know of ``state``.

    Raises:
        ValueError: ``seat`` is not a seat of this game.
    """
    if not 0 <= seat < state.n:
        raise ValueError(f"seat must be 0..{state.n - 1}, got {seat}")
    is_bidder = seat == state.bidder
    to_act = state.current_player == seat
    return Observation(
        seat=seat,
        ruleset=state.ruleset,
        phase=state.phase,
        hand_number=state.hand_number,
        dealer=state.dealer,
        current_player=state.current_player,
        hand=state.hands[seat],
        widow=state.widow if is_bidder and state.widow_taken else 0,
        discard=state.discard if is_bidder else -1,
        bids=tuple(state.bids),
        bidder=state.bidder,
        bid=state.high_bid,
        trump=state.trump,
        tricks=tuple(state.tricks),
        trick=tuple(state.trick),
        tricks_taken=tuple(state.tricks_taken),
        scores=tuple(state.scores),
        hands=summarize(state),
        legal_actions=tuple(state.legal_actions()) if to_act else (),
        outcome=state.outcome,
    )


def unseen_tiles(obs: Observation) -> TileSet:
    """Tiles of the set this seat has not seen: not in its hand, not played, not its own
    discard. They are in other hands, or are the widow or another seat's discard."""
    seen = obs.hand
    for t in obs.tricks:
        for _, tile in t.plays:
            seen |= 1 << tile
    for _, tile in obs.trick:
        seen |= 1 << tile
    if obs.discard >= 0:
        seen |= 1 << obs.discard
    tile_set: TileSet = obs.ruleset.tile_set
    return tile_set & ~seen


__all__ = ["HandSummary", "Observation", "observe", "summarize", "unseen_tiles"]
