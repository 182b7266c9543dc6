"""Names that differ only in case are one name, held by the database itself (a unique index
on lower(name), migration 0002): registrations and first submissions sent at the same
instant under one name in different cases make exactly one participant or bot, on SQLite
and on PostgreSQL; a database that already holds such a pair is not migrated, and the
message names the pair."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from click.testing import CliRunner
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder
from sqlalchemy import text

from arena.cli import main
from arena.errors import ConfigError
from arena.host.db import MIGRATIONS, database_url, make_engine, migrate

CASES = ["Racer", "racer", "RACER", "rAcer", "raCer", "racEr", "raceR", "RAcer"]


def test_one_name_in_any_case_even_sent_at_once(tmp_path: Path, database: str | None) -> None:
    folder = make_competition(tmp_path / "comp", concurrency=1)
    h = HostProcess(folder, database).start()
    try:
        for attempt in range(3):
            names = [f"{n}{attempt}" for n in CASES]
            invites = [h.ok("POST", "/api/invites", h.admin)["code"] for _ in names]

            def register(pair: tuple[str, str]) -> int:
                return h.call("POST", "/api/register",
                              json={"name": pair[0], "invite": pair[1]}).status_code
            with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
                codes = sorted(pool.map(register, zip(names, invites, strict=True)))
            assert codes == [201] + [409] * (len(names) - 1), codes
        # bots: participants each submitting a first version under one name in another case
        tokens = [h.register(f"owner{i}") for i in range(len(CASES))]
        for attempt in range(2):
            archives = [tar_folder(EXAMPLES / "random", rename=f"{n}bot{attempt}")
                        for n in CASES]

            def submit(pair: tuple[str, bytes]) -> int:
                return h.submit(*pair).status_code
            with concurrent.futures.ThreadPoolExecutor(len(CASES)) as pool:
                codes = sorted(pool.map(submit, zip(tokens, archives, strict=True)))
            assert codes == [201] + [409] * (len(CASES) - 1), codes
        bots = [b["name"].lower() for b in h.ok("GET", "/api/bots")]
        assert sorted(b for b in bots if "bot" in b) == ["racerbot0", "racerbot1"]
    finally:
        h.stop()


def migrate_to(url: str, revision: str) -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with make_engine(url).begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)


@pytest.mark.parametrize("table", ["participants", "bots"])
def test_a_database_holding_a_pair_is_not_migrated(tmp_path: Path, database: str | None,
                                                   table: str) -> None:
    folder = make_competition(tmp_path / "comp")
    url = database_url(database, folder)
    migrate_to(url, "0001")  # a database of a host from before the index
    now = dt.datetime.now(dt.UTC)
    engine = make_engine(url)
    with engine.begin() as c:
        for i, name in enumerate(["Alice", "alice", "Bob", "ALICE", "carol"], 1):
            c.execute(text("INSERT INTO participants (id, name, token_hash, is_admin, "
                           "created_at) VALUES (:i, :n, :t, false, :d)"),
                      {"i": i, "n": name if table == "participants" else f"p{i}",
                       "t": f"t{i}", "d": now})
            if table == "bots":
                c.execute(text("INSERT INTO bots (id, owner_id, name, created_at) "
                               "VALUES (:i, :i, :n, :d)"), {"i": i, "n": name, "d": now})
    with pytest.raises(ConfigError) as e:
        migrate(engine)
    msg = str(e.value)
    assert "\n" not in msg
    assert "'ALICE' and 'Alice' and 'alice'" in msg and "Bob" not in msg, msg
    assert "differ only in case" in msg and "rename" in msg, msg
    # `moon host run` says it in one line and stops; nothing was dropped or changed
    argv = ["host", "run", str(folder)] + (["--database", database] if database else [])
    r = CliRunner().invoke(main, argv)
    assert r.exit_code != 0 and "'ALICE' and 'Alice' and 'alice'" in r.output, r.output
    assert "Traceback" not in r.output
    with engine.connect() as c:
        names = sorted(c.execute(text(f"SELECT name FROM {table}")).scalars())
        assert names == sorted(["Alice", "alice", "Bob", "ALICE", "carol"])
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0001"
    # renamed by the organiser, the database migrates and holds to the rule from then on
    with engine.begin() as c:
        c.execute(text(f"UPDATE {table} SET name = 'alice2' WHERE name = 'alice'"))
        c.execute(text(f"UPDATE {table} SET name = 'alice3' WHERE name = 'ALICE'"))
    migrate(engine)
    with pytest.raises(Exception, match="(?i)unique"), engine.begin() as c:
        c.execute(text(f"UPDATE {table} SET name = 'BOB' WHERE name = 'carol'"))
