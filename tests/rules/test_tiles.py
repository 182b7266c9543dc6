"""Tiles, suits, ranks and the precomputed tables (docs/rules.md "Tiles, suits and rank",
"Trumps", "Play"), checked by hand and exhaustively against the simple model."""

from __future__ import annotations

import itertools
import random

import pytest
from moon_sdk.rules import (
    DOUBLES,
    NO_TRUMP,
    PRESETS,
    RANK,
    TILE_NAMES,
    Ruleset,
    TileParseError,
    format_tiles,
    is_double,
    iter_tiles,
    legal_follow,
    mask_of,
    parse_tile,
    parse_trump,
    tile,
    tile_name,
    tile_pips,
    tiles_of,
    trick_winner_index,
    trump_name,
)

from . import reference as ref
from .helpers import mask


def t(text: str) -> int:
    return parse_tile(text)


def ts(text: str) -> list[int]:
    return [parse_tile(w) for w in text.split()]


class TestNumbering:
    def test_documented_index_formula(self) -> None:
        # The module docstring: index = high*(high+1)/2 + low; 0-0 is 0 and 6-6 is 27.
        assert tile(0, 0) == 0
        assert tile(1, 0) == 1 and tile(1, 1) == 2
        assert tile(6, 4) == 25 and tile(6, 6) == 27
        for h in range(7):
            for lo in range(h + 1):
                assert tile(h, lo) == h * (h + 1) // 2 + lo
                assert tile(lo, h) == tile(h, lo)  # either order
                assert tile_pips(tile(h, lo)) == (h, lo)

    def test_names_are_high_end_first(self) -> None:
        assert TILE_NAMES[tile(6, 4)] == "6-4"
        assert tile_name(tile(4, 6)) == "6-4"
        assert len(set(TILE_NAMES)) == 28
        for i, name in enumerate(TILE_NAMES):
            h, lo = (int(x) for x in name.split("-"))
            assert h >= lo and tile(h, lo) == i

    def test_doubles(self) -> None:
        assert [x for x in range(28) if is_double(x)] == ts("0-0 1-1 2-2 3-3 4-4 5-5 6-6")

    def test_out_of_range_ends_rejected(self) -> None:
        with pytest.raises(TileParseError, match="0..6"):
            tile(7, 1)
        with pytest.raises(TileParseError):
            tile(-1, 0)


class TestParse:
    @pytest.mark.parametrize("name", TILE_NAMES)
    def test_round_trip(self, name: str) -> None:
        assert tile_name(parse_tile(name)) == name

    @pytest.mark.parametrize("text", ["6-4", "4-6", "6:4", "64", "46", " 6-4 ", "6|4"])
    def test_accepted_spellings(self, text: str) -> None:
        assert parse_tile(text) == tile(6, 4)

    @pytest.mark.parametrize(
        "text", ["7-1", "6-", "-6", "six-four", "", "6-4-2", "644", "6", "a-b", "6--4", "66x",
                 "-1-2", "6- 4"])
    def test_rejected_with_the_text_in_the_message(self, text: str) -> None:
        with pytest.raises(TileParseError) as e:
            parse_tile(text)
        assert isinstance(e.value, ValueError)
        assert repr(text) in str(e.value) or "0..6" in str(e.value)

    def test_message_says_how_to_write_a_tile(self) -> None:
        with pytest.raises(TileParseError, match=r"not a tile: 'six-four' .*e\.g\. '6-4'"):
            parse_tile("six-four")

    def test_trump_names_round_trip(self) -> None:
        for tr in range(9):
            assert parse_trump(trump_name(tr)) == tr
        assert [trump_name(x) for x in (0, 6, DOUBLES, NO_TRUMP)] == ["0", "6", "doubles", "none"]
        assert parse_trump("fives") == 5 and parse_trump("blanks") == 0
        assert parse_trump("No Trump") == NO_TRUMP and parse_trump("Doubles") == DOUBLES

    @pytest.mark.parametrize("text", ["7", "-1", "sevens", "", "trumps", "10"])
    def test_bad_trump_rejected(self, text: str) -> None:
        with pytest.raises(TileParseError, match="not a trump contract"):
            parse_trump(text)

    def test_trump_name_rejects_non_contract(self) -> None:
        with pytest.raises(ValueError):
            trump_name(9)


class TestMasks:
    def test_mask_helpers(self) -> None:
        m = mask_of(ts("6-6 2-1 3-3"))
        assert tiles_of(m) == sorted(ts("6-6 2-1 3-3"))
        assert list(iter_tiles(m)) == tiles_of(m)
        assert format_tiles(m) == "6-6 3-3 2-1"  # highest first
        assert tiles_of(0) == [] and format_tiles(0) == ""

    def test_tile_sets(self) -> None:
        # 22 tiles: both ends 1..6 (21) plus 0-0; 21 without 0-0; 28 for 4 players.
        cases = [(Ruleset(), 22, True), (Ruleset(remove_double_blank=True), 21, False),
                 (Ruleset(players=4), 28, False)]
        for r, size, widow in cases:
            assert r.num_tiles == size and r.has_widow is widow
            expected = {ref.index(p) for p in ref.tile_set(r.players, r.remove_double_blank)}
            assert set(tiles_of(r.tile_set)) == expected
        assert (Ruleset().tile_set >> t("0-0")) & 1
        assert not (Ruleset().tile_set >> t("1-0")) & 1
        assert not (Ruleset(remove_double_blank=True).tile_set >> t("0-0")) & 1

    def test_presets_tile_sets(self) -> None:
        sizes = {name: r.num_tiles for name, r in PRESETS.items()}
        assert sizes == {"moon3": 22, "moon4": 28, "moon3-21": 21, "moon3-marks": 22,
                         "moon3-pagat": 22, "moon4-force": 28}


