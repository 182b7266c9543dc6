"""The bootstrap's resamples that separate bots the results do not: one Newton step from
the point fit instead of a refit held by the prior, against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.stats.bradley_terry import (
    ELO,
    BoardFit,
    Comparison,
    newton_step,
    reach_of,
)
from arena.stats.intervals import t_quantile

LAM = 1 / 10.0 ** 2      # the prior's precision (σ = 10 natural units)


def test_newton_step_of_two_bots_by_hand():
    # two bots, rows "a ahead of b" (x = (1, -1)) and "b ahead of a" (x = (-1, 1)), from
    # θ = (t, -t): everything lies along e = (1, -1), where the Hessian is
    # 2 v (W1 + W2) + λ with v = p (1 - p), p = σ(2t), and the gradient of the
    # log-posterior is W1 (1 - p) - W2 p - λ t per component; so θ_a moves by their ratio.
    x = np.array([[1.0, -1.0], [-1.0, 1.0]])
    t = 0.3
    p = 1 / (1 + math.exp(-2 * t))
    v = p * (1 - p)
    for w1, w2 in [(2.0, 0.0), (5.0, 1.0), (0.0, 3.0)]:
        want = t + (w1 * (1 - p) - w2 * p - LAM * t) / (2 * v * (w1 + w2) + LAM)
        got = newton_step(x, np.array([[w1, w2]]), np.array([t, -t]))
        assert got[0] == pytest.approx([want, -want], rel=1e-12)


def test_reach_of_each_resample_by_hand():
    # rows: a ahead of b, b ahead of c, c ahead of a, b ahead of a
    x = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    w = np.array([[1.0, 1.0, 1.0, 0.0],     # a cycle: everyone reaches everyone
                  [1.0, 1.0, 0.0, 0.0],     # a > b > c, nothing back
                  [0.0, 0.0, 0.0, 2.0]])    # only b > a; c met no one
    r = reach_of(x, w)
    assert r[0].all()
    assert r[1].tolist() == [[True, True, True], [False, True, True], [False, False, True]]
    assert r[2].tolist() == [[True, False, False], [True, True, False], [False, False, True]]


def two_boards() -> dict[int, list[Comparison]]:
    """a ahead of b on board 0, b ahead of a on board 1: the point fit is 0 apart."""
    return {0: [Comparison(("a",), ("b",), 1.0)], 1: [Comparison(("b",), ("a",), 1.0)]}


def test_a_resample_that_separates_what_the_results_do_not_is_one_newton_step():
    # The results are tied (θ = 0, p = ½). A resample drawing board 0 twice sees a sweep of
    # 2: refitted, its gap would be held by the prior alone; one Newton step from θ = 0 is
    # (W (1 - p)) / (2 W p (1 - p) + λ) = 1 / (1 + λ) for θ_a (W = 2), a gap of 2 / 1.01.
    # Board 1 twice gives the opposite, one of each the tie (the refit: 0).
    bf = BoardFit(two_boards(), ["a", "b"], bootstrap=400, seed=3)
    gap = 2 / (1 + LAM)
    want = np.where(bf.counts[:, 0] == 2, gap, np.where(bf.counts[:, 0] == 0, -gap, 0.0))
    got = bf.samples[:, 0] - bf.samples[:, 1]
    assert got == pytest.approx(want, abs=1e-9)
    assert bf.apart.tolist() == (bf.counts[:, 0] != 1).tolist()
    # the interval: t with 1 degree of freedom times the resamples' spread, √(G / (G − 1))
    se = float(np.std(want)) * math.sqrt(2)
    assert bf.difference("a", "b").margin == pytest.approx(t_quantile(2) * se * ELO)


def test_before_the_one_step_the_prior_held_the_sweeps_gap():
    # the same resamples refitted: a sweep of 2 under the σ = 10 prior solves
    # 2 σ(-d) = d / 200 (θ_a = -θ_b = d / 2, where the derivative in θ_a of
    # 2 log σ(2 θ_a) - θ_a² / 100 vanishes): about 4.5 natural units, more than twice the
    # Newton step's 1.98
    class Refit(BoardFit):
        one_step_apart = False

    bf = Refit(two_boards(), ["a", "b"], bootstrap=400, seed=3)
    d = 4.0
    for _ in range(60):                      # Newton on f(d) = 2 σ(-d) - d / 200
        s = 1 / (1 + math.exp(d))
        d -= (2 * s - d / 200) / (-2 * s * (1 - s) - 1 / 200)
    sweep = bf.samples[bf.counts[:, 0] == 2]
    assert sweep[:, 0] - sweep[:, 1] == pytest.approx(d, rel=1e-6)
    assert d > 2 * 2 / (1 + LAM)
    assert not bf.apart.any()
