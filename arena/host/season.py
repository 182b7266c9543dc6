"""The host's phase, kept in its database (:class:`Season`): read by the routes that a
phase may refuse (registration, submissions) and by the matchmaker (rated games), moved by
the calendar (:meth:`Season.tick_now`, every second while the host runs, and at its start)
or by the organiser (:meth:`Season.move_now`), both on the host's one writer thread, every
change written to the audit log in the same transaction. The rules of the phases are
:mod:`arena.host.phases`."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from . import audit
from .models import Game, Meta, sets_ended, utcnow
from .outage import Outage, cannot_write
from .phases import Calendar, PhaseState, allows, effective, iso, manual, next_change, refusal
from .writer import Writer

log = logging.getLogger("arena.host")

KEY = "phase"
"""The :class:`arena.host.models.Meta` key of the host's :class:`PhaseState`."""


@dataclass(frozen=True)
class PhaseView:
    """The phase as the API and the pages show it."""

    phase: str
    since: str | None
    by: str
    reason: str
    next_phase: str | None
    next_at: str | None
    registration: bool
    submissions: bool
    games: bool


class Season:
    """The phase of the competition whose calendar is ``calendar``, kept in the database
    of ``session``; its changes are written on ``writer``."""

    def __init__(self, session: sessionmaker[Session], writer: Writer, calendar: Calendar,
                 outage: Outage | None = None) -> None:
        self.Session = session
        self.writer = writer
        self.calendar = calendar
        self.outage = outage or Outage()
        """Told when the phase cannot be written for the host's reasons (its database
        down, its disk full): one line, not a traceback a second."""

    def state(self, s: Session) -> PhaseState | None:
        """The phase kept in the database (None before the first)."""
        row = s.get(Meta, KEY)
        return PhaseState.from_json(row.value) if row is not None else None

    def phase(self, s: Session, now: dt.datetime | None = None) -> str:
        """The phase at ``now`` (default: now), as the calendar and a move by hand make it
        (even a second before :meth:`tick` writes it)."""
        return effective(self.calendar, self.state(s), now or utcnow())

    def refused(self, s: Session, action: str, now: dt.datetime | None = None) -> str | None:
        """Why ``action`` (``register``, ``submit``, ``play``) is refused now, in one line
        with when it opens (:func:`arena.host.phases.refusal`), or None if it is open."""
        now = now or utcnow()
        st = self.state(s)
        if allows(self.calendar, st, now, action):
            return None
        return refusal(self.calendar, st, now, action)

    def view(self, s: Session, now: dt.datetime | None = None) -> PhaseView:
        """The phase now, since when and by whom, the next change, and what is open."""
        now = now or utcnow()
        st = self.state(s)
        phase = effective(self.calendar, st, now)
        nxt = next_change(self.calendar, st, now)
        kept = st is not None and st.phase == phase
        return PhaseView(phase=phase, since=iso(st.since) if kept and st else None,
                         by=st.by if kept and st else "calendar",
                         reason=st.reason if kept and st else "",
                         next_phase=nxt[1] if nxt else None,
                         next_at=iso(nxt[0]) if nxt else None,
                         registration=allows(self.calendar, st, now, "register"),
                         submissions=allows(self.calendar, st, now, "submit"),
                         games=allows(self.calendar, st, now, "play"))

    def tick_now(self, now: dt.datetime | None = None) -> str | None:
        """Write the phase the calendar has moved to, if it has (with its audit entry);
        the new phase, or None. Run it on the writer thread."""
        now = now or utcnow()
        with self.Session.begin() as s:
            st = self.state(s)
            phase = effective(self.calendar, st, now)
            if st is not None and st.phase == phase:
                if st.by == "organiser" and st.hold_until is not None \
                        and now >= st.hold_until:  # the calendar rules again
                    self._keep(s, PhaseState(phase, st.since))
                # a rated game queued since the change (a voided one queued again, a set
                # claimed as the phase changed) would wait for ever: cancel it too
                late = self._stop_games(s, now)
                if late:
                    log.info("phase %s%s", phase, late)
                return None
            if st is None:
                detail = f"{phase} (the host's first phase)"
            else:
                held = st.by == "organiser"
                detail = (f"{st.phase} -> {phase}" + (
                    f" (the organiser's {st.phase} held until {iso(st.hold_until)})"
                    if held else " (the calendar)"))
            self._keep(s, PhaseState(phase, now))
            detail += self._stop_games(s, now)
            audit.log(s, "calendar", "phase", detail, now)
            log.info("phase: %s", detail)
            return phase

    def move(self, s: Session, phase: str, actor: str, until: dt.datetime | None = None,
             reason: str = "", now: dt.datetime | None = None) -> PhaseState:
        """The organiser moves to ``phase`` (:func:`arena.host.phases.manual`), written in
        session ``s`` with its audit entry.

        Raises:
            ValueError: not a phase, or ``until`` not after now.
        """
        now = now or utcnow()
        before = self.phase(s, now)
        st = manual(self.calendar, phase, now, until, reason)
        self._keep(s, st)
        stopped = self._stop_games(s, now)
        hold = (f"held until {iso(st.hold_until)}" if st.hold_until is not None else
                "held for good" if st.by == "organiser" else "the calendar's phase")
        audit.log(s, actor, "phase", f"{before} -> {phase} by hand ({hold})"
                  + (f": {reason}" if reason else "") + stopped, now)
        return st

    def move_now(self, phase: str, actor: str, until: dt.datetime | None = None,
                 reason: str = "", now: dt.datetime | None = None) -> PhaseState:
        """:meth:`move` in a transaction of its own; run it on the writer thread, as
        :meth:`tick_now` is, so a move by hand and the calendar's own move are written
        one after the other, each reading the phase the other left (never both from the
        same phase), each with its audit entry.

        Raises:
            ValueError: not a phase, or ``until`` not after now (nothing written).
        """
        with self.Session.begin() as s:
            return self.move(s, phase, actor, until, reason, now)

    def _stop_games(self, s: Session, now: dt.datetime) -> str:
        """In a phase that plays no rated games, cancel those still queued (so their sets
        end, and their finished games are shown: :mod:`arena.host.embargo`); what was
        done, for the audit entry ("" if nothing)."""
        if allows(self.calendar, self.state(s), now, "play"):
            return ""
        queued = list(s.scalars(select(Game).where(Game.status == "queued",
                                                   Game.kind == "rated")))
        for g in queued:
            g.status = "cancelled"
            g.void_reason = "the competition's phase plays no more rated games"
        sets_ended(s, [g.dset_id for g in queued])
        return f"; {len(queued)} queued rated game(s) cancelled" if queued else ""

    def _keep(self, s: Session, st: PhaseState) -> None:
        row = s.get(Meta, KEY)
        if row is None:
            s.add(Meta(key=KEY, value=st.to_json()))
        else:
            row.value = st.to_json()

    async def run(self, every_s: float = 1.0) -> None:
        """Move with the calendar for as long as the host runs (checked every
        ``every_s``)."""
        while True:
            try:
                await self.writer.write(self.tick_now)
            except Exception as e:
                if cannot_write(e):
                    self.outage.hit("the phase", e)
                else:
                    log.exception("the phase could not be written")
            await asyncio.sleep(every_s)


__all__ = ["KEY", "PhaseView", "Season"]
