"""The host's tables in process (FastAPI's TestClient over the real app, a real
competition folder and its SQLite database): who may sit, the cap on open tables and the
hourly limit per address (429 with Retry-After, values worked out by hand from the
settings), the settings' own check, the table's key, and one whole game at a table played
through the page's requests: recorded, never rated, its record and replay at the end.

In the limits' tests the app's lifespan is not started (the client is not entered) and a
table's game is not played (``Tables.start`` is replaced): only what is decided when a
table is opened is under test."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from host_support import add_active_versions, make_competition

from arena.errors import ConfigError
from arena.host.app import create_app
from arena.host.models import Bot, Game, Participant, Version
from arena.host.run import open_host
from arena.host.security import digest
from arena.host.settings import load_settings
from arena.records.record import verify_record


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def tables_toml(**keys: Any) -> str:
    lines = "\n".join(f"{k} = {v!r}".replace("'", '"').replace("True", "true")
                      for k, v in keys.items())
    return f"\n[tables]\nenabled = true\n{lines}\n"


@pytest.fixture
def made(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Any, ...]]:
    concurrency, keys = request.param
    folder = make_competition(tmp_path / "comp", concurrency=concurrency,
                              extra=tables_toml(**keys))
    host, _ = open_host(folder, None)
    clock = Clock()
    host.tables.clock = clock
    host.tables.window._clock = clock
    started: list[str] = []
    host.tables.start = lambda t, req: started.append(t.id)
    ids = add_active_versions(host, "ab", code="random")
    try:
        yield TestClient(create_app(host)), host, ids, clock, started
    finally:
        host.close()


def open_table(client: TestClient, version: int, opponents: list[str],
               headers: dict[str, str] | None = None, seat: int | None = None) -> Any:
    """POST the form of ``/tables/new`` (``seat``: the person's, left out when None)."""
    form = client.get(f"/tables/new?version={version}", headers=headers or {})
    m = re.search(r'name="csrf" value="([^"]+)"', form.text)
    csrf = m.group(1) if m else client.cookies.get("moon_csrf", "")
    data: dict[str, Any] = {"csrf": csrf, "version": version, "opponent": opponents}
    if seat is not None:
        data["seat"] = seat
    return client.post("/tables", data=data, headers=headers or {}, follow_redirects=False)


def message(r: Any) -> str:
    m = re.search(r'<p class="message">(.*?)</p>', r.text, re.S)
    assert m is not None, r.text[:500]
    return m.group(1).replace("&#39;", "'").replace("&quot;", '"')


@pytest.mark.parametrize("made", [(2, {"who": "anyone", "max_open": 1})], indirect=True)
def test_open_tables_are_capped_below_the_slots(made) -> None:
    client, host, ids, _, started = made
    first = open_table(client, ids["a"], ["ref:reference-random"])
    assert first.status_code == 303
    table_id = re.match(r"/tables/(table-[0-9a-f]{12})\?k=\S+$",
                        first.headers["location"]).group(1)
    assert started == [table_id]
    # max_open = 1 of concurrency = 2: the one table takes one slot, rated games keep 1
    second = open_table(client, ids["b"], ["bot:a"])
    assert second.status_code == 429
    assert second.headers["Retry-After"] == "60"
    assert message(second) == ("every table is taken (1 at once, [tables] max_open, so "
                               "that rated games keep their pace): try again in a minute")
    assert started == [table_id]
    with host.Session() as s:
        g = s.get(Game, table_id)
        assert (g.kind, g.status, g.rated, g.dset_id) == ("table", "running", False, None)
        assert [(x.seat, x.version_id, x.reference, x.side) for x in g.seats] == [
            (0, None, "human", 0), (1, ids["a"], "", 1), (2, None, "reference-random", 2)]
        assert s.query(Game).count() == 1  # the refused one wrote nothing


@pytest.mark.parametrize("made", [(4, {"who": "anyone", "max_open": 3,
                                       "per_visitor_per_hour": 2})], indirect=True)
def test_an_address_opens_per_visitor_per_hour_tables(made) -> None:
    client, _, ids, clock, started = made
    assert open_table(client, ids["a"], ["bot:b"]).status_code == 303  # at 1000 s
    clock.now = 1600.0
    assert open_table(client, ids["b"], ["bot:a"]).status_code == 303
    clock.now = 2200.0
    third = open_table(client, ids["a"], ["bot:b"])
    # the hour's first table (1000 s) leaves the window at 1000 + 3600 = 4600: 2400 s on
    assert third.status_code == 429
    assert third.headers["Retry-After"] == "2400"
    assert message(third) == ("you opened 2 tables in the last hour, the most this "
                              "competition allows ([tables] per_visitor_per_hour = 2): try "
                              "again in 40 minutes")
    clock.now = 4600.0  # now the first has left the window: 1 of 2, and 2 of 3 tables
    assert open_table(client, ids["a"], ["bot:b"]).status_code == 303
    fourth = open_table(client, ids["b"], ["bot:a"])
    # the window holds 1600 and 4600: the older leaves at 5200, 600 s on (the cap, 3 of
    # 3 tables now, would refuse it too: the hour's limit is said first)
    assert (fourth.status_code, fourth.headers["Retry-After"]) == (429, "600")
    assert len(started) == 3


@pytest.mark.parametrize("made", [(3, {"max_open": 2})], indirect=True)
def test_only_participants_sit_unless_anyone_may(made) -> None:
    client, host, ids, _, started = made
    r = open_table(client, ids["a"], ["bot:b"])
    assert r.status_code == 403
    assert message(r) == ("only participants may sit at this competition's tables: sign in "
                          "first (with your API token)")
    with host.Session.begin() as s:
        s.add(Participant(name="zoe", token_hash=digest("moon_zoe")))
    form = client.get("/signin")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
    assert client.post("/signin", data={"token": "moon_zoe", "csrf": csrf},
                       follow_redirects=False).status_code == 303
    page = client.get(f"/tables/new?version={ids['a']}")
    # the form offers every active bot but the one played against, and the reference bots
    assert re.findall(r'<option value="([^"]+)"( disabled)?', page.text) == [
        ("bot:a", " disabled"), ("bot:b", ""), ("ref:reference-random", "")]
    assert open_table(client, ids["a"], ["bot:b"]).status_code == 303
    assert len(started) == 1


@pytest.mark.parametrize("made", [(4, {"who": "anyone", "max_open": 3})], indirect=True)
def test_a_person_chooses_their_seat(made) -> None:
    client, host, ids, _, started = made
    # the form of seat 2 (moon3: seats 0, 1, 2): a link to each other seat's form, the
    # version in seat 1, the one opponent to choose in seat 0
    form = client.get(f"/tables/new?version={ids['a']}&seat=2")
    assert form.status_code == 200
    assert re.findall(r'href="/tables/new\?version=(\d+)&amp;seat=(\d)"', form.text) == [
        (str(ids["a"]), "0"), (str(ids["a"]), "1")]
    assert '<b aria-current="true">seat 2</b>' in form.text
    assert re.findall(r'<select id="opponent-(\d)"', form.text) == ["0"]
    assert re.search(r'name="seat" value="2"', form.text)
    # seat 1: the version takes seat 0, the opponent seat 2
    assert re.findall(r'<select id="opponent-(\d)"',
                      client.get(f"/tables/new?version={ids['a']}&seat=1").text) == ["2"]
    rows, names = {}, {}
    for seat, opponent in ((2, "bot:b"), (1, "ref:reference-random"), (0, "bot:b")):
        r = open_table(client, ids["a"], [opponent], seat=seat)
        assert r.status_code == 303, message(r)
        table_id = re.match(r"/tables/([^?]+)\?", r.headers["location"]).group(1)
        with host.Session() as s:
            rows[seat] = [(x.seat, x.version_id, x.reference, x.side)
                          for x in s.get(Game, table_id).seats]
        names[seat] = host.tables.tables[table_id].names
    assert rows[2] == [(0, ids["b"], "", 0), (1, ids["a"], "", 1), (2, None, "human", 2)]
    assert rows[1] == [(0, ids["a"], "", 0), (1, None, "human", 1),
                       (2, None, "reference-random", 2)]
    assert rows[0] == [(0, None, "human", 0), (1, ids["a"], "", 1), (2, ids["b"], "", 2)]
    assert names == {2: ["b", "a", "human"], 1: ["a", "human", "reference-random"],
                     0: ["human", "a", "b"]}
    assert len(started) == 3


@pytest.mark.parametrize("made", [(3, {"who": "anyone", "max_open": 2})], indirect=True)
def test_a_seat_the_game_has_not_is_refused(made) -> None:
    client, host, ids, _, started = made
    line = "seat 3 is not a seat of this competition's games: choose one of 0 to 2"
    r = client.get(f"/tables/new?version={ids['a']}&seat=3")
    assert (r.status_code, message(r)) == (422, line)
    r = open_table(client, ids["a"], ["bot:b"], seat=3)
    assert (r.status_code, message(r)) == (422, line)
    assert started == []
    with host.Session() as s:
        assert s.query(Game).count() == 0


@pytest.mark.parametrize("made", [(3, {"who": "anyone", "max_open": 2})], indirect=True)
def test_bad_choices_and_keys_are_refused_in_one_line(made) -> None:
    client, host, ids, _, started = made
    r = open_table(client, ids["a"], [])
    assert (r.status_code, message(r)) == (
        422, "choose 1 opponent(s) for 3 players (you, a, and the others), not 0")
    r = open_table(client, ids["a"], ["bot:nobody"])
    assert (r.status_code, message(r)) == (
        422, "opponent 'bot:nobody' is neither an active bot (bot:NAME) nor a reference "
        "bot (ref:NAME)")
    with host.Session.begin() as s:
        s.get(Version, ids["b"]).status = "retired"
    r = open_table(client, ids["b"], ["bot:a"])
    assert (r.status_code, message(r)) == (
        404, f"version {ids['b']} is not an active version: choose a bot on the leaderboard")
    r = client.post("/tables", data={"version": ids["a"], "opponent": ["bot:b"]},
                    follow_redirects=False)
    assert r.status_code == 403  # no CSRF field
    assert started == []
    ok = open_table(client, ids["a"], ["ref:reference-random"])
    table_id, key = re.match(r"/tables/([^?]+)\?k=(\S+)$", ok.headers["location"]).groups()
    for path in ("", "/state", "/replay", "/record"):
        assert client.get(f"/tables/{table_id}{path}?k=wrong").status_code == 404
        assert client.get(f"/tables/{table_id}{path}").status_code == 404
    assert client.post(f"/tables/{table_id}/act?k=wrong", json={"leave": True}
                       ).status_code == 404
    page = client.get(f"/tables/{table_id}?k={key}")
    assert page.status_code == 200
    assert f'data-base="/tables/{table_id}"' in page.text
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert client.get(f"/tables/{table_id}/replay?k={key}").status_code == 409


@pytest.mark.parametrize("made", [(3, {"who": "anyone", "max_open": 2})], indirect=True)
def test_a_disabled_participants_bots_sit_at_no_table(made) -> None:
    client, host, ids, _, started = made
    with host.Session.begin() as s:
        q = Participant(name="q", token_hash=digest("moon_q"))
        s.add(q)
        s.flush()
        z = Bot(owner_id=q.id, name="z")
        s.add(z)
        s.flush()
        zv = Version(bot_id=z.id, number=1, hash="z" * 64, archive_sha256="0" * 64,
                     status="active")
        s.add(zv)
        s.flush()
        z.active_version_id = zv.id
        shutil.copytree(host.folder / "reference" / "random", host.store / "versions" / zv.hash)
        # p is disabled; their versions stay active (as a build that turned active since)
        s.query(Participant).filter_by(name="p").one().disabled = True
    r = client.get(f"/tables/new?version={ids['a']}")
    assert (r.status_code, message(r)) == (
        404, f"version {ids['a']} is not an active version: choose a bot on the leaderboard")
    r = open_table(client, ids["a"], ["ref:reference-random"])
    assert (r.status_code, message(r)) == (
        404, f"version {ids['a']} is not an active version: choose a bot on the leaderboard")
    r = open_table(client, zv.id, ["bot:a"])
    assert (r.status_code, message(r)) == (
        422, "opponent 'bot:a' is neither an active bot (bot:NAME) nor a reference bot "
        "(ref:NAME)")
    with host.Session() as s:
        assert host.tables.choices(s) == [("bot:z", "z"), ("ref:reference-random",
                                                           "reference-random (reference bot)")]
        assert s.query(Game).count() == 0
    assert started == []


def test_tables_must_leave_rated_games_a_slot(tmp_path: Path) -> None:
    folder = make_competition(tmp_path / "comp", concurrency=2,
                              extra=tables_toml(max_open=2))
    with pytest.raises(ConfigError) as e:
        load_settings(folder)
    assert str(e.value) == (f"{folder / 'competition.toml'}: [tables] max_open = 2 must be "
                            "below [matchmaking] concurrency = 2: each open table takes one "
                            "of the games' slots, and rated games must keep at least one")
    off = make_competition(tmp_path / "off", concurrency=2)
    assert load_settings(off).tables.enabled is False


def test_tables_are_off_unless_enabled(tmp_path: Path) -> None:
    host, _ = open_host(make_competition(tmp_path / "comp"), None)
    try:
        ids = add_active_versions(host, "ab", code="random")
        client = TestClient(create_app(host))
        r = client.get(f"/tables/new?version={ids['a']}")
        assert (r.status_code, message(r)) == (404, "this competition has no tables: its "
                                               "organiser has not opened them ([tables] "
                                               "enabled)")
        assert "/tables/new" not in client.get("/").text
    finally:
        host.close()


@pytest.mark.slow
def test_a_whole_game_at_a_table_is_recorded_and_never_rated(tmp_path: Path) -> None:
    folder = make_competition(tmp_path / "comp", concurrency=2,
                              extra=tables_toml(who="anyone", max_open=1))
    host, _ = open_host(folder, None)
    try:
        ids = add_active_versions(host, "ab", code="random")
        with TestClient(create_app(host)) as client:
            # no rated game while the table plays: its bots are the only active versions
            host.matchmaker.gate = lambda s: False
            assert 'href="/tables/new?version=' in client.get("/").text
            r = open_table(client, ids["a"], ["bot:b"], seat=2)  # a in 1, b in 0
            table_id, key = re.match(r"/tables/([^?]+)\?k=(\S+)$",
                                     r.headers["location"]).groups()
            since, over = 0, None
            for _ in range(2000):
                st = client.get(f"/tables/{table_id}/state?k={key}&since={since}").json()
                since = st["version"]
                if st["over"]:
                    over = st["over"]
                    break
                if st["turn"]:  # the last legal action, as a person might pick it
                    a = st["turn"]["actions"][-1]["action"]
                    client.post(f"/tables/{table_id}/act?k={key}", json={"action": a})
            assert over is not None
            record = client.get(f"/tables/{table_id}/record?k={key}").json()
            replay = client.get(f"/tables/{table_id}/replay?k={key}")
        assert verify_record(record) == []
        assert record["logs"] == {}  # the bots' stderr is their owners'
        assert [s["name"] for s in record["seats"]] == ["b", "a", "human"]
        assert replay.status_code == 200 and "Moon replay" in replay.text
        with host.Session() as s:
            g = s.get(Game, table_id)
            assert (g.kind, g.status, g.rated, g.dset_id) == ("table", "finished", False,
                                                              None)
            assert g.scores == record["result"]["scores"]
            assert all(s.get(Version, v).games == 0 for v in ids.values())
    finally:
        host.close()


@pytest.mark.slow
def test_a_person_who_leaves_a_table_forfeits(tmp_path: Path) -> None:
    folder = make_competition(tmp_path / "comp", concurrency=2,
                              extra=tables_toml(who="anyone", max_open=1))
    host, _ = open_host(folder, None)
    try:
        ids = add_active_versions(host, "ab", code="random")
        with TestClient(create_app(host)) as client:
            host.matchmaker.gate = lambda s: False
            r = open_table(client, ids["a"], ["bot:b"], seat=1)  # a in 0, b in 2
            table_id, key = re.match(r"/tables/([^?]+)\?k=(\S+)$",
                                     r.headers["location"]).groups()
            since, over, left = 0, None, False
            for _ in range(500):
                st = client.get(f"/tables/{table_id}/state?k={key}&since={since}").json()
                since = st["version"]
                if st["over"]:
                    over = st["over"]
                    break
                if st["turn"] and not left:
                    client.post(f"/tables/{table_id}/act?k={key}", json={"leave": True})
                    left = True
            assert over is not None and over["line"].startswith("seat 1 forfeited "
                                                                "(disconnect)")
            # once done, the page is told it is closed; then the table is gone
            assert client.post(f"/tables/{table_id}/done?k={key}").status_code == 200
            assert client.get(f"/tables/{table_id}/state?k={key}").status_code == 404
        with host.Session() as s:
            g = s.get(Game, table_id)
            assert (g.status, g.termination, g.rated) == ("finished", "forfeit", False)
            assert [(f.seat, f.reason, f.detail, f.forfeit) for f in g.faults] == [
                (1, "disconnect", "the person at seat 1 left the table during the game "
                 "(left from the page)", True)]
    finally:
        host.close()


@pytest.mark.slow
def test_rated_games_keep_the_slots_a_table_leaves(tmp_path: Path) -> None:
    # concurrency = 2, max_open = 1: while the table plays (its person thinking), rated
    # games run one at a time in the one slot left, and still finish
    folder = make_competition(tmp_path / "comp", concurrency=2,
                              extra=tables_toml(who="anyone", max_open=1))
    host, _ = open_host(folder, None)
    try:
        ids = add_active_versions(host, "ab", code="random")
        with TestClient(create_app(host)) as client:
            r = open_table(client, ids["a"], ["bot:b"])
            table_id, key = re.match(r"/tables/([^?]+)\?k=(\S+)$",
                                     r.headers["location"]).groups()
            since = 0
            for _ in range(100):  # to the person's first turn: the table has its slot
                st = client.get(f"/tables/{table_id}/state?k={key}&since={since}").json()
                since = st["version"]
                if st["turn"]:
                    break
            assert st["turn"]
            with host.Session() as s:
                done_before = s.query(Game).filter_by(kind="rated", status="finished").count()
            most, done = 0, done_before
            for _ in range(200):
                with host.Session() as s:
                    running = s.query(Game).filter_by(kind="rated", status="running").count()
                    done = s.query(Game).filter_by(kind="rated", status="finished").count()
                most = max(most, running, len(host.matchmaker.running))
                if done >= done_before + 3:
                    break
                client.get(f"/tables/{table_id}/state?k={key}&since={since}")  # ~3 s
            assert most == 1
            assert done >= done_before + 3
            with host.Session() as s:
                assert s.get(Game, table_id).status == "running"
    finally:
        host.close()


def test_a_table_cut_off_by_a_restart_is_ended_and_its_page_says_so(tmp_path: Path) -> None:
    from arena.cli.host import stopped_line

    folder = make_competition(tmp_path / "comp", concurrency=3,
                              extra=tables_toml(who="anyone", max_open=2))
    host, _ = open_host(folder, None)
    try:
        host.tables.start = lambda t, req: None  # its game "plays" until the restart
        ids = add_active_versions(host, "ab", code="random")
        r = open_table(TestClient(create_app(host)), ids["a"], ["bot:b"], seat=2)
        table_id, key = re.match(r"/tables/([^?]+)\?k=(\S+)$", r.headers["location"]).groups()
        assert stopped_line(host) == (
            "stopped: 1 game(s) at tables cut off: ended at the next start (not replayed, "
            "never rated); every finished game and submission is kept")
    finally:
        host.close()
    host, recovered = open_host(folder, None)  # the restart: the table is gone from memory
    try:
        assert recovered == {"voided": 1, "rebuilt": 0, "tables": 1}
        with host.Session() as s:
            g = s.get(Game, table_id)
            assert (g.status, g.rated, g.void_reason) == (
                "voided", False, "the host restarted during the game: a table's game ends "
                "there (its person's seat and its bots are gone), not counted and never rated")
            assert s.query(Game).count() == 1  # not played again
        client = TestClient(create_app(host))
        line = ("The host restarted during your game, so it ended there: it is not counted "
                "and rates no one.")
        page = client.get(f"/tables/{table_id}?k={key}")
        assert page.status_code == 200
        assert re.search(r'<p class="message" id="ended-line">(.*?)</p>', page.text).group(1) \
            == line
        assert f'href="/tables/new?version={ids["a"]}&amp;seat=2"' in page.text
        st = client.get(f"/tables/{table_id}/state?k={key}").json()
        assert st["over"] == {"line": line, "record": "", "record_url": "",
                              "new_table": f"/tables/new?version={ids['a']}&seat=2"}
        assert st["closed"] is True
        for path in ("", "/state", "/replay", "/record"):
            assert client.get(f"/tables/{table_id}{path}?k=wrong").status_code == 404
            assert client.get(f"/tables/{table_id}{path}").status_code == 404
        assert client.get(f"/tables/table-000000000000?k={key}").status_code == 404
    finally:
        host.close()
