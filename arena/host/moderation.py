"""The organiser's moderation (docs/host.md, "Moderation"): disable a version with a reason
its owner reads, enable it again; disable a participant (every active version of theirs
disabled with them, their queued games cancelled, no more submissions or challenges) and
enable them again (those versions back); void a finished rated game (the live ratings and
counts are recomputed from the games left, the batch fit leaves it out) or challenge (not
played again; its asker reads why), and post an announcement shown on every page. Each is
written with its audit entry (:mod:`arena.host.audit`) in one transaction; the routes run
them on the host's writer thread."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from . import audit
from .models import Bot, Game, Meta, Participant, Version, sets_ended

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


VOIDABLE = ("rated", "challenge")
"""The kinds of finished game the organiser voids: a rated one (the ratings recomputed
without it) and a challenge (never rated: its asker reads why, and may ask again)."""
NOT_AGAIN = "not played again (ask again: a voided challenge is not counted in your quota)"
"""What a challenge voided by the organiser says became of it, after the reason."""


def void(s: Session, game_id: str, reason: str, actor: str) -> Game:
    """Void finished game ``game_id``, rated or a challenge (:data:`VOIDABLE`). A rated
    one is never rated from now on: the caller then recomputes the live ratings
    (:meth:`arena.host.ratings.Ratings.rerate`). A challenge is not played again (as a
    rated game voided by the organiser is not): its asker reads the reason and
    :data:`NOT_AGAIN`, and it leaves their quota (:func:`arena.host.challenges.counted`).

    Raises:
        ModerationError: 404 no such game, 409 not a finished rated or challenge game,
            422 no reason.
    """
    g = s.get(Game, game_id)
    if g is None:
        raise ModerationError(404, f"no game {game_id!r}")
    why = " ".join(reason.split())
    if not why:
        raise ModerationError(422, "say why (the reason): the audit log keeps it")
    if g.kind not in VOIDABLE or g.status != "finished":
        raise ModerationError(409, f"game {game_id} is a {g.status} {g.kind} game: only a "
                              "finished rated or challenge game is voided")
    g.status = "voided"
    g.rated = False
    g.void_reason = f"voided by the organiser: {why}"
    if g.kind == "challenge":
        g.void_reason += f"; {NOT_AGAIN}"
        asker = s.get(Participant, g.asked_by) if g.asked_by is not None else None
        audit.log(s, actor, "void", f"challenge {g.id}"
                  + (f" (asked by {asker.name})" if asker is not None else "") + f": {why}")
    else:
        audit.log(s, actor, "void", f"game {g.id}: {why}")
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


WITH_PARTICIPANT = "disabled by the organiser with its participant: "
"""The start of the reason of a version disabled with its participant: enabling the
participant makes those versions (and only those) active again."""


def _participant(s: Session, name: str) -> Participant:
    p = s.scalar(select(Participant).where(Participant.name == name))
    if p is None:
        raise ModerationError(404, f"no participant {name!r}")
    if p.is_admin:
        raise ModerationError(409, "the organiser's own account is never disabled")
    return p


def disable_participant(s: Session, name: str, reason: str, actor: str) -> Participant:
    """Disable participant ``name``: each of their active versions is disabled with them
    (its queued games cancelled), their queued challenges are cancelled, and they may
    neither submit nor ask for challenges; they read ``reason``.

    Raises:
        ModerationError: 404 no such participant, 409 the organiser or disabled already,
            422 no reason.
    """
    p = _participant(s, name)
    why = reason.strip()
    if not why:
        raise ModerationError(422, "say why (the reason): the participant reads it")
    if p.disabled:
        raise ModerationError(409, f"participant {name} is disabled already (enable them "
                              "first to give another reason)")
    p.disabled, p.disabled_reason = True, why
    versions = list(s.scalars(select(Version).join(Bot, Version.bot_id == Bot.id).where(
        Bot.owner_id == p.id, Version.status == "active")))
    cancelled = 0
    for v in versions:
        v.status = "disabled"
        v.reason = WITH_PARTICIPANT + why
        if v.bot.active_version_id == v.id:
            v.bot.active_version_id = None
        cancelled += cancel_queued(s, v.id)
    for g in s.scalars(select(Game).where(Game.asked_by == p.id, Game.status == "queued")):
        g.status = "cancelled"
        g.void_reason = "its participant was disabled by the organiser"
        cancelled += 1
    audit.log(s, actor, "disable", f"participant {p.name}: {why}; "
              f"{len(versions)} version(s) disabled with them"
              + (f"; {cancelled} queued game(s) cancelled" if cancelled else ""))
    return p


def enable_participant(s: Session, name: str, reason: str, actor: str) -> Participant:
    """Enable disabled participant ``name`` again: the versions disabled with them are
    active again (one whose bot has another active version now stays disabled).

    Raises:
        ModerationError: 404 no such participant, 409 the organiser or not disabled.
    """
    p = _participant(s, name)
    if not p.disabled:
        raise ModerationError(409, f"participant {name} is not disabled")
    p.disabled, p.disabled_reason = False, ""
    back = 0
    for v in s.scalars(select(Version).join(Bot, Version.bot_id == Bot.id).where(
            Bot.owner_id == p.id, Version.status == "disabled").order_by(Version.id)):
        if not v.reason.startswith(WITH_PARTICIPANT) or v.bot.active_version_id is not None:
            continue
        v.status, v.reason, v.forfeits_in_row = "active", "", 0
        v.bot.active_version_id = v.id
        back += 1
    audit.log(s, actor, "enable", f"participant {p.name}"
              + (f": {reason.strip()}" if reason.strip() else "")
              + f"; {back} version(s) active again")
    return p


def disabled_line(p: Participant) -> str | None:
    """The one line refusing what a disabled participant asks (a submission, a
    challenge), or None when they are not disabled."""
    if not p.disabled:
        return None
    return ("your account is disabled by the organiser"
            + (f" ({p.disabled_reason})" if p.disabled_reason else "")
            + ": ask the organiser to enable it")


def cancel_queued(s: Session, version_id: int) -> int:
    """Cancel the queued games of ``version_id`` now (so its sets end); how many."""
    from .models import GameSeat

    ids = select(GameSeat.game_id).where(GameSeat.version_id == version_id)
    games = list(s.scalars(select(Game).where(Game.status == "queued", Game.id.in_(ids))))
    for g in games:
        g.status = "cancelled"
        g.void_reason = "a version in it was disabled by the organiser"
    sets_ended(s, [g.dset_id for g in games if g.kind == "rated"])
    return len(games)


__all__ = ["ANNOUNCEMENT", "NOT_AGAIN", "VOIDABLE", "WITH_PARTICIPANT", "ModerationError",
           "announce", "announcement", "cancel_queued", "disable", "disable_participant",
           "disabled_line", "enable", "enable_participant", "void"]
