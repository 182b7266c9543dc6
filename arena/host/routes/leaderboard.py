"""The leaderboard: every active version, best first."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from ...bots.versions import version_label
from ..deps import SessionDep
from ..models import Bot, Version
from ..ratings import open_ratings
from ..schemas import LeaderboardRow

router = APIRouter(prefix="/api", tags=["leaderboard"])

PLACEMENT_GAMES = 12
"""Games before a version's rating is no longer provisional (two duplicate sets)."""


@router.get("/leaderboard", response_model=list[LeaderboardRow])
def leaderboard(s: SessionDep) -> list[LeaderboardRow]:
    """Active versions ordered by the batch rating (with its 95% interval), then by the
    live conservative rating (μ − 3σ) for versions the batch fit has not seen yet. A
    rating the data leave open (``rating_open``) is quoted by its bound, as in `moon
    ladder show` (docs/ladder.md, "Ratings")."""
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
                           provisional=v.games < PLACEMENT_GAMES)
            for i, v in enumerate(vs)]
