"""Bradley–Terry strengths from pairwise comparisons, with intervals from a bootstrap over
whole boards (docs/ladder.md, "Ratings").

The model: ``P(side A ahead of side B) = σ(Σθ_A − Σθ_B)`` (a side is one bot, or a
partnership whose strength is the sum of its members'). A weak Gaussian prior (σ = 10 in
natural units) keeps the fit finite when one side never loses. Strengths are reported on
the Elo scale (400 / ln 10 per natural unit, so a difference of D Elo means the stronger
side is ahead with probability 1 / (1 + 10^(−D/400))) relative to the anchor's mean: the
field's mean, or, when the data separate some bots (below), the mean of the largest
strongly connected part of the beat graph.

Intervals. Every game of a board shares that board's luck (the same deal favours the same
seats at every table that plays it), so the unit of resampling is the *board*: all the
groups and tables that played it, together. The interval is the point fit ± t × SE, with
SE from the bootstrap spread scaled by √(G/(G − 1)) and t the quantile of Student's t
with G − 1 degrees of freedom, G the number of boards (:mod:`.intervals`), and the
margin t × SE is never below a floor of :data:`MARGIN_FLOOR` / √G. A resample that
separates bots the results do not (it drew none of the boards of a pair's only upsets)
would have its gap held by the prior alone, a figure of the prior rather than of the
data, and so inflate the spread; such a resample is one Newton step of its own posterior
from the point fit instead (the one-step bootstrap), every other resample a full refit.

Degenerate data. When some bots never finished behind some others (the "beat graph",
with an edge from every side that was ever ahead to the side it was ahead of, is not
strongly connected), the maximum-likelihood gap between them is infinite and the fit's
finite figure is set by the prior alone. The scale is then anchored on the largest
strongly connected part (the *anchor*): its bots keep their figures and two-sided
intervals, and the bots outside it (one that always lost, say), and the differences across
a separation, get a one-sided bound instead. For the bounds only, the separating
comparisons are softened to the largest share the trailing side could win unseen on its
boards (:func:`.intervals.sweep_bound`) and the bound is read from the fit and bootstrap
of the softened data; every two-sided figure resamples the results as played. A figure
whose bootstrap spread is zero (e.g. identical deterministic bots: every board ties them
exactly) has no interval (n/a).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple, TypeVar

import numpy as np
from scipy import sparse
from scipy.special import expit

from .intervals import (
    LEVEL,
    ZERO_SPREAD,
    Estimate,
    bootstrap_se,
    los_t,
    sign_los,
    sweep_bound,
    t_quantile,
)

ELO = 400 / math.log(10)
"""Elo points per natural unit of strength (173.7)."""
PRIOR_SIGMA = 10.0
"""Standard deviation of the Gaussian prior on each strength (natural units): weak, so
that it holds what the data leave unbounded (a bot that never lost) and barely pulls the
rest, large gaps included."""
MARGIN_FLOOR = 0.1
"""The least half-width of a two-sided 95% interval from one board (natural units, 17
Elo); with G boards the floor is MARGIN_FLOOR / √G (9 Elo at 4 boards), so a few boards
that happen to agree never give a width near 0 (``1470 ± 0`` at 4 boards). In simulation
a floor of 0.35 made an 8-bot field at 4 boards cover 0.99 instead of 0.95; 0.1 leaves
the coverage of every setting as it was (benchmarks/rating_coverage.py)."""


Board = TypeVar("Board", bound=Hashable)
"""A board's key (any hashable: its number on the ladder)."""


class Comparison(NamedTuple):
    """One pairwise outcome: the side ``ahead`` finished ahead of the side ``behind``,
    counted with ``weight`` (1 for a result, ½ each way for a tie). A side is a tuple of
    bot names (one bot, or a partnership; a name twice for a bot partnering its copy)."""

    ahead: tuple[str, ...]
    behind: tuple[str, ...]
    weight: float


