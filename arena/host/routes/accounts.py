"""Accounts: registration, invites, who am I."""

from __future__ import annotations

import math

from fastapi import APIRouter, HTTPException, Request
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...core.names import LOOKALIKE_RULE, lookalike
from ..deps import Admin, Caller, HostDep, SessionDep, User
from ..models import Bot, Invite, Participant
from ..registrations import client_key, minutes
from ..schemas import InviteOut, Me, RegisterIn, RegisterOut
from ..security import digest, new_invite, new_token

router = APIRouter(prefix="/api", tags=["accounts"])


@router.post("/register", status_code=201, response_model=RegisterOut,
             responses={403: {"description": "No valid invite code, or the competition is "
                              "full ([competition] max_participants)"},
                        409: {"description": "The name is taken"},
                        429: {"description": "Too many open registrations from the "
                              "caller's address ([competition] registrations_per_hour)"}})
def register(body: RegisterIn, request: Request, caller: Caller, host: HostDep,
             s: SessionDep) -> RegisterOut:
    """Register a participant; the answer holds their API token (shown only now).

    An invite code from the organiser is needed unless registration is open. An open
    registration (one without a valid invite code) is refused while the competition has
    ``[competition] max_participants`` participants (403), and after
    ``registrations_per_hour`` open registrations from the caller's address in the last
    hour (429, with Retry-After). Outside the calendar's registration (docs/host.md, "A
    season") it is refused (403) saying when it opens. The organiser (sending the admin
    token) needs no invite and is never limited."""
    comp = host.settings.competition
    organiser = caller is not None and caller.is_admin
    closed = None if organiser else host.season.refused(s, "register")
    if closed is not None:  # the phase's (an invite does not open it)
        raise HTTPException(403, closed)
    invite = None
    if body.invite and not organiser:
        invite = s.scalar(select(Invite).where(Invite.code_hash == digest(body.invite)))
        if invite is not None and invite.used_by is not None:
            invite = None
    if comp.registration == "invite" and invite is None and not organiser:
        if not body.invite:
            raise HTTPException(403, "registration needs an invite code from the organiser")
        raise HTTPException(403, "this invite code is not valid (or was used already)")
    window = host.registrations
    if invite is not None or organiser:
        with window.lock:  # two names that read alike at once: one gets in
            return _register(body, invite, s)
    # open registration: its limits are checked and counted under the same lock, so two
    # sent at once cannot both take the last place
    key = client_key(request.client.host if request.client else None)
    with window.lock:
        wait = window.wait_s(key)
        if wait > 0:
            raise HTTPException(
                429, f"too many registrations from your address: {window.count(key)} in the "
                f"last hour, the most this competition takes ([competition] "
                f"registrations_per_hour = {window.per_hour}): try again in "
                f"{minutes(wait)}, or ask the organiser for an invite code",
                headers={"Retry-After": str(math.ceil(wait))})
        cap = comp.max_participants
        if cap:
            n = s.scalar(select(func.count(Participant.id))
                         .where(Participant.is_admin.is_(False))) or 0
            if n >= cap:
                raise HTTPException(403, f"this competition is full: it has {n} "
                                    f"participants, the most it takes ([competition] "
                                    f"max_participants = {cap}); ask the organiser for an "
                                    "invite code")
        out = _register(body, None, s)
        window.add(key)
        return out


def _register(body: RegisterIn, invite: Invite | None, s: Session) -> RegisterOut:
    """Store the participant (claiming ``invite``, if any) and commit; the caller holds
    ``host.registrations.lock``.

    Raises:
        HTTPException: 409 for a name taken (in any case, or one that reads alike:
            :func:`arena.core.names.lookalike`), 403 for an invite claimed by
            another registration meanwhile.
    """
    # names differing only in case are one name (no "Alice" next to "alice")
    taken = s.scalar(select(Participant.name).where(
        func.lower(Participant.name) == body.name.lower()))
    if body.name.lower() == "admin" or taken is not None:
        raise HTTPException(409, f"the name {body.name!r} is taken"
                            + (f" (as {taken!r}: names that differ only in case are one "
                               "name)" if taken and taken != body.name else "")
                            + ": choose another")
    # nor an "aIice" (capital i) next to "alice": on a page the two read alike
    look = lookalike(body.name)
    twin = "admin" if look == lookalike("admin") else next(
        (n for n in s.scalars(select(Participant.name)) if lookalike(n) == look), None)
    if twin is not None:
        raise HTTPException(409, f"the name {body.name!r} looks like {twin!r}, which is "
                            f"taken ({LOOKALIKE_RULE}): choose another")
    token = new_token()
    p = Participant(name=body.name, token_hash=digest(token))
    s.add(p)
    try:
        s.flush()
    except IntegrityError:
        s.rollback()
        raise HTTPException(409, f"the name {body.name!r} is taken: choose another") from None
    if invite is not None:  # claimed only if still free: of two at once, one gets it
        claimed = s.execute(update(Invite).where(Invite.id == invite.id,
                                                 Invite.used_by.is_(None))
                            .values(used_by=p.id).execution_options(synchronize_session=False))
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            s.rollback()
            raise HTTPException(403, "this invite code is not valid (or was used already)")
    s.commit()
    return RegisterOut(name=p.name, token=token)


@router.get("/me", response_model=Me)
def me(user: User, s: SessionDep) -> Me:
    """The caller."""
    bots = s.scalars(select(Bot.name).where(Bot.owner_id == user.id).order_by(Bot.name))
    return Me(name=user.name, admin=user.is_admin, bots=list(bots),
              disabled=user.disabled_reason if user.disabled else None)


@router.post("/token", response_model=RegisterOut, responses={400: {}})
def replace_token(user: User, s: SessionDep) -> RegisterOut:
    """A new API token for the caller (shown only now): the old one stops working at once
    and every web session signed in with it ends. For a token that may have leaked."""
    if user.is_admin:
        raise HTTPException(400, "the organiser's token is the competition folder's "
                            "admin.token: write a new one there and restart the host")
    token = new_token()
    user.token_hash = digest(token)
    s.commit()
    return RegisterOut(name=user.name, token=token)


@router.post("/invites", status_code=201, response_model=InviteOut)
def make_invite(_: Admin, s: SessionDep) -> InviteOut:
    """A new invite code (organiser only)."""
    code = new_invite()
    s.add(Invite(code_hash=digest(code)))
    s.commit()
    return InviteOut(code=code)
