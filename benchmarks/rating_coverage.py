"""How often do the ladder's 95% rating intervals cover the truth, and how often do its
places hold as a whole table? Simulated ladders with known strengths, today's method
beside the previous ones, per setting, in one run.

    .venv/bin/python benchmarks/rating_coverage.py [--ladders 200] [--bootstrap 200]
        [--quick] [--only TEXT] [--skip TEXT] [--method all|sets+pct,before,refit,now,sandwich]
        [--power]

The ladders come from ``tests/stats/ladder_sim.py`` (the project's schedule; Plackett–Luce
finishing orders, or team Bradley–Terry with 4 players, plus a per-board, per-seat deal
bonus, and optionally games that end with every side tied; the truth is the
deal-averaged strength, computed from the model). Methods:

- ``now``: the project's :func:`arena.ladder.ratings.rate` (a bootstrap of whole boards
  of the results as played, t quantile with boards − 1 degrees of freedom and a floor,
  the scale anchored on the strongly connected part of the results, one-sided bounds from
  softened results only where the data cannot bound, places by Holm's step-down; a
  resample that separates bots the results do not is one Newton step from the point fit).
- ``refit``: the same with every resample refitted (:class:`RefitFit`: the method before
  the one-step resamples, whose separated resamples' gaps the prior held).
- ``sandwich``: the same with every two-sided standard error cluster-robust by board
  (:class:`SandwichFit`: the sandwich at the point fit) instead of the bootstrap's
  standard deviation, a candidate measured beside it.
- ``before``: the same before whole tables (:class:`BeforeFit`: a prior of σ = 3, no
  floor, the field's mean as the anchor, the bootstrap of the softened results for every
  figure, a place per neighbour test at 95%).
- ``sets+pct``: the bootstrap of duplicate sets as if independent, with the 2.5–97.5
  percentiles as the interval and the share of resamples as LOS (the ladder's method
  before the bootstrap resampled boards).

Settings, each at 4, 12 and 48 boards: evenly spread fields (3 or 8 bots, 3 or 4 players,
no deal luck or strong), two equal bots and a weaker one, a field with a bot that always
loses (3 and 4 players), 8 bots in 4 pairs of equal strength, a tie-heavy field (half the
games end with every side tied), and 4 bots with 4 players. (The 4-player 8-bot fields
take minutes a setting: ``--skip "4p 8 bots"``, or fewer ``--ladders`` for them.)

Columns: coverage of the bots' ratings (the truth taken relative to the method's anchor),
of the differences of every pair, the same of the two-sided intervals alone ("2-sided": a
one-sided bound on an extreme truth, such as the always-losing bot's, covers by
construction, and n/a counts as covering), the share of n/a intervals, the share of one-sided
ratings, "wrong": the share of ladders whose places put some bot above one that is not
truly weaker (whole-table false separation), "apart": pairs placed apart per ladder, how
often "LOS ≥ 95%" had the order right (with how many such claims), and how often two bots
of equal strength got an LOS ≥ 95% (at most 5%). A figure, not a test
(tests/stats/test_coverage.py holds the asserted version).

``--power``: Holm's cost instead, in fields of 8 bots evenly spaced 25, 50 or 100 Elo
apart (3 players, luck 1.5; at 4, 12 and 48 boards): neighbours told apart per ladder by
the table's places (Holm's step-down) and by the plain per-pair test at the same level
(p ≤ 2.5%, "the 95% interval of the difference excludes 0"), and the share of ladders
whose places put some bot above one that is not truly stronger with each.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from stats.ladder_sim import Scored, Setting, project_method, run  # noqa: E402

from arena.ladder.ratings import ELO, boards_of, comparisons, leaderboard  # noqa: E402
from arena.stats.bradley_terry import BoardFit, Design, fit_weights  # noqa: E402
from arena.stats.intervals import ZERO_SPREAD, t_quantile  # noqa: E402
from arena.stats.places import neighbour_p, places  # noqa: E402


def board_influence(x: np.ndarray, w: np.ndarray, theta: np.ndarray,
                    prior_sigma: float) -> np.ndarray:
    """Each board's influence on the strengths ``theta`` (``(n,)``, fitted to design ``x``
    (``(K, n)``) with board weights ``w`` (``(G, K)``, G ≥ 2)): row g is H⁻¹ (s_g − s̄)
    √(G / (G − 1)), H the posterior's Hessian, s_g board g's score. Its Gram matrix is the
    board-clustered (sandwich) covariance; a contrast's standard error is the norm of
    ``influence @ c``. Returns ``(G, n)``."""
    g = w.shape[0]
    p = expit(x @ theta)
    hess = (x * (w.sum(axis=0) * p * (1 - p))[:, None]).T @ x \
        + np.eye(x.shape[1]) / prior_sigma ** 2
    scores = (w * (1 - p)) @ x
    scores -= scores.mean(axis=0)
    return np.linalg.solve(hess, scores.T).T * math.sqrt(g / (g - 1))


class SandwichFit(BoardFit):
    """The project's fit with every two-sided standard error cluster-robust by board (the
    sandwich at the point fit, the linearisation of the board bootstrap) instead of the
    bootstrap's standard deviation; the bounds unchanged."""

    def __init__(self, boards, bots, **kwargs) -> None:  # noqa: ANN001, ANN003
        d = Design(boards, bots)
        super().__init__(boards, bots, **kwargs)
        self.influence = (board_influence(d.x, d.w, self.theta, self.prior_sigma)
                          if len(d.rows) and self.boards >= 2 else None)

    def _se(self, vec: np.ndarray, soft: bool = False) -> float:
        if soft or self.influence is None:
            return super()._se(vec, soft)
        se = float(np.linalg.norm(self.influence @ vec))
        if se < ZERO_SPREAD:
            return se
        return max(se, self.margin_floor / (t_quantile(self.boards) * math.sqrt(self.boards)))


