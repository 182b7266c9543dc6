"""The statistics of an A/B match (arena.stats.match) against values worked out
independently: by hand, by a second solver, and by simulating thousands of matches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st
from scipy.optimize import brentq, minimize
from scipy.special import expit

from arena.stats.match import (
    SPRT,
    SetCounts,
    elo_of,
    game_result,
    llr,
    match_stats,
    score_of,
    set_score,
)


def test_pentanomial_example_by_hand():
    """30 four-player sets (two games each), pentanomial [LL, LD, LW+DD, DW, WW] =
    [2, 4, 8, 10, 6], scores 0, ¼, ½, ¾, 1:

    - A's score: (0·2 + ¼·4 + ½·8 + ¾·10 + 1·6) / 30 = 18.5 / 30 = 0.616667.
    - Spread of the set scores: Σ n a² = ¼ + 2 + 5.625 + 6 = 13.875;
      Σ n (a − μ)² = 13.875 − 30 · 0.616667² = 2.466667; sample variance 2.466667 / 29 =
      0.0850575; SE = √(0.0850575 / 30) = 0.053247.
    - Elo: −400 log10(0.383333 / 0.616667) = −400 · (−0.206474) = 82.59.
    - Its slope: 400 / (ln 10 · 0.616667 · 0.383333) = 734.88 Elo per unit of score, so
      SE(Elo) = 39.131; t(29 df, 97.5%) = 2.04523 (a t table); margin 80.03.
    - LOS: t(29 df) distribution at (0.616667 − 0.5) / 0.053247 = 2.19105.
    """
    c = SetCounts(2, (2, 4, 8, 10, 6))
    m = match_stats(c)
    assert m.sets == 30 and m.games == 60
    assert m.score == pytest.approx(0.616667, abs=1e-6)
    assert m.elo.value == pytest.approx(82.59, abs=0.01)
    assert m.elo.margin == pytest.approx(80.03, abs=0.02)
    assert m.elo.low == pytest.approx(82.59 - 80.03, abs=0.03)
    assert m.elo.interval_text() == "± 80"
    assert m.los == pytest.approx(st.t.cdf(2.19105, 29), abs=1e-5)
    assert 0.981 < m.los < 0.983


def test_counts_from_set_scores():
    # 3 players: six games a set, scores in twelfths
    c = SetCounts.of_scores([0, 1 / 12, 0.5, 0.5, 1], games=6)
    assert c.counts == (1, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1) and c.sets == 5
    assert c.add(0.25).counts[3] == 1
    with pytest.raises(ValueError, match="multiple of 1/4"):
        SetCounts.of_scores([1 / 3], games=2)
    assert set_score([game_result(1, 2), game_result(3, 2), game_result(2, 2)]) == 0.5
    with pytest.raises(ValueError):
        set_score([0.3])


def test_elo_scale_is_logistic():
    assert elo_of(score_of(100)) == pytest.approx(100)
    assert score_of(0) == 0.5
    assert score_of(400) == pytest.approx(10 / 11)   # 10:1 odds at 400 Elo


def test_llr_of_win_or_lose_sets_is_the_binomial_sprt():
    """Sets that are all-or-nothing (LL or WW): the distribution with mean s on {0, 1} is
    (1 − s, s), so LLR = W ln(s1/s0) + L ln((1 − s1)/(1 − s0)). 30 WW, 10 LL, elo0 = 0,
    elo1 = 100: s0 = ½, s1 = 0.640065;
    30 ln(1.280130) + 10 ln(0.719870) = 7.408866 − 3.286841 = 4.122025. The three empty
    classes get fishtest's 0.001 each, which moves it in the 4th decimal."""
    assert llr(SetCounts(2, (10, 0, 0, 0, 30)), 0, 100) == pytest.approx(4.122025, abs=5e-4)


def test_llr_is_zero_for_symmetric_results_and_hypotheses():
    # p̂ symmetric about ½ and s0 = 1 − s1: p1 is p0 mirrored, so the LLR vanishes
    assert llr(SetCounts(2, (1, 2, 4, 2, 1)), -20, 20) == pytest.approx(0, abs=1e-9)
    # and it grows with A's results
    assert llr(SetCounts(2, (1, 2, 4, 3, 2)), -20, 20) > 0


