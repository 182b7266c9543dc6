"""A visitor plays against a bot on a real competition host (`moon host run`, two example
bots submitted and validated, rated games going on beside the table) in a real browser
(Playwright, the system's Chromium): from the leaderboard's "play" link to the form, seat
2 chosen (the version in seat 1, the opponent chosen in seat 0), then the whole game of 3
by clicking (one move by its key, one illegal
tile refused with the reason its hover shows). The record the page links re-verifies; the
game is a ``table`` game in the database, finished, never rated, in no duplicate set; and
at each of the person's decisions what the page showed and its long poll served holds
only what that seat may know (checked against the record, as for `moon play --web`)."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import sys
from pathlib import Path

import pytest
from table_support import decisions
from web_driver import Game, play, shown_tiles

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
from host_support import HostProcess, make_competition  # noqa: E402

from arena.records.record import verify_record  # noqa: E402

pytestmark = pytest.mark.timeout(600)

TABLES = '\n[tables]\nenabled = true\nwho = "anyone"\nmax_open = 1\n'


def test_a_visitor_plays_a_whole_game_against_a_bot_on_the_host(tmp_path, browser):
    folder = make_competition(tmp_path / "comp", concurrency=2, extra=TABLES)
    host = HostProcess(folder, None).start()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        host.enter(("heuristic", "random"))
        page.goto(host.url + "/")
        page.click('tr[data-bot="heuristic"] a.play-link')
        page.wait_for_selector("form.table-new")
        page.click("form.table-new .seat-choice a:text('seat 2')")
        page.wait_for_selector('form.table-new input[name="seat"][value="2"]', state="attached")
        assert page.is_disabled('#opponent-0 option[value="bot:heuristic"]')
        page.select_option("#opponent-0", "bot:random")
        page.click("form.table-new button[type=submit]")
        page.wait_for_url(re.compile(r"/tables/table-[0-9a-f]{12}\?k=\S+$"))
        table_id = re.search(r"/tables/(table-[0-9a-f]{12})", page.url).group(1)
        game = Game(None, page.url)
        play(page, game)
        assert game.seen["key"] == 1 and game.seen["click tile"] and game.seen["click button"]
        assert game.seen["illegal refused"] == 1
        link = page.get_attribute("#record a", "href")
        assert link == f"/tables/{table_id}/record?k={game.url.split('?k=')[1]}"
        record = page.request.get(host.url + link).json()
        page.click("#replay")
        page.wait_for_selector("#player")
        assert "Moon replay" in page.title()
        page.go_back()
        page.wait_for_selector("#done")
        page.click("#done")
        api = host.ok("GET", f"/api/games/{table_id}", host.admin)
    finally:
        page.close()
        host.stop()
    assert verify_record(record) == []
    assert record["match_id"] == table_id
    assert [s["name"] for s in record["seats"]] == ["random", "heuristic", "human"]
    assert record["logs"] == {}  # the bots' stderr is their owners'
    assert record["result"]["termination"] in ("target", "moon", "hand_limit")
    assert (api["kind"], api["status"], api["set"]) == ("table", "finished", None)
    assert api["scores"] == record["result"]["scores"]
    with contextlib.closing(sqlite3.connect(folder / "host.sqlite")) as db:
        row = db.execute("SELECT kind, status, rated, dset_id FROM games WHERE id = ?",
                         (table_id,)).fetchone()
        rated_games = db.execute("SELECT count(*) FROM games WHERE kind = 'rated' AND "
                                 "status = 'finished'").fetchone()[0]
    assert row == ("table", "finished", 0, None)
    assert rated_games > 0  # rated games went on beside the table
    known = decisions(record, 2)
    assert len(game.screens) == len(known)
    for k, (screen, now) in enumerate(zip(game.screens, known, strict=True)):
        mine = set(re.findall(r'<button[^>]*class="tile [a-z]+"[^>]*><span class="dom[^"]*" '
                              r'data-tile="(\d-\d)"', screen["state"]["board"]))
        assert mine == now.hand, k
        hidden = shown_tiles(screen) - now.allowed
        assert not hidden, (k, hidden)
        assert "back" not in re.findall(r'class="dom[^"]*" data-tile', screen["html"])
