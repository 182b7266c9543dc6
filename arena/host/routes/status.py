"""The host's status."""

from __future__ import annotations

from fastapi import APIRouter

from ..deps import HostDep, SessionDep
from ..schemas import StatusOut

router = APIRouter(prefix="/api", tags=["status"])


@router.get("/status", response_model=StatusOut)
def status(host: HostDep, s: SessionDep) -> StatusOut:
    """Queue, running games, games per minute (over the last 5 minutes), workers, versions
    by status."""
    return StatusOut(**host.status(s))
