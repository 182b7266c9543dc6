"""The final (``GET /api/final``: its progress, entrants and standings; ``GET
/api/final.csv``: the standings as CSV). Its games are ``GET /api/games?kind=final``."""

from __future__ import annotations

import csv
import io

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from ...bots.versions import version_label
from ..deps import HostDep, SessionDep
from ..models import Bot, Version
from ..schemas import RATING_OPEN

router = APIRouter(prefix="/api", tags=["final"])


class EntrantOut(BaseModel):
    """A version in the final, in its season's order."""

    version_id: int
    bot: str
    owner: str
    version: str = Field(description="name@hash")
    season_rank: int = Field(description="Its place in the season when the final started")


class StandingOut(BaseModel):
    """A version's place in the final."""

    place: str = Field(description="1, 2, ...; '2=' when the data cannot tell it from its "
                       "neighbour (a shared place)")
    version_id: int
    bot: str
    owner: str
    version: str
    rating: float = Field(description="The final's own batch fit (Elo scale, the final's "
                          "versions average 1500), apart from the season's")
    rating_low: float | None = Field(description="95% interval; null: unbounded below")
    rating_high: float | None = Field(description="95% interval; null: unbounded above")
    rating_open: bool = Field(description=RATING_OPEN)


class FinalOut(BaseModel):
    """The final: its state, progress, entrants and standings (the last fit)."""

    state: str = Field(description="not started, playing or over")
    phase: str = Field(description="The competition's phase now")
    starts_at: str | None = Field(description="[calendar] final_starts (UTC), if set")
    entrants: list[EntrantOut]
    boards: int = Field(0, description="Boards scheduled so far (every group of entrants "
                        "plays each, in every seating)")
    boards_done: int = Field(0, description="Boards whose every game has ended (the fit's "
                             "units)")
    max_boards: int
    games_finished: int = 0
    games_running: int = 0
    games_queued: int = 0
    games_cancelled: int = 0
    started_at: str | None = None
    ended_at: str | None = None
    why: str = Field("", description="Why it ended")
    seed: str | None = Field(None, description="The final's master seed (as text: 63 "
                             "bits), published once it is over; each board's seed is "
                             "BLAKE2b keyed with it (arena.ladder.schedule.board_seed)")
    standings: list[StandingOut] = Field(description="Best first; empty before its first "
                                         "finished game")
    fitted_games: int = Field(0, description="Final games in the standings' fit")


def final_view(s: Session, host: HostDep) -> FinalOut:
    """The final now, read from the database (:meth:`arena.host.final.Final.progress`)."""
    p = host.final.progress(s)
    phase = host.season.phase(s)
    starts = host.season.calendar.final_starts
    base = {"phase": phase, "max_boards": host.settings.final.max_boards,
            "starts_at": starts.strftime("%Y-%m-%dT%H:%M:%SZ") if starts else None}
    if p["state"] == "not started":
        return FinalOut(state="not started", entrants=[], standings=[], **base)
    ids = p["entrants"]
    versions = {v.id: v for v in s.scalars(select(Version).where(Version.id.in_(ids))
                                           .options(selectinload(Version.bot)
                                                    .selectinload(Bot.owner)))}

    def who(vid: int) -> dict[str, str]:
        v = versions[vid]
        return {"bot": v.bot.name, "owner": v.bot.owner.name,
                "version": version_label(v.bot.name, v.hash)}

    standings = p["standings"] or {}
    rows = [StandingOut(place=r["place"], version_id=r["version_id"],
                        rating=round(r["rating"], 1),
                        rating_low=None if r["low"] is None else round(r["low"], 1),
                        rating_high=None if r["high"] is None else round(r["high"], 1),
                        rating_open=not r["determined"], **who(r["version_id"]))
            for r in standings.get("rows", []) if r["version_id"] in versions]
    if not standings.get("games"):
        rows = []
    return FinalOut(state=p["state"], entrants=[
        EntrantOut(version_id=v, season_rank=i + 1, **who(v)) for i, v in enumerate(ids)
        if v in versions], boards=p["boards"], boards_done=standings.get("boards", 0),
        games_finished=p["finished"], games_running=p["running"], games_queued=p["queued"],
        games_cancelled=p["cancelled"], started_at=p["started_at"], ended_at=p["ended_at"],
        why=p["why"], seed=None if p["seed"] is None else str(p["seed"]),
        standings=rows, fitted_games=standings.get("games", 0), **base)


@router.get("/final", response_model=FinalOut)
def get_final(s: SessionDep, host: HostDep) -> FinalOut:
    """The final: whether it has started, its entrants, boards and games so far, and its
    standings (the batch fit over final games alone, with 95% intervals and shared
    places); its master seed once it is over."""
    return final_view(s, host)


CSV_COLUMNS = ("place", "bot", "owner", "version", "version_id", "rating", "rating_low",
               "rating_high", "rating_open")
"""The columns of ``/api/final.csv``."""


@router.get("/final.csv", response_class=PlainTextResponse,
            responses={200: {"content": {"text/csv": {}}}})
def get_final_csv(s: SessionDep, host: HostDep) -> PlainTextResponse:
    """The final's standings as CSV (a header, then a row per version, best first; empty
    intervals are unbounded ends)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in final_view(s, host).standings:
        row = r.model_dump()
        w.writerow(["" if row[c] is None else str(row[c]).lower() if isinstance(row[c], bool)
                    else row[c] for c in CSV_COLUMNS])
    return PlainTextResponse(out.getvalue(), media_type="text/csv",
                             headers={"Content-Disposition":
                                      'attachment; filename="final.csv"'})


__all__ = ["CSV_COLUMNS", "FinalOut", "final_view", "router"]
