"""The leaderboard's win % and trend count games, not seats: a version that sits in two
seats of a game (a competition with fewer bots than seats) won that game when either of its
seats placed first, and the game counts once — as its "games" column does. The leaderboard's
tally reads each game once, not every game at every view."""

from __future__ import annotations

from pathlib import Path

from web_support import make_competition

from arena.host.models import Bot, Game, GameSeat, Participant, Version
from arena.host.pages.leaderboard import ResultTally
from arena.host.run import open_host
from arena.host.security import digest
from arena.web.views import TREND_GAMES, Record, win_figures

# three 3-player games of versions a and b, places by seat, in the order they finished
GAMES = [
    ("g1", ["a", "a", "b"], [1, 2, 3]),  # a first: a won, b lost
    ("g2", ["a", "b", "a"], [2, 1, 3]),  # b first: a lost (both its seats), b won
    ("g3", ["b", "a", "a"], [3, 2, 1]),  # a first (its second seat): a won, b lost
]
WON = {"a": [True, False, True], "b": [False, True, False]}  # by hand from GAMES
RECORDS = {"a": Record(3, 2, (True, False, True)), "b": Record(3, 1, (False, True, False))}


def test_win_rate_counts_each_game_once(tmp_path: Path) -> None:
    host, _ = open_host(make_competition(tmp_path / "comp"), recover=False)
    try:
        with host.Session.begin() as s:
            owner = Participant(name="owner", token_hash=digest("owner"))
            ids = {}
            for name in ("a", "b"):
                bot = Bot(owner=owner, name=name)
                v = Version(bot=bot, number=1, hash=name * 40, archive_sha256="0" * 64,
                            status="active")
                s.add(v)
                s.flush()
                ids[name] = v.id
            for seq, (gid, seats, places) in enumerate(GAMES, 1):
                s.add(Game(id=gid, kind="rated", seed=seq, status="finished", seq=seq,
                           places=places, seats=[
                               GameSeat(seat=i, version_id=ids[n], side=i, place=p)
                               for i, (n, p) in enumerate(zip(seats, places, strict=True))]))
        tally = ResultTally()
        with host.Session() as s:
            tally.advance(s)
        got = tally.records([ids["a"], ids["b"]])
        assert got == {ids[n]: RECORDS[n] for n in WON}
        assert all(RECORDS[n] == Record(len(w), sum(w), tuple(w)) for n, w in WON.items())
        # a: 2 of 3 = 66.7%; every game is among its last 10, so no trend yet
        assert win_figures(got[ids["a"]]) == {"played": 3, "win": 200 / 3, "trend": None,
                                              "recent": 200 / 3}
        assert tally.rows_read == 9  # three games of three seats
        # 11 more games, a first in each (seats a, b, b): only their seats are read, and
        # the trend keeps the last TREND_GAMES results
        with host.Session.begin() as s:
            for seq in range(4, 15):
                s.add(Game(id=f"g{seq}", kind="rated", seed=seq, status="finished", seq=seq,
                           places=[1, 2, 3], seats=[
                               GameSeat(seat=i, version_id=ids[n], side=i, place=i + 1)
                               for i, n in enumerate("abb")]))
        with host.Session() as s:
            tally.advance(s)
            tally.advance(s)  # nothing new: nothing read
        assert tally.rows_read == 9 + 11 * 3
        assert TREND_GAMES == 10
        got = tally.records([ids["a"], ids["b"]])
        assert got[ids["a"]] == Record(14, 13, (True,) * 10)
        assert got[ids["b"]] == Record(14, 1, (False,) * 10)
    finally:
        host.close()
