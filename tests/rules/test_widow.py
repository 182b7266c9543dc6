"""Widow, discard and trump naming (docs/rules.md "Widow, discard, trumps"), in both orders."""

from __future__ import annotations

import pytest
from moon_sdk.rules import (
    IllegalActionError,
    Phase,
    Ruleset,
    observe,
    parse_tile,
)

from .helpers import (
    SIX_TRICKS_3P,
    SIX_TRICKS_3P_PLAY,
    SIX_TRICKS_3P_WIDOW,
    act,
    mask,
    names,
    new_game,
    play_tricks,
)

R3 = Ruleset()
PAGAT = Ruleset(trump_before_widow=True)


class TestDefaultOrder:
    def test_take_widow_then_discard_then_trump(self) -> None:
        s = new_game(R3, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
        act(s, "bid 4", "pass", "pass")
        dealt = mask(SIX_TRICKS_3P[1])
        assert s.phase == Phase.DISCARD and s.current_player == 1
        assert s.hands[1] == dealt | mask("6-1")  # 8 tiles
        assert s.trump == -1
        # Any of the 8 may be discarded, the widow tile included.
        assert sorted(names(s.legal_actions())) == sorted(
            f"discard {x}" for x in (SIX_TRICKS_3P[1] + " 6-1").split())
        with pytest.raises(IllegalActionError, match="must discard now"):
            act(s, "trump 6")
        with pytest.raises(IllegalActionError,
                           match="^cannot discard 5-5: seat 1 does not hold it$"):
            act(s, "discard 5-5")
        act(s, "discard 0-0")
        assert s.phase == Phase.TRUMP and s.current_player == 1
        assert s.hands[1] == (dealt | mask("6-1")) & ~mask("0-0")
        assert s.discard == parse_tile("0-0")
        act(s, "trump 6")
        assert s.phase == Phase.PLAY and s.current_player == 1 and s.trump == 6

    def test_the_widow_tile_itself_may_be_the_discard(self) -> None:
        s = new_game(R3, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
        act(s, "bid 4", "pass", "pass", "discard 6-1", "trump 5")
        assert s.hands[1] == mask(SIX_TRICKS_3P[1])  # back to the dealt hand
        assert s.discard == parse_tile("6-1")
        # The discard is dead: it cannot be played.
        with pytest.raises(IllegalActionError,
                           match="^cannot play 6-1: seat 1 does not hold it$"):
            act(s, "play 6-1")

    def test_discard_is_dead_for_the_whole_hand(self) -> None:
        s = new_game(R3, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
        act(s, "bid 4", "pass", "pass", "discard 0-0", "trump 6")
        play_tricks(s, *SIX_TRICKS_3P_PLAY)
        rec = s.hand_records[0]
        played = [t for trick in rec.tricks for _, t in trick.plays]
        assert parse_tile("0-0") not in played and len(played) == 21
        assert rec.discard == parse_tile("0-0") and rec.widow == mask("6-1")


class TestTrumpBeforeWidow:
    def test_name_trumps_then_take_widow_then_discard(self) -> None:
        s = new_game(PAGAT, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
        act(s, "bid 4", "pass", "pass")
        assert s.phase == Phase.TRUMP and s.current_player == 1
        assert s.hands[1] == mask(SIX_TRICKS_3P[1])  # the widow is not taken yet
        assert observe(s, 1).widow == 0
        with pytest.raises(IllegalActionError, match="must trump now"):
            act(s, "discard 0-0")
        act(s, "trump 6")
        assert s.phase == Phase.DISCARD and s.current_player == 1 and s.trump == 6
        assert s.hands[1] == mask(SIX_TRICKS_3P[1] + " 6-1")
        assert observe(s, 1).widow == mask("6-1")
        act(s, "discard 0-0")
        assert s.phase == Phase.PLAY and s.current_player == 1
        play_tricks(s, *SIX_TRICKS_3P_PLAY)  # the same hand plays out the same way
        assert s.hand_records[0].tricks_taken == (0, 6, 1)

    def test_widow_discard_allowed_too(self) -> None:
        s = new_game(PAGAT, dealer=0, hands=SIX_TRICKS_3P, widow=SIX_TRICKS_3P_WIDOW)
        act(s, "bid 4", "pass", "pass", "trump 2", "discard 6-1")
        assert s.phase == Phase.PLAY and s.hands[1] == mask(SIX_TRICKS_3P[1])


class TestNoWidow:
    @pytest.mark.parametrize("r", [Ruleset(remove_double_blank=True), Ruleset(players=4),
                                   Ruleset(remove_double_blank=True, trump_before_widow=True)])
    def test_bidder_simply_names_trumps(self, r: Ruleset) -> None:
        s = new_game(r, dealer=0)
        dealt = s.hands[1]
        assert s.widow == 0
        act(s, "bid 4", *["pass"] * (r.players - 1))
        assert s.phase == Phase.TRUMP and s.current_player == 1
        assert s.hands[1] == dealt
        with pytest.raises(IllegalActionError, match="must trump now"):
            s.apply(28 + (dealt & -dealt).bit_length() - 1)
        act(s, "trump doubles")
        assert s.phase == Phase.PLAY and s.discard == -1 and s.hands[1] == dealt


class TestTrumpChoices:
    def test_all_kinds_allowed_by_default(self) -> None:
        s = new_game(R3, dealer=0)
        act(s, "bid 4", "pass", "pass")
        s.apply(s.legal_actions()[0])  # discard
        assert names(s.legal_actions()) == [
            "trump 0", "trump 1", "trump 2", "trump 3", "trump 4", "trump 5", "trump 6",
            "trump doubles", "trump none"]

    @pytest.mark.parametrize("option,refused,message", [
        ("allow_doubles_trump", "trump doubles",
         r"^doubles may not be named trumps \(allow_doubles_trump=false\)$"),
        ("allow_no_trump", "trump none",
         r"^no trumps may not be named \(allow_no_trump=false\)$"),
    ])
    def test_options_forbid_doubles_or_no_trump(self, option: str, refused: str,
                                                message: str) -> None:
        r = Ruleset(players=4, **{option: False})
        s = new_game(r, dealer=0)
        act(s, "bid 4", "pass", "pass", "pass")
        assert refused not in names(s.legal_actions())
        assert len(s.legal_actions()) == 8
        with pytest.raises(IllegalActionError, match=message):
            act(s, refused)
        assert s.phase == Phase.TRUMP

    def test_neither_doubles_nor_no_trump(self) -> None:
        r = Ruleset(allow_doubles_trump=False, allow_no_trump=False,
                    remove_double_blank=True)
        s = new_game(r, dealer=0)
        act(s, "bid 4", "pass", "pass")
        assert names(s.legal_actions()) == [f"trump {k}" for k in range(1, 7)]

    def test_trump_zero_refused_without_double_blank(self) -> None:
        s = new_game(Ruleset(remove_double_blank=True), dealer=0)
        act(s, "bid 4", "pass", "pass")
        assert "trump 0" not in names(s.legal_actions())
        with pytest.raises(IllegalActionError,
                           match="^trump 0 cannot be named: this tile set has no tile "
                                 "with a blank$"):
            act(s, "trump 0")
