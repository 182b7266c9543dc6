"""Actions: the int encoding, the text form and its parser, and the messages of
IllegalActionError in every phase (the state is unchanged after a refusal)."""

from __future__ import annotations

import pytest
from moon_sdk.rules import (
    MOON,
    PASS,
    ActionKind,
    ActionParseError,
    GameState,
    IllegalActionError,
    Phase,
    Ruleset,
    action_kind,
    action_name,
    action_tile,
    action_trump,
    bid,
    bid_value,
    discard,
    name_trump,
    parse_action,
    parse_tile,
    play,
)

from .helpers import SIX_TRICKS_3P, act, new_game, start_play


class TestEncoding:
    def test_documented_ranges(self) -> None:
        # play t = t (0..27); discard t = 28 + t; pass 56; bid 3..7 = 57..61; bid 21 = 62;
        # trump 0..6, doubles, none = 63..71.
        assert play(parse_tile("6-4")) == 25
        assert discard(parse_tile("0-0")) == 28 and discard(parse_tile("6-6")) == 55
        assert PASS == bid(0) == 56
        assert [bid(v) for v in range(3, 8)] == [57, 58, 59, 60, 61]
        assert MOON == bid(21) == 62
        assert [name_trump(t) for t in range(9)] == list(range(63, 72))

    def test_kinds_and_values(self) -> None:
        kinds = [action_kind(a) for a in range(72)]
        assert kinds == ([ActionKind.PLAY] * 28 + [ActionKind.DISCARD] * 28
                         + [ActionKind.BID] * 7 + [ActionKind.TRUMP] * 9)
        assert [action_tile(a) for a in range(56)] == list(range(28)) * 2
        assert [bid_value(a) for a in range(56, 63)] == [0, 3, 4, 5, 6, 7, 21]
        assert [action_trump(a) for a in range(63, 72)] == list(range(9))

    @pytest.mark.parametrize("a", [-1, 72, 100])
    def test_out_of_range(self, a: int) -> None:
        with pytest.raises(ValueError, match=f"^not an action: {a}$"):
            action_kind(a)
        with pytest.raises(ValueError, match=f"^not an action: {a}$"):
            action_name(a)

    @pytest.mark.parametrize("value", [1, 2, 8, 20, 22, -1])
    def test_bad_bid_value(self, value: int) -> None:
        with pytest.raises(ValueError, match=r"a bid is 0 \(pass\), 3..7 or 21"):
            bid(value)

    def test_bad_trump(self) -> None:
        with pytest.raises(ValueError, match="not a trump contract: 9"):
            name_trump(9)


class TestText:
    def test_names(self) -> None:
        assert action_name(play(parse_tile("4-6"))) == "play 6-4"
        assert action_name(discard(parse_tile("3-3"))) == "discard 3-3"
        assert [action_name(a) for a in range(56, 72)] == [
            "pass", "bid 3", "bid 4", "bid 5", "bid 6", "bid 7", "bid 21",
            "trump 0", "trump 1", "trump 2", "trump 3", "trump 4", "trump 5", "trump 6",
            "trump doubles", "trump none"]

    def test_every_action_round_trips(self) -> None:
        texts = [action_name(a) for a in range(72)]
        assert len(set(texts)) == 72
        for a, text in enumerate(texts):
            assert parse_action(text) == a
            assert parse_action(f"  {text.upper()} ") == a  # case and spaces are forgiven

    @pytest.mark.parametrize("text,a", [
        ("play 4-6", 25), ("play 64", 25), ("discard 3:3", 28 + 9), ("trump fives", 68),
        ("trump no-trump", 71), ("trump double", 70), ("bid   5", 59)])
    def test_other_spellings(self, text: str, a: int) -> None:
        assert parse_action(text) == a

    @pytest.mark.parametrize("text,why", [
        ("bid 8", "a bid is 0"), ("bid 2", "a bid is 0"), ("bid five", "expected"),
        ("play 9-9", "0..6"), ("play", "expected"), ("discard", "expected"),
        ("trump 7", "not a trump contract"), ("trump sevens", "not a trump contract"),
        ("fold", "expected"), ("", "expected"), ("pass 4", "expected"),
        ("play 6-4 5-5", "expected"), ("bid -4", "expected")])
    def test_rejected_with_a_reason(self, text: str, why: str) -> None:
        with pytest.raises(ActionParseError) as e:
            parse_action(text)
        assert isinstance(e.value, ValueError)
        assert str(e.value).startswith(f"not an action: {text!r}")
        assert why in str(e.value)


def snapshot(s: GameState) -> tuple[object, ...]:
    return (s.phase, s.current_player, tuple(s.hands), tuple(s.history), tuple(s.bids),
            s.high_bid, s.bidder, s.trump, s.discard, tuple(s.trick), tuple(s.scores))


