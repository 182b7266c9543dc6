"""Reading what a person's seat showed against the game's record: the tiles on screen
at each of the person's decisions, and what the seat was allowed to know then, worked out
by replaying the record with the engine."""

from __future__ import annotations

import re
from dataclasses import dataclass

from moon_sdk.rules import GameState, Ruleset
from moon_sdk.rules.tiles import tile_name, tiles_of

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
TILE = re.compile(r"(?<![\d-])([0-6]-[0-6])(?![\d-])")


def plain(text: str) -> str:
    """Terminal output without its colour codes and carriage returns."""
    return ANSI.sub("", text)


@dataclass
class Known:
    """What the person's seat may know at one of its decisions."""

    hand_number: int
    hand: set[str]
    """The tiles it holds."""
    allowed: set[str]
    """Every tile it may have seen in this hand: dealt to it, the widow if it took it,
    the tiles played so far."""


def decisions(record: dict, seat: int) -> list[Known]:
    """Each decision of ``seat`` in the record, in order, with what it may know."""
    ruleset = Ruleset.from_dict(record["ruleset"])
    state = GameState(ruleset, record["seed"])
    out = []
    dealt: set[str] = set()
    hand_number = -1
    for action in record["actions"]:
        if state.hand_number != hand_number:
            hand_number = state.hand_number
            dealt = {tile_name(t) for t in tiles_of(state.hands[seat])}
        if state.current_player == seat:
            played = {tile_name(t) for tr in state.tricks for _, t in tr.plays}
            played |= {tile_name(t) for _, t in state.trick}
            widow = ({tile_name(t) for t in tiles_of(state.widow)}
                     if state.bidder == seat and state.widow_taken else set())
            out.append(Known(hand_number, {tile_name(t) for t in tiles_of(state.hands[seat])},
                             dealt | widow | played))
        state.apply(action)
    return out


def tiles_in(text: str) -> set[str]:
    """Every tile name (``6-4``) in ``text``."""
    return set(TILE.findall(text))
