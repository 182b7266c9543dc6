"""Scoring and the end of the game (docs/rules.md "Scoring", "End of the game"), on
hand-worked deals whose trick counts are worked out in ``helpers.py``.

SIX_TRICKS_3P: seat 1 bids and takes 6 tricks, seat 2 takes 1, seat 0 none.
all_doubles(taker): ``taker`` takes all 7 tricks. EXAMPLE_8: seats 1+3 take 6, 0+2 take 1.
"""

from __future__ import annotations

import pytest
from moon_sdk.rules import GameState, IllegalActionError, Phase, Ruleset, Termination

from .helpers import (
    EXAMPLE_8_DEAL,
    EXAMPLE_8_TRICKS,
    act,
    all_doubles,
    play_out,
    play_tricks,
    redeal,
    six_tricks_3p,
    start_play,
)

R3 = Ruleset()
R4 = Ruleset(players=4)


def example_8(r: Ruleset, bid: int, scores: list[int] | None = None) -> GameState:
    s = start_play(r, EXAMPLE_8_DEAL, trump="6", bid=bid, scores=scores)
    play_tricks(s, *EXAMPLE_8_TRICKS)
    return s


class TestThreePlayerPoints:
    @pytest.mark.parametrize("bid,made,bidder_delta", [
        (4, True, 4),    # made with 6: the bid, no overtricks
        (5, True, 5),
        (6, True, 6),    # exactly enough
        (7, False, -7),  # one short: set, loses the bid
        (21, False, -21),  # the moon needs all 7: 6 is a set 21
    ])
    def test_bidder_scores_the_bid_or_loses_it(self, bid: int, made: bool,
                                               bidder_delta: int) -> None:
        s = six_tricks_3p(R3, bid)
        rec = s.hand_records[0]
        assert rec.tricks_taken == (0, 6, 1)
        assert rec.made is made
        # Each other player scores a point a trick: seat 0 none, seat 2 one.
        assert rec.deltas == (0, bidder_delta, 1)
        assert s.scores == [0, bidder_delta, 1]

    def test_a_seven_scores_seven(self) -> None:
        s = all_doubles(R3, taker=1, bid=7)
        rec = s.hand_records[0]
        assert rec.tricks_taken == (0, 7, 0) and rec.made and rec.deltas == (0, 7, 0)

    def test_bidder_takes_nothing(self) -> None:
        # Seat 0 holds every double; seat 1 bid 5: set, -5; seat 0 scores its 7 tricks.
        s = all_doubles(R3, taker=0, bid=5)
        rec = s.hand_records[0]
        assert rec.tricks_taken == (7, 0, 0) and rec.made is False
        assert rec.deltas == (7, -5, 0)

    def test_scores_accumulate_over_hands(self) -> None:
        s = six_tricks_3p(R3, 4, scores=[3, -2, 10])
        assert s.scores == [3, 2, 11]
        assert s.hand_records[0].scores == (3, 2, 11)


class TestThreePlayerMoon:
    def test_made_moon_wins_at_once_even_from_behind(self) -> None:
        s = all_doubles(R3, taker=1, bid=21, scores=[20, -30, 20])
        assert s.hand_records[0].bids == ((1, 21),)  # nobody else bid
        rec = s.hand_records[0]
        assert rec.made is True and rec.deltas == (0, 21, 0)
        assert s.is_terminal() and s.outcome is not None
        assert s.outcome.termination == Termination.MOON
        assert s.outcome.winner == 1
        assert s.outcome.scores == (20, -9, 20)  # the +21 is still written down
        assert s.outcome.places == (2, 1, 2)  # the winner alone first; equal scores share
        assert s.current_player == -1 and s.legal_actions() == []

    def test_made_moon_without_moon_wins_game_scores_21(self) -> None:
        s = all_doubles(Ruleset(moon_wins_game=False), taker=1, bid=21, scores=[20, -30, 20])
        assert s.hand_records[0].deltas == (0, 21, 0)
        assert s.scores == [20, -9, 20]
        assert not s.is_terminal() and s.phase == Phase.BIDDING  # nobody at 21

    def test_made_moon_without_moon_wins_game_can_reach_the_target(self) -> None:
        s = all_doubles(Ruleset(moon_wins_game=False), taker=1, bid=21)
        assert s.outcome is not None
        assert s.outcome.termination == Termination.TARGET and s.outcome.winner == 1
        assert s.outcome.scores == (0, 21, 0)

    @pytest.mark.parametrize("moon_wins_game", [True, False])
    def test_set_moon_loses_21(self, moon_wins_game: bool) -> None:
        s = six_tricks_3p(Ruleset(moon_wins_game=moon_wins_game), 21)
        assert s.hand_records[0].bids == ((1, 21),)
        assert s.hand_records[0].deltas == (0, -21, 1)
        assert not s.is_terminal()


