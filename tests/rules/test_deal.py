"""The seeded deal and the dealer (docs/rules.md "Deal and dealer"): a replay must be
bit-for-bit repeatable, so the algorithm documented in docs/rules.md is pinned here by a
second implementation written from that description, and by literal deals."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest
from moon_sdk.rules import (
    DEAL_VERSION,
    PRESETS,
    GameState,
    Ruleset,
    deal,
    first_dealer,
    format_tiles,
)

from . import reference as ref

M64 = (1 << 64) - 1


def splitmix64_next(x: int) -> tuple[int, int]:
    """One SplitMix64 step (Steele, Lea & Flood 2014): ``(new state, output)``."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def documented_deal(seed: int, hand_number: int, r: Ruleset) -> tuple[list[set[int]], set[int]]:
    """docs/rules.md (deal version 2): the tile set ascending; the stream starts at
    ``seed XOR (hand_number + 1) * 0xD1B54A32D192ED03`` (mod 2^64); R joins the fewest
    outputs with 48 bits more than ``len!`` needs, the first highest; Fisher-Yates from the
    last position down, swapping i with ``j = R mod (i + 1)``, then ``R = R // (i + 1)``;
    seat i gets positions 7i..7i+6 and the rest is the widow."""
    tiles = sorted(ref.index(p) for p in ref.tile_set(r.players, r.remove_double_blank))
    needed = math.factorial(len(tiles)).bit_length() + 48
    words = 1
    while 64 * words < needed:
        words += 1
    x = (seed ^ ((hand_number + 1) * 0xD1B54A32D192ED03)) & M64
    outputs = []
    for _ in range(words):
        x, out = splitmix64_next(x)
        outputs.append(out)
    big = int("".join(f"{o:016x}" for o in outputs), 16)  # first output highest
    for i in range(len(tiles) - 1, 0, -1):
        j = big % (i + 1)
        big //= i + 1
        tiles[i], tiles[j] = tiles[j], tiles[i]
    hands = [set(tiles[7 * s: 7 * s + 7]) for s in range(r.players)]
    return hands, set(tiles[7 * r.players:])


def test_deal_draws_two_or_three_outputs() -> None:
    # docs/rules.md: 21! and 22! need 66 and 70 bits (+48 <= 128: two outputs); 28! needs
    # 98 (+48 > 128: three).
    assert math.factorial(21).bit_length() == 66
    assert math.factorial(22).bit_length() == 70
    assert math.factorial(28).bit_length() == 98
    assert DEAL_VERSION == 2


def as_sets(hands: tuple[int, ...], widow: int) -> tuple[list[set[int]], set[int]]:
    def bits(m: int) -> set[int]:
        return {t for t in range(28) if m >> t & 1}

    return [bits(h) for h in hands], bits(widow)


@pytest.mark.parametrize("name", list(PRESETS))
def test_deal_follows_the_documented_algorithm(name: str) -> None:
    r = PRESETS[name]
    for seed in [0, 1, 2, 12345, 2**63 + 5, 2**64 - 1, -7]:
        for hand_number in range(4):
            assert as_sets(*deal(seed, hand_number, r)) == documented_deal(seed, hand_number, r)


def test_pinned_deals() -> None:
    # Literal deals, recorded once (the test above checks the algorithm): if these change,
    # every recorded game stops replaying.
    hands, widow = deal(0, 0, Ruleset())
    assert [format_tiles(h) for h in hands] == [
        "6-4 6-2 5-3 5-1 4-4 4-2 3-3", "6-6 6-5 6-3 5-5 5-4 4-1 0-0",
        "6-1 5-2 4-3 3-2 2-2 2-1 1-1"]
    assert format_tiles(widow) == "3-1"
    hands, widow = deal(42, 3, Ruleset(players=4))
    assert [format_tiles(h) for h in hands] == [
        "6-6 5-2 4-2 4-0 3-3 3-1 2-0", "6-2 5-4 5-0 4-4 4-1 2-2 0-0",
        "6-4 6-1 6-0 4-3 3-2 3-0 2-1", "6-5 6-3 5-5 5-3 5-1 1-1 1-0"]
    assert widow == 0
    assert [first_dealer(s, 3) for s in range(8)] == [0, 1, 2, 2, 2, 0, 2, 0]
    assert [first_dealer(s, 4) for s in range(8)] == [1, 1, 0, 3, 1, 0, 3, 0]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_deal_is_the_whole_set(name: str) -> None:
    r = PRESETS[name]
    for seed in range(200):
        hands, widow = deal(seed, seed % 5, r)
        assert all(h.bit_count() == 7 for h in hands)
        union = widow
        for h in hands:
            assert not union & h
            union |= h
        assert union == r.tile_set
        assert widow.bit_count() == (1 if r.has_widow else 0)


