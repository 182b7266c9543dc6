"""The competition's ASGI app: :func:`create_app` wires a :class:`~arena.host.service.Host`
to the API routers (:mod:`arena.host.routes`), the pages (:mod:`arena.host.pages`) and the
static files under ``/static`` (:mod:`arena.web`), with the body limits and error pages of
:mod:`arena.host.middleware`; the host's loops run on the server's event loop for the
app's life."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..web.templating import STATIC
from . import middleware, openapi, pages
from .routes import (
    accounts,
    bots,
    challenges,
    final,
    games,
    leaderboard,
    moderation,
    participants,
    phase,
    revalidate,
    status,
    submissions,
)
from .service import Host
from .visitors import ASGIApp, VisitorLimits, Visitors


def create_app(host: Host, limits: VisitorLimits | None = None) -> FastAPI:
    """The app serving ``host``: the JSON API under ``/api`` (OpenAPI at
    ``/openapi.json``, browsable at ``/docs``) and the competition's pages (``/``,
    ``/bots/...``, ``/games/...``, ``/signin``, ``/submit``; every asset from ``/static``),
    behind :class:`arena.host.visitors.Visitors` (the public cache and the visitors'
    budget: ``limits``, by default from the ``[visitors]`` settings;
    ``app.state.visitors`` once the app has served a request)."""

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
                  # the API's page is the host's own (arena.host.pages.api): FastAPI's
                  # /docs and /redoc load their scripts from CDNs, which would then run on
                  # this origin, next to the session cookie
                  docs_url=None, redoc_url=None)
    app.state.host = host
    middleware.install(app, host)
    for module in (accounts, submissions, revalidate, bots, games, leaderboard, status, phase,
                   moderation, challenges, participants, final):
        app.include_router(module.router)
    app.include_router(pages.router)
    openapi.install(app)  # error bodies, enums, tokens per call: a client can be generated
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def visitors(inner: ASGIApp) -> Visitors:
        v = host.settings.visitors
        made = Visitors(inner, host.record_dir, limits or VisitorLimits(
            rate=v.requests_per_s, per_client=v.per_client_per_s, burst=v.burst,
            ttl_s=v.cache_s), changes=lambda: host.changes)
        app.state.visitors = made
        return made

    app.add_middleware(visitors)
    return app
