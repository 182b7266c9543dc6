"""The host's pages against the number of games: a leaderboard view the old way (every
finished rated game's seat rows of every active version read and counted in Python at
each view) against the new (:class:`arena.host.pages.leaderboard.ResultTally`, which reads
only the games finished since the last view), in one run, at growing numbers of games; and
the other pages and API answers, to show which grow with the games table.

    .venv/bin/python benchmarks/pages.py [--games 10000,50000,100000] [--views 5]
        [--between 3] [--database URL]

A competition folder with its SQLite database (or ``--database``, e.g. a PostgreSQL URL
of an empty database) is filled with synthetic games straight into the tables: 8 bots of
2 versions each (the first retired, the second active; 3 seats a game, a version
sometimes in two of them), finished rated games with a fault in one in 30, and beside
them validation games (1 in 20) and voided ones (1 in 100). At each number of games:

1. the leaderboard's figures (games, win %, trend of every active version) the old way
   and the new, checked equal, median ms of ``views`` views; ``between`` games finish
   before each new view (as in a running competition). Also the new way's first view
   (it counts every game once, as the host's first view after a start does).
2. ``GET /`` (the whole page: its other reads and the template too), the old way and
   the new; then the other pages' and API answers' median ms, new way only.

Prints the figures side by side with the ratio old / new. A figure, not a test: the
machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import func, insert, select  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from arena.host import init_competition  # noqa: E402
from arena.host.app import create_app  # noqa: E402
from arena.host.models import (  # noqa: E402
    Bot,
    FaultRow,
    Game,
    GameSeat,
    Participant,
    Version,
)
from arena.host.pages import leaderboard as board  # noqa: E402
from arena.host.pages.leaderboard import ResultTally  # noqa: E402
from arena.host.routes.leaderboard import leaderboard as api_leaderboard  # noqa: E402
from arena.host.run import open_host  # noqa: E402
from arena.host.service import Host  # noqa: E402
from arena.web.views import TREND_GAMES, Record, win_figures  # noqa: E402

BOTS = 8
T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


# -- the old way: the reference model -------------------------------------------------------
def old_records(s: Session, version_ids: list[int]) -> dict[int, list[bool]]:
    """The leaderboard's read before ResultTally (the leaderboard page's ``_records``): per
    version, its finished rated games in result order, True where it won."""
    out: dict[int, list[bool]] = {v: [] for v in version_ids}
    if not version_ids:
        return out
    rows = s.execute(select(Game.seq, GameSeat.version_id, GameSeat.place)
                     .select_from(GameSeat).join(Game, GameSeat.game_id == Game.id)
                     .where(Game.status == "finished", Game.kind == "rated",
                            GameSeat.version_id.in_(version_ids))
                     .order_by(Game.seq)).all()
    games: dict[tuple[int | None, int], bool] = {}
    for seq, vid, place in rows:
        if vid is not None:
            games[seq, vid] = games.get((seq, vid), False) or place == 1
    for (_, vid), won in games.items():
        out[vid].append(won)
    return out


def old_figures(s: Session, host: Host) -> dict[int, dict[str, Any]]:
    """The old page's figures per active version (its formula, from the lists)."""
    rows = api_leaderboard(s, host)
    results = old_records(s, [r.version_id for r in rows])
    out = {}
    for r in rows:
        wins = results[r.version_id]
        win = 100.0 * sum(wins) / len(wins) if wins else None
        recent = wins[-TREND_GAMES:]
        recent_win = 100.0 * sum(recent) / len(recent) if recent else None
        trend = (recent_win - win) if win is not None and recent_win is not None and \
            len(wins) > len(recent) else None
        out[r.version_id] = {"played": len(wins), "win": win, "trend": trend,
                             "recent": recent_win}
    return out


def new_figures(s: Session, host: Host, tally: ResultTally) -> dict[int, dict[str, Any]]:
    """The page's figures now: the tally advanced by the games since its last view."""
    rows = api_leaderboard(s, host)
    tally.advance(s)
    records = tally.records([r.version_id for r in rows])
    return {r.version_id: win_figures(records[r.version_id]) for r in rows}


