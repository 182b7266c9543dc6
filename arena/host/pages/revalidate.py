"""The button on a rejected version's page (its owner's and the organiser's), or a disabled
one's (the organiser's), that has it validated again, unchanged
(:func:`arena.host.routes.revalidate.validate_again`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from ...web import auth
from ..deps import HostDep, SessionDep, VersionId
from ..routes.revalidate import validate_again
from .base import page
from .errors import not_found
from .sessions import signed_in

router = APIRouter(include_in_schema=False)


@router.post("/versions/{version_id}/validate")
def revalidate_page(version_id: VersionId, request: Request, host: HostDep, s: SessionDep,
                    csrf: Annotated[str, Form()] = "") -> Response:
    """Validate the version again, then back to its page (which follows it)."""
    user = signed_in(request, s)
    if user is None:
        return not_found(request, s, host, f"There is no version {version_id} of yours.")
    if not auth.csrf_ok(request, csrf):
        return page(request, s, host, "error", status=403, title="Form expired",
                    message="This form was not sent from this site's own page (or it has "
                    "expired): open the page again and send it from there.")
    try:
        validate_again(s, host, user, version_id)
    except HTTPException as e:
        if e.status_code == 404:
            return not_found(request, s, host, f"There is no version {version_id} of yours.")
        return page(request, s, host, "error", status=e.status_code,
                    title="Not validated again", message=f"{e.detail}.")
    return RedirectResponse(f"/versions/{version_id}", status_code=303)


__all__ = ["router"]
