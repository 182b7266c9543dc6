"""The organiser disables a participant, or enables them again, through the API
(:func:`arena.host.moderation.disable_participant`); each in the audit log."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from .. import moderation
from ..deps import Admin, HostDep
from .moderation import ReasonIn, _write

router = APIRouter(prefix="/api", tags=["moderation"])


class ParticipantOut(BaseModel):
    """A participant as the organiser moderates them."""

    name: str
    disabled: bool
    reason: str = Field(description="Why they are disabled (they read it), else empty")


@router.post("/participants/{name}/disable", response_model=ParticipantOut,
             responses={404: {}, 409: {}, 422: {}})
def disable_participant(name: str, body: ReasonIn, admin: Admin, host: HostDep
                        ) -> ParticipantOut:
    """Disable a participant (the organiser's): their versions stop being matched (each
    active one disabled with them), their queued games are cancelled, and they may not
    submit or ask for challenges until enabled; they read the reason."""
    p = _write(host, moderation.disable_participant, name, body.reason, admin.name)
    host.matchmaker.wake()
    host.changes += 1  # their bots' pages say so at once
    return ParticipantOut(name=p.name, disabled=p.disabled, reason=p.disabled_reason)


@router.post("/participants/{name}/enable", response_model=ParticipantOut,
             responses={404: {}, 409: {}})
def enable_participant(name: str, body: ReasonIn, admin: Admin, host: HostDep
                       ) -> ParticipantOut:
    """Enable a disabled participant again (the organiser's): the versions disabled with
    them play again."""
    p = _write(host, moderation.enable_participant, name, body.reason, admin.name)
    host.matchmaker.wake()
    host.changes += 1
    return ParticipantOut(name=p.name, disabled=p.disabled, reason=p.disabled_reason)
