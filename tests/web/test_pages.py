"""The competition's pages in a real headless browser (Chromium through Playwright)
against `moon host run` on 127.0.0.1 with real bots playing: every value shown is checked
against what the API and the game records say, worked out here on its own (win % counted
from the games, a replay's held tiles from the record's deal, the record itself replayed
by the rules engine)."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from host_support import EXAMPLES, SEED, tar_folder, wait_for
from web_support import Competition

from arena.records.record import GameRecord, verify_record

TILE = re.compile(r"\b[0-6]-[0-6]\b")


def finished_games(c: Competition, **filters: object) -> list[dict]:
    return c.host.ok("GET", "/api/games", params={"status": "finished", "limit": 500,
                                                  **filters})["games"]


def shown_games(c: Competition, n: int = 1, **filters: object) -> list[dict]:
    """The finished games whose record and replay are shown (every game of their set has
    ended: arena.host.embargo), once there are ``n``."""
    def shown() -> list[dict]:
        games = [g for g in finished_games(c, **filters) if g["withheld"] is None]
        return games if len(games) >= n else []
    return wait_for(shown, 240, f"{n} games whose set has ended ({filters or 'any'})")


def enough_games(c: Competition, n: int) -> None:
    """Wait for ``n`` finished rated games and a batch fit that rates every active bot."""
    def ready() -> bool:
        board = c.host.ok("GET", "/api/leaderboard")
        return len(finished_games(c)) >= n and len(board) >= 3 and \
            all(r["rating"] is not None for r in board)
    wait_for(ready, 240, f"{n} finished games and a batch fit")


def sign_in(browser, c: Competition, who: str):
    """A new browser context signed in as ``who`` through the sign-in form."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(c.url + "/signin")
    page.fill("#token", c.tokens[who])
    page.click("form.form button[type=submit]")
    page.wait_for_url(c.url + "/submit")
    assert page.inner_text(".user-name") == who
    return ctx, page


def test_leaderboard_order_ratings_and_win_rates(browser, competition: Competition):
    c = competition
    enough_games(c, 6)
    page = browser.new_page()
    rows_js = """rows => rows.map(r => ({
        bot: r.dataset.bot,
        rating: r.querySelector('td.rating b').textContent,
        interval: (r.querySelector('td.rating .interval') || {}).textContent || null,
        games: r.querySelector('td.games').textContent,
        win: r.querySelector('td.win').textContent,
        owner: r.querySelector('td.owner').textContent,
        bar: r.querySelectorAll('svg.interval rect').length}))"""
    # games go on while we look: take a page between two equal reads of the API
    for _ in range(60):
        before = (c.host.ok("GET", "/api/leaderboard"), finished_games(c))
        page.goto(c.url + "/")
        cells = page.eval_on_selector_all("tr.lb-row", rows_js)
        api, games = c.host.ok("GET", "/api/leaderboard"), finished_games(c)
        if (api, games) == before:
            break
    else:
        pytest.fail("the leaderboard never held still for one page load")
    # best first by the batch rating, as the API says
    ratings = [r["rating"] for r in api]
    assert ratings == sorted(ratings, reverse=True)
    assert [x["bot"] for x in cells] == [r["bot"] for r in api]
    for row, r in zip(cells, api, strict=True):
        # the terminal's form (`moon ladder show`): whole numbers, ± half the interval
        if r["rating_open"]:  # only its bound is quoted, as `moon ladder show` does
            low, high = r["rating_low"], r["rating_high"]
            assert row["rating"] == (f"≥ {round(low)}" if high is None and low is not None
                                     else f"≤ {round(high)}" if low is None and high
                                     is not None else "n/a")
            assert row["interval"] is None
            assert row["bar"] == (0 if low is None and high is None else 2)
            continue
        assert row["rating"] == str(round(r["rating"]))
        if r["rating_low"] is not None and r["rating_high"] is not None:
            half = (r["rating_high"] - r["rating_low"]) / 2
            assert row["interval"] == f"± {round(half)}"
            assert row["bar"] == 2  # the interval and the estimate, drawn
        elif r["rating_low"] is not None or r["rating_high"] is not None:
            assert row["interval"] == "(n/a)" and row["bar"] == 2
        else:
            assert row["interval"] == "(n/a)" and row["bar"] == 0
        assert row["owner"] == {"heuristic": "alice", "steady": "bob", "random": "dave"}[r["bot"]]
        # win %: games where a seat of its placed first, counted from the games list, each
        # game once (before the third bot was active, a version sat in two seats)
        mine = [[x for x in g["seats"] if x["version_id"] == r["version_id"]] for g in games]
        mine = [seats for seats in mine if seats]
        assert int(row["games"]) == r["games"] == len(mine)
        won = sum(any(x["place"] == 1 for x in seats) for seats in mine)
        assert row["win"] == f"{100 * won / len(mine):.0f}%"
    # rules and time control are stated (FAST in the host tests: target 7, 1 s a decision)
    rules = page.inner_text("dl.rules")
    assert "7 points" in rules and "moon3" in rules
    assert "1 s" in page.inner_text("dl.clock")
    # sortable: by bot name, then by games (most first)
    page.click("a.sort[data-sort=bot]")
    names = page.eval_on_selector_all("tr.lb-row", "rows => rows.map(r => r.dataset.bot)")
    assert names == sorted(names) and len(names) == 3
    page.click("a.sort[data-sort=bot]")
    assert page.eval_on_selector_all("tr.lb-row", "rows => rows.map(r => r.dataset.bot)") \
        == sorted(names, reverse=True)
    # a narrow phone: the page fits its width (test_page_states.py: what stays in view)
    phone = browser.new_page(viewport={"width": 375, "height": 740})
    phone.goto(c.url + "/")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    phone.close()
    page.close()


