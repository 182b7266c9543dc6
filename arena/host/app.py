"""The competition's ASGI app: :func:`create_app` wires a :class:`~arena.host.service.Host`
to the API routers and the web pages (:mod:`arena.web.pages`, static files under
``/static``); the host's loops run on the server's event loop for the app's life."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exception_handlers import (
    http_exception_handler,
    request_validation_exception_handler,
)
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from .routes import accounts, bots, games, leaderboard, status, submissions
from .service import Host

MAX_BODY = 64 * 1024
"""The largest body of a request other than a submission's upload, bytes."""


def create_app(host: Host) -> FastAPI:
    """The app serving ``host``: the JSON API under ``/api`` (OpenAPI at
    ``/openapi.json``, browsable at ``/docs``) and the competition's pages (``/``,
    ``/bots/...``, ``/games/...``, ``/signin``, ``/submit``; every asset from ``/static``)."""
    from ..web import pages
    from ..web.templating import STATIC


    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(host.run(), name="moon-host")
        try:
            yield
        finally:
            host.stop()
            await task

    app = FastAPI(title=f"Moon Arena: {host.settings.competition.name}", version=__version__,
                  description="A Moon bot competition: submit bots, follow the leaderboard "
                  "and the games.", lifespan=lifespan,
                  # the API's page is the host's own (arena.web.pages.api_page): FastAPI's
                  # /docs and /redoc load their scripts from CDNs, which would then run on
                  # this origin, next to the session cookie
                  docs_url=None, redoc_url=None)
    app.state.host = host
    limit = int(host.settings.limits.max_archive_mb * 1024 * 1024) + 64 * 1024

    @app.middleware("http")
    async def upload_limit(request: Request, call_next: Any) -> Response:
        """Refuse an oversize upload by its Content-Length, before it is read at all; any
        other request with a body (a sign-in, a registration) is small: over
        :data:`MAX_BODY` it is refused too (a huge JSON body would be read into memory and
        parsed on the event loop that keeps the games' clocks).

        An address with a NUL character (``%00``) in its path or query has nothing: no
        name, id or filter holds one, and PostgreSQL refuses a text that does (every such
        address was a 500 there). It gets the pages' Not found, or the API's 422."""
        if "\x00" in request.scope.get("path", "") or \
                b"%00" in request.scope.get("query_string", b""):
            if for_the_api(request.url.path):
                return JSONResponse({"detail": "the address holds a NUL character (%00): "
                                     "no name, id or filter has one"}, status_code=422)
            return await not_found_page(request, StarletteHTTPException(404))
        upload = request.method == "POST" and request.url.path in ("/api/submissions",
                                                                   "/submit")
        length = request.headers.get("content-length")
        if upload or length is not None or "transfer-encoding" in request.headers:
            if length is None or not (length.isascii() and length.isdigit()):
                return JSONResponse({"detail": "send the request with a Content-Length "
                                     "(moon submit does)"}, status_code=411)
            if upload and int(length) > limit:
                return JSONResponse({"detail": "the archive is over the limit of "
                                     f"{host.settings.limits.max_archive_mb:g} MB: leave "
                                     "build outputs and dependencies out"}, status_code=413)
            if not upload and int(length) > MAX_BODY:
                return JSONResponse({"detail": f"the request's body is over "
                                     f"{MAX_BODY // 1024} KB: only an archive "
                                     "(POST /api/submissions) may be larger"},
                                    status_code=413)
        response: Response = await call_next(request)
        return response

    for module in (accounts, submissions, bots, games, leaderboard, status):
        app.include_router(module.router)

    @app.get("/api", include_in_schema=False)
    def api_index() -> dict[str, Any]:
        """What the API offers: its endpoints (paths under ``/api``) and where the
        OpenAPI schema and its browsable docs are."""
        # from the schema: the app's own route list holds included routers unexpanded
        paths = sorted(p for p in app.openapi()["paths"] if p.startswith("/api/"))
        return {"openapi": "/openapi.json", "docs": "/docs", "endpoints": paths}

    @app.get("/bots", include_in_schema=False)
    def bots_page() -> RedirectResponse:
        """The bots are listed on the leaderboard (each links to its own page)."""
        return RedirectResponse("/", status_code=307)

    def for_the_api(path: str) -> bool:
        return path == "/api" or path.startswith(("/api/", "/static/", "/openapi.json"))

    @app.exception_handler(RequestValidationError)
    async def bad_page_address(request: Request, exc: RequestValidationError) -> Response:
        """A page's address with a part that cannot be (``/versions/abc``) has no page:
        the pages' own "Not found"; the API keeps FastAPI's JSON 422."""
        if for_the_api(request.url.path):
            return await request_validation_exception_handler(request, exc)
        return await not_found_page(request, StarletteHTTPException(404))

    @app.exception_handler(StarletteHTTPException)
    async def not_found_page(request: Request, exc: StarletteHTTPException) -> Response:
        """An address with no page (``/nonexistent``) gets the pages' own "Not found"
        page; the API, the assets and every other error keep FastAPI's JSON answer."""
        if exc.status_code != 404 or for_the_api(request.url.path):
            return await http_exception_handler(request, exc)
        with host.Session() as s:
            return pages.page(request, s, host, "error", status=404, title="Not found",
                              message="There is no page at this address: the leaderboard "
                              "links to every bot and game.")

    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