def test_llr_agrees_with_a_direct_constrained_maximum_likelihood():
    """The LLR is N Σ p̂ ln(p1/p0), p_k the likeliest distribution with mean s_k: here found
    by maximizing Σ p̂ ln p under the two constraints with a general solver (SLSQP), not by
    the secular equation the module solves."""
    counts = np.array([3, 0, 7, 5, 11, 9, 14, 8, 6, 2, 4, 0, 1], dtype=float)  # 13 classes
    reg = np.where(counts == 0, 1e-3, counts)
    p_hat = reg / reg.sum()
    a = np.arange(13) / 12

    def likeliest(s: float) -> np.ndarray:
        res = minimize(lambda p: -np.sum(p_hat * np.log(p)), p_hat, method="SLSQP",
                       bounds=[(1e-12, 1)] * 13,
                       constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1},
                                    {"type": "eq", "fun": lambda p: p @ a - s}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        return res.x

    s0, s1 = score_of(0), score_of(15)
    want = reg.sum() * np.sum(p_hat * np.log(likeliest(s1) / likeliest(s0)))
    got = llr(SetCounts(6, tuple(int(c) for c in counts)), 0, 15)
    assert got == pytest.approx(want, rel=1e-4)


def test_sprt_bounds_and_decisions():
    t = SPRT(0, 10, 0.05, 0.05)
    assert t.lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944439)
    assert t.upper == pytest.approx(2.944439)
    assert t.decide(3.0) == "H1" and t.decide(-3.0) == "H0" and t.decide(0.0) is None
    with pytest.raises(ValueError, match="elo0"):
        SPRT(10, 0)
    with pytest.raises(ValueError, match="alpha"):
        SPRT(0, 10, alpha=0)


def test_degenerate_matches_say_so():
    # A won all 10 sets: Elo unbounded above; the bound from P(all won) ≤ s^10 at 5%:
    # s ≥ 0.05^(1/10) = 0.741134 → Elo ≥ −400 log10(1/0.741134 − 1) = −400 log10(0.349283) = 182.73
    won = match_stats(SetCounts(2, (0, 0, 0, 0, 10)))
    assert won.elo.high is None and won.elo.low == pytest.approx(182.73, abs=0.01)
    assert won.elo.interval_text(signed=True) == "≥ +183"
    assert won.los == pytest.approx(1 - 0.5 ** 10)
    lost = match_stats(SetCounts(2, (10, 0, 0, 0, 0)))
    assert lost.elo.low is None and lost.elo.high == pytest.approx(-182.73, abs=0.01)
    # identical deterministic bots: every set exactly ½: no spread, n/a, LOS ½
    same = match_stats(SetCounts(6, (0,) * 6 + (12,) + (0,) * 6))
    assert same.elo.value == 0 and same.elo.interval_text() == "n/a" and same.los == 0.5
    one = match_stats(SetCounts(2, (0, 0, 1, 0, 0)))
    assert one.elo.interval_text() == "n/a" and one.los is None


# -- the error rates of the SPRT in simulation --------------------------------------------

GH_Z, GH_W = np.polynomial.hermite_e.hermegauss(40)
GH_W = GH_W / GH_W.sum()
TAU = 1.0          # deal luck: sd of each seat's bonus (natural units)
THIRD = 0.4        # the third bot's strength (3 players)
TIE = 0.06         # chance a 4-player game is tied


def share_3p(delta: float) -> float:
    """Deal-averaged chance that A (strength δ/2) finishes ahead of B (−δ/2) in a
    Plackett–Luce game with the third bot, seats' bonuses N(0, τ²); every seating gives
    the same, by symmetry. Gauss–Hermite quadrature."""
    b = GH_Z * TAU
    b1, b2, b3 = np.meshgrid(b, b, b, indexing="ij")
    w = GH_W[:, None, None] * GH_W[None, :, None] * GH_W[None, None, :]
    ea, eb, ec = np.exp(delta / 2 + b1), np.exp(-delta / 2 + b2), np.exp(THIRD + b3)
    s = ea + eb + ec
    return float(np.sum(w * (ea / s + ec / s * ea / (ea + eb))))


