"""The host's API and pages in process: FastAPI's TestClient over the real app
(:func:`arena.host.app.create_app`) on a real competition folder and its database (SQLite
and PostgreSQL: the ``database`` fixture), without a server process and without the host's
loops (the client is not entered, so the app's lifespan, which plays the games, never
starts). What needs a process (restarts, kills, the lock, the CLI end to end) is tested
with one elsewhere in tests/host."""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from host_support import EXAMPLES, make_competition, tar_folder
from sqlalchemy import select

from arena.cli.host import stopped_line
from arena.core.results import GameResult, Termination
from arena.host import deps
from arena.host.app import create_app
from arena.host.executor import FinishedGame, GameRequest
from arena.host.models import Participant
from arena.host.pages import live
from arena.host.run import open_host
from arena.host.service import Host
from arena.host.visitors import VisitorLimits


@pytest.fixture
def app(tmp_path: Path, database: str | None) -> Iterator[tuple[TestClient, Host, str]]:
    folder = make_competition(tmp_path / "comp")
    host, _ = open_host(folder, database)
    try:
        yield TestClient(create_app(host)), host, (folder / "admin.token").read_text().strip()
    finally:
        host.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def register(client: TestClient, admin: str, name: str) -> str:
    code = client.post("/api/invites", headers=bearer(admin)).json()["code"]
    r = client.post("/api/register", json={"name": name, "invite": code})
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def test_an_invite_admits_one_participant_once(app) -> None:
    client, _, admin = app
    # invite registration: no code, a bad code, then a code of the organiser's, used twice
    assert client.post("/api/register", json={"name": "ann"}).status_code == 403
    assert client.post("/api/register", json={"name": "ann", "invite": "nope"}).status_code \
        == 403
    code = client.post("/api/invites", headers=bearer(admin)).json()["code"]
    first = client.post("/api/register", json={"name": "ann", "invite": code})
    assert first.status_code == 201
    again = client.post("/api/register", json={"name": "ben", "invite": code})
    assert again.status_code == 403
    me = client.get("/api/me", headers=bearer(first.json()["token"]))
    assert me.status_code == 200 and me.json()["name"] == "ann"
    # only the organiser makes invites
    assert client.post("/api/invites", headers=bearer(first.json()["token"])).status_code \
        == 403
    assert client.get("/api/me").status_code == 401


def test_a_submission_is_a_pending_version_of_its_bot(app) -> None:
    client, _, admin = app
    ann = register(client, admin, "ann")
    r = client.post("/api/submissions", headers=bearer(ann),
                    files={"archive": ("h.tar.gz", tar_folder(EXAMPLES / "heuristic"),
                                       "application/gzip")})
    assert r.status_code == 201, r.text
    v = r.json()
    # nothing builds in process (no lifespan): the version waits, numbered 1, named by its
    # bot.toml, readable by its owner
    assert (v["bot"], v["number"], v["status"]) == ("heuristic", 1, "pending")
    assert v["label"].startswith("heuristic@")
    got = client.get(f"/api/versions/{v['id']}", headers=bearer(ann)).json()
    assert (got["id"], got["status"]) == (v["id"], "pending")
    # the same sources again are the same version, not a second one
    same = client.post("/api/submissions", headers=bearer(ann),
                       files={"archive": ("h.tar.gz", tar_folder(EXAMPLES / "heuristic"),
                                          "application/gzip")})
    assert same.status_code == 200 and same.json()["id"] == v["id"]
    # a name another participant holds is refused for ben
    ben = register(client, admin, "ben")
    taken = client.post("/api/submissions", headers=bearer(ben),
                        files={"archive": ("h.tar.gz", tar_folder(EXAMPLES / "heuristic"),
                                           "application/gzip")})
    assert taken.status_code == 409, taken.text
    assert "belongs to another participant" in taken.json()["detail"]


def test_an_archive_that_is_not_one_is_a_4xx(app) -> None:
    client, _, admin = app
    ann = register(client, admin, "ann")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = b"not a manifest"
        info = tarfile.TarInfo("README")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    for body in (b"garbage, not gzip", buf.getvalue()):
        r = client.post("/api/submissions", headers=bearer(ann),
                        files={"archive": ("x.tar.gz", body, "application/gzip")})
        assert 400 <= r.status_code < 500, (r.status_code, r.text)
        assert r.json()["detail"], r.text


