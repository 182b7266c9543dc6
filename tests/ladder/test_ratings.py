"""The rating fit against answers worked out independently."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from scipy.optimize import brentq

from arena.ladder.ratings import ELO, Comparison, comparisons, fit, ladder_fit, rate
from arena.ladder.schedule import make_schedule
from arena.ladder.store import GameRow
from arena.stats.intervals import t_quantile


def test_two_bots_fit_the_log_odds():
    # A beats B 30 times in 40: the Bradley–Terry MLE is θA − θB = ln(30/10); the weak
    # prior (σ = 10) pulls it in only slightly.
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


def game(seats, places, players=3, dset="d0", board=0):
    return GameRow("g", board, dset, players, "target", 0, [0] * len(places), places, seats, 1,
                   0, 0)


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
            if rng.random() < 0.2:
                order = ["w", "s", "m"]
            out.append(game(order, [1, 2, 3], dset=f"d{k}", board=k))
        return out
    small = {r.bot: r for r in rate(games(20), ["s", "m", "w"], bootstrap=100)}
    big = {r.bot: r for r in rate(games(400), ["s", "m", "w"], bootstrap=100)}
    for b in "smw":
        assert small[b].low <= small[b].rating <= small[b].high
        assert big[b].high - big[b].low < small[b].high - small[b].low
        # one interval form: symmetric around the rating
        assert big[b].rating - big[b].low == pytest.approx(big[b].high - big[b].rating)
    assert big["s"].low > big["m"].high > big["w"].high
    assert ELO == pytest.approx(173.7178, rel=1e-4)


def test_the_bootstrap_resamples_whole_boards():
    # Every group that plays a board shares its luck. Here three groups per board agree
    # exactly (as if the deal decided everything): that is one board's worth of
    # evidence, not three, so the interval must be as wide as with one group per board
    # (the same fit, up to the prior; resampling groups as if independent would narrow it
    # by √3).
    rng = random.Random(5)
    orders = [rng.choice(["xyz", "xzy", "yxz", "zxy", "yzx"]) for _ in range(30)]

    def ladder(groups):
        return [game(list(o), [1, 2, 3], dset=f"b{b}-g{g}", board=b)
                for b, o in enumerate(orders) for g in range(groups)]
    one = {r.bot: r for r in rate(ladder(1), ["x", "y", "z"], bootstrap=300)}
    three = {r.bot: r for r in rate(ladder(3), ["x", "y", "z"], bootstrap=300)}
    for b in "xyz":
        assert three[b].margin == pytest.approx(one[b].margin, rel=0.03)
        assert three[b].rating == pytest.approx(one[b].rating, abs=3)


def ladder3(bots, boards, places_of):
    """A 3-player ladder on the project's schedule; ``places_of(board, seats)`` gives the
    places of each game."""
    return [game(list(g.seats), places_of(g.board, g.seats), dset=g.dset, board=g.board)
            for g in make_schedule(bots, 3, boards, seed=1)]


def sweep_gap(boards: int, comparisons_per_board: int = 12) -> float:
    """The bound on A − B (Elo) after A was ahead of B in every comparison on ``boards``
    boards, worked out apart from the code: B's share softened to the largest it could
    have unseen at 95%, u = 1 − 0.05^(1/G), and the 2-bot fit with the σ = 10 prior
    (θ = ±d/2) solved for d: n (1 − u − σ(d)) = d / 200, n comparisons."""
    u = 1 - 0.05 ** (1 / boards)
    n = comparisons_per_board * boards
    d = brentq(lambda d: n * (1 - u - 1 / (1 + math.exp(-d))) - d / 200, -10, 10,
               xtol=1e-12)
    return ELO * d


def test_a_bot_always_ahead_gets_a_one_sided_bound_not_plus_minus_zero():
    # 2 bots: every game of (A, A, B) and (A, B, B) has B last: 12 comparisons a board,
    # all won by A. The fit's gap is the prior's (it used to print "± 0"); now A is
    # "≥ x", B "≤ x", and the bound grows with the boards: at 4 boards
    # u = 1 − 0.05^¼ = 0.5271, so A − B ≥ 174 · logit(0.4729) ≈ −19 Elo (four sweeps do
    # not yet show A is stronger, and LOS is 1 − ½^4 = 93.75%); at 24 boards u = 0.1173,
    # A − B ≥ 174 · logit(0.8827) ≈ +350.
    def a_first(board, seats):
        return [1 if s == "A" else 3 for s in seats] if seats.count("A") == 1 else \
            [1, 2, 3] if seats[2] == "B" else [1, 3, 2] if seats[1] == "B" else [3, 1, 2]
    lows = []
    for boards in (4, 24, 48):
        bf = ladder_fit(ladder3(["A", "B"], boards, a_first), ["A", "B"], bootstrap=100)
        gap = sweep_gap(boards)
        a, b, d = bf.rating("A"), bf.rating("B"), bf.difference("A", "B")
        assert a.high is None and a.low == pytest.approx(1500 + gap / 2, abs=0.5)
        assert b.low is None and b.high == pytest.approx(1500 - gap / 2, abs=0.5)
        assert d.high is None and d.low == pytest.approx(gap, abs=0.5)
        assert bf.los("A", "B") == pytest.approx(1 - 0.5 ** boards)
        assert a.note == "never behind B" and b.note == "never ahead of A"
        lows.append(d.low)
    assert lows[0] == pytest.approx(-18.8, abs=0.5) and lows[1] == pytest.approx(350, abs=1)
    assert lows[0] < lows[1] < lows[2]
    assert d.interval_text(signed=True) == f"≥ +{lows[2]:.0f}"
    r = rate(ladder3(["A", "B"], 4, a_first), ["A", "B"], bootstrap=50)
    assert [x.bot for x in r] == ["A", "B"] and r[0].los_next == 0.9375


def test_a_bot_always_last_is_bounded_above_only_and_the_others_keep_their_figures():
    # C is last in every game; A and B trade places, A ahead in 2, 3, 4, 5 of the six
    # seatings on boards 0, 1, 2, 3, ... : C's rating is "≤ x" (at any number of boards,
    # so its intervals never exclude each other); A and B, the strongly connected part of
    # "who finished ahead of whom", anchor the scale (their mean is 1500) and keep their
    # figures with two-sided intervals, worked out here apart from the code: A ahead in 14
    # of every 24 comparisons with B, and the σ = 10 prior, give the gap d solving
    # 14 − 24 σ(d) = d / 200 per 4 boards (C, held far below by its prior alone, adds
    # almost nothing to it: e^−7 a comparison), A at 1500 + d/2, B at 1500 − d/2.
    def c_last(board, seats):
        k = seats_index[tuple(seats)]
        a_ahead = k < 2 + board % 4
        return [3 if s == "C" else (1 if (s == "A") == a_ahead else 2) for s in seats]
    seats_index = {s: k for k, s in enumerate(sorted(itertools.permutations("ABC")))}
    highs = []
    for boards in (4, 24):
        bf = ladder_fit(ladder3(["A", "B", "C"], boards, c_last), ["A", "B", "C"],
                        bootstrap=200)
        assert bf.anchor_bots == ["A", "B"]
        c = bf.rating("C")
        assert c.low is None and c.high is not None and not c.determined
        assert c.note == "never ahead of A, B"
        cycles = boards // 4
        d = ELO * brentq(lambda x, c=cycles: c * (14 - 24 / (1 + math.exp(-x))) - x / 200,
                         -5, 5, xtol=1e-12)
        a, b = bf.rating("A"), bf.rating("B")
        assert a.value == pytest.approx(1500 + d / 2, abs=0.5)
        assert b.value == pytest.approx(1500 - d / 2, abs=0.5)
        for e in (a, b):
            assert e.determined and e.two_sided and e.low < e.value < e.high and not e.note
        ab = bf.difference("A", "B")
        assert ab.two_sided and ab.value == pytest.approx(d, abs=1)
        assert bf.los("B", "C") == pytest.approx(1 - 0.5 ** boards)
        highs.append(c.high)
    # 4 boards cannot even place C below A and B's mean (u = 0.53: C might win half its
    # comparisons, unseen); 24 boards can
    assert highs[1] < 1500 < highs[0]


def test_the_two_sided_figures_resample_the_results_as_played():
    # the same ladder as above: the spread of A − B over the bootstrap is that of A − B
    # fitted to the A-B results alone (C always last carries no information on it), so
    # C's softened share (which the bounds use) must not narrow it. Second implementation:
    # A − B on each resample is the 2-bot closed form ln(ahead / behind) up to the prior.
    def c_last(board, seats):
        k = seats_index[tuple(seats)]
        return [3 if s == "C" else (1 if (s == "A") == (k < 2 + board % 4) else 2)
                for s in seats]
    seats_index = {s: k for k, s in enumerate(sorted(itertools.permutations("ABC")))}
    bf = ladder_fit(ladder3(["A", "B", "C"], 8, c_last), ["A", "B", "C"], bootstrap=400,
                    seed=2)
    rng = np.random.default_rng(2)
    ahead = np.array([2 + g % 4 for g in range(8)], dtype=float)      # of 6 a board
    counts = rng.multinomial(8, np.full(8, 1 / 8), size=400)
    ratio = (counts @ ahead) / (counts @ (6 - ahead))
    se = float(np.std(np.log(ratio))) * math.sqrt(8 / 7)
    margin = bf.difference("A", "B").margin
    assert margin == pytest.approx(t_quantile(8) * se * ELO, rel=0.08)


def test_identical_deterministic_bots_have_no_interval():
    # three copies of one deterministic bot: the places follow the seats alone (seat s
    # finishes (s + board) mod 3 + 1), so every board ties every pair exactly: 1500 each,
    # with no spread to measure: n/a (it used to print "1500 ± 0"); LOS ½.
    def by_seat(board, seats):
        return [(s + board) % 3 + 1 for s in range(3)]
    bf = ladder_fit(ladder3(["x", "y", "z"], 6, by_seat), ["x", "y", "z"], bootstrap=50)
    for b in "xyz":
        e = bf.rating(b)
        assert e.value == pytest.approx(1500) and e.interval_text() == "n/a"
        assert "same result" in e.note
    assert bf.difference("x", "y").interval_text() == "n/a"
    assert bf.los("x", "y") == 0.5


def test_one_board_has_no_interval():
    # the demo's ladder: one board, many duplicate sets; the sets share the board's luck
    games = ladder3(["a", "b", "c", "d"], 1, lambda board, seats: [1, 2, 3])
    r = rate(games, ["a", "b", "c", "d"], bootstrap=50)
    assert all(x.low is None and x.high is None and x.los_next is None for x in r)
    assert all(x.note.startswith("1 board") for x in r)