def refused(s: GameState, action: object, message: str) -> None:
    """``action`` is refused with exactly ``message`` and the state is unchanged."""
    before = snapshot(s)
    with pytest.raises(IllegalActionError) as e:
        s.apply(action)  # type: ignore[arg-type]
    assert str(e.value) == message
    assert isinstance(e.value, ValueError)
    assert snapshot(s) == before


class TestIllegalActionMessages:
    def test_bidding(self) -> None:
        s = new_game(Ruleset(), dealer=0)
        refused(s, play(parse_tile("6-4")),
                "seat 1 must bid now (BIDDING phase), not play 6-4")
        refused(s, name_trump(5), "seat 1 must bid now (BIDDING phase), not trump 5")
        refused(s, bid(3), "bid 3 is below the minimum bid 4 (min_bid)")
        refused(s, 72, "not an action: 72")
        refused(s, -1, "not an action: -1")
        act(s, "bid 6")
        refused(s, bid(5), "bid 5 must be higher than the bid 6 already made")

    def test_not_an_int(self) -> None:
        # Validation must not accept look-alikes: 58.0 == 58 ("bid 4"), True == 1.
        s = new_game(Ruleset(), dealer=0)
        refused(s, 58.0, "not an action: 58.0")
        refused(s, "58", "not an action: '58'")
        refused(s, None, "not an action: None")
        p = start_play(Ruleset(players=4), {1: "1-0 6-6 6-5 6-4 6-3 6-2 6-1"}, trump="5")
        refused(p, True, "not an action: True")  # 1-0 is seat 1's and legal, True is not
        refused(p, 1.0, "not an action: 1.0")
        act(p, "play 1-0")

    def test_discard(self) -> None:
        s = new_game(Ruleset(), dealer=0, hands=SIX_TRICKS_3P, widow="6-1")
        act(s, "bid 4", "pass", "pass")
        refused(s, name_trump(6), "seat 1 must discard now (DISCARD phase), not trump 6")
        refused(s, discard(parse_tile("5-5")), "cannot discard 5-5: seat 1 does not hold it")
        refused(s, play(parse_tile("6-6")), "seat 1 must discard now (DISCARD phase), "
                                            "not play 6-6")

    def test_trump(self) -> None:
        s = new_game(Ruleset(remove_double_blank=True, allow_doubles_trump=False,
                             allow_no_trump=False), dealer=0)
        act(s, "bid 4", "pass", "pass")
        refused(s, PASS, "seat 1 must trump now (TRUMP phase), not pass")
        refused(s, name_trump(0),
                "trump 0 cannot be named: this tile set has no tile with a blank")
        refused(s, name_trump(7),
                "doubles may not be named trumps (allow_doubles_trump=false)")
        refused(s, name_trump(8), "no trumps may not be named (allow_no_trump=false)")

    def test_play(self) -> None:
        s = start_play(Ruleset(), SIX_TRICKS_3P, trump="6", widow="6-1", discard="0-0")
        refused(s, play(parse_tile("0-0")), "cannot play 0-0: seat 1 does not hold it")
        refused(s, discard(parse_tile("2-1")),
                "seat 1 must play now (PLAY phase), not discard 2-1")
        act(s, "play 2-1")  # twos led; seat 2 holds 2-2 and 3-2
        refused(s, play(parse_tile("5-5")), "must follow twos: holds 3-2 2-2")
        refused(s, play(parse_tile("6-6")), "cannot play 6-6: seat 2 does not hold it")
        act(s, "play 2-2", "play 4-2", "play 5-5")  # seat 2 won, leads fives
        refused(s, play(parse_tile("4-3")), "must follow fives: holds 5-4 5-3 5-2 5-1")

    def test_must_follow_trumps(self) -> None:
        s = start_play(Ruleset(), SIX_TRICKS_3P, trump="1", widow="6-1", discard="0-0")
        act(s, "play 2-1")  # a trump lead: seat 2 holds 1-1, 3-1 and 4-1
        refused(s, play(parse_tile("2-2")), "must follow trumps: holds 4-1 3-1 1-1")

    def test_game_over(self) -> None:
        s = GameState(Ruleset(target_score=1), seed=3)
        while not s.is_terminal():
            s.apply(s.legal_actions()[-1])  # the highest: bid 21 at once, then anything
        assert s.phase == Phase.GAME_OVER
        refused(s, PASS, "the game is over")
        refused(s, 0, "the game is over")
        refused(s, 72, "not an action: 72")

    def test_replay_names_the_bad_action(self) -> None:
        r = Ruleset()
        s = new_game(r, dealer=0)
        with pytest.raises(IllegalActionError) as e:
            GameState.replay(r, s.seed, [58, 59, 58])
        assert str(e.value) == ("action 2 (58): bid 4 must be higher than the bid 5 "
                                "already made")
