"""Validating a rejected version again, unchanged, in process (the API and the version
page's button; :mod:`arena.host.routes.revalidate`): its owner and the organiser may,
nobody else; only a rejected version, not one a newer version of its bot would lose to;
within its owner's ``max_waiting``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from host_support import EXAMPLES, make_competition, tar_folder

from arena.host.app import create_app
from arena.host.models import Version
from arena.host.routes.revalidate import AGAIN
from arena.host.run import open_host
from arena.host.service import Host


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[TestClient, Host, str]]:
    host, _ = open_host(make_competition(tmp_path / "comp"), None)
    try:
        yield (TestClient(create_app(host)), host,
               (host.folder / "admin.token").read_text().strip())
    finally:
        host.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def register(c: TestClient, admin: str, name: str) -> str:
    code = c.post("/api/invites", headers=bearer(admin)).json()["code"]
    return str(c.post("/api/register", json={"name": name, "invite": code}).json()["token"])


def rejected(c: TestClient, host: Host, token: str, edit: str = "", bot: str = "heuristic"
             ) -> int:
    """A new version of ``bot`` of ``token``'s, rejected (as the builder would)."""
    r = c.post("/api/submissions", headers=bearer(token), files={"archive": (
        "h.tar.gz", tar_folder(EXAMPLES / bot, edit=edit), "application/gzip")})
    assert r.status_code == 201, r.text
    vid = int(r.json()["id"])
    status(host, vid, "rejected", "validation: ... startup_stall ...")
    return vid


def status(host: Host, vid: int, to: str, reason: str = "") -> None:
    with host.Session.begin() as s:
        v = s.get(Version, vid)
        assert v is not None
        v.status, v.reason = to, reason


def test_the_owner_and_the_organiser_may_have_a_rejected_version_validated_again(app):
    c, host, admin = app
    ann, bob = register(c, admin, "ann"), register(c, admin, "bob")
    vid = rejected(c, host, ann)
    # someone else: as if it did not exist
    assert c.post(f"/api/versions/{vid}/validate", headers=bearer(bob)).status_code == 404
    assert c.post(f"/api/versions/{vid}/validate").status_code == 401
    r = c.post(f"/api/versions/{vid}/validate", headers=bearer(ann))
    assert r.status_code == 202, r.text
    assert (r.json()["status"], r.json()["reason"]) == ("pending", AGAIN)
    # pending now: not again
    again = c.post(f"/api/versions/{vid}/validate", headers=bearer(ann))
    assert again.status_code == 409 and "is pending" in again.json()["detail"]
    status(host, vid, "rejected")
    assert c.post(f"/api/versions/{vid}/validate", headers=bearer(admin)).status_code == 202
    # an active version is not validated again
    status(host, vid, "active")
    assert c.post(f"/api/versions/{vid}/validate", headers=bearer(ann)).status_code == 409


def test_not_a_version_a_newer_one_would_lose_to_nor_over_the_owners_waiting_limit(app):
    c, host, admin = app
    ann = register(c, admin, "ann")
    old = rejected(c, host, ann)
    new = rejected(c, host, ann, edit="v2")
    status(host, new, "active")
    r = c.post(f"/api/versions/{old}/validate", headers=bearer(ann))
    assert r.status_code == 409 and f"older than version {new}" in r.json()["detail"]
    # max_waiting (3): three versions of ann's other bot waiting, no fourth sent back
    status(host, new, "rejected")
    waiting = [rejected(c, host, ann, edit=f"w{i}", bot="random") for i in range(3)]
    for vid in waiting:
        status(host, vid, "pending")
    r = c.post(f"/api/versions/{new}/validate", headers=bearer(ann))
    assert r.status_code == 429 and "3 versions waiting" in r.json()["detail"]
    assert c.post(f"/api/versions/{new}/validate", headers=bearer(admin)).status_code == 202


