"""The competition's ASGI app: :func:`create_app` wires a :class:`~arena.host.service.Host`
to the API routers; the host's loops run on the server's event loop for the app's life."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from .. import __version__
from .routes import accounts, bots, games, leaderboard, status, submissions
from .service import Host


def create_app(host: Host) -> FastAPI:
    """The app serving ``host``: the JSON API under ``/api`` (OpenAPI at
    ``/openapi.json``, browsable at ``/docs``)."""

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
                  "and the games.", lifespan=lifespan)
    app.state.host = host
    for module in (accounts, submissions, bots, games, leaderboard, status):
        app.include_router(module.router)
    return app