def ranked(trump: int, led_tile: str, tiles: str) -> list[str]:
    """``tiles`` sorted strongest first in a trick led by ``led_tile`` (by RANK)."""
    suit = ref.suit_led(tile_pips(t(led_tile)), ref.contract(trump))
    led = 7 if suit == ref.TRUMPS else int(suit)
    return [tile_name(x) for x in sorted(ts(tiles), key=lambda x: -RANK[trump][led][x])]


class TestRank:
    def test_suit_two_in_three_player_moon(self) -> None:
        # docs/rules.md: "Suit 2 in 3-player Moon: 2-2, 6-2, 5-2, 4-2, 3-2, 2-1".
        order = "2-2 6-2 5-2 4-2 3-2 2-1"
        assert ranked(NO_TRUMP, "2-1", "2-1 3-2 6-2 2-2 4-2 5-2") == order.split()
        # The same order shown by tricks led by 2-1 (twos): of any two, the higher wins,
        # whichever is played first.
        tiles = order.split()
        for i, j in itertools.combinations(range(len(tiles)), 2):
            hi, lo = t(tiles[i]), t(tiles[j])
            if tiles[j] == "2-1":
                assert trick_winner_index(NO_TRUMP, [lo, hi]) == 1
                continue
            assert trick_winner_index(NO_TRUMP, [t("2-1"), lo, hi]) == 2
            assert trick_winner_index(NO_TRUMP, [t("2-1"), hi, lo]) == 1

    def test_number_trump_rank(self) -> None:
        # Fours trump: 4-4, then by the other end: 6-4, 5-4, 4-3, 4-2, 4-1, 4-0.
        assert ranked(4, "4-1", "4-0 4-1 4-2 4-3 5-4 6-4 4-4") == \
            "4-4 6-4 5-4 4-3 4-2 4-1 4-0".split()

    def test_doubles_trump_rank(self) -> None:
        assert ranked(DOUBLES, "3-3", "0-0 1-1 3-3 2-2 6-6 4-4 5-5") == \
            "6-6 5-5 4-4 3-3 2-2 1-1 0-0".split()

    def test_trump_zero_rank_four_players(self) -> None:
        assert ranked(0, "3-0", "1-0 0-0 6-0 2-0 5-0 3-0 4-0") == \
            "0-0 6-0 5-0 4-0 3-0 2-0 1-0".split()


class TestFollowTable:
    """legal_follow against the model, every contract x every lead x every tile."""

    def test_every_single_tile_relation(self) -> None:
        for tr in range(9):
            c = ref.contract(tr)
            for lead in range(28):
                suit = ref.suit_led(ref.pips(lead), c)
                for x in range(28):
                    # A one-tile hand may always play its tile (it follows, or it cannot).
                    assert legal_follow(tr, lead, 1 << x) == 1 << x
                    # Beside a tile known to follow (the led tile follows its own suit), x
                    # is legal exactly when x follows the suit led too.
                    follows = ref.follows(ref.pips(x), suit, c)
                    two = (1 << x) | (1 << lead)
                    assert legal_follow(tr, lead, two) >> lead & 1
                    if x != lead:
                        assert bool(legal_follow(tr, lead, two) >> x & 1) == follows, (
                            tr, TILE_NAMES[lead], TILE_NAMES[x])

    def test_random_hands(self) -> None:
        rng = random.Random(1)
        for _ in range(20000):
            tr = rng.randrange(9)
            c = ref.contract(tr)
            lead, *hand = rng.sample(range(28), 1 + rng.randint(1, 8))
            want = ref.legal_plays([ref.pips(x) for x in hand], [ref.pips(lead)], c)
            got = legal_follow(tr, lead, mask_of(hand))
            assert got == mask_of(ref.index(p) for p in want)


class TestWinnerTable:
    def test_every_three_tile_trick(self) -> None:
        for tr in range(9):
            c = ref.contract(tr)
            for trick in itertools.permutations(range(28), 3):
                want = ref.trick_winner([ref.pips(x) for x in trick], c)
                assert trick_winner_index(tr, trick) == want

    def test_random_four_tile_tricks(self) -> None:
        rng = random.Random(2)
        for _ in range(50000):
            tr = rng.randrange(9)
            trick = rng.sample(range(28), 4)
            want = ref.trick_winner([ref.pips(x) for x in trick], ref.contract(tr))
            assert trick_winner_index(tr, trick) == want

    def test_lead_wins_when_nobody_follows_or_trumps(self) -> None:
        # Fours trump, 6-5 led (sixes); 3-3 and 2-1 neither follow nor trump.
        assert trick_winner_index(4, ts("6-5 3-3 2-1")) == 0


def test_mask_helper_of_these_tests() -> None:
    assert mask("6-4 2-1") == (1 << tile(6, 4)) | (1 << tile(2, 1))
    with pytest.raises(AssertionError):
        mask("6-4 4-6")
