"""What a person types or clicks, as an action of the seat's turn, and why an action is
refused, both worked out from the seat's observation alone (never the hidden state)."""

from __future__ import annotations

from moon_sdk.rules import (
    Action,
    ActionKind,
    Observation,
    Phase,
    action_kind,
    action_name,
    action_tile,
    bid_value,
    parse_action,
)
from moon_sdk.rules.actions import ActionParseError, action_trump
from moon_sdk.rules.tiles import TileParseError, format_tiles, parse_tile, tile_name, trump_name

PHASE_VERB = {Phase.BIDDING: "bid or pass", Phase.DISCARD: "discard a tile",
              Phase.TRUMP: "name trumps", Phase.PLAY: "play a tile"}
"""What a seat does in each phase, for the prompt and refusals."""


class Refused(ValueError):
    """An answer that is not one of the turn's legal actions; ``str()`` is one line that
    says why and what to do."""


def label(a: Action) -> str:
    """How a person names an action: ``6-4`` (a play or discard of the phase), ``bid 5``,
    ``pass``, ``moon`` (a bid of 21), ``trumps doubles``."""
    kind = action_kind(a)
    if kind in (ActionKind.PLAY, ActionKind.DISCARD):
        return tile_name(action_tile(a))
    if kind is ActionKind.BID:
        v = bid_value(a)
        return "pass" if v == 0 else "bid 21 (shoot the moon)" if v == 21 else f"bid {v}"
    return f"trumps {trump_name(action_trump(a))}"


def _as_action(text: str, obs: Observation) -> Action:
    """The action ``text`` names, in the phase of ``obs`` (legal or not).

    Raises:
        Refused: the text names no action.
    """
    words = text.strip().lower().replace(",", " ").split()
    if not words:
        raise Refused("type a number from the list, or a name such as "
                      + _example(obs))
    if words[0] in ("trumps", "trump") and len(words) == 2:
        words = ["trump", words[1]]
    if words in (["moon"], ["shoot"], ["shoot", "the", "moon"]):
        words = ["bid", "21"]
    if len(words) == 1 and obs.phase in (Phase.PLAY, Phase.DISCARD):
        verb = "play" if obs.phase is Phase.PLAY else "discard"
        words = [verb, words[0]]
    if len(words) == 1 and obs.phase is Phase.TRUMP and not _is_tile(words[0]):
        words = ["trump", words[0]]
    if len(words) == 1 and _is_tile(words[0]):
        words = ["play", words[0]]  # a tile out of the play: refused as a play
    try:
        return parse_action(" ".join(words))
    except (ActionParseError, TileParseError):
        raise Refused(f"{text.strip()!r} is no action: type a number from the list, or a "
                      f"name such as {_example(obs)}") from None


def _example(obs: Observation) -> str:
    legal = obs.legal_actions
    names = [label(a).split(" (")[0] for a in legal[:2]]
    return " or ".join(repr(n) for n in names) if names else "'pass'"


def choose(text: str, obs: Observation) -> Action:
    """The legal action a person's ``text`` picks on this turn: a number of the listed
    legal actions (from 1, in ``obs.legal_actions``' order) or a name (``6-4``, ``bid 5``,
    ``pass``, ``trumps doubles``, ``play 6-4``...).

    Raises:
        Refused: no such number, no action by that name, or an action that is not legal
            now (:func:`why_not` says why).
    """
    legal = obs.legal_actions
    t = text.strip()
    if t.isdecimal():  # isdigit() holds for "²" too, which int() refuses
        k = int(t)
        if 1 <= k <= len(legal):
            return legal[k - 1]
        raise Refused(f"there is no choice {k}: pick 1 to {len(legal)}")
    a = _as_action(t, obs)
    if a in legal:
        return a
    raise Refused(why_not(a, obs))


def why_not(a: Action, obs: Observation) -> str:
    """One line: why action ``a`` is not legal for the seat of ``obs`` now, from what the
    seat knows (its hand, the auction, the trick), and what is legal instead."""
    legal = obs.legal_actions
    if not legal:
        return "it is not your turn"
    kind = action_kind(a)
    want = action_kind(legal[0])
    if kind is not want:
        return f"you must {PHASE_VERB[obs.phase]} now, not {action_name(a)}"
    if kind is ActionKind.BID:
        v = bid_value(a)
        bids = [b for b in legal if bid_value(b)]
        lowest = min((bid_value(b) for b in bids), default=0)
        if v == 0:
            return "the dealer may not pass when everyone else passed: bid " \
                   f"{lowest} or more"
        if v < obs.ruleset.min_bid:
            return f"bid {v} is below the minimum bid, {obs.ruleset.min_bid}"
        if obs.bid:
            return f"bid {v} must beat the bid of {obs.bid} already made: bid {lowest} or more" \
                   + (", or pass" if a not in legal and 0 in [bid_value(b) for b in legal]
                      else "")
        return f"bid {v} is not allowed now: bid {lowest} or more"
    if kind is ActionKind.TRUMP:
        named = ", ".join(label(b).removeprefix("trumps ") for b in legal)
        return f"trumps {trump_name(action_trump(a))} may not be named here: name {named}"
    t = action_tile(a)
    held = obs.hand | (obs.widow if kind is ActionKind.DISCARD else 0)
    if not held >> t & 1:
        return f"you do not hold {tile_name(t)}: your tiles are {format_tiles(held)}"
    if kind is ActionKind.PLAY and obs.trick:
        led = tile_name(obs.trick[0][1])
        mask = sum(1 << action_tile(b) for b in legal)
        return f"{tile_name(t)} does not follow the lead {led}: play one of " \
               f"{format_tiles(mask)}"
    return f"{tile_name(t)} may not be played now"


def _is_tile(word: str) -> bool:
    try:
        parse_tile(word)
    except TileParseError:
        return False
    return True
