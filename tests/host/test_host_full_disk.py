"""A real `moon host run` whose records (and, in one case, its SQLite database) are on a
small disk that is filled mid-run and freed again (:mod:`arena.host.outage`): the games
whose records or results could not be written are voided and played again without a
restart, none is left ``running``, no result is lost, duplicated or rated twice, every
finished game has its record, the log says what could not be written in a line (no
traceback), and the pages answer meanwhile (never a 500). The twin of
tests/host/test_host_outage.py (a database stopped)."""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from host_support import (
    HostProcess,
    assert_nothing_lost,
    fill,
    make_competition,
    small_disk_at,
    sqlite_rows,
    wait_for,
)

BOTS = ("heuristic", "random", "weak")
DISK = "32m"
"""The small disk's size (tmpfs)."""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of :data:`DISK` mounted for this test; skipped where mount is not allowed."""
    with small_disk_at(tmp_path / "disk", DISK) as disk:
        yield disk




def finished(host: HostProcess) -> int:
    return int(host.ok("GET", "/api/status", host.admin)["finished"])


@pytest.mark.slow
@pytest.mark.parametrize("database_too", [False, True], ids=["records", "records+database"])
def test_a_full_disk_mid_run_leaves_nothing_stuck_lost_or_rated_twice(
        tmp_path: Path, small_disk: Path, database_too: bool) -> None:
    folder = make_competition(tmp_path / "comp")
    (small_disk / "records").mkdir()
    if (folder / "records").exists():
        os.rmdir(folder / "records")
    (folder / "records").symlink_to(small_disk / "records")
    db = small_disk / "host.sqlite" if database_too else folder / "host.sqlite"
    rows = sqlite_rows(db)
    host = HostProcess(folder, f"sqlite:///{db}" if database_too else None).start()
    try:
        host.enter(BOTS)
        wait_for(lambda: finished(host) >= 6, 120, "6 rated games")

        def in_flight() -> set[str]:
            return {r[0] for r in rows("SELECT id FROM games WHERE status = 'running' "
                                           "AND kind = 'rated'")}

        playing: set[str] = set()
        wait_for(lambda: playing.update(in_flight()) or playing, 120, "a game in flight",
                 every=0.1)
        filler = fill(small_disk)
        try:
            wait_for(lambda: "cannot write" in host.log.read_text(), 120,
                     "the host to say it cannot write")
        except AssertionError as e:  # what the host said instead
            raise AssertionError(f"{e} ({sorted(playing)}); the host's log ends:\n"
                                 f"{host.log.read_text()[-3000:]}") from None
        # the pages answer meanwhile: what they last read, or 503 (never a 500)
        for path in ("/", "/api/leaderboard", "/games", "/api/status", "/api/games",
                     "/api/bots"):
            r = host.call("GET", path)
            assert r.status_code in (200, 503), (path, r.status_code, r.text)
        time.sleep(3)  # the other games in flight end too, unwritten
        filler.unlink()

        wait_for(lambda: "the host can write again" in host.log.read_text(), 120,
                 "the host to find it can write again")
        n = finished(host)
        running_then = {r[0] for r in rows("SELECT id FROM games WHERE status = "
                                               "'running'")}
        wait_for(lambda: finished(host) >= n + 6, 180, "6 more rated games")
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
    assert said and len(said) <= 3, said  # the first, and at most once a minute more
    # and the referee a line a game whose record it could not write, no more
    per_game = Counter(re.findall(r"match (\S+): cannot write the record", log))
    assert set(per_game.values()) <= {1}, per_game
    assert re.search(r"cannot write .+: (OSError|OperationalError): .*(No space left|"
                     r"disk is full)", said[0]), said[0]

    assert_nothing_lost(rows, "the full disk", small_disk / "records")
