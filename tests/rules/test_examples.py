"""The numbered worked examples of docs/rules.md ("Worked examples"), one test each, each
checked both on the tables (a bare function call) and inside a real game (a hand-built deal)."""

from __future__ import annotations

import pytest
from moon_sdk.rules import (
    DOUBLES,
    NO_TRUMP,
    IllegalActionError,
    Phase,
    Ruleset,
    Termination,
    legal_follow,
    observe,
    parse_tile,
    play,
    trick_winner_index,
)

from .helpers import (
    EXAMPLE_8_DEAL,
    EXAMPLE_8_TRICKS,
    act,
    mask,
    names,
    new_game,
    play_tricks,
    redeal,
    start_play,
)

R3 = Ruleset()
R4 = Ruleset(players=4)


def ts(text: str) -> list[int]:
    return [parse_tile(w) for w in text.split()]


def test_example_1_a_trump_is_not_a_six() -> None:
    # Trump 4, lead 6-5 (sixes led); hand {6-2, 5-5, 3-3, 6-4} -> only 6-2.
    assert legal_follow(4, parse_tile("6-5"), mask("6-2 5-5 3-3 6-4")) == mask("6-2")
    # In a game: dealer 0, seat 1 bids 4, names fours and leads 6-5; seat 2 holds the four
    # tiles of the example plus three that are not sixes.
    s = start_play(R3, {1: "6-5 6-6 6-3 6-1 5-4 5-3 5-2",
                        2: "6-2 5-5 3-3 6-4 3-1 2-1 1-1"}, trump="4", widow="0-0")
    act(s, "play 6-5")
    assert s.current_player == 2
    assert names(s.legal_actions()) == ["play 6-2"]
    with pytest.raises(IllegalActionError, match="^must follow sixes: holds 6-2$"):
        s.apply(play(parse_tile("6-4")))
    with pytest.raises(IllegalActionError, match="must follow sixes: holds 6-2"):
        s.apply(play(parse_tile("5-5")))
    assert len(s.history) == 6  # 3 bids, discard, trump, 1 play: the refusals left no trace


def test_example_2_doubles_belong_to_no_number_suit() -> None:
    # Trump doubles, lead 6-5; hand {6-6, 6-4} -> only 6-4.
    assert legal_follow(DOUBLES, parse_tile("6-5"), mask("6-6 6-4")) == mask("6-4")
    # Lead 6-6 (a trump: trumps led); hand {5-5, 4-0} -> only 5-5.
    assert legal_follow(DOUBLES, parse_tile("6-6"), mask("5-5 4-0")) == mask("5-5")

    s = start_play(R3, {1: "6-5 5-4 5-3 5-2 5-1 4-1 4-2",
                        2: "6-6 6-4 3-1 2-1 1-1 3-3 2-2"}, trump="doubles", widow="0-0")
    act(s, "play 6-5")
    assert names(s.legal_actions()) == ["play 6-4"]
    with pytest.raises(IllegalActionError, match="must follow sixes: holds 6-4"):
        act(s, "play 6-6")

    # 4-0 exists only in the 4-player set: seat 1 leads 6-6, seat 2 holds 5-5 and 4-0.
    s = start_play(R4, {1: "6-6 6-5 6-4 6-3 6-2 6-1 6-0",
                        2: "5-5 4-0 5-4 5-3 3-2 2-1 1-0"}, trump="doubles")
    act(s, "play 6-6")
    assert names(s.legal_actions()) == ["play 5-5"]
    with pytest.raises(IllegalActionError, match="^must follow trumps: holds 5-5$"):
        act(s, "play 4-0")


def test_example_3_no_trumps_every_five_follows() -> None:
    # No trumps, lead 5-4 (fives led); hand {6-5, 5-5, 5-1} -> all three.
    hand = mask("6-5 5-5 5-1")
    assert legal_follow(NO_TRUMP, parse_tile("5-4"), hand) == hand
    s = start_play(R3, {1: "5-4 6-6 6-4 6-3 6-2 6-1 4-4",
                        2: "6-5 5-5 5-1 4-3 3-2 2-1 1-1"}, trump="none", widow="0-0")
    act(s, "play 5-4")
    assert sorted(names(s.legal_actions())) == ["play 5-1", "play 5-5", "play 6-5"]


