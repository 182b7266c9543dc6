"""The results file: SQLite in WAL mode, one transaction per finished game.

A game is written whole (game, seats, hands, faults) in one transaction or not at all, so
a ladder killed at any moment — even ``kill -9`` — loses no finished game, and on resume
the games already in the file are skipped: none is played twice.

A run that plays into a results file holds it (:func:`hold_results`: an exclusive
``flock`` on ``<results>.lock`` beside it, released by the operating system when the
process ends, however it ends), so a second run on the same file is refused at once.

The file's *settings* (rules, master seed, time control, dealing) are fixed when it is
created: a run with other settings is refused, and the message names each one that differs
(:func:`settings_difference`). Its bots and boards may grow.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moon_sdk.rules import trump_name

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..executor.local import FinishedGame
    from .schedule import ScheduledGame

SCHEMA_VERSION = 2
"""2: each seat's bot version is recorded, and the identity covers the settings only (the
bots may change). Files of version 1 can be shown, not resumed."""

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
    version TEXT NOT NULL DEFAULT '',
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
    versions: list[str] = field(default_factory=list)
    """Version of the bot per seat (``""`` where the file does not say: version 1 files)."""


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
    """Its key: ``timeout``, ``crash``, ... (:class:`arena.core.results.FaultReason`)."""
    detail: str
    forfeit: bool


def lock_path(results: Path) -> Path:
    """The lock file of a results file: ``<results>.lock`` beside it."""
    return results.with_name(results.name + ".lock")


def hold_results(results: Path, command: str) -> int:
    """Hold ``results`` for this process: an exclusive, non-blocking ``flock`` on
    :func:`lock_path` (created if need be), which then names the holder (pid, ``command``,
    since when). The operating system releases it when the returned descriptor is closed or
    the process ends, even by ``kill -9``: a lock is never left stale.

    Raises:
        ConfigError: another process holds it (the message names that process).
    """
    path = lock_path(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        try:
            holder = path.read_text(errors="replace").strip().splitlines()[0][:200]
        except (OSError, IndexError):
            holder = "another process"
        raise ConfigError(
            f"{results} is in use by another run ({holder}): wait for it to end (or stop "
            "it), then run again; two runs on one results file would play the same games"
        ) from None
    since = dt.datetime.now().isoformat(timespec="seconds")
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}, {command}, since {since}\n".encode(), 0)
    return fd


def _changed(there: Any, here: Any, what: str) -> list[str]:
    if isinstance(there, dict) and isinstance(here, dict):
        return [f"{what} {k} = {json.dumps(there.get(k))} there, {json.dumps(here.get(k))} here"
                for k in sorted(set(there) | set(here)) if there.get(k) != here.get(k)]
    return [] if there == here else [f"{what} = {json.dumps(there)} there, "
                                     f"{json.dumps(here)} here"]


def settings_difference(there: dict[str, Any], here: dict[str, Any]) -> list[str]:
    """Each setting that differs between a results file's settings (``there``) and a run's
    (``here``) (:func:`arena.ladder.config.settings_of`), one phrase each, with both values:
    ``seed = 1 there, 2 here``, ``ruleset option min_bid = 3 there, 4 here``,
    ``time control decision_ms = 2000 there, 1000 here``."""
    out = _changed(there.get("seed"), here.get("seed"), "seed")
    out += _changed(there.get("ruleset") or {}, here.get("ruleset") or {}, "ruleset option")
    out += _changed(there.get("time_control") or {}, here.get("time_control") or {},
                    "time control")
    for key, what in (("deal_version", "the rules engine's deal version"),
                      ("board_seeds", "the board seeds' derivation")):
        out += _changed(there.get(key), here.get(key), what)
    return out


class ResultsStore:
    """One ladder's (or A/B match's) results file.

    Args:
        path: the SQLite file (created with its folder if need be).
        identity: the settings' hash of the run that opens it to play
            (:meth:`arena.ladder.config.LadderConfig.identity`); None to read only.
        meta: with ``identity``, what to store about the run: ``kind`` (``"ladder"`` or
            ``"match"``) and ``settings`` are checked against the file's, the rest is
            stored as given when the file is new.
        hold: with ``identity``, what this run is (``"moon ladder run"``): the file is held
            for it (:func:`hold_results`) until :meth:`close`; None holds nothing.

    Raises (on open):
        ConfigError: another run holds the file; the file is not a results file, is
            damaged, holds results of the other kind or of other settings (the message says
            which, with both values, and what to do), or was written by an earlier arena
            and cannot be resumed.
    """

    def __init__(self, path: Path, identity: str | None = None,
                 meta: dict[str, Any] | None = None, hold: str | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._hold: int | None = None
        if identity is not None and hold is not None:
            self._hold = hold_results(self.path, hold)
        try:
            self._open(identity, meta or {})
        except BaseException:
            self._release()
            raise

    def _open(self, identity: str | None, meta: dict[str, Any]) -> None:
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.row_factory = sqlite3.Row  # columns by name
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_DDL)
            seat_cols = {r["name"] for r in self.db.execute("PRAGMA table_info(seats)")}
            if "version" not in seat_cols:  # a version 1 file: its seats say no version
                self.db.execute("ALTER TABLE seats ADD COLUMN version TEXT NOT NULL "
                                "DEFAULT ''")
            rows = {r["key"]: r["value"] for r in self.db.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as e:
            raise ConfigError(f"{self.path} is not a usable results file ({e}); "
                              "give another --results path") from None
        if identity is None:
            if "identity" not in rows:
                raise ConfigError(f"{self.path} holds no ladder or match results")
            return
        have = rows.get("identity")
        if have is None:
            with self.tx() as c:
                c.execute("INSERT INTO meta VALUES ('identity', ?)", (identity,))
                c.execute("INSERT INTO meta VALUES ('schema_version', ?)",
                          (str(SCHEMA_VERSION),))
                for k, v in meta.items():
                    c.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, json.dumps(v)))
            return
        stored = self.meta()
        if int(stored.get("schema_version") or 1) < 2:
            raise ConfigError(
                f"{self.path} was written by an earlier Moon Arena, which did not record the "
                "bots' versions: it can be shown (moon ladder show) but not resumed; give a "
                "new --results path")
        kind, want = stored.get("kind", "ladder"), meta.get("kind", "ladder")
        if kind != want:
            what = "an A/B match" if kind == "match" else "a ladder"
            raise ConfigError(f"{self.path} holds the results of {what} (moon {kind} show "
                              f"{self.path}), not of a {want}: give another --results path")
        if have != identity:
            diff = settings_difference(stored.get("settings") or {},
                                       meta.get("settings") or {})
            raise ConfigError(
                f"{self.path} holds games played under other settings: "
                + ("; ".join(diff) or "other rules, seed or time control")
                + ". Games under different rules, seed or time control cannot be rated "
                "together: set them back to the file's values to resume it, or give a new "
                "--results path")

    def _release(self) -> None:
        if self._hold is not None:
            os.close(self._hold)
            self._hold = None

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
        side: Callable[[int], int] = (lambda s: s) if players == 3 else (lambda s: s % 2)
        scores, places = list(res.scores), list(res.places)
        game = {"id": gid, "board": scheduled.board, "dset": scheduled.dset,
                "seed": scheduled.seed, "players": players,
                "termination": res.termination.key, "winner": res.winner,
                "scores": json.dumps(scores), "places": json.dumps(places),
                "hands": res.hands_played, "wall_ms": finished.wall_ms,
                "think_ms": finished.think_ms,
                "record_path": str(finished.record_path) if finished.record_path else "",
                "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
        versions = scheduled.versions or ("",) * players
        seats: list[dict[str, Any]] = [{"game_id": gid, "seat": s, "bot": b, "side": side(s),
                  "place": places[side(s)], "score": scores[side(s)], "version": versions[s]}
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
            c.executemany("INSERT INTO seats (game_id, seat, bot, side, place, score, version)"
                          " VALUES (:game_id, :seat, :bot, :side, :place, :score, :version)",
                          seats)
            c.executemany("INSERT INTO hands VALUES (:game_id, :number, :dealer, :bidder, :bid,"
                          " :trump, :made, :tricks, :deltas, :finished)", hands)
            c.executemany("INSERT INTO faults VALUES (:game_id, :seat, :bot, :reason, :detail,"
                          " :forfeit)", faults)
        return GameRow(gid, scheduled.board, scheduled.dset, players, res.termination.key,
                       res.winner, scores, places, list(scheduled.seats), res.hands_played,
                       finished.wall_ms, finished.think_ms, [x["version"] for x in seats])

    def add_voided(self, game_id: str, reason: str, at: str) -> None:
        """Note a game voided by an infrastructure fault (it will be replayed)."""
        with self.tx() as c:
            c.execute("INSERT INTO voided VALUES (?, ?, ?)", (game_id, reason, at))

    def games(self) -> Iterator[GameRow]:
        """Every recorded game."""
        seats: dict[str, list[tuple[int, str, str]]] = {}
        for r in self.db.execute("SELECT game_id, seat, bot, version FROM seats"):
            seats.setdefault(r["game_id"], []).append((r["seat"], r["bot"], r["version"]))
        for r in self.db.execute(
                "SELECT id, board, dset, players, termination, winner, scores, places, hands,"
                " wall_ms, think_ms FROM games ORDER BY rowid"):
            sat = sorted(seats.get(r["id"], []))
            yield GameRow(r["id"], r["board"], r["dset"], r["players"], r["termination"],
                          r["winner"], json.loads(r["scores"]), json.loads(r["places"]),
                          [b for _, b, _ in sat], r["hands"], r["wall_ms"], r["think_ms"],
                          [v for _, _, v in sat])

    def versions_played(self) -> dict[str, set[str]]:
        """Every version of each bot (by name) that has a game in the file (``""``: a
        version 1 file's games, which say no version)."""
        out: dict[str, set[str]] = {}
        for r in self.db.execute("SELECT DISTINCT bot, version FROM seats"):
            out.setdefault(r["bot"], set()).add(r["version"])
        return out

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
        """Close the file, and let go of it if this run held it."""
        self.db.close()
        self._release()
