"""The live game page in a real headless browser (Chromium through Playwright) against
`moon host run` on 127.0.0.1 with real bots playing: at moments of a real game, the board
and the story show exactly the tiles played up to the last event the page has shown, and
no other tile anywhere in the page, worked out here from the game's record alone (its
public events rebuilt from its hands, in the order docs/rules.md gives); the pace, the
pause and "catch up" hold and release the events; the end links to the replay."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import pytest
from host_support import wait_for
from web_support import Competition

TILE = re.compile(r"\b[0-6]-[0-6]\b")

SNAPSHOT = """() => {
  const root = document.getElementById('live');
  const tile = el => el.querySelector('[data-tile]').getAttribute('data-tile');
  const seats = [...root.querySelectorAll('.board .seat')].map(s => ({
    seat: +s.dataset.seat,
    backs: s.querySelectorAll('.held .dom.back').length,
    up: [...s.querySelectorAll('.held [data-tile]')].map(d => d.dataset.tile),
    bidder: !s.querySelector('.badge.bidder').hidden}));
  const widow = root.querySelector('.board .widow');
  return {
    seen: +root.dataset.seen, received: +root.dataset.received,
    moves: +root.dataset.moves, over: root.dataset.over,
    title: root.querySelector('.hand-title').textContent, seats,
    widow: widow.hidden ? 0 : widow.querySelectorAll('.dom.back').length,
    trick: [...root.querySelectorAll('.board .trick-area .played')].map(
      p => [+p.dataset.seat, tile(p)]),
    story: [...root.querySelectorAll('.story .tricks li.play')].map(
      li => [+li.dataset.seat, tile(li)]),
    html: document.documentElement.outerHTML};
}"""


@dataclass
class Seen:
    """What a spectator knows once the events up to some seq are shown."""

    hand: int = -1
    number: int = 0
    plays: list[tuple[int, str]] = field(default_factory=list)
    bids: int = 0
    auction_over: bool = False
    bidder: int | None = None
    widow_left: bool = False
    widow_taken: bool = False
    discarded: bool = False
    moves: int = 0


def public_events(record: dict) -> list[tuple[str, int, dict]]:
    """The game's public events as the referee sends them, rebuilt from the record:
    ``(kind, hand index, fields)``, in order (their seq is the place in this list from 1).
    Each hand: its deal, each bid, then (with a widow) the widow taken, the discard and
    trumps (trumps first under ``trump_before_widow``), each play with each trick's win
    after its last play, the hand's end; then the game's end."""
    n = len(record["seats"])
    trump_first = bool(record["ruleset"].get("trump_before_widow"))
    out: list[tuple[str, int, dict]] = []
    for h, hand in enumerate(record["hands"]):
        out.append(("hand_started", h, {"number": hand["number"]}))
        out += [("bid", h, {"seat": b["seat"]}) for b in hand["bids"]]
        if hand["bidder"] is not None:
            contract = [("widow_taken", h, {}), ("discarded", h, {})] if hand["widow"] \
                else []
            trump = [("trump_named", h, {})] if hand["trump"] is not None else []
            out += trump + contract if trump_first else contract + trump
        for i, p in enumerate(hand["plays"]):
            out.append(("played", h, {"seat": p["seat"], "tile": p["tile"]}))
            if i % n == n - 1:
                out.append(("trick_won", h, {}))
        if hand["finished"]:
            out.append(("hand_ended", h, {}))
    out.append(("game_ended", -1, {}))
    return out


def seen_at(record: dict, seq: int) -> Seen:
    """What the page should show once the first ``seq`` public events are shown."""
    s = Seen()
    for kind, h, f in public_events(record)[:seq]:
        if kind == "hand_started":
            hand = record["hands"][h]
            s = Seen(hand=h, number=hand["number"], widow_left=bool(hand["widow"]),
                     moves=s.moves)
        if kind in ("hand_started", "bid", "discarded", "trump_named", "played"):
            s.moves += 1
        if kind == "bid":
            s.bids += 1
        elif kind != "hand_started" and kind != "game_ended":
            s.auction_over = True
            s.bidder = record["hands"][s.hand]["bidder"]
        if kind == "widow_taken":
            s.widow_left, s.widow_taken = False, True
        elif kind == "discarded":
            s.discarded = True
        elif kind == "played":
            s.plays.append((f["seat"], f["tile"]))
    return s


def check_snapshot(snap: dict, record: dict) -> None:
    """The page at one moment against the record: exactly the tiles played so far."""
    n = len(record["seats"])
    want = seen_at(record, snap["seen"])
    assert want.hand >= 0, snap["seen"]
    assert snap["moves"] == want.moves
    assert snap["title"].startswith(f"Hand {want.number + 1} ")
    # every tile the page holds, anywhere in its markup, is one played in this hand so far
    played = {t for _, t in want.plays}
    assert set(TILE.findall(snap["html"])) <= played, (snap["seen"], want.plays)
    hand = record["hands"][want.hand]
    # the story: this hand's plays so far, in order, by seat
    assert [tuple(x) for x in snap["story"]] == want.plays
    # the board: the trick on the table (a complete one stays until the next play)
    k = len(want.plays)
    trick = want.plays[(k - 1) // n * n:] if k else []
    assert [tuple(x) for x in snap["trick"]] == trick
    # every hand face down: dealt 7, the widow to the bidder, the discard out, plays out
    for seat in snap["seats"]:
        s = seat["seat"]
        count = 7 - sum(1 for who, _ in want.plays if who == s)
        if s == hand["bidder"] and want.auction_over:
            count += int(want.widow_taken) - int(want.discarded)
        assert seat["up"] == [], seat
        assert seat["backs"] == count, (snap["seen"], seat, count)
        assert seat["bidder"] == (want.auction_over and s == want.bidder), seat
    assert snap["widow"] == int(want.widow_left)


def running_game(c: Competition) -> str:
    """A running game whose live view is public: the last of its set (the others' plays
    are withheld until their set has ended)."""
    games = wait_for(lambda: [g for g in c.host.ok("GET", "/api/games", params={
        "status": "running"})["games"] if g["withheld"] is None], 120,
        "a running game of a set with no other game to play", every=0.1)
    return games[0]["id"]


def watch(browser, c: Competition) -> tuple[object, str]:
    """A page on the live view of a running game, its first events shown."""
    from playwright.sync_api import Error as BrowserError

    page = browser.new_page(viewport={"width": 1200, "height": 900})
    for _ in range(40):
        gid = running_game(c)
        try:
            page.goto(c.url + f"/games/{gid}")
            if page.query_selector("#live") is None:
                continue  # it ended in between: the replay was served
            assert page.query_selector("#live .board .seat"), "the live page draws no board"
            page.wait_for_function("() => +document.getElementById('live').dataset.received"
                                   " > 0", timeout=30000)
            return page, gid
        except BrowserError:  # the game ended and the page went on to its replay
            continue
    pytest.fail("no live game could be watched")


def test_live_board_shows_exactly_the_tiles_played(browser, competition: Competition):
    c = competition
    page, gid = watch(browser, c)
    snaps = []
    # at the page's own pace (2 moves a second), moments as the moves come
    for _ in range(12):
        snaps.append(page.evaluate(SNAPSHOT))
        time.sleep(0.25)
    # paused, nothing more is shown however many events arrive; the stream ends
    page.click("[data-go=pause]")
    held = page.evaluate(SNAPSHOT)
    page.wait_for_function("() => document.getElementById('live').dataset.ended === '1'",
                           timeout=120000)
    after = page.evaluate(SNAPSHOT)
    assert after["seen"] == held["seen"] and after["moves"] == held["moves"]
    assert after["received"] >= held["received"]
    assert after["over"] == "0" or after["seen"] == after["received"]
    snaps += [held, after]
    assert not page.is_visible(".game-over") or after["seen"] == after["received"]
    # catch up: every event received is shown at once, then the replay's link
    page.click("[data-go=catch-up]")
    last = page.evaluate(SNAPSHOT)
    assert last["seen"] == last["received"] and last["over"] == "1"
    snaps.append(last)
    assert page.is_visible(".game-over a.replay-link")
    assert page.get_attribute(".game-over a.replay-link", "href") == f"/games/{gid}"
    assert "winner" in page.inner_text(".game-over") or "no winner" in page.inner_text(
        ".game-over")
    assert page.inner_text(".live-status") == "The game is over."

    # the record, once every game of its set (dealt the same hands) has ended
    wait_for(lambda: (lambda g: g["status"] == "finished" and g["withheld"] is None)(
        c.host.ok("GET", f"/api/games/{gid}")), 240, "the watched game's set to end")
    record = c.host.ok("GET", f"/api/games/{gid}/record")
    assert not record["faults"], record["faults"]  # a fault is an event this model lacks
    assert last["seen"] == len(public_events(record))  # every event, game_ended last
    assert len({s["seen"] for s in snaps}) >= 3  # moments of the game, not one
    for snap in snaps:
        check_snapshot(snap, record)
    # the link goes to the replay player
    page.click(".game-over a.replay-link")
    page.wait_for_selector("#player")
    page.close()


def test_live_pace_spaces_the_moves_and_catch_up_shows_them(browser, competition):
    """At one move every 2 s, a page with moves waiting shows at most one per 2 s of the
    test's own clock (a slow machine only shows fewer); catch up shows them all."""
    c = competition
    page, _ = watch(browser, c)
    page.select_option(".pace", "2000")
    start = page.evaluate(SNAPSHOT)
    t0 = time.monotonic()
    time.sleep(5)
    mid = page.evaluate(SNAPSHOT)
    elapsed = time.monotonic() - t0
    waiting = mid["received"] > mid["seen"]
    assert waiting, "the game's events came slower than one move every 2 s"
    assert mid["moves"] - start["moves"] <= elapsed / 2 + 1, (start, mid, elapsed)
    assert "behind" in page.inner_text(".live-status")
    # catch up shows every event received by the click; those that come after it are
    # shown at the page's pace again (three came between the click and a reading once)
    before = page.evaluate(SNAPSHOT)
    page.click("[data-go=catch-up]")
    now = page.evaluate(SNAPSHOT)
    assert before["seen"] < before["received"] <= now["seen"], (before, now)
    page.close()