def test_the_version_page_has_a_button_for_its_owner(app):
    c, host, admin = app
    ann = register(c, admin, "ann")
    vid = rejected(c, host, ann)
    form = c.get("/signin")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
    assert c.post("/signin", data={"token": ann, "csrf": csrf},
                  follow_redirects=False).status_code == 303
    page = c.get(f"/versions/{vid}")
    assert f'action="/versions/{vid}/validate"' in page.text
    r = c.post(f"/versions/{vid}/validate", data={"csrf": csrf}, follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (303, f"/versions/{vid}")
    with host.Session() as s:
        assert s.get(Version, vid).status == "pending"
    # without the form's CSRF value: refused
    status(host, vid, "rejected")
    assert c.post(f"/versions/{vid}/validate", data={"csrf": "x" * 43}).status_code == 403
    # anyone else sees no button
    c.cookies.clear()
    assert "/validate" not in c.get(f"/versions/{vid}").text


def test_the_organiser_alone_may_have_a_disabled_version_validated_again(app):
    c, host, admin = app
    ann = register(c, admin, "ann")
    vid = rejected(c, host, ann)
    with host.Session.begin() as s:  # active, then disabled after 3 forfeits in a row
        v = s.get(Version, vid)
        v.status, v.forfeits_in_row = "active", 3
        v.bot.active_version_id = vid
    r = c.post(f"/api/versions/{vid}/disable", headers=bearer(admin),
               json={"reason": "forfeits"})
    assert r.status_code == 200 and r.json()["status"] == "disabled", r.text
    # its owner may not: one line saying whom to ask
    r = c.post(f"/api/versions/{vid}/validate", headers=bearer(ann))
    assert r.status_code == 403 and "only the organiser" in r.json()["detail"]
    with host.Session() as s:
        assert s.get(Version, vid).status == "disabled"
    r = c.post(f"/api/versions/{vid}/validate", headers=bearer(admin))
    assert r.status_code == 202, r.text
    assert (r.json()["status"], r.json()["reason"]) == ("pending", AGAIN)
    with host.Session() as s:
        v = s.get(Version, vid)
        assert (v.forfeits_in_row, v.bot.active_version_id) == (0, None)
    audit = c.get("/api/audit", headers=bearer(admin)).json()
    entries = audit["entries"] if isinstance(audit, dict) else audit
    assert entries[0]["action"] == "revalidate"
    assert f"version {vid} " in entries[0]["detail"] and "disabled" in entries[0]["detail"]


def test_not_a_disabled_participants_version(app):
    c, host, admin = app
    ann = register(c, admin, "ann")
    vid = rejected(c, host, ann)
    status(host, vid, "disabled", "disabled by the organiser with its participant: x")
    assert c.post("/api/participants/ann/disable", headers=bearer(admin),
                  json={"reason": "x"}).status_code == 200
    r = c.post(f"/api/versions/{vid}/validate", headers=bearer(admin))
    assert r.status_code == 409 and "enable the participant first" in r.json()["detail"]


def test_the_organiser_sees_the_button_on_a_disabled_version_its_owner_does_not(app):
    c, host, admin = app
    ann = register(c, admin, "ann")
    vid = rejected(c, host, ann)
    status(host, vid, "disabled", "disabled by the organiser: x")
    csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/signin").text).group(1)
    c.post("/signin", data={"token": ann, "csrf": csrf}, follow_redirects=False)
    assert "/validate" not in c.get(f"/versions/{vid}").text
    c.cookies.clear()
    csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/signin").text).group(1)
    assert c.post("/signin", data={"token": admin, "csrf": csrf},
                  follow_redirects=False).status_code == 303
    page = c.get(f"/versions/{vid}")
    assert f'action="/versions/{vid}/validate"' in page.text and "active only if it passes" \
        in page.text
    r = c.post(f"/versions/{vid}/validate", data={"csrf": csrf}, follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (303, f"/versions/{vid}")
    with host.Session() as s:
        assert s.get(Version, vid).status == "pending"
