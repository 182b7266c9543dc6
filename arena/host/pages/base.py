"""What every page of the host does: render its template with the competition's name and
who is signed in."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from ...web.render import html_page
from ..moderation import announcement
from ..service import Host
from .sessions import signed_in


def page(request: Request, s: Session, host: Host, name: str, status: int = 200,
         **context: Any) -> HTMLResponse:
    """Render ``pages/<name>.html`` with what every page needs (the competition, its phase,
    who is signed in, the CSRF value) and the pages' security headers
    (:func:`arena.web.render.html_page`)."""
    user = signed_in(request, s)
    view = host.season.view(s)
    # no calendar: one season for ever, nothing to say
    phase = None if not host.season.calendar.changes() and view.phase == "season" \
        and view.by == "calendar" else view
    return html_page(request, name, status, competition=host.settings.competition.name,
                     user=user, phase=phase, announcement=announcement(s),
                     tables=host.tables.on, **context)


__all__ = ["page"]
