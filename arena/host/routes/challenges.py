"""Challenges through the API (:mod:`arena.host.challenges`): ask for an unrated test game
against a chosen opponent (``POST /api/challenges``), list yours with their results and
where their records are (``GET /api/challenges``), follow one (``GET
/api/challenges/{id}``)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from .. import challenges
from ..deps import DB_INT_MAX, HostDep, SessionDep, User
from ..models import Game, GameSeat, Participant, Version
from ..recorder import again_id
from ..schemas import GameOut

router = APIRouter(prefix="/api", tags=["challenges"])

LOAD = (selectinload(Game.seats).selectinload(GameSeat.version).selectinload(Version.bot),
         selectinload(Game.faults))


class ChallengeIn(BaseModel):
    """A challenge: your version against an opponent in every other seat."""

    opponent: str = Field(min_length=1, max_length=64, description="A bot's name (its "
                          "active version, or --version), or a reference bot's name")
    version: int | None = Field(None, ge=1, le=DB_INT_MAX, description="The opponent "
                                "bot's version number (1, 2, ...); default: its active one")
    mine: int | None = Field(None, ge=1, le=DB_INT_MAX, description="The id of your "
                             "version that plays; default: your one active version")


class ChallengeOut(BaseModel):
    """A challenge and how it went."""

    id: str = Field(description="Its game's id")
    status: str = Field(description="queued, running, finished, voided or cancelled")
    rated: bool = Field(False, description="Always false: a challenge never counts in "
                        "the ratings")
    version: str = Field(description="Your version that plays (its label)")
    opponent: str = Field(description="The opponent's version (its label) or reference bot")
    places: list[int | None] = Field(description="Your place, then the opponent's (1 "
                                     "first), once finished")
    note: str = Field(description="Why it was voided or cancelled, else empty")
    again: str | None = Field(None, description="Voided through the host's failure: the "
                              "id of the challenge that plays it again; else null")
    page: str = Field(description="Its page (the replay once it is over)")
    record: str | None = Field(description="Where its record is, once it is finished")
    game: GameOut

    @classmethod
    def of(cls, g: Game, again: str | None = None) -> ChallengeOut:
        """From a challenge game (its seats, versions and faults loaded); ``again``: the
        game that plays it again (:func:`replays`)."""
        out = GameOut.of(g)
        mine, other = out.seats[0], out.seats[1]
        done = g.status == "finished"
        return cls(id=g.id, status=g.status, version=mine.version or mine.bot,
                   opponent=other.version or other.bot,
                   places=[mine.place, other.place] if done else [None, None],
                   note=g.void_reason if g.status in ("voided", "cancelled") else "",
                   again=again,
                   page=f"/games/{g.id}", record=f"/api/games/{g.id}/record"
                   if done and g.record_path else None, game=out)


class ChallengePage(BaseModel):
    """Your challenges, newest first."""

    challenges: list[ChallengeOut]


def replays(s: Session, games: list[Game]) -> dict[str, str]:
    """The game that plays each voided game of ``games`` again, by its id (one query)."""
    ids = {again_id(g.id, g.attempt): g.id for g in games if g.status == "voided"}
    if not ids:
        return {}
    found = s.scalars(select(Game.id).where(Game.id.in_(sorted(ids))))
    return {ids[x]: x for x in found}


def out(s: Session, g: Game) -> ChallengeOut:
    """:meth:`ChallengeOut.of` with the game that plays ``g`` again, if any."""
    return ChallengeOut.of(g, replays(s, [g]).get(g.id))


def _one(s: Session, game_id: str) -> Game | None:
    return s.scalar(select(Game).where(Game.id == game_id, Game.kind == "challenge")
                    .options(*LOAD))


@router.post("/challenges", status_code=201, response_model=ChallengeOut,
             responses={403: {}, 404: {}, 409: {}, 422: {},
                        429: {"description": "Over the quota: Retry-After says when"}})
def ask(body: ChallengeIn, user: User, host: HostDep, s: SessionDep) -> ChallengeOut:
    """Ask for an unrated test game of your version against ``opponent`` (played between
    rated games, within ``[challenges] share`` of the slots; at most ``[challenges]
    per_hour`` in any hour). Its result and record are yours; the opponent's owner sees
    that it was played."""
    settings = host.settings

    def write() -> str:
        with host.Session.begin() as w:
            asker = w.get(Participant, user.id)
            assert asker is not None
            g = challenges.ask(
                w, asker, body.opponent.strip(), body.version, body.mine,
                per_hour=settings.challenges.per_hour, players=host.ruleset.players,
                references=[r.name for r in host.references],
                closed=host.season.refused(w, "play"))
            return g.id
    try:
        game_id = host.writer.write_now(write)
    except challenges.ChallengeError as e:
        headers = {"Retry-After": str(e.retry_after)} if e.retry_after is not None else None
        raise HTTPException(e.status, str(e), headers=headers) from None
    host.matchmaker.wake()
    g = _one(s, game_id)
    assert g is not None
    return out(s, g)


@router.get("/challenges", response_model=ChallengePage)
def list_challenges(user: User, s: SessionDep,
                    limit: int = Query(50, ge=1, le=500),
                    offset: int = Query(0, ge=0, le=DB_INT_MAX)) -> ChallengePage:
    """The challenges you asked for, newest first, with their results and records."""
    ids = [g.id for g in challenges.mine(s, user.id, limit, offset)]
    rows = {g.id: g for g in s.scalars(select(Game).where(Game.id.in_(ids)).options(*LOAD))}
    again = replays(s, list(rows.values()))
    return ChallengePage(challenges=[ChallengeOut.of(rows[i], again.get(i)) for i in ids])


@router.get("/challenges/{game_id}", response_model=ChallengeOut, responses={404: {}})
def get_challenge(game_id: str, user: User, s: SessionDep) -> ChallengeOut:
    """One of your challenges (the organiser: anyone's)."""
    g = _one(s, game_id)
    if g is None or not (user.is_admin or g.asked_by == user.id):
        raise HTTPException(404, f"no challenge {game_id!r} of yours (GET /api/challenges "
                            "lists them)")
    return out(s, g)


__all__ = ["ChallengeIn", "ChallengeOut", "ChallengePage", "out", "replays", "router"]
