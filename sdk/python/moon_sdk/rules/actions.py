"""Actions as small ints, with a canonical text form and a parser.

One flat action space, in the manner of OpenSpiel, so a game is a seed plus a list of
ints that replays exactly:

======================  ========  =========================================
action                  ints      text
======================  ========  =========================================
play a tile             0..27     ``play 6-4``  (the int is the tile)
discard a tile          28..55    ``discard 3-3``
pass                    56        ``pass``
bid 3..7                57..61    ``bid 5``
bid 21 (shoot the moon) 62        ``bid 21``
name trumps             63..71    ``trump 5`` / ``trump doubles`` / ``trump none``
======================  ========  =========================================

Legal actions are always returned sorted, and the ranges above keep each phase's
actions contiguous.
"""

from __future__ import annotations

import enum

from .tiles import TILE_NAMES, Tile, TileParseError, Trump, parse_tile, parse_trump, trump_name

Action = int
"""An action, 0..71 (see the module docstring)."""

PLAY_BASE = 0
DISCARD_BASE = 28
PASS: Action = 56
BID_BASE = 57  # bid n is BID_BASE + n - 3 for n in 3..7
MOON: Action = 62
TRUMP_BASE = 63
NUM_ACTIONS = 72
MOON_BID = 21
"""The value of the moon bid: a contract to take all 7 tricks."""


class ActionKind(enum.IntEnum):
    """What an action does."""

    PLAY = 1
    DISCARD = 2
    BID = 3
    """A bid or a pass (a pass is a bid of 0)."""
    TRUMP = 4


class ActionParseError(ValueError):
    """Text that is not an action, e.g. ``"bid 8"`` or ``"play 9-9"``."""


def play(t: Tile) -> Action:
    """The action that plays tile ``t``."""
    return PLAY_BASE + t


def discard(t: Tile) -> Action:
    """The action that discards tile ``t`` (the bidder, after taking the widow)."""
    return DISCARD_BASE + t


def bid(value: int) -> Action:
    """The action for a bid: 0 (pass), 3..7, or 21 (shoot the moon).

    Raises:
        ValueError: any other value.
    """
    if value == 0:
        return PASS
    if value == MOON_BID:
        return MOON
    if 3 <= value <= 7:
        return BID_BASE + value - 3
    raise ValueError(f"a bid is 0 (pass), 3..7 or 21, got {value}")


def name_trump(trump: Trump) -> Action:
    """The action that names trump contract ``trump`` (0..6, DOUBLES or NO_TRUMP)."""
    if not 0 <= trump <= 8:
        raise ValueError(f"not a trump contract: {trump}")
    return TRUMP_BASE + trump


def action_kind(a: Action) -> ActionKind:
    """The kind of action ``a``.

    Raises:
        ValueError: ``a`` outside 0..71.
    """
    if a < 0:
        raise ValueError(f"not an action: {a}")
    if a < DISCARD_BASE:
        return ActionKind.PLAY
    if a < PASS:
        return ActionKind.DISCARD
    if a < TRUMP_BASE:
        return ActionKind.BID
    if a < NUM_ACTIONS:
        return ActionKind.TRUMP
    raise ValueError(f"not an action: {a}")


def action_tile(a: Action) -> Tile:
    """The tile of a play or discard action."""
    return a - DISCARD_BASE if a >= DISCARD_BASE else a


def bid_value(a: Action) -> int:
    """The value of a bid action: 0 for a pass, 3..7, or 21."""
    if a == PASS:
        return 0
    if a == MOON:
        return MOON_BID
    return a - BID_BASE + 3


def action_trump(a: Action) -> Trump:
    """The trump contract of a trump action."""
    return a - TRUMP_BASE


def action_name(a: Action) -> str:
    """Canonical text of an action: ``play 6-4``, ``discard 3-3``, ``pass``, ``bid 5``,
    ``bid 21``, ``trump 5``, ``trump doubles``, ``trump none``."""
    kind = action_kind(a)
    if kind is ActionKind.PLAY:
        return f"play {TILE_NAMES[a]}"
    if kind is ActionKind.DISCARD:
        return f"discard {TILE_NAMES[a - DISCARD_BASE]}"
    if kind is ActionKind.BID:
        v = bid_value(a)
        return "pass" if v == 0 else f"bid {v}"
    return f"trump {trump_name(a - TRUMP_BASE)}"


def parse_action(text: str) -> Action:
    """Parse the canonical text of an action (see :func:`action_name`).

    Raises:
        ActionParseError: the text is not an action.
    """
    words = text.strip().lower().split()
    try:
        if words == ["pass"]:
            return PASS
        if len(words) == 2:
            verb, arg = words
            if verb == "play":
                return play(parse_tile(arg))
            if verb == "discard":
                return discard(parse_tile(arg))
            if verb == "bid" and arg.isdigit():
                return bid(int(arg))
            if verb == "trump":
                return name_trump(parse_trump(arg))
    except (TileParseError, ValueError) as e:
        raise ActionParseError(f"not an action: {text!r}: {e}") from None
    raise ActionParseError(
        f"not an action: {text!r} (expected 'pass', 'bid N', 'trump X', 'discard T' or 'play T')"
    )
