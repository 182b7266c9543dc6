"""A competition's phases on a calendar (``[calendar]`` in ``competition.toml``, UTC times,
each optional), in order:

- ``upcoming``: before ``registration_opens``: nothing is open yet;
- ``registration``: from ``registration_opens`` until ``submissions_open``: participants
  register, nothing is submitted or played;
- ``season``: from ``submissions_open`` until ``submissions_close``: submissions, rated
  games;
- ``freeze``: from ``submissions_close`` until ``final_starts``: no new versions, the
  rated games go on among those there are;
- ``final``: from ``final_starts`` until ``ends``: the season's games stop;
- ``ended``: from ``ends``: nothing is played or taken any more.

Registration is open from the ``registration`` phase on, until ``registration_closes``
(and never once ``ended``). A phase whose start is not set is skipped over: with no
calendar at all the competition is in its ``season`` for ever, as before phases.

The organiser may move the phase by hand (:func:`manual`): the phase chosen holds until
``until`` if given, else (a phase ahead of the calendar's) until the calendar reaches it,
or (behind) until the calendar's next change; then the calendar rules again. The host
keeps its phase (:class:`PhaseState`) in its database, so a restart keeps a phase moved
by hand, and writes every change to its audit log (:mod:`arena.host.audit`).

This module is pure: times in, phases out (no database, no clock of its own).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

PHASES = ("upcoming", "registration", "season", "freeze", "final", "ended")
"""The phases in order."""
STARTS = {"registration": "registration_opens", "season": "submissions_open",
          "freeze": "submissions_close", "final": "final_starts", "ended": "ends"}
"""The calendar's key whose time starts each phase (``upcoming`` is before them all)."""
KEYS = ("registration_opens", "registration_closes", "submissions_open",
        "submissions_close", "final_starts", "ends")
"""The calendar's keys, in the order a season usually has them."""
ACTIONS = {"register": "registration", "submit": "submissions", "play": "rated games"}
"""What a phase allows or forbids, and how a refusal names it."""
_DAWN = dt.datetime.min.replace(tzinfo=dt.UTC)
_ALLOWS = {"upcoming": set(), "registration": {"register"},
           "season": {"register", "submit", "play"}, "freeze": {"register", "play"},
           "final": {"register"}, "ended": set()}


def rank(phase: str) -> int:
    """The place of ``phase`` in :data:`PHASES` (0 first).

    Raises:
        ValueError: not a phase (the message lists them).
    """
    if phase not in PHASES:
        raise ValueError(f"{phase!r} is not a phase: one of {', '.join(PHASES)}")
    return PHASES.index(phase)


def iso(t: dt.datetime | None) -> str | None:
    """A time as ``2026-12-24T18:00:00Z`` (UTC, to the second), or None."""
    if t is None:
        return None
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> dt.datetime:
    """An ISO 8601 time with its offset (``2026-12-24T18:00:00Z``), in UTC.

    Raises:
        ValueError: not such a time, or one without an offset (the message shows one).
    """
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        raise ValueError(f"{text!r} is not a time: write it in UTC as "
                         "2026-12-24T18:00:00Z") from None
    if t.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone: write it in UTC as "
                         "2026-12-24T18:00:00Z")
    return t.astimezone(dt.UTC)


@dataclass(frozen=True)
class Calendar:
    """The times of ``[calendar]``, each optional (UTC, timezone-aware)."""

    registration_opens: dt.datetime | None = None
    registration_closes: dt.datetime | None = None
    submissions_open: dt.datetime | None = None
    submissions_close: dt.datetime | None = None
    final_starts: dt.datetime | None = None
    ends: dt.datetime | None = None

    def at(self, key: str) -> dt.datetime | None:
        """The time of calendar key ``key`` (one of :data:`KEYS`)."""
        t: dt.datetime | None = getattr(self, key)
        return t

    def starts(self) -> dict[str, dt.datetime | None]:
        """When each phase after ``upcoming`` starts (None: never). A start that is not
        set is the one of the phase next to it, which makes that phase empty: with no
        ``registration_opens`` registration is open from the start, with no
        ``submissions_open`` submissions open with it; with no ``submissions_close`` there
        is no freeze (the season runs until the final or the end), with no
        ``final_starts`` no final, with no ``ends`` no end."""
        ends = self.ends
        final = self.final_starts or ends
        freeze = self.submissions_close or final
        registration = self.registration_opens or _DAWN
        season = self.submissions_open or registration
        return {"registration": registration, "season": season, "freeze": freeze,
                "final": final, "ended": ends}

    def phase(self, now: dt.datetime) -> str:
        """The calendar's phase at ``now``: the last phase that has started (of two that
        start at once, the later)."""
        current = "upcoming"
        for p, t in self.starts().items():
            if t is not None and t <= now:
                current = p
        return current

    def changes(self) -> list[tuple[dt.datetime, str]]:
        """Every time the calendar changes something, in order: ``(time, key)``."""
        out = [(t, k) for k in KEYS if (t := self.at(k)) is not None]
        return sorted(out)

    def to_dict(self) -> dict[str, str | None]:
        """``{key: "2026-12-24T18:00:00Z" or None}`` for every key."""
        return {k: iso(self.at(k)) for k in KEYS}


