"""The host's tables (SQLAlchemy 2). The API never returns these rows: it converts them to
:mod:`arena.host.schemas` types, so a new column never leaks. The schema itself is made by
the Alembic migrations in ``arena/host/alembic/versions`` (tests run them too).

Statuses are short strings, listed here once:

- a version: ``pending`` (stored, waiting for its build) -> ``building`` -> ``validating``
  -> ``active`` (plays rated games), or ``rejected`` (build or validation failed: ``reason``
  and the build log say why). An active version becomes ``retired`` when a newer version of
  its bot turns active, and ``disabled`` after too many forfeits in a row.
- a game: ``queued`` -> ``running`` -> ``finished``; or ``voided`` (the host's failure, a
  restart: a rated one replayed as a new game; never rated); or ``cancelled`` (never
  played: a version in it left the pool first).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship


def utcnow() -> dt.datetime:
    """Now, in UTC (timezone-aware)."""
    return dt.datetime.now(dt.UTC)


class Base(DeclarativeBase):
    """Declarative base of the host's tables."""


class Participant(Base):
    """A person who submits bots (or the organiser, ``is_admin``)."""

    __tablename__ = "participants"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    """sha256 (hex) of the API token; the token itself is never stored."""
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    """Disabled by the organiser: their versions are not matched, and they may neither
    submit nor ask for challenges until enabled again (migration 0009)."""
    disabled_reason: Mapped[str] = mapped_column(Text, default="")
    """Why, for the participant (the audit log keeps it too)."""


# Names that differ only in case are one name (no "Alice" next to "alice"): the database
# holds to it too, so two registrations (or first submissions) at the same instant cannot
# both get in (migration 0002). Names are ASCII (arena.core.names), so lower() agrees in SQLite,
# PostgreSQL and Python.
Index("uq_participants_name_lower", func.lower(Participant.name), unique=True)


class Invite(Base):
    """An invite code (stored hashed), good for one registration."""

    __tablename__ = "invites"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    used_by: Mapped[int | None] = mapped_column(ForeignKey("participants.id"), nullable=True)


class Bot(Base):
    """A participant's bot: a name (from its ``bot.toml``) and its versions."""

    __tablename__ = "bots"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("participants.id"), index=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    active_version_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    owner: Mapped[Participant] = relationship()
    versions: Mapped[list[Version]] = relationship(back_populates="bot",
                                                   order_by="Version.number")


Index("uq_bots_name_lower", func.lower(Bot.name), unique=True)


class Version(Base):
    """One submitted version of a bot: immutable sources, content-addressed."""

    __tablename__ = "versions"
    __table_args__ = (UniqueConstraint("bot_id", "hash"), UniqueConstraint("bot_id", "number"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    """1, 2, ... per bot, in order of submission."""
    hash: Mapped[str] = mapped_column(String(64))
    """The folder's content hash (:func:`arena.bots.versions.bot_version`)."""
    archive_sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    """Why it was rejected or disabled (for its owner)."""
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    activated_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True),
                                                             nullable=True)
    build_started_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True),
                                                                 nullable=True)
    """When its latest build started (None while it never has): the build queue takes
    first the participant whose latest build started longest ago (migration 0004)."""
    games: Mapped[int] = mapped_column(Integer, default=0)
    """Rated games played."""
    sets: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Duplicate sets played whole: a set counts once its last game has finished (its
    placement series: ``[matchmaking] placement_sets``; migration 0007)."""
    forfeits_in_row: Mapped[int] = mapped_column(Integer, default=0)
    mu: Mapped[float] = mapped_column(Float, default=25.0)
    """Live OpenSkill μ."""
    sigma: Mapped[float] = mapped_column(Float, default=25.0 / 3)
    """Live OpenSkill σ."""
    rating: Mapped[float | None] = mapped_column(Float, nullable=True)
    """Batch fit (Elo scale) and its 95% bootstrap interval, None before the first fit."""
    rating_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    rating_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    bot: Mapped[Bot] = relationship(back_populates="versions")


class DuplicateSet(Base):
    """A board (seeded deal) played by one group of versions in every seating: the unit
    of matchmaking and of the bootstrap."""

    __tablename__ = "dsets"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seed: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Game(Base):
    """A game: rated (part of a duplicate set) or a version's validation game."""

    __tablename__ = "games"
    __table_args__ = (Index("ix_games_status_created", "status", "created_at"),
                      # the status's and the batch loop's count of finished rated games
                      # reads this index alone, not every game's row (migration 0003);
                      # the games finished since a page's last view (the leaderboard's
                      # tally, a bot page's rating replay) are a range of it (0004)
                      Index("ix_games_status_kind_seq", "status", "kind", "seq"),
                      # the games lists, newest first, read from its end (0004); of
                      # one termination (a forfeit, say: rare), from this one's
                      Index("ix_games_kind_created", "kind", "created_at", "id"),
                      Index("ix_games_kind_termination", "kind", "termination",
                            "created_at", "id", "status"),
                      Index("ix_games_asked_by_created", "asked_by", "created_at"))
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), default="rated")
    """``rated``, ``validation`` or ``challenge`` (unrated, asked for by a participant:
    :mod:`arena.host.challenges`)."""
    dset_id: Mapped[int | None] = mapped_column(ForeignKey("dsets.id"), nullable=True,
                                                index=True)
    seating: Mapped[int] = mapped_column(Integer, default=0)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    """0, then 1, 2, ... for replays of a voided game."""
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    termination: Mapped[str | None] = mapped_column(String(16), nullable=True)
    winner: Mapped[int | None] = mapped_column(Integer, nullable=True)
    scores: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    places: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)
    hands: Mapped[int | None] = mapped_column(Integer, nullable=True)
    wall_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    think_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    record_path: Mapped[str | None] = mapped_column(Text, nullable=True)
    void_reason: Mapped[str] = mapped_column(Text, default="")
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    """True once its result is in the live ratings (set in the same transaction)."""
    seq: Mapped[int | None] = mapped_column(Integer, nullable=True, unique=True)
    """1, 2, ... in the order results were written: the order of the rating updates."""
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True),
                                                           nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True),
                                                            nullable=True, index=True)
    asked_by: Mapped[int | None] = mapped_column(ForeignKey("participants.id"),
                                                 nullable=True)
    """The participant who asked for a challenge game; None for the others (migration
    0008, index ``ix_games_asked_by_created``)."""
    seats: Mapped[list[GameSeat]] = relationship(order_by="GameSeat.seat",
                                                 cascade="all, delete-orphan")
    faults: Mapped[list[FaultRow]] = relationship(order_by="FaultRow.id",
                                                  cascade="all, delete-orphan")


