"""Signing in and submitting: the sign-in form (an API token) and signing out, and the
submission form, which takes a bot folder's archive through the API's own submission.
Every form carries the CSRF value (:mod:`arena.web.auth`); one without it gets 403."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ...web import auth
from ..deps import HostDep, SessionDep
from ..models import Bot
from ..routes.submissions import submit as api_submit
from ..service import Host
from .base import page
from .sessions import sign_in, signed_in

router = APIRouter(include_in_schema=False)


@router.get("/signin", response_class=HTMLResponse)
def signin_form(request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """The sign-in form (an API token)."""
    return page(request, s, host, "signin", error="")


def _refuse_csrf(request: Request, s: Session, host: Host) -> HTMLResponse:
    return page(request, s, host, "error", status=403, title="Form expired",
                message="This form was not sent from this site's own page (or it has "
                "expired): open the page again and send it from there.")


@router.post("/signin", response_class=HTMLResponse)
def signin(request: Request, host: HostDep, s: SessionDep,
           token: Annotated[str, Form()] = "", csrf: Annotated[str, Form()] = ""
           ) -> Response:
    """Sign in with an API token: a session cookie, then back to the leaderboard."""
    if not auth.csrf_ok(request, csrf):
        return _refuse_csrf(request, s, host)
    done = sign_in(s, token)
    if done is None:
        return page(request, s, host, "signin", status=401,
                    error="That token is not known here: paste the token you got when "
                    "you registered (moon host register prints it).")
    response = RedirectResponse("/submit", status_code=303)
    auth.set_session(request, response, done[1])
    return response


@router.post("/signout")
def signout(request: Request, host: HostDep, s: SessionDep,
            csrf: Annotated[str, Form()] = "") -> Response:
    """End the session."""
    if not auth.csrf_ok(request, csrf):
        return _refuse_csrf(request, s, host)
    response = RedirectResponse("/", status_code=303)
    auth.set_session(request, response, None)
    return response


@router.get("/submit", response_class=HTMLResponse)
def submit_form(request: Request, host: HostDep, s: SessionDep) -> Response:
    """The submission form, and the signed-in participant's bots."""
    user = signed_in(request, s)
    if user is None:
        return RedirectResponse("/signin", status_code=303)
    bots = s.scalars(select(Bot).where(Bot.owner_id == user.id).order_by(Bot.name)
                     .options(selectinload(Bot.versions))).all()
    return page(request, s, host, "submit", error="", bots=bots,
                limit_mb=host.settings.limits.max_archive_mb)


@router.post("/submit", response_class=HTMLResponse)
def submit(request: Request, host: HostDep, s: SessionDep,
           archive: Annotated[UploadFile, File()], csrf: Annotated[str, Form()] = ""
           ) -> Response:
    """Take a bot folder's archive through the API's own submission (the same checks),
    then show the version's progress."""
    if not auth.csrf_ok(request, csrf):
        return _refuse_csrf(request, s, host)
    user = signed_in(request, s)
    if user is None:
        return RedirectResponse("/signin", status_code=303)
    try:
        v = api_submit(archive, user, host, s, Response())
    except HTTPException as e:
        bots = s.scalars(select(Bot).where(Bot.owner_id == user.id).order_by(Bot.name)
                         .options(selectinload(Bot.versions))).all()
        return page(request, s, host, "submit", status=e.status_code, error=str(e.detail),
                    bots=bots, limit_mb=host.settings.limits.max_archive_mb)
    return RedirectResponse(f"/versions/{v.id}", status_code=303)


__all__ = ["router"]
