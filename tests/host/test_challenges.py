"""Challenges and a disabled participant, in process (FastAPI's TestClient) on SQLite and
PostgreSQL: the quota's refusals and their Retry-After worked out by hand, a challenge
game claimed within its share of the slots and never rated, its record its asker's; a
disabled participant's versions leave the pool, their queued games are cancelled, their
uploads and challenges are refused in one line, and enabling them undoes it."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from arena.core.results import GameResult, Termination
from arena.host import challenges, init_competition
from arena.host.app import create_app
from arena.host.challenges import slots, wait_s
from arena.host.executor import FinishedGame, GameRequest
from arena.host.models import Bot, Game, Participant, Version
from arena.host.run import open_host
from arena.host.security import digest
from arena.host.service import Host
from arena.host.settings import ADMIN_TOKEN_FILE

T0 = dt.datetime(2027, 3, 1, 12, 0, tzinfo=dt.UTC)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_quota_waits_for_the_challenge_that_makes_room() -> None:
    m = dt.timedelta(minutes=1)
    # 3 an hour, asked at 12:00, 12:10, 12:30: at 12:40 the 12:00 one leaves at 13:00
    asked = [T0, T0 + 10 * m, T0 + 30 * m]
    assert wait_s(asked, 3, T0 + 40 * m) == 20 * 60
    assert wait_s(asked, 4, T0 + 40 * m) == 0  # room for a fourth
    # at 13:05 the 12:00 one is out: two in the hour, room for one
    assert wait_s(asked, 3, T0 + 65 * m) == 0
    # 4 asked (the quota was lowered to 2 since): one more fits once at most 1 is
    # left in the hour, so 12:00, 12:10 and 12:30 must leave: 12:30 does at 13:30
    assert wait_s([*asked, T0 + 35 * m], 2, T0 + 40 * m) == 50 * 60
    # a naive time is UTC (SQLite gives them back so)
    assert wait_s([T0.replace(tzinfo=None)], 1, T0 + 15 * m) == 45 * 60


def test_the_challenges_share_of_the_slots() -> None:
    # half the slots, rounded down, at least one
    assert [slots(n, 0.5) for n in (1, 2, 3, 4, 5, 8)] == [1, 1, 1, 2, 2, 4]
    assert [slots(n, 0.25) for n in (1, 4, 7, 8)] == [1, 1, 1, 2]
    assert slots(3, 1.0) == 3


def competition(folder: Path, database: str | None, per_hour: int = 2,
                concurrency: int = 2) -> tuple[Host, str]:
    init_competition(folder, trust_local=True, seed=(1 << 62) + 11)
    toml = folder / "competition.toml"
    text = toml.read_text().replace("per_hour = 10", f"per_hour = {per_hour}")
    text = re.sub(r"(?m)^concurrency = \d+", f"concurrency = {concurrency}", text)
    toml.write_text(text)
    host, _ = open_host(folder, database)
    host.matchmaker.specs = lambda v, name: name  # type: ignore[assignment,return-value]
    return host, (folder / ADMIN_TOKEN_FILE).read_text().strip()


def people(host: Host, bots: dict[str, str]) -> dict[str, tuple[str, int]]:
    """A participant per name with one bot (``bots[name]``) and its active version 1:
    their tokens and version ids by name."""
    out = {}
    with host.Session.begin() as s:
        for name, bot in bots.items():
            token = f"moon_{name}-token"
            p = Participant(name=name, token_hash=digest(token))
            s.add(p)
            s.flush()
            b = Bot(owner_id=p.id, name=bot)
            s.add(b)
            s.flush()
            v = Version(bot_id=b.id, number=1, hash=bot[0] * 64, archive_sha256="0" * 64,
                        status="active")
            s.add(v)
            s.flush()
            b.active_version_id = v.id
            out[name] = (token, v.id)
    return out


def finish(host: Host, gid: str, scores: tuple[int, ...]) -> None:
    """Running game ``gid`` finished with ``scores`` (per side), through the recorder."""
    places = tuple(1 + sum(o > x for o in scores) for x in scores)
    result = GameResult(Termination.TARGET, places.index(1), scores, places, 3)
    req = GameRequest(gid, (), host.ruleset, "moon3", 7, host.tc)
    path = host.record_dir / f"{gid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"game_id": gid, "logs": {}}))
    host.recorder.record_now(FinishedGame(req, result, (), (), path, 1000, 100))


def live(host: Host) -> list[tuple[int, int, float, float]]:
    with host.Session() as s:
        return [(v.id, v.games, v.mu, v.sigma)
                for v in s.scalars(select(Version).order_by(Version.id))]


def test_a_challenge_is_played_between_rated_games_and_never_rated(
        tmp_path: Path, database: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    host, admin = competition(tmp_path / "comp", database)
    try:
        ids = people(host, {"ann": "a", "bob": "b", "cat": "c"})
        ann, bob = ids["ann"][0], ids["bob"][0]
        c = TestClient(create_app(host))
        clock = [T0]
        monkeypatch.setattr(challenges, "utcnow", lambda: clock[0])
        r = c.post("/api/challenges", json={"opponent": "b"}, headers=bearer(ann))
        assert r.status_code == 201, r.text
        first = r.json()
        assert (first["id"], first["status"], first["rated"]) == ("c1", "queued", False)
        assert first["version"].startswith("a@") and first["opponent"].startswith("b@")
        # 3 players: ann's version in seat 0, the opponent in the two others
        assert [x["version_id"] for x in first["game"]["seats"]] == \
            [ids["ann"][1], ids["bob"][1], ids["bob"][1]]
        # against the reference bot, named as the host names it
        r = c.post("/api/challenges", json={"opponent": "reference-random"},
                   headers=bearer(ann))
        assert r.status_code == 201 and r.json()["opponent"] == "reference-random", r.text
        # the quota: 2 in any hour; the third 25 minutes later waits until 13:00
        clock[0] = T0 + dt.timedelta(minutes=25)
        r = c.post("/api/challenges", json={"opponent": "c"}, headers=bearer(ann))
        assert r.status_code == 429 and r.headers["retry-after"] == str(35 * 60)
        assert r.json()["detail"] == (
            "you asked for 2 challenges in the last hour, the most this competition "
            "takes ([challenges] per_hour = 2): ask again in 35 minutes")
        # each refusal one line saying what to do
        for body, token, code, says in [
                ({"opponent": "nobody"}, bob, 404, "there is no bot named 'nobody'"),
                ({"opponent": "b"}, bob, 422, "b is your own bot"),
                ({"opponent": "a", "version": 9}, bob, 404, "bot a has no version 9"),
                ({"opponent": "a", "mine": ids["ann"][1]}, bob, 404, "you have no version"),
                ({"opponent": "a"}, "moon_forged", 401, "unknown token")]:
            r = c.post("/api/challenges", json=body, headers=bearer(token))
            assert r.status_code == code and says in r.json()["detail"], r.text
            assert "\n" not in r.json()["detail"]
        assert c.post("/api/challenges", json={"opponent": "a"}).status_code == 401

        before = live(host)
        # the first claim takes the oldest challenge (under its share: 1 of 2 slots)...
        job = host.matchmaker.claim()
        assert job is not None and job[0] == "c1" and job[2] == ("a", "b", "b")
        # ...the next ones rated games, as long as a challenge runs (its share is full)
        rated = [host.matchmaker.claim() for _ in range(2)]
        assert all(j is not None and j[0].startswith("s") for j in rated)
        finish(host, "c1", (7, 3, 0))
        # a challenge's seed is its own, none of the master seed's boards
        with host.Session() as s:
            boards = set(s.scalars(select(Game.seed).where(Game.kind == "rated")))
            c1 = s.get(Game, "c1")
            assert c1 is not None and c1.seed not in boards and c1.status == "finished"
            assert c1.seq is not None and not c1.rated
        assert live(host) == before  # no rating, no game count moved
        job = host.matchmaker.claim()  # its slot is free: the next challenge
        assert job is not None and job[0] == "c2" and job[2][1:] == (
            host.references[0], host.references[0])
        host.batch_now()
        with host.Session() as s:
            assert all(v.rating is None for v in s.scalars(select(Version)))  # no game
        # ann's list: the newest first, with the result and where the record is
        mine = c.get("/api/challenges", headers=bearer(ann)).json()["challenges"]
        assert [x["id"] for x in mine] == ["c2", "c1"]
        assert (mine[1]["status"], mine[1]["places"], mine[1]["record"], mine[1]["page"]) \
            == ("finished", [1, 2], "/api/games/c1/record", "/games/c1")
        assert c.get("/api/challenges", headers=bearer(bob)).json()["challenges"] == []
        assert c.get("/api/challenges/c1", headers=bearer(bob)).status_code == 404
        # the record is ann's; bob (the opponent) sees the game exists; others nothing
        assert c.get("/api/games/c1/record", headers=bearer(ann)).status_code == 200
        seen = c.get("/api/games/c1", headers=bearer(bob)).json()
        assert seen["kind"] == "challenge" and seen["scores"] == [7, 3, 0]
        assert seen["record"] is False and seen["withheld"] == challenges.HIDDEN
        r = c.get("/api/games/c1/record", headers=bearer(bob))
        assert r.status_code == 409 and challenges.HIDDEN in r.json()["detail"]
        assert c.get("/api/games/c1").status_code == 404
        assert c.get("/api/games/c1", headers=bearer(ids["cat"][0])).status_code == 404
        assert c.get("/api/games/c1/record", headers=bearer(admin)).status_code == 200
        assert "c1" not in {g["id"] for g in c.get("/api/games").json()["games"]}
        listed = c.get("/api/games", params={"kind": "challenge"}, headers=bearer(ann))
        assert {g["id"] for g in listed.json()["games"]} == {"c1", "c2"}
        # its page says unrated, to its asker
        form = c.get("/signin")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
        c.post("/signin", data={"token": ann, "csrf": csrf}, follow_redirects=False)
        assert "unrated challenge game" in c.get("/games/c1").text
        # an hour after the first two, the quota has room again; a voided one not counted
        clock[0] = T0 + dt.timedelta(hours=1)
        r = c.post("/api/challenges", json={"opponent": "c"}, headers=bearer(ann))
        assert r.status_code == 201, r.text
        r = c.post("/api/challenges", json={"opponent": "c"}, headers=bearer(ann))
        assert r.status_code == 201, r.text
        with host.Session.begin() as s:
            g = s.get(Game, r.json()["id"])
            assert g is not None
            g.status = "voided"
        r = c.post("/api/challenges", json={"opponent": "c"}, headers=bearer(ann))
        assert r.status_code == 201, r.text
        # no challenge in a phase that plays no games, saying when it opens
        assert c.post("/api/phase", json={"phase": "final"},
                      headers=bearer(admin)).status_code == 200
        r = c.post("/api/challenges", json={"opponent": "c"}, headers=bearer(bob))
        assert r.status_code == 409 and r.json()["detail"].startswith("no challenge now: ")
    finally:
        host.close()


def test_with_one_slot_challenges_and_rated_games_take_turns(
        tmp_path: Path, database: str | None) -> None:
    host, _ = competition(tmp_path / "comp", database, per_hour=5, concurrency=1)
    try:
        ids = people(host, {"ann": "a", "bob": "b", "cat": "c"})
        c = TestClient(create_app(host))
        for _ in range(3):
            r = c.post("/api/challenges", json={"opponent": "b"},
                       headers=bearer(ids["ann"][0]))
            assert r.status_code == 201, r.text
        order = []
        for _ in range(5):  # each game finishes before the next is claimed (one slot)
            job = host.matchmaker.claim()
            assert job is not None
            order.append(job[0][0])
            with host.Session.begin() as s:
                g = s.get(Game, job[0])
                assert g is not None
                g.status = "finished"
        assert order == ["c", "s", "c", "s", "c"]
    finally:
        host.close()


def test_a_disabled_participant_plays_no_more_until_enabled(
        tmp_path: Path, database: str | None) -> None:
    host, admin = competition(tmp_path / "comp", database)
    try:
        ids = people(host, {"ann": "a", "bob": "b", "cat": "c", "dan": "d"})
        bob, bob_v = ids["bob"]
        c = TestClient(create_app(host))
        assert c.post("/api/challenges", json={"opponent": "a"},
                      headers=bearer(bob)).status_code == 201
        # games claimed until a queued rated game seats bob: each set is 3 of the 4
        # versions, drawn at random (the host's rng is not seeded), 6 seatings of them
        queued_with_b: set[str] = set()
        for _ in range(40):
            assert host.matchmaker.claim() is not None
            with host.Session() as s:
                queued_with_b = {g.id for g in s.scalars(select(Game).where(
                    Game.status == "queued", Game.kind == "rated"))
                    if bob_v in {x.version_id for x in g.seats}}
            if queued_with_b:
                break
        assert queued_with_b
        r = c.post("/api/participants/bob/disable", json={"reason": "shares his bot"},
                   headers=bearer(bob))
        assert r.status_code == 403
        r = c.post("/api/participants/bob/disable", json={"reason": " "},
                   headers=bearer(admin))
        assert r.status_code == 422 and "say why" in r.json()["detail"]
        r = c.post("/api/participants/bob/disable", json={"reason": "shares his bot"},
                   headers=bearer(admin))
        assert r.status_code == 200 and r.json() == {
            "name": "bob", "disabled": True, "reason": "shares his bot"}, r.text
        assert c.post("/api/participants/bob/disable", json={"reason": "again"},
                      headers=bearer(admin)).status_code == 409
        assert c.post("/api/participants/nobody/disable", json={"reason": "x"},
                      headers=bearer(admin)).status_code == 404
        assert c.post("/api/participants/admin/disable", json={"reason": "x"},
                      headers=bearer(admin)).status_code == 409
        with host.Session() as s:
            for gid in queued_with_b:
                g = s.get(Game, gid)
                assert g is not None and g.status == "cancelled", gid
            assert s.scalars(select(Game).where(Game.status == "queued",
                                                Game.kind == "challenge")).all() == []
        # he reads why, on his version and as himself; others do not
        why = "disabled by the organiser with its participant: shares his bot"
        assert c.get(f"/api/versions/{bob_v}", headers=bearer(bob)).json()["reason"] == why
        assert c.get(f"/api/versions/{bob_v}").json()["status"] == "disabled"
        assert c.get(f"/api/versions/{bob_v}").json()["reason"] is None
        assert c.get("/api/me", headers=bearer(bob)).json()["disabled"] == "shares his bot"
        assert c.get("/api/me", headers=bearer(ids["ann"][0])).json()["disabled"] is None
        assert "disabled" in c.get("/bots/b").text
        # his uploads and challenges refused in one line
        line = "your account is disabled by the organiser (shares his bot): ask the " \
               "organiser to enable it"
        r = c.post("/api/challenges", json={"opponent": "a"}, headers=bearer(bob))
        assert (r.status_code, r.json()["detail"]) == (403, line)
        r = c.post("/api/submissions", headers=bearer(bob),
                   files={"archive": ("b.tar.gz", b"x", "application/gzip")})
        assert (r.status_code, r.json()["detail"]) == (403, line)
        # no game claimed from now on has his version
        for _ in range(6):
            job = host.matchmaker.claim()
            assert job is not None and job[0].startswith("s")
            with host.Session() as s:
                g = s.get(Game, job[0])
                assert g is not None and bob_v not in {x.version_id for x in g.seats}
        # even a version of his that turns active while he is disabled (its build was
        # under way) is not matched
        with host.Session.begin() as s:
            v = s.get(Version, bob_v)
            assert v is not None
            v.status = "active"
        job = host.matchmaker.claim()
        assert job is not None
        with host.Session.begin() as s:
            g = s.get(Game, job[0])
            assert g is not None and bob_v not in {x.version_id for x in g.seats}
            v = s.get(Version, bob_v)
            assert v is not None
            v.status = "disabled"
        # enabled, his version plays again
        r = c.post("/api/participants/bob/enable", json={"reason": "it was his own"},
                   headers=bearer(admin))
        assert r.status_code == 200 and r.json()["disabled"] is False, r.text
        assert c.post("/api/participants/bob/enable", json={},
                      headers=bearer(admin)).status_code == 409
        assert c.get(f"/api/versions/{bob_v}").json()["status"] == "active"
        assert c.get("/api/me", headers=bearer(bob)).json()["disabled"] is None
        assert c.post("/api/challenges", json={"opponent": "a"},
                      headers=bearer(bob)).status_code == 201
        with host.Session.begin() as s:  # the queue emptied: the next sets are new ones
            for g in s.scalars(select(Game).where(Game.status.in_(("queued", "running")))):
                g.status = "cancelled"
        # claimed until a game seats him: each new set draws 3 of the 4 versions at random
        seen: set[int | None] = set()
        for _ in range(40):
            job = host.matchmaker.claim()
            if job is None:
                break
            with host.Session() as s:
                g = s.get(Game, job[0])
                assert g is not None
                seen |= {x.version_id for x in g.seats}
            if bob_v in seen:
                break
        assert bob_v in seen
        log = [(e["action"], e["detail"]) for e in c.get(
            "/api/audit", headers=bearer(admin)).json()]
        assert log[0] == ("enable", "participant bob: it was his own; 1 version(s) active "
                          "again")
        assert log[1][0] == "disable" and log[1][1].startswith(
            "participant bob: shares his bot; 1 version(s) disabled with them; ")
    finally:
        host.close()


def test_the_challenges_page_asks_through_the_api(tmp_path: Path, database: str | None
                                                  ) -> None:
    host, _ = competition(tmp_path / "comp", database, per_hour=1)
    try:
        ids = people(host, {"ann": "a", "bob": "b"})
        c = TestClient(create_app(host))
        assert c.get("/challenges", follow_redirects=False).headers["location"] == "/signin"
        form = c.get("/signin")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
        c.post("/signin", data={"token": ids["ann"][0], "csrf": csrf},
               follow_redirects=False)
        blank = c.get("/challenges")
        assert "none yet" in blank.text and '<option value="b">' in blank.text
        assert '<option value="a">' not in blank.text  # not her own bot
        assert '<option value="reference-random">' in blank.text
        r = c.post("/challenges", data={"opponent": "b", "csrf": "forged"})
        assert r.status_code == 403 and "Form expired" in r.text
        r = c.post("/challenges", data={"opponent": "zed", "csrf": csrf})
        assert r.status_code == 404 and "there is no bot named &#39;zed&#39;" in r.text
        r = c.post("/challenges", data={"opponent": "b", "version": "x", "csrf": csrf})
        assert r.status_code == 422 and "version number" in r.text
        r = c.post("/challenges", data={"opponent": "b", "csrf": csrf},
                   follow_redirects=False)
        assert (r.status_code, r.headers["location"]) == (303, "/challenges")
        listed = c.get("/challenges").text
        assert '<a href="/games/c1">c1</a>' in listed and "queued" in listed
        # over the quota (1 an hour): the form says when to ask again
        r = c.post("/challenges", data={"opponent": "b", "csrf": csrf})
        assert r.status_code == 429 and "ask again in 60 minutes" in r.text
    finally:
        host.close()


def signed_in_client(host: Host, token: str) -> TestClient:
    """A client of the pages signed in with ``token``."""
    c = TestClient(create_app(host))
    csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/signin").text).group(1)
    assert c.post("/signin", data={"token": token, "csrf": csrf},
                  follow_redirects=False).status_code == 303
    return c


def test_a_running_challenge_is_watched_by_its_asker_alone(tmp_path: Path) -> None:
    host, _ = competition(tmp_path / "comp", None)
    try:
        ids = people(host, {"ann": "a", "bob": "b", "cat": "c"})
        ann, bob, cat = (signed_in_client(host, ids[n][0]) for n in ("ann", "bob", "cat"))
        assert ann.post("/api/challenges", json={"opponent": "b"},
                        headers=bearer(ids["ann"][0])).status_code == 201
        with host.Session.begin() as s:
            s.get(Game, "c1").status = "running"
        assert 'id="live"' in ann.get("/games/c1").text
        # bob's bot plays in it: he sees who plays, not the plays (they are its record's)
        page = bob.get("/games/c1")
        assert page.status_code == 200 and 'id="live"' not in page.text
        assert ("Its live view, replay and its bots' stderr are shown only to the "
                "participant who asked for it (a challenge game).") in html.unescape(page.text)
        r = bob.get("/games/c1/events")
        assert (r.status_code, r.json()["detail"]) == (
            403, "the plays of game c1 are shown only to the participant who asked for it "
            "(a challenge game)")
        # cat has no part in it: no such game
        assert cat.get("/games/c1").status_code == 404
        assert cat.get("/games/c1/events").status_code == 404
    finally:
        host.close()


def test_a_disabled_participants_bot_and_a_reference_bot_are_refused_by_name(
        tmp_path: Path) -> None:
    host, admin = competition(tmp_path / "comp", None, per_hour=10)
    try:
        ids = people(host, {"ann": "a", "bob": "b"})
        ann = bearer(ids["ann"][0])
        c = TestClient(create_app(host))
        assert c.post("/api/participants/bob/disable", json={"reason": "shares his bot"},
                      headers=bearer(admin)).status_code == 200
        with host.Session.begin() as s:  # a build of his that turned active since
            s.get(Version, ids["bob"][1]).status = "active"
        for body in ({"opponent": "b"}, {"opponent": "B", "version": 1}):
            r = c.post("/api/challenges", json=body, headers=ann)
            assert (r.status_code, r.json()["detail"]) == (
                409, "bot b is disabled by the organiser with its participant: challenge "
                "another bot"), body
        # a reference bot's name, whatever its case, as bots' names are
        r = c.post("/api/challenges", json={"opponent": "Reference-Random"}, headers=ann)
        assert (r.status_code, r.json()["opponent"]) == (201, "reference-random")
        r = c.post("/api/challenges", json={"opponent": "reference-random", "version": 1},
                   headers=ann)
        assert (r.status_code, r.json()["detail"]) == (
            422, "reference-random is a reference bot, which has no versions: leave out "
            "--version / \"version\"")
        with host.Session() as s:  # only the reference bot's challenge was queued
            assert [g.id for g in s.scalars(select(Game))] == ["c1"]
    finally:
        host.close()


def test_the_challenges_form_refuses_a_bad_version_in_one_line(tmp_path: Path) -> None:
    host, _ = competition(tmp_path / "comp", None)
    try:
        ids = people(host, {"ann": "a", "bob": "b"})
        c = signed_in_client(host, ids["ann"][0])
        csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/challenges").text).group(1)
        # no version a database holds: "0", a digit int() refuses, one past 2**63 - 1
        for v in ("0", "²", "9223372036854775808", "-1"):
            r = c.post("/challenges", data={"opponent": "b", "version": v, "csrf": csrf})
            assert r.status_code == 422, v
            assert (f"version {v!r}: write the opponent bot's version number (1, 2, "
                    "...), or leave it empty for its active one") in html.unescape(r.text), v
        r = c.post("/challenges", data={"opponent": "b" * 65, "csrf": csrf})
        assert r.status_code == 422
        assert html.unescape(re.search(r'<p class="message">(.*?)</p>', r.text, re.S)
                             .group(1)) == (
            "This form's opponent is not as its page asks (string should have at most 64 "
            "characters): open the page again and fill it in there.")
        with host.Session() as s:
            assert s.scalars(select(Game)).all() == []
    finally:
        host.close()


def test_a_challenge_the_host_could_not_play_is_played_again_for_its_asker(
        tmp_path: Path, database: str | None) -> None:
    # the host's failure (a runner's, a restart's) voids a challenge game: its asker
    # expects the game they asked for, not a lost one, so it is played again as a rated
    # game is (the same seats and deal), at most MAX_ATTEMPTS tries in all, each step
    # said to them; and it counts once in their quota (2 an hour here)
    host, admin = competition(tmp_path / "comp", database)
    try:
        ids = people(host, {"ann": "a", "bob": "b"})
        ann = ids["ann"][0]
        c = TestClient(create_app(host))
        r = c.post("/api/challenges", json={"opponent": "reference-random"},
                   headers=bearer(ann))
        assert r.status_code == 201 and r.json()["id"] == "c1", r.text
        with host.Session() as s:
            c1 = s.get(Game, "c1")
            assert c1 is not None
            seed = c1.seed
        job = host.matchmaker.claim()
        assert job is not None and job[0] == "c1"
        with host.Session.begin() as s:
            host.recorder.void(s, s.get(Game, "c1"), "the runner failed")

        got = c.get("/api/challenges/c1", headers=bearer(ann)).json()
        assert (got["status"], got["note"], got["again"]) == (
            "voided", "the runner failed; played again as c1-r1", "c1-r1")
        again = c.get("/api/challenges/c1-r1", headers=bearer(ann)).json()
        assert (again["status"], again["again"], again["opponent"]) == (
            "queued", None, "reference-random")
        assert [x["version_id"] for x in again["game"]["seats"]] == [ids["ann"][1], None, None]
        mine = c.get("/api/challenges", headers=bearer(ann)).json()["challenges"]
        assert {x["id"]: x["again"] for x in mine} == {"c1": "c1-r1", "c1-r1": None}
        # the quota counts c1 once (as c1-r1): one more fits in the hour, not two
        r = c.post("/api/challenges", json={"opponent": "b"}, headers=bearer(ann))
        assert r.status_code == 201 and r.json()["id"] == "c2", r.text
        r = c.post("/api/challenges", json={"opponent": "b"}, headers=bearer(ann))
        assert r.status_code == 429, r.text

        # played again: the same deal, the same asker; then voided twice more, given up
        for k, gid in ((1, "c1-r1"), (2, "c1-r2")):
            job = host.matchmaker.claim()
            assert job is not None and job[0] == gid and job[1] == seed
            assert job[2] == ("a", host.references[0], host.references[0])
            with host.Session.begin() as s:
                g = s.get(Game, gid)
                assert g is not None and g.asked_by == s.get(Game, "c1").asked_by
                assert g.attempt == k
                host.recorder.void(s, g, "the host stopped while the game was being played")
        got = c.get("/api/challenges/c1-r2", headers=bearer(ann)).json()
        assert (got["status"], got["again"]) == ("voided", None)
        assert got["note"] == ("the host stopped while the game was being played; voided 3 "
                               "times, the most: not played again (ask again)")
        with host.Session() as s:
            assert s.get(Game, "c1-r3") is None
        # the organiser sees every try; bob, whose bot is not in it, sees none of them
        listed = c.get("/api/games", params={"kind": "challenge", "limit": 50},
                       headers=bearer(admin)).json()["games"]
        assert sorted(g["id"] for g in listed) == ["c1", "c1-r1", "c1-r2", "c2"]
        assert c.get("/api/challenges/c1-r1", headers=bearer(ids["bob"][0])).status_code \
            == 404
    finally:
        host.close()


def test_moon_challenge_follows_a_challenge_played_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `moon challenge` waits for the game it asked for: when the host voids it and plays
    # it again, it says so and waits for the replay's result (exit 0), where it used to
    # stop at "voided" (exit 1). Its calls go to the app in process; each of its waits
    # moves the host one step on.
    import importlib

    from click.testing import CliRunner

    from arena.cli import main
    from arena.cli.client import ClientError

    cli_challenge = importlib.import_module("arena.cli.challenge")
    host, _ = competition(tmp_path / "comp", None)
    try:
        ids = people(host, {"ann": "a"})
        ann = ids["ann"][0]
        c = TestClient(create_app(host))

        def api(method: str, url: str, path: str, token: str | None = None,
                **kw: object) -> object:
            kw.pop("timeout", None)
            r = c.request(method, path, headers=bearer(token or ""), **kw)  # type: ignore
            if r.status_code >= 400:
                raise ClientError(f"{url}: {r.json()['detail']} (HTTP {r.status_code})")
            return r.json()

        def void_c1() -> None:
            with host.Session.begin() as s:
                host.recorder.void(s, s.get(Game, "c1"), "the runner failed")

        steps = [lambda: host.matchmaker.claim(), void_c1,
                 lambda: host.matchmaker.claim(), lambda: finish(host, "c1-r1", (7, 3, 0))]
        monkeypatch.setattr(cli_challenge, "api", api)
        monkeypatch.setattr(cli_challenge.time, "sleep", lambda _s: steps.pop(0)())
        r = CliRunner().invoke(main, ["challenge", "reference-random", "--server",
                                      "http://testserver", "--token", ann, "--timeout", "60"])
        assert r.exit_code == 0, r.output
        assert steps == []
        lines = [x.split(", ", 1)[1] for x in r.output.strip().splitlines()]
        heads = [x.split(":")[0] for x in r.output.strip().splitlines()]
        assert heads == ["challenge c1"] * 3 + ["challenge c1-r1"] * 3, r.output
        assert lines[:5] == ["queued", "running",
                             "voided: the runner failed; played again as c1-r1",
                             "queued", "running"], r.output
        assert lines[5].startswith("finished: you placed 1, they placed 2 (scores 7-3-0, ")
        assert lines[5].endswith("; unrated; replay /games/c1-r1"), r.output
    finally:
        host.close()


def test_the_organiser_voids_a_challenge_which_is_not_played_again(
        tmp_path: Path, database: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # the organiser voids a finished challenge (the API, then the game's page): it is
    # not played again, as a rated game the organiser voids is not; its asker reads why
    # (the API's note, the game's page) and may ask again at once (it leaves their quota,
    # 2 an hour here); the ratings are untouched; each void is in the audit log
    host, admin = competition(tmp_path / "comp", database)
    try:
        ids = people(host, {"ann": "a", "bob": "b"})
        ann, bob = ids["ann"][0], ids["bob"][0]
        c = TestClient(create_app(host))
        monkeypatch.setattr(challenges, "utcnow", lambda: T0)
        for gid in ("c1", "c2"):
            r = c.post("/api/challenges", json={"opponent": "b"}, headers=bearer(ann))
            assert r.status_code == 201 and r.json()["id"] == gid, r.text
        assert c.post("/api/challenges", json={"opponent": "b"},
                      headers=bearer(ann)).status_code == 429
        job = host.matchmaker.claim()
        assert job is not None and job[0] == "c1"
        finish(host, "c1", (7, 3, 0))
        before = live(host)
        # c2 queued: only a finished game is voided; only by the organiser, with a reason
        r = c.post("/api/games/c2/void", json={"reason": "x"}, headers=bearer(admin))
        assert r.status_code == 409 and r.json()["detail"] == (
            "game c2 is a queued challenge game: only a finished rated or challenge game "
            "is voided")
        assert c.post("/api/games/c1/void", json={"reason": "x"},
                      headers=bearer(ann)).status_code == 403
        assert c.post("/api/games/c1/void", json={"reason": " "},
                      headers=bearer(admin)).status_code == 422
        r = c.post("/api/games/c1/void", json={"reason": " its opponent  hung the host "},
                   headers=bearer(admin))
        assert r.status_code == 200, r.text
        assert (r.json()["kind"], r.json()["status"]) == ("challenge", "voided")
        got = c.get("/api/challenges/c1", headers=bearer(ann)).json()
        note = ("voided by the organiser: its opponent hung the host; not played again "
                "(ask again: a voided challenge is not counted in your quota)")
        assert (got["status"], got["note"], got["again"], got["places"], got["record"]) \
            == ("voided", note, None, [None, None], None)
        with host.Session() as s:
            assert s.get(Game, "c1-r1") is None  # not played again
            assert sorted(s.scalars(select(Game.id).where(Game.status == "queued"))) \
                == ["c2"]
        assert live(host) == before  # never rated: nothing to recompute
        assert c.post("/api/games/c1/void", json={"reason": "again"},
                      headers=bearer(admin)).status_code == 409
        # c1 left the quota: one more fits in the hour, not two
        r = c.post("/api/challenges", json={"opponent": "b"}, headers=bearer(ann))
        assert r.status_code == 201 and r.json()["id"] == "c3", r.text
        assert c.post("/api/challenges", json={"opponent": "b"},
                      headers=bearer(ann)).status_code == 429
        # its page: why, to its asker and the organiser; not to its opponent's owner
        assert html.escape(note) in signed_in_client(host, ann).get("/games/c1").text
        assert "voided by the organiser" not in signed_in_client(host, bob).get(
            "/games/c1").text
        # the game's page: the organiser's form voids finished c2; others get a 404
        job = host.matchmaker.claim()
        assert job is not None and job[0] == "c2"
        finish(host, "c2", (0, 3, 8))
        org = signed_in_client(host, admin)
        page_ = org.get("/games/c2").text
        assert 'action="/games/c2/void"' in page_ and "Void this game" in page_
        assert 'action="/games/c2/void"' not in signed_in_client(host, ann).get(
            "/games/c2").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page_).group(1)
        for client, code in ((TestClient(create_app(host)), 404),
                             (signed_in_client(host, ann), 404)):
            r = client.post("/games/c2/void", data={"reason": "x", "csrf": csrf})
            assert r.status_code == code and "There is no game" in r.text
        r = org.post("/games/c2/void", data={"reason": "x", "csrf": "forged"})
        assert r.status_code == 403 and "Form expired" in r.text
        r = org.post("/games/c2/void", data={"reason": "a runaway bot", "csrf": csrf},
                     follow_redirects=False)
        assert (r.status_code, r.headers["location"]) == (303, "/games/c2")
        shown = org.get("/games/c2").text
        assert "voided by the organiser: a runaway bot; not played again" in shown
        assert 'action="/games/c2/void"' not in shown  # voided: no form
        r = org.post("/games/c2/void", data={"reason": "again", "csrf": csrf})
        assert r.status_code == 409 and "only a finished rated or challenge game" in r.text
        log = c.get("/api/audit", headers=bearer(admin)).json()
        assert [(e["action"], e["detail"]) for e in log] == [
            ("void", "challenge c2 (asked by ann): a runaway bot"),
            ("void", "challenge c1 (asked by ann): its opponent hung the host")]
    finally:
        host.close()
