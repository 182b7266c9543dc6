"""The leaderboard's games, win % and trend
(:class:`arena.host.pages.leaderboard.ResultTally`, which counts each game once as it
finishes) agree with a second model — every finished rated game's seat rows read whole and
counted in Python, as the page did before — on SQLite and PostgreSQL: versions in two
seats of a game, games of other kinds and statuses, more games than the trend's window,
and games that finish between two views."""

from __future__ import annotations

import random
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.host import init_competition
from arena.host.models import Bot, Game, GameSeat, Participant, Version
from arena.host.pages.leaderboard import ResultTally
from arena.host.run import open_host
from arena.web.views import TREND_GAMES, Record, win_figures

NAMES = ("a", "b", "c", "d", "e")
STATUSES = {"a": "active", "b": "active", "c": "active", "d": "retired", "e": "rejected"}


def model(s: Session, version_ids: list[int]) -> dict[int, list[bool]]:
    """The second model: every finished rated game's seats of these versions, in result
    order; per version one entry a game, True where a seat of its placed first."""
    rows = s.execute(select(Game.seq, GameSeat.version_id, GameSeat.place)
                     .join(Game, GameSeat.game_id == Game.id)
                     .where(Game.status == "finished", Game.kind == "rated")).all()
    games: dict[tuple[int, int], bool] = {}
    for seq, vid, place in sorted(rows, key=lambda r: r[0] or 0):
        if vid is not None and vid in version_ids:
            games[seq or 0, vid] = games.get((seq or 0, vid), False) or place == 1
    out: dict[int, list[bool]] = {v: [] for v in version_ids}
    for (_, vid), won in sorted(games.items()):
        out[vid].append(won)
    return out


def figures_by_hand(won: list[bool]) -> dict[str, object]:
    """The page's figures from a version's list of games (the page's formula before)."""
    win = 100.0 * sum(won) / len(won) if won else None
    recent = won[-TREND_GAMES:]
    recent_win = 100.0 * sum(recent) / len(recent) if recent else None
    trend = recent_win - win if win is not None and recent_win is not None and \
        len(won) > len(recent) else None
    return {"played": len(won), "win": win, "trend": trend, "recent": recent_win}


def add_games(s: Session, rng: random.Random, ids: dict[str, int], first: int, n: int,
              seq: int) -> int:
    """``n`` games (numbered from ``first``) of every kind and status, ids in no order
    the results come in; returns the last ``seq`` given."""
    for i in range(first, first + n):
        kind = rng.choice(["rated"] * 6 + ["validation"])
        status = rng.choice(["finished"] * 8 + ["voided", "cancelled", "queued", "running"])
        # three seats; often one version in two of them (fewer bots than seats)
        who = [rng.choice("abcd") for _ in range(3)]
        vids: list[int | None] = [ids[w] for w in who]
        if kind == "validation" and rng.random() < 0.5:
            vids[rng.randrange(3)] = None  # a host's reference bot
        places = [rng.choice((1, 2, 3)) for _ in range(3)]
        if 1 not in places:
            places[rng.randrange(3)] = 1
        done = status == "finished"
        if done:
            seq += 1
        s.add(Game(id=f"g{rng.randrange(10**9):09d}-{i}", kind=kind, seed=i, status=status,
                   seq=seq if done else None, places=places if done else None,
                   seats=[GameSeat(seat=k, version_id=v, side=k, reference="" if v else "ref",
                                   place=places[k] if done else None)
                          for k, v in enumerate(vids)]))
    return seq


def test_tally_agrees_with_counting_every_game(tmp_path: Path, database: str | None) -> None:
    folder = tmp_path / "comp"
    init_competition(folder, trust_local=True, seed=1)
    host, _ = open_host(folder, database, recover=False)
    rng = random.Random(20261201)
    try:
        with host.Session.begin() as s:
            owner = Participant(name="owner", token_hash="x" * 64)
            ids = {}
            for name in NAMES:
                v = Version(bot=Bot(owner=owner, name=name), number=1, hash=name * 40,
                            archive_sha256="0" * 64, status=STATUSES[name])
                s.add(v)
                s.flush()
                ids[name] = v.id
            seq = add_games(s, rng, ids, 0, 90, 0)
        everyone = sorted(ids.values())
        tally = ResultTally()
        for step in range(3):  # a view, games finish, a view...
            with host.Session() as s:
                tally.advance(s)
                want = model(s, everyone)
                finished = s.scalar(select(func.count()).select_from(Game).where(
                    Game.status == "finished", Game.kind == "rated"))
            assert tally.games == finished  # the leaderboard's "N rated games"
            got = tally.records(everyone)
            assert got == {v: Record(len(w), sum(w), tuple(w[-TREND_GAMES:]))
                           for v, w in want.items()}
            assert {v: win_figures(r) for v, r in got.items()} == \
                {v: figures_by_hand(w) for v, w in want.items()}
            if step == 0:  # the data reach what the test is about
                assert got[ids["e"]] == Record(0, 0, ())
                assert all(len(want[ids[n]]) > TREND_GAMES for n in "abc")
                assert win_figures(got[ids["a"]])["trend"] is not None
            with host.Session.begin() as s:
                seq = add_games(s, rng, ids, 90 + 30 * step, 30, seq)
        # a view with nothing new reads nothing
        with host.Session() as s:
            tally.advance(s)
            read = tally.rows_read
            tally.advance(s)
        assert tally.rows_read == read
        with host.Session() as s:  # versions sat in two seats of rated games
            twice = s.scalars(select(GameSeat.game_id).join(Game).where(
                Game.kind == "rated", Game.status == "finished").group_by(
                    GameSeat.game_id, GameSeat.version_id).having(func.count() > 1)).all()
        assert len(twice) > 10
    finally:
        host.close()
