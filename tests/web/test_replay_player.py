"""The replay player in a real browser, on `moon replay html`'s page of a real game: it
opens on the player, with the game's details in words below it, and no step shows what has
not happened yet (the bidder and the contract before the auction's end, which tiles are
trumps before they are named)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.records.record import GameRecord, load_record
from arena.web.replay import render_html

ROOT = Path(__file__).resolve().parents[2]
TRUMP_BG = "rgb(255, 241, 193)"
"""base.css's background of a trump tile (#fff1c1)."""


@pytest.fixture(scope="module", params=["moon3", "moon4"])
def record_path(request, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp(request.param)
    bots = ["heuristic", "random", "heuristic", "random"][: 4 if request.param == "moon4" else 3]
    subprocess.run([sys.executable, "-m", "arena.cli", "play", "--preset", request.param,
                    "--seed", "11", "--records", str(out), *bots], check=True,
                   capture_output=True, cwd=ROOT, timeout=300)
    [path] = out.glob("*.json")
    return path


def test_the_player_first_and_nothing_before_it_happens(browser, record_path: Path,
                                                        tmp_path: Path) -> None:
    rec = load_record(record_path)
    # the first hand with a contract and named trumps, worked out from the record
    i, hand = next((i, h) for i, h in enumerate(rec["hands"])
                   if h["bidder"] is not None and h["trump"] not in (None, "none"))
    page_file = tmp_path / "replay.html"
    page_file.write_text(render_html(GameRecord.from_dict(rec)), encoding="utf-8")
    page = browser.new_page()
    page.goto(page_file.as_uri())
    # the player comes before the details, and they read as words, not a Python repr
    order = page.eval_on_selector_all("#player, dl.meta", "els => els.map(e => e.id || 'meta')")
    assert order == ["player", "meta"]
    details = page.inner_text("dl.meta")
    players = len(rec["seats"])
    assert f"Moon for {players} players" in details
    assert f"dealt from seed {rec['seed']}" in details
    assert "{" not in details and "=" not in details
    # when it was played, in UTC as people write it (the record has ISO 8601)
    assert re.search(r"played\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC to ", details), details

    sec = f"section.hand[data-hand='{i}']"
    first = int(page.get_attribute(sec, "data-first"))
    # steps of the hand, counted from the record: the deal, each bid, then the discard and
    # the trump choice in the ruleset's order
    auction_end = first + len(hand["bids"])
    trump_first = rec["ruleset"].get("trump_before_widow", False)
    has_discard = hand["discard"] is not None
    trump_step = auction_end + 1 + (0 if trump_first or not has_discard else 1)

    def go(step: int) -> None:
        page.eval_on_selector(".timeline", "(el, v) => { el.value = v; "
                              "el.dispatchEvent(new Event('input')); }", step)

    def shown(selector: str) -> bool:
        return page.is_visible(f"{sec} {selector}")

    def trump_coloured() -> list[str]:
        return page.eval_on_selector_all(
            f"{sec} .held .dom:not(.gone)",
            "ds => ds.filter(d => getComputedStyle(d).backgroundColor === "
            f"'{TRUMP_BG}').map(d => d.dataset.tile)")

    def trump(tile: str) -> bool:  # the rules' "Trumps": a suit's tiles, or the doubles
        a, b = tile.split("-")
        return a == b if hand["trump"] == "doubles" else hand["trump"] in (a, b)

    # what is held once trumps are named: the deal, with the widow in and the discard out
    # when the widow is taken first
    held = [t for s in hand["dealt"] for t in s]
    if not trump_first and has_discard:
        held = [t for t in held + hand["widow"] if t != hand["discard"]]
    for step in (first, auction_end - 1):  # the deal, the auction before its last bid
        go(step)
        assert not shown(".badge.bidder") and not shown("p.contract"), step
        assert trump_coloured() == [], step
    go(auction_end)  # the last bid: the bidder and the contract are known
    assert shown(".badge.bidder") and shown("p.contract")
    assert trump_coloured() == []
    go(trump_step)  # trumps named: the trump tiles in hand are drawn as trumps
    assert page.is_visible(f"{sec} li.step.trump")
    assert shown(".badge.bidder")
    assert sorted(trump_coloured()) == sorted(t for t in held if trump(t))
    page.close()
