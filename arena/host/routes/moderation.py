"""The organiser's moderation through the API (:mod:`arena.host.moderation`): disable or
enable a version, void a finished rated or challenge game, post an announcement; each in
the audit log."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from .. import moderation
from ..deps import Admin, HostDep, SessionDep
from ..models import Game, GameSeat, Version
from ..ratings import open_ratings
from ..schemas import GameOut, Message, VersionOut
from ..service import Host

router = APIRouter(prefix="/api", tags=["moderation"])
T = TypeVar("T")


class ReasonIn(BaseModel):
    """Why (its owner reads it; the audit log keeps it)."""

    reason: str = Field("", max_length=1000)


class AnnouncementIn(BaseModel):
    """The announcement shown on every page ("" takes it down)."""

    text: str = Field("", max_length=500)


def _write(host: Host, fn: Callable[..., T], *args: object) -> T:
    """Run ``fn(session, *args)`` in one transaction on the host's writer thread (after
    the results and claims before it); a :class:`~arena.host.moderation.ModerationError`
    becomes its 4xx."""
    def run() -> T:
        with host.Session.begin() as s:
            return fn(s, *args)
    try:
        return host.writer.write_now(run)
    except moderation.ModerationError as e:
        raise HTTPException(e.status, str(e)) from None


@router.post("/versions/{version_id}/disable", response_model=VersionOut,
             responses={404: {}, 409: {}, 422: {}})
def disable_version(version_id: int, body: ReasonIn, admin: Admin, host: HostDep,
                    s: SessionDep) -> VersionOut:
    """Disable a version (the organiser's): it plays no new game, its queued games are
    cancelled, and its owner reads the reason."""
    _write(host, moderation.disable, version_id, body.reason, admin.name)
    host.matchmaker.wake()
    v = s.get(Version, version_id)
    assert v is not None
    return VersionOut.of(v, True, open_ratings(s), host.settings.matchmaking.placement_sets)


@router.post("/versions/{version_id}/enable", response_model=VersionOut,
             responses={404: {}, 409: {}})
def enable_version(version_id: int, body: ReasonIn, admin: Admin, host: HostDep,
                   s: SessionDep) -> VersionOut:
    """Make a disabled version active again (the organiser's)."""
    _write(host, moderation.enable, version_id, body.reason, admin.name)
    host.matchmaker.wake()
    v = s.get(Version, version_id)
    assert v is not None
    return VersionOut.of(v, True, open_ratings(s), host.settings.matchmaking.placement_sets)


@router.post("/games/{game_id}/void", response_model=GameOut,
             responses={404: {}, 409: {}, 422: {}})
def void_game(game_id: str, body: ReasonIn, admin: Admin, host: HostDep,
              s: SessionDep) -> GameOut:
    """Void a finished rated or challenge game (the organiser's). A rated one is never
    rated from now on: the live ratings and game counts are recomputed from the games
    left at once, the batch fit at its next run. A challenge is not played again; its
    asker reads why (and may ask again: it leaves their quota)."""
    voided(host, game_id, body.reason, admin.name)
    g = s.scalar(select(Game).where(Game.id == game_id).options(
        selectinload(Game.seats).selectinload(GameSeat.version).selectinload(Version.bot),
        selectinload(Game.faults)))
    assert g is not None
    return GameOut.of(g)


def voided(host: Host, game_id: str, reason: str, actor: str) -> str:
    """Void ``game_id`` (:func:`arena.host.moderation.void`) on the writer thread, then,
    if it was rated, recompute the live ratings without it; its kind.

    Raises:
        HTTPException: the moderation's 404, 409 or 422.
    """
    kind = _write(host, lambda w: moderation.void(w, game_id, reason, actor).kind)
    if kind == "rated":
        host.writer.write_now(host.rerate)  # every game left, in result order
        host.ratings_epoch += 1
    return kind


@router.post("/announcement", response_model=Message)
def post_announcement(body: AnnouncementIn, admin: Admin, host: HostDep) -> Message:
    """Post the announcement shown on every page (the organiser's); "" takes it down."""
    text = _write(host, moderation.announce, body.text, admin.name)
    return Message(detail=text)
