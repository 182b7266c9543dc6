"""Ratings: a batch fit over all games with bootstrap confidence intervals, and an
OpenSkill live view.

The batch model is Bradley–Terry on pairwise outcomes with additive team strengths:
``P(A ahead of B) = σ(Σθ_A − Σθ_B)``. A 3-player game is broken into its pairwise
results (full rank-breaking of a Plackett–Luce finishing order, which gives consistent
estimates of the Plackett–Luce strengths — Azari Soufiani et al., NeurIPS 2013); a tie in
places counts half each way. A 4-player game is one comparison of the two partnerships
(team Bradley–Terry). A weak Gaussian prior (σ = 3) keeps the fit finite when one bot
wins every game. Bots are fixed versions, so one fit over all games is the honest figure;
its 95% interval comes from a bootstrap over whole duplicate sets (the unit that shares a
deal). Ratings are shown on the Elo scale (400 / ln 10 per unit of θ), mean 1500. The same
bootstrap gives each bot's likelihood of superiority (LOS, as cutechess reports it) over
the bot rated just below it: how often its strength came out higher.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from .store import GameRow

ELO = 400 / math.log(10)
PRIOR_SIGMA = 3.0


@dataclass(frozen=True)
class Comparison:
    """One pairwise outcome: ``ahead`` beat ``behind`` with ``weight``."""

    ahead: tuple[str, ...]
    behind: tuple[str, ...]
    weight: float


def comparisons(game: GameRow) -> list[Comparison]:
    """The pairwise outcomes of a game (see the module doc)."""
    out: list[Comparison] = []
    if game.players == 4:
        teams = [(game.seats[0], game.seats[2]), (game.seats[1], game.seats[3])]
        p0, p1 = game.places[0], game.places[1]
        if p0 < p1:
            out.append(Comparison(teams[0], teams[1], 1.0))
        elif p1 < p0:
            out.append(Comparison(teams[1], teams[0], 1.0))
        else:
            out += [Comparison(teams[0], teams[1], 0.5), Comparison(teams[1], teams[0], 0.5)]
        return out
    for i in range(3):
        for j in range(i + 1, 3):
            a, b = game.seats[i], game.seats[j]
            if a == b:
                continue
            pa, pb = game.places[i], game.places[j]
            if pa < pb:
                out.append(Comparison((a,), (b,), 1.0))
            elif pb < pa:
                out.append(Comparison((b,), (a,), 1.0))
            else:
                out += [Comparison((a,), (b,), 0.5), Comparison((b,), (a,), 0.5)]
    return out


def fit(comps: Sequence[Comparison], bots: Sequence[str]) -> dict[str, float]:
    """Maximum a posteriori strengths θ (natural units, mean 0) of ``bots``."""
    index = {b: i for i, b in enumerate(bots)}
    n = len(bots)
    if not comps:
        return {b: 0.0 for b in bots}
    a = np.zeros((len(comps), n))
    w = np.empty(len(comps))
    for k, c in enumerate(comps):
        for b in c.ahead:
            a[k, index[b]] += 1
        for b in c.behind:
            a[k, index[b]] -= 1
        w[k] = c.weight

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        d = a @ theta
        loss = float(np.sum(w * np.logaddexp(0.0, -d)) + theta @ theta / (2 * PRIOR_SIGMA**2))
        p_wrong = 1.0 / (1.0 + np.exp(d))
        grad = -(a.T @ (w * p_wrong)) + theta / PRIOR_SIGMA**2
        return loss, grad

    res = minimize(nll, np.zeros(n), jac=True, method="L-BFGS-B")
    theta = res.x - res.x.mean()
    return {b: float(theta[index[b]]) for b in bots}


def to_elo(theta: float) -> float:
    """θ on the Elo scale around 1500."""
    return 1500 + ELO * theta


@dataclass(frozen=True)
class Rating:
    """A bot's batch rating with its bootstrap interval (Elo scale)."""

    bot: str
    rating: float
    low: float
    high: float
    los_next: float | None = None
    """Likelihood of superiority over the bot rated just below (0..1): the share of the
    bootstrap fits in which this bot's strength is the higher (ties half); None for the
    last bot, or without a bootstrap."""

    @property
    def margin(self) -> float:
        """Half the interval's width, for "± x"."""
        return (self.high - self.low) / 2