def test_example_4_highest_trump_wins() -> None:
    # Trump 4, trick 6-5, 6-4, 5-4 -> 6-4 (the trump with the higher other end).
    assert trick_winner_index(4, ts("6-5 6-4 5-4")) == 1
    # Seats 2 and 0 hold no sixes that are not trumps, so both may play a trump.
    s = start_play(R3, {1: "6-5 6-6 6-3 6-2 6-1 4-2 4-1",
                        2: "6-4 3-3 3-1 2-1 1-1 2-2 3-2",
                        0: "5-4 5-5 5-3 5-2 5-1 4-4 4-3"}, trump="4", widow="0-0")
    play_tricks(s, "6-5 6-4 5-4")
    trick = s.tricks[0]
    assert trick.leader == 1 and trick.winner == 2
    assert trick.plays == ((1, parse_tile("6-5")), (2, parse_tile("6-4")),
                           (0, parse_tile("5-4")))
    assert s.tricks_taken == [0, 0, 1]
    assert s.current_player == 2  # the winner leads the next trick
    assert len(s.legal_actions()) == 6  # and may lead any of its 6 tiles


def test_example_5_a_tile_that_neither_follows_nor_trumps_never_wins() -> None:
    # No trumps, trick 5-4, 6-6, 5-5 -> 5-5 (6-6 is not a five).
    assert trick_winner_index(NO_TRUMP, ts("5-4 6-6 5-5")) == 2
    s = start_play(R3, {1: "5-4 6-5 6-2 6-1 3-2 3-1 2-2",
                        2: "6-6 6-4 6-3 4-4 3-3 2-1 1-1",
                        0: "5-5 5-3 5-2 5-1 4-3 4-2 4-1"}, trump="none", widow="0-0")
    play_tricks(s, "5-4 6-6 5-5")
    assert s.tricks[0].winner == 0
    assert s.tricks_taken == [1, 0, 0]
    assert s.current_player == 0


def test_example_6_auction_widow_trump_and_lead() -> None:
    # 3 players, dealer 0: seat 1 bids 4, seat 2 bids 5, seat 0 (the dealer) passes.
    s = new_game(R3, dealer=0)
    widow, dealt2 = s.widow, s.hands[2]
    assert s.current_player == 1  # bidding starts at the dealer's left
    act(s, "bid 4")
    assert s.current_player == 2
    act(s, "bid 5")
    assert s.current_player == 0
    act(s, "pass")
    # Seat 2 wins the auction at 5 and takes the widow: 8 tiles.
    assert (s.bidder, s.high_bid) == (2, 5)
    assert s.phase == Phase.DISCARD and s.current_player == 2
    assert s.hands[2] == dealt2 | widow and s.hands[2].bit_count() == 8
    assert observe(s, 2).widow == widow
    # It discards (here a tile of its own), names trumps, and leads.
    own = (dealt2 & -dealt2).bit_length() - 1
    s.apply(28 + own)
    assert s.phase == Phase.TRUMP and s.current_player == 2
    assert s.hands[2] == (dealt2 | widow) & ~(1 << own)
    act(s, "trump 3")
    assert s.phase == Phase.PLAY and s.current_player == 2 and s.trick == []
    assert len(s.legal_actions()) == 7  # any tile may be led


# Example 7's hand, worked out by hand. No trumps; a double led is the top of its suit and
# wins. C (seat 2, the dealer) bids 4 after A and B pass, takes the widow 3-2, discards it.
#   1. C 6-6  A 6-4  B 6-3   sixes: C        5. B 0-0  C 5-1  A 6-5   blanks: B
#   2. C 5-5  A 5-3  B 5-2   fives: C        6. B 3-1  C 6-1  A 3-3   threes: A (3-3)
#   3. C 2-1  A 4-3  B 2-2   twos: B (2-2)   7. A 1-1  B 4-2  C 6-2   ones: A
#   4. B 4-4  C 4-1  A 5-4   fours: B
# (A holds no two in trick 3 so may play 4-3; every other follower play is forced or a
# free choice of a void hand.) Tricks: A 2, B 3, C 2.
EXAMPLE_7_DEAL = {0: "3-3 1-1 6-5 6-4 5-4 5-3 4-3",
                  1: "2-2 4-4 0-0 3-1 6-3 5-2 4-2",
                  2: "6-6 5-5 2-1 6-2 6-1 5-1 4-1"}
EXAMPLE_7_TRICKS = ("6-6 6-4 6-3", "5-5 5-3 5-2", "2-1 4-3 2-2", "4-4 4-1 5-4",
                    "0-0 5-1 6-5", "3-1 6-1 3-3", "1-1 4-2 6-2")


