"""Submissions: a bot folder as an archive becomes a new version of the caller's bot."""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, File, HTTPException, Response, UploadFile
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...bots.manifest import BotSpec
from ...core.names import LOOKALIKE_RULE, lookalike
from ...errors import ConfigError
from ..deps import HostDep, SessionDep, User
from ..models import Bot, Participant, Version, utcnow
from ..moderation import disabled_line
from ..ratings import open_ratings
from ..schemas import VersionOut
from ..service import Host
from ..submissions import UploadLimits, take_upload

router = APIRouter(prefix="/api", tags=["submissions"])


WAITING = ("pending", "building", "validating")
"""A version's statuses while it waits for its build and validation."""


def _quota(s: Session, user: Participant, max_waiting: int, per_day: int,
           refused: int = 0) -> None:
    """Refuse (429) a new version from ``user`` who already has ``max_waiting`` versions
    waiting for their build and validation, or made ``per_day`` versions in the last 24
    hours, counting the ``refused`` uploads of those hours
    (:class:`arena.host.refusals.UploadRefusals`) as versions. The organiser is not
    limited."""
    if user.is_admin:
        return
    mine = select(func.count(Version.id)).join(Bot).where(Bot.owner_id == user.id)
    waiting = s.scalar(mine.where(Version.status.in_(WAITING))) or 0
    if waiting >= max_waiting:
        raise HTTPException(429, f"you have {waiting} versions waiting to be built and "
                            f"validated (at most {max_waiting} at once): wait until they are "
                            "done (GET /api/versions/ID), then submit again")
    _per_day(s, user, per_day, refused)


def _per_day(s: Session, user: Participant, per_day: int, refused: int) -> None:
    """Refuse (429) ``user``, who made ``per_day`` new versions in the last 24 hours,
    counting ``refused`` uploads as versions."""
    mine = select(func.count(Version.id)).join(Bot).where(Bot.owner_id == user.id)
    since = utcnow() - dt.timedelta(days=1)
    made = s.scalar(mine.where(Version.created_at >= since)) or 0
    if made + refused >= per_day:
        raise HTTPException(429, f"you submitted {made} new versions"
                            + (f" and {refused} uploads that were refused" if refused else "")
                            + " in the last 24 hours, the limit of this competition "
                            "([limits] max_versions_per_day): submit again tomorrow")


@router.post("/submissions", status_code=201, response_model=VersionOut,
             responses={200: {"description": "These sources were submitted already"},
                        429: {"description": "Too many versions waiting, or made today"}})
