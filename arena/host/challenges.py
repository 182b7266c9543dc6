"""Challenges (docs/host.md, "Challenges"): a participant asks for an unrated test game of
one of their versions against a chosen opponent (another bot's version, or one of the
host's reference bots). A challenge is one game of kind ``challenge`` whose ``asked_by``
is the participant (migration 0008):

- it is dealt from a fresh random seed, never from the competition's master seed, so it
  gives away no board of a rated set, now or to come;
- its result never enters a rating: the recorder rates ``rated`` games alone, the batch
  fit reads them alone, and its forfeits do not count towards ``forfeit_limit``;
- the matchmaker plays it between rated games, within ``[challenges] share`` of the
  games' slots (:func:`slots`), so rated games are never starved;
- a participant asks for at most ``[challenges] per_hour`` in any hour (:func:`wait_s`);
- its result and record are the asker's (and the organiser's); the opponent's owner sees
  that the game exists, with its result, but not its record (:func:`hidden`);
- one the host could not play (a runner's failure, a restart) is voided and played again
  as a new game of the same seats and deal, ``c3-r1`` for ``c3``
  (:meth:`arena.host.recorder.Recorder.void`), whose reason says so; the asker follows it
  (``again``), and it counts once in the quota;
- one the organiser voids once finished (:func:`arena.host.moderation.void`) is not
  played again, as a rated game the organiser voids is not: its asker reads why, and it
  leaves their quota (:func:`counted` leaves out every voided challenge).

Each check is a :class:`ChallengeError` whose message is one line saying what to do.
"""

from __future__ import annotations

import datetime as dt
import math
import secrets
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .matchmaking import side
from .models import Bot, Game, GameSeat, Participant, Version, utcnow
from .moderation import disabled_line
from .registrations import minutes

WINDOW = dt.timedelta(hours=1)
"""The quota's window: ``per_hour`` challenges in any hour."""
PLAYABLE = ("active", "retired")
"""The statuses of a version a challenge may seat: an active one, or an older one of its
bot (its sources are kept); never a disabled or rejected one."""
HIDDEN = "shown only to the participant who asked for it (a challenge game)"
"""Why a challenge game's record is not shown to others (:func:`hidden`)."""


