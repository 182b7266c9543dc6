"""The head-to-head check beside a rating gap, against values from tables and by hand."""

from __future__ import annotations

import math

import pytest
from scipy.optimize import brentq

from arena.stats.head_to_head import beyond, expected_share, share_interval, share_text


def test_the_elo_curve():
    # the legend's figures: 200 points 76%, 400 points 91%; 0 is even
    assert expected_share(200) == pytest.approx(1 / (1 + 10 ** -0.5)) == pytest.approx(0.760,
                                                                                   abs=1e-3)
    assert expected_share(400) == pytest.approx(0.909, abs=1e-3)
    assert expected_share(0) == 0.5 and expected_share(-200) == pytest.approx(0.240, abs=1e-3)


def test_wilson_interval_from_its_definition_and_a_table():
    # the score interval is the set of p with (p̂ − p)² ≤ z² p (1 − p) / n: solved apart
    # from the code for each end
    z = 1.959963984540054
    for score, n in ((0.995, 200), (0.5, 10), (0.3, 57)):
        def edge(p: float, s: float = score, k: int = n) -> float:
            return (s - p) ** 2 - z * z * p * (1 - p) / k
        low, high = share_interval(score, n)
        assert low == pytest.approx(brentq(edge, 1e-12, score), abs=1e-9)
        assert high == pytest.approx(brentq(edge, score, 1 - 1e-12), abs=1e-9)
    # from a table: 0 of 10 gives 0 to 0.2775
    assert share_interval(0.0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    with pytest.raises(ValueError, match="at least one game"):
        share_interval(0.5, 0)


def test_a_gap_beyond_the_games():
    # the host demo's kind of field: a gap of 1370 implies the higher bot ahead in
    # 99.96% of comparisons (random ahead once in 2,660); the games say 199 of 200, whose 95%
    # interval ends at 99.91%: beyond. A gap of 900 (99.44%) is within it.
    assert 1 - expected_share(1370) == pytest.approx(1 / 2660, rel=0.01)
    assert share_interval(0.995, 200)[1] == pytest.approx(0.9991, abs=1e-4)
    assert beyond(1370, 0.995, 200) and not beyond(900, 0.995, 200)
    # a gap in the wrong direction for what was seen is beyond it too
    assert beyond(-100, 0.8, 100) and not beyond(240, 0.8, 100)
    assert math.isclose(expected_share(240), 0.799, abs_tol=1e-3)


def test_a_near_sweep_is_never_shown_as_a_sweep():
    assert [share_text(x) for x in (0.0, 0.0005, 0.005, 0.5833, 0.995, 0.9995, 1.0)] == \
        ["0%", "<0.1%", "0.5%", "58%", "99.5%", ">99.9%", "100%"]