class TestMarks:
    MARKS = Ruleset(scoring="marks")

    def test_made_bid_gives_the_bidder_a_mark(self) -> None:
        s = six_tricks_3p(self.MARKS, 4)
        assert s.hand_records[0].deltas == (0, 1, 0)

    def test_set_gives_every_other_player_a_mark(self) -> None:
        s = six_tricks_3p(self.MARKS, 7)
        assert s.hand_records[0].deltas == (1, 0, 1)

    def test_set_moon_is_one_mark_each_to_the_others(self) -> None:
        s = six_tricks_3p(self.MARKS, 21)
        assert s.hand_records[0].deltas == (1, 0, 1)

    def test_made_moon_wins_at_once(self) -> None:
        s = all_doubles(self.MARKS, taker=1, bid=21, scores=[6, 0, 6])
        assert s.outcome is not None
        assert s.outcome.termination == Termination.MOON and s.outcome.winner == 1
        assert s.outcome.scores == (6, 1, 6)

    def test_made_moon_is_one_mark_when_it_does_not_win(self) -> None:
        r = Ruleset(scoring="marks", moon_wins_game=False)
        s = all_doubles(r, taker=1, bid=21)
        assert s.hand_records[0].deltas == (0, 1, 0) and not s.is_terminal()

    def test_first_to_target_marks_wins(self) -> None:
        s = six_tricks_3p(Ruleset(scoring="marks", target_marks=3), 4, scores=[2, 2, 2])
        assert s.outcome is not None and s.outcome.winner == 1
        assert s.outcome.termination == Termination.TARGET
        assert s.outcome.scores == (2, 3, 2) and s.outcome.places == (2, 1, 2)

    def test_points_do_not_end_a_marks_game(self) -> None:
        # 21 is the points target; in marks the target is target_marks (7).
        s = six_tricks_3p(self.MARKS, 4, scores=[0, 5, 0])
        assert s.scores == [0, 6, 0] and not s.is_terminal()

    def test_tie_at_the_target_plays_on(self) -> None:
        # Seats 0 and 2 at 6 marks; seat 1 bids 7 and is set: 7 and 7, shared: play on.
        s = six_tricks_3p(self.MARKS, 7, scores=[6, 3, 6])
        assert s.scores == [7, 3, 7] and not s.is_terminal() and s.dealer == 1
        # Next hand, dealer 1: seat 2 bids (first), holds every double, makes: 8 > 7.
        s = redeal(s, {2: "6-6 5-5 4-4 3-3 2-2 1-1 0-0"}, widow="6-5")
        act(s, "bid 4", "pass", "pass", "discard 6-5", "trump none")
        play_out(s)
        assert s.outcome is not None and s.outcome.winner == 2
        assert s.outcome.scores == (7, 3, 8) and s.outcome.places == (2, 3, 1)