def sandwich(games, bots, bootstrap, seed) -> Scored:  # noqa: ANN001
    """The ratings with :class:`SandwichFit`, places by Holm's step-down."""
    return _scored(SandwichFit(boards_of(games), bots, bootstrap=bootstrap, seed=seed), bots)


class RefitFit(BoardFit):
    """The project's fit before the one-step resamples: every resample refitted, those
    that separate bots the results do not included (their gap held by the prior)."""

    one_step_apart = False


def refit(games, bots, bootstrap, seed) -> Scored:  # noqa: ANN001
    """The ratings with :class:`RefitFit`, places by Holm's step-down."""
    return _scored(RefitFit(boards_of(games), bots, bootstrap=bootstrap, seed=seed), bots)


def _scored(bf: BoardFit, bots: list[str]) -> Scored:
    """What a fit says of one ladder, its places by Holm's step-down."""
    table = leaderboard(bf)
    shown = places([r.los_next for r in table])
    place = {r.bot: int(p.rstrip("=")) for r, p in zip(table, shown, strict=True)}
    diff, los = {}, {}
    for a, b in itertools.permutations(bots, 2):
        e = bf.difference(a, b)
        diff[a, b] = (e.low, e.high)
        los[a, b] = bf.los(a, b)
    return Scored({r.bot: (r.low, r.high) for r in table}, diff, los, place,
                  tuple(bf.anchor_bots), tuple(r.bot for r in table),
                  tuple(neighbour_p(r.los_next) for r in table[:-1]))


class BeforeFit(BoardFit):
    """The fit before whole tables: a prior of σ = 3, no floor, the field's mean as the
    anchor (every bot one-sided once any is separated), and a bootstrap of the softened
    data for every figure."""

    prior_sigma = 3.0
    margin_floor = 0.0
    one_step_apart = False

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.samples = self.soft_samples

    def _anchor(self) -> np.ndarray:
        return np.arange(len(self.bots))


