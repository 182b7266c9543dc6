"""The host's outage parts in process (:mod:`arena.host.outage`): what :class:`Mender`
voids and sends back once the host can write again, worked out by hand from the rows
planted, and :class:`Outage` saying it in one line, then once a minute."""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import pytest
from host_support import make_competition
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from arena.errors import InfrastructureError
from arena.host.models import Bot, Game, GameSeat, Participant, Version, utcnow
from arena.host.outage import Mender, Outage, cannot_write, cause_of, probe_disk, reason
from arena.host.run import open_host


@pytest.fixture
def host(tmp_path: Path):
    h, _ = open_host(make_competition(tmp_path / "comp"), None)
    try:
        yield h
    finally:
        h.close()


def plant(host) -> None:
    """Two versions (7: building, 8: validating), and games running: rated s1-0 (being
    played), rated s1-1 (its result unwritten), validation v7 (of the version being
    built), validation v8 (of the one no builder has any more)."""
    with host.Session.begin() as s:
        p = Participant(name="ann", token_hash="x")
        b = Bot(name="b", owner=p)
        s.add_all([p, b])
        s.flush()
        v7 = Version(id=7, bot=b, number=1, hash="7" * 64, archive_sha256="7" * 64,
                     status="building")
        v8 = Version(id=8, bot=b, number=2, hash="8" * 64, archive_sha256="8" * 64,
                     status="validating")
        s.add_all([v7, v8])
        s.flush()
        for gid, kind, vid in (("s1-0", "rated", 7), ("s1-1", "rated", 7),
                               ("v7-a", "validation", 7), ("v8-a", "validation", 8)):
            g = Game(id=gid, kind=kind, seed=1, status="running", created_at=utcnow(),
                     started_at=utcnow(), dset_id=None, seating=int(gid[-1] == "1"))
            g.seats = [GameSeat(seat=0, version_id=vid, side=0)]
            s.add(g)


def test_mend_voids_what_no_part_plays_and_requeues_what_no_builder_builds(host) -> None:
    plant(host)
    m = Mender(host.Session, host.writer, host.recorder, Outage(), set, set, lambda: None)
    assert m.mend(playing={"s1-0"}, building={7}) == (2, 1)
    with host.Session() as s:
        status = dict(s.execute(select(Game.id, Game.status)).all())
        versions = dict(s.execute(select(Version.id, Version.status)).all())
    # s1-1 voided and queued again as s1-1-r1; v8's validation voided, v8 pending
    assert status == {"s1-0": "running", "s1-1": "voided", "s1-1-r1": "queued",
                      "v7-a": "running", "v8-a": "voided"}
    assert versions == {7: "building", 8: "pending"}
    # mended: nothing more to do
    assert m.mend(playing={"s1-0"}, building={7}) == (0, 0)


def test_an_outage_is_said_once_then_once_a_minute(caplog) -> None:
    now = [100.0]
    o = Outage(clock=lambda: now[0])
    down = OperationalError("SELECT 1", {}, Exception("connection refused\nDETAIL: x"))
    assert cannot_write(down) and cannot_write(OSError(28, "No space left on device"))
    assert not cannot_write(ValueError("a bug"))
    with caplog.at_level(logging.WARNING, logger="arena.host"):
        for t in (100.0, 101.0, 130.0, 161.0, 162.0):
            now[0] = t
            o.hit("the result of game s1-0", down)
        assert o.on and o.failures == 5
        now[0] = 170.0
        o.over(1, 0)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3
    assert lines[0].startswith("cannot write the result of game s1-0: Exception: "
                               "connection refused; games and builds wait")
    assert "still so after 61 s (4 writes failed)" in lines[1]
    assert lines[2].startswith("the host can write again after 70 s: 1 game(s)")
    assert not o.on


def test_a_record_not_written_for_a_full_disk_is_a_failure_to_write() -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    try:
        try:
            raise full
        except OSError as e:
            raise InfrastructureError("game s1-0: its record could not be written") from e
    except InfrastructureError as e:
        unwritten = e
    assert cannot_write(unwritten) and cause_of(unwritten) is full
    assert reason(unwritten) == "OSError: [Errno 28] No space left on device"
    # another infrastructure failure is not the host's failure to write
    assert not cannot_write(InfrastructureError("game s1-0: runner failure: no docker"))
    try:
        raise InfrastructureError("game s1-0: runner failure") from OSError(errno.ENOENT, "x")
    except InfrastructureError as e:
        assert not cannot_write(e)


def test_the_disk_probe_writes_and_leaves_nothing(tmp_path: Path) -> None:
    probe_disk(tmp_path / "records", size=4096)
    assert list((tmp_path / "records").iterdir()) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError):  # a folder that cannot be: raised, for the outage
        probe_disk(tmp_path / "file")