def test_bot_page_and_games_filter(browser, competition: Competition):
    c = competition
    enough_games(c, 6)
    page = browser.new_page()
    page.goto(c.url + "/bots/heuristic")
    assert page.inner_text("h1 .owner") == "alice"
    assert page.eval_on_selector_all("tr.version-row", "r => r.map(x => x.dataset.status)") \
        == ["active"]
    # the chart: its one version's line, a point a batch fit with an interval (on the
    # leaderboard's scale: tests/host/test_ratings_part.py), once a fit has one
    wait_for(lambda: any(r["bot"] == "heuristic" and (r["rating_low"], r["rating_high"])
                         != (None, None) for r in c.host.ok("GET", "/api/leaderboard")),
             240, "a batch fit with an interval for heuristic")
    page.goto(c.url + "/bots/heuristic")
    lines = page.eval_on_selector_all("svg.rating-chart g.version-line",
                                      "gs => gs.map(g => [g.dataset.version, "
                                      "Number(g.dataset.points)])")
    assert len(lines) == 1 and lines[0][0] == "1" and lines[0][1] >= 1
    assert "Reason / log" not in page.inner_text("table.versions")  # not the owner
    # games filtered by bot and result: the page is read first, the API after it, so what
    # the page lists is in the API's answer: "won" where the bot's seat placed first,
    # "lost" where it did not, and together every game of the bot
    vid = c.versions["dave"]
    page.goto(c.url + "/games?bot=random&result=won")
    won_page = set(page.eval_on_selector_all("tr.game-row", "r => r.map(x => x.dataset.game)"))
    page.goto(c.url + "/games?bot=random&result=lost")
    lost_page = set(page.eval_on_selector_all("tr.game-row", "r => r.map(x => x.dataset.game)"))
    outcomes = page.eval_on_selector_all("td.outcome", "r => r.map(x => x.textContent)")
    api = finished_games(c, bot="random")
    won = {g["id"] for g in api
           if any(x["version_id"] == vid and x["place"] == 1 for x in g["seats"])}
    assert won_page <= won and lost_page <= {g["id"] for g in api} - won
    assert won_page | lost_page  # (games may finish between the page and the API)
    assert len(won_page) + len(lost_page) >= len(api) - 4
    assert set(outcomes) <= {"lost"}
    page.goto(c.url + "/games?result=forfeit")
    assert int(page.inner_text(".total")) == len(finished_games(c, termination="forfeit"))
    page.close()


