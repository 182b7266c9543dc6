"""The competition's phase (``GET /api/phase``), the organiser's move by hand
(``POST /api/phase``) and the audit log (``GET /api/audit``, the organiser's)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field

from ..audit import entries
from ..deps import Admin, HostDep, SessionDep
from ..phases import PHASES, parse_time
from ..schemas import iso

router = APIRouter(prefix="/api", tags=["phase"])


class PhaseOut(BaseModel):
    """The phase now and what it allows."""

    phase: str = Field(description=", ".join(PHASES))
    since: str | None = Field(description="When the host moved to it (UTC), if it has")
    by: str = Field(description="calendar, or organiser (moved by hand)")
    reason: str = Field(description="The organiser's reason for a move by hand")
    next_phase: str | None = Field(description="The phase it moves to next, or null")
    next_at: str | None = Field(description="When (UTC), or null: never, as things stand")
    registration: bool = Field(description="Whether registration is open now")
    submissions: bool = Field(description="Whether submissions are open now")
    games: bool = Field(description="Whether rated games are played now")
    calendar: dict[str, str | None] = Field(description="competition.toml's [calendar]")


class PhaseIn(BaseModel):
    """A move by hand."""

    phase: str = Field(description=", ".join(PHASES))
    until: str | None = Field(None, description="Hold it until this time (UTC, "
                              "2026-12-24T18:00:00Z); default: ahead of the calendar, "
                              "until the calendar reaches it; behind, until its next change")
    reason: str = Field("", max_length=500, description="Why, for the audit log and the "
                        "pages")


class AuditOut(BaseModel):
    """An entry of the audit log."""

    id: int
    at: str | None
    actor: str
    action: str
    detail: str


def _out(host: HostDep, s: SessionDep) -> PhaseOut:
    v = host.season.view(s)
    return PhaseOut(**vars(v), calendar=host.season.calendar.to_dict())


@router.get("/phase", response_model=PhaseOut)
def get_phase(host: HostDep, s: SessionDep) -> PhaseOut:
    """The phase, since when, the next change and what is open now."""
    return _out(host, s)


@router.post("/phase", response_model=PhaseOut, responses={403: {}, 422: {}})
def move_phase(body: PhaseIn, admin: Admin, host: HostDep, s: SessionDep) -> PhaseOut:
    """Move the competition to a phase by hand (the organiser's), written to the audit
    log on the host's writer thread, after the calendar's move and the claims before it.

    Raises:
        HTTPException: 422 for a phase that is not one, or a bad ``until``.
    """
    try:
        until = parse_time(body.until) if body.until else None
        host.writer.write_now(host.season.move_now, body.phase, admin.name, until,
                              body.reason.strip())
    except ValueError as e:
        raise HTTPException(422, str(e)) from None
    s.expire_all()  # the phase as written, not as this session may have read it
    return _out(host, s)


@router.get("/audit", response_model=list[AuditOut], responses={403: {}})
def audit_log(admin: Admin, s: SessionDep, limit: int = Query(100, ge=1, le=1000),
              offset: int = Query(0, ge=0, le=2**31)) -> list[AuditOut]:
    """The audit log, newest first (the organiser's): every change of phase and every
    organiser's action."""
    return [AuditOut(id=e.id, at=iso(e.at), actor=e.actor, action=e.action,
                     detail=e.detail) for e in entries(s, limit, offset)]
