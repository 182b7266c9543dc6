"""Tables take their share of a real host's game slots and no more (`moon host run`, two
example bots submitted and validated, ``[matchmaking] concurrency = 3`` and ``[tables]
max_open = 2``): with both tables open and their persons holding their turn (their pages
asking, never answering), one more table is refused, and at every sample of the database
no more than 2 table games run, no more than 3 - 2 = 1 rated game runs beside them, and
rated games keep finishing. Counted, never timed."""

from __future__ import annotations

import contextlib
import sqlite3
import time

import pytest
from host_support import HeldTable, HostProcess, make_competition, wait_for

pytestmark = pytest.mark.timeout(600)

CONCURRENCY, MAX_OPEN = 3, 2
TABLES = (f'\n[tables]\nenabled = true\nwho = "anyone"\nmax_open = {MAX_OPEN}\n'
          "per_visitor_per_hour = 0\n")
MORE_RATED = 6
"""The rated games that must finish while the tables hold their slots."""


def counts(db: sqlite3.Connection) -> dict[tuple[str, str], int]:
    return {(k, s): n for k, s, n in db.execute(
        "SELECT kind, status, count(*) FROM games GROUP BY kind, status")}


def test_open_tables_take_their_share_of_the_slots_and_rated_games_go_on(tmp_path):
    folder = make_competition(tmp_path / "comp", concurrency=CONCURRENCY, extra=TABLES)
    host = HostProcess(folder, None).start()
    tables: list[HeldTable] = []
    try:
        (_, heuristic), (_, random) = host.enter(("heuristic", "random"))
        for version, seat in ((heuristic["id"], 0), (random["id"], 2)):
            t = HeldTable(host.url, version, ["ref:reference-random"], seat=seat).hold()
            assert t.status == 303, t.refusal[:500]
            tables.append(t)
        extra = HeldTable(host.url, heuristic["id"], ["ref:reference-random"])
        assert extra.status == 429
        assert "every table is taken (2 at once, [tables] max_open" in extra.refusal
        # each person on their move: each table's game holds one of the 3 slots
        wait_for(lambda: all(t.thinking() for t in tables), 120, "both persons' moves")
        samples, most = 0, {"table": 0, "rated": 0}
        with contextlib.closing(sqlite3.connect(folder / "host.sqlite", timeout=30)) as db:
            first = counts(db).get(("rated", "finished"), 0)
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                c = counts(db)
                assert all(t.thinking() for t in tables)  # still holding their slots
                for kind in most:
                    most[kind] = max(most[kind], c.get((kind, "running"), 0))
                samples += 1
                if c.get(("rated", "finished"), 0) >= first + MORE_RATED:
                    break
                time.sleep(0.2)
            done = counts(db).get(("rated", "finished"), 0) - first
        assert most == {"table": MAX_OPEN, "rated": CONCURRENCY - MAX_OPEN}, most
        assert samples > 5, samples
        assert done >= MORE_RATED, done
        for t in tables:
            t.leave()
        with contextlib.closing(sqlite3.connect(folder / "host.sqlite", timeout=30)) as db:
            wait_for(lambda: counts(db).get(("table", "finished"), 0) == MAX_OPEN, 120,
                     "the tables' games to end")
            rows = db.execute("SELECT termination, rated, dset_id FROM games WHERE kind = "
                              "'table'").fetchall()
    finally:
        for t in tables:
            t.leave()
        host.stop()
    assert rows == [("forfeit", 0, None)] * MAX_OPEN  # each person left: never rated
