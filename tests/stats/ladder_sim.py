"""Synthetic ladders with known strengths, for checking the rating intervals.

A ladder is the project's own schedule (:func:`arena.ladder.schedule.make_schedule`):
every board played by every group in every seating. Each board draws a deal bonus per
seat, β ~ N(0, τ²) in natural units, shared by every table that plays the board (the same
deal favours the same seats everywhere). A game's finishing order:

- 3 players: Plackett–Luce with utilities θ_bot + β_seat (a Gumbel draw per seat, sorted);
- 4 players: the partnership with the larger θ + β summed over its two seats, plus a
  logistic draw, is ahead (team Bradley–Terry).

The truth a rating estimates is the *deal-averaged* strength: the Bradley–Terry strengths
that best fit the pairwise results averaged over deals (the limit of the fit as boards grow
without end). :func:`true_ratings` computes it from the model directly — the deal average
by Gauss–Hermite quadrature, the fit by scipy's BFGS on the expected log-likelihood — and
shares no code with the project's fit.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from arena.ladder.schedule import make_schedule, tables_4
from arena.ladder.store import GameRow
from arena.stats.places import ALPHA, holm

ELO = 400 / math.log(10)


@dataclass(frozen=True)
class Setting:
    """One simulated ladder design."""

    players: int
    bots: int
    boards: int
    tau: float
    """Standard deviation of the per-board, per-seat deal bonus (natural units)."""
    spread: float = 150.0
    """The strengths run evenly from −spread to +spread Elo..."""
    strengths: tuple[float, ...] = ()
    """... unless given here (Elo, strongest first)."""
    ties: float = 0.0
    """The chance that a game ends with every side tied (a tie-heavy field)."""

    @property
    def names(self) -> list[str]:
        return [f"b{i}" for i in range(self.bots)]

    @property
    def theta(self) -> np.ndarray:
        """True strengths (natural units), strongest first."""
        if self.strengths:
            return np.array(self.strengths) / ELO
        return np.linspace(self.spread, -self.spread, self.bots) / ELO

    def __str__(self) -> str:
        return (f"{self.players}p {self.bots} bots {self.boards:2d} boards "
                f"luck {self.tau:.1f}" + (f" ties {self.ties:.1f}" if self.ties else "")
                + (f" Elo {self.strengths}" if self.strengths else ""))


class Ladder:
    """The schedule of a setting, drawn again and again with fresh luck."""

    def __init__(self, s: Setting) -> None:
        self.s = s
        self.schedule = make_schedule(s.names, s.players, s.boards, seed=1)
        idx = {b: i for i, b in enumerate(s.names)}
        self.seats = np.array([[idx[b] for b in g.seats] for g in self.schedule])
        self.board = np.array([g.board for g in self.schedule])
        # every game's row for each possible outcome, made once: a draw picks among them
        self.outcomes = [list(p) for p in itertools.permutations(range(1, 4))] \
            if s.players == 3 else [[1, 2], [2, 1]]
        self.outcomes.append([1] * (3 if s.players == 3 else 2))     # every side tied
        self.rows = [[GameRow(g.game_id, g.board, g.dset, s.players, "target", None, [], pl,
                              list(g.seats), 1, 0, 0) for pl in self.outcomes]
                     for g in self.schedule]

    def draw(self, rng: np.random.Generator) -> list[GameRow]:
        """One ladder's games with fresh luck."""
        s = self.s
        beta = rng.normal(0.0, s.tau, size=(s.boards, s.players))
        u = s.theta[self.seats] + beta[self.board]
        if s.players == 3:
            noisy = u + rng.gumbel(size=u.shape)
            places = np.argsort(np.argsort(-noisy, axis=1), axis=1)    # 0-based places
            # the index of the permutation (p0, p1, p2) of 0..2 in lexicographic order
            k = 2 * places[:, 0] + (places[:, 1] > places[:, 2])
        else:
            d = u[:, 0] + u[:, 2] - u[:, 1] - u[:, 3]
            k = (rng.random(len(d)) >= expit(d)).astype(int)          # 0: seats 0/2 first
        if s.ties:
            k = np.where(rng.random(len(k)) < s.ties, len(self.outcomes) - 1, k)
        return [rows[j] for rows, j in zip(self.rows, k.tolist(), strict=True)]


