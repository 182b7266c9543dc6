"""A participant who abuses the host's resources, against a real `moon host run` over
HTTP: a flood of new versions (each one a build and a validation everyone else's versions
would wait behind, and an archive and a folder kept on disk) is refused with a clear 429,
and an upload that is refused leaves nothing on the host's disk, however often it is sent.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder

from arena.cli import main


def stored(folder: Path) -> set[str]:
    """Every archive and version folder the host keeps."""
    store = folder / "store"
    return {p.relative_to(store).as_posix() for sub in ("archives", "versions")
            for p in (store / sub).glob("*")} if store.is_dir() else set()


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory):
    folder = make_competition(tmp_path_factory.mktemp("abuse") / "comp", concurrency=1)
    path = folder / "competition.toml"
    text = re.sub(r"(?m)^max_waiting = \d+", "max_waiting = 1", path.read_text())
    text = re.sub(r"(?m)^seed = \d+", "seed = 7", text)  # short: warned of
    path.write_text(re.sub(r"(?m)^max_versions_per_day = \d+", "max_versions_per_day = 2",
                           text))
    h = HostProcess(folder, None).start()
    try:
        yield h
    finally:
        h.stop()


def test_a_refused_upload_leaves_nothing_on_disk(host: HostProcess) -> None:
    alice, bob = host.register("alice"), host.register("bob")
    assert host.submit(alice, tar_folder(EXAMPLES / "random", rename="alicebot")
                       ).status_code == 201
    before = stored(host.folder)
    assert len(before) == 2  # alicebot's archive and its folder
    # bob sends uploads the host refuses, each with other sources (a new hash every time)
    r = host.submit(bob, tar_folder(EXAMPLES / "random", rename="alicebot", edit="0"))
    assert r.status_code == 409 and "belongs to another participant" in r.json()["detail"]
    r = host.submit(bob, tar_folder(EXAMPLES / "random", rename="Reference-Random",
                                    edit="0"))
    assert r.status_code == 409 and "reference bot" in r.json()["detail"]
    # each refusal counted as a version of the day's (max_versions_per_day = 2): the next
    # upload is refused before it is read
    for i in range(1, 3):
        r = host.submit(bob, tar_folder(EXAMPLES / "random", rename="alicebot", edit=f"{i}"))
        assert r.status_code == 429 and "2 uploads that were refused" in r.json()["detail"]
    assert stored(host.folder) == before
    assert host.ok("GET", "/api/me", bob)["bots"] == []


def test_a_flood_of_versions_is_refused(host: HostProcess) -> None:
    carol = host.register("carol")
    first = host.submit(carol, tar_folder(EXAMPLES / "weak", rename="flood"))
    assert first.status_code == 201, first.text
    v1 = first.json()
    # max_waiting = 1: a second version while the first is still being validated
    r = host.submit(carol, tar_folder(EXAMPLES / "weak", rename="flood", edit="2"))
    assert r.status_code == 429, r.text
    assert "1 versions waiting to be built and validated (at most 1 at once)" \
        in r.json()["detail"]
    # a new bot counts too: the limit is the participant's, not the bot's
    r = host.submit(carol, tar_folder(EXAMPLES / "weak", rename="flood2"))
    assert r.status_code == 429, r.text
    # the same sources again are no new version: the version, not a refusal
    again = host.submit(carol, tar_folder(EXAMPLES / "weak", rename="flood"))
    assert again.status_code == 200 and again.json()["id"] == v1["id"]
    assert host.wait_version(carol, v1["id"])["status"] == "active"
    v2 = host.submit(carol, tar_folder(EXAMPLES / "weak", rename="flood", edit="2"))
    assert v2.status_code == 201, v2.text
    assert host.wait_version(carol, v2.json()["id"])["status"] == "active"
    # max_versions_per_day = 2: a third new version in 24 hours is refused
    r = host.submit(carol, tar_folder(EXAMPLES / "weak", rename="flood", edit="3"))
    assert r.status_code == 429, r.text
    assert "2 new versions in the last 24 hours" in r.json()["detail"]
    assert [v["number"] for v in host.ok("GET", "/api/bots/flood")["versions"]] == [1, 2]
    assert host.call("GET", "/api/bots/flood2").status_code == 404


def test_the_organiser_is_not_limited(host: HostProcess) -> None:
    for i in range(2):
        r = host.submit(host.admin, tar_folder(EXAMPLES / "random", rename="house", edit=f"{i}"))
        assert r.status_code == 201, r.text


def test_a_leaked_token_can_be_replaced(host: HostProcess) -> None:
    """A participant whose token leaked gets a new one: the old token and every web session
    signed in with it stop working at once (else whoever holds it could submit a losing
    version of their bot for good)."""
    old = host.register("dora")
    # a web session signed in with the old token
    form = httpx.get(host.url + "/signin")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert csrf is not None
    r = httpx.post(host.url + "/signin", data={"token": old, "csrf": csrf.group(1)},
                   cookies=form.cookies)
    assert r.status_code == 303
    session = {**form.cookies, **r.cookies}
    assert httpx.get(host.url + "/submit", cookies=session).status_code == 200
    new = host.ok("POST", "/api/token", old)
    assert new["name"] == "dora" and new["token"] != old
    assert host.ok("GET", "/api/me", new["token"])["name"] == "dora"
    r = host.call("GET", "/api/me", old)
    assert r.status_code == 401 and "unknown token" in r.json()["detail"]
    r = httpx.get(host.url + "/submit", cookies=session)
    assert r.status_code == 303 and r.headers["location"] == "/signin"
    # the organiser's token is its file's
    r = host.call("POST", "/api/token", host.admin)
    assert r.status_code == 400 and "admin.token" in r.json()["detail"]
    assert host.call("POST", "/api/token").status_code == 401
    # the same from the command line
    r = CliRunner().invoke(main, ["host", "new-token", host.url, "--token", new["token"],
                                 "--no-save"])
    assert r.exit_code == 0, r.output
    newer = r.output.strip()
    assert host.ok("GET", "/api/me", newer)["name"] == "dora"
    assert host.call("GET", "/api/me", new["token"]).status_code == 401


def test_the_api_page_loads_nothing_from_elsewhere(host: HostProcess) -> None:
    """/docs (linked from every page's footer) is one of the host's pages: its scripts and
    styles are the host's own, under the pages' Content-Security-Policy. FastAPI's own
    /docs loaded Swagger UI from a CDN: a script from elsewhere on this origin, where it
    could read a signed-in visitor's pages (their CSRF value) and post forms as them."""
    r = httpx.get(host.url + "/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    refs = re.findall(r'(?:src|href)="([^"]*)"', r.text)
    assert refs and all(x.startswith(("/", "#")) for x in refs), refs
    # every endpoint of the schema is on it
    for path in host.ok("GET", "/openapi.json")["paths"]:
        assert f"{path}</code>" in r.text, path
    assert httpx.get(host.url + "/redoc").status_code == 404


def test_a_short_master_seed_is_warned_of(host: HostProcess) -> None:
    # the fixture wrote seed = 7
    assert "[matchmaking] seed = 7 is short (3 bits)" in host.log.read_text()
