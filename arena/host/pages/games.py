"""The games: the rated games' list (``/games``, filtered by bot and result), a game's
page (``/games/{id}``: the replay player once it is over, the live view while it runs;
the organiser's "Void this game" on a finished rated or challenge game) and a seat's
stderr (``/games/{id}/stderr/{seat}``, its owner's). A validation game is
seen only by the owners of the versions in it; anyone else gets the same 404 as for a game
that does not exist."""

from __future__ import annotations

import json
import math
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from ...bots.versions import version_label
from ...records.record import GameRecord
from ...web import auth
from ...web.replay import replay_view
from ...web.views import RESULTS, game_row, side_labels
from ..deps import HostDep, SessionDep, can_see
from ..embargo import SET_KINDS, games_out, withheld_game
from ..models import Bot, Game, GameSeat, Participant, Version
from ..moderation import VOIDABLE
from ..routes.games import with_seat
from ..routes.moderation import voided
from ..schemas import GameOut
from .base import page
from .errors import not_found
from .sessions import signed_in

router = APIRouter(include_in_schema=False)


@router.get("/games", response_class=HTMLResponse)
def games_page(request: Request, host: HostDep, s: SessionDep,
               bot: str = Query(""), result: str = Query(""), page_no: int = Query(
                   1, alias="page", ge=1, le=100000)) -> HTMLResponse:
    """Rated games, newest first, filtered by bot and result (``won``/``lost`` of that bot,
    or a termination)."""
    per = 50
    if result and result not in RESULTS:
        return page(request, s, host, "error", status=400, title="No such filter",
                    message=f"There is no result {result!r} to filter on: choose one of "
                    f"{', '.join(RESULTS)}.")
    if result in ("won", "lost") and not bot:
        return page(request, s, host, "error", status=400, title="No such filter",
                    message=f"{result!r} is a bot's result: choose a bot to filter on too.")
    q = select(Game).where(Game.kind == "rated")
    b = s.scalar(select(Bot).where(Bot.name == bot)) if bot else None
    if bot and b is None:
        return not_found(request, s, host, f"There is no bot named {bot!r}.")
    vids: set[int] | None = None
    counted = listed = q
    if b is not None:
        versions = select(Version.id).where(Version.bot_id == b.id)
        vids = set(s.scalars(versions))
        # its games; won: a seat of its placed first; lost: its games but those
        count_it, list_it = with_seat(s, versions)
        counted, listed = q.where(count_it), q.where(list_it)
        if result in ("won", "lost"):
            count_won, list_won = with_seat(s, versions, GameSeat.place == 1)
            if result == "lost":
                count_won, list_won = ~count_won, ~list_won
            counted = counted.where(Game.status == "finished", count_won)
            listed = listed.where(Game.status == "finished", list_won)
    if result in RESULTS and result not in ("won", "lost"):
        counted = counted.where(Game.termination == result, Game.status == "finished")
        listed = listed.where(Game.termination == result, Game.status == "finished")
    total = s.scalar(select(func.count()).select_from(counted.subquery())) or 0
    rows = s.scalars(listed.order_by(Game.created_at.desc(), Game.id.desc())
                     .limit(per).offset((page_no - 1) * per).options(
                         selectinload(Game.seats).selectinload(GameSeat.version)
                         .selectinload(Version.bot), selectinload(Game.faults))).all()
    bots = list(s.scalars(select(Bot.name).order_by(Bot.name)))
    outs = games_out(s, rows, signed_in(request, s))
    return page(request, s, host, "games", games=[game_row(g, vids) for g in outs],
                total=total, bot=bot, result=result, bots=bots, results=RESULTS,
                page_no=page_no, pages=max(1, math.ceil(total / per)))


def visible_game(s: Session, game_id: str, user: Participant | None) -> Game | None:
    """The game ``game_id`` (seats, versions, bots and faults loaded) if ``user`` may see
    it (a rated game: anyone; another: its versions' owners and the organiser), else None."""
    g = s.scalar(select(Game).where(Game.id == game_id).options(
        selectinload(Game.seats).selectinload(GameSeat.version).selectinload(Version.bot),
        selectinload(Game.faults)))
    if g is None:
        return None
    owners = {x.version.bot.owner_id for x in g.seats if x.version is not None}
    if g.asked_by is not None:  # a challenge game: its asker's too
        owners.add(g.asked_by)
    if g.kind not in SET_KINDS and not any(can_see(user, o) for o in owners):
        return None
    return g


