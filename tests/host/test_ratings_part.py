"""The host's ratings part (arena.host.ratings.Ratings), in process on a real
competition's SQLite database: `moon host rerate`'s recomputation gives back what the
live updates gave, and a batch fit is stored with its count of games."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from host_support import open_in_process
from test_recorder import finished, running_game, versions

from arena.host.app import create_app
from arena.host.models import Meta, Version
from arena.host.ratings import batch_fit
from arena.host.recorder import Counters, Recorder
from arena.host.service import Host
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
