"""The pages' "Not found": for something a page looks up, and for an address with no page
at all (the app's 404 handler: :mod:`arena.host.middleware`)."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from ..service import Host
from .base import page


def not_found(request: Request, s: Session, host: Host, what: str) -> HTMLResponse:
    """The error page (404) saying ``what`` is not there."""
    return page(request, s, host, "error", status=404, title="Not found", message=what)


def no_page(request: Request, host: Host) -> HTMLResponse:
    """The error page (404) for an address with no page (a session of its own)."""
    with host.WebSession() as s:
        return page(request, s, host, "error", status=404, title="Not found",
                    message="There is no page at this address: the leaderboard "
                    "links to every bot and game.")


def bad_form(request: Request, host: Host, field: str, why: str) -> HTMLResponse:
    """The error page (422) for a form sent with a field no page of the site sends
    (``field``: its name; ``why``: the check it failed, e.g. too long)."""
    with host.WebSession() as s:
        return page(request, s, host, "error", status=422, title="Not sent as asked",
                    message=f"This form's {field or 'fields'} is not as its page asks "
                    f"({why}): open the page again and fill it in there.")


__all__ = ["bad_form", "no_page", "not_found"]