def test_no_page_scrolls_sideways_on_a_phone(browser, competition: Competition):
    """At 390 x 844 CSS px (a phone) every page fits its width: the leaderboard, a bot, the
    games, a finished game's replay, a game being played; a wide table scrolls inside its
    own box, never the page."""
    c = competition
    enough_games(c, 3)
    done = finished_games(c)[0]["id"]
    page = browser.new_page(viewport={"width": 390, "height": 844})
    paths = ["/", "/bots/heuristic", "/bots/steady", "/games", "/games?bot=random",
             f"/games/{done}", f"/games/{done}#hand-1-trick-3"]
    running = c.host.ok("GET", "/api/games", params={"status": "running", "limit": 1})["games"]
    if running:
        paths.append(f"/games/{running[0]['id']}")
    for path in paths:
        page.goto(c.url + path)
        page.wait_for_load_state("load")
        width = page.evaluate("[document.documentElement.scrollWidth, "
                              "document.documentElement.clientWidth]")
        assert width[0] <= width[1] == 390, (path, width)
    page.close()


def held(page, seat: int) -> set[str]:
    return set(page.eval_on_selector_all(
        f"section.hand:not([hidden]) .held[data-seat='{seat}'] .dom:not(.gone)",
        "ds => ds.map(d => d.dataset.tile)"))


def test_replay_steps_with_keyboard_and_slider(browser, competition: Competition):
    c = competition
    enough_games(c, 3)
    game = wait_for(lambda: next((g for g in shown_games(c) if g["termination"] in (
        "target", "moon")), None), 240, "a game shown that ended on points")
    record = c.host.ok("GET", f"/api/games/{game['id']}/record")
    rec = GameRecord.from_dict(record)
    assert rec.errors == () and verify_record(rec) == []  # the rules engine agrees
    page = browser.new_page()
    page.goto(c.url + f"/games/{game['id']}")
    # the final scores on the page are the record's, which the rules engine replayed
    scores = page.eval_on_selector_all("table.final td.score", "t => t.map(x => +x.textContent)")
    assert scores == record["result"]["scores"]
    # the first hand with tricks; step to just before its first play with the slider
    i, h = next((i, h) for i, h in enumerate(record["hands"]) if h["tricks"])
    sec = f"section.hand[data-hand='{i}']"
    first_play = int(page.get_attribute(f"{sec} li.trick[data-trick='0']", "data-first"))
    page.eval_on_selector(".timeline", "(el, v) => { el.value = v; "
                          "el.dispatchEvent(new Event('input')); }", first_play - 1)
    n = len(record["seats"])

    def expected(k: int, j: int) -> dict[int, set[str]]:
        """By hand from the record: each seat's tiles before play j of trick k."""
        out = {}
        for seat in range(n):
            start = set(h["dealt"][seat])
            if seat == h["bidder"] and h["discard"] is not None:
                start = (start | set(h["widow"])) - {h["discard"]}
            gone = {p["tile"] for t in h["tricks"][:k] for p in t["plays"] if p["seat"] == seat}
            gone |= {p["tile"] for p in h["tricks"][k]["plays"][:j] if p["seat"] == seat}
            out[seat] = start - gone
        return out

    assert {s: held(page, s) for s in range(n)} == expected(0, 0)
    # keyboard: four plays forward (into the second trick), one back
    page.focus("body")
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert {s: held(page, s) for s in range(n)} == expected(1, 1)
    page.keyboard.press("ArrowLeft")
    assert {s: held(page, s) for s in range(n)} == expected(1, 0)
    assert int(page.input_value(".timeline")) == first_play - 1 + 3
    # a deep link uses the labels' numbers: trick 2 of hand i+1 is the second trick
    page.goto(c.url + f"/games/{game['id']}#hand-{i + 1}-trick-2")
    page.reload()
    assert int(page.input_value(".timeline")) >= first_play + n - 1
    page.close()