def test_example_7_a_shared_lead_at_the_target_plays_on() -> None:
    s = start_play(R3, EXAMPLE_7_DEAL, trump="none", widow="3-2", dealer=2, bidder=2,
                   scores=[19, 18, 15])
    assert s.bids == [(0, 0), (1, 0), (2, 4)]
    play_tricks(s, *EXAMPLE_7_TRICKS)
    rec = s.hand_records[0]
    assert rec.tricks_taken == (2, 3, 2)
    assert rec.made is False
    assert rec.deltas == (2, 3, -4)
    assert rec.scores == (21, 21, 11)  # A 19+2, B 18+3, C 15-4
    # The target is reached but shared: not over, the next hand is dealt by seat 0.
    assert not s.is_terminal() and s.outcome is None
    assert s.phase == Phase.BIDDING and s.hand_number == 1 and s.dealer == 0
    # Hand 2: everyone passes. Scores unchanged, still shared: another hand, dealt by 1.
    act(s, "pass", "pass", "pass")
    assert s.hand_records[1].bidder == -1 and s.hand_records[1].deltas == (0, 0, 0)
    assert not s.is_terminal() and s.dealer == 1
    # Hand 3: B (the dealer, bidding last) bids 4 holding all seven doubles and takes
    # every trick: 21 + 4 = 25, strictly ahead with at least 21: B wins.
    s = redeal(s, {1: "6-6 5-5 4-4 3-3 2-2 1-1 0-0"}, widow="6-5")
    act(s, "pass", "pass", "bid 4", "discard 6-5", "trump none")
    for lead in "6-6 5-5 4-4 3-3 2-2 1-1 0-0".split():
        act(s, f"play {lead}")
        s.apply(s.legal_actions()[0])
        s.apply(s.legal_actions()[0])
    assert s.hand_records[-1].tricks_taken == (0, 7, 0)
    assert s.is_terminal() and s.outcome is not None
    assert s.outcome.termination == Termination.TARGET
    assert s.outcome.winner == 1
    assert s.outcome.scores == (21, 25, 11)
    assert s.outcome.places == (2, 1, 3)


# EXAMPLE_8_DEAL (helpers.py, worked out there): seats 1+3 take 6 tricks, seats 0+2 take 1.
@pytest.mark.parametrize("team_made_scores,expected", [("tricks", (1, 6)), ("bid", (1, 5))])
def test_example_8_partnership_made(team_made_scores: str, expected: tuple[int, int]) -> None:
    r = Ruleset(players=4, team_made_scores=team_made_scores)
    s = start_play(r, EXAMPLE_8_DEAL, trump="6", bid=5)
    play_tricks(s, *EXAMPLE_8_TRICKS)
    rec = s.hand_records[0]
    assert [t.winner for t in rec.tricks] == [2, 1, 1, 1, 1, 1, 1]
    assert rec.tricks_taken == (0, 6, 1, 0)
    assert rec.made is True
    assert rec.deltas == expected and tuple(s.scores) == expected


def test_example_9_a_tile_belongs_to_both_its_suits() -> None:
    # Sixes trump; the hand's only three and only five is 5-3: it must follow a three led
    # (3-2) and a five led (5-1) alike.
    hand = mask("5-3 6-6 6-4 4-4 4-2 2-2 1-1")
    assert legal_follow(6, parse_tile("3-2"), hand) == mask("5-3")
    assert legal_follow(6, parse_tile("5-1"), hand) == mask("5-3")
    s = start_play(R3, {1: "3-2 6-5 6-3 6-2 6-1 5-5 5-4",
                        2: "5-3 6-6 6-4 4-4 4-2 2-2 1-1"}, trump="6", widow="0-0")
    act(s, "play 3-2")
    assert names(s.legal_actions()) == ["play 5-3"]
    with pytest.raises(IllegalActionError, match="must follow threes: holds 5-3"):
        act(s, "play 6-6")  # a trump is no way out while a three is held


def test_example_10_doubles_trump_and_the_double_four() -> None:
    # Doubles trump, 4-2 led: 6-4 is the top of the fours and wins unless a trump is played
    # (even the lowest double beats it).
    assert trick_winner_index(DOUBLES, ts("4-2 6-4 4-1")) == 1
    assert trick_winner_index(DOUBLES, ts("4-2 6-4 1-1")) == 2
    # 4-4 is a trump, not a four: with another four it may not be played...
    assert legal_follow(DOUBLES, parse_tile("4-2"), mask("4-4 4-3 1-1")) == mask("4-3")
    # ...and with no other four the holder plays anything: 4-4, another trump, or a discard.
    hand = mask("4-4 6-6 5-1")
    assert legal_follow(DOUBLES, parse_tile("4-2"), hand) == hand
    s = start_play(R3, {1: "4-2 6-5 6-3 6-2 6-1 5-4 5-3",
                        2: "4-4 6-6 5-1 3-2 3-1 2-1 5-2"}, trump="doubles", widow="0-0")
    act(s, "play 4-2")
    assert sorted(names(s.legal_actions())) == sorted(
        f"play {t}" for t in "4-4 6-6 5-1 3-2 3-1 2-1 5-2".split())
    act(s, "play 4-4")
    act(s, "play 6-4")  # seat 0 follows with the top four; the double four still wins
    assert s.tricks[0].winner == 2
