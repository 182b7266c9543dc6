"""The audit log: every change of phase, by the calendar or by the organiser, and every
organiser's action that changes the competition, one row each (table ``audit``,
migration 0006), for the organiser to read (``GET /api/audit``, ``moon host audit``)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, Integer, String, Text, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from .models import Base, utcnow


class AuditEntry(Base):
    """One entry: when, who (``calendar``, ``host`` or a participant's name), what
    (``phase``...) and the detail, in words."""

    __tablename__ = "audit"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    actor: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text, default="")


def log(s: Session, actor: str, action: str, detail: str,
        at: dt.datetime | None = None) -> AuditEntry:
    """Add an entry in session ``s`` (written with its transaction)."""
    e = AuditEntry(actor=actor[:64], action=action[:32], detail=detail,
                   at=at or utcnow())
    s.add(e)
    return e


def entries(s: Session, limit: int = 100, offset: int = 0) -> list[AuditEntry]:
    """The newest ``limit`` entries (after ``offset``), newest first."""
    return list(s.scalars(select(AuditEntry).order_by(AuditEntry.id.desc())
                          .limit(limit).offset(offset)))


__all__ = ["AuditEntry", "entries", "log"]