def test_the_pages_answer_in_process(app) -> None:
    client, host, _ = app
    front = client.get("/")
    assert front.status_code == 200
    assert host.settings.competition.name in front.text
    assert client.get("/bots/nosuchbot").status_code == 404
    status = client.get("/api/status").json()
    assert status["name"] == host.settings.competition.name
    assert (status["finished"], status["running"]) == (0, 0)
    assert client.get("/api/leaderboard").json() == []


def test_a_dependency_override_stands_in_for_the_caller(app) -> None:
    # the routes take the caller from deps.optional_participant: a test can seat anyone
    client, host, admin = app
    register(client, admin, "ann")
    with host.Session() as s:
        ann = s.scalars(select(Participant).where(Participant.name == "ann")).one()
    overrides = client.app.dependency_overrides  # type: ignore[attr-defined]
    overrides[deps.optional_participant] = lambda: ann
    try:
        assert client.get("/api/me").json()["name"] == "ann"
    finally:
        overrides.clear()
    assert client.get("/api/me").status_code == 401


def test_a_running_games_plays_are_withheld_while_its_set_has_more_to_play(app) -> None:
    # a set of two games on one board: s2-0 running, s2-1 queued; its live view would
    # show the board's tiles as they are played, which s2-1 will deal again
    from arena.host.models import Bot, DuplicateSet, Game, GameSeat, Version

    client, host, admin = app
    register(client, admin, "ann")
    with host.Session.begin() as s:
        owner = s.scalars(select(Participant).where(Participant.name == "ann")).one()
        bot = Bot(owner_id=owner.id, name="annbot")
        s.add(bot)
        s.flush()
        v = Version(bot_id=bot.id, number=1, hash="ab" * 32, archive_sha256="cd" * 32,
                    status="active")
        s.add(v)
        s.add(DuplicateSet(id=2, seed=98))
        s.flush()
        for k, status in enumerate(("running", "queued")):
            g = Game(id=f"s2-{k}", kind="rated", dset_id=2, seating=k, seed=98,
                     status=status)
            g.seats = [GameSeat(seat=i, version_id=v.id, side=i) for i in range(3)]
            s.add(g)
    note = "shown when the other game of its set ends"
    anew = {"Cache-Control": "no-cache"}
    assert client.get("/api/games/s2-0", headers=anew).json()["withheld"] == note
    r = client.get("/games/s2-0/events")
    assert r.status_code == 403 and r.json()["detail"] == (
        f"the plays of game s2-0 are {note}"), r.text
    page = client.get("/games/s2-0", headers=anew).text
    assert f"Its live view, replay and its bots&#39; stderr are {note}" in page
    assert "/games/s2-0/events" not in page  # not the live view
    # the organiser watches it
    assert client.get("/api/games/s2-0", headers=bearer(admin)).json()["withheld"] is None
    # the set's last game: its live view is public as it runs (no other game of the
    # set is left to deal its board), the finished sibling's replay still withheld
    with host.Session.begin() as s:
        g0, g1 = s.get(Game, "s2-0"), s.get(Game, "s2-1")
        assert g0 is not None and g1 is not None
        g0.status, g1.status = "finished", "running"
    assert client.get("/api/games/s2-1", headers=anew).json()["withheld"] is None
    assert "/games/s2-1/events" in client.get("/games/s2-1", headers=anew).text
    assert client.get("/api/games/s2-0", headers=anew).json()["withheld"] == note


