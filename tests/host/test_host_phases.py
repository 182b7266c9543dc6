"""The phases through the host: the API's refusals with when they open, a move by hand,
the audit log, a phase kept across a restart (in process, on SQLite and PostgreSQL); and a
real `moon host run` (on SQLite: a flow) whose phases are seconds apart going through
them by itself, with real bots, driven by the `moon host` commands."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

from arena.cli import main as moon
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


@pytest.mark.one_database  # a flow: its queries run on PostgreSQL in process (conftest.py)
def test_a_competition_goes_through_its_phases_by_itself(tmp_path: Path,
                                                         database: str | None) -> None:
    # Each change of phase is due a few seconds after a start of the host, whose calendar
    # is then written for what comes next: a test of fixed windows (the season 25 s after
    # the first start) failed on a loaded machine whose host took longer than that to
    # start. The phase is kept across each restart; the calendar moves it by itself.
    far = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    past = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=1)
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    plain = toml.read_text()
    cli = CliRunner()

    def moon_host(*args: str) -> str:
        out = cli.invoke(moon, ["host", *args])
        assert out.exit_code == 0, out.output
        return out.output

    def start(**times: dt.datetime) -> HostProcess:
        toml.write_text(plain + calendar(registration_opens=past, **times))
        return HostProcess(folder, database).start()

    def soon() -> dt.datetime:
        return dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=5)

    def moved(host: HostProcess, phase: str) -> bool:
        """The host has written ``phase`` (the API shows the calendar's phase up to a
        second before the host's tick writes it and does what it brings)."""
        p = host.ok("GET", "/api/phase")
        return p["phase"] == phase and p["since"] is not None

    # registration: uploads refused with when they open
    host = start(submissions_open=far)
    try:
        alice, bob = host.register("alice"), host.register("bob")
        early = host.submit(alice, tar_folder(EXAMPLES / "heuristic"))
        assert early.status_code == 403
        assert early.json()["detail"] == ("submissions are closed in the registration "
                                          f"phase: they open at {z(far)}")
        status = moon_host("status", host.url)
        assert re.search(r"phase\W+registration\W", status), status
        assert re.search(rf"next phase\W+season at {z(far)}", status), status
    finally:
        host.stop()
    # the season comes by itself; the bots are built, validated and play
    opens = soon()
    host = start(submissions_open=opens, submissions_close=far)
    try:
        assert host.ok("GET", "/api/phase")["phase"] in ("registration", "season")
        wait_for(lambda: moved(host, "season"), 60, "the season")
        for token, bot in ((alice, "heuristic"), (bob, "random")):
            r = host.submit(token, tar_folder(EXAMPLES / bot))
            assert r.status_code == 201, r.text
            assert host.wait_version(token, r.json()["id"])["status"] == "active"
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= 3, 120, "rated games")
    finally:
        host.stop()
    # the freeze by itself: no uploads, never again; the games go on
    host = start(submissions_open=opens, submissions_close=soon(), ends=far)
    try:
        wait_for(lambda: moved(host, "freeze"), 60, "the freeze")
        late = host.submit(bob, tar_folder(EXAMPLES / "random", edit="v2"))
        assert (late.status_code, late.json()["detail"]) == (403, (
            "submissions are closed in the freeze phase: they do not open again in this "
            "competition"))
        played = host.ok("GET", "/api/status")["finished"]
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] > played, 120,
                 "a game in the freeze")
        freeze = dt.datetime.fromisoformat(host.ok("GET", "/api/phase")["since"])
    finally:
        host.stop()
    # the end: nothing more is played, uploads and registrations are refused
    host = start(submissions_open=opens, submissions_close=freeze, ends=soon())
    try:
        wait_for(lambda: moved(host, "ended"), 60, "the end")
        wait_for(lambda: host.ok("GET", "/api/status")["running"] == 0, 60,
                 "the last games to end")
        done = host.ok("GET", "/api/status")
        assert done["queued"] == 0 and done["next_phase"] is None
        time.sleep(3)  # (no wall-clock assertion: a game would have started meanwhile)
        assert host.ok("GET", "/api/status")["finished"] == done["finished"]
        invite = host.ok("POST", "/api/invites", host.admin)["code"]
        r = host.call("POST", "/api/register", json={"name": "carol", "invite": invite})
        assert (r.status_code, r.json()["detail"]) == (403, (
            "registration is closed in the ended phase: it does not open again in this "
            "competition"))
        assert "phase: ended since " in moon_host("phase", host.url)
        log = moon_host("audit", host.url, "--folder", str(folder)).splitlines()
        details = [line.split("  ", 2)[2] for line in log]
        assert details[0].startswith("phase: freeze -> ended (the calendar)")
        assert details[1:] == ["phase: season -> freeze (the calendar)",
                               "phase: registration -> season (the calendar)",
                               "phase: registration (the host's first phase)"], log
    finally:
        host.stop()
