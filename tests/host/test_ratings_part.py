"""The host's ratings part (arena.host.ratings.Ratings), in process on a real
competition's SQLite database: `moon host rerate`'s recomputation gives back what the
live updates gave, and a batch fit is stored with its count of games."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from host_support import open_in_process
from sqlalchemy import select
from test_recorder import finished, running_game, versions

from arena.host.app import create_app
from arena.host.models import Bot, Meta, RatingPoint, Version
from arena.host.pages.bots import rating_lines
from arena.host.ratings import batch_fit
from arena.host.recorder import Counters, Recorder
from arena.host.service import Host
from arena.ladder.ratings import rate
from arena.ladder.schedule import make_schedule
from arena.ladder.store import GameRow


@pytest.fixture
def host(tmp_path: Path):
    # a quick fit
    h = open_in_process(tmp_path / "comp", lambda t: re.sub(r"(?m)^bootstrap = \d+",
                                                            "bootstrap = 20", t))
    try:
        yield h
    finally:
        h.close()


def ratings(host: Host) -> dict[int, tuple[int, float, float]]:
    with host.Session() as s:
        return {v.id: (v.games, v.mu, v.sigma) for v in s.query(Version)}


def test_rerate_gives_back_the_live_ratings_and_a_fit_is_stored(host: Host) -> None:
    ids = versions(host)
    rec = Recorder(host.Session, host.writer, 3, 5, Counters())
    seatings = [("a", "b", "c"), ("c", "a", "b")]
    for k, names in enumerate(seatings):
        running_game(host, f"g{k}", [ids[n] for n in names])
        rec.record_now(finished(host, f"g{k}"))
    live = ratings(host)
    assert {games for games, _, _ in live.values()} == {2}
    with host.Session.begin() as s:  # a damaged table
        for v in s.query(Version):
            v.mu, v.sigma, v.games = 0.0, 1.0, 9
    assert host.ratings.rerate() == 2
    again = ratings(host)
    assert again.keys() == live.keys()
    for vid, (games, mu, sigma) in live.items():
        assert again[vid][0] == games
        assert again[vid][1:] == pytest.approx((mu, sigma), abs=1e-9)
    assert host.ratings.batch_now() == 2
    with host.Session() as s:
        batch = s.get(Meta, "batch")
        assert batch is not None and batch.value["games"] == 2
        assert all(v.rating is not None for v in s.query(Version))


def c_last_games(ids: dict[str, int], boards: int) -> list[GameRow]:
    """A 3-player ladder of versions a, b, c on the project's schedule: c last in every
    game, a ahead of b in 2, 3, 4, 5 of the six seatings on boards 0, 1, 2, 3, ..."""
    a, b, c = (str(ids[n]) for n in "abc")
    seatings = sorted(set(itertools.permutations([a, b, c])))
    out = []
    for g in make_schedule([a, b, c], 3, boards, seed=1):
        a_ahead = seatings.index(tuple(g.seats)) < 2 + g.board % 4
        places = [3 if s == c else 1 if (s == a) == a_ahead else 2 for s in g.seats]
        out.append(GameRow(g.game_id, g.board, g.dset, 3, "target", None, [0, 0, 0],
                           places, list(g.seats), 1, 0, 0))
    return out


def test_the_leaderboard_and_bot_pages_show_places_and_head_to_head(host: Host) -> None:
    # c always last over 8 boards: a and b anchor the scale and keep two-sided ratings;
    # c is a bound. Counted by hand: a ahead of b in 2+3+4+5 of 24 seatings every 4
    # boards, 28 of their 48 games; b ahead of c in all 48.
    ids = versions(host)
    games = c_last_games(ids, 8)
    ratings, table = batch_fit(games, bootstrap=50)
    a, b, c = (ids[n] for n in "abc")
    assert table["anchor"] == sorted([a, b])
    key = f"{min(a, b)}-{max(a, b)}"
    assert table["h2h"][key] == [round(28 / 48 if a < b else 20 / 48, 6), 48]
    host.ratings.store_batch(len(games), ratings, table)
    client = TestClient(create_app(host))
    board = {r["bot"]: r for r in client.get("/api/leaderboard").json()}
    assert [board[n]["anchor"] for n in "abc"] == [True, True, False]
    assert board["a"]["rating"] + board["b"]["rating"] == pytest.approx(3000, abs=0.1)
    assert board["c"]["rating_open"] and board["c"]["rating_low"] is None
    assert (board["a"]["h2h_next"], board["a"]["h2h_next_games"]) == (round(28 / 48, 4), 48)
    assert (board["b"]["h2h_next"], board["b"]["h2h_next_games"]) == (1.0, 48)
    assert board["c"]["h2h_next"] is None
    assert not any(r["gap_beyond"] for r in board.values())
    # Holm over 2 claims: b over c is a sweep of 8 boards, p = 1/256 ≤ 2.5% / 2: its own
    # place; a over b (28 of 48) is not told apart
    assert [board[n]["place"] for n in "abc"] == ["1=", "1=", "3"]
    front = client.get("/").text
    assert "1500 is the average of the versions the games can place" in front
    assert "58% of 48" in front and "100% of 48" in front
    page = client.get("/bots/c").text
    assert page.count('class="h2h-row"') == 2 and "0%" in page and ">48<" in page


def test_a_gap_beyond_its_games_is_marked(host: Host) -> None:
    # the host demo's shape, stored by hand: heuristic 2150, random 780 (a gap of 1370
    # implies random ahead once in 2,660 comparisons), and their games: 199 of 200 to
    # heuristic, whose 95% interval ends at 99.91% < 99.96%: beyond
    ids = versions(host, "hr")
    with host.Session.begin() as s:
        for n, r in (("h", 2150.0), ("r", 780.0)):
            v = s.get(Version, ids[n])
            assert v is not None
            v.rating, v.rating_low, v.rating_high = r, r - 50, r + 50
        h, r = ids["h"], ids["r"]
        s.merge(Meta(key="batch", value={"games": 200, "open": [], "anchor": [],
                                         "places": {str(h): "1", str(r): "2"},
                                         "h2h": {f"{min(h, r)}-{max(h, r)}": [
                                             0.995 if h < r else 0.005, 200]}}))
    client = TestClient(create_app(host))
    board = client.get("/api/leaderboard").json()
    assert [x["bot"] for x in board] == ["h", "r"]
    assert board[0]["gap_beyond"] and board[0]["h2h_next"] == 0.995
    front = client.get("/").text
    assert "99.5% of 200" in front and 'class="beyond"' in front
    assert "read the games, not the gap" in front
    page = client.get("/bots/r").text
    assert "+1370" not in page and "-1370" in page and 'class="beyond"' in page
    assert ">0.5%<" in page                       # random ahead in 1 of 200: not "0%"


def played(host: Host, games: list[GameRow]) -> None:
    """Each version's rated games, as the recorder counts them (one a game it sat in)."""
    with host.Session.begin() as s:
        for v in s.scalars(select(Version)):
            v.games = sum(str(v.id) in g.seats for g in games)


