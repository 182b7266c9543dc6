"""Statistics of an A/B match scored by duplicate sets: A's score, the Elo difference with
its 95% interval, LOS, and the generalized sequential probability ratio test (GSPRT) as
fishtest and fastchess compute it (docs/match.md).

The unit. A *set* is one board played by A and B in every seating that cancels the deal:
with 3 players, A, B and a third bot in all 6 seatings; with 4 players, A's partnership
against B's at two tables with the partnerships swapped. Its games share the deal, so
they are correlated, and the set is the independent unit (with several third bots, make
the unit all the sets of a board). A game gives A 1 when it finished ahead of B, ½ for a
tie, 0 behind; the set's score is the mean over its ``m`` games, a multiple of 1/(2m) in
[0, 1]. With 4 players (m = 2) the set scores are the five classes of fastchess's
pentanomial model (LL, LD, LW+DD, DW, WW); with 3 players (m = 6) there are thirteen.

The model is fastchess's and fishtest's, generalized from 5 classes to 2m + 1: the sets
are draws from an unknown distribution over the 2m + 1 possible set scores, estimated by
their empirical frequencies. No further shape is assumed (the deal's luck and the third
bot can make it anything), and the games of a set are never treated as independent.

Elo is *logistic* Elo of A's expected score: ``elo = −400 log10(1/s − 1)``, the same scale
as the ladder's rating differences (a difference of D means A is ahead of B with
probability 1 / (1 + 10^(−D/400)), deal-averaged). ``elo0`` and ``elo1`` of the SPRT are in
logistic Elo too (fishtest's ``LLR_logistic``, fastchess's ``--sprt model=logistic``).

Everything here is pure: counts in, figures out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .intervals import (
    LEVEL,
    ZERO_SPREAD,
    Estimate,
    los_t,
    sign_los,
    sweep_bound,
    t_quantile,
)

REGULARIZE = 1e-3
"""Frequency given to a set score never seen, in the LLR only (as fishtest and fastchess
do): keeps every expected score between 0 and 1 reachable."""


def elo_of(score: float) -> float:
    """Logistic Elo of an expected score in (0, 1): −400 log10(1/score − 1); ±inf at 1
    and 0."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def score_of(elo: float) -> float:
    """The expected score of a logistic Elo difference: 1 / (1 + 10^(−elo/400))."""
    return 1 / (1 + 10 ** (-elo / 400))


def game_result(place_a: int, place_b: int) -> float:
    """A's result against B in one game from their places (1 = first): 1 ahead, ½ tied,
    0 behind."""
    return 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0


def set_score(results: Sequence[float]) -> float:
    """A set's score: the mean of A's game results against B (each 1, ½ or 0).

    Raises:
        ValueError: no games, or a result that is not 1, ½ or 0.
    """
    if not results:
        raise ValueError("a set needs at least one game")
    if any(r not in (0.0, 0.5, 1.0) for r in results):
        raise ValueError(f"a game result is 1, 0.5 or 0, not {results}")
    return sum(results) / len(results)


