"""The challenges page (``/challenges``, signed in): the form that asks for an unrated test
game against a chosen opponent, through the API's own
:func:`arena.host.routes.challenges.ask` (the same checks and quota), and the challenges
the participant asked for, with their results."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from ...web import auth
from .. import challenges
from ..deps import DB_INT_MAX, HostDep, SessionDep
from ..models import Bot, Game, Participant
from ..routes.challenges import LOAD, ChallengeIn, ChallengeOut, replays
from ..routes.challenges import ask as api_ask
from ..service import Host
from .base import page
from .sessions import signed_in

router = APIRouter(include_in_schema=False)


def _page(request: Request, s: Session, host: Host, user: Participant, status: int = 200,
          error: str = "", opponent: str = "") -> HTMLResponse:
    ids = [g.id for g in challenges.mine(s, user.id, 50)]
    rows = {g.id: g for g in s.scalars(select(Game).where(Game.id.in_(ids)).options(*LOAD))}
    again = replays(s, list(rows.values()))
    opponents = [*s.scalars(select(Bot.name).where(Bot.owner_id != user.id,
                                                   Bot.active_version_id.is_not(None))
                            .order_by(Bot.name)), *(r.name for r in host.references)]
    return page(request, s, host, "challenges", status=status, error=error,
                opponent=opponent, opponents=opponents,
                per_hour=host.settings.challenges.per_hour,
                challenges=[ChallengeOut.of(rows[i], again.get(i)) for i in ids])


@router.get("/challenges", response_class=HTMLResponse)
def challenges_page(request: Request, host: HostDep, s: SessionDep) -> Response:
    """The form, and your challenges (sign in first)."""
    user = signed_in(request, s)
    if user is None:
        return RedirectResponse("/signin", status_code=303)
    return _page(request, s, host, user)


@router.post("/challenges", response_class=HTMLResponse)
def ask_page(request: Request, host: HostDep, s: SessionDep,
             opponent: Annotated[str, Form(max_length=64)] = "",
             version: Annotated[str, Form(max_length=20)] = "",
             csrf: Annotated[str, Form()] = "") -> Response:
    """Ask for a challenge, then back to the list (or the form, saying what was wrong)."""
    user = signed_in(request, s)
    if user is None:
        return RedirectResponse("/signin", status_code=303)
    if not auth.csrf_ok(request, csrf):
        return page(request, s, host, "error", status=403, title="Form expired",
                    message="This form was not sent from this site's own page (or it has "
                    "expired): open the page again and send it from there.")
    number = version.strip()
    # ASCII digits of a version number a database holds ("²".isdigit() is true too)
    if number and not (number.isascii() and number.isdigit()
                       and 1 <= int(number) <= DB_INT_MAX):
        return _page(request, s, host, user, 422, f"version {number!r}: write the opponent "
                     "bot's version number (1, 2, ...), or leave it empty for its active "
                     "one", opponent)
    if not opponent.strip():
        return _page(request, s, host, user, 422, "name an opponent: a bot, or a reference "
                     "bot", opponent)
    try:
        api_ask(ChallengeIn(opponent=opponent.strip(), version=int(number) if number
                            else None), user, host, s)
    except HTTPException as e:
        return _page(request, s, host, user, e.status_code, str(e.detail), opponent)
    return RedirectResponse("/challenges", status_code=303)


__all__ = ["router"]
