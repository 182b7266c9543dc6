"""Bots and their versions; a version's build and validation log (its owner only)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import PlainTextResponse
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from ...bots.versions import version_label
from ..deps import Caller, HostDep, SessionDep, VersionId, can_see
from ..models import Bot, Version
from ..ratings import open_ratings
from ..schemas import BotOut, VersionOut

router = APIRouter(prefix="/api", tags=["bots"])


def _bot_out(b: Bot, private: bool, open_: set[int], placement: int) -> BotOut:
    active = next((v for v in b.versions if v.id == b.active_version_id), None)
    return BotOut(name=b.name, owner=b.owner.name,
                  active_version=version_label(b.name, active.hash) if active else None,
                  versions=[VersionOut.of(v, private, open_, placement)
                            for v in b.versions])


@router.get("/bots", response_model=list[BotOut])
def list_bots(caller: Caller, host: HostDep, s: SessionDep) -> list[BotOut]:
    """Every bot with its versions."""
    bots = s.scalars(select(Bot).order_by(Bot.name).options(
        selectinload(Bot.versions), selectinload(Bot.owner))).all()
    open_ = open_ratings(s)
    placement = host.settings.matchmaking.placement_sets
    return [_bot_out(b, can_see(caller, b.owner_id), open_, placement) for b in bots]


@router.get("/bots/{name}", response_model=BotOut, responses={404: {}})
def get_bot(name: str, caller: Caller, host: HostDep, s: SessionDep) -> BotOut:
    """One bot with its versions (the reasons of rejections for its owner)."""
    b = s.scalar(select(Bot).where(Bot.name == name))
    if b is None:
        raise HTTPException(404, f"no bot {name!r}")
    return _bot_out(b, can_see(caller, b.owner_id), open_ratings(s),
                    host.settings.matchmaking.placement_sets)


@router.get("/versions/{version_id}", response_model=VersionOut, responses={404: {}})
def get_version(version_id: VersionId, caller: Caller, host: HostDep, s: SessionDep
                ) -> VersionOut:
    """One version (``provisional`` while in its placement series)."""
    v = s.get(Version, version_id)
    if v is None:
        raise HTTPException(404, f"no version {version_id}")
    return VersionOut.of(v, can_see(caller, v.bot.owner_id), open_ratings(s),
                         host.settings.matchmaking.placement_sets)


@router.get("/versions/{version_id}/log", response_class=PlainTextResponse,
            responses={404: {"description": "No such version, or not yours"}})
def version_log(version_id: VersionId, caller: Caller, host: HostDep, s: SessionDep) -> str:
    """The build and validation log of your version (others get 404)."""
    v = s.get(Version, version_id)
    if v is None or not can_see(caller, v.bot.owner_id):
        raise HTTPException(404, f"no version {version_id} of yours")
    path = host.build_log(v.id)
    if not path.is_file():
        raise HTTPException(404, f"version {version_id} has no log yet (status {v.status})")
    return host.for_participant(path.read_text(errors="replace"))
