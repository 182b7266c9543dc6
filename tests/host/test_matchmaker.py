"""The matchmaker's choice of the next game (arena.host.matchmaker.Matchmaker.claim), in
process on a real competition's database (SQLite and PostgreSQL): with 2 slots a version
sits in at most one running rated game while other games can be played, and a queued game
of a version that left the pool is cancelled; when nothing else can be played, the cap
gives way."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
from pathlib import Path

import pytest
from host_support import add_active_versions, open_in_process

from arena.errors import InfrastructureError
from arena.host.executor import GameSlots
from arena.host.models import Game, Version
from arena.host.service import Host
from arena.ladder.schedule import board_seed


@pytest.fixture
def host(tmp_path: Path, database: str | None):
    h = open_in_process(tmp_path / "comp", lambda t: re.sub(r"(?m)^concurrency = \d+",
                                                            "concurrency = 2", t), database)
    try:
        yield h
    finally:
        h.close()


def active(host: Host, names: str) -> dict[int, str]:
    """An active version per name (the reference bot's code); bot names by version id."""
    return {v: n for n, v in add_active_versions(host, names, code="random").items()}


def seats(host: Host, gid: str) -> set[int | None]:
    with host.Session() as s:
        g = s.get(Game, gid)
        assert g is not None
        return {x.version_id for x in g.seats}


def test_a_version_sits_in_one_game_of_two_while_others_can_play(host: Host) -> None:
    names = active(host, "abcdef")
    mm = host.matchmaker
    assert mm.per_version() == 1
    gid, seed, bots = mm.claim()
    assert gid == "s1-0" and seed == board_seed(1, 1)
    first = seats(host, gid)
    assert len(first) == 3 and sorted(b.name for b in bots) == sorted(names[v] for v in first)
    # the other set is of the three versions not playing: all of them
    gid2, _, _ = mm.claim()
    assert gid2 == "s2-0" and seats(host, gid2) == set(names) - first
    # every version at its cap, and both sets' boards in play: a third set is made, and
    # its first game goes (a held-back game, as nothing else can be played)
    gid3, _, _ = mm.claim()
    assert gid3 == "s3-0" and len(seats(host, gid3)) == 3
    with host.Session() as s:
        running = sorted(g.id for g in s.query(Game).filter_by(status="running"))
        assert running == ["s1-0", "s2-0", "s3-0"]


def test_two_games_of_one_set_never_run_at_once(host: Host) -> None:
    # three versions, three seats: every set seats all three, each at its cap of one
    # game once one runs; before, the cap gave way to the set's next game (s1-1 beside
    # s1-0, one board on two tables, the live view of one showing the other's hands)
    names = active(host, "abc")
    mm = host.matchmaker
    assert [mm.claim()[0], mm.claim()[0]] == ["s1-0", "s2-0"]
    assert seats(host, "s1-0") == seats(host, "s2-0") == set(names)
    with host.Session.begin() as s:
        g = s.get(Game, "s1-0")
        assert g is not None
        g.status = "finished"
    # s1's board is free again: its next game goes before a third set is made
    assert mm.claim()[0] == "s1-1"
    with host.Session() as s:
        running = sorted(g.id for g in s.query(Game).filter_by(status="running"))
        sets = {g.dset_id for g in s.query(Game)}
    assert running == ["s1-1", "s2-0"] and sets == {1, 2}


def test_a_queued_game_of_a_version_gone_is_cancelled(host: Host) -> None:
    names = active(host, "abc")
    mm = host.matchmaker
    assert mm.claim()[0] == "s1-0"
    gone = next(iter(names))
    with host.Session.begin() as s:
        v = s.get(Version, gone)
        assert v is not None
        v.status = "retired"
    # the 2 left sit in s1-0, at their cap: a set of theirs is made, and its first game
    # goes, as nothing else can be played
    gid, _, _ = mm.claim()
    assert gid == "s2-0" and seats(host, gid) == set(names) - {gone}
    with host.Session() as s:
        left = {g.id: (g.status, g.void_reason) for g in s.query(Game) if g.id[:2] == "s1"}
    del left["s1-0"]
    assert set(left) == {f"s1-{k}" for k in range(1, 6)}
    assert set(left.values()) == {
        ("cancelled", "a version in it left the pool before it was played")}


def test_a_game_ended_after_its_caller_was_cancelled_logs_no_traceback(caplog) -> None:
    """At a stop the matchmaker's task is cancelled while its game goes on; the game then
    ends in an InfrastructureError (aborted by the stopping referee) that no one awaits:
    it is read, not logged by asyncio as "Task exception was never retrieved"."""
    class Aborting:
        def __init__(self) -> None:
            self.go = asyncio.Event()

        async def play(self, req):
            await self.go.wait()
            raise InfrastructureError(f"game {req.game_id} aborted: the referee is shutting down")

    async def main() -> None:
        slots = GameSlots(1)
        slots.executor = ex = Aborting()  # type: ignore[assignment]
        req = type("Req", (), {"game_id": "s1-0"})()
        caller = asyncio.create_task(slots.play(req))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        caller.cancel()  # the host stops: its caller goes first
        with contextlib.suppress(asyncio.CancelledError):
            await caller
        ex.go.set()  # then the referee aborts the game
        for _ in range(3):
            await asyncio.sleep(0)
        gc.collect()

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(main())
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()], \
        caplog.text