class TestFourPlayers:
    @pytest.mark.parametrize("tms", ["tricks", "bid"])
    @pytest.mark.parametrize("bid,made,team_delta", [
        (4, True, {"tricks": 6, "bid": 4}),
        (5, True, {"tricks": 6, "bid": 5}),
        (6, True, {"tricks": 6, "bid": 6}),
        (7, False, {"tricks": -7, "bid": -7}),
        (21, False, {"tricks": -21, "bid": -21}),
    ])
    def test_team_scores(self, tms: str, bid: int, made: bool,
                         team_delta: dict[str, int]) -> None:
        s = example_8(Ruleset(players=4, team_made_scores=tms), bid)
        rec = s.hand_records[0]
        assert rec.tricks_taken == (0, 6, 1, 0)
        assert rec.made is made
        assert rec.deltas == (1, team_delta[tms])  # seats 0+2 took 1 trick

    @pytest.mark.parametrize("tms,delta", [("tricks", 7), ("bid", 4)])
    def test_partners_tricks_count_for_the_bidder(self, tms: str, delta: int) -> None:
        # Seat 1 bids 4, its partner seat 3 holds every double and takes all 7 tricks.
        s = all_doubles(Ruleset(players=4, team_made_scores=tms), taker=3, bid=4)
        rec = s.hand_records[0]
        assert rec.tricks_taken == (0, 0, 0, 7)
        assert rec.made is True and rec.deltas == (0, delta)

    def test_made_moon_wins_at_once(self) -> None:
        s = all_doubles(R4, taker=3, bid=21, scores=[20, -40])
        assert s.outcome is not None
        assert s.outcome.termination == Termination.MOON and s.outcome.winner == 1
        assert s.outcome.scores == (20, -19) and s.outcome.places == (2, 1)

    def test_made_moon_without_moon_wins_game_scores_21(self) -> None:
        s = all_doubles(Ruleset(players=4, moon_wins_game=False), taker=1, bid=21,
                        scores=[10, -5])
        assert s.hand_records[0].deltas == (0, 21)  # 21, not the 7 tricks
        assert s.scores == [10, 16] and not s.is_terminal()

    def test_marks(self) -> None:
        r = Ruleset(players=4, scoring="marks")
        assert example_8(r, 5).hand_records[0].deltas == (0, 1)
        assert example_8(r, 7).hand_records[0].deltas == (1, 0)

    def test_tie_at_the_target_plays_on(self) -> None:
        s = example_8(R4, 5, scores=[20, 15])
        assert s.scores == [21, 21] and not s.is_terminal()

    def test_first_team_to_21(self) -> None:
        s = example_8(R4, 5, scores=[10, 15])
        assert s.outcome is not None
        assert s.outcome.winner == 1 and s.outcome.scores == (11, 21)


class TestGameEnd:
    def test_the_single_highest_score_wins_when_two_reach_the_target(self) -> None:
        # Seat 1 makes 4 (19 -> 23), seat 2 takes a trick (20 -> 21): both at the target,
        # seat 1 strictly ahead.
        s = six_tricks_3p(R3, 4, scores=[0, 19, 20])
        assert s.outcome is not None
        assert s.outcome.winner == 1 and s.outcome.scores == (0, 23, 21)
        assert s.outcome.places == (3, 1, 2)

    def test_a_set_bidder_can_hand_the_game_to_another(self) -> None:
        s = six_tricks_3p(R3, 7, scores=[5, 25, 20])
        assert s.outcome is not None  # seat 1: 25 - 7 = 18; seat 2: 21
        assert s.outcome.winner == 2 and s.outcome.scores == (5, 18, 21)

    def test_below_the_target_nobody_wins(self) -> None:
        s = six_tricks_3p(R3, 4, scores=[0, 16, 19])
        assert s.scores == [0, 20, 20] and not s.is_terminal()

    def test_target_score_option(self) -> None:
        s = six_tricks_3p(Ruleset(target_score=4), 4)
        assert s.outcome is not None and s.outcome.winner == 1

    def test_nothing_is_legal_after_the_end(self) -> None:
        s = six_tricks_3p(R3, 4, scores=[0, 19, 20])
        assert s.legal_actions() == [] and s.current_player == -1
        for a in (0, 28, 56, 57, 62, 63, 71):
            with pytest.raises(IllegalActionError, match="^the game is over$"):
                s.apply(a)