def _gh(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights for E[f(Z)], Z standard normal."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / w.sum()


def _pl_ahead(ui: np.ndarray, uj: np.ndarray, uk: np.ndarray) -> np.ndarray:
    """Plackett–Luce probability that i finishes ahead of j among i, j, k."""
    ei, ej, ek = np.exp(ui), np.exp(uj), np.exp(uk)
    s = ei + ej + ek
    return ei / s + ek / s * ei / (ei + ej)


def pair_probabilities(s: Setting) -> list[tuple[np.ndarray, float, float]]:
    """The deal-averaged comparisons of one board: ``(row, weight, P(row's first side is
    ahead))`` with ``row`` the +1/−1 design over the bots (a tie counts half each way)."""
    out = [(row, w, (1 - s.ties) * p + s.ties / 2) for row, w, p in _untied(s)]
    return out


def _untied(s: Setting) -> list[tuple[np.ndarray, float, float]]:
    th, n, tau = s.theta, s.bots, s.tau
    out = []
    if s.players == 3:
        z, wz = _gh(24)
        b1, b2, b3 = np.meshgrid(z * tau, z * tau, z * tau, indexing="ij")
        wt = wz[:, None, None] * wz[None, :, None] * wz[None, None, :]
        for i, j, k in itertools.combinations(range(n), 3):
            for a, b, c in ((i, j, k), (i, k, j), (j, k, i)):
                p = float(np.sum(wt * _pl_ahead(th[a] + b1, th[b] + b2, th[c] + b3)))
                row = np.zeros(n)
                row[a], row[b] = 1, -1
                out.append((row, 6.0, p))        # six seatings, one comparison each
        return out
    z, wz = _gh(60)
    names = s.names
    for t1, t2 in tables_4(names):
        row = np.zeros(n)
        for x in t1:
            row[names.index(x)] += 1
        for x in t2:
            row[names.index(x)] -= 1
        p = float(np.sum(wz * expit(row @ th + 2 * tau * z)))   # ε ~ N(0, 4τ²)
        out.append((row, 2.0, p))                # two tables, partnerships swapped
    return out


def true_ratings(s: Setting) -> np.ndarray:
    """Deal-averaged strengths (Elo, mean 0) of the setting's bots."""
    comps = pair_probabilities(s)
    x = np.array([c[0] for c in comps])
    w = np.array([c[1] for c in comps])
    p = np.array([c[2] for c in comps])

    def negll(t: np.ndarray) -> tuple[float, np.ndarray]:
        d = x @ t
        val = -np.sum(w * (p * log_expit(d) + (1 - p) * log_expit(-d))) + t.sum() ** 2
        grad = -(w * (p - expit(d))) @ x + 2 * t.sum()
        return float(val), grad

    res = minimize(negll, np.zeros(s.bots), jac=True, method="BFGS",
                   options={"gtol": 1e-10, "maxiter": 1000})
    t = res.x - res.x.mean()
    return t * ELO


# -- coverage ------------------------------------------------------------------------------

Interval = tuple[float | None, float | None]
"""``(low, high)`` on the Elo scale; None is an unbounded side (both None: n/a)."""


@dataclass(frozen=True)
class Scored:
    """What a rating method says of one ladder (Elo, field mean 1500)."""

    ratings: dict[str, Interval]
    difference: dict[tuple[str, str], Interval]
    """For every ordered pair of bots (a, b): the interval of a − b."""
    los: dict[tuple[str, str], float | None]
    places: dict[str, int] = field(default_factory=dict)
    """Each bot's place in the table (1 the best; bots told apart have different ones)."""
    anchor: tuple[str, ...] = ()
    """The bots whose mean the ratings are relative to (empty: every bot)."""
    table: tuple[str, ...] = ()
    """The bots in the table's order, best first (empty: the method has no table)."""
    neighbour_p: tuple[float | None, ...] = ()
    """The one-sided p-value of each claim "#k is stronger than #k+1" of ``table``."""


@dataclass
class Tally:
    """Coverage counts over many simulated ladders of one setting."""

    ladders: int = 0
    ratings: int = 0
    ratings_covered: int = 0
    ratings_na: int = 0
    ratings_one_sided: int = 0
    diffs: int = 0
    diffs_covered: int = 0
    diffs_na: int = 0
    ratings_two_sided: int = 0
    """Ratings with a two-sided interval..."""
    ratings_two_sided_covered: int = 0
    """... that cover (a bound far from an extreme truth covers by construction, so the
    two-sided figures are the ones that can tell a width too wide from right)."""
    diffs_two_sided: int = 0
    diffs_two_sided_covered: int = 0
    los_sure: int = 0
    """Pairs with LOS ≥ 95%."""
    los_sure_right: int = 0
    """... of which the truth has the same order."""
    los_tied: int = 0
    """Ordered pairs of bots of equal true strength..."""
    los_tied_sure: int = 0
    """... given an LOS ≥ 95% (should be at most 5% of them)."""
    false_places: int = 0
    """Ladders whose table places some bot above one that is not truly weaker."""
    separated: int = 0
    """Pairs of bots the table places apart (over all ladders)."""
    neighbours: int = 0
    """Neighbour claims "#k is stronger than #k+1" over all ladders..."""
    neighbours_holm: int = 0
    """... held by Holm's step-down (the table's places)..."""
    neighbours_plain: int = 0
    """... held by the plain per-claim test at the same level (p ≤ 2.5%)..."""
    neighbours_holm_wrong: int = 0
    """... of which the upper bot is not truly stronger, with Holm..."""
    neighbours_plain_wrong: int = 0
    """... and with the plain tests."""
    ladders_plain_wrong: int = 0
    """Ladders whose places from the plain per-claim tests put some bot above one that is
    not truly weaker (as ``false_places`` for Holm's)."""

    def rate(self, k: str) -> float:
        """``k`` over its whole: all ratings or differences, or their two-sided ones for
        ``*_two_sided_covered``."""
        n = getattr(self, k.removesuffix("_covered")) if "two_sided" in k else \
            self.ratings if k.startswith("ratings") else self.diffs
        return getattr(self, k) / n if n else math.nan


def covers(iv: Interval, truth: float) -> bool:
    """An interval covers the truth (an unbounded side covers everything; n/a claims
    nothing and so covers)."""
    low, high = iv
    return (low is None or low <= truth) and (high is None or truth <= high)


def project_method(games: list[GameRow], bots: list[str], bootstrap: int, seed: int) -> Scored:
    """The project's ratings: :func:`arena.ladder.ratings.rate`'s own fit and leaderboard."""
    from arena.ladder.ratings import ladder_fit, leaderboard
    from arena.stats.places import neighbour_p, places

    bf = ladder_fit(games, bots, bootstrap=bootstrap, seed=seed)
    table = leaderboard(bf)
    ratings = {r.bot: (r.low, r.high) for r in table}
    shown = places([r.los_next for r in table])
    place = {r.bot: int(p.rstrip("=")) for r, p in zip(table, shown, strict=True)}
    diff: dict[tuple[str, str], Interval] = {}
    los: dict[tuple[str, str], float | None] = {}
    for a, b in itertools.permutations(bots, 2):
        e = bf.difference(a, b)
        diff[a, b] = (e.low, e.high)
        los[a, b] = bf.los(a, b)
    return Scored(ratings, diff, los, place, tuple(bf.anchor_bots),
                  tuple(r.bot for r in table),
                  tuple(neighbour_p(r.los_next) for r in table[:-1]))


def _places_wrong(table: tuple[str, ...], held: list[bool], truth: dict[str, float]) -> bool:
    """Do the places that ``held`` neighbour claims give ``table`` (best first) put some bot
    above one that is not truly weaker?"""
    place = [sum(held[:k]) for k in range(len(table))]
    return any(place[i] < place[j] and truth[table[i]] <= truth[table[j]] + 1e-6
               for i, j in itertools.combinations(range(len(table)), 2))


def run(s: Setting, ladders: int, seed: int, bootstrap: int = 200,
        method=project_method) -> Tally:  # noqa: ANN001
    """Draw ``ladders`` ladders of setting ``s`` and count how often ``method``'s intervals
    cover the deal-averaged truth."""
    truth = dict(zip(s.names, 1500 + true_ratings(s), strict=True))
    lad = Ladder(s)
    rng = np.random.default_rng(seed)
    t = Tally()
    for k in range(ladders):
        sc = method(lad.draw(rng), s.names, bootstrap, seed + k)
        t.ladders += 1
        # a rating is relative to the mean of its anchor: so is the truth it estimates
        anchor = sc.anchor or tuple(s.names)
        shift = 1500 - sum(truth[b] for b in anchor) / len(anchor)
        for b, iv in sc.ratings.items():
            t.ratings += 1
            t.ratings_covered += covers(iv, truth[b] + shift)
            t.ratings_na += iv == (None, None)
            t.ratings_one_sided += (iv[0] is None) != (iv[1] is None)
            if iv[0] is not None and iv[1] is not None:
                t.ratings_two_sided += 1
                t.ratings_two_sided_covered += covers(iv, truth[b] + shift)
        for (a, b), iv in sc.difference.items():
            if a > b:          # each unordered pair once
                continue
            t.diffs += 1
            t.diffs_covered += covers(iv, truth[a] - truth[b])
            t.diffs_na += iv == (None, None)
            if iv[0] is not None and iv[1] is not None:
                t.diffs_two_sided += 1
                t.diffs_two_sided_covered += covers(iv, truth[a] - truth[b])
        wrong = False
        for a, b in itertools.permutations(sc.places, 2):
            if sc.places[a] < sc.places[b]:
                t.separated += 1
                wrong = wrong or truth[a] <= truth[b] + 1e-6
        t.false_places += wrong
        if sc.neighbour_p:
            held = holm(sc.neighbour_p)
            plain = [p is not None and p <= ALPHA for p in sc.neighbour_p]
            for k, (h, q) in enumerate(zip(held, plain, strict=True)):
                bad = truth[sc.table[k]] <= truth[sc.table[k + 1]] + 1e-6
                t.neighbours += 1
                t.neighbours_holm += h
                t.neighbours_plain += q
                t.neighbours_holm_wrong += h and bad
                t.neighbours_plain_wrong += q and bad
            t.ladders_plain_wrong += _places_wrong(sc.table, plain, truth)
        for (a, b), p in sc.los.items():
            tied = abs(truth[a] - truth[b]) < 1e-6
            t.los_tied += tied
            if p is not None and p >= 0.95:
                t.los_sure += 1
                t.los_sure_right += truth[a] > truth[b]
                t.los_tied_sure += tied
    return t
