"""The rating fit against answers worked out independently."""

from __future__ import annotations

import math
import random

import pytest

from arena.ladder.ratings import ELO, Comparison, comparisons, fit, rate, superiority
from arena.ladder.store import GameRow


def test_two_bots_fit_the_log_odds():
    # A beats B 30 times in 40: the Bradley–Terry MLE is θA − θB = ln(30/10); the weak
    # prior (σ = 3) pulls it in only slightly.
    comps = [Comparison(("A",), ("B",), 1.0)] * 30 + [Comparison(("B",), ("A",), 1.0)] * 10
    th = fit(comps, ["A", "B"])
    assert th["A"] - th["B"] == pytest.approx(math.log(3), rel=0.05)
    assert th["A"] + th["B"] == pytest.approx(0.0, abs=1e-6)


def test_fit_recovers_known_strengths_from_simulated_games():
    truth = {"a": 1.0, "b": 0.3, "c": -0.2, "d": -1.1}
    rng = random.Random(3)
    comps = []
    bots = list(truth)
    for _ in range(6000):
        x, y = rng.sample(bots, 2)
        p = 1 / (1 + math.exp(-(truth[x] - truth[y])))
        comps.append(Comparison((x,), (y,), 1.0) if rng.random() < p
                     else Comparison((y,), (x,), 1.0))
    th = fit(comps, bots)
    mean = sum(truth.values()) / 4
    for b in bots:
        assert th[b] == pytest.approx(truth[b] - mean, abs=0.12)


def test_team_strength_is_additive():
    # (a, b) beat (c, d) in 3 of 4; every other pairing 50/50: only the team sums are
    # identified, and θa + θb − θc − θd = ln 3.
    comps = [Comparison(("a", "b"), ("c", "d"), 1.0)] * 300 + \
        [Comparison(("c", "d"), ("a", "b"), 1.0)] * 100
    th = fit(comps, list("abcd"))
    assert th["a"] + th["b"] - th["c"] - th["d"] == pytest.approx(math.log(3), rel=0.05)


def game(seats, places, players=3, dset="d0"):
    return GameRow("g", 0, dset, players, "target", 0, [0] * len(places), places, seats, 1, 0, 0)


def test_three_player_game_breaks_into_pairs_and_ties_count_half():
    comps = comparisons(game(["x", "y", "z"], [2, 1, 2]))
    wins = {(c.ahead, c.behind): c.weight for c in comps}
    assert wins[(("y",), ("x",))] == 1.0
    assert wins[(("y",), ("z",))] == 1.0
    assert wins[(("x",), ("z",))] == 0.5 and wins[(("z",), ("x",))] == 0.5
    # a bot seated twice is not compared with itself
    assert all(c.ahead != c.behind for c in comparisons(game(["x", "x", "z"], [1, 2, 3])))


def test_four_player_game_is_one_team_comparison():
    comps = comparisons(game(["a", "b", "c", "d"], [2, 1], players=4))
    assert [(c.ahead, c.behind, c.weight) for c in comps] == [(("b", "d"), ("a", "c"), 1.0)]


def test_intervals_cover_the_estimate_and_shrink_with_data():
    def games(n):
        rng = random.Random(n)
        out = []
        for k in range(n):
            order = ["s", "m", "w"] if rng.random() < 0.7 else ["m", "s", "w"]
            out.append(game(order, [1, 2, 3], dset=f"d{k}"))
        return out
    small = {r.bot: r for r in rate(games(20), ["s", "m", "w"], bootstrap=100)}
    big = {r.bot: r for r in rate(games(400), ["s", "m", "w"], bootstrap=100)}
    for b in "smw":
        assert small[b].low <= small[b].rating <= small[b].high
        assert big[b].high - big[b].low < small[b].high - small[b].low
    assert big["s"].low > big["m"].high > big["w"].high
    assert ELO == pytest.approx(173.7178, rel=1e-4)


def test_likelihood_of_superiority_from_the_bootstrap():
    # A ahead of B in every duplicate set: every bootstrap fit puts A above B, LOS 1.
    sweep = [game(["A", "B", "C"], [1, 2, 3], dset=f"d{k}") for k in range(10)]
    r = rate(sweep, ["A", "B", "C"], bootstrap=50)
    assert [x.bot for x in r] == ["A", "B", "C"]
    assert r[0].los_next == 1.0 and r[1].los_next == 1.0 and r[2].los_next is None
    # A and B trade places inside every set (C always last): every resample is symmetric
    # in A and B, so their strengths tie in every fit: LOS ½.
    even = [game(order, [1, 2, 3], dset=f"d{k}") for k in range(10)
            for order in (["A", "B", "C"], ["B", "A", "C"])]
    r = rate(even, ["A", "B", "C"], bootstrap=50)
    assert r[0].los_next == 0.5 and r[1].los_next == 1.0


def test_superiority_counts_ties_half():
    assert superiority([1.0, 2.0, 3.0], [0.0, 2.0, 4.0]) == 0.5  # win, tie, loss
    assert superiority([], []) is None
