"""A move of phase by hand (``POST /api/phase``) and the calendar's own move, at the same
moment, in process on a real competition's SQLite database: both are written on the
host's one writer thread, one after the other, so each reads the phase the other left.
The audit log then reads as a chain (each change starts from the phase the one before it
ended in) ending in the phase the host is in, and the organiser's move is not undone."""

from __future__ import annotations

import datetime as dt
import re
import threading
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from host_support import make_competition

from arena.host import season as season_module
from arena.host.app import create_app
from arena.host.audit import entries
from arena.host.run import open_host

CHANGE = re.compile(r"^(\w+) -> (\w+)")


def test_a_move_by_hand_and_the_calendars_cannot_both_apply(tmp_path: Path,
                                                            monkeypatch) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    closed = now - dt.timedelta(hours=1)  # the freeze, by the calendar, an hour ago
    folder = make_competition(tmp_path / "comp", extra=(
        f"\n[calendar]\nsubmissions_close = {closed.isoformat().replace('+00:00', 'Z')}\n"))
    host, _ = open_host(folder, None)
    try:
        admin = (folder / "admin.token").read_text().strip()
        client = TestClient(create_app(host))
        # the host's first phase, written as it was two hours ago: the season
        assert host.writer.write_now(host.season.tick_now,
                                     now - dt.timedelta(hours=2)) == "season"

        # the calendar's tick stops right after it has read the phase (the season) until
        # the organiser's move has had its chance to be written
        read, go = threading.Event(), threading.Event()
        armed = [True]
        real = season_module.effective

        def effective(*a, **kw):  # type: ignore[no-untyped-def]
            out = real(*a, **kw)
            if armed[0] and threading.current_thread().name.startswith("moon-host-writer"):
                armed[0] = False
                read.set()
                go.wait(10)
            return out

        monkeypatch.setattr(season_module, "effective", effective)
        tick = threading.Thread(target=lambda: host.writer.write_now(host.season.tick_now))
        tick.start()
        assert read.wait(10)
        answer: list[httpx.Response] = []
        move = threading.Thread(target=lambda: answer.append(client.post(
            "/api/phase", headers={"Authorization": f"Bearer {admin}"},
            json={"phase": "final", "reason": "early"})))
        move.start()
        move.join(3)  # written beside the tick (the fault), or queued behind it
        go.set()
        tick.join(10)
        move.join(10)
        assert not tick.is_alive() and not move.is_alive()
        assert answer and answer[0].status_code == 200, answer[0].text if answer else None
        assert answer[0].json()["phase"] == "final"

        # what the host is in: the organiser's final, held; not the calendar's freeze
        phase = client.get("/api/phase").json()
        assert (phase["phase"], phase["by"]) == ("final", "organiser")
        with host.Session() as s:
            log = [(e.actor, e.detail) for e in reversed(entries(s))]
        assert [a for a, _ in log] == ["calendar", "calendar", "admin"], log
        assert log[0][1] == "season (the host's first phase)"
        changes = [CHANGE.match(d).groups() for _, d in log[1:]]  # type: ignore[union-attr]
        assert changes == [("season", "freeze"), ("freeze", "final")], log
        assert "by hand" in log[2][1] and log[2][1].endswith(": early"), log
    finally:
        host.close()


@pytest.mark.parametrize("body", [{"phase": "autumn"},
                                  {"phase": "final", "until": "2000-01-01T00:00:00Z"}])
def test_a_bad_move_writes_nothing(tmp_path: Path, body: dict) -> None:
    folder = make_competition(tmp_path / "comp")
    host, _ = open_host(folder, None)
    try:
        admin = (folder / "admin.token").read_text().strip()
        client = TestClient(create_app(host))
        r = client.post("/api/phase", headers={"Authorization": f"Bearer {admin}"},
                        json=body)
        assert r.status_code == 422 and "\n" not in r.json()["detail"], r.text
        with host.Session() as s:
            assert entries(s) == []
        assert client.get("/api/phase").json()["by"] == "calendar"
    finally:
        host.close()
