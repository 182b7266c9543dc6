"""What the host does for a crowd of visitors (:mod:`arena.host.visitors`), in process:
public answers served from memory with ETag / Last-Modified and 304s, one database read
per address however many ask, a change seen at once, the per-client limit of expensive
requests (429 with Retry-After), a finished record kept as a file, and a database that
cannot answer giving 503 (or the stale copy), never 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from host_support import EXAMPLES, make_competition, tar_folder
from sqlalchemy import create_engine, event
from sqlalchemy.orm import sessionmaker

from arena.host.app import create_app
from arena.host.models import Game, GameSeat, utcnow
from arena.host.run import open_host
from arena.host.service import Host
from arena.host.visitors import VisitorLimits, public_record_path


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    h, _ = open_host(make_competition(tmp_path / "comp"), None)
    try:
        yield h
    finally:
        h.close()


def client(host: Host, limits: VisitorLimits | None = None, address: str = "testclient"
           ) -> TestClient:
    return TestClient(create_app(host, limits), client=(address, 50000),
                      raise_server_exceptions=False)


def statements(host: Host) -> list[str]:
    """Every SQL statement the web's engine runs from now on."""
    seen: list[str] = []
    event.listen(host.web_engine, "before_cursor_execute",
                 lambda *a: seen.append(a[2]))
    return seen


def test_a_public_answer_has_an_etag_and_answers_304(host) -> None:
    c = client(host)
    first = c.get("/api/leaderboard")
    assert first.status_code == 200 and first.json() == []
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    assert etag.startswith('"') and "public" in first.headers["cache-control"]
    same = c.get("/api/leaderboard", headers={"If-None-Match": etag})
    assert (same.status_code, same.content, same.headers["etag"]) == (304, b"", etag)
    assert c.get("/api/leaderboard", headers={"If-Modified-Since": modified}).status_code \
        == 304
    other = c.get("/api/leaderboard", headers={"If-None-Match": '"something-else"'})
    assert (other.status_code, other.content) == (200, first.content)
    # a page as well; and no visitor is handed another's CSRF cookie from the cache
    page = c.get("/")
    assert page.status_code == 200 and page.headers.get("etag")
    assert "set-cookie" not in page.headers
    assert c.get("/", headers={"If-None-Match": page.headers["etag"]}).status_code == 304


def test_a_crowd_costs_the_database_one_read_per_address(host) -> None:
    c = client(host)
    seen = statements(host)
    for path in ("/api/games", "/api/status", "/", "/games"):
        before = len(seen)
        assert c.get(path).status_code == 200
        read = len(seen)
        assert read > before, path  # the first visitor's answer is read
        for _ in range(30):
            assert c.get(path).status_code == 200
        assert len(seen) == read, path  # the next 30 read nothing


def test_a_client_that_asks_for_a_fresh_answer_gets_one_read_anew(host) -> None:
    c = client(host)
    seen = statements(host)
    assert c.get("/api/games").status_code == 200
    read = len(seen)
    for header in ({"Cache-Control": "no-cache"}, {"Cache-Control": "max-age=0"},
                   {"Pragma": "no-cache"}):
        assert c.get("/api/games", headers=header).status_code == 200
        assert len(seen) > read, header
        read = len(seen)
    assert c.get("/api/games").status_code == 200
    assert len(seen) == read  # and the copy is the new one


def test_a_write_is_seen_at_once_by_the_next_visitor(host) -> None:
    c = client(host)
    admin = (host.folder / "admin.token").read_text().strip()
    assert c.get("/api/bots").json() == []
    code = c.post("/api/invites", headers={"Authorization": f"Bearer {admin}"}).json()["code"]
    token = c.post("/api/register", json={"name": "ann", "invite": code}).json()["token"]
    r = c.post("/api/submissions", headers={"Authorization": f"Bearer {token}"},
               files={"archive": ("h.tar.gz", tar_folder(EXAMPLES / "heuristic"),
                                  "application/gzip")})
    assert r.status_code == 201, r.text
    assert [b["name"] for b in c.get("/api/bots").json()] == ["heuristic"]


def test_expensive_requests_over_a_clients_limit_get_429_with_retry_after(host) -> None:
    # 3 at once, then one every 1000 s: the 4th waits 1000 s for its token (less the
    # instant since the 3rd)
    limits = VisitorLimits(per_client=0.001, burst=3)
    app = create_app(host, limits)
    a = TestClient(app, client=("203.0.113.9", 1), raise_server_exceptions=False)
    for n in (1, 2, 3):  # each a new query: computed, not from the cache
        assert a.get(f"/api/games?limit={n}").status_code == 200
    refused = a.get("/api/games?limit=4")
    assert refused.status_code == 429
    assert 999 <= int(refused.headers["retry-after"]) <= 1000
    assert "try again in" in refused.json()["detail"]
    # what the cache holds costs nothing: still served to this client
    assert a.get("/api/games?limit=2").status_code == 200
    # another address has its own bucket; another machine of the same IPv6 /64 does not
    b = TestClient(app, client=("203.0.113.10", 1), raise_server_exceptions=False)
    assert b.get("/api/games?limit=4").status_code == 200
    same_64 = [TestClient(app, client=(f"2001:db8::{k}", 1), raise_server_exceptions=False)
           for k in range(1, 5)]
    assert [x.get(f"/api/games?limit={10 + i}").status_code for i, x in enumerate(same_64)] \
        == [200, 200, 200, 429]