def test_a_bot_chart_is_the_leaderboard_after_each_fit(host: Host) -> None:
    # c is last in every game: a bot that never wins. Eight fits, one board more each,
    # stored as the host stores them; a's version 2 takes its seats from board 4 on. Each
    # chart point must be the ladder's own fit of the same games (`moon ladder show`'s
    # `rate`, the leaderboard's scale), and c's figure, its bound, must fall as it loses.
    ids = versions(host)
    with host.Session.begin() as s:
        a1 = s.get(Version, ids["a"])
        assert a1 is not None
        a2 = Version(bot_id=a1.bot_id, number=2, hash="A" * 64, archive_sha256="0" * 64,
                     status="active")
        s.add(a2)
        s.flush()
        ids["a2"] = a2.id
    games = [g if g.board < 4 else dataclasses.replace(g, seats=[
        str(ids["a2"]) if x == str(ids["a"]) else x for x in g.seats])
        for g in c_last_games(ids, 8)]
    expected: dict[str, list[tuple[int, float, float | None, float | None, bool]]] = {}
    last_played: dict[str, int] = {}
    for k in range(1, 9):
        sub = [g for g in games if g.board < k]
        played(host, sub)
        host.ratings.store_batch(len(sub), *batch_fit(sub, bootstrap=50))
        bots = sorted({b for g in sub for b in g.seats}, key=int)
        for r in rate(sub, bots, bootstrap=50):
            # a point while it plays (under 50 games: a game more is enough), and at the
            # last fit its figure then: a retired version's line runs on to now
            mine = sum(r.bot in g.seats for g in sub)
            if mine > last_played.get(r.bot, 0) or k == 8:
                last_played[r.bot] = mine
                expected.setdefault(r.bot, []).append(
                    (len(sub), r.rating, r.low, r.high, not r.determined))
    with host.Session() as s:
        for name in "abc":
            b = s.scalar(select(Bot).where(Bot.name == name))
            assert b is not None
            lines = rating_lines(s, b.versions)
            want = [(v.number, expected[str(v.id)]) for v in b.versions]
            assert [(ln.number, [tuple(p) for p in ln.points]) for ln in lines] == want
        c = s.scalar(select(Bot).where(Bot.name == "c"))
        assert c is not None
        [line] = rating_lines(s, c.versions)
        # one board: no interval (n/a), and a figure the prior holds; not drawn
        assert line.points[0].low is line.points[0].high is None
        assert line.points[0].shown is None
        bounds = line.points[1:]
        shown = [p.shown for p in bounds]
        assert all(p.open and p.low is None and p.high is not None for p in bounds)
        assert shown == [p.high for p in bounds]  # drawn at its bound, "≤ 1320"
        # never rising while its opponents stay the same: fits 2-4 (a, b) and 5-8 (a,
        # a's version 2, b). At fit 5 the anchor takes in a's version 2, rated from one
        # board, and c's bound loosens with it: a bound, drawn as one, not a figure
        for part in (shown[:3], shown[3:]):
            assert all(x is not None and y is not None and y < x
                       for x, y in itertools.pairwise(part)), shown
        assert all(x is not None and x < 1800 for x in shown)
        assert shown[-1] is not None and shown[-1] < 1500 and shown[-1] < min(shown[:3])
        # 6 to 48 games a fit from board 1 to 8 (6 a board): a's version 1 plays boards 0-3
        a = s.scalar(select(Bot).where(Bot.name == "a"))
        assert a is not None
        first, second = rating_lines(s, a.versions)
        assert [p.games for p in first.points] == [6, 12, 18, 24, 48]  # then now
        assert [p.games for p in second.points] == [6 * k for k in range(5, 9)]
        # at most 3 fits: the evenly spaced 6, 30 (7 / 2 = 3.5, to even: index 4) and 48
        # games, and every version's first and last (a2's first: 30 games)
        thin = rating_lines(s, a.versions, most=3)
        assert [[p.games for p in ln.points] for ln in thin] == [[6, 48], [30, 48]]
    # the page draws the same: a line a version, its marker, c's hollow bounds
    client = TestClient(create_app(host))
    page = client.get("/bots/a").text
    assert page.count('class="version-line"') == 2 and ">#2</text>" in page
    assert 'data-version="2" data-points="4"' in page
    page = client.get("/bots/c").text
    assert page.count('class="bound"') == 7 and "μ−3σ" not in page
    board = {r["bot"]: r for r in client.get("/api/leaderboard").json()}
    assert board["c"]["rating_high"] == pytest.approx(shown[-1], abs=0.05)  # 1 decimal