def share_4p(delta: float) -> float:
    """Deal-averaged score of partnership (A, A) against (B, B): team difference 2δ, the
    seats' bonuses add N(0, 4τ²); a tie (½) with chance TIE."""
    return TIE / 2 + (1 - TIE) * float(np.sum(GH_W * expit(2 * delta + 2 * TAU * GH_Z)))


def draw_sets(rng: np.random.Generator, players: int, delta: float, n: int) -> np.ndarray:
    """n set scores (in units of 1/(2m)) of A against B."""
    if players == 3:
        # seatings of (A, B, C) over seats 0..2: A's seat, B's seat, C's seat
        perms = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]])
        beta = rng.normal(0, TAU, (n, 3))
        u = np.stack([delta / 2 + beta[:, perms[:, 0]], -delta / 2 + beta[:, perms[:, 1]],
                      THIRD + beta[:, perms[:, 2]]], axis=-1)     # (n, 6 seatings, 3 bots)
        noisy = u + rng.gumbel(size=u.shape)
        a_ahead = noisy[..., 0] > noisy[..., 1]
        return 2 * a_ahead.sum(axis=1)                             # twelfths: 2 per game
    beta = rng.normal(0, TAU, (n, 4))
    eps = beta[:, 0] + beta[:, 2] - beta[:, 1] - beta[:, 3]
    d = np.stack([2 * delta + eps, 2 * delta - eps], axis=1)       # the two tables
    tie = rng.random((n, 2)) < TIE
    win = rng.random((n, 2)) < expit(d)
    return np.where(tie, 1, 2 * win).sum(axis=1)                   # quarters


def run_sprts(players: int, elo: float, test: SPRT, matches: int, seed: int,
              max_sets: int) -> dict[str, int]:
    """Play ``matches`` simulated SPRT matches in lockstep (the LLR after every set) with
    A's true deal-averaged logistic Elo over B equal to ``elo``; count the verdicts."""
    share = share_3p if players == 3 else share_4p
    target = score_of(elo)
    delta = brentq(lambda d: share(d) - target, -3, 3, xtol=1e-12)
    m = 6 if players == 3 else 2
    rng = np.random.default_rng(seed)
    counts = np.zeros((matches, 2 * m + 1))
    verdict = np.full(matches, "", dtype=object)
    active = np.arange(matches)
    for _ in range(max_sets):
        k = draw_sets(rng, players, delta, len(active))
        counts[active, k] += 1
        v = llr(counts[active], test.elo0, test.elo1)
        h1, h0 = v >= test.upper, v <= test.lower
        verdict[active[h1]] = "H1"
        verdict[active[h0]] = "H0"
        active = active[~(h1 | h0)]
        if not len(active):
            break
    return {"H1": int(np.sum(verdict == "H1")), "H0": int(np.sum(verdict == "H0")),
            "open": int(np.sum(verdict == ""))}


@pytest.mark.parametrize("players", [3, 4])
def test_sprt_error_rates_in_simulated_matches(players):
    """1500 matches with A exactly elo0 above B (H0 true) and 1500 with A exactly elo1
    above (H1 true), sets drawn from a model with deal luck (a per-seat bonus shared by the
    set's games) whose deal-averaged Elo is worked out by quadrature. The wrong verdict
    must come at most alpha (beta) of the time, within sampling error: 3 binomial standard
    deviations, √(0.05 · 0.95 / 1500) = 0.0056, so at most 0.067 (a test twice as lax as
    it claims, 0.10, would fail). The SPRT must also finish: nearly every match decides."""
    test = SPRT(elo0=0, elo1=35, alpha=0.05, beta=0.05)
    n = 1500
    tol = 3 * math.sqrt(0.05 * 0.95 / n)
    h0 = run_sprts(players, test.elo0, test, n, seed=players, max_sets=3000)
    h1 = run_sprts(players, test.elo1, test, n, seed=10 + players, max_sets=3000)
    assert h0["H1"] / n <= test.alpha + tol, h0
    assert h1["H0"] / n <= test.beta + tol, h1
    assert h0["open"] + h1["open"] <= 0.002 * n, (h0, h1)
    # not vacuous: the right verdict is the usual one
    assert h0["H0"] / n >= 1 - test.alpha - tol and h1["H1"] / n >= 1 - test.beta - tol