class OldTally:
    """Stands in for the host's ResultTally in the page: the old per-view count."""

    def advance(self, s: Session) -> None:
        self.s = s

    @property
    def games(self) -> int:
        """The status's count of finished rated games, as the old page had it made."""
        return self.s.scalar(select(func.count()).select_from(Game).where(
            Game.status == "finished", Game.kind == "rated")) or 0

    def records(self, version_ids: list[int]) -> dict[int, Record]:
        got = old_records(self.s, version_ids)
        return {v: Record(len(w), sum(w), tuple(w[-TREND_GAMES:])) for v, w in got.items()}


def old_way(host: Host) -> OldTally:
    return OldTally()


# -- the synthetic competition --------------------------------------------------------------
class Filler:
    """Writes games straight into the host's tables, in result order."""

    def __init__(self, host: Host, seed: int = 1) -> None:
        self.host = host
        self.rng = random.Random(seed)
        self.n = 0  # games written (every kind and status)
        self.rated = 0  # finished rated games
        self.seq = 0
        with host.Session.begin() as s:
            owner = Participant(name="bench", token_hash="b" * 64)
            self.active: list[int] = []
            self.retired: list[int] = []
            for i in range(BOTS):
                bot = Bot(owner=owner, name=f"bot{i}")
                vs = [Version(bot=bot, number=k + 1, hash=f"{i}{k}".ljust(40, "0"),
                              archive_sha256="0" * 64, status=st, games=0)
                      for k, st in enumerate(("retired", "active"))]
                s.add_all(vs)
                s.flush()
                bot.active_version_id = vs[1].id
                self.active.append(vs[1].id)
                self.retired.append(vs[0].id)

    def fill(self, rated: int) -> None:
        """Write games until ``rated`` finished rated games are in."""
        rng = self.rng
        while self.rated < rated:
            games: list[dict[str, Any]] = []
            seats: list[dict[str, Any]] = []
            faults: list[dict[str, Any]] = []
            for _ in range(min(5000, rated - self.rated)):
                self.n += 1
                gid = f"g{self.n:07d}"
                r = rng.random()
                kind = "validation" if r < 0.05 else "rated"
                status = "voided" if 0.05 <= r < 0.06 else "finished"
                pool = self.active if self.rated > 1000 else self.active + self.retired
                vids = [rng.choice(pool) for _ in range(3)]
                places = rng.sample((1, 2, 3), 3)
                when = T0 + dt.timedelta(seconds=20 * self.n)
                done = status == "finished"
                if done:
                    self.seq += 1
                    self.rated += kind == "rated"
                games.append({"id": gid, "kind": kind, "seed": self.n, "status": status,
                              "termination": "target" if done else None,
                              "winner": places.index(1) if done else None,
                              "scores": [7, 3, 1] if done else None,
                              "places": places if done else None, "hands": 3,
                              "seq": self.seq if done else None, "created_at": when,
                              "started_at": when, "rated": done and kind == "rated",
                              "finished_at": when if done else None, "void_reason": "",
                              "seating": 0, "attempt": 0, "wall_ms": 100, "think_ms": 10})
                seats += [{"game_id": gid, "seat": k, "version_id": v, "side": k,
                           "reference": "", "place": places[k] if done else None,
                           "score": 1 if done else None} for k, v in enumerate(vids)]
                if done and rng.random() < 1 / 30:
                    k = rng.randrange(3)
                    faults.append({"game_id": gid, "seat": k, "version_id": vids[k],
                                   "reason": rng.choice(("timeout", "illegal", "crash")),
                                   "detail": "", "forfeit": False})
            with self.host.Session.begin() as s:
                s.execute(insert(Game), games)
                s.execute(insert(GameSeat), seats)
                if faults:
                    s.execute(insert(FaultRow), faults)
        with self.host.Session.begin() as s:  # the games column, as the host keeps it
            for v in s.scalars(select(Version)):
                v.games = s.scalar(select(func.count(func.distinct(GameSeat.game_id)))
                                   .join(Game).where(Game.status == "finished",
                                                     Game.kind == "rated",
                                                     GameSeat.version_id == v.id)) or 0