class GameSeat(Base):
    """Who sat where, and how their side did."""

    __tablename__ = "game_seats"
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int | None] = mapped_column(ForeignKey("versions.id"), nullable=True,
                                                   index=True)
    """None for a host's reference bot (validation games)."""
    reference: Mapped[str] = mapped_column(String(64), default="")
    """The reference bot's name, for a seat that is not a version."""
    side: Mapped[int] = mapped_column(Integer)
    place: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score: Mapped[int | None] = mapped_column(Integer, nullable=True)
    version: Mapped[Version | None] = relationship()


class FaultRow(Base):
    """A recorded fault of a seat in a finished game."""

    __tablename__ = "faults"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    version_id: Mapped[int | None] = mapped_column(ForeignKey("versions.id"), nullable=True,
                                                   index=True)  # a bot's faults (0004)
    reason: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text, default="")
    forfeit: Mapped[bool] = mapped_column(Boolean, default=False)


class Meta(Base):
    """Key/value facts of the host (e.g. the time of the last batch fit)."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON)


class RatingPoint(Base):
    """One version's batch rating after one batch fit (:meth:`arena.host.ratings.Ratings.
    store_batch`), kept as the fits happen: a bot's rating chart on the leaderboard's scale
    (migration 0010). A row per version and fit, while the version plays: one each 2% of
    its games (:func:`arena.host.ratings.next_point`)."""

    __tablename__ = "rating_points"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id"), index=True)
    games: Mapped[int] = mapped_column(Integer)
    """The competition's finished rated games the fit read (the chart's x axis)."""
    played: Mapped[int] = mapped_column(Integer)
    """The version's own rated games then (when its next point is due:
    :func:`arena.host.ratings.next_point`)."""
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    rating: Mapped[float] = mapped_column(Float)
    """Elo scale, the anchor's mean 1500 (as :attr:`Version.rating`)."""
    low: Mapped[float | None] = mapped_column(Float, nullable=True)
    high: Mapped[float | None] = mapped_column(Float, nullable=True)
    """The 95% interval's ends; None on a side the data cannot bound."""
    open: Mapped[bool] = mapped_column(Boolean, default=False)
    """The fit left the rating open: quote its bound, not ``rating``."""


class UploadRefusal(Base):
    """One refused upload (:mod:`arena.host.refusals`): it counts against its participant's
    ``max_versions_per_day`` for a day, across restarts (migration 0011). Rows older than
    a day are deleted as new ones come."""

    __tablename__ = "upload_refusals"
    __table_args__ = (Index("ix_upload_refusals_participant_at", "participant_id", "at"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    participant_id: Mapped[int] = mapped_column(ForeignKey("participants.id"))
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow,
                                            index=True)
    status: Mapped[int] = mapped_column(Integer)
    """The answer's HTTP status (400, 409, 413...)."""


def sets_ended(s: Session, set_ids: Iterable[int | None]) -> int:
    """Count a set played whole for each version of its finished rated games, for each of
    the duplicate sets ``set_ids`` that has no game left to play now:
    call it after its last queued games were cancelled or its last game voided for good
    (the recorder counts a set whose last game finishes); how many sets ended. The same
    count as :meth:`arena.host.ratings.Ratings.rerate`'s."""
    s.flush()
    ended = 0
    for d in sorted({i for i in set_ids if i is not None}):
        left = s.scalar(select(func.count()).select_from(Game).where(
            Game.dset_id == d, Game.status.in_(("queued", "running"))))
        if left:
            continue
        vids = set(s.scalars(select(GameSeat.version_id).join(
            Game, GameSeat.game_id == Game.id).where(
            Game.dset_id == d, Game.kind == "rated", Game.status == "finished")))
        for vid in sorted(v for v in vids if v is not None):
            v = s.get(Version, vid)
            if v is not None:
                v.sets += 1
        ended += bool(vids)
    return ended
