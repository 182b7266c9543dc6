"""What the routes depend on, stated in their signatures: the host, a database session,
and who is calling (from the ``Authorization: Bearer TOKEN`` header)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import Participant
from .security import digest
from .service import Host

_bearer = HTTPBearer(auto_error=False, description="The API token from registration "
                     "(the organiser's is in the competition folder's admin.token).")


def get_host(request: Request) -> Host:
    """The competition this app serves."""
    host: Host = request.app.state.host
    return host


def get_session(host: Annotated[Host, Depends(get_host)]) -> Iterator[Session]:
    """A database session for one request (the web's own connections)."""
    with host.WebSession() as s:
        yield s


def optional_participant(
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        request: Request, s: Annotated[Session, Depends(get_session)]) -> Participant | None:
    """The caller, or None without a token.

    Raises:
        HTTPException: 401 for a malformed header or a token that is not known.
    """
    if creds is None:
        if request.headers.get("authorization"):
            raise HTTPException(401, "malformed Authorization header: send "
                                "'Authorization: Bearer TOKEN'",
                                headers={"WWW-Authenticate": "Bearer"})
        return None
    p = s.scalar(select(Participant).where(Participant.token_hash == digest(creds.credentials)))
    if p is None:
        raise HTTPException(401, "unknown token: this host has no account with it; check the "
                            "token sent (--token, MOON_TOKEN or the one `moon host register` "
                            "saved) is this host's and was not replaced by `moon host "
                            "new-token`", headers={"WWW-Authenticate": "Bearer"})
    return p


def current_participant(
        p: Annotated[Participant | None, Depends(optional_participant)]) -> Participant:
    """The caller, who must have a token.

    Raises:
        HTTPException: 401 without a token.
    """
    if p is None:
        raise HTTPException(401, "this needs your API token: 'Authorization: Bearer TOKEN'",
                            headers={"WWW-Authenticate": "Bearer"})
    return p


def admin(p: Annotated[Participant, Depends(current_participant)]) -> Participant:
    """The organiser.

    Raises:
        HTTPException: 403 for anyone else.
    """
    if not p.is_admin:
        raise HTTPException(403, "only the organiser (admin token) may do this")
    return p


HostDep = Annotated[Host, Depends(get_host)]
SessionDep = Annotated[Session, Depends(get_session)]
Caller = Annotated[Participant | None, Depends(optional_participant)]
User = Annotated[Participant, Depends(current_participant)]
Admin = Annotated[Participant, Depends(admin)]


DB_INT_MAX = 2**63 - 1
"""The largest integer a database column holds (SQLite's INTEGER, PostgreSQL's BIGINT): a
larger id, offset or count in a request is refused (422), never sent to the database."""
VersionId = Annotated[int, Path(le=DB_INT_MAX, description="A version's id")]
"""A version id in a path."""


def can_see(caller: Participant | None, owner_id: int) -> bool:
    """Whether ``caller`` may see what belongs to ``owner_id`` (owners and the
    organiser)."""
    return caller is not None and (caller.is_admin or caller.id == owner_id)
