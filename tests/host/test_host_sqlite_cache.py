"""The host's SQLite connections keep a small page cache (arena/host/db.py
``SQLITE_CACHE_KIB``): the status's count of finished rated games reads every game's row,
and with SQLite's default cache (2,000 KiB) the memory that query took grew with the games
(0.3 MB per 1,000 games, in each thread that ran it), so a long-running host grew with its
games. Measured with SQLite's own counters (``sqlite3_memory_highwater``) on a real database
brought up by the host's migrations, holding 20,000 finished games."""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime as dt
import sqlite3

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from arena.host.db import SQLITE_CACHE_KIB, make_engine, migrate
from arena.host.models import Game

GAMES = 20_000


def _sqlite_lib() -> ctypes.CDLL:
    """The libsqlite3 Python's sqlite3 module runs on (its counters are the ones that move)."""
    import _sqlite3  # noqa: F401 - loads it first, so that the same copy is found

    name = ctypes.util.find_library("sqlite3") or "libsqlite3.so.0"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        pytest.skip("libsqlite3 not found by ctypes (SQLite's memory cannot be read)")
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    lib.sqlite3_memory_highwater.restype = ctypes.c_int64
    lib.sqlite3_memory_highwater.argtypes = [ctypes.c_int]
    return lib


def _peak(lib: ctypes.CDLL, run) -> int:  # type: ignore[no-untyped-def]
    """Bytes SQLite took at most while ``run()`` ran, above what it held before."""
    before = lib.sqlite3_memory_used()
    lib.sqlite3_memory_highwater(1)  # the high-water mark starts again from now
    run()
    return int(lib.sqlite3_memory_highwater(0) - before)


def test_counting_every_finished_game_takes_no_more_memory_than_the_small_cache(tmp_path):
    lib = _sqlite_lib()
    db = tmp_path / "host.sqlite"
    engine = make_engine(f"sqlite:///{db}")
    migrate(engine)
    now = dt.datetime(2026, 1, 1)
    with engine.begin() as conn:
        conn.execute(insert(Game), [
            {"id": f"s{i // 6}-{i % 6}", "kind": "rated" if i % 10 else "validation",
             "seating": i % 6, "attempt": 0, "seed": 1_000_003 * i, "status": "finished",
             "termination": "normal", "winner": i % 3, "scores": [7, 3, 1],
             "places": [1, 2, 3], "hands": 9, "wall_ms": 900, "think_ms": 40,
             "record_path": f"/competition/records/s{i // 6}-{i % 6}.json",
             "void_reason": "", "rated": True, "seq": i + 1, "created_at": now,
             "finished_at": now} for i in range(GAMES)])
    rated = GAMES - GAMES // 10  # every tenth game is a validation game

    # the model of before: a connection with SQLite's default cache takes ~2 MB for a
    # count that reads every game's row (NOT INDEXED: as before migration 0003 gave the
    # count an index of its own; any query that scans the table does the same): the
    # measure sees the cache
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA cache_size=-2000")
    query = ("SELECT count(*) FROM games NOT INDEXED "
             "WHERE status = 'finished' AND kind = 'rated'")
    counted: list[int] = []
    default_peak = _peak(lib, lambda: counted.append(raw.execute(query).fetchone()[0]))
    raw.close()
    assert counted == [rated]
    assert default_peak > 1_500_000, default_peak

    # the host's own connections, the status's own count
    engine.dispose()  # new connections, empty caches
    with Session(engine) as s:
        stmt = select(func.count()).select_from(Game).where(Game.status == "finished",
                                                            Game.kind == "rated")
        host_peak = _peak(lib, lambda: counted.append(s.scalar(stmt) or 0))
    assert counted[-1] == rated
    # the cache's size and the statement's own memory, whatever the number of games
    assert host_peak < SQLITE_CACHE_KIB * 1024 * 1.4 + 200_000, host_peak


def test_the_count_of_finished_rated_games_reads_an_index_alone(tmp_path):
    # migration 0003: the count the status and the batch loop make is answered from the
    # index on games(status, kind) (since 0004 games(status, kind, seq)), without reading
    # the table's rows
    engine = make_engine(f"sqlite:///{tmp_path / 'host.sqlite'}")
    migrate(engine)
    with Session(engine) as s:
        stmt = select(func.count()).select_from(Game).where(Game.status == "finished",
                                                            Game.kind == "rated")
        sql = str(stmt.compile(engine, compile_kwargs={"literal_binds": True}))
        plan = " ".join(row[-1] for row in s.connection().exec_driver_sql(
            "EXPLAIN QUERY PLAN " + sql))
    assert "USING COVERING INDEX ix_games_status_kind_seq" in plan, plan
    engine.dispose()
