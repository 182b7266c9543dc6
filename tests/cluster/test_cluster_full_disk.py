"""`moon host run --cluster` whose records are on a small disk that is filled mid-run and
freed again: the twin of tests/host/test_host_full_disk.py for the Dask executor, whose
workers send each game's record back for the host to write. A record the host cannot
write voids its game once the host can write again (played again, never rated), none is
left ``running``, none is lost or rated twice, and the log says so in a line a game and
one line of the host's, with no traceback."""

from __future__ import annotations

import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))
from host_support import (  # noqa: E402
    HostProcess,
    assert_nothing_lost,
    fill,
    make_competition,
    small_disk_at,
    sqlite_rows,
    wait_for,
)

BOTS = ("heuristic", "random", "weak")




@pytest.mark.slow
def test_a_full_disk_under_the_cluster_leaves_nothing_stuck_lost_or_rated_twice(
        cluster, tmp_path: Path) -> None:
    folder = make_competition(tmp_path / "comp")
    with small_disk_at(tmp_path / "disk") as disk:
        (disk / "records").mkdir()
        if (folder / "records").exists():
            os.rmdir(folder / "records")
        (folder / "records").symlink_to(disk / "records")
        db = folder / "host.sqlite"
        rows = sqlite_rows(db)
        host = HostProcess(folder, None, args=("--cluster", cluster.address)
                           ).start(timeout=90.0)

        def finished() -> int:
            return int(host.ok("GET", "/api/status", host.admin)["finished"])

        try:
            host.enter(BOTS)
            wait_for(lambda: finished() >= 6, 180, "6 rated games")
            playing: set[str] = set()

            def in_flight() -> set[str]:
                return {r[0] for r in rows("SELECT id FROM games WHERE status = "
                                               "'running' AND kind = 'rated'")}

            wait_for(lambda: playing.update(in_flight()) or playing, 120,
                     "a game in flight", every=0.1)
            filler = fill(disk)
            try:
                wait_for(lambda: "cannot write" in host.log.read_text(), 120,
                         "the host to say it cannot write")
            except AssertionError as e:
                raise AssertionError(f"{e} ({sorted(playing)}); the host's log ends:\n"
                                     f"{host.log.read_text()[-3000:]}") from None
            for path in ("/", "/api/leaderboard", "/games", "/api/status", "/api/games"):
                r = host.call("GET", path)
                assert r.status_code in (200, 503), (path, r.status_code, r.text)
            time.sleep(3)  # the other games in flight end too, unwritten
            filler.unlink()

            wait_for(lambda: "the host can write again" in host.log.read_text(), 120,
                     "the host to find it can write again")
            n = finished()
            running_then = {r[0] for r in rows("SELECT id FROM games WHERE status = "
                                                   "'running'")}
            wait_for(lambda: finished() >= n + 6, 180, "6 more rated games")
            running_now = {r[0] for r in rows("SELECT id FROM games WHERE status = "
                                                  "'running'")}
            assert running_then & running_now == set()
            assert host.ok("GET", "/api/status", host.admin)["running"] <= 2
        finally:
            host.stop()

        log = host.log.read_text()
        assert "Traceback" not in log, log[-3000:]
        said = [line for line in log.splitlines() if " arena.host " in line
                and "cannot write" in line]
        assert said and len(said) <= 3, said
        # what it could not write: a game's record, for a full disk
        assert re.search(r"cannot write the record of game \S+: OSError: .*No space left",
                         said[0]), said[0]
        # no temporary file of a record left half-written on the disk
        assert [p.name for p in (disk / "records").iterdir()
                if p.name.endswith(".tmp")] == []
        # and a line a game whose record could not be written, as the local pool's
        per_game = Counter(re.findall(r"match (\S+): cannot write the record", log))
        assert per_game and set(per_game.values()) == {1}, per_game

        assert_nothing_lost(rows, "the full disk", disk / "records")
