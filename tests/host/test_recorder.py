"""The recorder (arena.host.recorder), in process on a real competition's database (SQLite
and PostgreSQL, made by the migrations): a finished game is written once and never twice,
a forfeit run disables a version, and a voided rated game is queued again until its tries
are used."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from host_support import add_active_versions, open_in_process
from sqlalchemy import select

from arena.core.results import Fault, FaultReason, GameResult, Termination
from arena.host.executor import FinishedGame, GameRequest
from arena.host.models import Game, GameSeat, Version
from arena.host.recorder import MAX_ATTEMPTS, Counters, Recorder
from arena.host.service import Host
from arena.host.writer import Writer


@pytest.fixture
def host(tmp_path: Path, database: str | None):
    h = open_in_process(tmp_path / "comp", database=database)
    try:
        yield h
    finally:
        h.close()


def versions(host: Host, names: str = "abc") -> dict[str, int]:
    """One active version per bot name; their ids."""
    return add_active_versions(host, names)


def running_game(host: Host, gid: str, seats: list[int], kind: str = "rated",
                 attempt: int = 0) -> None:
    with host.Session.begin() as s:
        g = Game(id=gid, kind=kind, seed=7, status="running", attempt=attempt, dset_id=None)
        g.seats = [GameSeat(seat=i, version_id=v, side=i) for i, v in enumerate(seats)]
        s.add(g)


def finished(host: Host, gid: str, faults: tuple[Fault, ...] = ()) -> FinishedGame:
    """Seat 0 wins 7-2-0 after 3 hands."""
    result = GameResult(Termination.TARGET, 0, (7, 2, 0), (1, 2, 3), 3)
    req = GameRequest(gid, (), host.ruleset, "moon3", 7, host.tc)
    return FinishedGame(req, result, faults, (), None, 1200, 300)


def state(host: Host, gid: str) -> tuple:
    with host.Session() as s:
        g = s.get(Game, gid)
        assert g is not None
        vs = [s.get(Version, x.version_id) for x in g.seats]
        return (g.status, g.seq, g.rated, len(g.faults), [x.place for x in g.seats],
                [(v.games, v.mu, v.sigma) for v in vs if v is not None])


def test_a_finished_game_is_recorded_once_and_never_twice(host: Host) -> None:
    ids = versions(host)
    running_game(host, "g1", [ids["a"], ids["b"], ids["c"]])
    writer = Writer()
    rec = Recorder(host.Session, writer, 3, 5, Counters())
    fg = finished(host, "g1", (Fault(1, FaultReason.TIMEOUT, "slow", False),))
    asyncio.run(rec.record(fg))
    first = state(host, "g1")
    status, seq, rated, faults, places, rows = first
    assert (status, seq, rated, faults, places) == ("finished", 1, True, 1, [1, 2, 3])
    assert [games for games, _, _ in rows] == [1, 1, 1]
    mus = [mu for _, mu, _ in rows]
    assert mus[0] > 25.0 > mus[2] and all(sigma < 25 / 3 for _, _, sigma in rows)
    asyncio.run(rec.record(fg))  # the same game again: nothing changes
    writer.shutdown()
    assert state(host, "g1") == first


def test_forfeits_in_a_row_disable_a_version(host: Host) -> None:
    ids = versions(host)
    rec = Recorder(host.Session, Writer(), 3, 2, Counters())
    forfeit = (Fault(2, FaultReason.CRASH, "exit 1", True),)
    for gid in ("g1", "g2"):
        running_game(host, gid, [ids["a"], ids["b"], ids["c"]])
        rec.record_now(finished(host, gid, forfeit))
    rec.writer.shutdown()
    with host.Session() as s:
        c = s.get(Version, ids["c"])
        assert c is not None and c.status == "disabled" and c.forfeits_in_row == 2
        assert c.reason.startswith("disabled after 2 forfeits in a row (forfeit_limit = 2)")
        assert "crash in game g2 (exit 1)" in c.reason
        assert c.bot.active_version_id is None
        a = s.get(Version, ids["a"])
        assert a is not None and (a.status, a.forfeits_in_row, a.games) == ("active", 0, 2)


def test_a_voided_rated_game_is_played_again_until_its_tries_are_used(host: Host) -> None:
    ids = versions(host)
    counters = Counters()
    rec = Recorder(host.Session, Writer(), 3, 5, counters)
    seats = [ids["a"], ids["b"], ids["c"]]
    running_game(host, "s1-0", seats)
    running_game(host, f"s1-1-r{MAX_ATTEMPTS - 1}", seats, attempt=MAX_ATTEMPTS - 1)
    running_game(host, "v1-x", seats, kind="validation")

    async def void_all() -> None:
        for gid in ("s1-0", f"s1-1-r{MAX_ATTEMPTS - 1}", "v1-x"):
            await rec.void_game(gid, "the runner failed")
        await rec.void_game("s1-0", "twice")  # no longer running: left as it is

    asyncio.run(void_all())
    rec.writer.shutdown()
    assert counters.voided == 3
    with host.Session() as s:
        games = {g.id: g for g in s.scalars(select(Game))}
        assert sorted(games) == ["s1-0", "s1-0-r1", f"s1-1-r{MAX_ATTEMPTS - 1}", "v1-x"]
        assert games["s1-0"].void_reason == "the runner failed"
        again = games["s1-0-r1"]
        assert (again.status, again.attempt, again.kind) == ("queued", 1, "rated")
        assert [x.version_id for x in again.seats] == seats


def test_a_set_counts_for_its_versions_once_its_last_game_has_finished(host: Host) -> None:
    # a set of three games: the first two finish (not played whole yet), a third is
    # voided and replayed, and its replay's finish completes the set: one set each
    from arena.host.models import DuplicateSet

    ids = versions(host)
    with host.Session.begin() as s:
        s.add(DuplicateSet(id=1, seed=7))
    seats = [ids["a"], ids["b"], ids["c"]]
    for k in range(3):
        running_game(host, f"s1-{k}", seats)
    with host.Session.begin() as s:
        for k in range(3):
            g = s.get(Game, f"s1-{k}")
            assert g is not None
            g.dset_id = 1
    rec = Recorder(host.Session, Writer(), 3, 5, Counters())

    def sets() -> list[int]:
        with host.Session() as s:
            return [s.get(Version, v).sets for v in seats]  # type: ignore[union-attr]

    rec.record_now(finished(host, "s1-0"))
    rec.record_now(finished(host, "s1-1"))
    assert sets() == [0, 0, 0]
    rec._void_game("s1-2", "the runner failed")  # replayed as s1-2-r1, queued
    assert sets() == [0, 0, 0]
    with host.Session.begin() as s:
        again = s.get(Game, "s1-2-r1")
        assert again is not None and again.status == "queued"
        again.status = "running"
    rec.record_now(finished(host, "s1-2-r1"))
    rec.writer.shutdown()
    assert sets() == [1, 1, 1]
