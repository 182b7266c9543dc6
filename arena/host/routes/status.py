"""The host's status, and the API's own index (``/api``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from ..deps import HostDep, SessionDep
from ..schemas import StatusOut

router = APIRouter(prefix="/api", tags=["status"])


@router.get("/status", response_model=StatusOut)
def status(request: Request, host: HostDep, s: SessionDep) -> StatusOut:
    """Queue, running games, games per minute (over the last 5 minutes), workers, versions
    by status, why no rated game can start, and why submissions wait for the host."""
    # the builder's last failure of the host's own (no Docker engine...), cleared once a
    # build gets through
    problem = host._builder_problem  # noqa: SLF001 - kept by the build loop
    visitors = getattr(request.app.state, "visitors", None)
    return StatusOut(**host.status(s), builds_waiting=(
        f"submissions wait (pending) until the host can build them: {problem}"
        if problem else ""), visitors=visitors.counts.as_dict() if visitors else {})


@router.get("", include_in_schema=False)
def api_index(request: Request) -> dict[str, Any]:
    """What the API offers: its endpoints (paths under ``/api``) and where the
    OpenAPI schema and its browsable docs are."""
    # from the schema: the app's own route list holds included routers unexpanded
    paths = sorted(p for p in request.app.openapi()["paths"] if p.startswith("/api/"))
    return {"openapi": "/openapi.json", "docs": "/docs", "endpoints": paths}
