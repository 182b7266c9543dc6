"""Signing in on the pages, the part that needs no database: a cookie session's value and
its check, and CSRF protection for forms (the host looks the participant up:
:mod:`arena.host.pages.sessions`).

- The session cookie (``moon_session``, ``HttpOnly``, ``SameSite=Lax``) holds the
  participant's id, when it was issued, and an HMAC-SHA256 over both and the hash of the
  participant's API token, keyed by the host's secret (kept in the database, made once).
  A new token (or a changed secret) ends every session made with the old one; nothing
  secret is in the cookie itself.
- CSRF: double submit. Every page sets a random ``moon_csrf`` cookie (``HttpOnly``,
  ``SameSite=Strict``) if it has none, and every form carries the same value in a hidden
  field; a POST whose field does not match its cookie is refused (403). With SameSite on
  top, another site can neither read the value nor send the cookie.
- Both cookies are ``Secure`` when the request came over HTTPS (as the host saw it, or as
  a reverse proxy on the same machine says in ``X-Forwarded-Proto``): a browser then never
  sends them over plain HTTP, where anyone on the way could read the session.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time

from fastapi import Request, Response

SESSION = "moon_session"
CSRF = "moon_csrf"
SESSION_DAYS = 30


_NUMBER = re.compile(r"[0-9]{1,18}")
"""A participant id or a time in a session cookie: ASCII digits, below 2**63."""


def _sign(secret: bytes, pid: int, issued: int, token_hash: str) -> str:
    msg = f"{pid}.{issued}.{token_hash}".encode()
    return hmac.new(secret, msg, hashlib.sha256).hexdigest()


def session_value(secret: bytes, pid: int, token_hash: str) -> str:
    """A new session cookie's value for participant ``pid`` (``ID.ISSUED.HMAC``, issued
    now), signed with the host's ``secret`` over the hash of their API token."""
    issued = int(time.time())
    return f"{pid}.{issued}.{_sign(secret, pid, issued, token_hash)}"


def read_session(request: Request) -> tuple[int, int, str] | None:
    """The request's session cookie as ``(participant id, issued (Unix seconds), HMAC)``,
    or None: no cookie, a malformed one, or one over :data:`SESSION_DAYS` old."""
    raw = request.cookies.get(SESSION, "")
    parts = raw.split(".")
    # ASCII digits only ("²".isdigit() is true too), few enough for a database integer
    if len(parts) != 3 or not all(_NUMBER.fullmatch(x) for x in parts[:2]):
        return None
    pid, issued = int(parts[0]), int(parts[1])
    if time.time() - issued > SESSION_DAYS * 86400:
        return None
    return pid, issued, parts[2]


def session_ok(secret: bytes, session: tuple[int, int, str], token_hash: str) -> bool:
    """Whether a session of :func:`read_session` was signed with ``secret`` for the
    participant whose API token has the hash ``token_hash``."""
    pid, issued, mac = session
    good = _sign(secret, pid, issued, token_hash)
    return hmac.compare_digest(good.encode(), mac.encode())


def _secure(request: Request) -> bool:
    """Whether the request came over HTTPS (then the cookies are ``Secure``)."""
    return request.url.scheme == "https"


def set_session(request: Request, response: Response, value: str | None) -> None:
    """Set (or with None, clear) the session cookie (``Secure`` over HTTPS)."""
    if value is None:
        response.delete_cookie(SESSION, path="/", httponly=True, samesite="lax",
                               secure=_secure(request))
    else:
        response.set_cookie(SESSION, value, max_age=SESSION_DAYS * 86400, path="/",
                            httponly=True, samesite="lax", secure=_secure(request))


def csrf_token(request: Request) -> str:
    """The request's CSRF value: its cookie's, or a new one (set by :func:`keep_csrf`)."""
    value = request.cookies.get(CSRF, "")
    if len(value) < 32:
        value = getattr(request.state, "new_csrf", "") or secrets.token_urlsafe(32)
        request.state.new_csrf = value
    return value


def keep_csrf(request: Request, response: Response) -> None:
    """Set the CSRF cookie if this request made a new value."""
    value = getattr(request.state, "new_csrf", "")
    if value:
        response.set_cookie(CSRF, value, path="/", httponly=True, samesite="strict",
                            secure=_secure(request))


def csrf_ok(request: Request, field: str | None) -> bool:
    """Whether a form's CSRF field matches the request's CSRF cookie."""
    cookie = request.cookies.get(CSRF, "")
    return bool(cookie) and bool(field) and hmac.compare_digest(cookie.encode(),
                                                                (field or "").encode())


__all__ = ["CSRF", "SESSION", "csrf_ok", "csrf_token", "keep_csrf", "read_session",
           "session_ok", "session_value", "set_session"]
