"""The matchmaker's choice of the next game (arena.host.matchmaker.Matchmaker.claim), in
process on a real competition's SQLite database: with 2 slots a version sits in at most
one running rated game while other games can be played, and a queued game of a version
that left the pool is cancelled; when nothing else can be played, the cap gives way."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from arena.host import init_competition
from arena.host.models import Bot, Game, Participant, Version
from arena.host.run import open_host
from arena.host.service import Host
from arena.ladder.schedule import board_seed


@pytest.fixture
def host(tmp_path: Path):
    folder = tmp_path / "comp"
    init_competition(folder, trust_local=True, seed=1)
    toml = folder / "competition.toml"
    toml.write_text(re.sub(r"(?m)^concurrency = \d+", "concurrency = 2", toml.read_text()))
    h, _ = open_host(folder)
    try:
        yield h
    finally:
        h.close()


def active(host: Host, names: str) -> dict[int, str]:
    """An active version per name (the reference bot's code); bot names by version id."""
    with host.Session.begin() as s:
        p = Participant(name="p", token_hash="x" * 64)
        s.add(p)
        s.flush()
        out = {}
        for n in names:
            b = Bot(owner_id=p.id, name=n)
            s.add(b)
            s.flush()
            v = Version(bot_id=b.id, number=1, hash=n * 64, archive_sha256="0" * 64,
                        status="active")
            s.add(v)
            s.flush()
            b.active_version_id = v.id
            shutil.copytree(host.folder / "reference" / "random",
                            host.store / "versions" / v.hash)
            out[v.id] = n
        return out


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
    # every version at its cap: the oldest held-back game goes
    gid3, _, _ = mm.claim()
    assert gid3 == "s1-1" and seats(host, gid3) == first
    with host.Session() as s:
        running = sorted(g.id for g in s.query(Game).filter_by(status="running"))
        assert running == ["s1-0", "s1-1", "s2-0"]


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