@router.get("/games/{game_id}", response_class=HTMLResponse)
def game_page(game_id: str, request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """A game: the replay player once it is over (the bots' stderr for their owners), the
    live view while it runs."""
    user = signed_in(request, s)
    g = visible_game(s, game_id, user)
    if g is None:
        return not_found(request, s, host, f"There is no game {game_id!r}.")
    wait = withheld_game(s, g, user)
    out = GameOut.of(g, wait)
    own_seats = [x.seat for x in g.seats
                 if x.version is not None and can_see(user, x.version.bot.owner_id)]
    if g.status in ("queued", "running") and wait is None:
        live = page(request, s, host, "live", game=out, players=host.ruleset.players,
                    widow=host.ruleset.has_widow, sides=side_labels(out.seats))
        # never from a cache: at the game's end the live view reloads into the replay
        live.headers["Cache-Control"] = "no-store"
        return live
    view = None
    missing = ""
    path = host.record_dir / f"{g.id}.json"
    if wait is not None:
        own_seats = []
        shown = ("Its live view, replay and its bots' stderr are"
                 if g.status in ("queued", "running") else "Its replay and its bots' stderr are")
        missing = (f"{shown} {wait}: they are dealt the same hands, which its plays would "
                   "give away." if g.kind in SET_KINDS else f"{shown} {wait}.")
    elif g.status == "finished" and g.record_path and path.is_file():
        data = json.loads(path.read_text())
        data["logs"] = {}  # stderr is on its own owner-only page
        view = replay_view(GameRecord.from_dict(data))
    elif g.status == "finished":
        missing = "Its record was pruned (retention); its result is kept."
    admin = user is not None and user.is_admin
    # why it was voided or cancelled: the organiser's, and a challenge's asker's (as in
    # GET /api/challenges/{id})
    note = g.void_reason if g.status in ("voided", "cancelled") and g.void_reason and (
        admin or (user is not None and g.asked_by == user.id)) else ""
    return page(request, s, host, "game", game=out, view=view, missing=missing,
                own_seats=own_seats, note=note,
                voidable=admin and g.status == "finished" and g.kind in VOIDABLE)


@router.post("/games/{game_id}/void")
def void_page(game_id: str, request: Request, host: HostDep, s: SessionDep,
              reason: Annotated[str, Form(max_length=1000)] = "",
              csrf: Annotated[str, Form()] = "") -> Response:
    """The organiser's "Void this game" (:func:`arena.host.routes.moderation.voided`),
    then back to the game's page, which says why; anyone else: the pages' 404."""
    user = signed_in(request, s)
    if user is None or not user.is_admin:
        return not_found(request, s, host, f"There is no game {game_id!r} you can void.")
    if not auth.csrf_ok(request, csrf):
        return page(request, s, host, "error", status=403, title="Form expired",
                    message="This form was not sent from this site's own page (or it has "
                    "expired): open the page again and send it from there.")
    try:
        voided(host, game_id, reason, user.name)
    except HTTPException as e:
        if e.status_code == 404:
            return not_found(request, s, host, f"There is no game {game_id!r}.")
        return page(request, s, host, "error", status=e.status_code, title="Not voided",
                    message=f"{e.detail}.")
    return RedirectResponse(f"/games/{game_id}", status_code=303)


@router.get("/games/{game_id}/stderr/{seat}", response_class=HTMLResponse)
def stderr_page(game_id: str, seat: int, request: Request, host: HostDep, s: SessionDep
                ) -> HTMLResponse:
    """A seat's stderr in a game: its owner and the organiser only (others: 404)."""
    user = signed_in(request, s)
    g = visible_game(s, game_id, user)
    x = next((x for x in g.seats if x.seat == seat), None) if g is not None else None
    if g is None or x is None or x.version is None or not can_see(user,
                                                                  x.version.bot.owner_id):
        return not_found(request, s, host, f"No seat {seat} of yours in game {game_id!r}.")
    wait = withheld_game(s, g, user)
    if wait is not None:
        return page(request, s, host, "error", status=409, title="Not yet",
                    message=f"The stderr of game {game_id} is {wait}: a bot's output may "
                    "hold the hands they are dealt too.")
    if g.status in ("queued", "running"):
        text = None
    else:
        path = host.seat_log(g.id, seat)
        text = path.read_text(errors="replace") if path.is_file() else ""
    return page(request, s, host, "stderr", game=GameOut.of(g), seat=seat,
                bot=version_label(x.version.bot.name, x.version.hash), text=text)


__all__ = ["router", "visible_game"]