def test_live_game_streams_public_events_and_never_a_hidden_tile(competition):
    c = competition
    # the SSE stream of a game in progress, read until some plays have come
    def watchable() -> list[dict]:  # running, and the last of its set: its plays public
        return [g for g in c.host.ok("GET", "/api/games", params={"status": "running"}
                                     )["games"] if g["withheld"] is None]

    for _ in range(40):
        running = watchable()
        if not running:
            wait_for(watchable, 60, "a running game with no other game of its set to play",
                     every=0.1)
            continue
        gid = running[0]["id"]
        events: list[dict] = []
        raw = ""
        with httpx.stream("GET", c.url + f"/games/{gid}/events", timeout=30) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            for line in r.iter_lines():
                raw += line + "\n"
                if line.startswith("data: ") and line != "data: {}":
                    events.append(json.loads(line[6:]))
                if line.startswith("event: end") or \
                        sum(e["kind"] == "played" for e in events) >= 4:
                    break
        if any(e["kind"] == "played" for e in events) and \
                not any(e["kind"] == "game_ended" for e in events):
            break
    else:
        pytest.fail("no game was seen in progress")
    # only played tiles are in the stream: as many tiles as plays, and in the record's order
    plays = [e["tile"] for e in events if e["kind"] == "played"]
    assert len(TILE.findall(raw)) == len(plays)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    # its record is shown once every game of its set (dealt the same hands) has ended
    wait_for(lambda: (lambda g: g["status"] == "finished" and g["withheld"] is None)(
        c.host.ok("GET", f"/api/games/{gid}")), 240, "the watched game's set to end")
    record = c.host.ok("GET", f"/api/games/{gid}/record")
    all_plays = [p["tile"] for hh in record["hands"] for p in hh["plays"]]
    assert plays == all_plays[:len(plays)]
    # a hand's discard (hidden) is never among what the stream showed of that hand (a later
    # hand's discard may well be a tile played in an earlier one: a new deal)
    shown = iter(plays)
    for hh in record["hands"]:
        of_hand = [t for _, t in zip(hh["plays"], shown, strict=False)]  # the hand's plays
        assert not hh["discard"] or hh["discard"] not in of_hand, (hh["discard"], of_hand)

    # the live page as served holds no tile at all (its script adds played ones)
    for _ in range(40):
        running = wait_for(watchable, 60, "a running game with no other game of its set "
                           "to play", every=0.1)
        r = httpx.get(c.url + f"/games/{running[0]['id']}")
        if 'id="live"' in r.text:
            assert not TILE.search(r.text)
            assert "data-tile" not in r.text
            break
    else:
        pytest.fail("no live page was served")
    # the browser's live page: tests/web/test_live_page.py


