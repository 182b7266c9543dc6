"""Asking for a version to be validated again without changing it: a rejected version (its
owner or the organiser), need not be changed by a byte to be tried again after the host's
slowness rejected it; a disabled version (the organiser only) is built and validated again
before it plays again (docs/host.md, "From upload to rated games")."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .. import audit
from ..deps import HostDep, SessionDep, User, VersionId, can_see
from ..models import Bot, Participant, Version
from ..ratings import open_ratings
from ..schemas import VersionOut
from ..service import Host
from .submissions import WAITING

router = APIRouter(prefix="/api", tags=["submissions"])

AGAIN = "validated again at its owner's or the organiser's request"


def validate_again(s: Session, host: Host, user: Participant, version_id: int) -> Version:
    """Send version ``version_id`` back to the build queue (built and validated again,
    unchanged) and wake the builders; the version. A rejected one at its owner's or the
    organiser's request; a disabled one at the organiser's only (its forfeit run
    forgotten; active again only if it passes). The organiser's request is audited.

    Raises:
        HTTPException: 404 not a version of ``user``'s (the organiser's: any); 403 a
            disabled version asked for by its owner; 409 neither rejected nor disabled,
            its participant is disabled, or its bot has a newer version that is not
            rejected; 429 its owner has ``[limits] max_waiting`` versions waiting already
            (the organiser is not limited).
    """
    v = s.get(Version, version_id)
    if v is None or not can_see(user, v.bot.owner_id):
        raise HTTPException(404, f"no version {version_id} of yours")
    if v.status not in ("rejected", "disabled"):
        raise HTTPException(409, f"version {version_id} is {v.status}: only a rejected or "
                            "disabled version is validated again")
    if v.status == "disabled" and not user.is_admin:
        raise HTTPException(403, f"version {version_id} is disabled: only the organiser "
                            "can have it validated again (ask them), or submit a new "
                            "version")
    if v.bot.owner.disabled:
        raise HTTPException(409, f"{v.bot.owner.name} is disabled: enable the participant "
                            "first")
    newer = s.scalar(select(Version.id).where(Version.bot_id == v.bot_id,
                                              Version.number > v.number,
                                              Version.status != "rejected").limit(1))
    if newer is not None:
        raise HTTPException(409, f"version {version_id} is older than version {newer} of "
                            f"{v.bot.name}, which is not rejected: it would replace it; "
                            "submit its sources again as a new version instead")
    if not user.is_admin:
        waiting = s.scalar(select(func.count(Version.id)).join(Bot).where(
            Bot.owner_id == v.bot.owner_id, Version.status.in_(WAITING))) or 0
        limit = host.settings.limits.max_waiting
        if waiting >= limit:
            raise HTTPException(429, f"you have {waiting} versions waiting to be built and "
                                f"validated (at most {limit} at once): ask again once "
                                "they are done")
    was = v.status
    v.status, v.reason = "pending", AGAIN
    v.forfeits_in_row = 0
    if v.bot.active_version_id == v.id:
        v.bot.active_version_id = None
    if user.is_admin:
        audit.log(s, user.name, "revalidate", f"version {v.id} ({v.bot.name} #{v.number}), "
                  f"{was}: built and validated again")
    s.commit()
    host.wake()
    return v


@router.post("/versions/{version_id}/validate", status_code=202, response_model=VersionOut,
             responses={404: {}, 409: {}, 429: {}})
def revalidate(version_id: VersionId, user: User, host: HostDep, s: SessionDep
               ) -> VersionOut:
    """Validate your rejected version again, unchanged (its build too): it goes back to
    the queue as ``pending``. For a version rejected for the host's reasons (a loaded
    machine); the organiser may ask for anyone's, a disabled one's too."""
    v = validate_again(s, host, user, version_id)
    return VersionOut.of(v, True, open_ratings(s))