@pytest.fixture
def any_host(tmp_path: Path, database: str | None):
    """A competition in process on SQLite, then on PostgreSQL (migration 0010 on both)."""
    from arena.host import init_competition
    from arena.host.run import open_host

    init_competition(tmp_path / "comp", trust_local=True, seed=1)
    h, _ = open_host(tmp_path / "comp", database, recover=False)
    try:
        yield h
    finally:
        h.close()


def test_a_version_keeps_a_point_each_two_percent_of_its_games(any_host: Host) -> None:
    # a fit a minute would keep 130,000 points a version in a season: a version gets a
    # point when it has none, then once it has played 2% more games (1 more while under
    # 50); the chart still ends on its rating of the last fit
    host = any_host
    ids = versions(host)
    games = c_last_games(ids, 4)
    fit = batch_fit(games, bootstrap=20)

    def points() -> list[tuple[int, int]]:
        with host.Session() as s:
            return [(p.games, p.played) for p in s.scalars(
                select(RatingPoint).where(RatingPoint.version_id == ids["c"])
                .order_by(RatingPoint.id))]

    def count_c(n: int) -> None:
        with host.Session.begin() as s:
            v = s.get(Version, ids["c"])
            assert v is not None
            v.games = n

    seen = [(24, 24)]  # c sat in all 24 games
    played(host, games)
    host.ratings.store_batch(24, *fit)
    assert points() == seen
    host.ratings.store_batch(24, *fit)  # a refit of the same games (a restart)
    assert points() == seen
    for n, kept in ((25, True), (1000, True), (1019, False), (1020, True), (1040, False)):
        count_c(n)
        host.ratings.store_batch(n, *fit)
        if kept:
            seen.append((n, n))
        assert points() == seen, n
    with host.Session() as s:
        c = s.scalar(select(Bot).where(Bot.name == "c"))
        assert c is not None
        [line] = rating_lines(s, c.versions)
    assert [p.games for p in line.points] == [24, 25, 1000, 1020, 1040]  # and now


def test_a_refit_moves_a_bound_that_stays_open(any_host: Host) -> None:
    # c first in every game: it never finished behind another, so its rating is open
    # above (a lower bound alone, "≥ 1610") after every fit, and a refit over more boards
    # moves its figure and bound but leaves its upper end null: the batch's write of a
    # version's rating and rating_low alone, which only such a version makes, on both
    # databases. Each fit stored must be the ladder's own (`moon ladder show`'s `rate`).
    host = any_host
    ids = versions(host)
    games = [dataclasses.replace(g, places=[4 - p for p in g.places])  # c last -> first
             for g in c_last_games(ids, 8)]
    c = str(ids["c"])
    assert all(g.places[g.seats.index(c)] == 1 for g in games)

    def stored() -> dict[str, tuple[float | None, float | None, float | None]]:
        with host.Session() as s:
            return {str(v.id): (v.rating, v.rating_low, v.rating_high)
                    for v in s.scalars(select(Version))}

    seen = []
    for boards in (4, 8):
        sub = [g for g in games if g.board < boards]
        played(host, sub)
        host.ratings.store_batch(len(sub), *batch_fit(sub, bootstrap=20))
        want = {r.bot: (r.rating, r.low, r.high)
                for r in rate(sub, sorted({b for g in sub for b in g.seats}, key=int),
                              bootstrap=20)}
        assert stored() == want, boards
        seen.append(want[c])
    (r4, low4, high4), (r8, low8, high8) = seen
    assert high4 is None and high8 is None  # open above, both times
    assert low4 is not None and low8 is not None and (r4, low4) != (r8, low8)