def test_sign_in_submit_and_watch_validation(browser, competition: Competition, tmp_path):
    c = competition
    # a form posted without the page's CSRF value is refused, and nothing is signed in
    r = httpx.post(c.url + "/signin", data={"token": c.tokens["carol"]})
    assert r.status_code == 403 and "moon_session" not in r.cookies
    r = httpx.post(c.url + "/signin", data={"token": c.tokens["carol"], "csrf": "x" * 43},
                   cookies={"moon_csrf": "y" * 43})
    assert r.status_code == 403
    # a wrong token is a clear message
    page = browser.new_page()
    page.goto(c.url + "/signin")
    page.fill("#token", "moon_not-a-token")
    page.click("form.form button[type=submit]")
    assert "not known" in page.inner_text(".error")
    page.close()

    ctx, page = sign_in(browser, c, "carol")
    cookies = {k["name"]: k for k in ctx.cookies()}
    assert cookies["moon_session"]["httpOnly"] and cookies["moon_session"]["sameSite"] == "Lax"
    assert cookies["moon_csrf"]["httpOnly"] and cookies["moon_csrf"]["sameSite"] == "Strict"
    # a submission posted from elsewhere with carol's session but not the page's CSRF value
    r = httpx.post(c.url + "/submit", cookies={"moon_session": cookies["moon_session"]["value"]},
                   files={"archive": ("x.tar.gz", tar_folder(EXAMPLES / "random",
                                                             rename="forged"))})
    assert r.status_code == 403
    # the same checks as the API: an archive without bot.toml is refused with its reason
    bad = tmp_path / "bad.tar.gz"
    from web_support import tar_files
    bad.write_bytes(tar_files({"main.py": b"print(1)\n"}))
    page.set_input_files("#archive", str(bad))
    page.click("form.form button[type=submit]")
    assert "bot.toml" in page.inner_text(".error")
    # a real bot: submitted, built, validated, active
    good = tmp_path / "carol.tar.gz"
    good.write_bytes(tar_folder(EXAMPLES / "random", rename="carols-bot"))
    page.set_input_files("#archive", str(good))
    page.click("form.form button[type=submit]")
    page.wait_for_url(re.compile(r".*/versions/\d+$"))
    vid = int(page.url.rsplit("/", 1)[1])
    page.wait_for_function("() => document.getElementById('status') && "
                           "document.getElementById('status').textContent === 'active'",
                           timeout=120000)
    v = c.host.ok("GET", f"/api/versions/{vid}", c.tokens["carol"])
    assert v["status"] == "active" and v["bot"] == "carols-bot"
    assert c.host.ok("GET", "/api/me", c.tokens["carol"])["bots"] == ["carols-bot"]
    # its owner sees the build and validation log, the same text as the API gives
    log = c.host.call("GET", f"/api/versions/{vid}/log", c.tokens["carol"]).text
    assert log.strip() and page.inner_text("pre.build-log").strip() == log.strip()
    ctx.close()


def test_owners_logs_only_to_owners(browser, competition: Competition):
    c = competition
    enough_games(c, 3)
    game = shown_games(c, bot="heuristic")[0]
    seat = next(x["seat"] for x in game["seats"] if x["version_id"] == c.versions["alice"])
    stderr = c.host.call("GET", f"/api/games/{game['id']}/logs/{seat}", c.tokens["alice"])
    assert stderr.status_code == 200
    # alice sees her bot's stderr and build log
    ctx, page = sign_in(browser, c, "alice")
    page.goto(c.url + f"/games/{game['id']}")
    assert page.query_selector(f".own-logs a[href$='/stderr/{seat}']") is not None
    page.goto(c.url + f"/games/{game['id']}/stderr/{seat}")
    assert page.inner_text("pre.stderr").strip() == (stderr.text.strip() or "(empty)")
    page.goto(c.url + f"/versions/{c.versions['alice']}")
    assert page.query_selector("pre.build-log") is not None
    ctx.close()
    # bob, signed in, sees neither; nor does someone not signed in
    ctx, page = sign_in(browser, c, "bob")
    for p in (page, browser.new_page()):
        p.goto(c.url + f"/games/{game['id']}")
        # (bob may have a seat of his own in this game: only that one is linked)
        assert p.query_selector(f".own-logs a[href$='/stderr/{seat}']") is None
        r = p.goto(c.url + f"/games/{game['id']}/stderr/{seat}")
        assert r is not None and r.status == 404
        assert p.query_selector("pre.stderr") is None
        p.goto(c.url + f"/versions/{c.versions['alice']}")
        assert p.query_selector("pre.build-log") is None
    # bob's own stderr (his bot prints markup and terminal escapes): shown as inert text
    mine = shown_games(c, bot="steady")[0]
    seat = next(x["seat"] for x in mine["seats"] if x["version_id"] == c.versions["bob"])
    page.goto(c.url + f"/games/{mine['id']}/stderr/{seat}")
    text = page.inner_text("pre.stderr")
    assert "<script>document.title = 'owned'</script>" in text
    assert "\\x1b[2J" in text and "\x1b" not in text and "\x07" not in text
    assert page.title() != "owned"
    assert page.eval_on_selector_all("main script", "s => s.length") == 0
    ctx.close()