class Design:
    """Comparisons gathered by board as a design matrix: one row per distinct
    ``(ahead, behind)`` pair of sides, with its total weight on each board.

    Attributes:
        bots: the bots, in the order of the columns.
        boards: the board keys, in the order of the weight rows.
        rows: ``(ahead, behind)`` of each row (sides as sorted tuples).
        x: ``(K, n)`` array: +1 per member of the side ahead, −1 per member behind.
        w: ``(G, K)`` array: the weight of each row on each board.

    Raises:
        ValueError: a comparison names a bot that is not in ``bots``.
    """

    def __init__(self, boards: Mapping[Board, Iterable[Comparison]],
                 bots: Sequence[str]) -> None:
        self.bots = tuple(bots)
        self.index = {b: i for i, b in enumerate(self.bots)}
        self.boards = list(boards)
        self.rows: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        row_of: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
        seen: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}   # as given → row
        cells: dict[tuple[int, int], float] = {}
        for g, key in enumerate(self.boards):
            for ahead, behind, weight in boards[key]:
                k = seen.get((ahead, behind))
                if k is None:
                    row = (tuple(sorted(ahead)), tuple(sorted(behind)))
                    k = row_of.get(row)
                    if k is None:
                        for b in (*ahead, *behind):
                            if b not in self.index:
                                raise ValueError(f"comparison names {b!r}, which is not one "
                                                 "of the bots rated")
                        k = row_of[row] = len(self.rows)
                        self.rows.append(row)
                    seen[ahead, behind] = k
                cells[g, k] = cells.get((g, k), 0.0) + weight
        self.x = np.zeros((len(self.rows), len(self.bots)))
        for k, (ahead, behind) in enumerate(self.rows):
            for b in ahead:
                self.x[k, self.index[b]] += 1
            for b in behind:
                self.x[k, self.index[b]] -= 1
        self.w = np.zeros((len(self.boards), len(self.rows)))
        for (g, k), v in cells.items():
            self.w[g, k] = v

    def reverse_row(self, k: int) -> int:
        """The row with ``k``'s sides swapped, added (with zero weights) if missing."""
        ahead, behind = self.rows[k]
        try:
            return self.rows.index((behind, ahead))
        except ValueError:
            self.rows.append((behind, ahead))
            self.x = np.vstack([self.x, -self.x[k]])
            self.w = np.hstack([self.w, np.zeros((self.w.shape[0], 1))])
            return len(self.rows) - 1


def fit_weights(x: np.ndarray, w: np.ndarray, prior_sigma: float = PRIOR_SIGMA,
                tol: float = 1e-9) -> np.ndarray:
    """Maximum a posteriori strengths (natural units, centred on their mean) for design
    ``x`` (``(K, n)``) and row weights ``w`` (``(K,)``, or ``(R, K)`` for R fits at once,
    e.g. bootstrap resamples): Newton's method with backtracking, vectorised over the R
    fits. Returns ``(n,)`` or ``(R, n)``."""
    single = w.ndim == 1
    w2 = np.atleast_2d(w).astype(float)
    r, n = w2.shape[0], x.shape[1]
    lam = 1.0 / prior_sigma ** 2
    # row k's outer product x_k x_kᵀ, flattened: the Hessian is Σ_k v_k x_k x_kᵀ
    outer = sparse.csr_matrix(np.einsum("ki,kj->kij", x, x).reshape(len(x), n * n)) \
        if len(x) else sparse.csr_matrix((0, n * n))
    eye = np.eye(n) * lam

    def loss(th: np.ndarray) -> np.ndarray:
        d = th @ x.T
        total: np.ndarray = (np.sum(w2 * np.logaddexp(0.0, -d), axis=1)
                             + 0.5 * lam * np.sum(th * th, axis=1))
        return total

    theta = np.zeros((r, n))
    f = loss(theta)
    for _ in range(100):
        p = expit(theta @ x.T)                      # P(the side ahead in row k is ahead)
        grad = -(w2 * (1.0 - p)) @ x + lam * theta
        hess = (outer.T @ (w2 * p * (1.0 - p)).T).T.reshape(r, n, n) + eye
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        slope = np.sum(grad * step, axis=1)         # ≥ 0: the Hessian is positive definite
        t = np.ones(r)
        for _ in range(40):
            new = theta - t[:, None] * step
            fn = loss(new)
            ok = fn <= f - 1e-4 * t * slope + 1e-12 * np.abs(f)
            if ok.all():
                break
            t = np.where(ok, t, t / 2)
        theta, f = new, fn
        if np.max(np.abs(t[:, None] * step)) < tol:
            break
    theta -= theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def newton_step(x: np.ndarray, w: np.ndarray, theta: np.ndarray,
                prior_sigma: float = PRIOR_SIGMA) -> np.ndarray:
    """One Newton step of the posterior from ``theta`` (``(n,)``, natural units) for each
    row of weights ``w`` (``(R, K)``) on design ``x`` (``(K, n)``): the gradient and
    Hessian of each row's own posterior at ``theta``, the step, centred on the mean (the
    one-step bootstrap's replicate). Returns ``(R, n)``."""
    lam = 1.0 / prior_sigma ** 2
    p = expit(x @ theta)
    grad = (w * (1.0 - p)) @ x - lam * theta
    hess = np.einsum("rk,ki,kj->rij", w * (p * (1.0 - p)), x, x) + lam * np.eye(x.shape[1])
    out: np.ndarray = theta + np.linalg.solve(hess, grad[..., None])[..., 0]
    centred: np.ndarray = out - out.mean(axis=1, keepdims=True)
    return centred


