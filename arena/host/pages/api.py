"""The API's own page (``/docs``): every endpoint of the app's OpenAPI schema, drawn on the
server."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from ...web.views import api_endpoints
from ..deps import HostDep, SessionDep
from .base import page

router = APIRouter(include_in_schema=False)


@router.get("/docs", response_class=HTMLResponse)
def api_page(request: Request, host: HostDep, s: SessionDep) -> HTMLResponse:
    """The API, browsable: every endpoint of the OpenAPI schema, drawn on the server like
    every page (FastAPI's own /docs would load its script from a CDN, on this origin)."""
    return page(request, s, host, "api", endpoints=api_endpoints(request.app.openapi()))


__all__ = ["router"]
