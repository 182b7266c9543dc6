"""Retention of the host's records and seat logs (:class:`Retention`):

- after each rated game, the seat logs of each of its versions' games just past its last
  ``[retention] full_logs`` are cut to their last :data:`arena.sandbox.local.LOG_TAIL_BYTES`
  (:meth:`Retention.cut_logs`): a bot's log of a game is up to 1 MiB, and an active
  version's are never pruned: before, one that wrote without end filled the host's disk at
  1 MiB a game (115 GB a day at 90 games a minute);
- periodically, the records and seat logs of finished games older than ``record_days``
  whose versions are all retired or disabled are deleted, their results kept
  (:meth:`Retention.prune`).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import os
import threading
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session, selectinload, sessionmaker

from ..sandbox.local import LOG_TAIL_BYTES
from .models import Game, GameSeat, utcnow
from .visitors import public_record_path
from .writer import Writer


def cut_log(path: Path, tail: int, kept: int) -> bool:
    """Cut a seat's log to its last ``tail`` bytes, after a line saying how much was cut
    (written aside, then moved over it); False if it is that short already, or cannot be
    read or written (then it stays as it was)."""
    try:
        size = path.stat().st_size
        if size <= tail + 256:
            return False
        with open(path, "rb") as f:
            f.seek(size - tail)
            end = f.read()
        aside = path.with_name(path.name + ".cut")
        aside.write_bytes(f"[... {size - tail} bytes cut by the host: a version's logs are "
                          f"kept whole for its last {kept} games ...]\n".encode() + end)
        os.replace(aside, path)
    except OSError:
        return False
    return True


def seat_log_path(record_dir: Path, game_id: str, seat: int) -> Path:
    """Where a seat's output of a game is kept under the host's records."""
    return record_dir / "logs" / f"{game_id}.seat{seat}.log"


class Retention:
    """Cuts and prunes the records and seat logs in ``record_dir`` of games of ``players``
    seats: ``full_logs`` games of a version keep their logs whole, records of retired
    versions' games older than ``record_days`` days are deleted (0: never). ``seat_log``
    says where a seat's log of a game is (the executor's place; by default
    :func:`seat_log_path`); the marks of pruned games are written on ``writer``."""

    def __init__(self, session: sessionmaker[Session], writer: Writer, record_dir: Path,
                 players: int, full_logs: int, record_days: float,
                 seat_log: Callable[[str, int], Path] | None = None) -> None:
        self.Session = session
        self.writer = writer
        self.record_dir = record_dir
        self.players = players
        self.full_logs = full_logs
        self.record_days = record_days
        self.seat_log = seat_log or (lambda gid, seat: seat_log_path(record_dir, gid, seat))
        self._kept_logs: dict[int, collections.deque[tuple[str, list[int]]]] = {}
        """Per version, its last finished games (and its seats in each) whose logs are
        kept whole (:meth:`cut_logs`)."""
        self._logs_lock = threading.Lock()

    def prune(self) -> int:
        """Delete the records and seat logs of finished games older than ``record_days``
        whose versions are all retired or disabled (their results stay, their
        ``record_path`` is cleared); returns how many games were pruned. Run it off the
        event loop."""
        days = self.record_days
        if not days:
            return 0
        cutoff = utcnow() - dt.timedelta(days=days)
        pruned = 0
        with self.Session() as s:
            games = s.scalars(select(Game).where(
                Game.status == "finished", Game.record_path.is_not(None),
                Game.finished_at < cutoff).options(selectinload(Game.seats)
                                                   .selectinload(GameSeat.version))).all()
            old = [g.id for g in games
                   if all(x.version is None or x.version.status in ("retired", "disabled")
                          for x in g.seats)]
        for gid in old:
            with contextlib.suppress(OSError):
                (self.record_dir / f"{gid}.json").unlink(missing_ok=True)
                public_record_path(self.record_dir, gid).unlink(missing_ok=True)
            for seat in range(self.players):
                with contextlib.suppress(OSError):
                    seat_log_path(self.record_dir, gid, seat).unlink(missing_ok=True)

        def mark() -> None:
            with self.Session.begin() as s:
                s.execute(update(Game).where(Game.id.in_(old)).values(record_path=None))

        if old:
            self.writer.write_now(mark)
            pruned = len(old)
        return pruned

    def cut_logs(self, game_id: str) -> int:
        """After game ``game_id``: for each version in it, cut the seat logs of its game
        just past its last ``full_logs`` finished ones to their last
        :data:`arena.sandbox.local.LOG_TAIL_BYTES`, after a line saying how much was cut.
        Each version's last games are kept in memory (a version first seen since the start
        reads its last ones from the database once), so the cost of a game does not grow
        with the games. Returns how many logs were cut; a log that cannot be read or
        written is left as it is."""
        keep = self.full_logs
        with self.Session() as s:
            seats: dict[int, list[int]] = {}
            for vid, seat in s.execute(select(GameSeat.version_id, GameSeat.seat).where(
                    GameSeat.game_id == game_id, GameSeat.version_id.is_not(None))):
                if vid is not None:
                    seats.setdefault(vid, []).append(seat)
            old: list[tuple[str, list[int]]] = []
            with self._logs_lock:
                for vid, its in seats.items():
                    kept = self._kept_logs.get(vid)
                    if kept is None:  # its games before this start, newest first
                        kept = self._kept_logs[vid] = collections.deque()
                        earlier: dict[str, list[int]] = {}
                        for gid, seat in s.execute(
                                select(GameSeat.game_id, GameSeat.seat).join(Game).where(
                                    GameSeat.version_id == vid, Game.status == "finished",
                                    Game.seq.is_not(None), Game.id != game_id)
                                .order_by(Game.seq.desc()).limit(2 * (keep + 50))):
                            earlier.setdefault(gid, []).append(seat)
                        for gid, gseats in reversed(list(earlier.items())):
                            kept.append((gid, gseats))
                    kept.append((game_id, its))
                    while len(kept) > keep:
                        old.append(kept.popleft())
        return sum(cut_log(self.seat_log(gid, seat), LOG_TAIL_BYTES, keep)
                   for gid, its in old for seat in its)


__all__ = ["Retention", "cut_log", "seat_log_path"]
