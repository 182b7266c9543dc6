"""Schedules are balanced: seats, opponents and partners, as properties over ladder sizes."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ladder.schedule import board_seed, make_schedule

names = st.integers(min_value=2, max_value=6).map(lambda n: [f"bot{i}" for i in range(n)])


@settings(max_examples=40, deadline=None)
@given(bots=names, boards=st.integers(1, 3), seed=st.integers(0, 2**40))
def test_three_player_balance(bots, boards, seed):
    games = make_schedule(bots, 3, boards, seed)
    seat_counts = Counter((b, s) for g in games for s, b in enumerate(g.seats))
    # every bot sits in every seat equally often
    per_bot = {b: {seat_counts[(b, s)] for s in range(3)} for b in bots}
    assert all(len(v) == 1 for v in per_bot.values()), per_bot
    if len(bots) >= 3:
        # every bot plays every other bot equally often, on each side equally often
        pairs = Counter((g.seats[i], g.seats[j]) for g in games for i in range(3)
                        for j in range(3) if i != j)
        assert len({pairs[(a, b)] for a, b in itertools.permutations(bots, 2)}) == 1
        # left-hand and right-hand neighbours are balanced too
        left = Counter((g.seats[i], g.seats[(i + 1) % 3]) for g in games for i in range(3))
        assert len({left[(a, b)] for a, b in itertools.permutations(bots, 2)}) == 1
        assert len(games) == boards * 6 * len(list(itertools.combinations(bots, 3)))
    # ids are unique and stable
    assert len({g.game_id for g in games}) == len(games)
    assert [g.game_id for g in make_schedule(bots, 3, boards, seed)] == \
        [g.game_id for g in games]


@settings(max_examples=40, deadline=None)
@given(bots=names, boards=st.integers(1, 3), seed=st.integers(0, 2**40))
def test_four_player_balance(bots, boards, seed):
    games = make_schedule(bots, 4, boards, seed)
    partners = Counter()
    opponents = Counter()
    for g in games:
        for i in range(4):
            for j in range(4):
                if i != j and g.seats[i] != g.seats[j]:
                    (partners if i % 2 == j % 2 else opponents)[(g.seats[i], g.seats[j])] += 1
    if len(bots) >= 4:
        every_pair = list(itertools.permutations(bots, 2))
        assert len({partners[p] for p in every_pair}) == 1  # rotating partners, balanced
        assert len({opponents[p] for p in every_pair}) == 1
    else:
        assert not partners  # each bot partners a copy of itself
        assert len({opponents[p] for p in itertools.permutations(bots, 2)}) == 1
    # every duplicate set is one deal at two tables, partnerships swapped
    by_set = {}
    for g in games:
        by_set.setdefault(g.dset, []).append(g)
    for _dset, (a, b) in by_set.items():
        assert a.seed == b.seed
        assert {a.seats[0], a.seats[2]} == {b.seats[1], b.seats[3]}
        assert {a.seats[1], a.seats[3]} == {b.seats[0], b.seats[2]}
    # over every two boards, every bot sits in every seat equally often
    seat_counts = Counter((b, s) for g in games if g.board < boards - boards % 2
                          for s, b in enumerate(g.seats))
    if boards >= 2:
        assert all(len({seat_counts[(b, s)] for s in range(4)}) == 1 for b in bots)


def test_boards_have_distinct_seeds_and_sets_share_them():
    games = make_schedule(["a", "b", "c"], 3, 5, seed=7)
    seeds = {g.board: g.seed for g in games}
    assert len(set(seeds.values())) == 5
    assert all(g.seed == board_seed(7, g.board) for g in games)
    assert board_seed(7, 0) != board_seed(8, 0)


@settings(max_examples=40, deadline=None)
@given(bots=names, players=st.sampled_from([3, 4]), boards=st.integers(1, 3),
       seed=st.integers(0, 2**40), data=st.data())
def test_gauntlet_is_the_round_robin_games_with_a_challenger(bots, players, boards, seed, data):
    challengers = data.draw(st.lists(st.sampled_from(bots), min_size=1, max_size=2,
                                     unique=True))
    full = make_schedule(bots, players, boards, seed)
    gauntlet = make_schedule(bots, players, boards, seed, challengers)
    # exactly the round robin's games that seat a challenger: same ids, seeds and seatings
    assert gauntlet == [g for g in full if set(g.seats) & set(challengers)]
    # whole duplicate sets only: a set is all in or all out
    kept = {g.dset for g in gauntlet}
    assert Counter(g.dset for g in gauntlet) == Counter(g.dset for g in full if g.dset in kept)
    # each challenger meets every other bot, and on every seat equally often over 2 boards
    for c in challengers:
        met = Counter(b for g in gauntlet if c in g.seats for b in set(g.seats) - {c})
        assert set(met) == set(bots) - {c}
        even = boards - boards % 2 if players == 4 else boards
        seats = Counter(s for g in gauntlet if g.board < even
                        for s, b in enumerate(g.seats) if b == c)
        if even:
            assert len({seats[s] for s in range(players)}) == 1


def test_gauntlet_challenger_must_be_a_bot():
    with pytest.raises(ValueError, match="'zed' is not a bot"):
        make_schedule(["a", "b", "c"], 3, 1, 0, ["zed"])


def test_board_seeds_are_keyed_blake2b_of_the_master_seed():
    # docs/ladder.md: BLAKE2b, 8-byte digest, key = the master seed (8 bytes little-endian),
    # personalization "moon-boards", message = the board number (8 bytes little-endian),
    # the digest read little-endian and shifted right once (63 bits)
    import hashlib

    from arena.ladder.schedule import check_seed

    def documented(master: int, message: bytes) -> int:
        h = hashlib.blake2b(message, digest_size=8, key=master.to_bytes(8, "little"),
                            person=b"moon-boards")
        return int.from_bytes(h.digest(), "little") >> 1

    for master in (0, 1, 7, 2**63 - 1):
        for board in (0, 1, 99):
            assert board_seed(master, board) == documented(master, board.to_bytes(8, "little"))
        assert check_seed(master) == documented(master, b"admission check")
        assert check_seed(master) not in {board_seed(master, b) for b in range(100)}
