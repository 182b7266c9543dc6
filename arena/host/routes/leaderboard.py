"""The leaderboard: every active version, best first."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from ...bots.versions import version_label
from ...stats.head_to_head import beyond
from ..deps import HostDep, SessionDep
from ..models import Bot, Version
from ..ratings import batch_table, h2h_of, open_ratings
from ..schemas import LeaderboardRow

router = APIRouter(prefix="/api", tags=["leaderboard"])

@router.get("/leaderboard", response_model=list[LeaderboardRow])
def leaderboard(s: SessionDep, host: HostDep) -> list[LeaderboardRow]:
    """Active versions ordered by the batch rating (with its 95% interval), then by the
    live conservative rating (μ − 3σ) for versions the batch fit has not seen yet. A
    rating the data leave open (``rating_open``) is quoted by its bound, as in `moon
    ladder show` (docs/ladder.md, "Ratings"). A version is ``provisional`` until it has
    played ``[matchmaking] placement_sets`` duplicate sets whole. Beside each gap to the
    next row, the head-to-head of the two (``h2h_next``) and whether the gap says more
    than those games measured (``gap_beyond``)."""
    placement = host.settings.matchmaking.placement_sets
    vs = s.scalars(select(Version).where(Version.status == "active").options(
        selectinload(Version.bot).selectinload(Bot.owner))).all()
    vs = sorted(vs, key=lambda v: (v.rating is None, -(v.rating or 0.0),
                                   -(v.mu - 3 * v.sigma)))
    open_ = open_ratings(s)
    table = batch_table(s)
    rows = [LeaderboardRow(rank=i + 1, bot=v.bot.name, owner=v.bot.owner.name,
                           version=version_label(v.bot.name, v.hash), version_id=v.id,
                           rating=None if v.rating is None else round(v.rating, 1),
                           rating_low=None if v.rating_low is None else round(v.rating_low, 1),
                           rating_high=None if v.rating_high is None
                           else round(v.rating_high, 1),
                           rating_open=v.rating is not None and v.id in open_,
                           place=table["places"].get(str(v.id)) if v.rating is not None
                           else None,
                           anchor=not table["anchor"] or v.id in table["anchor"],
                           mu=round(v.mu, 3), sigma=round(v.sigma, 3),
                           conservative=round(v.mu - 3 * v.sigma, 3), games=v.games,
                           sets=v.sets, provisional=v.sets < placement)
            for i, v in enumerate(vs)]
    # the observed head-to-head beside each gap between neighbouring rows
    for k in range(len(rows) - 1):
        a, b = rows[k], rows[k + 1]
        h = h2h_of(table, a.version_id, b.version_id)
        if h is None:
            continue
        a.h2h_next, a.h2h_next_games = round(h[0], 4), h[1]
        if a.rating is not None and b.rating is not None and not a.rating_open \
                and not b.rating_open and host.ruleset.players == 3:
            a.gap_beyond = beyond(a.rating - b.rating, h[0], h[1])
    return rows
