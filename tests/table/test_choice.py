"""A person's answer as an action, and a refusal's one line, from the seat's observation;
each expected value worked out by hand from the deal of the observation."""

from __future__ import annotations

import pytest
from moon_sdk.rules import (
    PASS,
    GameState,
    Observation,
    Phase,
    Ruleset,
    bid,
    discard,
    name_trump,
    observe,
    play,
)
from moon_sdk.rules.tiles import DOUBLES, parse_tile

from arena.table.choice import Refused, choose, label, why_not


def dealt(hands: list[str], widow: str = "") -> GameState:
    tiles = [sum(1 << parse_tile(t) for t in h.split()) for h in hands]
    return GameState.from_deal(Ruleset.preset("moon3"), tiles,
                               sum(1 << parse_tile(t) for t in widow.split()), dealer=2)


def at(state: GameState) -> Observation:
    return observe(state, state.current_player)


HANDS = ["6-6 6-4 5-3 4-4 4-1 3-3 2-2", "6-5 6-1 5-5 5-2 5-1 4-3 4-2",
         "6-2 5-4 3-2 3-1 2-1 1-1 0-0"]


def test_the_auction_by_number_and_by_name():
    s = dealt(HANDS, "6-3")
    o = at(s)
    # min bid 4, nobody has bid: pass, 4..7 and the moon
    assert [label(a) for a in o.legal_actions] == [
        "pass", "bid 4", "bid 5", "bid 6", "bid 7", "bid 21 (shoot the moon)"]
    assert choose("1", o) == PASS
    assert choose("3", o) == bid(5)
    assert choose(" bid 5 ", o) == bid(5)
    assert choose("PASS", o) == PASS
    assert choose("moon", o) == bid(21)
    with pytest.raises(Refused, match="^there is no choice 7: pick 1 to 6$"):
        choose("7", o)
    with pytest.raises(Refused, match="^you must bid or pass now, not play 6-4$"):
        choose("6-4", o)
    with pytest.raises(Refused, match="^'hello' is no action: type a number"):
        choose("hello", o)
    # a digit that is no decimal one ("²" is a digit to str.isdigit, not to int) is
    # refused as a name, never an error that ends the person's seat
    with pytest.raises(Refused, match="^'²' is no action: type a number"):
        choose("²", o)
    assert choose("٣", o) == bid(5)  # ARABIC-INDIC DIGIT THREE is a decimal 3


def test_a_bid_below_the_high_bid_is_refused_with_what_would_do():
    s = dealt(HANDS, "6-3")
    s.apply(bid(5))
    o = at(s)
    assert why_not(bid(4), o) == ("bid 4 must beat the bid of 5 already made: bid 6 or "
                                  "more, or pass")


def test_trumps_and_plays_refused_from_what_the_seat_holds():
    s = dealt(HANDS, "6-3")
    for a in (bid(5), PASS, PASS):  # seat 0 bids 5, the others pass: seat 0 has it
        s.apply(a)
    while s.phase is not Phase.TRUMP:  # the widow's 6-3 in, the discard: 2-2
        s.apply(discard(parse_tile("2-2")))
    o = at(s)
    assert o.seat == 0
    # trumps by name: "trumps doubles" and the bare word alike
    assert choose("trumps doubles", o) == name_trump(DOUBLES)
    assert choose("doubles", o) == name_trump(DOUBLES)
    assert choose("trumps 6", o) == name_trump(6)
    s.apply(name_trump(6))
    o = at(s)
    assert why_not(play(parse_tile("0-0")), o) == (
        "you do not hold 0-0: your tiles are 6-6 6-4 6-3 5-3 4-4 4-1 3-3")
    s.apply(play(parse_tile("6-6")))
    o = at(s)  # seat 1 holds 6-5 and 6-1: sixes are trumps and were led
    assert o.seat == 1
    with pytest.raises(Refused, match="^5-5 does not follow the lead 6-6: play one of "
                                      "6-5 6-1$"):
        choose("5-5", o)
    assert choose("6-1", o) == play(parse_tile("6-1"))
    assert choose("play 6-5", o) == play(parse_tile("6-5"))