@dataclass(frozen=True)
class PhaseState:
    """The phase the host keeps in its database: ``by`` ``calendar`` or ``organiser`` (a
    phase moved by hand holds until ``hold_until``, None: for good)."""

    phase: str
    since: dt.datetime
    by: str = "calendar"
    hold_until: dt.datetime | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """As the database keeps it."""
        return {"phase": self.phase, "since": iso(self.since), "by": self.by,
                "hold_until": iso(self.hold_until), "reason": self.reason}

    @classmethod
    def from_json(cls, data: Any) -> PhaseState | None:
        """From :meth:`to_json`'s shape; None for anything else (a damaged value)."""
        try:
            phase = str(data["phase"])
            rank(phase)
            hold = data.get("hold_until")
            return cls(phase, parse_time(str(data["since"])), str(data.get("by", "calendar")),
                       parse_time(str(hold)) if hold else None, str(data.get("reason", "")))
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def effective(cal: Calendar, state: PhaseState | None, now: dt.datetime) -> str:
    """The phase at ``now``: one moved by hand while it holds, else the calendar's."""
    if state is not None and state.by == "organiser" and (
            state.hold_until is None or now < state.hold_until):
        return state.phase
    return cal.phase(now)


def manual(cal: Calendar, phase: str, now: dt.datetime, until: dt.datetime | None = None,
           reason: str = "") -> PhaseState:
    """The state after the organiser moves to ``phase`` at ``now``: it holds until
    ``until`` if given; else, ahead of the calendar, until the calendar reaches ``phase``
    (for good if it never does); behind it, until the calendar's next change (for good
    if there is none); level with it, the calendar rules from now on.

    Raises:
        ValueError: not a phase, or ``until`` not after ``now``.
    """
    r, here = rank(phase), rank(cal.phase(now))
    if until is not None:
        if until <= now:
            raise ValueError(f"until {iso(until)} is not after now ({iso(now)})")
        return PhaseState(phase, now, "organiser", until, reason)
    if r == here:
        return PhaseState(phase, now, "calendar", None, reason)
    if r > here:
        start = cal.starts().get(phase)
        hold = start if start is not None and start > now else None
    else:
        hold = next((t for t, _ in cal.changes() if t > now), None)
    return PhaseState(phase, now, "organiser", hold, reason)


def allows(cal: Calendar, state: PhaseState | None, now: dt.datetime, action: str) -> bool:
    """Whether ``action`` (``register``, ``submit``, ``play``) is open at ``now``."""
    phase = effective(cal, state, now)
    if action not in _ALLOWS[phase]:
        return False
    return not (action == "register" and cal.registration_closes is not None
                and now >= cal.registration_closes)


def boundaries(cal: Calendar, state: PhaseState | None, now: dt.datetime
               ) -> list[dt.datetime]:
    """The times after ``now`` at which the phase or registration may change, in order."""
    times = {t for t, _ in cal.changes() if t > now}
    if state is not None and state.by == "organiser" and state.hold_until is not None \
            and state.hold_until > now:
        times.add(state.hold_until)
    return sorted(times)


def next_change(cal: Calendar, state: PhaseState | None, now: dt.datetime
                ) -> tuple[dt.datetime, str] | None:
    """When the phase changes next and to what, ``(time, phase)``; None if it never does
    (as things stand)."""
    here = effective(cal, state, now)
    for t in boundaries(cal, state, now):
        then = effective(cal, state, t)
        if then != here:
            return t, then
    return None


def when_allowed(cal: Calendar, state: PhaseState | None, now: dt.datetime, action: str
                 ) -> dt.datetime | None:
    """The first time after ``now`` at which ``action`` opens, None if it never does (as
    things stand: the organiser may still move the phase)."""
    for t in boundaries(cal, state, now):
        if allows(cal, state, t, action):
            return t
    return None


def refusal(cal: Calendar, state: PhaseState | None, now: dt.datetime, action: str) -> str:
    """One line saying why ``action`` is refused at ``now`` and when it opens, e.g.
    ``"submissions are closed in the freeze phase: they open again at
    2026-12-24T18:00:00Z"``."""
    what = ACTIONS[action]
    phase = effective(cal, state, now)
    plural = what.endswith("s")
    are = "are" if plural else "is"
    if action in _ALLOWS[phase]:  # registration, past registration_closes
        why = f"{what} closed at {iso(cal.registration_closes)}"
    else:
        why = f"{what} {are} closed in the {phase} phase"
    t = when_allowed(cal, state, now, action)
    if t is not None:
        return f"{why}: {'they open' if plural else 'it opens'} at {iso(t)}"
    return (f"{why}: {'they do' if plural else 'it does'} not open again in this "
            "competition")


__all__ = ["ACTIONS", "KEYS", "PHASES", "STARTS", "Calendar", "PhaseState", "allows",
           "boundaries", "effective", "iso", "manual", "next_change", "parse_time", "rank",
           "refusal", "when_allowed"]
