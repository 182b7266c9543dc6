"""Ratings: a batch fit over all games with 95% intervals from a bootstrap over whole
boards (:mod:`arena.stats.bradley_terry`), and an OpenSkill live view.

The batch model is Bradley–Terry on pairwise outcomes with additive team strengths:
``P(A ahead of B) = σ(Σθ_A − Σθ_B)``. A 3-player game is broken into its pairwise
results (full rank-breaking of a Plackett–Luce finishing order — Azari Soufiani et al.,
NeurIPS 2013); a tie in places counts half each way. A 4-player game is one comparison of
the two partnerships (team Bradley–Terry). Bots are fixed versions, so one fit over all
games is the honest figure. Its intervals resample whole boards (every group and table
that played a board shares its luck) with a small-sample correction for few boards, and
say so when the data cannot bound a rating (docs/ladder.md, "Ratings").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..stats.bradley_terry import ELO, PRIOR_SIGMA, BoardFit, Comparison, fit
from ..stats.intervals import Estimate
from .store import GameRow

__all__ = ["ELO", "PRIOR_SIGMA", "Comparison", "LiveRatings", "Rating", "comparisons", "fit",
           "head_to_head_table", "ladder_fit", "leaderboard", "rate"]


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


@dataclass(frozen=True)
class Rating:
    """A bot's batch rating (Elo scale, field mean 1500) with its 95% interval."""

    bot: str
    rating: float
    low: float | None
    """The interval's lower end; None when the data cannot bound it (the bot was never
    ahead of some other, or no interval can be estimated)."""
    high: float | None
    """The interval's upper end; None when the data cannot bound it."""
    los_next: float | None = None
    """Likelihood of superiority over the bot rated just below (0..1); None for the last
    bot, or when it cannot be estimated."""
    diff_next: Estimate | None = None
    """This rating minus the next bot's, with its 95% interval; None for the last bot."""
    note: str = ""
    """Why the interval is one-sided or missing (empty when it is two-sided)."""
    determined: bool = True
    """False when the data leave the rating open (it never lost, or never won, against
    some bot): ``rating`` is then the fit's prior-held figure, for ordering only."""

    @property
    def estimate(self) -> Estimate:
        """The rating and its interval as an :class:`Estimate` (for display)."""
        return Estimate(self.rating, self.low, self.high, self.note, self.determined)

    @property
    def margin(self) -> float | None:
        """Half the interval's width, for "± x"; None unless two-sided."""
        return self.estimate.margin


def head_to_head_table(games: Iterable[GameRow]) -> dict[str, dict[str, tuple[float, int]]]:
    """``table[a][b] = (score of a against b, games)`` over the games where a and b sat
    on different sides: 1 for finishing ahead, ½ a tie (each 3-player game once per pair
    of seats, so a bot seated twice counts each seat; each 4-player game once)."""
    acc: dict[str, dict[str, list[float]]] = {}
    for g in games:
        def side(s: int, players: int = g.players) -> int:
            return s if players == 3 else s % 2
        # once per pair of sides: a partnership of a bot with its copy is one side
        met: set[tuple[int, int, str, str]] = set()
        for i, a in enumerate(g.seats):
            for j, b in enumerate(g.seats):
                key = (side(i), side(j), a, b)
                if a == b or side(i) == side(j) or key in met:
                    continue
                met.add(key)
                pa, pb = g.places[side(i)], g.places[side(j)]
                acc.setdefault(a, {}).setdefault(b, []).append(
                    1.0 if pa < pb else 0.5 if pa == pb else 0.0)
    return {a: {b: (sum(v) / len(v), len(v)) for b, v in row.items()}
            for a, row in acc.items()}


def boards_of(games: Iterable[GameRow]) -> dict[int, list[Comparison]]:
    """The comparisons of ``games`` grouped by board: the bootstrap's unit."""
    by_board: dict[int, list[Comparison]] = {}
    for g in games:
        by_board.setdefault(g.board, []).extend(comparisons(g))
    return by_board


def ladder_fit(games: Iterable[GameRow], bots: Sequence[str], bootstrap: int = 200,
               seed: int = 0) -> BoardFit:
    """The fit behind :func:`rate`, for figures beyond the leaderboard (the difference of
    any two bots: :meth:`BoardFit.difference`, :meth:`BoardFit.los`).

    Raises:
        ValueError: a game seats a bot that is not in ``bots``.
    """
    return BoardFit(boards_of(games), bots, bootstrap=bootstrap, seed=seed)


def leaderboard(bf: BoardFit) -> list[Rating]:
    """The ratings of a fit, best first (ties by name), each with its difference from and
    LOS over the next bot down."""
    est = {b: bf.rating(b) for b in bf.bots}
    order = sorted(bf.bots, key=lambda b: (-est[b].value, b))
    out = []
    for k, b in enumerate(order):
        nxt = order[k + 1] if k + 1 < len(order) else None
        e = est[b]
        out.append(Rating(b, e.value, e.low, e.high,
                          los_next=bf.los(b, nxt) if nxt else None,
                          diff_next=bf.difference(b, nxt) if nxt else None, note=e.note,
                          determined=e.determined))
    return out


def rate(games: Iterable[GameRow], bots: Sequence[str], bootstrap: int = 200,
         seed: int = 0) -> list[Rating]:
    """Batch ratings of ``bots`` with 95% intervals from ``bootstrap`` resamples of whole
    boards; best first (ties by name).

    Raises:
        ValueError: a game seats a bot that is not in ``bots``.
    """
    return leaderboard(ladder_fit(games, bots, bootstrap=bootstrap, seed=seed))


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
            ranks: list[float] = [game.places[0], game.places[1]]
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
