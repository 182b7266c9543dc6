"""The final's page and the challenges page in a real headless browser (Chromium through
Playwright) against `moon host run` on 127.0.0.1 with the example bots: a participant
signs in, asks for a challenge through the form and finds it listed with its result (the
result read again from the game's own record, re-simulated by the rules engine); then the
season freezes, the final plays its boards by itself, and ``/final`` shows the standings
of ``/api/final``, each rating written here from the API's figures in the terminal's
form."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from host_support import HostProcess, make_competition, wait_for

from arena.records.record import GameRecord, verify_record

BOTS = ("heuristic", "random", "weak")


def z(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Season:
    """A competition folder whose three participants (p0 heuristic, p1 random, p2 weak)
    have active versions; :meth:`start` runs its host with a calendar."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        toml = folder / "competition.toml"
        head, _, tail = toml.read_text().partition("[final]")
        # a final of two boards (12 games of 3 entrants), pages read anew at each visit
        self.toml = (head + "[final]\nentrants = 3\nboards = 2\nmax_boards = 2\n\n"
                     + tail.split("\n\n", 1)[1]).replace("\ncache_s = 5 ", "\ncache_s = 0 ")
        self.tokens: list[str] = []

    def start(self, **times: dt.datetime) -> HostProcess:
        cal = {"registration_opens": self.now - dt.timedelta(minutes=2),
               "submissions_open": self.now - dt.timedelta(minutes=1), **times}
        (self.folder / "competition.toml").write_text(
            self.toml + "\n[calendar]\n" + "".join(f"{k} = {z(v)}\n" for k, v in cal.items()))
        return HostProcess(self.folder, None).start()


FAR = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Season]:
    c = Season(make_competition(tmp_path_factory.mktemp("final") / "comp"))
    host = c.start(submissions_close=FAR)
    try:
        c.tokens = [token for token, _ in host.enter(BOTS)]
    finally:
        host.stop()
    yield c


def signed_in(browser: Any, url: str, token: str) -> Any:
    """A page of a new browser context signed in with ``token`` through the form."""
    page = browser.new_context().new_page()
    page.goto(url + "/signin")
    page.fill("#token", token)
    page.click("form.form button[type=submit]")
    page.wait_for_url(url + "/submit")
    return page


def test_the_challenges_form_asks_and_lists_it_with_its_result(browser: Any,
                                                               season: Season) -> None:
    host = season.start(submissions_close=FAR)
    try:
        page = signed_in(browser, host.url, season.tokens[0])  # p0, heuristic's owner
        page.goto(host.url + "/challenges")
        assert page.inner_text("table.challenges tbody").strip() == "none yet"
        # an opponent that is not there: the form again, one line saying so, nothing asked
        page.fill("#opponent", "nobody")
        page.click("form.form button[type=submit]")
        error = page.inner_text(".error")
        assert "nobody" in error and "\n" not in error.strip(), error
        assert host.ok("GET", "/api/challenges", season.tokens[0])["challenges"] == []
        page.fill("#opponent", "random")
        page.click("form.form button[type=submit]")
        page.wait_for_url(host.url + "/challenges")
        [asked] = host.ok("GET", "/api/challenges", season.tokens[0])["challenges"]
        rows = page.eval_on_selector_all(
            "table.challenges tbody tr", "rs => rs.map(r => [...r.cells].map("
            "c => c.innerText.trim()))")
        assert len(rows) == 1 and rows[0][0] == asked["id"]
        assert rows[0][1].startswith("heuristic@") and rows[0][2].startswith("random@")

        def finished() -> list[str] | None:
            page.reload()
            cells = page.eval_on_selector_all("table.challenges tbody tr td",
                                              "cs => cs.map(c => c.innerText.trim())")
            return cells if cells[3] == "finished" else None
        cells = wait_for(finished, 240, "the challenge's result on its page", every=2)
        # its result from its own record, replayed by the rules engine: seat 0 is the
        # one who asked, seat 1 the opponent (3 seats: a side a seat)
        record = host.ok("GET", f"/api/games/{asked['id']}/record", season.tokens[0])
        rec = GameRecord.from_dict(record)
        assert rec.errors == () and verify_record(rec) == []
        assert [x["bot"] for x in asked["game"]["seats"]][:2] == ["heuristic", "random"]
        assert cells[4] == f"{rec.result.places[0]}, {rec.result.places[1]}"
        # never in the ratings: the season's games are rated ones alone
        assert all(g["kind"] == "rated" for g in host.ok(
            "GET", "/api/games", params={"limit": 500})["games"])
        page.context.close()
    finally:
        host.stop()


def terminal_rating(r: dict[str, Any]) -> str:
    """A standing's rating as `moon ladder show` writes it, from the API's figures:
    ``1540 ± 50``, an open one by its bound (``≤ 1320``), ``1500 (n/a)`` without an
    interval."""
    low, high = r["rating_low"], r["rating_high"]
    if low is not None and high is not None:
        return f"{r['rating']:.0f} ± {(high - low) / 2:.0f}"
    if r["rating_open"]:
        return f"≥ {low:.0f}" if low is not None else f"≤ {high:.0f}" if high is not None \
            else "n/a"
    return f"{r['rating']:.0f} (n/a)"


def test_the_final_page_shows_the_standings_of_the_api(browser: Any, season: Season) -> None:
    freeze = dt.datetime.now(dt.UTC).replace(microsecond=0)
    host = season.start(submissions_close=freeze, final_starts=freeze + dt.timedelta(
        seconds=4), ends=FAR)
    try:
        page = browser.new_page()
        wait_for(lambda: host.ok("GET", "/api/final")["state"] == "over", 300,
                 "the final's two boards")
        api = host.ok("GET", "/api/final")
        page.goto(host.url + "/final")
        assert page.get_attribute(".final-state", "data-state") == "over"
        assert f"{api['games_finished']} games finished" in page.inner_text(".final-state")
        rows = page.eval_on_selector_all(
            "tr.final-row", "rs => rs.map(r => [r.dataset.bot, Number(r.dataset.versionId), "
            "...['place', 'bot', 'owner', 'version', 'rating'].map("
            "k => r.querySelector('td.' + k).innerText.trim())])")
        assert len(api["standings"]) == 3 and api["fitted_games"] == 12
        assert rows == [[r["bot"], r["version_id"], r["place"], r["bot"], r["owner"],
                         r["version"], terminal_rating(r)] for r in api["standings"]]
        assert {r[0] for r in rows} == set(BOTS)
        assert re.search(rf"{api['fitted_games']} games on {api['boards_done']} whole "
                         r"board\(s\)", page.inner_text(".final-note"))
        seed = page.inner_text(".final-seed code")
        assert seed == api["seed"] and seed
        page.close()
    finally:
        host.stop()