def submit(archive: Annotated[UploadFile, File(description="The bot folder as .tar.gz, "
                                               ".tar or .zip, bot.toml at its top")],
           user: User, host: HostDep, s: SessionDep, response: Response) -> VersionOut:
    """Submit a new version of one of your bots (the name in its bot.toml; a new name makes
    a new bot). It is built and validated in the background: poll the version. Refused
    (429) while you have ``[limits] max_waiting`` versions waiting for their build and
    validation, or after ``max_versions_per_day`` new versions in 24 hours; refused (403)
    outside the phases that take submissions, saying when they open (the organiser's
    are not)."""
    closed = None if user.is_admin else host.season.refused(s, "submit")
    if closed is not None:
        raise HTTPException(403, closed)
    off = disabled_line(user)
    if off is not None:
        raise HTTPException(403, off)
    lim = host.settings.limits
    limits = UploadLimits(int(lim.max_archive_mb * 1024 * 1024),
                          int(lim.max_unpacked_mb * 1024 * 1024), lim.max_files)
    found: list[Version] = []
    held: list[bool] = []

    def accept(spec: BotSpec, version: str) -> None:
        """Every check that needs no write, before the upload is stored: a refused
        upload leaves nothing on the host's disk. From here to the new version's commit
        the host's submission lock is held, so that submissions at once cannot all pass
        the quota (nor take one version number, nor race to make one bot)."""
        host.submissions.acquire()
        held.append(True)
        name = spec.name
        allowed, image = host.settings.runner.images, spec.extra.get("image")
        if image is not None and allowed is not None and image not in allowed:
            raise HTTPException(400, f"bot.toml: image = {image!r} is not one this "
                                f"competition allows ({', '.join(allowed) or 'none'}): name "
                                "one of them, or ask the organiser to add yours")
        look = lookalike(name)
        if name.lower() in {r.name.lower() for r in host.references} or \
                look in {lookalike(r.name) for r in host.references}:
            raise HTTPException(409, f"the bot name {name!r} is the host's reference bot's"
                                " (or reads as it): rename your bot (name in bot.toml)")
        # names differing only in case are one name (no "Heuristic" next to "heuristic")
        bot = s.scalar(select(Bot).where(func.lower(Bot.name) == name.lower()))
        if bot is not None and bot.owner_id != user.id:
            raise HTTPException(409, f"the bot name {name!r} belongs to another participant"
                                + (f" (as {bot.name!r}: names that differ only in case are "
                                   "one name)" if bot.name != name else "")
                                + ": rename your bot (name in bot.toml)")
        if bot is None:  # nor "BestBot" next to another's "BestB0t": they read alike
            twin = next((b for b, owner in s.execute(select(Bot.name, Bot.owner_id))
                         if owner != user.id and lookalike(b) == look), None)
            if twin is not None:
                raise HTTPException(409, f"the bot name {name!r} looks like {twin!r}, "
                                    f"another participant's bot ({LOOKALIKE_RULE}): rename "
                                    "your bot (name in bot.toml)")
        if bot is not None and bot.name != name:
            raise HTTPException(409, f"you have a bot named {bot.name!r}: names that differ "
                                f"only in case are one name, so write name = {bot.name!r} "
                                "in bot.toml")
        same = None if bot is None else s.scalar(
            select(Version).where(Version.bot_id == bot.id, Version.hash == version))
        if same is not None:
            found.append(same)
            return
        _quota(s, user, lim.max_waiting, lim.max_versions_per_day,
               host.refusals.count(user.id))

    try:
        refused = 0 if user.is_admin else host.refusals.count(user.id)
        if refused:  # before the archive is read: refusals are what cost it the most
            _per_day(s, user, lim.max_versions_per_day, refused)
        return _submit(archive, user, host, s, response, limits, accept, found)
    except HTTPException as e:
        # a refused upload costs its sender a version of the day's quota (not a refusal
        # for the quota itself), and is said in the log
        if e.status_code != 429 and 400 <= e.status_code < 500 and not user.is_admin:
            host.refusals.add(user.id, user.name, e.status_code, str(e.detail))
        raise
    finally:
        if held:
            host.submissions.release()


def _submit(archive: UploadFile, user: Participant, host: Host, s: Session,
            response: Response, limits: UploadLimits, accept: Callable[[BotSpec, str], None],
            found: list[Version]) -> VersionOut:
    """:func:`submit`'s body: the upload read, checked (``accept``) and stored."""
    lim = host.settings.limits
    with tempfile.SpooledTemporaryFile(max_size=1 << 20) as buf:
        total = 0
        while chunk := archive.file.read(1 << 16):
            total += len(chunk)
            if total > limits.max_archive:
                raise HTTPException(413, f"the archive is over the limit of "
                                    f"{lim.max_archive_mb:g} MB: leave build outputs and "
                                    "dependencies out")
            buf.write(chunk)
        try:
            up = take_upload(buf, host.store, limits, accept)
        except ConfigError as e:
            raise HTTPException(400, str(e)) from None
    if found:
        response.status_code = 200
        return VersionOut.of(found[0], private=True, open_ratings=open_ratings(s))
    name = up.spec.name
    bot = s.scalar(select(Bot).where(func.lower(Bot.name) == name.lower()))
    if bot is None:
        bot = Bot(owner_id=user.id, name=up.spec.name)
        s.add(bot)
        try:
            s.flush()
        except IntegrityError:
            s.rollback()
            raise HTTPException(409, f"a bot named {up.spec.name!r} was just made: "
                                "submit again") from None
    elif bot.owner_id != user.id:  # taken since the check above
        raise HTTPException(409, f"the bot name {name!r} belongs to another participant: "
                            "rename your bot (name in bot.toml)")
    same = s.scalar(select(Version).where(Version.bot_id == bot.id, Version.hash == up.version))
    if same is not None:
        response.status_code = 200
        return VersionOut.of(same, private=True, open_ratings=open_ratings(s))
    number = (s.scalar(select(func.max(Version.number)).where(Version.bot_id == bot.id))
              or 0) + 1
    v = Version(bot_id=bot.id, number=number, hash=up.version,
                archive_sha256=up.archive_sha256, status="pending")
    s.add(v)
    s.commit()
    s.refresh(v)
    host.wake()
    return VersionOut.of(v, private=True, open_ratings=())  # new: not rated yet