def before(games, bots, bootstrap, seed) -> Scored:  # noqa: ANN001
    """The ratings before: :class:`BeforeFit`, a place per neighbour test at 95%."""
    bf = BeforeFit(boards_of(games), bots, bootstrap=bootstrap, seed=seed)
    table = leaderboard(bf)
    place, start = {}, 0
    for k, r in enumerate(table):
        d = table[k - 1].diff_next if k else None
        if d is not None and d.low is not None and d.low > 0:
            start = k
        place[r.bot] = start + 1
    diff, los = {}, {}
    for a, b in itertools.permutations(bots, 2):
        e = bf.difference(a, b)
        diff[a, b] = (e.low, e.high)
        los[a, b] = bf.los(a, b)
    return Scored({r.bot: (r.low, r.high) for r in table}, diff, los, place, ())


def sets_percentile(games, bots, bootstrap, seed) -> Scored:  # noqa: ANN001
    """The previous method: resample duplicate sets, percentile intervals, LOS as the share
    of resamples (ties half)."""
    by_set: dict[str, list] = {}
    for g in games:
        by_set.setdefault(g.dset, []).extend(comparisons(g))
    d = Design(by_set, bots)
    point = fit_weights(d.x, d.w.sum(axis=0))
    rng = np.random.default_rng(seed)
    g = len(d.boards)
    counts = rng.multinomial(g, np.full(g, 1 / g), size=bootstrap)
    samples = fit_weights(d.x, counts @ d.w)
    lo_i, hi_i = int(0.025 * (bootstrap - 1)), int(np.ceil(0.975 * (bootstrap - 1)))

    def pct(v: np.ndarray) -> tuple[float, float]:
        s = np.sort(v)
        return float(s[lo_i]) * ELO, float(s[hi_i]) * ELO

    ratings = {}
    for i, b in enumerate(bots):
        lo, hi = pct(samples[:, i])
        ratings[b] = (1500 + lo, 1500 + hi)
    diff, los = {}, {}
    for (i, a), (j, b) in itertools.permutations(enumerate(bots), 2):
        diff[a, b] = pct(samples[:, i] - samples[:, j])
        x = samples[:, i] - samples[:, j]
        los[a, b] = float(np.mean((x > 1e-9) + 0.5 * (np.abs(x) <= 1e-9)))
    del point
    return Scored(ratings, diff, los)


LOSER = -3000.0
"""A bot that always loses (Elo): it finishes ahead about once in 10⁵ comparisons."""
EQUAL_PAIRS = (150.0, 150.0, 50.0, 50.0, -50.0, -50.0, -150.0, -150.0)
"""8 bots in 4 pairs of equal strength (Elo)."""
BOARDS = (4, 12, 48)
"""The numbers of boards every setting is measured at."""
SETTINGS = ([Setting(p, n, g, tau) for p in (3, 4) for n in (3, 8) for g in BOARDS
             for tau in (0.0, 1.5)]
            + [Setting(3, 3, g, 1.5, strengths=(50.0, 50.0, -100.0)) for g in BOARDS]
            + [Setting(p, 5, g, 1.5, strengths=(150.0, 50.0, -50.0, -150.0, LOSER))
               for p in (3, 4) for g in BOARDS]
            + [Setting(3, 8, g, 1.5, strengths=EQUAL_PAIRS) for g in BOARDS]
            + [Setting(p, 3, g, 1.5, ties=0.5) for p in (3, 4) for g in BOARDS]
            + [Setting(4, 4, g, 1.5) for g in BOARDS])


POWER_GAPS = (25.0, 50.0, 100.0)
"""Elo between neighbours in the fields of truly different bots (Holm's power cost)."""
POWER_SETTINGS = [Setting(3, 8, g, 1.5, spread=3.5 * gap)
                  for gap in POWER_GAPS for g in (4, 12, 48)]


