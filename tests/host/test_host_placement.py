"""A placement series against a real `moon host run` with real bots (on SQLite: a flow;
the migration's count on SQLite and PostgreSQL): a version is provisional (the
leaderboard, the API, its page) until it has played `[matchmaking] placement_sets`
duplicate sets whole, counted here from the public games list; and a new version starts
every new set until then."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

PLACEMENT = 2


def whole_sets(games: list[dict]) -> dict[int, int]:
    """Sets each version has played whole, from a games list: a set with a finished game
    and none queued or running."""
    by_set: dict[int, list[dict]] = {}
    for g in games:
        by_set.setdefault(g["set"], []).append(g)
    out: dict[int, int] = {}
    for gs in by_set.values():
        if any(g["status"] in ("queued", "running") for g in gs) or \
                not any(g["status"] == "finished" for g in gs):
            continue
        for v in {x["version_id"] for g in gs for x in g["seats"]}:
            out[v] = out.get(v, 0) + 1
    return out


@pytest.fixture
def host(tmp_path: Path, database: str | None):
    # one game at a time: a set is made once the one before has been claimed whole
    folder = make_competition(tmp_path / "comp", concurrency=1)
    toml = folder / "competition.toml"
    assert "placement_sets = 2" in toml.read_text()
    h = HostProcess(folder, database).start()
    try:
        yield h
    finally:
        h.stop()


@pytest.mark.one_database  # a flow: its queries run on PostgreSQL in process (conftest.py)
def test_a_new_version_is_provisional_until_its_placement_sets(host: HostProcess) -> None:
    def games() -> list[dict]:
        return host.ok("GET", "/api/games", params={"limit": 500})["games"]

    def board_between() -> tuple[dict[int, int], list[dict], dict[int, int]]:
        # sets only grow: the leaderboard's lie between two counts taken around it
        before = whole_sets(games())
        board = host.ok("GET", "/api/leaderboard")
        return before, board, whole_sets(games())

    for who, bot in (("alice", "heuristic"), ("bob", "random"), ("carol", "weak")):
        token = host.register(who)
        v = host.submit(token, tar_folder(EXAMPLES / bot)).json()
        assert host.wait_version(token, v["id"])["status"] == "active"
    wait_for(lambda: all(r["sets"] >= PLACEMENT for r in host.ok("GET", "/api/leaderboard")),
             240, "every version's placement sets")
    before, board, after = board_between()
    for r in board:
        assert before.get(r["version_id"], 0) <= r["sets"] <= after[r["version_id"]]
        assert r["provisional"] is False

    # a new version: provisional, starts the next sets, and is so no more after two
    dave = host.register("dave")
    v = host.submit(dave, tar_folder(EXAMPLES / "weak", rename="weak2")).json()
    assert host.wait_version(dave, v["id"])["status"] == "active"
    last_set = max(g["set"] for g in games())  # made before it was seen active
    seen_page = False
    for _ in range(100):
        api = host.ok("GET", f"/api/versions/{v['id']}")
        page = host.call("GET", f"/versions/{v['id']}").text
        again = host.ok("GET", f"/api/versions/{v['id']}")
        if not again["provisional"]:
            break
        assert api["provisional"] and api["sets"] < PLACEMENT
        if api["sets"] == again["sets"]:
            assert (f"Provisional: it has played {api['sets']} of its {PLACEMENT} "
                    "placement sets") in page
            assert "provisional" in host.call("GET", "/").text
            seen_page = True
            break
    assert seen_page, "the new version's page was never seen while it was provisional"
    before, board, after = board_between()
    row = next(r for r in board if r["version_id"] == v["id"])
    assert before.get(v["id"], 0) <= row["sets"] <= after.get(v["id"], 0)
    assert row["provisional"] == (row["sets"] < PLACEMENT)

    wait_for(lambda: not host.ok("GET", f"/api/versions/{v['id']}")["provisional"], 240,
             "the new version's placement sets")
    assert host.ok("GET", f"/api/versions/{v['id']}")["sets"] >= PLACEMENT
    assert "Provisional" not in host.call("GET", f"/versions/{v['id']}").text
    # every set made after it joined, until it had played two whole, has it in it: the
    # first two new sets (the second is made before the first is over)
    new_sets: dict[int, set[int]] = {}
    for g in games():
        if g["set"] > last_set:
            new_sets.setdefault(g["set"], set()).update(
                x["version_id"] for x in g["seats"])
    first_two = sorted(new_sets)[:PLACEMENT]
    assert len(first_two) == PLACEMENT
    assert all(v["id"] in new_sets[k] for k in first_two), new_sets


def test_the_migration_counts_the_sets_already_played(tmp_path: Path,
                                                      database: str | None) -> None:
    # a database from before `versions.sets`: version 1 played set 1 whole and half of
    # set 2 (its other game still queued), version 2 set 1 only, version 3 nothing
    import datetime as dt

    from sqlalchemy import text
    from test_host_names import migrate_to

    from arena.host.db import database_url, make_engine, migrate

    folder = make_competition(tmp_path / "comp")
    url = database_url(database, folder)
    migrate_to(url, "0006")
    now = dt.datetime.now(dt.UTC)
    engine = make_engine(url)
    games = [("s1-0", 1, "finished", (1, 2, 2)), ("s1-1", 1, "finished", (2, 1, 2)),
             ("s2-0", 2, "finished", (1, 3, 3)), ("s2-1", 2, "queued", (3, 1, 3))]
    with engine.begin() as c:
        c.execute(text("INSERT INTO participants (id, name, token_hash, is_admin, "
                       "created_at) VALUES (1, 'p', 't', false, :d)"), {"d": now})
        for i in (1, 2, 3):
            c.execute(text("INSERT INTO bots (id, owner_id, name, created_at) VALUES "
                           "(:i, 1, :n, :d)"), {"i": i, "n": f"b{i}", "d": now})
            c.execute(text(
                "INSERT INTO versions (id, bot_id, number, hash, archive_sha256, status, "
                "reason, created_at, games, forfeits_in_row, mu, sigma) VALUES (:i, :i, 1, "
                ":h, 'x', 'active', '', :d, 0, 0, 25, 8)"), {"i": i, "h": f"h{i}", "d": now})
        for k in (1, 2):
            c.execute(text("INSERT INTO dsets (id, seed, created_at) VALUES (:k, 7, :d)"),
                      {"k": k, "d": now})
        for gid, k, status, seats in games:
            c.execute(text(
                "INSERT INTO games (id, kind, dset_id, seating, attempt, seed, status, "
                "void_reason, rated, created_at) VALUES (:g, 'rated', :k, 0, 0, 7, :s, '', "
                "false, :d)"), {"g": gid, "k": k, "s": status, "d": now})
            for seat, v in enumerate(seats):
                c.execute(text("INSERT INTO game_seats (game_id, seat, version_id, "
                               "reference, side) VALUES (:g, :s, :v, '', :s)"),
                          {"g": gid, "s": seat, "v": v})
    migrate(engine)
    with engine.connect() as c:
        got = dict(c.execute(text("SELECT id, sets FROM versions ORDER BY id")).all())
    engine.dispose()
    assert got == {1: 1, 2: 1, 3: 0}
