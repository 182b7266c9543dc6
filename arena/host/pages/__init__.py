"""The competition's pages (server-rendered, Jinja2 templates of :mod:`arena.web`), one
router per resource, which :func:`arena.host.app.create_app` mounts next to its JSON API.

Every page reads the same rows the API does, through the API's own functions where one
exists (the leaderboard, a version, a game), so the pages and the API cannot disagree.
What is private stays private exactly as in the API: a version's reason and build log
and a seat's stderr only for its owner (and the organiser); validation games only for the
owners of the versions in them; anyone else gets the same 404 as for something that does
not exist.

- :mod:`~arena.host.pages.leaderboard`: ``/`` (the leaderboard);
- :mod:`~arena.host.pages.bots`: ``/bots/{name}``, ``/versions/{id}`` (build and
  validation progress; log for its owner);
- :mod:`~arena.host.pages.games`: ``/games`` (filter by bot and result), ``/games/{id}``
  (replay player once over, live view while it runs), ``/games/{id}/stderr/{seat}``;
- :mod:`~arena.host.pages.live`: ``/games/{id}/events`` (server-sent events from the
  referee's public watch stream);
- :mod:`~arena.host.pages.final`: ``/final`` (the final's progress and standings; once
  the competition has ended, the front page shows its standings first);
- :mod:`~arena.host.pages.api`: ``/docs`` (the API, from its OpenAPI schema);
- :mod:`~arena.host.pages.accounts`: ``/signin``, ``/signout``, ``/submit``;
- :mod:`~arena.host.pages.revalidate`: the "Validate again" button of a rejected version
  (its owner's and the organiser's) or a disabled one (the organiser's);
- :mod:`~arena.host.pages.challenges`: ``/challenges`` (ask for one; yours);
- :mod:`~arena.host.pages.tables`: ``/tables/...``, a person playing the bots ("play
  against this bot", ``[tables]``);
- :mod:`~arena.host.pages.errors`: the pages' "Not found".

Static files are under ``/static`` (:data:`arena.web.templating.STATIC`).
"""

from __future__ import annotations

from fastapi import APIRouter

from . import accounts, api, bots, challenges, final, games, leaderboard, live, revalidate, tables

router = APIRouter(include_in_schema=False)
for _module in (leaderboard, bots, games, live, api, accounts, revalidate, challenges, final,
                tables):
    router.include_router(_module.router)

__all__ = ["router"]
