"""The pages in states a live competition reaches only now and then, built by hand in a real
host's database and served by the host's own app (uvicorn on 127.0.0.1, the host's loops
not started: nothing plays, nothing refits), read in a real headless browser:

- ratings the last batch fit left open, quoted by their bound on every page (docs/ladder.md,
  "When the data cannot give an interval": ``≥ low``, ``≤ high``, ``n/a``);
- a version the batch fit has not rated yet, ranked below the fitted ones by its live
  μ − 3σ, and the line that says so;
- a phone's width (390 px): the columns that matter stay in view.

The ratings are the figures the host stores after a fit (:meth:`Host.batch_now`): a rating,
its 95% interval and the ids of the open ones in the ``batch`` meta row."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from web_support import make_competition

from arena.host.models import Bot, Meta, Participant, Version
from arena.host.run import open_host
from arena.host.security import digest
from arena.host.service import Host

# (owner, bot, [(status, rating, low, high, open) per version, oldest first]); one line a
# version. The open ratings' own figures (2022.9, 1010.0, 1500.0) must never be shown.
STATE = [
    ("alexandra", "heuristic", [("retired", 1540.2, 1490.1, 1590.3, False),
                                ("active", 2022.9, 1609.5, None, True)]),
    ("bartholomew", "random", [("active", 1450.0, 1400.4, 1499.6, False)]),
    ("cassandra", "weakling", [("active", 1010.0, None, 1300.0, True)]),
    ("fitzgerald", "a_contender_with_a_rather_long_name", [("active", 1200.0, 1100.0, 1300.0,
                                                           False)]),
    ("dimitrios", "even", [("active", 1500.0, None, None, True)]),
    ("evangeline", "newcomer", [("active", None, None, None, False)]),
]
SHOWN = {  # what every page shows for each version: worked out by hand from STATE, in
    # the terminal's form (whole numbers, ± half the interval: (1590.3 − 1490.1) / 2 = 50.1)
    ("heuristic", 1): "1540 ± 50", ("heuristic", 2): "≥ 1610",
    ("random", 1): "1450 ± 50", ("weakling", 1): "≤ 1300",
    ("even", 1): "n/a", ("newcomer", 1): "–",
    ("a_contender_with_a_rather_long_name", 1): "1200 ± 100",
}


@dataclass
class Still:
    url: str
    host: Host
    ids: dict[tuple[str, int], int]  # (bot, version number) -> version id


@pytest.fixture(scope="module")
def still(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Still]:
    import uvicorn

    from arena.host.app import create_app
    from arena.host.visitors import VisitorLimits

    folder = make_competition(tmp_path_factory.mktemp("still") / "comp")
    host, _ = open_host(folder)
    ids: dict[tuple[str, int], int] = {}
    with host.Session.begin() as s:
        for owner, name, versions in STATE:
            person = Participant(name=owner, token_hash=digest(owner))
            bot = Bot(owner=person, name=name)
            s.add(bot)
            for number, (status, rating, low, high, _) in enumerate(versions, 1):
                v = Version(bot=bot, number=number, hash=f"{number}{len(name)}".ljust(40, "e"),
                            archive_sha256="0" * 64, status=status, games=30, mu=30.0 - number,
                            sigma=2.0, rating=rating, rating_low=low, rating_high=high)
                s.add(v)
                s.flush()
                ids[name, number] = v.id
                if status == "active":
                    bot.active_version_id = v.id
        newcomer = s.get(Version, ids["newcomer", 1])
        assert newcomer is not None
        newcomer.games, newcomer.mu, newcomer.sigma = 4, 25.0, 7.0  # live μ−3σ: 4.00
        s.add(Meta(key="batch", value={"games": 60, "at": "2026-01-01T00:00:00+00:00", "open": [
            ids[name, n] for _, name, vs in STATE for n, v in enumerate(vs, 1) if v[4]]}))
    # the states are written straight into the database, as a fit would: no public
    # answer from the cache (arena.host.visitors), every view reads them
    server = uvicorn.Server(uvicorn.Config(create_app(host, VisitorLimits(ttl_s=0)),
                                           host="127.0.0.1", port=0,
                                           lifespan="off", log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Still(f"http://127.0.0.1:{port}", host, ids)
    finally:
        server.should_exit = True
        thread.join(30)
        host.close()


def leaderboard_cells(page) -> dict[str, str]:
    return dict(page.eval_on_selector_all(
        "tr.lb-row", "rows => rows.map(r => [r.dataset.bot, "
        "r.querySelector('td.rating').textContent.trim().replace(/\\s+/g, ' ')])"))


def test_open_ratings_are_quoted_by_their_bound_on_every_page(browser, still: Still):
    import httpx

    page = browser.new_page()
    page.goto(still.url + "/")
    board = leaderboard_cells(page)
    for (name, number), text in SHOWN.items():
        active = name != "heuristic" or number == 2
        if active and name != "newcomer":
            assert board[name] == text, (name, board)
    # the bot page's versions (newest first) and each version's page: the same words
    for name in {n for n, _ in SHOWN}:
        page.goto(still.url + f"/bots/{name}")
        cells = page.eval_on_selector_all(
            "tr.version-row", "rows => rows.map(r => r.querySelector('td.rating').textContent"
            ".trim().replace(/\\s+/g, ' '))")
        numbers = sorted((n for b, n in SHOWN if b == name), reverse=True)
        assert cells == [SHOWN[name, n] for n in numbers], (name, cells)
    page.goto(still.url + f"/versions/{still.ids['weakling', 1]}")
    assert "Rating ≤ 1300 after 30 games" in page.inner_text("main")
    assert "1010" not in page.inner_text("main")
    page.close()
    # the API says which are open, for a version as for the leaderboard
    for (name, number), vid in still.ids.items():
        want = next(vs for _, b, vs in STATE if b == name)[number - 1][4]
        versions = httpx.get(f"{still.url}/api/bots/{name}").json()["versions"]
        assert next(v for v in versions if v["number"] == number)["rating_open"] is want
        assert httpx.get(f"{still.url}/api/versions/{vid}").json()["rating_open"] is want


def test_a_version_not_fitted_yet_ranks_last_and_the_page_says_why(browser, still: Still):
    page = browser.new_page()
    page.goto(still.url + "/")
    # fitted versions by rating (an open one by its fit's figure: it orders the board),
    # then the newcomer by its live μ − 3σ = 25 − 3·7, in brackets
    order = page.eval_on_selector_all("tr.lb-row", "rows => rows.map(r => r.dataset.bot)")
    assert order == ["heuristic", "even", "random", "a_contender_with_a_rather_long_name",
                     "weakling", "newcomer"]
    assert leaderboard_cells(page)["newcomer"] == "(4.00)"
    # one short line, right under the table, says why it is last
    note = page.eval_on_selector(".table-wrap:has(table.leaderboard) + p",
                                 "p => [p.className, p.textContent]")
    assert note[0].split() == ["muted", "small", "unfitted-note"]
    assert "not fitted yet" in note[1] and "below every fitted" in note[1]
    assert "μ−3σ" in note[1] and len(note[1]) < 200
    # once every version is fitted the line is gone
    with still.host.Session.begin() as s:
        v = s.get(Version, still.ids["newcomer", 1])
        assert v is not None
        v.rating, v.rating_low, v.rating_high = 1400.0, 1200.0, 1600.0
    try:
        page.goto(still.url + "/")
        assert page.query_selector(".unfitted-note") is None
        assert leaderboard_cells(page)["newcomer"] == "1400 ± 200"  # (1600 − 1200) / 2
    finally:
        with still.host.Session.begin() as s:
            v = s.get(Version, still.ids["newcomer", 1])
            assert v is not None
            v.rating = v.rating_low = v.rating_high = None
    page.close()


PHONE = {"width": 390, "height": 844}
"""A phone's viewport (CSS px)."""

