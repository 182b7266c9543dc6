"""The organiser's moderation (docs/host.md, "Moderation"): disable a version with a reason
its owner reads, enable it again, void a finished game (the live ratings and counts are
recomputed from the games left, the batch fit leaves it out), and post an announcement
shown on every page. Each is written with its audit entry (:mod:`arena.host.audit`) in
one transaction; the routes run them on the host's writer thread."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import audit
from .models import Game, Meta, Version

ANNOUNCEMENT = "announcement"
"""The :class:`arena.host.models.Meta` key of the announcement (its text; "" for none)."""


class ModerationError(ValueError):
    """A moderation that cannot be done (the message says why, and what to do)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def disable(s: Session, version_id: int, reason: str, actor: str) -> Version:
    """Disable version ``version_id``: it plays no new game (its queued games are
    cancelled as they come up; one running finishes) and its owner reads ``reason``.

    Raises:
        ModerationError: 404 no such version, 409 not active, 422 no reason.
    """
    v = s.get(Version, version_id)
    if v is None:
        raise ModerationError(404, f"no version {version_id}")
    if not reason.strip():
        raise ModerationError(422, "say why (the reason): its owner reads it")
    if v.status != "active":
        raise ModerationError(409, f"version {version_id} is {v.status}: only an active "
                              "version is disabled")
    v.status = "disabled"
    v.reason = f"disabled by the organiser: {reason.strip()}"
    if v.bot.active_version_id == v.id:
        v.bot.active_version_id = None
    n = cancel_queued(s, v.id)
    audit.log(s, actor, "disable", f"version {v.id} ({v.bot.name} #{v.number}): "
              f"{reason.strip()}" + (f"; {n} queued game(s) cancelled" if n else ""))
    return v


def enable(s: Session, version_id: int, reason: str, actor: str) -> Version:
    """Make disabled version ``version_id`` active again (its forfeit run forgotten).

    Raises:
        ModerationError: 404 no such version, 409 not disabled, or its bot has another
            active version now.
    """
    v = s.get(Version, version_id)
    if v is None:
        raise ModerationError(404, f"no version {version_id}")
    if v.status != "disabled":
        raise ModerationError(409, f"version {version_id} is {v.status}: only a disabled "
                              "version is enabled")
    if v.bot.active_version_id not in (None, v.id):
        raise ModerationError(409, f"bot {v.bot.name} has another active version "
                              f"({v.bot.active_version_id}): disable it first")
    v.status = "active"
    v.reason = ""
    v.forfeits_in_row = 0
    v.bot.active_version_id = v.id
    audit.log(s, actor, "enable", f"version {v.id} ({v.bot.name} #{v.number})"
              + (f": {reason.strip()}" if reason.strip() else ""))
    return v


def void(s: Session, game_id: str, reason: str, actor: str) -> Game:
    """Void finished rated game ``game_id``: never rated from now on. The caller then
    recomputes the live ratings (:meth:`arena.host.ratings.Ratings.rerate`).

    Raises:
        ModerationError: 404 no such game, 409 not a finished rated game, 422 no reason.
    """
    g = s.get(Game, game_id)
    if g is None:
        raise ModerationError(404, f"no game {game_id!r}")
    if not reason.strip():
        raise ModerationError(422, "say why (the reason): the audit log keeps it")
    if g.kind != "rated" or g.status != "finished":
        raise ModerationError(409, f"game {game_id} is a {g.status} {g.kind} game: only a "
                              "finished rated game is voided")
    g.status = "voided"
    g.rated = False
    g.void_reason = f"voided by the organiser: {reason.strip()}"
    audit.log(s, actor, "void", f"game {g.id}: {reason.strip()}")
    return g


def announcement(s: Session) -> str:
    """The announcement shown on every page ("" for none)."""
    row = s.get(Meta, ANNOUNCEMENT)
    return str(row.value or "") if row is not None else ""


def announce(s: Session, text: str, actor: str) -> str:
    """Post ``text`` as the announcement ("" takes it down)."""
    text = " ".join(text.split())[:500]
    row = s.get(Meta, ANNOUNCEMENT)
    if row is None:
        s.add(Meta(key=ANNOUNCEMENT, value=text))
    else:
        row.value = text
    audit.log(s, actor, "announce", text or "(taken down)")
    return text


def cancel_queued(s: Session, version_id: int) -> int:
    """Cancel the queued games of ``version_id`` now (so its sets end); how many."""
    from .models import GameSeat

    ids = select(GameSeat.game_id).where(GameSeat.version_id == version_id)
    games = list(s.scalars(select(Game).where(Game.status == "queued", Game.id.in_(ids))))
    for g in games:
        g.status = "cancelled"
        g.void_reason = "a version in it was disabled by the organiser"
    return len(games)


__all__ = ["ANNOUNCEMENT", "ModerationError", "announce", "announcement", "cancel_queued",
           "disable", "enable", "void"]
