"""The auction (docs/rules.md "Bidding"): one turn each from the dealer's left, the
dealer last; higher bids only; 21 ends it at once; min_bid; all_pass redeal/force_dealer."""

from __future__ import annotations

import pytest
from moon_sdk.rules import (
    IllegalActionError,
    Phase,
    Ruleset,
    deal,
    observe,
)

from .helpers import act, names, new_game

R3 = Ruleset()
R4 = Ruleset(players=4)


class TestTurns:
    @pytest.mark.parametrize("players,dealer",
                             [(3, d) for d in range(3)] + [(4, d) for d in range(4)])
    def test_one_turn_each_clockwise_from_the_dealers_left(self, players: int,
                                                           dealer: int) -> None:
        s = new_game(Ruleset(players=players), dealer)
        order = [(dealer + k) % players for k in range(1, players + 1)]
        assert order[-1] == dealer  # the dealer bids last
        seen = []
        for k, seat in enumerate(order):
            assert s.phase == Phase.BIDDING
            assert s.current_player == seat
            seen.append(s.current_player)
            act(s, "bid 4" if k == 0 else "pass")
        assert seen == order
        # The auction is over after the dealer: the first bidder won it, nobody spoke twice.
        assert s.bidder == order[0] and s.high_bid == 4
        assert [seat for seat, _ in s.bids] == order
        assert s.phase in (Phase.DISCARD, Phase.TRUMP) and s.current_player == order[0]

    def test_an_outbid_player_gets_no_second_turn(self) -> None:
        s = new_game(R3, dealer=1)  # order: 2, 0, 1
        act(s, "bid 4", "bid 5", "pass")
        assert s.bids == [(2, 4), (0, 5), (1, 0)]
        assert (s.bidder, s.high_bid) == (0, 5)
        assert s.phase == Phase.DISCARD and s.current_player == 0

    def test_the_dealer_can_win_by_bidding_last(self) -> None:
        s = new_game(R4, dealer=3)  # order: 0, 1, 2, 3
        act(s, "bid 4", "pass", "bid 6", "bid 7")
        assert (s.bidder, s.high_bid) == (3, 7)
        assert s.phase == Phase.TRUMP and s.current_player == 3  # no widow with 28 tiles

    def test_observations_show_the_auction_so_far(self) -> None:
        s = new_game(R3, dealer=0)
        act(s, "bid 4")
        for seat in range(3):
            o = observe(s, seat)
            assert o.bids == ((1, 4),) and o.bid == 4 and o.bidder == 1
        assert observe(s, 2).legal_actions == tuple(s.legal_actions())
        assert observe(s, 0).legal_actions == ()  # not its turn


class TestHigherBidsOnly:
    def test_legal_bids_climb(self) -> None:
        s = new_game(R4, dealer=0)
        assert names(s.legal_actions()) == ["pass", "bid 4", "bid 5", "bid 6", "bid 7",
                                            "bid 21"]
        act(s, "bid 5")
        assert names(s.legal_actions()) == ["pass", "bid 6", "bid 7", "bid 21"]
        act(s, "bid 7")
        assert names(s.legal_actions()) == ["pass", "bid 21"]
        act(s, "pass")
        assert names(s.legal_actions()) == ["pass", "bid 21"]

    @pytest.mark.parametrize("again", ["bid 5", "bid 4"])
    def test_equal_or_lower_bid_refused(self, again: str) -> None:
        s = new_game(R3, dealer=0)
        act(s, "bid 5")
        value = again.split()[1]
        with pytest.raises(IllegalActionError,
                           match=f"^bid {value} must be higher than the bid 5 already made$"):
            act(s, again)
        assert s.bids == [(1, 5)] and s.current_player == 2  # unchanged

    def test_a_pass_is_not_a_bid(self) -> None:
        s = new_game(R3, dealer=0)
        act(s, "pass", "bid 4")
        assert (s.bidder, s.high_bid) == (2, 4)


class TestMoonBid:
    def test_21_ends_the_auction_at_once(self) -> None:
        s = new_game(R3, dealer=0)
        act(s, "bid 21")
        assert s.bids == [(1, 21)]
        assert (s.bidder, s.high_bid) == (1, 21)
        assert s.phase == Phase.DISCARD and s.current_player == 1

    def test_21_in_the_middle_of_a_four_player_auction(self) -> None:
        s = new_game(R4, dealer=0)  # order 1, 2, 3, 0
        act(s, "bid 7", "bid 21")
        assert s.bids == [(1, 7), (2, 21)]
        assert s.phase == Phase.TRUMP and s.current_player == 2

    def test_21_is_worth_more_than_7(self) -> None:
        s = new_game(R3, dealer=0)
        act(s, "bid 7", "bid 21")
        assert (s.bidder, s.high_bid) == (2, 21)