def test_a_finished_game_is_withheld_while_its_set_is_in_play(app) -> None:
    # a set of two games on one board: s1-0 finished (its record and a seat's log on
    # disk), s1-1 still queued; then s1-1 finished too
    from arena.host.models import Bot, DuplicateSet, Game, GameSeat, Version

    client, host, admin = app
    ann = register(client, admin, "ann")
    with host.Session.begin() as s:
        owner = s.scalars(select(Participant).where(Participant.name == "ann")).one()
        bot = Bot(owner_id=owner.id, name="annbot")
        s.add(bot)
        s.flush()
        v = Version(bot_id=bot.id, number=1, hash="ab" * 32, archive_sha256="cd" * 32,
                    status="active")
        s.add(v)
        s.add(DuplicateSet(id=1, seed=99))
        s.flush()
        for k, status in enumerate(("finished", "queued")):
            g = Game(id=f"s1-{k}", kind="rated", dset_id=1, seating=k, seed=99,
                     status=status, record_path=f"s1-{k}.json" if k == 0 else None,
                     scores=[1, 2, 3], places=[3, 2, 1])
            g.seats = [GameSeat(seat=i, version_id=v.id, side=i, place=3 - i, score=1 + i)
                       for i in range(3)]
            s.add(g)
    host.record_dir.mkdir(parents=True, exist_ok=True)
    (host.record_dir / "s1-0.json").write_text('{"hands": [{"dealt": [["6-4"]]}]}')
    host.seat_log("s1-0", 0).parent.mkdir(parents=True, exist_ok=True)
    host.seat_log("s1-0", 0).write_text("my hand: 6-4\n")
    note = "shown when the other game of its set ends"
    for who in (None, ann):  # a visitor, and the owner of every seat: withheld
        h = bearer(who) if who else {}
        assert client.get("/api/games/s1-0", headers=h).json()["withheld"] == note
        assert client.get("/api/games/s1-0", headers=h).json()["record"] is False
        r = client.get("/api/games/s1-0/record", headers=h)
        assert r.status_code == 409 and note in r.json()["detail"], r.text
        listed = client.get("/api/games", headers=h).json()["games"]
        assert {g["id"]: g["withheld"] for g in listed} == {"s1-0": note, "s1-1": None}
    assert client.get("/api/games/s1-0/logs/0", headers=bearer(ann)).status_code == 409
    page = client.get("/games/s1-0")
    assert page.status_code == 200 and note in page.text and "6-4" not in page.text
    # the organiser sees it at once
    assert client.get("/api/games/s1-0", headers=bearer(admin)).json()["withheld"] is None
    assert client.get("/api/games/s1-0/record", headers=bearer(admin)).status_code == 200
    # the set over: shown to all, the owner's log to the owner
    with host.Session.begin() as s:
        g1 = s.get(Game, "s1-1")
        assert g1 is not None
        g1.status = "finished"
    # (a visitor's answers are cached for a few seconds: this one asks anew)
    anew = {"Cache-Control": "no-cache"}
    assert client.get("/api/games/s1-0", headers=anew).json()["withheld"] is None
    assert client.get("/api/games/s1-0/record", headers=anew).json()["hands"][0]["dealt"] \
        == [["6-4"]]
    assert client.get("/api/games/s1-0/logs/0", headers=bearer(ann)).text == "my hand: 6-4\n"


def crawl(client: TestClient, headers: dict[str, str]) -> dict[str, int]:
    """Every address a caller with ``headers`` reaches: the pages linked from ``/``
    (breadth first, up to 300) and every GET of the API's OpenAPI schema for each game,
    seat, bot and version the games list names (lists with and without filters), but the
    event streams; ``{address: status code}``."""
    seen: dict[str, int] = {}
    todo = ["/"]
    while todo and len(seen) < 300:
        path = todo.pop(0)
        if path in seen:
            continue
        r = client.get(path, headers=headers)
        seen[path] = r.status_code
        if "text/html" in r.headers.get("content-type", ""):
            for href in re.findall(r'href="(/[^"#]*)"', r.text):
                href = href.replace("&amp;", "&")
                if not href.startswith(("/static", "/signout")) and "/events" not in href:
                    todo.append(href)
    r = client.get("/api/games", params={"limit": 500}, headers=headers)
    assert r.status_code == 200, (r.status_code, r.text)
    games = r.json()["games"]
    fills_of = {"game_id": sorted({g["id"] for g in games}), "seat": [0, 1, 2],
                "name": sorted({x["bot"] for g in games for x in g["seats"]}),
                "version_id": sorted({x["version_id"] for g in games for x in g["seats"]
                                      if x["version_id"]})}
    for template, ops in client.get("/openapi.json").json()["paths"].items():
        if "get" not in ops or template.endswith("/events"):
            continue
        fills: list[dict[str, object]] = [{}]
        for key, values in fills_of.items():
            if "{" + key + "}" in template:
                fills = [{**f, key: v} for f in fills for v in values]
        for f in fills:
            path = template.format(**f)
            for query in [""] if f else ["", "?limit=500", "?status=finished&limit=500"]:
                if path + query not in seen:
                    seen[path + query] = client.get(path + query, headers=headers).status_code
    return seen


