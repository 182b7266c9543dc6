"""The results file: SQLite in WAL mode, one transaction per finished game.

A game is written whole (game, seats, hands, faults) in one transaction or not at all, so
a ladder killed at any moment — even ``kill -9`` — loses no finished game, and on resume
the games already in the file are skipped: none is played twice.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moon_sdk.rules import trump_name

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..executor import FinishedGame
    from .schedule import ScheduledGame

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


@dataclass(frozen=True)
class HandRow:
    """A finished hand as stored (for the per-bot statistics)."""

    game_id: str
    bidder: int | None
    bid: int
    made: bool | None
    deltas: list[int]
    """Change of each side's score."""


@dataclass(frozen=True)
class FaultRow:
    """A fault as stored."""

    game_id: str
    seat: int
    bot: str
    reason: str
    """Its key: ``timeout``, ``crash``, ... (:class:`arena.results.FaultReason`)."""
    detail: str
    forfeit: bool


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
            self.db.row_factory = sqlite3.Row  # columns by name
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_DDL)
            rows = {r["key"]: r["value"] for r in self.db.execute("SELECT key, value FROM meta")}
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
        for r in self.db.execute("SELECT key, value FROM meta"):
            try:
                out[r["key"]] = json.loads(r["value"])
            except json.JSONDecodeError:
                out[r["key"]] = r["value"]
        return out

    def set_meta(self, key: str, value: Any) -> None:
        """Store a JSON value under ``key``."""
        with self.tx() as c:
            c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def forfeits_by_bot(self) -> dict[str, int]:
        """How many recorded games each bot forfeited."""
        return {r["bot"]: r["n"] for r in self.db.execute(
            "SELECT bot, COUNT(DISTINCT game_id) AS n FROM faults WHERE forfeit = 1 "
            "GROUP BY bot")}

    def done_ids(self) -> set[str]:
        """Ids of the games already recorded."""
        return {r["id"] for r in self.db.execute("SELECT id FROM games")}

    def add_game(self, scheduled: ScheduledGame, finished: FinishedGame) -> GameRow:
        """Record one finished game of the schedule, all or nothing (the game, its seats,
        hands and faults); returns it as :meth:`games` will give it back.

        ``scheduled`` gives the id, board, duplicate set, seed and who sat where (even when
        the game was played again under another id after a void); ``finished`` all the
        rest. A side is a seat (3 players) or a partnership (seat % 2, 4 players).
        """
        gid = scheduled.game_id
        res = finished.result
        players = len(scheduled.seats)
        side = (lambda s: s) if players == 3 else (lambda s: s % 2)
        scores, places = list(res.scores), list(res.places)
        game = {"id": gid, "board": scheduled.board, "dset": scheduled.dset,
                "seed": scheduled.seed, "players": players,
                "termination": res.termination.key, "winner": res.winner,
                "scores": json.dumps(scores), "places": json.dumps(places),
                "hands": res.hands_played, "wall_ms": finished.wall_ms,
                "think_ms": finished.think_ms,
                "record_path": str(finished.record_path) if finished.record_path else "",
                "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        seats = [{"game_id": gid, "seat": s, "bot": b, "side": side(s),
                  "place": places[side(s)], "score": scores[side(s)]}
                 for s, b in enumerate(scheduled.seats)]
        hands = [{"game_id": gid, "number": h.number, "dealer": h.dealer,
                  "bidder": h.bidder, "bid": h.bid,
                  "trump": None if h.trump is None else trump_name(h.trump),
                  "made": None if h.made is None else int(h.made),
                  "tricks": json.dumps(list(h.tricks_taken)),
                  "deltas": json.dumps(None if h.deltas is None else list(h.deltas)),
                  "finished": int(h.finished)} for h in finished.hands]
        faults = [{"game_id": gid, "seat": f.seat, "bot": scheduled.seats[f.seat],
                   "reason": f.reason.key, "detail": f.detail, "forfeit": int(f.forfeit)}
                  for f in finished.faults]
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
        return GameRow(gid, scheduled.board, scheduled.dset, players, res.termination.key,
                       res.winner, scores, places, list(scheduled.seats), res.hands_played,
                       finished.wall_ms, finished.think_ms)

    def add_voided(self, game_id: str, reason: str, at: str) -> None:
        """Note a game voided by an infrastructure fault (it will be replayed)."""
        with self.tx() as c:
            c.execute("INSERT INTO voided VALUES (?, ?, ?)", (game_id, reason, at))

    def games(self) -> Iterator[GameRow]:
        """Every recorded game."""
        seats: dict[str, list[tuple[int, str]]] = {}
        for r in self.db.execute("SELECT game_id, seat, bot FROM seats"):
            seats.setdefault(r["game_id"], []).append((r["seat"], r["bot"]))
        for r in self.db.execute(
                "SELECT id, board, dset, players, termination, winner, scores, places, hands,"
                " wall_ms, think_ms FROM games ORDER BY rowid"):
            yield GameRow(r["id"], r["board"], r["dset"], r["players"], r["termination"],
                          r["winner"], json.loads(r["scores"]), json.loads(r["places"]),
                          [b for _, b in sorted(seats.get(r["id"], []))], r["hands"],
                          r["wall_ms"], r["think_ms"])

    def finished_hands(self) -> Iterator[HandRow]:
        """Every finished hand of every recorded game (redeals included)."""
        for r in self.db.execute("SELECT game_id, bidder, bid, made, deltas FROM hands "
                                 "WHERE finished = 1"):
            yield HandRow(r["game_id"], r["bidder"], r["bid"],
                          None if r["made"] is None else bool(r["made"]),
                          json.loads(r["deltas"]))

    def faults(self) -> Iterator[FaultRow]:
        """Every recorded fault."""
        for r in self.db.execute("SELECT game_id, seat, bot, reason, detail, forfeit "
                                 "FROM faults"):
            yield FaultRow(r["game_id"], r["seat"], r["bot"], r["reason"], r["detail"],
                           bool(r["forfeit"]))

    def close(self) -> None:
        """Close the file."""
        self.db.close()