class TestMinBid:
    @pytest.mark.parametrize("min_bid", [3, 4, 5])
    def test_lowest_bid(self, min_bid: int) -> None:
        s = new_game(Ruleset(min_bid=min_bid), dealer=0)
        want = ["pass"] + [f"bid {v}" for v in range(min_bid, 8)] + ["bid 21"]
        assert names(s.legal_actions()) == want
        for low in range(3, min_bid):
            with pytest.raises(IllegalActionError,
                               match=f"^bid {low} is below the minimum bid {min_bid} "
                                     r"\(min_bid\)$"):
                act(s, f"bid {low}")
        act(s, f"bid {min_bid}")
        assert s.high_bid == min_bid

    def test_bid_3_makes_with_3_tricks(self) -> None:
        # min_bid 3 only widens the auction; a 3 is then made with 3 tricks (see scoring).
        s = new_game(Ruleset(min_bid=3, players=4), dealer=0)
        act(s, "bid 3", "pass", "pass", "pass")
        assert (s.bidder, s.high_bid) == (1, 3)


class TestAllPassRedeal:
    def test_everyone_passes_redeal_moves_the_dealer_and_scores_nothing(self) -> None:
        s = new_game(R3, dealer=2, scores=[5, -3, 8])
        first_deal = (s.hands[:], s.widow)
        act(s, "pass", "pass", "pass")
        rec = s.hand_records[0]
        assert rec.bidder == -1 and rec.bid == 0 and rec.made is None and rec.trump == -1
        assert rec.tricks == () and rec.deltas == (0, 0, 0) and rec.discard == -1
        assert s.scores == [5, -3, 8]
        assert s.hand_number == 1 and s.dealer == 0  # one seat clockwise
        assert s.phase == Phase.BIDDING and s.current_player == 1 and s.bids == []
        # A new deal: the one for hand number 1 of this seed.
        hands, widow = deal(s.seed, 1, R3)
        assert tuple(s.hands) == hands and s.widow == widow
        assert (s.hands, s.widow) != first_deal

    @pytest.mark.parametrize("players", [3, 4])
    def test_redeals_go_round_the_table(self, players: int) -> None:
        s = new_game(Ruleset(players=players), dealer=1)
        dealers = []
        for _ in range(2 * players + 1):
            dealers.append(s.dealer)
            act(s, *["pass"] * players)
        assert dealers == [(1 + k) % players for k in range(2 * players + 1)]
        assert s.scores == [0] * (3 if players == 3 else 2)
        assert [r.number for r in s.hand_records] == list(range(2 * players + 1))


class TestForceDealer:
    @pytest.mark.parametrize("players", [3, 4])
    def test_dealer_may_not_pass_when_all_others_passed(self, players: int) -> None:
        r = Ruleset(players=players, all_pass="force_dealer")
        s = new_game(r, dealer=0)
        act(s, *["pass"] * (players - 1))
        assert s.current_player == 0
        assert names(s.legal_actions()) == ["bid 4", "bid 5", "bid 6", "bid 7", "bid 21"]
        with pytest.raises(IllegalActionError,
                           match=r"^the dealer may not pass when everyone else passed "
                                 r"\(all_pass=force_dealer\)$"):
            act(s, "pass")
        act(s, "bid 4")
        assert (s.bidder, s.high_bid) == (0, 4)

    def test_forced_bid_respects_min_bid(self) -> None:
        s = new_game(Ruleset(players=4, all_pass="force_dealer", min_bid=5), dealer=2)
        act(s, "pass", "pass", "pass")
        assert names(s.legal_actions()) == ["bid 5", "bid 6", "bid 7", "bid 21"]

    def test_dealer_may_pass_after_a_bid(self) -> None:
        s = new_game(Ruleset(players=4, all_pass="force_dealer"), dealer=0)
        act(s, "pass", "bid 4", "pass")
        assert "pass" in names(s.legal_actions())
        act(s, "pass")
        assert s.bidder == 2

    def test_only_the_dealer_is_forced(self) -> None:
        s = new_game(Ruleset(all_pass="force_dealer"), dealer=0)
        act(s, "pass")
        assert "pass" in names(s.legal_actions())  # seat 2, not the dealer

    def test_redeal_default_lets_the_dealer_pass(self) -> None:
        s = new_game(R4, dealer=0)
        act(s, "pass", "pass", "pass")
        assert "pass" in names(s.legal_actions())
