"""A visitor's table across a real restart of the host (`moon host run`, stopped by SIGTERM
or killed by SIGKILL mid-game, then started again on the same address): the game the
restart cut off is recorded as ended with its reason (voided, not left running, never
rated, not played again), and the person's page, still open in a real browser (Playwright,
the system's Chromium), says so in one line once the host is back and offers a new table
from the same seat; the table's address, opened again, says the same; its key is still
needed."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
from host_support import HostProcess, free_port, make_competition, stopped_line  # noqa: E402

pytestmark = pytest.mark.timeout(600)

TABLES = '\n[tables]\nenabled = true\nwho = "anyone"\nmax_open = 1\n'
CUT_REASON = ("the host restarted during the game: a table's game ends there (its person's "
              "seat and its bots are gone), not counted and never rated")
CUT_LINE = ("The host restarted during your game, so it ended there: it is not counted and "
            "rates no one.")


def open_table(url: str, version: int, seat: int, opponent: str) -> str:
    """Open a table through the form, as a browser does (its CSRF cookie and field): the
    table's address (``/tables/ID?k=KEY``)."""
    with httpx.Client(base_url=url, timeout=60) as c:
        form = c.get(f"/tables/new?version={version}&seat={seat}")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
        r = c.post("/tables", data={"csrf": csrf, "version": version, "seat": seat,
                                    "opponent": [opponent]})
        assert r.status_code == 303, r.text[:500]
        return r.headers["location"]


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_a_table_cut_off_by_a_restart_ends_and_says_so(tmp_path, browser, how):
    folder = make_competition(tmp_path / "comp", concurrency=2, extra=TABLES)
    address = f"127.0.0.1:{free_port()}"
    host = HostProcess(folder, None, args=("--address", address)).start()
    page = browser.new_page()
    try:
        (_, heuristic), _ = host.enter(("heuristic", "random"))
        where = open_table(host.url, heuristic["id"], 1, "bot:random")
        table_id, key = re.match(r"/tables/(table-[0-9a-f]{12})\?k=(\S+)$", where).groups()
        page.goto(host.url + where)
        # the person's first move: the game is being played, the person thinking
        page.wait_for_selector("#actions button, #board button.tile.legal", timeout=120_000)
        if how == "sigterm":
            host.stop()
            # the host's last line says what becomes of the table's game
            assert stopped_line(folder) in host.log.read_text()
            assert ("1 game(s) at tables cut off: ended at the next start (not replayed, "
                    "never rated)") in stopped_line(folder)
        else:
            host.kill9()
        with contextlib.closing(sqlite3.connect(folder / "host.sqlite")) as db:
            assert db.execute("SELECT status FROM games WHERE id = ?",
                              (table_id,)).fetchone() == ("running",)
        host.start()  # the same address: the open page finds the host again
        new_table = f"/tables/new?version={heuristic['id']}&seat=1"
        # the page still open: one line, and a new table from the same seat
        page.wait_for_selector("#over:not([hidden])", timeout=60_000)
        assert page.inner_text("#over-line") == CUT_LINE
        assert page.get_attribute("#replay", "href") == new_table
        assert page.inner_text("#replay") == "open a new table"
        assert page.is_hidden("#leave")
        # the address opened again says the same, and the link opens the form
        page.goto(host.url + where)
        assert page.inner_text("#ended-line") == CUT_LINE
        page.click("a.new-table")
        page.wait_for_selector('form.table-new input[name="seat"][value="1"]', state="attached")
        state = httpx.get(f"{host.url}/tables/{table_id}/state?k={key}", timeout=60).json()
        assert (state["over"]["line"], state["over"]["new_table"], state["closed"]) == (
            CUT_LINE, new_table, True)
        for wrong in ("", "?k=wrong"):  # still the table's own secret
            assert httpx.get(f"{host.url}/tables/{table_id}{wrong}", timeout=60
                             ).status_code == 404
            assert httpx.get(f"{host.url}/tables/{table_id}/state{wrong}", timeout=60
                             ).status_code == 404
        api = host.ok("GET", f"/api/games/{table_id}", host.admin)
    finally:
        page.close()
        host.stop()
    assert (api["kind"], api["status"]) == ("table", "voided")
    assert ("1 game(s) at tables ended (not replayed: their people are told on their "
            "table's page)") in host.log.read_text()
    with contextlib.closing(sqlite3.connect(folder / "host.sqlite")) as db:
        row = db.execute("SELECT status, void_reason, rated, dset_id FROM games WHERE id = ?",
                         (table_id,)).fetchone()
        tables = db.execute("SELECT id FROM games WHERE kind = 'table'").fetchall()
        seats = db.execute("SELECT seat, version_id, reference FROM game_seats WHERE "
                           "game_id = ? ORDER BY seat", (table_id,)).fetchall()
    assert row == ("voided", CUT_REASON, 0, None)
    assert tables == [(table_id,)]  # not played again: the person is not there
    assert seats == [(0, heuristic["id"], ""), (1, None, "human"), (2, seats[2][1], "")]
