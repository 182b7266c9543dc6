"""The build queue (arena.host.builds.Builds), in process on a real competition's database
(SQLite and PostgreSQL): pending versions are taken in turns between participants, a bot's versions
one at a time, and a version made active retires its bot's previous one."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_support import open_in_process

from arena.host.builds import for_participant
from arena.host.models import Bot, Participant, Version
from arena.host.service import Host


@pytest.fixture
def host(tmp_path: Path, database: str | None):
    h = open_in_process(tmp_path / "comp", database=database)
    try:
        yield h
    finally:
        h.close()


def pending(host: Host, owner: str, bot: str, number: int = 1) -> int:
    """A pending version ``number`` of ``owner``'s ``bot`` (both made if new); its id."""
    with host.Session.begin() as s:
        p = s.query(Participant).filter_by(name=owner).one_or_none()
        if p is None:
            p = Participant(name=owner, token_hash=(owner * 64)[:64])
            s.add(p)
            s.flush()
        b = s.query(Bot).filter_by(name=bot).one_or_none()
        if b is None:
            b = Bot(owner_id=p.id, name=bot)
            s.add(b)
            s.flush()
        v = Version(bot_id=b.id, number=number, hash=f"{bot}{number}" * 20,
                    archive_sha256="0" * 64, status="pending")
        s.add(v)
        s.flush()
        return v.id


def test_participants_take_turns_and_a_bot_builds_one_version_at_a_time(host: Host) -> None:
    x1 = pending(host, "ann", "x")
    x2 = pending(host, "ann", "x", 2)
    y1 = pending(host, "ann", "y")
    z1 = pending(host, "bob", "z")
    b = host.builds
    assert b.next_pending() == (x1, "x")  # nobody has had a build: the oldest version
    assert b.next_pending() == (z1, "z")  # bob never had one, ann just did
    assert b.next_pending() == (y1, "y")  # x2 waits for x1, still building
    assert b.next_pending() is None
    b.set_status(x1, "active")
    assert b.next_pending() == (x2, "x")
    b.set_status(x2, "active")
    with host.Session() as s:
        v1, v2 = s.get(Version, x1), s.get(Version, x2)
        assert v1 is not None and v2 is not None
        assert (v1.status, v2.status, v2.bot.active_version_id) == ("retired", "active", x2)


def test_a_reason_names_no_folder_of_the_host(host: Host) -> None:
    b = host.builds
    b.set_status(pending(host, "ann", "x"), "rejected", f"build: {host.folder}/store/x: bad")
    with host.Session() as s:
        [v] = s.query(Version).all()
        assert v.reason == "build: <competition>/store/x: bad"
    assert for_participant(f"{host.folder}/a", host.folder) == "<competition>/a"
