"""A person plays `moon play human ... --web` in a real browser (Playwright, the system's
Chromium) to the end, 3 and 4 players: tiles and buttons clicked, one move by its key, an
illegal tile clicked and refused with the reason its hover shows; the record re-verifies,
and what the page showed and was served at each decision is checked against the record:
only tiles the seat may have seen, its hand as the engine has it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from table_support import decisions
from web_driver import play, shown_tiles, start

from arena.records.record import verify_record


def end(proc) -> None:
    """Stop a `moon play` still running as a user would (SIGTERM: it stops its bots),
    killed only if it has not ended 10 s later; always waited for."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize(("preset", "bots", "seed"), [
    ("moon3", ("random", "human", "heuristic"), 11),
    ("moon4", ("heuristic", "random", "human", "heuristic"), 5),
])
def test_a_person_plays_a_whole_game_in_the_browser(tmp_path, browser, preset, bots, seed):
    # the person's place among the BOTS is their seat, never seat 0 here: the record, and
    # what the page showed at each decision checked against the record, are of that seat
    me = bots.index("human")
    game = start(tmp_path, *bots, seed=seed, preset=preset)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        play(page, game)
        assert game.seen["key"] == 1 and game.seen["click tile"] and game.seen["click button"]
        assert game.seen["illegal refused"] == 1
        record_text = page.inner_text("#record")
        path = re.search(r"record: (\S+\.json)", record_text).group(1)
        page.click("#replay")
        page.wait_for_selector("#player")
        assert "Moon replay" in page.title()
        page.go_back()
        page.wait_for_selector("#done")
        page.click("#done")
        out, _ = game.proc.communicate(timeout=60)
    finally:
        page.close()
        end(game.proc)
    assert game.proc.returncode == 0, out
    assert f"record: {path}" in out
    record = json.loads(Path(path).read_text())
    assert verify_record(record) == []
    assert [s["name"] for s in record["seats"]] == list(bots)
    assert record["result"]["termination"] in ("target", "moon", "hand_limit")
    known = decisions(record, me)
    assert len(game.screens) == len(known)
    for k, (screen, now) in enumerate(zip(game.screens, known, strict=True)):
        mine = set(re.findall(r'<button[^>]*class="tile [a-z]+"[^>]*><span class="dom[^"]*" '
                              r'data-tile="(\d-\d)"', screen["state"]["board"]))
        assert mine == now.hand, k
        hidden = shown_tiles(screen) - now.allowed
        assert not hidden, (k, hidden)
        assert "back" not in re.findall(r'class="dom[^"]*" data-tile', screen["html"])


def test_a_person_who_leaves_the_page_forfeits(tmp_path, browser):
    game = start(tmp_path, "random", "human", "random", seed=2)
    page = browser.new_page()
    try:
        page.goto(game.url)
        page.wait_for_selector("#actions button, #board button.tile.legal")
        page.on("dialog", lambda d: d.accept())
        page.click("#leave")
        page.wait_for_selector("#over:not([hidden])", timeout=30_000)
        assert "seat 1 forfeited (disconnect)" in page.inner_text("#over-line")
        page.click("#done")
        out, _ = game.proc.communicate(timeout=60)
    finally:
        page.close()
        end(game.proc)
    assert game.proc.returncode == 3, out
    assert ("seat 1 (human) forfeited: disconnect: the person at seat 1 left the table "
            "during the game (left from the page)") in out


def test_the_page_needs_the_tables_key(tmp_path, browser):
    game = start(tmp_path, "human", "random", "random", seed=2)
    page = browser.new_page()
    try:
        base = game.url.split("/?k=")[0]
        r = page.request.get(f"{base}/state?since=0&k=wrong")
        assert r.status == 403
        assert "key is missing or wrong" in r.json()["error"]
        r = page.request.post(f"{base}/act?k=wrong", data={"leave": True})
        assert r.status == 403
    finally:
        page.close()
        end(game.proc)
