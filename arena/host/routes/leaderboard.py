"""The leaderboard: every active version, best first."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from ...bots.versions import version_label
from ..deps import HostDep, SessionDep
from ..models import Bot, Version
from ..ratings import open_ratings
from ..schemas import LeaderboardRow

router = APIRouter(prefix="/api", tags=["leaderboard"])

@router.get("/leaderboard", response_model=list[LeaderboardRow])
def leaderboard(s: SessionDep, host: HostDep) -> list[LeaderboardRow]:
    """Active versions ordered by the batch rating (with its 95% interval), then by the
    live conservative rating (μ − 3σ) for versions the batch fit has not seen yet. A
    rating the data leave open (``rating_open``) is quoted by its bound, as in `moon
    ladder show` (docs/ladder.md, "Ratings"). A version is ``provisional`` until it has
    played ``[matchmaking] placement_sets`` duplicate sets whole."""
    placement = host.settings.matchmaking.placement_sets
    vs = s.scalars(select(Version).where(Version.status == "active").options(
        selectinload(Version.bot).selectinload(Bot.owner))).all()
    vs = sorted(vs, key=lambda v: (v.rating is None, -(v.rating or 0.0),
                                   -(v.mu - 3 * v.sigma)))
    open_ = open_ratings(s)
    return [LeaderboardRow(rank=i + 1, bot=v.bot.name, owner=v.bot.owner.name,
                           version=version_label(v.bot.name, v.hash), version_id=v.id,
                           rating=None if v.rating is None else round(v.rating, 1),
                           rating_low=None if v.rating_low is None else round(v.rating_low, 1),
                           rating_high=None if v.rating_high is None
                           else round(v.rating_high, 1),
                           rating_open=v.rating is not None and v.id in open_,
                           mu=round(v.mu, 3), sigma=round(v.sigma, 3),
                           conservative=round(v.mu - 3 * v.sigma, 3), games=v.games,
                           sets=v.sets, provisional=v.sets < placement)
            for i, v in enumerate(vs)]