WIDTHS_JS = """sel => ({
    page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
    wraps: [...document.querySelectorAll('.table-wrap')].map(w => [w.scrollWidth, w.clientWidth]),
    cells: [...document.querySelectorAll(sel)].filter(c => c.offsetParent !== null)
        .map(c => { const r = c.getBoundingClientRect(); return [c.className, r.left, r.right]; }),
})"""
"""What scrolls sideways on a page: the page itself, each table's box, and where the visible
cells matching a selector are (left and right edges, px from the viewport's left)."""



def test_a_phone_sees_rank_bot_rating_and_games_without_scrolling(browser, still: Still):
    page = browser.new_page(viewport=PHONE)
    page.goto(still.url + "/")
    seen = page.evaluate(WIDTHS_JS, "tr.lb-row td")
    assert seen["page"][0] <= seen["page"][1] == 390  # the page does not scroll sideways
    assert all(sw <= cw for sw, cw in seen["wraps"])  # nor does the table in its box
    shown = {cls.split()[-1] for cls, _, _ in seen["cells"]}
    assert {"rank", "bot", "rating", "games"} <= shown
    for cls, left, right in seen["cells"]:
        assert 0 <= left and right <= 390, (cls, left, right)
    # the interval is still there, beside the rating (it may wrap under it)
    assert leaderboard_cells(page)["random"] == SHOWN["random", 1]
    # a bot page: each version's rating in view too
    page.goto(still.url + "/bots/heuristic")
    seen = page.evaluate(WIDTHS_JS, "tr.version-row td.rating")
    assert seen["page"][0] <= 390 and seen["wraps"][0][0] <= seen["wraps"][0][1]
    assert len(seen["cells"]) == 2 and all(0 <= x and y <= 390 for _, x, y in seen["cells"])
    page.goto(still.url + f"/versions/{still.ids['heuristic', 2]}")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.inner_text(".submitted")[:4].isdigit()  # the date the bot page leaves out
    page.close()
    # a laptop still sees every column
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    page.goto(still.url + "/")
    shown = {c.split()[-1] for c, _, _ in page.evaluate(WIDTHS_JS, "tr.lb-row td")["cells"]}
    assert {"owner", "mono", "trend", "win"} <= shown
    page.close()


