"""The host's status."""

from __future__ import annotations

from fastapi import APIRouter

from ..deps import HostDep, SessionDep
from ..schemas import StatusOut

router = APIRouter(prefix="/api", tags=["status"])


@router.get("/status", response_model=StatusOut)
def status(host: HostDep, s: SessionDep) -> StatusOut:
    """Queue, running games, games per minute (over the last 5 minutes), workers, versions
    by status, why no rated game can start, and why submissions wait for the host."""
    # the builder's last failure of the host's own (no Docker engine...), cleared once a
    # build gets through
    problem = host._builder_problem  # noqa: SLF001 - kept by the build loop
    return StatusOut(**host.status(s), builds_waiting=(
        f"submissions wait (pending) until the host can build them: {problem}"
        if problem else ""))
