"""Places of a whole table (Holm's step-down), against answers worked out by hand and a
second implementation (closed testing)."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.stats.places import ALPHA, holm, neighbour_p, places


def test_holm_on_hand_made_p_values():
    # m = 4 at 5%: sorted 0.005 ≤ 0.05/4 yes, 0.01 ≤ 0.05/3 yes, 0.03 ≤ 0.05/2 no: stop
    # (0.04 is not even looked at, though it is below 0.05)
    assert holm([0.01, 0.04, 0.03, 0.005], alpha=0.05) == [True, False, False, True]
    # the last step is at α itself: 0.04 ≤ 0.05 after 0.001 ≤ 0.025
    assert holm([0.04, 0.001], alpha=0.05) == [True, True]
    # a claim that cannot be tested stops nothing before it and is never held
    assert holm([0.001, None, 0.002], alpha=0.05) == [True, False, True]
    assert holm([]) == []
    with pytest.raises(ValueError, match="between 0 and 1"):
        holm([1.5])


def closed_testing(pvalues: list[float], alpha: float) -> list[bool]:
    """Holm as the closed testing of Bonferroni tests: claim i holds when every
    intersection of claims that contains it is rejected (min p ≤ α / its size)."""
    m = len(pvalues)
    out = []
    for i in range(m):
        others = [j for j in range(m) if j != i]
        ok = True
        for r in range(m):
            for sub in itertools.combinations(others, r):
                s = (i, *sub)
                if min(pvalues[j] for j in s) > alpha / len(s):
                    ok = False
        out.append(ok)
    return out


def test_holm_is_closed_testing_of_bonferroni():
    rng = random.Random(4)
    for _ in range(300):
        m = rng.randint(1, 6)
        ps = [rng.choice([rng.random() * 0.05, rng.random()]) for _ in range(m)]
        assert holm(ps, alpha=0.025) == closed_testing(ps, 0.025), ps


def test_places_share_where_the_table_cannot_tell_apart():
    # LOS 0.999, 0.6, 0.999 between neighbours: p 0.001, 0.4, 0.001 over m = 3 at 2.5%:
    # 0.001 ≤ 0.025/3, 0.001 ≤ 0.025/2, 0.4 > 0.025: #2 and #3 share a place
    assert places([0.999, 0.6, 0.999, None]) == ["1", "2=", "2=", "4"]
    # two claims at LOS 98% each pass alone (p 0.02 < 2.5%) but not as a table: the
    # smaller must be ≤ 0.0125
    assert places([0.98, 0.98, None]) == ["1=", "1=", "1="]
    assert places([0.995, 0.98, None]) == ["1", "2", "3"]    # 0.005 ≤ 0.0125, 0.02 ≤ 0.025
    assert places([None, None]) == ["1=", "1="]               # no interval: no claim
    assert places([0.5]) == ["1"] and places([]) == []
    assert ALPHA == pytest.approx(0.025)
    assert neighbour_p(0.9375) == pytest.approx(0.0625) and neighbour_p(None) is None
