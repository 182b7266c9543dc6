"""A page as an HTTP answer: a template of ``templates/pages`` rendered with the form's
CSRF value, under the pages' security headers."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse

from . import auth
from .templating import templates

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
"""The pages' Content-Security-Policy: nothing from anywhere but the host, no inline
script."""


def html_page(request: Request, name: str, status: int = 200, **context: Any
              ) -> HTMLResponse:
    """``pages/<name>.html`` rendered with ``context``, the request and its CSRF value
    (``csrf``), answered with ``status``, :data:`CSP`, ``nosniff``, a same-origin
    referrer, and the CSRF cookie if this request made a new value."""
    html = templates().get_template(f"pages/{name}.html").render(
        request=request, csrf=auth.csrf_token(request), **context)
    response = HTMLResponse(html, status_code=status)
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    auth.keep_csrf(request, response)
    return response


__all__ = ["CSP", "html_page"]
