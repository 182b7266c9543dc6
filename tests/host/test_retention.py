"""Retention: old records of retired versions' games are deleted, their results kept
(Host.prune on a real competition folder and its SQLite database, made by the migrations)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from sqlalchemy import select

from arena.host import init_competition
from arena.host.models import Bot, Game, GameSeat, Participant, Version
from arena.host.run import open_host


def test_prune_keeps_results(tmp_path: Path) -> None:
    folder = tmp_path / "comp"
    init_competition(folder, trust_local=True, seed=1)
    toml = folder / "competition.toml"
    toml.write_text(toml.read_text().replace("record_days = 0", "record_days = 30"))
    host, _ = open_host(folder)
    old = dt.datetime.now(dt.UTC) - dt.timedelta(days=40)
    new = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    with host.Session.begin() as s:
        p = Participant(name="p", token_hash="x" * 64)
        s.add(p)
        s.flush()
        bots = [Bot(owner_id=p.id, name=n) for n in ("a", "b", "c")]
        s.add_all(bots)
        s.flush()
        statuses = {"a": "retired", "b": "retired", "c": "active"}
        vs = {b.name: Version(bot_id=b.id, number=1, hash=b.name * 64, archive_sha256="0" * 64,
                              status=statuses[b.name]) for b in bots}
        s.add_all(vs.values())
        s.flush()
        games = {  # id: (versions, finished)
            "old-retired": (("a", "b", "a"), old), "old-active": (("a", "b", "c"), old),
            "new-retired": (("a", "b", "b"), new)}
        for gid, (names, when) in games.items():
            g = Game(id=gid, seed=1, status="finished", termination="target", winner=0,
                     scores=[7, 0, 0], places=[1, 2, 2], hands=2, finished_at=when,
                     record_path=str(host.record_dir / f"{gid}.json"))
            g.seats = [GameSeat(seat=i, version_id=vs[n].id, side=i, place=[1, 2, 2][i],
                                score=[7, 0, 0][i]) for i, n in enumerate(names)]
            s.add(g)
            host.record_dir.mkdir(parents=True, exist_ok=True)
            (host.record_dir / f"{gid}.json").write_text("{}")
            (host.record_dir / "logs").mkdir(exist_ok=True)
            (host.record_dir / "logs" / f"{gid}.seat0.log").write_text("stderr")
    assert host.prune() == 1
    assert not (host.record_dir / "old-retired.json").exists()
    assert not (host.record_dir / "logs" / "old-retired.seat0.log").exists()
    for kept in ("old-active", "new-retired"):  # an active version's, or too recent
        assert (host.record_dir / f"{kept}.json").exists()
    with host.Session() as s:
        g = s.scalar(select(Game).where(Game.id == "old-retired"))
        assert g is not None and g.record_path is None
        assert (g.status, g.scores, g.places) == ("finished", [7, 0, 0], [1, 2, 2])
        assert [x.place for x in g.seats] == [1, 2, 2]
    assert host.prune() == 0