def test_every_address_of_a_played_competition_answers(app) -> None:
    """The reads the long flows through a real `moon host run` make (the e2e competition,
    the embargo's crawl: tests/host/conftest.py), on this database: versions submitted
    through the API and judged through the build queue, rated games claimed by the
    matchmaker and finished through the recorder, their logs cut, the ratings fitted;
    then every page and every GET of the API, as a visitor, a participant and the
    organiser, answers without a server error."""
    _, host, admin = app
    # a crawl is hundreds of expensive requests a second: no visitor's budget here
    client = TestClient(create_app(host, VisitorLimits(per_client=1e6, burst=10**6)))
    ann, bob = register(client, admin, "ann"), register(client, admin, "bob")
    ids = {}
    for token, bot in ((ann, "heuristic"), (bob, "random"), (ann, "weak"), (bob, "search")):
        r = client.post("/api/submissions", headers=bearer(token), files={
            "archive": ("b.tar.gz", tar_folder(EXAMPLES / bot), "application/gzip")})
        assert r.status_code == 201, r.text
        ids[bot] = r.json()["id"]
    # the build queue takes them in turn; the last one fails its validation
    for _ in ids:
        job = host.builds.next_pending()
        assert job is not None
        host.builds.set_status(job[0], "rejected" if job[1] == "search" else "active",
                               "validation: a whole game against reference-random: seat 0 "
                               "crash" if job[1] == "search" else "")
    assert host.builds.next_pending() is None
    mine = client.get(f"/api/versions/{ids['search']}", headers=bearer(bob)).json()
    assert mine["status"] == "rejected" and mine["reason"].startswith("validation: ")
    host.matchmaker.specs = lambda v, name: name  # type: ignore[assignment,method-assign]
    played = []
    for k in range(12):
        job = host.matchmaker.claim()
        assert job is not None
        gid = job[0]
        scores = ((7, 2, 0), (0, 3, 8), (2, 7, 1), (7, 7, 1))[k % 4]
        places = tuple(1 + sum(o > x for o in scores) for x in scores)
        winner = places.index(1) if places.count(1) == 1 else None  # (7, 7, 1): none
        result = GameResult(Termination.TARGET, winner, scores, places, 3)
        path = host.record_dir / f"{gid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"game_id": gid, "logs": {}}))
        for seat in range(3):
            host.seat_log(gid, seat).parent.mkdir(parents=True, exist_ok=True)
            host.seat_log(gid, seat).write_text(f"{gid} seat {seat}\n")
        host.recorder.record_now(FinishedGame(
            GameRequest(gid, (), host.ruleset, "moon3", 7, host.tc), result, (), (), path,
            1000, 100))
        host.cut_logs(gid)
        played.append(gid)
    assert host.batch_now() > 0
    board = client.get("/api/leaderboard").json()
    assert {r["bot"] for r in board} == {"heuristic", "random", "weak"}
    listed = client.get("/api/games", params={"version": ids["weak"], "status": "finished",
                                              "limit": 500}).json()["games"]
    assert listed and all(any(x["version_id"] == ids["weak"] for x in g["seats"])
                          for g in listed)
    # one game of the next set running, the others queued: a queued game's live stream
    # asks for its status while it waits; the stop line of `moon host run` counts the game
    # a stop would leave in flight
    assert host.matchmaker.claim() is not None
    queued = client.get("/api/games", params={"status": "queued"}).json()["games"]
    assert queued and live._game_status(host, queued[0]["id"]) == "queued"
    assert stopped_line(host).startswith("stopped: 1 game(s) in flight aborted")
    for who in ({}, bearer(ann), bearer(admin)):
        seen = crawl(client, who)
        assert len(seen) > 40, sorted(seen)
        errors = {path: code for path, code in seen.items() if code >= 500}
        assert errors == {}, errors