def median_ms(f: Callable[[], Any], views: int, between: Callable[[], None] | None = None
              ) -> float:
    times = []
    for _ in range(views):
        if between is not None:
            between()
        t = time.perf_counter()
        f()
        times.append(1000 * (time.perf_counter() - t))
    return statistics.median(times)


def get_ms(client: TestClient, path: str, views: int) -> float:
    """Median ms of ``GET path``."""
    return median_ms(lambda: client.get(path).raise_for_status(), views)


OTHER = ("/api/leaderboard", "/bots/bot3", "/games", "/games?bot=bot3",
         "/games?bot=bot3&result=won", "/games?page=50", "/api/games",
         "/api/games?bot=bot3", "/api/status")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="10000,50000,100000",
                    help="numbers of finished rated games, comma-separated, growing")
    ap.add_argument("--views", type=int, default=5, help="views timed at each number")
    ap.add_argument("--between", type=int, default=3,
                    help="games that finish before each new view")
    ap.add_argument("--database", default=None,
                    help="an empty database's URL (default: the folder's SQLite)")
    ap.add_argument("--others", action="store_true",
                    help="also time the other pages and API answers")
    args = ap.parse_args()
    targets = [int(x) for x in args.games.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-pages-") as tmp:
        folder = Path(tmp) / "comp"
        init_competition(folder, trust_local=True, seed=1)
        host, _ = open_host(folder, args.database, recover=False)
        try:
            run(host, targets, args)
        finally:
            host.close()


def run(host: Host, targets: list[int], args: argparse.Namespace) -> None:
    filler = Filler(host)
    client = TestClient(create_app(host))
    print(f"{'games':>8} {'old ms':>9} {'new ms':>9} {'old/new':>8} {'new first':>10} "
          f"{'GET / old':>10} {'GET / new':>10} {'old/new':>8}", flush=True)
    others: list[tuple[int, dict[str, float]]] = []
    for n in targets:
        filler.fill(n)
        tally = ResultTally()
        with host.Session() as s:
            t = time.perf_counter()
            first = new_figures(s, host, tally)
            first_ms = 1000 * (time.perf_counter() - t)
            assert first == old_figures(s, host), "the tally disagrees with the old count"

        def more() -> None:
            filler.fill(filler.rated + args.between)

        def old_view() -> None:
            with host.Session() as s:
                old_figures(s, host)

        def new_view(tally: ResultTally = tally) -> None:
            with host.Session() as s:
                new_figures(s, host, tally)

        old_ms = median_ms(old_view, args.views, more)
        new_ms = median_ms(new_view, args.views, more)
        with host.Session() as s:
            assert new_figures(s, host, tally) == old_figures(s, host)
        board._TALLIES[host] = (host.ratings_epoch, tally)  # the page's own tally, caught up
        new_page = median_ms(lambda: client.get("/").raise_for_status(), args.views, more)
        keep = board.host_tally
        board.host_tally = old_way  # type: ignore[assignment]
        try:
            old_page = median_ms(lambda: client.get("/").raise_for_status(), args.views, more)
        finally:
            board.host_tally = keep
        print(f"{filler.rated:>8} {old_ms:>9.1f} {new_ms:>9.2f} {old_ms / new_ms:>8.0f} "
              f"{first_ms:>10.1f} {old_page:>10.1f} {new_page:>10.1f} "
              f"{old_page / new_page:>8.1f}", flush=True)
        if args.others:
            others.append((filler.rated, {p: get_ms(client, p, args.views) for p in OTHER}))
    if others:
        print("\nother pages and API answers, median ms (new way):")
        print(f"{'':<28}" + "".join(f"{n:>10}" for n, _ in others))
        for p in OTHER:
            print(f"{p:<28}" + "".join(f"{o[p]:>10.1f}" for _, o in others))


if __name__ == "__main__":
    main()