def power(a: argparse.Namespace) -> None:
    """Holm's cost: neighbours told apart by the table's places against the plain per-claim
    tests at the same level, in fields of 8 bots evenly spaced (every claim true or
    false, none tied)."""
    print(f"{a.ladders} ladders per setting, {a.bootstrap} resamples; 8 bots evenly spaced, "
          "luck 1.5; neighbours told apart per ladder (of 7), Holm / plain 95% per pair; "
          "ladders with a wrong claim, Holm / plain")
    print(f"{'gap':>5} {'boards':>6} {'ladders':>7} {'Holm':>6} {'plain':>6} "
          f"{'wrong':>13} {'s':>4}")
    for s in POWER_SETTINGS:
        if a.only not in str(s):
            continue
        t0 = time.process_time()
        t = run(s, a.ladders, a.seed, a.bootstrap)
        gap = 2 * s.spread / (s.bots - 1)
        print(f"{gap:5.0f} {s.boards:6d} {t.ladders:7d} {t.neighbours_holm / t.ladders:6.2f} "
              f"{t.neighbours_plain / t.ladders:6.2f} {t.false_places / t.ladders:6.3f} / "
              f"{t.ladders_plain_wrong / t.ladders:5.3f} {time.process_time() - t0:4.0f}",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ladders", type=int, default=200)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="40 ladders, 100 resamples")
    ap.add_argument("--only", default="", help="only the settings whose name holds this")
    ap.add_argument("--skip", default="", help="leave out the settings whose name holds this")
    ap.add_argument("--method", default="all",
                    help="all, or some of sets+pct, before, refit, now, sandwich "
                    "(comma-separated)")
    ap.add_argument("--power", action="store_true",
                    help="Holm's power cost in fields of truly different bots instead")
    a = ap.parse_args()
    if a.quick:
        a.ladders, a.bootstrap = 40, 100
    if a.power:
        power(a)
        return
    print(f"{a.ladders} ladders per setting, {a.bootstrap} resamples; strengths evenly "
          "from +150 to −150 Elo; luck: sd of the deal bonus per seat (natural units); "
          "2-sided: the coverage of the two-sided intervals alone, ratings / differences")
    print(f"{'setting':44} {'method':8} {'ratings':>7} {'diffs':>6} {'2-sided':>13} "
          f"{'n/a':>5} {'1-side':>6} {'wrong':>5} {'apart':>5} {'LOS≥95% right':>15} "
          f"{'tied':>5} {'s':>4}")
    methods = (("sets+pct", sets_percentile), ("before", before), ("now", project_method),
               ("refit", refit), ("sandwich", sandwich))
    for s in SETTINGS:
        if a.only not in str(s) or (a.skip and a.skip in str(s)):
            continue
        for name, method in methods:
            if a.method != "all" and name not in a.method.split(","):
                continue
            t0 = time.process_time()
            t = run(s, a.ladders, a.seed, a.bootstrap, method=method)
            right = t.los_sure_right / t.los_sure if t.los_sure else float("nan")
            na = (t.ratings_na + t.diffs_na) / (t.ratings + t.diffs)
            tied = f"{t.los_tied_sure / t.los_tied:5.3f}" if t.los_tied else "    -"
            wrong = f"{t.false_places / t.ladders:5.3f}" if name != "sets+pct" else "    -"
            apart = f"{t.separated / t.ladders:5.1f}" if name != "sets+pct" else "    -"
            print(f"{str(s)[:44]:44} {name:8} {t.rate('ratings_covered'):7.3f} "
                  f"{t.rate('diffs_covered'):6.3f} "
                  f"{t.rate('ratings_two_sided_covered'):6.3f}/"
                  f"{t.rate('diffs_two_sided_covered'):6.3f} {na:5.3f} "
                  f"{t.rate('ratings_one_sided'):6.3f} {wrong} {apart} "
                  f"{right:8.3f} ({t.los_sure:5d}) {tied} {time.process_time() - t0:4.0f}",
                  flush=True)


if __name__ == "__main__":
    main()