class ChallengeError(ValueError):
    """A challenge refused: ``status`` its HTTP status, the message one line saying what
    to do; ``retry_after`` (seconds) for a quota's 429."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def _utc(t: dt.datetime) -> dt.datetime:
    """``t`` as an aware UTC time (SQLite hands back naive UTC times)."""
    return t.replace(tzinfo=dt.UTC) if t.tzinfo is None else t.astimezone(dt.UTC)


def wait_s(asked: Sequence[dt.datetime], per_hour: int, now: dt.datetime) -> float:
    """Seconds until one more challenge fits in the quota, 0 if it fits now: ``asked``
    are the times of the participant's counted challenges (any order, older ones
    ignored), at most ``per_hour`` in any hour. Over the quota, it is when the oldest
    challenge that must leave the window does (one hour after it was asked).

    >>> t = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
    >>> wait_s([t, t + dt.timedelta(minutes=10)], 2, t + dt.timedelta(minutes=20))
    2400.0
    >>> wait_s([t], 2, t)
    0.0
    """
    now = _utc(now)
    recent = sorted(_utc(t) for t in asked if _utc(t) > now - WINDOW)
    if len(recent) < per_hour:
        return 0.0
    # the challenges past the quota's count all wait for the one that makes room
    leaves = recent[len(recent) - per_hour] + WINDOW if per_hour > 0 else now + WINDOW
    return max(0.0, (leaves - now).total_seconds())


def slots(capacity: int, share: float) -> int:
    """The challenge games that may run at once on ``capacity`` slots: ``share`` of them,
    rounded down, but at least one.

    >>> slots(2, 0.5), slots(4, 0.5), slots(5, 0.5), slots(1, 0.5), slots(8, 1.0)
    (1, 2, 2, 1, 8)
    """
    return max(1, math.floor(capacity * share + 1e-9))


def counted(s: Session, participant_id: int, now: dt.datetime) -> list[dt.datetime]:
    """When ``participant_id`` asked for the challenges of the last hour that count
    against their quota (a voided one, the host's failure, does not)."""
    return list(s.scalars(select(Game.created_at).where(
        Game.asked_by == participant_id, Game.kind == "challenge",
        Game.created_at > now - WINDOW, Game.status != "voided")))


def hidden(g: Game, caller: Participant | None) -> str | None:
    """Why a challenge game's record, replay and stderr are not shown to ``caller`` (the
    asker and the organiser see them), or None; None for any other game."""
    if g.kind != "challenge":
        return None
    if caller is not None and (caller.is_admin or caller.id == g.asked_by):
        return None
    return HIDDEN


def _own_version(s: Session, asker: Participant, version_id: int | None) -> Version:
    """The asker's version a challenge seats: ``version_id``, or their one active version.

    Raises:
        ChallengeError: 404 not theirs; 409 not active; 422 none or several to choose from.
    """
    if version_id is not None:
        v = s.get(Version, version_id)
        if v is None or v.bot.owner_id != asker.id:
            raise ChallengeError(404, f"you have no version {version_id}: name one of "
                                 "yours (GET /api/me lists your bots)")
        if v.status != "active":
            raise ChallengeError(409, f"your version {version_id} is {v.status}: a "
                                 "challenge plays one of your active versions")
        return v
    mine = list(s.scalars(select(Version).join(Bot, Version.id == Bot.active_version_id)
                          .where(Bot.owner_id == asker.id, Version.status == "active")
                          .order_by(Bot.name)))
    if not mine:
        raise ChallengeError(422, "you have no active version to play a challenge with: "
                             "submit a bot and wait until it is active")
    if len(mine) > 1:
        names = ", ".join(f"{v.bot.name} (version id {v.id})" for v in mine)
        raise ChallengeError(422, f"you have {len(mine)} active versions ({names}): say "
                             "which plays with --mine / \"version\"")
    return mine[0]


def _opponent(s: Session, name: str, number: int | None, references: Sequence[str]
              ) -> Version | str:
    """The opponent: bot ``name``'s version ``number`` (default: its active one), or the
    reference bot ``name`` (its name).

    Raises:
        ChallengeError: 404 no such bot or version; 409 one that cannot play, or whose
            participant is disabled; 422 a reference bot's version.
    """
    b = s.scalar(select(Bot).where(func.lower(Bot.name) == name.lower()))
    if b is None:
        # as bots' names, a reference bot's is matched whatever its case
        ref = next((r for r in references if r.lower() == name.lower()), None)
        if ref is not None:
            if number is not None:
                raise ChallengeError(422, f"{ref} is a reference bot, which has no "
                                     "versions: leave out --version / \"version\"")
            return ref
        refs = f"; or a reference bot: {', '.join(references)}" if references else ""
        raise ChallengeError(404, f"there is no bot named {name!r}: name a bot of the "
                             f"leaderboard{refs}")
    if b.owner.disabled:  # its versions play no more, even one turned active since
        raise ChallengeError(409, f"bot {b.name} is disabled by the organiser with its "
                             "participant: challenge another bot")
    if number is None:
        v = s.get(Version, b.active_version_id) if b.active_version_id else None
        if v is None:
            raise ChallengeError(409, f"bot {b.name} has no active version now: name one "
                                 "of its versions (--version N)")
        return v
    v = s.scalar(select(Version).where(Version.bot_id == b.id, Version.number == number))
    if v is None:
        raise ChallengeError(404, f"bot {b.name} has no version {number} (it has "
                             f"{len(b.versions)}): name one of those")
    if v.status not in PLAYABLE:
        raise ChallengeError(409, f"version {number} of {b.name} is {v.status}: challenge "
                             "an active or a retired version")
    return v


def ask(s: Session, asker: Participant, opponent: str, number: int | None,
        version_id: int | None, *, per_hour: int, players: int, references: Sequence[str],
        closed: str | None = None, now: dt.datetime | None = None) -> Game:
    """Queue a challenge of ``asker``: their version ``version_id`` (default: their one
    active version) against ``opponent`` (a bot's name, ``number`` its version, default
    its active one; or a reference bot's name) in every other seat. ``closed``: the
    phase's refusal (games are not played now), if any. Returns the queued game (its seats
    added); run it in the writer's transaction.

    Raises:
        ChallengeError: 403 the asker is disabled; 409 the phase plays no games, or a
            version that cannot play; 404 no such bot or version; 422 nothing to play with,
            or a version against itself; 429 over the quota (``retry_after`` set).
    """
    now = now or utcnow()
    off = disabled_line(asker)
    if off is not None:
        raise ChallengeError(403, off)
    if closed is not None:
        raise ChallengeError(409, f"no challenge now: {closed}")
    mine = _own_version(s, asker, version_id)
    other = _opponent(s, opponent, number, references)
    if isinstance(other, Version) and other.bot_id == mine.bot_id:
        raise ChallengeError(422, f"{opponent} is your own bot: challenge another bot's "
                             "version, or a reference bot")
    if not asker.is_admin:
        if per_hour == 0:
            raise ChallengeError(403, "this competition takes no challenges ([challenges] "
                                 "per_hour = 0)")
        wait = wait_s(counted(s, asker.id, now), per_hour, now)
        if wait > 0:
            raise ChallengeError(429, f"you asked for {per_hour} challenges in the last "
                                 f"hour, the most this competition takes ([challenges] "
                                 f"per_hour = {per_hour}): ask again in {minutes(wait)}",
                                 retry_after=math.ceil(wait))
    n = (s.scalar(select(func.count()).select_from(Game).where(  # replays aside (c3-r1)
        Game.kind == "challenge", Game.attempt == 0)) or 0) + 1
    while s.get(Game, f"c{n}") is not None:  # ids are never reused, whatever was deleted
        n += 1
    # its own random deal: the master seed's boards stay the rated sets' alone
    g = Game(id=f"c{n}", kind="challenge", seed=secrets.randbits(63), status="queued",
             asked_by=asker.id, created_at=now)
    seats = []
    for i in range(players):
        ours = i == 0 or (players == 4 and i == 2)  # partners with a copy of itself
        if ours:
            seats.append(GameSeat(seat=i, version_id=mine.id, side=side(i, players)))
        elif isinstance(other, Version):
            seats.append(GameSeat(seat=i, version_id=other.id, side=side(i, players)))
        else:
            seats.append(GameSeat(seat=i, version_id=None, reference=other,
                                  side=side(i, players)))
    g.seats = seats
    s.add(g)
    s.flush()
    return g


def playable(s: Session, g: Game, references: Sequence[str]) -> str | None:
    """Why queued challenge ``g`` cannot be played now (a version disabled, or its owner;
    a reference bot gone), or None."""
    for x in g.seats:
        if x.version_id is None:
            if x.reference not in references:
                return f"the reference bot {x.reference!r} is no longer the host's"
            continue
        v = s.get(Version, x.version_id)
        if v is None or v.status not in PLAYABLE:
            return "a version in it can no longer play" + (f" ({v.status})" if v else "")
        if v.bot.owner.disabled:
            return "a participant in it was disabled by the organiser"
    return None


def mine(s: Session, asker_id: int, limit: int = 50, offset: int = 0) -> list[Game]:
    """The challenges ``asker_id`` asked for, newest first."""
    return list(s.scalars(select(Game).where(Game.asked_by == asker_id,
                                             Game.kind == "challenge")
                          .order_by(Game.created_at.desc(), Game.id.desc())
                          .limit(limit).offset(offset)))


__all__ = ["HIDDEN", "PLAYABLE", "WINDOW", "ChallengeError", "ask", "counted", "hidden",
           "mine", "playable", "slots", "wait_s"]
