"""The results file: SQLite in WAL mode, one transaction per finished game.

A game is written whole (game, seats, hands, faults) in one transaction or not at all, so
a ladder killed at any moment — even ``kill -9`` — loses no finished game, and on resume
the games already in the file are skipped: none is played twice.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError

SCHEMA_VERSION = 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY, board INTEGER NOT NULL, dset TEXT NOT NULL, seed INTEGER NOT NULL,
    players INTEGER NOT NULL, termination TEXT NOT NULL, winner INTEGER,
    scores TEXT NOT NULL, places TEXT NOT NULL, hands INTEGER NOT NULL,
    wall_ms INTEGER NOT NULL, think_ms INTEGER NOT NULL, record_path TEXT,
    finished_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    game_id TEXT NOT NULL REFERENCES games(id), seat INTEGER NOT NULL, bot TEXT NOT NULL,
    side INTEGER NOT NULL, place INTEGER NOT NULL, score INTEGER NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS hands (
    game_id TEXT NOT NULL REFERENCES games(id), number INTEGER NOT NULL,
    dealer INTEGER NOT NULL, bidder INTEGER, bid INTEGER NOT NULL, trump TEXT,
    made INTEGER, tricks TEXT, deltas TEXT, finished INTEGER NOT NULL,
    PRIMARY KEY (game_id, number)
);
CREATE TABLE IF NOT EXISTS faults (
    game_id TEXT NOT NULL REFERENCES games(id), seat INTEGER NOT NULL, bot TEXT NOT NULL,
    reason TEXT NOT NULL, detail TEXT NOT NULL, forfeit INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS voided (
    game_id TEXT NOT NULL, reason TEXT NOT NULL, at TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class GameRow:
    """A finished game as stored."""

    game_id: str
    board: int
    dset: str
    players: int
    termination: str
    winner: int | None
    scores: list[int]
    places: list[int]
    seats: list[str]
    """Bot per seat."""
    hands: int
    wall_ms: int
    think_ms: int


class ResultsStore:
    """One ladder's results file.

    Raises (on open):
        ConfigError: the file is not a results file, is damaged, or belongs to another
            ladder (a different identity).
    """

    def __init__(self, path: Path, identity: str | None = None,
                 meta: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_DDL)
            rows = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as e:
            raise ConfigError(f"{self.path} is not a usable results file ({e}); "
                              "give another --results path") from None
        if identity is not None:
            have = rows.get("identity")
            if have is None:
                with self.tx() as c:
                    c.execute("INSERT INTO meta VALUES ('identity', ?)", (identity,))
                    c.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                              (str(SCHEMA_VERSION),))
                    for k, v in (meta or {}).items():
                        c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, json.dumps(v)))
            elif have != identity:
                raise ConfigError(
                    f"{self.path} holds results of a different ladder (other bots, seed, rules "
                    "or time control); resume only with the same ladder file, or give a new "
                    "--results path")
        elif "identity" not in rows:
            raise ConfigError(f"{self.path} holds no ladder results")

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, et: object, ev: object, tb: object) -> None:
            self.db.execute("COMMIT" if et is None else "ROLLBACK")

    def tx(self) -> ResultsStore._Tx:
        """A write transaction (``with store.tx() as db: ...``)."""
        return ResultsStore._Tx(self.db)

    def meta(self) -> dict[str, Any]:
        """The stored ladder description."""
        out: dict[str, Any] = {}
        for k, v in self.db.execute("SELECT key, value FROM meta"):
            try:
                out[k] = json.loads(v)
            except json.JSONDecodeError:
                out[k] = v
        return out

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key``."""
        with self.tx() as c:
            c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def forfeits_by_bot(self) -> dict[str, int]:
        """How many recorded games each bot forfeited."""
        return dict(self.db.execute(
            "SELECT bot, COUNT(DISTINCT game_id) FROM faults WHERE forfeit = 1 GROUP BY bot"))

    def done_ids(self) -> set[str]:
        """Ids of the games already recorded."""
        return {r[0] for r in self.db.execute("SELECT id FROM games")}

    def add_game(self, game: dict[str, Any], seats: list[dict[str, Any]],
                 hands: list[dict[str, Any]], faults: list[dict[str, Any]]) -> None:
        """Record one finished game, all or nothing."""
        with self.tx() as c:
            c.execute(
                "INSERT INTO games VALUES (:id, :board, :dset, :seed, :players, :termination,"
                " :winner, :scores, :places, :hands, :wall_ms, :think_ms, :record_path,"
                " :finished_at)", game)
            c.executemany("INSERT INTO seats VALUES (:game_id, :seat, :bot, :side, :place,"
                          " :score)", seats)
            c.executemany("INSERT INTO hands VALUES (:game_id, :number, :dealer, :bidder, :bid,"
                          " :trump, :made, :tricks, :deltas, :finished)", hands)
            c.executemany("INSERT INTO faults VALUES (:game_id, :seat, :bot, :reason, :detail,"
                          " :forfeit)", faults)

    def add_voided(self, game_id: str, reason: str, at: str) -> None:
        """Note a game voided by an infrastructure fault (it will be replayed)."""
        with self.tx() as c:
            c.execute("INSERT INTO voided VALUES (?, ?, ?)", (game_id, reason, at))

    def games(self) -> Iterator[GameRow]:
        """Every recorded game."""
        seats: dict[str, list[tuple[int, str]]] = {}
        for gid, seat, bot in self.db.execute("SELECT game_id, seat, bot FROM seats"):
            seats.setdefault(gid, []).append((seat, bot))
        for r in self.db.execute(
                "SELECT id, board, dset, players, termination, winner, scores, places, hands,"
                " wall_ms, think_ms FROM games ORDER BY rowid"):
            yield GameRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]),
                          json.loads(r[7]), [b for _, b in sorted(seats.get(r[0], []))],
                          r[8], r[9], r[10])

    def close(self) -> None:
        """Close the file."""
        self.db.close()
