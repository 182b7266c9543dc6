"""The phases through the host: the API's refusals with when they open, a move by hand,
the audit log, a phase kept across a restart (in process, on SQLite and PostgreSQL). A
real `moon host run` whose phases are seconds apart going through them by itself, from
registration to the final's standings, is tests/host/test_host_final.py's."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

from fastapi.testclient import TestClient
from host_support import EXAMPLES, make_competition, tar_folder

from arena.host.app import create_app
from arena.host.audit import entries
from arena.host.run import open_host


def z(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def calendar(**times: dt.datetime) -> str:
    return "\n[calendar]\n" + "".join(f"{k} = {z(v)}\n" for k, v in times.items())


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_freeze_by_hand_refuses_uploads_until_it_ends_and_outlives_a_restart(
        tmp_path: Path, database: str | None) -> None:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    folder = make_competition(tmp_path / "comp", extra=calendar(
        registration_opens=now - dt.timedelta(hours=2),
        submissions_open=now - dt.timedelta(hours=1),
        submissions_close=now + dt.timedelta(hours=1), ends=now + dt.timedelta(hours=2)))
    admin = (folder / "admin.token").read_text().strip()
    host, _ = open_host(folder, database)
    try:
        c = TestClient(create_app(host))
        code = c.post("/api/invites", headers=bearer(admin)).json()["code"]
        ann = c.post("/api/register", json={"name": "ann", "invite": code}).json()["token"]
        p = c.get("/api/phase").json()
        assert (p["phase"], p["submissions"], p["next_phase"], p["next_at"]) == (
            "season", True, "freeze", z(now + dt.timedelta(hours=1)))
        assert host.season.tick_now() == "season"  # the host's first phase, written

        def upload(token: str):  # noqa: ANN202
            return c.post("/api/submissions", headers=bearer(token), files={
                "archive": ("b.tar.gz", tar_folder(EXAMPLES / "random"), "application/gzip")})

        # only the organiser moves the phase; a freeze by hand until 20 minutes from now
        until = z(now + dt.timedelta(minutes=20))
        body = {"phase": "freeze", "until": until, "reason": "a referee fix"}
        assert c.post("/api/phase", json=body, headers=bearer(ann)).status_code == 403
        assert c.post("/api/phase", json={**body, "phase": "summer"},
                      headers=bearer(admin)).status_code == 422
        r = c.post("/api/phase", json=body, headers=bearer(admin))
        assert r.status_code == 200, r.text
        assert (r.json()["phase"], r.json()["by"], r.json()["next_at"]) == (
            "freeze", "organiser", until)
        refused = upload(ann)
        assert refused.status_code == 403
        assert refused.json()["detail"] == (
            f"submissions are closed in the freeze phase: they open at {until}")
        assert upload(admin).status_code == 201  # the organiser's are not refused
        status = c.get("/api/status").json()
        assert (status["phase"], status["next_phase"], status["next_change_at"]) == (
            "freeze", "season", until)
    finally:
        host.close()

    # a restart keeps the phase moved by hand (and the calendar does not undo it)
    host, _ = open_host(folder, database)
    try:
        c = TestClient(create_app(host))
        assert host.season.tick_now() is None
        p = c.get("/api/phase").json()
        assert (p["phase"], p["by"], p["reason"]) == ("freeze", "organiser", "a referee fix")
        assert "Phase: <b>freeze</b>" in c.get("/").text
        log = c.get("/api/audit", headers=bearer(admin)).json()
        assert [(e["actor"], e["detail"]) for e in log] == [
            ("admin", f"season -> freeze by hand (held until {until}): a referee fix"),
            ("calendar", "season (the host's first phase)")]
        assert c.get("/api/audit", headers=bearer(ann)).status_code == 403
        assert c.get("/api/audit").status_code == 401
    finally:
        host.close()


def test_the_phase_is_written_at_the_start_before_the_games_can_start(
        tmp_path: Path, database: str | None) -> None:
    # the executor's start held for good: the host still writes the phase the calendar
    # makes current (the freeze, here), with its audit entry
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    folder = make_competition(tmp_path / "comp", extra=calendar(
        registration_opens=now - dt.timedelta(hours=2),
        submissions_open=now - dt.timedelta(hours=1),
        submissions_close=now - dt.timedelta(minutes=10), ends=now + dt.timedelta(hours=1)))
    host, _ = open_host(folder, database)

    class HeldStart:
        async def __aenter__(self) -> None:
            await asyncio.Event().wait()

        async def __aexit__(self, *exc: object) -> None:
            return None

    host._executor_factory = lambda record_dir, capacity: HeldStart()  # noqa: SLF001

    async def written() -> str | None:
        run = asyncio.create_task(host.run())
        try:
            for _ in range(400):
                with host.Session() as s:
                    st = host.season.state(s)
                if st is not None:
                    return st.phase
                await asyncio.sleep(0.05)
            return None
        finally:
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)

    try:
        assert asyncio.run(written()) == "freeze"
        with host.Session() as s:
            assert [e.detail for e in entries(s)] == ["freeze (the host's first phase)"]
    finally:
        host.close()
