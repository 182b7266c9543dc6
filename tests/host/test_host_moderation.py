"""The organiser's moderation through the API, in process on SQLite and PostgreSQL: a
disabled version plays no more games and its owner reads why; enabled, it plays again; a
voided game leaves the ratings equal to those of a competition that never had it; an
announcement on every page; each in the audit log."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from arena.core.results import GameResult, Termination
from arena.host import init_competition
from arena.host.app import create_app
from arena.host.executor import FinishedGame, GameRequest
from arena.host.models import Bot, DuplicateSet, Game, GameSeat, Participant, Version
from arena.host.run import open_host
from arena.host.service import Host
from arena.host.settings import ADMIN_TOKEN_FILE


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def competition(folder: Path, database: str | None) -> tuple[Host, str]:
    init_competition(folder, trust_local=True, seed=(1 << 62) + 5)
    host, _ = open_host(folder, database)
    return host, (folder / ADMIN_TOKEN_FILE).read_text().strip()


def versions(host: Host, owner_token_hash: str = "o" * 64) -> dict[str, int]:
    """ann's bots a, b, c, one active version each; their ids."""
    with host.Session.begin() as s:
        p = Participant(name="ann", token_hash=owner_token_hash)
        s.add(p)
        s.flush()
        ids = {}
        for n in "abc":
            b = Bot(owner_id=p.id, name=n)
            s.add(b)
            s.flush()
            v = Version(bot_id=b.id, number=1, hash=n * 64, archive_sha256="0" * 64,
                        status="active")
            s.add(v)
            s.flush()
            b.active_version_id = v.id
            ids[n] = v.id
        return ids


def play(host: Host, gid: str, seats: list[int], scores: tuple[int, int, int]) -> None:
    """Game ``gid`` (a set of its own) finished with ``scores``, through the recorder."""
    with host.Session.begin() as s:
        d = DuplicateSet(seed=7)
        s.add(d)
        s.flush()
        g = Game(id=gid, kind="rated", dset_id=d.id, seed=7, status="running")
        g.seats = [GameSeat(seat=i, version_id=v, side=i) for i, v in enumerate(seats)]
        s.add(g)
    places = tuple(1 + sum(o > x for o in scores) for x in scores)
    result = GameResult(Termination.TARGET, places.index(1), scores, places, 3)
    req = GameRequest(gid, (), host.ruleset, "moon3", 7, host.tc)
    host.recorder.record_now(FinishedGame(req, result, (), (), None, 1000, 100))


def ratings(host: Host) -> list[tuple[str, int, float, float, float | None]]:
    with host.Session() as s:
        return [(v.bot.name, v.games, round(v.mu, 9), round(v.sigma, 9),
                 None if v.rating is None else round(v.rating, 6))
                for v in s.scalars(select(Version).order_by(Version.id))]


GAMES = [("g1", (7, 2, 0)), ("g2", (0, 3, 8)), ("g3", (2, 7, 1)), ("g4", (7, 0, 2))]


def test_a_voided_game_leaves_the_ratings_of_a_competition_without_it(
        tmp_path: Path, database: str | None) -> None:
    # one competition plays g1..g4 and the organiser voids g2; another plays g1, g3, g4
    import secrets

    other_db = None
    if database is not None:  # a second PostgreSQL database beside the first
        import psycopg

        base, _ = database.rsplit("/", 1)
        other_db = f"{base}/moon_{secrets.token_hex(4)}"
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{other_db.rsplit("/", 1)[1]}"')
    a, admin = competition(tmp_path / "a", database)
    b, _ = competition(tmp_path / "b", other_db)
    try:
        ids_a, ids_b = versions(a), versions(b)
        seats_a, seats_b = [ids_a[n] for n in "abc"], [ids_b[n] for n in "abc"]
        for gid, scores in GAMES:
            play(a, gid, seats_a, scores)
            if gid != "g2":
                play(b, gid, seats_b, scores)
        assert ratings(a) != ratings(b)
        c = TestClient(create_app(a))
        r = c.post("/api/games/g2/void", json={"reason": "a host fault"},
                   headers=bearer(admin))
        assert r.status_code == 200 and r.json()["status"] == "voided", r.text
        assert ratings(a) == ratings(b)  # the live ratings and game counts
        a.batch_now()
        b.batch_now()
        assert ratings(a) == ratings(b) and ratings(a)[0][4] is not None  # the batch fit
        # only a finished rated game, with a reason, by the organiser
        assert c.post("/api/games/g2/void", json={"reason": "again"},
                      headers=bearer(admin)).status_code == 409
        assert c.post("/api/games/g3/void", json={"reason": " "},
                      headers=bearer(admin)).status_code == 422
        assert c.post("/api/games/nope/void", json={"reason": "x"},
                      headers=bearer(admin)).status_code == 404
        log = c.get("/api/audit", headers=bearer(admin)).json()
        assert [(e["action"], e["detail"]) for e in log] == [("void", "game g2: a host fault")]
    finally:
        a.close()
        b.close()