@dataclass(frozen=True)
class SetCounts:
    """How many sets ended with each possible score for A: ``counts[k]`` sets scored
    k / (2 × games), k = 0 .. 2 × games. With ``games = 2`` this is the pentanomial
    ``[LL, LD, LW+DD, DW, WW]``."""

    games: int
    """Games (comparisons of A with B) in every set."""
    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.games < 1 or len(self.counts) != 2 * self.games + 1:
            raise ValueError(f"{self.games} games a set need {2 * self.games + 1} counts, "
                             f"not {len(self.counts)}")
        if any(c < 0 for c in self.counts):
            raise ValueError("counts cannot be negative")

    @classmethod
    def of_scores(cls, scores: Iterable[float], games: int) -> SetCounts:
        """Count set scores (each a multiple of 1 / (2 × games) in [0, 1]).

        Raises:
            ValueError: a score off that grid.
        """
        counts = [0] * (2 * games + 1)
        for s in scores:
            k = Fraction(s).limit_denominator(4 * games) * 2 * games
            if k.denominator != 1 or not 0 <= k <= 2 * games or \
                    abs(float(k) / (2 * games) - s) > 1e-9:
                raise ValueError(f"set score {s} is not a multiple of 1/{2 * games} in "
                                 "[0, 1]: every set must have the same number of games")
            counts[int(k)] += 1
        return cls(games, tuple(counts))

    @property
    def values(self) -> np.ndarray:
        """The possible set scores, 0 .. 1 in steps of 1 / (2 × games)."""
        return np.arange(2 * self.games + 1) / (2 * self.games)

    @property
    def sets(self) -> int:
        """Sets counted."""
        return sum(self.counts)

    def add(self, score: float) -> SetCounts:
        """These counts with one more set."""
        return SetCounts.of_scores([score], self.games).plus(self)

    def plus(self, other: SetCounts) -> SetCounts:
        """The sum of two counts of the same set size."""
        if other.games != self.games:
            raise ValueError("counts of sets of different sizes cannot be added")
        return SetCounts(self.games, tuple(a + b for a, b in
                                           zip(self.counts, other.counts, strict=True)))


@dataclass(frozen=True)
class MatchStats:
    """What a match says so far (see the module doc)."""

    sets: int
    games: int
    score: float
    """A's mean score against B (0..1); nan with no set."""
    elo: Estimate
    """A's logistic Elo over B with its 95% interval: value ± t × SE, SE by the delta
    method from the sets' spread, t with sets − 1 degrees of freedom (see
    :mod:`.intervals`). One-sided when A won (or lost) every set; n/a with fewer than 2
    sets or when every set scored the same."""
    los: float | None
    """Likelihood that A is the stronger: Student's t at (score − ½) / SE; the sign test
    when every set scored the same; None with fewer than 2 sets."""


def match_stats(c: SetCounts, level: float = LEVEL) -> MatchStats:
    """Score, Elo difference with its interval, and LOS of A from its set counts."""
    n = c.sets
    if n == 0:
        return MatchStats(0, 0, math.nan, Estimate(math.nan, None, None, "no sets yet"),
                          None)
    counts = np.array(c.counts, dtype=float)
    a = c.values
    mu = float(counts @ a) / n
    var = float(counts @ (a - mu) ** 2) / n
    value = elo_of(mu)
    games = n * c.games
    if n < 2:
        return MatchStats(n, games, mu, Estimate(value, None, None, "1 set: no spread "
                                                 "between sets can be measured"), None)
    if var * n / (n - 1) < ZERO_SPREAD ** 2:
        if mu >= 1:
            bound = elo_of(1 - sweep_bound(n, level))
            return MatchStats(n, games, mu, Estimate(value, bound, None, "A won every set",
                                                     determined=False),
                              sign_los(n))
        if mu <= 0:
            bound = elo_of(sweep_bound(n, level))
            return MatchStats(n, games, mu, Estimate(value, None, bound, "B won every set",
                                                     determined=False),
                              1 - sign_los(n))
        los = 0.5 if abs(mu - 0.5) < ZERO_SPREAD else \
            sign_los(n) if mu > 0.5 else 1 - sign_los(n)
        return MatchStats(n, games, mu, Estimate(value, None, None, "every set scored the "
                                                 "same: no spread to measure"), los)
    se = math.sqrt(var / (n - 1))             # s / √n with the sample variance s²
    slope = 400 / math.log(10) / (mu * (1 - mu))
    m = t_quantile(n, level) * se * slope
    return MatchStats(n, games, mu, Estimate(value, value - m, value + m),
                      los_t(mu - 0.5, se, n))


# -- the GSPRT -------------------------------------------------------------------------------