def test_only_finished_games_have_a_finish_time(browser, competition: Competition):
    c = competition
    enough_games(c, 3)
    page = browser.new_page()
    rows_js = """rows => rows.map(r => ({id: r.dataset.game,
        status: r.querySelector('td.status').textContent.trim(),
        when: r.querySelector('td.when').textContent.trim()}))"""
    # the newest games: the set being played (queued, live) above finished ones
    for _ in range(60):
        page.goto(c.url + "/games")
        rows = page.eval_on_selector_all("tr.game-row", rows_js)
        states = {r["status"] for r in rows}
        if "finished" in states and states - {"finished"}:
            break
    else:
        pytest.fail(f"no page of games both finished and not: {rows}")
    api = {g["id"]: g for g in c.host.ok("GET", "/api/games", params={"limit": 500})["games"]}
    for r in rows:
        if r["status"] == "finished":  # the time the API gives, to the second
            assert r["when"] == api[r["id"]]["finished_at"][:19].replace("T", " "), r
        else:  # queued, live (running), voided, cancelled: nothing yet
            assert r["when"] == "", r
    page.close()
    # the API: a finish time for a finished game only (rated and validation games alike)
    for kind in ("rated", "validation"):
        games = c.host.ok("GET", "/api/games", c.host.admin,
                          params={"limit": 500, "kind": kind})["games"]
        assert games
        for g in games:
            assert (g["finished_at"] is None) == (g["status"] != "finished"), g
            assert g["created_at"] is not None


def all_finished(c: Competition) -> list[dict]:
    """Every finished rated game, page by page."""
    out: list[dict] = []
    while True:
        page = c.host.ok("GET", "/api/games", params={"status": "finished", "limit": 500,
                                                      "offset": len(out)})
        out += page["games"]
        if len(out) >= page["total"] or not page["games"]:
            return out


