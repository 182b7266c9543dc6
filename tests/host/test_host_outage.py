"""A real `moon host run` on a real PostgreSQL server that is stopped mid-run and started
again (:mod:`arena.host.outage`): the games whose results could not be written are voided
and played again without a restart, none is left ``running``, no result is lost,
duplicated or rated twice, the log says what could not be written in a line, and the
pages answer meanwhile (never a 500)."""

from __future__ import annotations

import re
import time

import psycopg
import pytest
from host_support import (
    HostProcess,
    assert_nothing_lost,
    make_competition,
    started_postgres,
    wait_for,
)

BOTS = ("heuristic", "random", "weak")
@pytest.fixture
def own_postgres():
    """A PostgreSQL server of this test's own (it is stopped and started again)."""
    with started_postgres() as pg:
        yield pg


def finished(host: HostProcess) -> int:
    return int(host.ok("GET", "/api/status", host.admin)["finished"])


def rows(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql).fetchall())


@pytest.mark.slow
@pytest.mark.postgres
def test_a_database_stopped_mid_run_leaves_nothing_stuck_lost_or_rated_twice(
        tmp_path, own_postgres) -> None:
    url = own_postgres.database("moon_outage")
    host = HostProcess(make_competition(tmp_path / "comp"), url).start()
    try:
        host.enter(BOTS)
        wait_for(lambda: finished(host) >= 6, 120, "6 rated games")
        for path in ("/", "/api/leaderboard", "/games"):  # copies in memory
            assert host.call("GET", path).status_code == 200

        # stopped while a game is being played (a loaded machine may be between games)
        def in_flight() -> set[str]:
            return {r[0] for r in rows(url, "SELECT id FROM games WHERE status = 'running'")}

        playing: set[str] = set()
        wait_for(lambda: playing.update(in_flight()) or playing, 120, "a game in flight",
                 every=0.1)
        own_postgres.pause()
        # the first write to fail may be any loop's (the build queue, the phase): the log
        # says only that one, so a game's end is read from its record, which needs no
        # database (the games in flight play on)
        records = host.folder / "records"
        try:
            wait_for(lambda: all((records / f"{g}.json").exists() for g in playing), 120,
                     "the games in flight to end with the database down")
            wait_for(lambda: "cannot write" in host.log.read_text(), 30,
                     "the host to say it cannot write")
        except AssertionError as e:  # what the host said instead
            raise AssertionError(f"{e} ({sorted(playing)}); the host's log ends:\n"
                                 f"{host.log.read_text()[-3000:]}") from None
        # the pages answer meanwhile: what they last read, or 503 (never a 500)
        for path in ("/", "/api/leaderboard", "/games", "/api/status", "/api/games",
                     "/api/bots"):
            r = host.call("GET", path)
            assert r.status_code in (200, 503), (path, r.status_code, r.text)
        time.sleep(3)  # the other games in flight end too, their results unwritten
        own_postgres.resume()

        wait_for(lambda: "the host can write again" in host.log.read_text(), 120,
                 "the host to find its database again")
        n = finished(host)
        running_then = {r[0] for r in rows(url, "SELECT id FROM games WHERE status = "
                                                "'running'")}
        # once as many games again as can run at once have finished twice over, every
        # game that was running then has ended: none is left running
        wait_for(lambda: finished(host) >= n + 6, 180, "6 more rated games")
        running_now = {r[0] for r in rows(url, "SELECT id FROM games WHERE status = "
                                               "'running'")}
        assert running_then & running_now == set()
        status = host.ok("GET", "/api/status", host.admin)
        assert status["running"] <= 2
    finally:
        host.stop()

    log = host.log.read_text()
    assert "Traceback" not in log
    said = [line for line in log.splitlines() if "cannot write" in line]
    assert said and len(said) <= 3, said  # the first, and at most once a minute more
    assert re.search(r"cannot write .+: (OperationalError|AdminShutdown): ", said[0]), \
        said[0]

    assert_nothing_lost(lambda sql: rows(url, sql), "the outage")
