"""What the app does before and around its routes: request bodies refused by their
size before they are read, addresses with a NUL refused, and the pages' own "Not found"
for an address with no page (the API keeps FastAPI's JSON answers)."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exception_handlers import (
    http_exception_handler,
    request_validation_exception_handler,
)
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from .pages.errors import bad_form, no_page
from .service import Host

log = logging.getLogger("arena.host")

MAX_BODY = 64 * 1024
"""The largest body of a request other than a submission's upload, bytes."""


def for_the_api(path: str) -> bool:
    """Whether ``path`` is the API's, an asset's or the schema's (JSON errors), not a
    page's."""
    return path == "/api" or path.startswith(("/api/", "/static/", "/openapi.json"))


def install(app: FastAPI, host: Host) -> None:
    """Add the body limits and the error handlers to ``app``, which serves ``host``."""
    limit = int(host.settings.limits.max_archive_mb * 1024 * 1024) + 64 * 1024

    @app.exception_handler(StarletteHTTPException)
    async def not_found_page(request: Request, exc: StarletteHTTPException) -> Response:
        """An address with no page (``/nonexistent``) gets the pages' own "Not found"
        page; the API, the assets and every other error keep FastAPI's JSON answer."""
        if exc.status_code != 404 or for_the_api(request.url.path):
            return await http_exception_handler(request, exc)
        return no_page(request, host)

    @app.exception_handler(RequestValidationError)
    async def bad_page_address(request: Request, exc: RequestValidationError) -> Response:
        """A page's address with a part that cannot be (``/versions/abc``) has no page:
        the pages' own "Not found"; a form's field that cannot be (too long) is the
        form's 422 page saying which; the API keeps FastAPI's JSON 422."""
        if for_the_api(request.url.path):
            return await request_validation_exception_handler(request, exc)
        errors = exc.errors()
        if request.method == "POST" and errors and errors[0].get("loc", ("",))[0] == "body":
            # a form's field (too long, not a number): the form's fault, not the address's
            first = errors[0]
            field = str(first["loc"][-1]) if len(first["loc"]) > 1 else ""
            return await run_in_threadpool(bad_form, request, host, field,
                                           str(first.get("msg", "")).lower())
        return await not_found_page(request, StarletteHTTPException(404))

    said = [-1e9]

    @app.exception_handler(SQLAlchemyError)
    async def database_unavailable(request: Request, exc: SQLAlchemyError) -> Response:
        """The database could not answer (down, no connection free in time, a disk that
        is full): 503 with ``Retry-After``, never a 500; one line in the log a minute."""
        now = time.monotonic()
        if now - said[0] >= 60.0:
            said[0] = now
            first = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or [""])[0]
            log.warning("the database could not answer a request (%s %s): %s: %s; "
                        "answered 503 (said once a minute)", request.method,
                        request.url.path, type(exc).__name__, first[:300])
        return JSONResponse({"detail": "the host cannot read its database just now: try "
                             "again in a few seconds"}, status_code=503,
                            headers={"Retry-After": "5"})

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


__all__ = ["MAX_BODY", "for_the_api", "install"]
