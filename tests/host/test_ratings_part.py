"""The host's ratings part (arena.host.ratings.Ratings), in process on a real
competition's SQLite database: `moon host rerate`'s recomputation gives back what the
live updates gave, and a batch fit is stored with its count of games."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from host_support import open_in_process
from test_recorder import finished, running_game, versions

from arena.host.models import Meta, Version
from arena.host.recorder import Counters, Recorder
from arena.host.service import Host


@pytest.fixture
def host(tmp_path: Path):
    # a quick fit
    h = open_in_process(tmp_path / "comp", lambda t: re.sub(r"(?m)^bootstrap = \d+",
                                                            "bootstrap = 20", t))
    try:
        yield h
    finally:
        h.close()


def ratings(host: Host) -> dict[int, tuple[int, float, float]]:
    with host.Session() as s:
        return {v.id: (v.games, v.mu, v.sigma) for v in s.query(Version)}


def test_rerate_gives_back_the_live_ratings_and_a_fit_is_stored(host: Host) -> None:
    ids = versions(host)
    rec = Recorder(host.Session, host.writer, 3, 5, Counters())
    seatings = [("a", "b", "c"), ("c", "a", "b")]
    for k, names in enumerate(seatings):
        running_game(host, f"g{k}", [ids[n] for n in names])
        rec.record_now(finished(host, f"g{k}"))
    live = ratings(host)
    assert {games for games, _, _ in live.values()} == {2}
    with host.Session.begin() as s:  # a damaged table
        for v in s.query(Version):
            v.mu, v.sigma, v.games = 0.0, 1.0, 9
    assert host.ratings.rerate() == 2
    again = ratings(host)
    assert again.keys() == live.keys()
    for vid, (games, mu, sigma) in live.items():
        assert again[vid][0] == games
        assert again[vid][1:] == pytest.approx((mu, sigma), abs=1e-9)
    assert host.ratings.batch_now() == 2
    with host.Session() as s:
        batch = s.get(Meta, "batch")
        assert batch is not None and batch.value["games"] == 2
        assert all(v.rating is not None for v in s.query(Version))
