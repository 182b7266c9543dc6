"""Each trump contract (docs/rules.md "Trumps" and "Play"): number trumps, trump 0 with one
trump (22 tiles) and with seven (28 tiles), doubles, no trumps; tiles in two suits; trumps
that leave their other suit. Values are worked out by hand from docs/rules.md."""

from __future__ import annotations

import pytest
from moon_sdk.rules import (
    DOUBLES,
    NO_TRUMP,
    TRUMP_MASK,
    IllegalActionError,
    Ruleset,
    legal_follow,
    parse_tile,
    trick_winner_index,
)

from .helpers import act, mask, names, start_play

R3 = Ruleset()
R3_21 = Ruleset(remove_double_blank=True)
R4 = Ruleset(players=4)


def lf(trump: int, lead: str, hand: str) -> int:
    return legal_follow(trump, parse_tile(lead), mask(hand))


def win(trump: int, trick: str) -> str:
    """The winning tile of a trick given in play order."""
    tiles = trick.split()
    return tiles[trick_winner_index(trump, [parse_tile(x) for x in tiles])]


class TestNumberTrump:
    def test_trumps_are_every_tile_with_the_number(self) -> None:
        assert TRUMP_MASK[5] & R3.tile_set == mask("5-5 6-5 5-4 5-3 5-2 5-1")
        assert TRUMP_MASK[5] == mask("5-5 6-5 5-4 5-3 5-2 5-1 5-0")

    def test_a_trump_leaves_its_other_suit(self) -> None:
        # Fives trump: 5-3 is a trump and not a three.
        assert lf(5, "3-1", "5-3 6-6") == mask("5-3 6-6")  # no three held: anything
        assert lf(5, "3-1", "5-3 3-2") == mask("3-2")  # 3-2 is the only three
        # Leading 5-3 leads trumps, not fives or threes.
        assert lf(5, "5-3", "5-1 3-2 6-6") == mask("5-1")
        assert lf(5, "5-3", "3-2 3-3") == mask("3-2 3-3")  # no trump: anything

    def test_trump_beats_the_top_of_the_suit_led(self) -> None:
        assert win(5, "3-1 3-3 5-3") == "5-3"
        assert win(5, "3-1 5-1 5-3") == "5-3"  # by the other end: 3 beats 1
        assert win(5, "5-1 6-6 4-4") == "5-1"  # a trump lead nobody follows
        assert win(5, "6-1 6-6 5-0 0-0") == "5-0"  # the lowest trump still beats 6-6

    def test_the_higher_end_leads_when_not_a_trump(self) -> None:
        # Twos trump, 5-3 led: fives led (not threes).
        assert lf(2, "5-3", "3-1 4-4") == mask("3-1 4-4")
        assert lf(2, "5-3", "3-1 5-1") == mask("5-1")
        assert win(2, "5-3 3-3 5-1") == "5-3"

    def test_in_a_game_the_ruff_wins_and_leads(self) -> None:
        # Fours trump. Seat 1 leads 6-5; seat 2 must play a six; seat 0 has no six and
        # trumps with 4-1: it wins and leads.
        s = start_play(R3, {1: "6-5 5-5 5-3 5-2 5-1 3-3 0-0",
                            2: "6-6 6-3 6-2 3-2 3-1 2-1 1-1",
                            0: "4-1 4-2 4-3 4-4 5-4 6-4 2-2"}, trump="4", widow="6-1")
        act(s, "play 6-5")
        assert names(s.legal_actions()) == ["play 6-2", "play 6-3", "play 6-6"]
        act(s, "play 6-6")
        # 6-4 has a six end but is a trump: seat 0 holds no six, every tile is legal.
        assert len(s.legal_actions()) == 7
        act(s, "play 4-1")
        assert s.tricks[0].winner == 0 and s.current_player == 0


