"""Refused uploads (:mod:`arena.host.refusals`), in process: each one, whatever the reason
(an archive or a bot.toml the host cannot read, a name that is taken...), counts against
the participant's ``max_versions_per_day`` as a new version would, and once over it the
next upload is refused before it is read; each refusal is one line in the log, at most
ten a minute."""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from host_support import EXAMPLES, make_competition, tar_files, tar_folder
from sqlalchemy import func, select

from arena.host.app import create_app
from arena.host.models import Participant, UploadRefusal
from arena.host.refusals import UploadRefusals
from arena.host.run import open_host
from arena.host.service import Host


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[TestClient, Host, str]]:
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    toml.write_text(re.sub(r"(?m)^max_versions_per_day = \d+", "max_versions_per_day = 3",
                           toml.read_text()))
    host, _ = open_host(folder, None)
    try:
        yield (TestClient(create_app(host)), host,
               (folder / "admin.token").read_text().strip())
    finally:
        host.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


DEEP = b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n"
"""A bot.toml of 10 KB nested 5,000 levels deep (issue 31: a 500 and a 3,000-line
traceback)."""


def upload(c: TestClient, token: str, data: bytes):
    return c.post("/api/submissions", headers=bearer(token),
                  files={"archive": ("bot.tar.gz", data, "application/gzip")})


def test_every_refused_upload_counts_against_the_days_quota(app, caplog) -> None:
    c, host, admin = app
    code = c.post("/api/invites", headers=bearer(admin)).json()["code"]
    ann = c.post("/api/register", json={"name": "ann", "invite": code}).json()["token"]
    with caplog.at_level(logging.WARNING, logger="arena.host"):
        garbage = upload(c, ann, b"not an archive at all")
        deep = upload(c, ann, tar_files({"bot.toml": DEEP, "bot.py": b""}))
        nameless = upload(c, ann, tar_files({"bot.py": b"print(1)\n"}))
    assert [r.status_code for r in (garbage, deep, nameless)] == [400, 400, 400]
    assert "nested too deeply" in deep.json()["detail"]
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and all(line.startswith("upload of ann refused (400): ")
                                   for line in lines)
    assert all("\n" not in line and "Traceback" not in line for line in lines)
    # max_versions_per_day = 3: three refusals are the day's three
    good = upload(c, ann, tar_folder(EXAMPLES / "random", rename="annbot"))
    assert good.status_code == 429
    assert "0 new versions and 3 uploads that were refused in the last 24 hours" in \
        good.json()["detail"]
    # the organiser is neither limited nor counted
    for _ in range(3):
        assert upload(c, admin, b"junk").status_code == 400
    assert upload(c, admin, tar_folder(EXAMPLES / "random", rename="house")).status_code \
        == 201


def test_refusals_are_said_ten_a_minute_then_counted(app) -> None:
    c, host, admin = app
    code = c.post("/api/invites", headers=bearer(admin)).json()["code"]
    c.post("/api/register", json={"name": "ann", "invite": code})
    c.post("/api/register", json={"name": "bob", "invite": c.post(
        "/api/invites", headers=bearer(admin)).json()["code"]})
    with host.Session() as s:
        ann, bob = (s.scalar(select(Participant.id).where(Participant.name == n))
                    for n in ("ann", "bob"))
    start = dt.datetime(2027, 1, 1, tzinfo=dt.UTC)
    now = [0.0]
    r = UploadRefusals(host.Session, clock=lambda: start + dt.timedelta(seconds=now[0]))
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda rec: said.append(rec.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("arena.host")
    logger.addHandler(handler)
    try:
        for i in range(12):
            now[0] = i * 1.0
            r.add(ann, "ann", 400, f"bad {i}\nsecond line")
        now[0] = 61.0
        r.add(ann, "ann", 400, "bad 12")
    finally:
        logger.removeHandler(handler)
    assert said[:10] == [f"upload of ann refused (400): bad {i}" for i in range(10)]
    assert said[10:] == ["upload of ann refused (400): bad 12 (2 more refused in the last "
                         "minute, not said)"]
    assert r.count(ann) == 13 and r.count(bob) == 0
    now[0] = 86400.0 + 5.5  # a day after the first six
    assert r.count(ann) == 7
    # and from the database, as a restarted host reads it
    assert UploadRefusals(host.Session, clock=lambda: start + dt.timedelta(
        seconds=now[0])).count(ann) == 7
    # a new refusal deletes the rows over a day old: 7 left, and the new one
    r.add(ann, "ann", 400, "bad 13")
    with host.Session() as s:
        assert s.scalar(select(func.count(UploadRefusal.id))) == 8
