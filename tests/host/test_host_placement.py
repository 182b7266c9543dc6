"""The placement series' migration: `versions.sets` counted from the sets already played,
on SQLite and PostgreSQL. (A version provisional until its placement series, on the
leaderboard, the API and its page, and one joining later starting the next sets, are
checked with real bots in the flow on both databases, tests/host/test_host_final.py.)"""

from __future__ import annotations

from pathlib import Path

from host_support import make_competition


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