def test_a_disabled_version_plays_no_more_and_its_owner_reads_why(
        tmp_path: Path, database: str | None) -> None:
    from arena.host.security import digest

    host, admin = competition(tmp_path / "comp", database)
    try:
        ann = "moon_ann-token"
        ids = versions(host, digest(ann))
        c = TestClient(create_app(host))
        host.matchmaker.specs = lambda v, name: name  # type: ignore[assignment,return-value]
        # a queued set with every version, then c is disabled
        assert host.matchmaker.claim() is not None
        r = c.post(f"/api/versions/{ids['c']}/disable", json={"reason": "reads the records"},
                   headers=bearer(ann))
        assert r.status_code == 403
        r = c.post(f"/api/versions/{ids['c']}/disable", json={"reason": "reads the records"},
                   headers=bearer(admin))
        assert r.status_code == 200 and r.json()["status"] == "disabled", r.text
        why = "disabled by the organiser: reads the records"
        assert c.get(f"/api/versions/{ids['c']}", headers=bearer(ann)).json()["reason"] == why
        assert c.get(f"/api/versions/{ids['c']}").json()["reason"] is None  # not others'
        with host.Session() as s:
            queued = s.scalars(select(Game).where(Game.status == "queued")).all()
            assert queued == []  # its set's games still to play were cancelled
        # the games claimed from now on have a and b only
        for _ in range(4):
            job = host.matchmaker.claim()
            assert job is not None
            with host.Session() as s:
                g = s.get(Game, job[0])
                assert g is not None and ids["c"] not in {x.version_id for x in g.seats}
        # enabled again, it plays again
        r = c.post(f"/api/versions/{ids['c']}/enable", json={}, headers=bearer(admin))
        assert r.status_code == 200 and r.json()["status"] == "active", r.text
        assert c.post(f"/api/versions/{ids['c']}/enable", json={},
                      headers=bearer(admin)).status_code == 409
        # an announcement on every page, taken down
        r = c.post("/api/announcement", json={"text": "The final starts at 18:00 UTC"},
                   headers=bearer(admin))
        assert r.status_code == 200
        for path in ("/", "/games", "/bots/a", "/nosuchpage"):
            assert "The final starts at 18:00 UTC" in c.get(path).text, path
        c.post("/api/announcement", json={"text": ""}, headers=bearer(admin))
        assert "The final starts" not in c.get("/").text
        log = [(e["action"], e["detail"]) for e in c.get(
            "/api/audit", headers=bearer(admin)).json()]
        assert log[0] == ("announce", "(taken down)")
        assert log[1] == ("announce", "The final starts at 18:00 UTC")
        assert log[2] == ("enable", f"version {ids['c']} (c #1)")
        assert log[3][0] == "disable" and log[3][1].startswith(
            f"version {ids['c']} (c #1): reads the records; ")
        assert log[3][1].endswith("queued game(s) cancelled")
    finally:
        host.close()


def test_a_set_ended_by_a_disable_counts_as_played_whole(
        tmp_path: Path, database: str | None) -> None:
    # a set of a, b and c with one game finished; c is disabled, its set's other games
    # cancelled: the set has a finished game and none left to play, so each of them has
    # played it whole (docs/host.md, the placement series), as `moon host rerate` counts
    host, admin = competition(tmp_path / "comp", database)
    try:
        ids = versions(host)
        host.matchmaker.specs = lambda v, name: name  # type: ignore[assignment,return-value]
        job = host.matchmaker.claim()
        assert job is not None
        with host.Session() as s:
            g = s.get(Game, job[0])
            assert g is not None and {x.version_id for x in g.seats} == set(ids.values())
        result = GameResult(Termination.TARGET, 0, (7, 2, 0), (1, 2, 3), 3)
        req = GameRequest(job[0], (), host.ruleset, "moon3", 7, host.tc)
        host.recorder.record_now(FinishedGame(req, result, (), (), None, 1000, 100))

        def sets() -> dict[str, int]:
            with host.Session() as s:
                return {v.bot.name: v.sets for v in s.scalars(select(Version))}
        assert sets() == {"a": 0, "b": 0, "c": 0}  # the set's five other games to play
        c = TestClient(create_app(host))
        r = c.post(f"/api/versions/{ids['c']}/disable", json={"reason": "reads the records"},
                   headers=bearer(admin))
        assert r.status_code == 200, r.text
        assert sets() == {"a": 1, "b": 1, "c": 1}
        host.rerate()
        assert sets() == {"a": 1, "b": 1, "c": 1}
    finally:
        host.close()
