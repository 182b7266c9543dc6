"""Games: the list with filters, one game, its record (once over), a seat's stderr (the
seat's owner only)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import JSONResponse, PlainTextResponse
from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session, selectinload

from ..deps import DB_INT_MAX, Caller, HostDep, SessionDep, can_see
from ..embargo import SET_KINDS, games_out, withheld_game
from ..models import Bot, Game, GameSeat, Participant, Version
from ..schemas import GameOut, GamePage
from ..visitors import write_public_record

router = APIRouter(prefix="/api", tags=["games"])

_LOAD = (selectinload(Game.seats).selectinload(GameSeat.version).selectinload(Version.bot),
         selectinload(Game.faults))


def _visible(g: Game, caller: Participant | None) -> bool:
    """Rated and final games are public; a validation game belongs to its version's
    owner; a challenge game is seen by its asker and its versions' owners (its record by
    its asker alone: :func:`arena.host.challenges.hidden`)."""
    if g.kind in SET_KINDS:
        return True
    owners = {x.version.bot.owner_id for x in g.seats if x.version is not None}
    if g.asked_by is not None:
        owners.add(g.asked_by)
    return any(can_see(caller, o) for o in owners)


def _game(s: Session, game_id: str, caller: Participant | None) -> Game:
    g = s.scalar(select(Game).where(Game.id == game_id).options(*_LOAD))
    if g is None or not _visible(g, caller):
        raise HTTPException(404, f"no game {game_id!r}")
    return g


def with_seat(s: Session, version_ids: Select[Any], *where: Any
              ) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    """The games with a seat of a version among ``version_ids`` (a query of
    ``Version.id``), that meets ``where`` too (e.g. ``GameSeat.place == 1``), as two
    equal conditions on :class:`Game`: one to count them, one to list them newest first
    (``ORDER BY created_at DESC, id DESC LIMIT``).

    Counting reads those versions' own seats (index ``ix_game_seats_version_id``). The
    list, while one of them is active (still plays), walks the newest games backwards
    (index ``ix_games_kind_created``, migration 0004) until it has its page, a seat
    looked up for each: their games are among the newest, so it reads about a page's
    worth, however many games there are; where none is active, it reads their own
    games and sorts them, as the count does (a number that no longer grows), rather
    than walk back through every game played since."""
    seats = select(GameSeat.game_id).where(GameSeat.version_id.in_(version_ids), *where)
    counted = Game.id.in_(seats)
    active = s.scalar(select(Version.id).where(Version.id.in_(version_ids),
                                               Version.status == "active").limit(1))
    if active is None:
        return counted, counted
    return counted, seats.where(GameSeat.game_id == Game.id).exists()


GAME_STATUSES = ("queued", "running", "finished", "voided", "cancelled")
"""Every status a game can have (docs/host.md, "The API")."""


@router.get("/games", response_model=GamePage)
def list_games(caller: Caller, s: SessionDep,
               bot: str | None = Query(None, description="Games of this bot"),
               version: int | None = Query(None, le=DB_INT_MAX,
                                           description="Games of this version id"),
               status: str | None = Query(None, description="queued, running, finished, "
                                          "voided or cancelled"),
               termination: str | None = Query(None, description="target, moon, forfeit, "
                                               "hand_limit"),
               kind: str = Query("rated", description="rated, final, or validation, "
                                 "challenge or table (your own bots')"),
               limit: int = Query(50, ge=1, le=500),
               offset: int = Query(0, ge=0, le=DB_INT_MAX)
               ) -> GamePage:
    """Games, newest first, filtered.

    Raises:
        HTTPException: 422 for a status or kind that no game can have (said, rather than
            an empty list that reads as "no such games").
    """
    if status is not None and status not in GAME_STATUSES:
        raise HTTPException(422, f"status {status!r}: a game is one of "
                            f"{', '.join(GAME_STATUSES)}")
    if kind not in ("rated", "final", "validation", "challenge", "table"):
        raise HTTPException(422, f"kind {kind!r}: a game is rated, final, validation, "
                            "challenge or table")
    q = select(Game).where(Game.kind == kind)
    if kind not in SET_KINDS:
        if caller is None:
            return GamePage(total=0, games=[])
        if not caller.is_admin:
            mine = select(GameSeat.game_id).join(Version).join(Bot).where(
                Bot.owner_id == caller.id)
            q = q.where(Game.id.in_(mine))
    if status is not None:
        q = q.where(Game.status == status)
    if termination is not None:
        q = q.where(Game.termination == termination)
    counted = listed = q
    for vids in ([select(Version.id).where(Version.id == version)] if version is not None
                 else []) + ([select(Version.id).join(Bot).where(Bot.name == bot)]
                             if bot is not None else []):
        count_it, list_it = with_seat(s, vids)
        counted, listed = counted.where(count_it), listed.where(list_it)
    total = s.scalar(select(func.count()).select_from(counted.subquery())) or 0
    rows = s.scalars(listed.order_by(Game.created_at.desc(), Game.id.desc())
                     .limit(limit).offset(offset).options(*_LOAD)).all()
    return GamePage(total=total, games=games_out(s, rows, caller))


@router.get("/games/{game_id}", response_model=GameOut, responses={404: {}})
def get_game(game_id: str, caller: Caller, s: SessionDep) -> GameOut:
    """One game; while it runs, only who plays it; while others of its set are still to
    be played, its result without its record (``withheld`` says when)."""
    g = _game(s, game_id, caller)
    return GameOut.of(g, withheld_game(s, g, caller))


@router.get("/games/{game_id}/record", responses={404: {}, 409: {}})
def get_record(game_id: str, caller: Caller, host: HostDep, s: SessionDep) -> Any:
    """The game's record (docs/records.md), once it is over: every hand, play and
    think time. Bots' stderr tails are left out except your own seats'. Withheld (409)
    while other games of its duplicate set, which are dealt the same hands, are still to
    be played (:mod:`arena.host.embargo`)."""
    g = _game(s, game_id, caller)
    if g.status != "finished":
        raise HTTPException(409, f"game {game_id} is {g.status}: its record is published "
                            "when it is over")
    wait = withheld_game(s, g, caller)
    if wait is not None:
        raise HTTPException(409, f"the record of game {game_id} is {wait}"
                            + (" (they are dealt the same hands)" if g.kind == "rated"
                               else ""))
    path = host.record_dir / f"{g.id}.json"
    if not g.record_path or not path.is_file():
        raise HTTPException(404, f"the record of game {game_id} was pruned (retention); "
                            "its result is kept")
    record = json.loads(path.read_text())
    mine = {str(x.seat) for x in g.seats
            if x.version is not None and can_see(caller, x.version.bot.owner_id)}
    record["logs"] = {k: v for k, v in (record.get("logs") or {}).items() if k in mine}
    if not mine:  # what every visitor gets: kept as a file, served without the database
        write_public_record(host.record_dir, g.id, record)
        return JSONResponse(record, headers={"Cache-Control": "public, max-age=3600"})
    return record


@router.get("/games/{game_id}/logs/{seat}", response_class=PlainTextResponse,
            responses={404: {"description": "No such game or seat, or not yours"}})
def seat_log(game_id: str, seat: int, caller: Caller, host: HostDep, s: SessionDep) -> str:
    """Your bot's stderr in a game (its owner and the organiser only; others get 404)."""
    g = _game(s, game_id, caller)
    x = next((x for x in g.seats if x.seat == seat), None)
    if x is None or x.version is None or not can_see(caller, x.version.bot.owner_id):
        raise HTTPException(404, f"no seat {seat} of yours in game {game_id}")
    if g.status in ("queued", "running"):
        raise HTTPException(409, f"game {game_id} is {g.status}: its logs come at the end")
    wait = withheld_game(s, g, caller)
    if wait is not None:  # a bot's stderr may hold its hands
        raise HTTPException(409, f"the logs of game {game_id} are {wait}"
                            + (" (they are dealt the same hands)" if g.kind == "rated"
                               else ""))
    path = host.seat_log(g.id, seat)
    if not path.is_file():
        raise HTTPException(404, f"no log of seat {seat} in game {game_id} (pruned, or the "
                            "bot never started)")
    return path.read_text(errors="replace")