def test_deal_depends_on_seed_and_hand_number_only() -> None:
    r = Ruleset()
    assert deal(5, 0, r) == deal(5, 0, r)
    assert deal(5, 0, r) != deal(5, 1, r) and deal(5, 0, r) != deal(6, 0, r)
    # Same seed, same deals, whatever the first dealer or the play: hand k of a game is
    # deal(seed, k).
    g = GameState(r, 5)
    assert (tuple(g.hands), g.widow) == deal(5, 0, r)
    for _ in range(3):
        g.apply(56)
    assert (tuple(g.hands), g.widow) == deal(5, 1, r)


def test_deal_is_a_fair_shuffle_roughly() -> None:
    # Every tile should land with every seat about equally often (a smoke test of the
    # shuffle, not a statistical proof): 3000 deals, expected 750 a seat, allow +-15%.
    r = Ruleset(players=4)
    counts: Counter[tuple[int, int]] = Counter()
    for seed in range(3000):
        for seat, h in enumerate(deal(seed, 0, r)[0]):
            for t in range(28):
                if h >> t & 1:
                    counts[(seat, t)] += 1
    assert all(637 <= counts[(s, t)] <= 863 for s in range(4) for t in range(28))


@pytest.mark.parametrize("players", [3, 4])
def test_first_dealer_is_drawn_from_the_seed(players: int) -> None:
    counts = Counter(first_dealer(s, players) for s in range(4000))
    assert set(counts) == set(range(players))
    assert all(abs(c - 4000 / players) < 0.1 * 4000 / players for c in counts.values())
    for s in range(20):
        assert GameState(Ruleset(players=players), s).dealer == first_dealer(s, players)


class TestFromDeal:
    """``GameState.from_deal``: a chosen deal, checked tile by tile (docs/rules.md, "Deal
    and dealer": every tile of the set exactly once, 7 a seat, the widow's one tile)."""

    R3 = Ruleset.preset("moon3")
    R4 = Ruleset.preset("moon4")

    @staticmethod
    def split(r: Ruleset) -> tuple[list[int], int]:
        tiles = sorted(t for t in range(28) if r.tile_set >> t & 1)
        hands = [sum(1 << t for t in tiles[7 * i:7 * i + 7]) for i in range(r.players)]
        return hands, sum(1 << t for t in tiles[7 * r.players:])

    @pytest.mark.parametrize("name", ["moon3", "moon4"])
    def test_a_whole_deal_starts_a_game_there(self, name):
        r = Ruleset.preset(name)
        hands, widow = self.split(r)
        for dealer in range(r.players):
            s = GameState.from_deal(r, hands, widow, dealer=dealer, seed=5,
                                    scores=[3] * r.num_sides)
            # the seat after the dealer bids first, and holds what it was dealt
            assert s.dealer == dealer and s.current == (dealer + 1) % r.players
            assert s.hands == hands and list(s.dealt) == hands and s.widow == widow
            assert s.scores == [3] * r.num_sides and s.history == [] and s.bids == []
            # the next hand: the dealer moves on, the seed deals it
            while s.hand_number == 0:
                s.apply(s.legal_actions()[0])
            assert s.dealer == (dealer + 1) % r.players
            assert tuple(s.hands) == deal(5, 1, r)[0]

    def test_every_fault_of_a_deal_is_refused_with_its_reason(self):
        r = self.R3
        hands, widow = self.split(r)
        six = hands[0] & (hands[0] - 1)  # one tile fewer
        cases = [
            (dict(hands=hands[:2], widow=widow, dealer=0), "2 hands for 3 players"),
            (dict(hands=hands, widow=widow, dealer=3), "dealer 3 is not a seat (0..2)"),
            (dict(hands=[six, hands[1], hands[2]], widow=widow, dealer=0),
             "seat 0 has 6 tiles; a hand has 7"),
            (dict(hands=[hands[0], hands[0], hands[2]], widow=widow, dealer=0),
             "dealt twice (seat 1)"),
            (dict(hands=hands, widow=0, dealer=0), "the widow has 0 tiles; this ruleset's has 1"),
            (dict(hands=hands, widow=hands[0] & -hands[0], dealer=0),
             "in a hand and in the widow"),
            (dict(hands=hands, widow=widow, dealer=0, scores=[0, 0]), "2 scores for 3 sides"),
        ]
        for kw, message in cases:
            with pytest.raises(ValueError, match=re.escape(message)):
                GameState.from_deal(r, **kw)
        # a tile outside moon3's 22-tile set: dealing it is refused by name
        blank = 1 << next(t for t in range(28) if not r.tile_set >> t & 1)
        with pytest.raises(ValueError, match=re.escape(format_tiles(blank)) + " not in this"):
            GameState.from_deal(r, [hands[0] ^ (hands[0] & -hands[0]) | blank, *hands[1:]],
                                widow, dealer=0)
        # 4 players, no widow: a widow tile is one too many
        h4, _ = self.split(self.R4)
        with pytest.raises(ValueError, match="the widow has 1 tiles; this ruleset's has 0"):
            GameState.from_deal(self.R4, h4, 1, dealer=0)
