"""What each seat may see (``observe``): its own tiles, the widow only as the bidder who took
it, its own discard, and the public record. (test_properties.py checks on thousands of
random positions that an observation is unchanged when all hidden tiles are scrambled.)"""

from __future__ import annotations

import dataclasses

import pytest
from moon_sdk.rules import (
    HandSummary,
    Observation,
    Phase,
    Ruleset,
    observe,
    parse_tile,
    unseen_tiles,
)

from .helpers import (
    SIX_TRICKS_3P,
    SIX_TRICKS_3P_PLAY,
    SIX_TRICKS_3P_WIDOW,
    act,
    mask,
    new_game,
    play_tricks,
    six_tricks_3p,
)

R3 = Ruleset()


def test_each_seat_sees_its_own_hand_only() -> None:
    s = new_game(R3, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
    for seat in range(3):
        o = observe(s, seat)
        assert o.hand == mask(SIX_TRICKS_3P[seat])
        assert o.widow == 0 and o.discard == -1
        assert o.seat == seat and o.dealer == 0 and o.current_player == 1
        assert o.phase == Phase.BIDDING and o.trump == -1 and o.bidder == -1


def test_widow_and_discard_only_to_the_bidder() -> None:
    s = new_game(R3, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
    act(s, "bid 4", "pass", "pass")
    assert observe(s, 1).widow == mask("6-1")
    assert observe(s, 1).hand == mask(SIX_TRICKS_3P[1] + " 6-1")
    for other in (0, 2):
        assert observe(s, other).widow == 0
    act(s, "discard 0-0", "trump 6")
    assert observe(s, 1).discard == parse_tile("0-0")
    for other in (0, 2):
        o = observe(s, other)
        assert o.discard == -1 and o.widow == 0
        assert o.bidder == 1 and o.bid == 4 and o.trump == 6  # public


def test_plays_are_public() -> None:
    s = new_game(R3, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
    act(s, "bid 4", "pass", "pass", "discard 0-0", "trump 6")
    play_tricks(s, SIX_TRICKS_3P_PLAY[0])
    act(s, "play 5-5")
    for seat in range(3):
        o = observe(s, seat)
        assert [(t.leader, t.winner) for t in o.tricks] == [(1, 2)]
        assert o.trick == ((2, parse_tile("5-5")),)
        assert o.tricks_taken == (0, 0, 1)


def test_unseen_tiles() -> None:
    s = new_game(R3, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
    act(s, "bid 4", "pass", "pass", "discard 0-0", "trump 6")
    play_tricks(s, SIX_TRICKS_3P_PLAY[0])
    played = mask("2-1 2-2 4-2")
    # Seat 0 has not seen seat 1's and 2's tiles, the widow nor the discard.
    assert unseen_tiles(observe(s, 0)) == R3.tile_set & ~played & ~s.hands[0]
    assert unseen_tiles(observe(s, 0)) >> parse_tile("0-0") & 1
    # The bidder has seen the widow (now in its hand) and its own discard.
    assert unseen_tiles(observe(s, 1)) == s.hands[0] | s.hands[2]


def test_earlier_hands_are_public_results_only() -> None:
    s = six_tricks_3p(R3, 4)
    summaries = observe(s, 0).hands
    assert len(summaries) == 1
    h = summaries[0]
    assert (h.number, h.dealer, h.bidder, h.bid, h.trump) == (0, 0, 1, 4, 6)
    assert h.tricks_taken == (0, 6, 1) and h.made is True and h.deltas == (0, 4, 1)
    # No deal, widow, discard or tile of any kind in a summary or an observation's fields
    # beyond the seat's own and the public plays.
    fields = {f.name for f in dataclasses.fields(HandSummary)}
    assert not fields & {"dealt", "widow", "discard", "hands", "tricks"}
    assert {f.name for f in dataclasses.fields(Observation)} == {
        "seat", "ruleset", "phase", "hand_number", "dealer", "current_player", "hand",
        "widow", "discard", "bids", "bidder", "bid", "trump", "tricks", "trick",
        "tricks_taken", "scores", "hands", "legal_actions", "outcome"}


def test_a_passed_out_widow_is_never_shown() -> None:
    s = new_game(R3, dealer=0)
    act(s, "pass", "pass", "pass")
    for seat in range(3):
        o = observe(s, seat)
        assert o.widow == 0 and o.hands[0].bidder == -1


def test_legal_actions_only_for_the_seat_to_act() -> None:
    s = new_game(R3, dealer=0)
    assert observe(s, 1).legal_actions == tuple(s.legal_actions())
    assert observe(s, 0).legal_actions == () and observe(s, 2).legal_actions == ()


def test_game_over() -> None:
    s = six_tricks_3p(R3, 4, scores=[0, 19, 20])
    o = observe(s, 2)
    assert o.phase == Phase.GAME_OVER and o.current_player == -1 and o.legal_actions == ()
    assert o.outcome == s.outcome and o.scores == (0, 23, 21)


@pytest.mark.parametrize("seat", [-1, 3, 4])
def test_bad_seat(seat: int) -> None:
    with pytest.raises(ValueError, match=r"seat must be 0..2"):
        observe(new_game(R3, dealer=0), seat)
