"""The games lists' filters (:func:`arena.host.routes.games.with_seat`: its games, won, lost;
walked from the newest game while the bot is active, read from its own seats when it is
not) list and count what a second model does — every game read and filtered in Python —
on SQLite and PostgreSQL; and what a page reads at each view is a range of an index, not
every game (SQLite's query plans, from migration 0004)."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.orm import Session, selectinload

from arena.host import init_competition
from arena.host.db import make_engine, migrate
from arena.host.models import Bot, FaultRow, Game, GameSeat, Participant, Version
from arena.host.pages.leaderboard import ResultTally
from arena.host.routes.games import list_games, with_seat
from arena.host.run import open_host

T0 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
# bot -> its versions' statuses: "on" plays (its second version), "off" no longer does
BOTS = {"on": ("retired", "active"), "off": ("retired", "disabled"), "x": ("active",),
        "y": ("active",)}


def fill(s: Session, rng: random.Random) -> dict[str, list[int]]:
    owner = Participant(name="owner", token_hash="x" * 64)
    ids: dict[str, list[int]] = {}
    for name, statuses in BOTS.items():
        bot = Bot(owner=owner, name=name)
        vs = [Version(bot=bot, number=k + 1, hash=f"{name}{k}".ljust(40, "0"),
                      archive_sha256="0" * 64, status=st) for k, st in enumerate(statuses)]
        s.add_all(vs)
        s.flush()
        ids[name] = [v.id for v in vs]
    every = [v for vs in ids.values() for v in vs]
    seq = 0
    for i in range(400):
        # the versions that no longer play, in the first games only; "on" in few of the
        # newest, so the walk from the newest game goes past games without it
        pool = every if i < 150 else ids["on"][1:] * (i % 7 == 0) + ids["x"] + ids["y"]
        kind = "validation" if i % 13 == 0 else "rated"
        status = rng.choice(["finished"] * 6 + ["voided", "cancelled", "queued"])
        done = status == "finished"
        seq += done
        places = [rng.choice((1, 2, 3)) for _ in range(3)]
        # games created at the same moment, in an order their ids are not
        s.add(Game(id=f"g{rng.randrange(10**6):06d}-{i}", kind=kind, seed=i, status=status,
                   created_at=T0 + dt.timedelta(minutes=i // 3), seq=seq if done else None,
                   termination="target" if done else None, places=places if done else None,
                   seats=[GameSeat(seat=k, version_id=rng.choice(pool), side=k,
                                   place=places[k] if done else None) for k in range(3)]))
    return ids


def model(s: Session, vids: list[int], result: str | None) -> list[str]:
    """The rated games of ``vids``, newest first, read whole and filtered here."""
    out = []
    for g in s.scalars(select(Game).where(Game.kind == "rated").options(
            selectinload(Game.seats))):
        mine = [x for x in g.seats if x.version_id in vids]
        won = any(x.place == 1 for x in mine)
        if mine and (result is None or g.status == "finished" and won == (result == "won")):
            out.append(g)
    out.sort(key=lambda g: (g.created_at.replace(tzinfo=None), g.id), reverse=True)
    return [g.id for g in out]


def test_lists_agree_with_reading_every_game(tmp_path: Path, database: str | None) -> None:
    folder = tmp_path / "comp"
    init_competition(folder, trust_local=True, seed=1)
    host, _ = open_host(folder, database, recover=False)
    try:
        with host.Session.begin() as s:
            ids = fill(s, random.Random(4))
        with host.Session() as s:
            for bot, vids in ids.items():
                versions = select(Version.id).join(Bot).where(Bot.name == bot)
                for result in (None, "won", "lost"):
                    want = model(s, vids, result)
                    counted, listed = with_seat(s, versions)
                    if result is not None:
                        c_won, l_won = with_seat(s, versions, GameSeat.place == 1)
                        if result == "lost":
                            c_won, l_won = ~c_won, ~l_won
                        fin = Game.status == "finished"
                        counted, listed = counted & fin & c_won, listed & fin & l_won
                    q = select(Game.id).where(Game.kind == "rated")
                    total = s.scalar(select(func.count()).select_from(
                        q.where(counted).subquery()))
                    assert total == len(want) > 5, (bot, result)
                    for offset in (0, 4):
                        got = s.scalars(q.where(listed).order_by(
                            Game.created_at.desc(), Game.id.desc()).limit(5).offset(offset))
                        assert list(got) == want[offset:offset + 5], (bot, result, offset)
                # the API's list: by bot, and by version
                page = list_games(None, s, bot=bot, version=None, status=None,
                                  termination=None, kind="rated", limit=6, offset=2)
                assert (page.total, [g.id for g in page.games]) == (len(want := model(
                    s, vids, None)), want[2:8])
                for v in vids:
                    page = list_games(None, s, bot=None, version=v, status="finished",
                                      termination=None, kind="rated", limit=6, offset=0)
                    want = [g for g in model(s, [v], None)
                            if s.get(Game, g).status == "finished"]  # type: ignore[union-attr]
                    assert (page.total, [g.id for g in page.games]) == (len(want), want[:6])
    finally:
        host.close()


def _plan(s: Session, stmt: Any) -> str:
    sql = str(stmt.compile(s.get_bind(), compile_kwargs={"literal_binds": True}))
    return " | ".join(row[-1] for row in s.connection().exec_driver_sql(
        "EXPLAIN QUERY PLAN " + sql))


def test_a_view_reads_a_range_of_an_index(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'host.sqlite'}")
    migrate(engine)
    try:
        with Session(engine) as s:
            # the games finished since the leaderboard's last view (the statement the
            # tally makes, as it makes it): a range of the index, then each game's seats
            statements: list[str] = []

            def seen(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
                statements.append(statement)

            event.listen(engine, "before_cursor_execute", seen)
            ResultTally().advance(s)
            event.remove(engine, "before_cursor_execute", seen)
            (sql,) = [x for x in statements if "game_seats" in x]
            plan = " | ".join(row[-1] for row in s.connection().exec_driver_sql(
                "EXPLAIN QUERY PLAN " + sql, ("finished", "rated", 100)))
            assert "ix_games_status_kind_seq (status=? AND kind=? AND seq>?)" in plan, plan
            assert "SCAN" not in plan, plan
            # the newest rated games, a page of them: read from the end of an index
            newest = select(Game.id).where(Game.kind == "rated").order_by(
                Game.created_at.desc(), Game.id.desc()).limit(50).offset(50)
            plan = _plan(s, newest)
            assert "ix_games_kind_created (kind=?)" in plan and "TEMP B-TREE" not in plan, plan
            # the newest forfeits: read from the end of those of the index
            forfeits = select(Game.id).where(
                Game.kind == "rated", Game.termination == "forfeit", Game.status == "finished"
            ).order_by(Game.created_at.desc(), Game.id.desc()).limit(50)
            plan = _plan(s, forfeits)
            assert "ix_games_kind_termination (kind=? AND termination=?)" in plan, plan
            assert "TEMP B-TREE" not in plan, plan
            # a bot's faults: its versions' own
            plan = _plan(s, select(FaultRow.reason).where(FaultRow.version_id.in_((1, 2))))
            assert "ix_faults_version_id (version_id=?)" in plan, plan
    finally:
        engine.dispose()
