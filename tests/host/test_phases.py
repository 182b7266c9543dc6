"""The phases of a competition on its calendar (arena/host/phases.py): which phase a time
is in, what a phase allows, a move by hand and how long it holds, and the line a refusal
says; worked out by hand from the rules in the module's docstring. And `[calendar]` in
competition.toml: UTC times in order, or a one-line error."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from host_support import make_competition

from arena.errors import ConfigError
from arena.host.phases import Calendar, PhaseState, allows, effective, manual, next_change, refusal
from arena.host.settings import load_settings


def at(hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2027, 1, 4, hour, minute, tzinfo=dt.UTC)


# registration 9:00 (closes 13:00), season 10:00-14:00, final 15:00, end 16:00
FULL = Calendar(registration_opens=at(9), registration_closes=at(13),
                submissions_open=at(10), submissions_close=at(14), final_starts=at(15),
                ends=at(16))


@pytest.mark.parametrize(("when", "phase", "open_"), [
    (at(8), "upcoming", set()),
    (at(9), "registration", {"register"}),          # a start is its phase's first instant
    (at(9, 59), "registration", {"register"}),
    (at(10), "season", {"register", "submit", "play"}),
    (at(13), "season", {"submit", "play"}),          # registration closed at 13:00
    (at(14), "freeze", {"play"}),
    (at(15), "final", set()),
    (at(16), "ended", set()),
    (at(23), "ended", set()),
])
def test_a_calendar_gives_each_time_its_phase(when, phase, open_) -> None:
    assert FULL.phase(when) == phase
    assert {a for a in ("register", "submit", "play") if allows(FULL, None, when, a)} == open_


def test_a_phase_without_its_start_is_skipped() -> None:
    # nothing set: one season for ever; no submissions_close: no freeze, the season runs
    # to the final; only submissions_open (later): registration until then
    assert Calendar().phase(at(0)) == "season"
    assert next_change(Calendar(), None, at(0)) is None
    assert Calendar(final_starts=at(15)).phase(at(14)) == "season"
    assert Calendar(final_starts=at(15)).phase(at(15)) == "final"
    assert Calendar(submissions_open=at(10)).phase(at(9)) == "registration"
    assert Calendar(registration_opens=at(9)).phase(at(9)) == "season"  # opens together
    assert Calendar(ends=at(16)).phase(at(16)) == "ended"


def test_the_next_change_and_a_refusals_line() -> None:
    assert next_change(FULL, None, at(8)) == (at(9), "registration")
    # 13:00 closes registration but keeps the phase: the next change is the freeze
    assert next_change(FULL, None, at(12)) == (at(14), "freeze")
    assert refusal(FULL, None, at(9, 30), "submit") == (
        "submissions are closed in the registration phase: they open at 2027-01-04T10:00:00Z")
    assert refusal(FULL, None, at(8), "register") == (
        "registration is closed in the upcoming phase: it opens at 2027-01-04T09:00:00Z")
    assert refusal(FULL, None, at(14, 30), "submit") == (
        "submissions are closed in the freeze phase: they do not open again in this "
        "competition")
    assert refusal(FULL, None, at(13, 30), "register") == (
        "registration closed at 2027-01-04T13:00:00Z: it does not open again in this "
        "competition")


def test_a_move_by_hand_holds_until_its_time() -> None:
    # a freeze at 11:00 until 12:00: submissions reopen at 12:00, when the season is back
    st = manual(FULL, "freeze", at(11), until=at(12), reason="a referee fix")
    assert (st.by, st.hold_until) == ("organiser", at(12))
    assert effective(FULL, st, at(11, 30)) == "freeze"
    assert refusal(FULL, st, at(11, 30), "submit") == (
        "submissions are closed in the freeze phase: they open at 2027-01-04T12:00:00Z")
    assert next_change(FULL, st, at(11, 30)) == (at(12), "season")
    assert effective(FULL, st, at(12)) == "season"
    with pytest.raises(ValueError, match="not after now"):
        manual(FULL, "freeze", at(11), until=at(10))
    with pytest.raises(ValueError, match="not a phase"):
        manual(FULL, "summer", at(11))


def test_a_move_ahead_holds_until_the_calendar_comes_and_one_behind_until_its_next_change(
        ) -> None:
    # ahead: the final at 11:00 holds until the calendar's final (15:00), then the calendar
    ahead = manual(FULL, "final", at(11))
    assert (ahead.by, ahead.hold_until) == ("organiser", at(15))
    assert effective(FULL, ahead, at(14, 30)) == "final"
    assert effective(FULL, ahead, at(16)) == "ended"
    # ended before the calendar has an end: for good
    forever = manual(Calendar(), "ended", at(11))
    assert forever.hold_until is None and effective(Calendar(), forever, at(23)) == "ended"
    # behind: the season again at 14:30 (a freeze by the calendar) holds until 15:00
    behind = manual(FULL, "season", at(14, 30))
    assert behind.hold_until == at(15)
    assert allows(FULL, behind, at(14, 45), "submit")
    assert effective(FULL, behind, at(15)) == "final"
    # level: the calendar's own phase, nothing held
    assert manual(FULL, "season", at(11)).by == "calendar"


def test_a_kept_state_reads_back_and_a_damaged_one_is_none() -> None:
    st = manual(FULL, "freeze", at(11), until=at(12), reason="why")
    assert PhaseState.from_json(st.to_json()) == st
    assert PhaseState.from_json({"phase": "summer", "since": "x"}) is None
    assert PhaseState.from_json("garbage") is None


def _calendar(tmp_path: Path, text: str) -> str:
    folder = make_competition(tmp_path / "comp", extra="\n[calendar]\n" + text)
    try:
        load_settings(folder)
    except ConfigError as e:
        return str(e)
    return ""


def test_competition_toml_takes_utc_times_in_order(tmp_path: Path) -> None:
    assert _calendar(tmp_path / "a", "submissions_open = 2027-01-04T10:00:00Z\n"
                     "ends = 2027-01-04T16:00:00+01:00\n") == ""
    s = load_settings(tmp_path / "a" / "comp").calendar.calendar()
    assert s.ends == at(15)  # 16:00 at +01:00 is 15:00 UTC
    naive = _calendar(tmp_path / "b", "ends = 2027-01-04T16:00:00\n")
    assert "has no time zone: write it in UTC, e.g. 2027-01-04T16:00:00Z" in naive, naive
    order = _calendar(tmp_path / "c", "submissions_open = 2027-01-04T10:00:00Z\n"
                      "submissions_close = 2027-01-04T09:00:00Z\n")
    assert "submissions_close (2027-01-04T09:00:00+00:00) is before submissions_open" \
        in order, order
    assert "\n" not in order