def _mle_with_mean(p: np.ndarray, a: np.ndarray, s: float) -> np.ndarray:
    """The distribution over the scores ``a`` closest (maximum likelihood) to the empirical
    frequencies ``p`` (``(..., C)``, all positive) among those with mean ``s``:
    ``p_i / (1 + x (a_i − s))`` with x the root of Σ p_i (a_i − s) / (1 + x (a_i − s)) = 0
    (Van den Bergh, "Comments on normalized Elo", proposition 1.1). The root is found by
    Newton's method kept inside a shrinking bracket (bisection when a step leaves it) in
    the interval where every 1 + x (a_i − s) is positive; the sum decreases in x."""
    d = a - s
    lo = np.full(p.shape[:-1], -1 / d.max())
    hi = np.full(p.shape[:-1], -1 / d.min())
    x = np.zeros(p.shape[:-1])
    for _ in range(200):
        q = 1 + x[..., None] * d
        f = np.sum(p * d / q, axis=-1)
        df = -np.sum(p * d * d / (q * q), axis=-1)
        lo, hi = np.where(f > 0, x, lo), np.where(f > 0, hi, x)
        nxt = x - f / df
        nxt = np.where((nxt > lo) & (nxt < hi), nxt, (lo + hi) / 2)
        done = np.abs(nxt - x) <= 1e-14 * np.maximum(1.0, np.abs(x))
        x = nxt
        if np.all(done):
            break
    return p / (1 + x[..., None] * d)


def llr(c: SetCounts | np.ndarray, elo0: float, elo1: float) -> float | np.ndarray:
    """The generalized log-likelihood ratio of H1 (A's Elo over B is ``elo1``) against
    H0 (``elo0``), logistic Elo, from set counts: N × Σ p̂_i ln(p1_i / p0_i), where p̂ are
    the empirical frequencies (zero counts set to :data:`REGULARIZE`), N their total, and
    p0, p1 the distributions closest to p̂ with mean score L(elo0), L(elo1) (fishtest's
    ``LLR_logistic``). Also takes a ``(..., 2m + 1)`` array of counts and returns an array.

    Raises:
        ValueError: ``elo0 >= elo1``.
    """
    if not elo0 < elo1:
        raise ValueError(f"elo0 ({elo0}) must be below elo1 ({elo1})")
    counts = np.asarray(c.counts if isinstance(c, SetCounts) else c, dtype=float)
    counts = np.where(counts == 0, REGULARIZE, counts)
    a = np.arange(counts.shape[-1]) / (counts.shape[-1] - 1)
    total = counts.sum(axis=-1)
    p = counts / total[..., None]
    p0 = _mle_with_mean(p, a, score_of(elo0))
    p1 = _mle_with_mean(p, a, score_of(elo1))
    out = total * np.sum(p * (np.log(p1) - np.log(p0)), axis=-1)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class SPRT:
    """A sequential probability ratio test of H0: Elo = ``elo0`` against H1: Elo =
    ``elo1`` (logistic Elo of A over B), with error rates ``alpha`` (accepting H1 when H0
    holds) and ``beta`` (accepting H0 when H1 holds). Wald's bounds on the LLR.

    Raises:
        ValueError: ``elo0 >= elo1``, or ``alpha``/``beta`` outside (0, 1) or summing to 1
            or more.
    """

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 ({self.elo0}) must be below elo1 ({self.elo1})")
        for name in ("alpha", "beta"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ValueError(f"{name} must be between 0 and 1, not {v}")
        if self.alpha + self.beta >= 1:
            raise ValueError("alpha + beta must be below 1")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR: ln(β / (1 − α)) (−2.94 at 5% / 5%)."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR: ln((1 − β) / α) (+2.94 at 5% / 5%)."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, c: SetCounts) -> float:
        """The LLR of these counts (:func:`llr`)."""
        return float(llr(c, self.elo0, self.elo1))

    def decide(self, value: float) -> str | None:
        """``"H1"`` (A is stronger by elo1 or more), ``"H0"`` (by elo0 or less) once the
        LLR ``value`` crosses a bound, else None (play on)."""
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None
