"""Matchmaking (arena.host.matchmaking): who plays next, and the seatings of a set."""

from __future__ import annotations

import itertools
import random
from collections import Counter

from arena.host.matchmaking import Candidate, pick_group, seatings


def test_new_versions_get_games_first() -> None:
    # weight 1/(games+1) + 0.25 sigma/sigma0: a new version (0 games, sigma0) has 1.25,
    # a settled one (99 games, sigma 1) 0.01 + 0.03 = 0.04; drawn first 1.25/(1.25+4*0.04)
    pool = [Candidate(0, 0, 25.0, 25 / 3)] + [Candidate(i, 99, 25.0, 1.0) for i in range(1, 5)]
    rng = random.Random(1)
    firsts = Counter(pick_group(pool, 3, rng)[0] for _ in range(4000))
    expected = 1.25 / (1.25 + 4 * (1 / 100 + 0.25 * 1.0 / (25 / 3)))
    assert abs(firsts[0] / 4000 - expected) < 0.03


def test_opponents_near_in_rating_with_randomness() -> None:
    pool = [Candidate(i, 50, mu, 1.0) for i, mu in enumerate([10, 24, 25, 26, 40])]
    rng = random.Random(2)
    together = Counter()
    for _ in range(3000):
        g = pick_group(pool, 3, rng, closeness=4.0)
        assert len(set(g)) == 3
        if g[0] == 2:
            together.update(g[1:])
    # from mu 25, the neighbours at 24 and 26 come far more often than 10 or 40 ...
    assert together[1] > 5 * together[0] and together[3] > 5 * together[4]
    # ... but a far one is never impossible (the leader is never trapped behind a gap)
    assert together[0] + together[4] > 0


def test_too_few_versions() -> None:
    rng = random.Random(0)
    assert pick_group([Candidate(1, 0, 25, 8)], 3, rng) == []
    assert sorted(pick_group([Candidate(1, 0, 25, 8), Candidate(2, 0, 25, 8)], 3, rng)) == [1, 2]
    four = [Candidate(i, 0, 25, 8) for i in range(3)]
    assert len(set(pick_group(four, 4, rng))) == 2


def test_a_set_of_three_is_every_seating() -> None:
    games = seatings([1, 2, 3], 3, random.Random(0))
    assert sorted(games) == sorted(itertools.permutations([1, 2, 3]))
    two = seatings([1, 2], 3, random.Random(0))  # one version twice: 3 distinct seatings
    assert len(two) == 3 and len(set(two)) == 3
    assert all(sorted(g) in ([1, 1, 2], [1, 2, 2]) for g in two)
    assert len({tuple(sorted(g)) for g in two}) == 1


def test_a_set_of_four_swaps_the_partnerships() -> None:
    t1, t2 = seatings([1, 2, 3, 4], 4, random.Random(3))
    teams = lambda g: ({g[0], g[2]}, {g[1], g[3]})  # noqa: E731
    assert teams(t1) == teams(t2)[::-1]  # the same partnerships, in the other seats
    assert {1, 2, 3, 4} == set(t1)
    a, b = seatings([5, 6], 4, random.Random(0))
    assert a == (5, 6, 5, 6) and b == (6, 5, 6, 5)


def test_a_version_in_its_placement_series_starts_every_group() -> None:
    # one provisional version among five settled ones (which, by their weights alone,
    # would start most groups): it starts every group while it is provisional
    pool = [Candidate(0, 40, 25.0, 2.0, provisional=True)] + [
        Candidate(i, 0, 25.0, 25 / 3) for i in range(1, 6)]
    rng = random.Random(3)
    groups = [pick_group(pool, 3, rng) for _ in range(500)]
    assert all(g[0] == 0 for g in groups)
    # two provisional ones share the starts (and the settled fill the other seats)
    pool[1] = Candidate(1, 0, 25.0, 25 / 3, provisional=True)
    firsts = Counter(pick_group(pool, 3, rng)[0] for _ in range(500))
    assert set(firsts) == {0, 1}