def rate(games: Iterable[GameRow], bots: Sequence[str], bootstrap: int = 200,
         seed: int = 0) -> list[Rating]:
    """Batch ratings of ``bots`` with 95% intervals from ``bootstrap`` resamples of whole
    duplicate sets; best first."""
    by_set: dict[str, list[Comparison]] = {}
    for g in games:
        by_set.setdefault(g.dset, []).extend(comparisons(g))
    sets = list(by_set.values())
    point = fit([c for s in sets for c in s], bots)
    samples: dict[str, list[float]] = {b: [] for b in bots}
    rng = random.Random(seed)
    if sets:
        for _ in range(bootstrap):
            pick = [c for _ in sets for c in rng.choice(sets)]
            th = fit(pick, bots)
            for b in bots:
                samples[b].append(th[b])
    out = []
    for b in bots:
        s = sorted(samples[b])
        if s:
            lo, hi = s[int(0.025 * (len(s) - 1))], s[int(math.ceil(0.975 * (len(s) - 1)))]
        else:
            lo = hi = point[b]
        out.append(Rating(b, to_elo(point[b]), to_elo(lo), to_elo(hi)))
    out.sort(key=lambda r: -r.rating)
    return [dataclasses.replace(r, los_next=superiority(samples[r.bot], samples[below.bot]))
            for r, below in zip(out, out[1:], strict=False)] + out[-1:]


def superiority(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The share of paired bootstrap fits in which ``a`` is stronger than ``b`` (equal
    strengths, within 1e-9, count half): the likelihood of superiority of ``a``, or None
    with no fits."""
    if not a:
        return None
    wins = sum(1.0 if x > y + 1e-9 else 0.5 if abs(x - y) <= 1e-9 else 0.0
               for x, y in zip(a, b, strict=True))
    return wins / len(a)


class LiveRatings:
    """OpenSkill (Weng–Lin, Plackett–Luce model) ratings updated game by game, for the
    live view while a ladder runs; the conservative figure is μ − 3σ."""

    def __init__(self, bots: Sequence[str]) -> None:
        from openskill.models import PlackettLuce

        self.model = PlackettLuce()
        self.ratings = {b: self.model.rating(name=b) for b in bots}
        self.games = {b: 0 for b in bots}
        """Games each bot has played (in the updates so far)."""

    def update(self, game: GameRow) -> None:
        """Add one game's finishing order."""
        if game.players == 4:
            sides = [[game.seats[0], game.seats[2]], [game.seats[1], game.seats[3]]]
            ranks = [game.places[0], game.places[1]]
        else:
            sides = [[s] for s in game.seats]
            ranks = list(game.places)
        teams = [[self.model.rating(mu=self.ratings[b].mu, sigma=self.ratings[b].sigma)
                  for b in side] for side in sides]
        new = self.model.rate(teams, ranks=ranks)
        acc: dict[str, list[tuple[float, float]]] = {}
        for side, team in zip(sides, new, strict=False):
            for b, r in zip(side, team, strict=False):
                acc.setdefault(b, []).append((r.mu, r.sigma))
        for b, vals in acc.items():
            self.games[b] = self.games.get(b, 0) + 1
            mu = sum(v[0] for v in vals) / len(vals)
            sigma = sum(v[1] for v in vals) / len(vals)
            self.ratings[b] = self.model.rating(mu=mu, sigma=sigma, name=b)

    def table(self) -> list[tuple[str, float, float, float]]:
        """``(bot, μ, σ, μ − 3σ)`` of the bots that have played, best conservative figure
        first."""
        rows = [(b, r.mu, r.sigma, r.mu - 3 * r.sigma) for b, r in self.ratings.items()
                if self.games.get(b)]
        return sorted(rows, key=lambda x: -x[3])