def test_a_rejected_versions_steps_and_who_sees_why(browser, still: Still):
    """A version rejected by its build and one rejected by its validation: the steps up to
    the failing one are done, the failing one is marked failed, the rest (``active``) are
    not done. Signed out there is no reason, but a hint that its owner sees it."""
    token = "moon_" + "r" * 32
    with still.host.Session.begin() as s:
        person = Participant(name="rejectee", token_hash=digest(token))
        bot = Bot(owner=person, name="rejects")
        s.add(bot)
        built = Version(bot=bot, number=1, hash="1r".ljust(40, "e"), archive_sha256="0" * 64,
                        status="rejected", reason="build failed (exit 2):\nno compiler")
        played = Version(bot=bot, number=2, hash="2r".ljust(40, "e"), archive_sha256="0" * 64,
                         status="rejected", reason="validation: a legal move: it timed out")
        s.add_all([built, played])
        s.flush()
        ids = {"build": built.id, "validation": played.id}
    # (class of each step: pending, building, validating, active), worked out by hand
    want = {"build": ["done", "failed", "", ""], "validation": ["done", "done", "failed", ""]}
    reason = {"build": "no compiler", "validation": "it timed out"}
    page = browser.new_page()
    for kind, vid in ids.items():
        page.goto(f"{still.url}/versions/{vid}")
        steps = page.eval_on_selector_all("ol.progress li", "ls => ls.map(l => l.className)")
        assert steps == want[kind], (kind, steps)
        assert page.inner_text("#status") == "rejected"
        main = page.inner_text("main")
        assert reason[kind] not in main and "Reason" not in main
        assert "sign in as rejectee" in page.inner_text(".owner-hint")
    page.close()
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(still.url + "/signin")
    page.fill("#token", token)
    page.click("form.form button[type=submit]")
    page.wait_for_url(still.url + "/submit")
    for kind, vid in ids.items():
        page.goto(f"{still.url}/versions/{vid}")
        assert reason[kind] in page.inner_text(".reason")
        assert page.query_selector(".owner-hint") is None
        assert page.eval_on_selector_all("ol.progress li", "ls => ls.map(l => l.className)"
                                         ) == want[kind]
    ctx.close()