def _round1(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def test_leaderboard_ratings_are_the_ladders_on_the_same_games(browser, competition):
    """The host's batch ratings are `moon ladder show`'s fit of its games, on the ladder's
    scale: 1500 the mean of the versions rated, a difference D meaning the higher finishes
    ahead with probability 1 / (1 + 10^(−D/400)) (docs/ladder.md, "Ratings")."""
    import math

    from arena.ladder.ratings import PRIOR_SIGMA, rate
    from arena.ladder.store import GameRow

    c = competition
    enough_games(c, 12)

    def row(g: dict) -> GameRow:  # a game as the ladder's results file holds it
        seats = sorted(g["seats"], key=lambda x: x["seat"])
        return GameRow(g["id"], g["set"], f"set{g['set']}", len(seats), g["termination"],
                       g["winner"], g["scores"], [x["place"] for x in seats],
                       [str(x["version_id"]) for x in seats], g["hands"], g["wall_ms"], 0)

    # games go on while we look: the last batch fit rated the games up to some result (in
    # result order, seq); find that prefix: the ladder's fit of it gives the same numbers
    for _ in range(30):
        board = c.host.ok("GET", "/api/leaderboard")
        games = sorted(all_finished(c), key=lambda g: g["seq"])
        if board != c.host.ok("GET", "/api/leaderboard"):
            continue
        shown = {str(r["version_id"]): r["rating"] for r in board if r["rating"] is not None}
        is_open = {str(r["version_id"]) for r in board if r["rating_open"]}
        for k in range(len(games), 0, -1):
            rows = [row(g) for g in games[:k]]
            bots = sorted({b for r in rows for b in r.seats}, key=int)
            if set(bots) != set(shown):
                continue
            ladder = {r.bot: r.rating for r in rate(rows, bots, bootstrap=0)}
            if all(abs(ladder[b] - shown[b]) <= 0.051 for b in bots):
                # and with the host's bootstrap (20 resamples, its seed: make_competition's)
                # the same intervals, and the same ratings left open (quoted by a bound)
                fit = {r.bot: r for r in rate(rows, bots, bootstrap=20, seed=SEED)}
                for r in board:
                    f = fit[str(r["version_id"])]
                    assert (r["rating_low"], r["rating_high"], r["rating_open"]) == (
                        _round1(f.low), _round1(f.high), not f.determined), (r, f)
                break
        else:
            continue
        break
    else:
        pytest.fail(f"no prefix of the games gives the leaderboard's ratings: {board}")
    # the scale, checked by hand on those games: the mean of the anchor (every version,
    # or those the games can place against one another when some is open) is 1500 ...
    anchor = [str(r["version_id"]) for r in board if r["anchor"] and r["rating"] is not None]
    assert abs(sum(shown[b] for b in anchor) / len(anchor) - 1500) <= 0.06
    assert set(anchor) == set(shown) or is_open
    # ... and the ratings solve the fit's equations with the Elo curve: each version's
    # pairwise results (counted here from the places; a tie half) minus their chance
    # 1 / (1 + 10^(−D/400)) at the shown ratings, summed, is the prior's pull θ/σ²
    gap: dict[str, float] = dict.fromkeys(shown, 0.0)
    met: dict[str, int] = dict.fromkeys(shown, 0)
    for r in rows:
        for i, a in enumerate(r.seats):
            for j, b in enumerate(r.seats):
                if a == b:
                    continue
                won = 1.0 if r.places[i] < r.places[j] else 0.5 if r.places[i] == \
                    r.places[j] else 0.0
                gap[a] += won - 1 / (1 + 10 ** (-(shown[a] - shown[b]) / 400))
                met[a] += 1
    # (the fit's strengths have mean 0 over every version, whatever the anchor)
    mean = sum(shown.values()) / len(shown)
    for b in shown:
        theta = (shown[b] - mean) * math.log(10) / 400
        assert abs(gap[b] - theta / PRIOR_SIGMA ** 2) <= 0.1 + 3e-4 * met[b], (b, gap, shown)
    # open, worked out by hand: a version is open when some other is not both reachable
    # from it and back by chains of "finished ahead of" (it never lost, or never won, there)
    reach = {(a, b): a == b for a in shown for b in shown}
    for r in rows:
        for i, a in enumerate(r.seats):
            for j, b in enumerate(r.seats):
                if r.places[i] < r.places[j]:
                    reach[a, b] = True
    for m in shown:
        for a in shown:
            for b in shown:
                reach[a, b] = reach[a, b] or (reach[a, m] and reach[m, b])
    # the anchor is the largest part where each reaches every other and back (every
    # version when no part holds two); open: a version not both ways with all of it
    parts = {frozenset(b for b in shown if reach[a, b] and reach[b, a]) for a in shown}
    size = max(len(x) for x in parts)
    anchors = [x for x in parts if len(x) == size] if size >= 2 else [frozenset(shown)]
    expected = [{a for a in shown if not all(reach[a, b] and reach[b, a] for b in anchor)}
                for anchor in anchors]  # (parts of one size: the fit takes one of them)
    assert is_open in expected, (is_open, expected)
    # the page says what the number is
    page = browser.new_page()
    page.goto(c.url + "/")
    note = page.inner_text("p.rating-note")
    assert "1500 is the average" in note and "moon ladder show" in note
    assert "200 points above another finishes ahead of it 76%" in note  # 1/(1+10^-0.5)
    assert "400 points 91%" in note                                       # 1/(1+10^-1)
    assert [round(100 / (1 + 10 ** (-d / 400))) for d in (200, 400)] == [76, 91]
    page.close()


def test_wrong_addresses_and_filters_get_a_page_that_says_so(competition: Competition):
    import httpx

    c = competition
    # an address with no page: the pages' own Not found (HTML, the site's header), not JSON
    r = httpx.get(c.url + "/nonexistent", timeout=30)
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in r.text and "There is no page at this address" in r.text
    # the API keeps its JSON answer
    r = httpx.get(c.url + "/api/nonexistent", timeout=30)
    assert r.status_code == 404 and r.json() == {"detail": "Not Found"}
    # a result filter that does not exist, or a bot's result without a bot, or an unknown
    # bot: said, instead of every game listed under the wrong heading
    r = httpx.get(c.url + "/games", params={"result": "bogus"}, timeout=30)
    assert r.status_code == 400 and "There is no result &#39;bogus&#39; to filter on: " \
        "choose one of won, lost, target, moon, forfeit, hand_limit." in r.text, r.text
    r = httpx.get(c.url + "/games", params={"result": "won"}, timeout=30)
    assert r.status_code == 400 and "choose a bot to filter on too" in r.text
    r = httpx.get(c.url + "/games", params={"bot": "nosuch"}, timeout=30)
    assert r.status_code == 404 and "There is no bot named &#39;nosuch&#39;." in r.text
    assert httpx.get(c.url + "/games", params={"bot": "random", "result": "lost"},
                     timeout=30).status_code == 200
    # a page address whose id cannot be one: no page, said as a page (not a JSON 422)
    r = httpx.get(c.url + "/versions/abc", timeout=30)
    assert r.status_code == 404 and "<h1>Not found</h1>" in r.text
    # the API's own filters: a status no game has is a 422 that lists them
    r = httpx.get(c.url + "/api/games", params={"status": "bogus"}, timeout=30)
    assert r.status_code == 422 and r.json()["detail"] == (
        "status 'bogus': a game is one of queued, running, finished, voided, cancelled")
    r = httpx.get(c.url + "/api/versions/abc", timeout=30)
    assert r.status_code == 422 and isinstance(r.json()["detail"], list)


def test_a_game_page_names_its_set_and_seating_as_its_id_and_the_api_do(
        competition: Competition):
    import re

    import httpx

    c = competition
    enough_games(c, 1)
    g = next(g for g in finished_games(c) if g["set"] is not None)
    page = httpx.get(f"{c.url}/games/{g['id']}", timeout=30).text
    m = re.search(r"duplicate set (\d+), seating (\d+)", page)
    assert m is not None, page
    # the id is s<set>-<seating>[-r<attempt>]: the page's numbers are the id's and the API's
    assert g["id"].startswith(f"s{m[1]}-{m[2]}")
    assert (int(m[1]), int(m[2])) == (g["set"], g["seating"])


def test_a_game_of_a_set_in_play_says_when_it_is_shown(browser, competition: Competition):
    # a finished game while others of its set are still to be played: its page shows its
    # result and says when its replay comes, and no tile; the set over, the replay
    c = competition
    page = browser.new_page()
    for _ in range(40):
        games = c.host.ok("GET", "/api/games", params={"limit": 500})["games"]
        game = next((g for g in games if g["withheld"] and g["status"] == "finished"),
                    None)
        if game is None:
            page.wait_for_timeout(200)
            continue
        page.goto(c.url + f"/games/{game['id']}")
        text = page.inner_text("p.withheld") if page.query_selector("p.withheld") else ""
        if c.host.ok("GET", f"/api/games/{game['id']}")["withheld"]:  # still in play
            break
    else:
        pytest.fail("no finished game was seen while its set was in play")
    assert re.search(r"shown when the (other game of its set ends|\d+ other games of its "
                     r"set end)", text), text
    assert page.query_selector(".dom") is None and page.query_selector("#player") is None
    wait_for(lambda: c.host.ok("GET", f"/api/games/{game['id']}")["withheld"] is None, 240,
             "its set to end")
    page.goto(c.url + f"/games/{game['id']}")
    assert page.query_selector("p.withheld") is None and page.query_selector(".dom")
