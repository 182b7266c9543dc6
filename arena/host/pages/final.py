"""The final's page (``/final``): its progress, standings, entrants and games, from the
same view as ``/api/final``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from ...web.views import game_row
from ..deps import HostDep, SessionDep
from ..embargo import games_out
from ..final import KIND
from ..models import Game, GameSeat, Version
from ..routes.final import final_view
from .base import page
from .sessions import signed_in

router = APIRouter(include_in_schema=False)

GAMES_SHOWN = 50
"""The final's games listed on its page, newest first."""


@router.get("/final", response_class=HTMLResponse)
def final_page(request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """The final: whether it has started, its standings with their intervals and shared
    places, its entrants and its latest games (live while they run)."""
    rows = s.scalars(select(Game).where(Game.kind == KIND)
                     .order_by(Game.created_at.desc(), Game.dset_id.desc(),
                               Game.seating.desc(), Game.id.desc()).limit(GAMES_SHOWN)
                     .options(selectinload(Game.seats).selectinload(GameSeat.version)
                              .selectinload(Version.bot), selectinload(Game.faults))).all()
    games = [game_row(g, None) for g in games_out(s, rows, signed_in(request, s))]
    return page(request, s, host, "final", final=final_view(s, host), games=games)


__all__ = ["router"]
