"""Who is signed in on the pages: the host's key for session cookies, a participant by
their API token, the participant of a request's session cookie (the cookie itself:
:mod:`arena.web.auth`)."""

from __future__ import annotations

import secrets

from fastapi import Request
from sqlalchemy import select
from sqlalchemy.orm import Session

from ...web import auth
from ..models import Meta, Participant
from ..security import digest

_SECRET_KEY = "web_secret"


def host_secret(s: Session) -> bytes:
    """The host's key for session cookies (made on first use, kept in ``meta``)."""
    row = s.get(Meta, _SECRET_KEY)
    if row is None:
        row = Meta(key=_SECRET_KEY, value=secrets.token_hex(32))
        s.add(row)
        s.commit()
    return bytes.fromhex(str(row.value))


def sign_in(s: Session, token: str) -> tuple[Participant, str] | None:
    """The participant whose API token this is and their new session cookie value, or
    None for a token that is not known."""
    p = s.scalar(select(Participant).where(Participant.token_hash == digest(token.strip())))
    if p is None:
        return None
    return p, auth.session_value(host_secret(s), p.id, p.token_hash)


def signed_in(request: Request, s: Session) -> Participant | None:
    """Who the request's session cookie belongs to, or None (no cookie, a forged or
    expired one, or one made with a token that has since changed)."""
    session = auth.read_session(request)
    if session is None:
        return None
    p = s.get(Participant, session[0])
    if p is None:
        return None
    return p if auth.session_ok(host_secret(s), session, p.token_hash) else None


__all__ = ["host_secret", "sign_in", "signed_in"]