class TestTrumpZero:
    def test_three_players_double_blank_is_the_only_trump(self) -> None:
        assert TRUMP_MASK[0] & R3.tile_set == mask("0-0")
        assert lf(0, "0-0", "6-6 1-1 2-1") == mask("6-6 1-1 2-1")  # trumps led, none held
        assert lf(0, "1-1", "0-0 2-1") == mask("2-1")  # 0-0 is not a one (nor anything)
        assert lf(0, "1-1", "0-0 6-6") == mask("0-0 6-6")
        assert win(0, "6-5 6-6 0-0") == "0-0"

    def test_three_players_in_a_game(self) -> None:
        s = start_play(R3, {1: "6-5 5-5 5-4 5-3 5-2 5-1 4-4",
                            2: "6-6 6-4 6-3 6-2 6-1 3-3 1-1",
                            0: "0-0 4-3 4-2 4-1 3-2 3-1 2-2"}, trump="0", widow="2-1")
        act(s, "play 6-5", "play 6-6")
        assert len(s.legal_actions()) == 7  # seat 0 holds no six
        act(s, "play 0-0")
        assert s.tricks[0].winner == 0

    def test_four_players_all_seven_blanks_are_trumps(self) -> None:
        assert TRUMP_MASK[0] == mask("0-0 1-0 2-0 3-0 4-0 5-0 6-0")
        assert lf(0, "6-0", "6-6 3-0") == mask("3-0")  # 6-0 leads trumps, not sixes
        assert lf(0, "6-1", "6-0 2-2") == mask("6-0 2-2")  # 6-0 is not a six
        assert win(0, "6-1 6-6 1-0 2-2") == "1-0"
        assert win(0, "6-0 1-0 0-0 5-0") == "0-0"
        assert win(0, "1-0 2-0 6-6 5-0") == "5-0"

    def test_four_players_in_a_game(self) -> None:
        s = start_play(R4, {1: "6-0 6-5 6-4 6-3 6-2 6-1 5-5",
                            2: "6-6 3-0 5-4 5-3 5-2 5-1 4-4",
                            3: "1-1 2-1 2-2 3-1 3-2 4-1 4-2",
                            0: "0-0 1-0 2-0 4-0 5-0 4-3 3-3"}, trump="0")
        act(s, "play 6-0")
        assert names(s.legal_actions()) == ["play 3-0"]
        act(s, "play 3-0")
        assert len(s.legal_actions()) == 7  # seat 3 has no trump
        act(s, "play 2-2")
        assert names(s.legal_actions()) == [
            "play 0-0", "play 1-0", "play 2-0", "play 4-0", "play 5-0"]
        with pytest.raises(IllegalActionError,
                           match="^must follow trumps: holds 5-0 4-0 2-0 1-0 0-0$"):
            act(s, "play 4-3")
        act(s, "play 0-0")
        assert s.tricks[0].winner == 0 and s.tricks_taken == [1, 0, 0, 0]

    def test_no_trump_zero_without_double_blank(self) -> None:
        assert 0 not in R3_21.allowed_trumps
        assert R3.allowed_trumps == (0, 1, 2, 3, 4, 5, 6, DOUBLES, NO_TRUMP)


class TestDoubles:
    def test_doubles_are_the_trumps_high_to_low(self) -> None:
        assert TRUMP_MASK[DOUBLES] & R3_21.tile_set == mask("6-6 5-5 4-4 3-3 2-2 1-1")
        assert win(DOUBLES, "6-5 6-6 5-5") == "6-6"
        assert win(DOUBLES, "1-1 0-0 2-1") == "1-1"
        assert win(DOUBLES, "3-1 3-2 1-1") == "1-1"  # the lowest trump beats the suit

    def test_a_double_belongs_to_no_number_suit(self) -> None:
        assert lf(DOUBLES, "3-1", "3-3 5-5 4-2") == mask("3-3 5-5 4-2")  # no three held
        assert lf(DOUBLES, "3-3", "3-1 5-5") == mask("5-5")  # 3-3 leads trumps

    def test_in_a_game_without_double_blank(self) -> None:
        # 21 tiles, no widow. Seat 1 leads 3-1; seat 2's only "three" is 3-3, a trump, so
        # it may play anything and trumps with 1-1; seat 0 must play a three; 1-1 wins.
        s = start_play(R3_21, {1: "3-1 6-5 6-4 6-3 6-2 6-1 5-4",
                               2: "3-3 1-1 5-5 5-2 5-1 4-2 4-1",
                               0: "2-1 2-2 3-2 4-3 4-4 5-3 6-6"}, trump="doubles")
        act(s, "play 3-1")
        assert len(s.legal_actions()) == 7
        act(s, "play 1-1")
        assert names(s.legal_actions()) == ["play 3-2", "play 4-3", "play 5-3"]
        act(s, "play 5-3")
        assert s.tricks[0].winner == 2


class TestNoTrumps:
    def test_doubles_are_the_top_of_their_own_suit(self) -> None:
        assert win(NO_TRUMP, "6-1 6-2 6-6") == "6-6"
        assert win(NO_TRUMP, "6-1 1-1 6-2") == "6-2"  # 1-1 is not a six
        assert lf(NO_TRUMP, "1-1", "6-1 2-2") == mask("6-1")  # 1-1 leads ones

    def test_a_tile_follows_both_its_suits(self) -> None:
        assert lf(NO_TRUMP, "6-1", "6-5 3-3") == mask("6-5")
        assert lf(NO_TRUMP, "5-1", "6-5 3-3") == mask("6-5")
        # and ranks in each by its other end: a high five, a low six.
        assert win(NO_TRUMP, "5-1 5-4 6-5") == "6-5"
        assert win(NO_TRUMP, "6-1 6-5 6-4") == "6-5"
        assert win(NO_TRUMP, "6-1 6-4 6-5") == "6-5"
        assert win(NO_TRUMP, "6-4 6-5 6-6") == "6-6"

    def test_a_number_trump_tile_follows_two_suits_no_more(self) -> None:
        # Sixes trump: 5-3 is still a five and a three.
        assert lf(6, "5-1", "5-3 4-4") == mask("5-3")
        assert lf(6, "3-1", "5-3 4-4") == mask("5-3")
        assert lf(6, "4-1", "5-3 4-4") == mask("4-4")

    def test_in_a_game_a_double_leads_its_number(self) -> None:
        s = start_play(R3, {1: "4-4 6-6 6-5 6-3 5-5 5-3 1-1",
                            2: "4-3 4-1 6-2 6-1 3-3 2-1 0-0"}, trump="none", widow="6-4")
        act(s, "play 4-4")
        assert names(s.legal_actions()) == ["play 4-1", "play 4-3"]