def reach_of(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``(R, n, n)``: for each row of weights ``w`` (``(R, K)``) on design ``x``
    (``(K, n)``), whether a chain of 'was ahead of' leads from bot i to bot j (every bot
    reaches itself)."""
    played = (w > 0).astype(float)
    ahead, behind = (x > 0).astype(float), (x < 0).astype(float)
    beat: np.ndarray = (np.einsum("ki,rk,kj->rij", ahead, played, behind) > 0) \
        | np.eye(x.shape[1], dtype=bool)
    while True:
        b = beat.astype(float)
        nxt = beat | (b @ b > 0)
        if (nxt == beat).all():
            return beat
        beat = nxt


def fit(comps: Sequence[Comparison], bots: Sequence[str]) -> dict[str, float]:
    """Maximum a posteriori strengths θ (natural units, mean 0) of ``bots`` from
    ``comps`` (see the module doc).

    Raises:
        ValueError: a comparison names a bot not in ``bots``.
    """
    if not comps:
        return {b: 0.0 for b in bots}
    d = Design({0: comps}, bots)
    th = fit_weights(d.x, d.w[0])
    return {b: float(th[i]) for i, b in enumerate(bots)}


class BoardFit:
    """Strengths of ``bots`` fitted to comparisons grouped by board, with 95% intervals of
    ratings and of differences, and likelihoods of superiority (see the module doc).

    Args:
        boards: the comparisons of every game of each board (all groups and tables that
            played it), keyed by board.
        bots: the bots to rate.
        bootstrap: resamples of whole boards (0: no intervals).
        seed: the bootstrap's random seed (the figures are reproducible).
        center: the Elo figure of the anchor's mean strength (1500 on the ladder).

    Raises:
        ValueError: a comparison names a bot not in ``bots``.
    """

    prior_sigma = PRIOR_SIGMA
    """The prior of every fit (natural units)."""
    margin_floor = MARGIN_FLOOR
    """The floor of a one-board interval's half-width (natural units; see
    :data:`MARGIN_FLOOR`)."""
    one_step_apart = True
    """A resample that separates bots the results do not is one Newton step from the
    point fit, not a refit (see the module doc)."""

    def __init__(self, boards: Mapping[Board, Iterable[Comparison]], bots: Sequence[str],
                 bootstrap: int = 200, seed: int = 0, center: float = 1500.0) -> None:
        self.design = d = Design(boards, bots)
        self.bots = d.bots
        self.center = center
        n = len(self.bots)
        self.boards = len(d.boards)
        self.theta = (fit_weights(d.x, d.w.sum(axis=0), self.prior_sigma) if len(d.rows)
                      else np.zeros(n))
        present = ((d.w > 0).astype(int) @ (d.x != 0).astype(int) > 0).astype(int)
        self.met = present.T @ present          # present[g, i]: bot i played on board g
        """``met[i, j]``: boards on which bots i and j both played."""
        self.reach = self._reach()
        """``reach[i, j]``: a chain of 'was ahead of' leads from bot i to bot j."""
        self.anchor = self._anchor()
        """The bots whose mean strength is ``center``: the largest strongly connected part
        of the beat graph (every bot there reaches every other and back), or every bot
        when no such part holds two bots."""
        self.samples = np.zeros((0, n))
        """Strengths refitted to resamples of the results as played (two-sided figures)."""
        counts: np.ndarray = np.zeros((0, self.boards), dtype=int)
        self.apart = np.zeros(0, dtype=bool)
        """Which resamples separate bots the results do not (one Newton step each)."""
        if bootstrap > 0 and self.boards >= 2 and len(d.rows):
            rng = np.random.default_rng(seed)
            counts = rng.multinomial(self.boards, np.full(self.boards, 1 / self.boards),
                                     size=bootstrap)
            weights = counts @ d.w
            self.apart = np.zeros(len(counts), dtype=bool)
            if self.one_step_apart:
                # a resample that separates bots the results do not (it missed the boards
                # of a pair's only upsets) has its gap held by the prior alone: one Newton
                # step from the point fit measures it instead, the others are refitted
                self.apart = (reach_of(d.x, weights) != self.reach).any(axis=(1, 2))
            self.samples = np.zeros((len(counts), n))
            if self.apart.any():
                self.samples[self.apart] = newton_step(
                    d.x, weights[self.apart], self.theta, self.prior_sigma)
            if not self.apart.all():
                self.samples[~self.apart] = fit_weights(d.x, weights[~self.apart],
                                                        self.prior_sigma)
        self.counts = counts
        """The bootstrap's resamples: how many times each board is drawn in each."""
        separated = not self.reach.all()
        if separated:
            # the softened copy only bounds what the results cannot: the two-sided
            # figures above resample the results as played (softening them in place
            # would add the trailing side's share to every resample: information
            # without spread, intervals too narrow)
            self._soften()
        self.soft = (fit_weights(d.x, d.w.sum(axis=0), self.prior_sigma) if separated
                     else self.theta)
        """The point fit of the softened data (the raw fit when nothing is separated)."""
        self.soft_samples = (fit_weights(d.x, counts @ d.w, self.prior_sigma)
                             if separated and len(counts) else self.samples)
        """The softened data's resamples (the bounds' margins)."""

    def _reach(self) -> np.ndarray:
        d = self.design
        reach: np.ndarray = reach_of(d.x, d.w.sum(axis=0)[None, :])[0]
        return reach

    def _anchor(self) -> np.ndarray:
        """Indices of the anchor (see ``anchor``): of equal-sized parts, the strongest."""
        n = len(self.bots)
        both = self.reach & self.reach.T
        parts = {tuple(np.flatnonzero(both[i])) for i in range(n)}
        best = max(parts, key=lambda p: (len(p), float(np.mean(self.theta[list(p)]))),
                   default=())
        return np.array(best if len(best) >= 2 else range(n), dtype=int)

    def _soften(self) -> None:
        """Move the largest unseen share (:func:`sweep_bound` over the boards a separating
        row was played on) of every separating row to its reverse."""
        d = self.design
        reach = self.reach
        for k in range(len(d.rows)):
            ahead = np.flatnonzero(d.x[k] > 0)
            behind = np.flatnonzero(d.x[k] < 0)
            if not any(not reach[b, a] for a in ahead for b in behind):
                continue
            played = int(np.count_nonzero(d.w[:, k] > 0))
            if not played:
                continue
            u = sweep_bound(played)
            rev = d.reverse_row(k)
            moved = d.w[:, k] * u
            d.w[:, k] -= moved
            d.w[:, rev] += moved

    # -- figures -------------------------------------------------------------------------

    def _i(self, bot: str) -> int:
        return self.design.index[bot]

    @property
    def anchor_bots(self) -> list[str]:
        """The bots whose mean is ``center`` (all of them unless the data separate some)."""
        return [self.bots[i] for i in self.anchor]

    def dominates(self, a: str, b: str) -> bool:
        """``a`` was never behind ``b``, directly or through a chain of results, while ``b``
        is behind ``a`` that way: the data cannot bound how much stronger ``a`` is."""
        i, j = self._i(a), self._i(b)
        return bool(self.reach[i, j] and not self.reach[j, i])

    def _se(self, vec: np.ndarray, soft: bool = False) -> float:
        """Standard error of the contrast ``vec · θ`` over the bootstrap of the results as
        played (``soft``: of the softened data, for a bound), never so small that the 95%
        margin falls below ``margin_floor`` / √boards."""
        samples = self.soft_samples if soft else self.samples
        se = float(bootstrap_se(samples @ vec, self.boards))
        if se < ZERO_SPREAD:
            return se
        return max(se, self.margin_floor / (t_quantile(self.boards) * math.sqrt(self.boards)))

    def _no_interval(self) -> str:
        if self.boards < 2:
            return f"{self.boards} board{'s' if self.boards != 1 else ''}: no spread " \
                   "between boards can be measured"
        if not len(self.samples):
            return "no bootstrap"
        return ""

    def _contrast(self, i: int) -> np.ndarray:
        """θ_i − the anchor's mean θ, as a vector over the bots."""
        vec = np.zeros(len(self.bots))
        vec[self.anchor] -= 1 / len(self.anchor)
        vec[i] += 1
        return vec

    def rating(self, bot: str) -> Estimate:
        """``bot``'s rating: Elo relative to the anchor's mean (``center``), with its 95%
        interval: two-sided for a bot of the anchor, a bound for one above or below it."""
        i = self._i(bot)
        vec = self._contrast(i)
        value = self.center + ELO * float(vec @ self.theta)
        why = self._no_interval()
        if why:
            return Estimate(value, None, None, why)
        ahead_all = bool(self.reach[i, self.anchor].all())      # reaches every anchor bot
        behind_all = bool(self.reach[self.anchor, i].all())     # ... and is reached back
        if ahead_all and behind_all:                            # a bot of the anchor
            se = self._se(vec)
            if se < ZERO_SPREAD:
                return Estimate(value, None, None, "every board gave the same result: "
                                "no spread to measure")
            m = t_quantile(self.boards) * se * ELO
            return Estimate(value, value - m, value + m)
        above = [b for j, b in enumerate(self.bots) if self.reach[i, j] and not self.reach[j, i]]
        below = [b for j, b in enumerate(self.bots) if self.reach[j, i] and not self.reach[i, j]]
        apart = [b for j, b in enumerate(self.bots) if not self.reach[i, j]
                 and not self.reach[j, i]]
        notes = []
        if above:
            notes.append("never behind " + ", ".join(above))
        if below:
            notes.append("never ahead of " + ", ".join(below))
        if apart:
            notes.append("never compared with " + ", ".join(apart))
        bound = self.center + ELO * float(vec @ self.soft)
        m = t_quantile(self.boards) * self._se(vec, soft=True) * ELO
        low = bound - m if ahead_all and not behind_all else None
        high = bound + m if behind_all and not ahead_all else None
        return Estimate(value, low, high, "; ".join(notes), determined=False)

    def difference(self, a: str, b: str) -> Estimate:
        """The rating of ``a`` minus that of ``b`` (Elo) with its 95% interval: what "is
        ``a`` stronger than ``b``?" needs (it is narrower than the two ratings' intervals
        suggest when both share the same boards)."""
        i, j = self._i(a), self._i(b)
        value = ELO * float(self.theta[i] - self.theta[j])
        why = self._no_interval()
        if why:
            return Estimate(value, None, None, why)
        vec = np.zeros(len(self.bots))
        vec[i], vec[j] = 1.0, -1.0
        if self.dominates(a, b) or self.dominates(b, a):
            m = t_quantile(self.boards) * self._se(vec, soft=True) * ELO
            soft = ELO * float(self.soft[i] - self.soft[j])
            if self.dominates(a, b):
                return Estimate(value, soft - m, None, f"{a} never behind {b}",
                                determined=False)
            return Estimate(value, None, soft + m, f"{a} never ahead of {b}",
                            determined=False)
        if not self.reach[i, j]:
            return Estimate(value, None, None, f"{a} and {b} never compared",
                            determined=False)
        se = self._se(vec)
        if se < ZERO_SPREAD:
            return Estimate(value, None, None, "every board gave the same result: no "
                            "spread to measure")
        m = t_quantile(self.boards) * se * ELO
        return Estimate(value, value - m, value + m)

    def los(self, a: str, b: str) -> float | None:
        """Likelihood of superiority of ``a`` over ``b`` (0..1): Student's t distribution
        at the difference over its standard error (boards − 1 degrees of freedom); the sign
        test 1 − ½^G when one never finished behind the other on G boards; ½ for a
        difference of exactly zero on every board. None without an interval."""
        i, j = self._i(a), self._i(b)
        if self._no_interval():
            return None
        met = int(self.met[i, j])
        if self.dominates(a, b):
            return sign_los(met) if met else None
        if self.dominates(b, a):
            return 1 - sign_los(met) if met else None
        if not self.reach[i, j]:
            return None
        vec = np.zeros(len(self.bots))
        vec[i], vec[j] = 1.0, -1.0
        se = self._se(vec)
        diff = float(self.theta[i] - self.theta[j])
        if se < ZERO_SPREAD:
            if abs(diff) < ZERO_SPREAD:
                return 0.5
            return sign_los(self.boards) if diff > 0 else 1 - sign_los(self.boards)
        return los_t(diff, se, self.boards)


__all__ = ["ELO", "LEVEL", "PRIOR_SIGMA", "MARGIN_FLOOR", "BoardFit", "Comparison", "Design", "fit",
           "fit_weights", "newton_step", "reach_of"]