def test_a_live_game_is_never_served_from_the_cache(host) -> None:
    finished_game(host, "s1-0", status="running")
    c = client(host)
    seen = statements(host)
    first = c.get("/games/s1-0")
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    read = len(seen)
    assert c.get("/games/s1-0").status_code == 200
    assert len(seen) > read  # read again: at its end the next view is the replay


def finished_game(host: Host, game_id: str = "s1-0", status: str = "finished") -> None:
    """A finished rated game with a record whose seat 0 wrote to stderr."""
    record = {"schema": "moon-arena.game-record", "logs": {"0": "secret"}, "hands": []}
    host.record_dir.mkdir(exist_ok=True)
    path = host.record_dir / f"{game_id}.json"
    path.write_text(json.dumps(record))
    with host.Session.begin() as s:
        g = Game(id=game_id, kind="rated", seed=1, status=status, seq=1,
                 record_path=str(path), finished_at=utcnow(), created_at=utcnow())
        g.seats = [GameSeat(seat=i, version_id=None, reference="random", side=i)
                   for i in range(3)]
        s.add(g)


def test_a_finished_record_is_kept_as_a_file_and_served_without_the_database(host) -> None:
    finished_game(host)
    c = client(host)
    first = c.get("/api/games/s1-0/record")
    assert first.status_code == 200 and first.json()["logs"] == {}
    kept = public_record_path(host.record_dir, "s1-0")
    assert json.loads(kept.read_text()) == first.json()
    # a new app (a restarted host: nothing in memory) serves it from the file alone
    seen = statements(host)
    again = client(host).get("/api/games/s1-0/record")
    assert again.status_code == 200 and again.json() == first.json()
    assert seen == []
    assert client(host).get("/api/games/s1-0/record", headers={
        "If-None-Match": again.headers["etag"]}).status_code == 304


def test_a_database_that_cannot_answer_is_a_503_or_the_stale_copy_never_500(
        host, tmp_path) -> None:
    c = client(host)
    assert c.get("/api/leaderboard").status_code == 200
    broken = create_engine(f"sqlite:///{tmp_path}/no/such/folder/x.sqlite")
    host.WebSession = sessionmaker(broken)
    app = c.app.state.visitors  # type: ignore[attr-defined]
    for e in app.cache.entries.values():
        e.fresh_until = 0.0  # expired: it must be read again
    stale = c.get("/api/leaderboard")
    assert (stale.status_code, stale.json()) == (200, [])
    # nothing cached to fall back on: 503 with Retry-After
    down = c.get("/api/games")
    assert down.status_code == 503 and down.headers["retry-after"] == "5"
    assert "database" in down.json()["detail"]
    assert c.get("/games").status_code == 503


def test_a_client_that_takes_gzip_gets_the_same_answer_in_fewer_bytes(host) -> None:
    c = client(host)
    plain = c.get("/", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert int(plain.headers["content-length"]) == len(plain.content) > 1024
    assert "Accept-Encoding" in plain.headers["vary"]
    for accept in ("gzip, deflate, br", "br;q=1, gzip;q=0.5", "*"):
        raw = c.get("/", headers={"Accept-Encoding": accept})
        assert raw.headers["content-encoding"] == "gzip", accept
        assert raw.content == plain.content  # decoded by the client: the same page
        assert int(raw.headers["content-length"]) < len(plain.content) // 2
        # another representation, another tag; either tag answers 304
        assert raw.headers["etag"] == plain.headers["etag"][:-1] + '-gz"'
    for tag in (plain.headers["etag"], raw.headers["etag"]):
        assert c.get("/", headers={"If-None-Match": tag}).status_code == 304
    refused = c.get("/", headers={"Accept-Encoding": "gzip;q=0, br"})
    assert "content-encoding" not in refused.headers and refused.content == plain.content
    # a record served from its file too; a small answer is not worth it
    finished_game(host)
    record = c.get("/api/games/s1-0/record", headers={"Accept-Encoding": "gzip"})
    assert record.json()["logs"] == {}
    small = c.get("/api/leaderboard", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers and small.json() == []


def test_an_answers_head_and_body_leave_in_one_send() -> None:
    import asyncio

    from arena.host.visitors import Corked

    class Transport:
        def __init__(self) -> None:
            self.sent: list[bytes] = []
            self.closed = False

        def write(self, data: bytes) -> None:
            self.sent.append(data)

        def is_closing(self) -> bool:
            return self.closed

        def close(self) -> None:
            self.closed = True

        def get_write_buffer_size(self) -> int:
            return 0

        def get_extra_info(self, name: str) -> str:
            return f"info:{name}"

    async def main() -> Transport:
        t = Transport()
        c = Corked(t, asyncio.get_running_loop())  # type: ignore[arg-type]
        c.write(b"HTTP/1.1 200 OK\r\n\r\n")
        c.write(b"body")
        assert t.sent == [] and c.get_write_buffer_size() == 23
        await asyncio.sleep(0)  # the loop's next turn
        assert t.sent == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
        c.write(b"last")
        c.close()  # what is written goes before the close
        assert (t.sent[-1], t.closed) == (b"last", True)
        c.write(b"late")
        await asyncio.sleep(0)
        assert t.sent[-1] == b"last"  # nothing written on a closed transport
        assert c.get_extra_info("peername") == "info:peername"
        return t

    asyncio.run(main())
