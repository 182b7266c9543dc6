"""The one writer of game results to the host's database (:class:`Recorder`): a finished
game is written whole — game, seats, faults, its versions' game counts and forfeit runs,
the live rating update and the ``rated`` mark — in one transaction, on the host's one
writer thread (:class:`arena.host.writer.Writer`), so a host killed at any moment loses no
finished game and rates none twice. A game that could not be played is voided, and a
rated, final or challenge game queued again as a new game (at most :data:`MAX_ATTEMPTS`
tries).

:class:`Counters` is what the host has done since it started, for its status.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import time
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from ..bots.manifest import BotSpec
from .executor import FinishedGame, name_of
from .matchmaking import side
from .models import FaultRow, Game, GameSeat, Version, sets_ended, utcnow
from .ratings import live_update
from .writer import Writer

log = logging.getLogger("arena.host")

MAX_ATTEMPTS = 3
"""How often a voided game is played again before its set gives it up (cancelled)."""
REPLAYED = ("rated", "final", "challenge")
"""The kinds of game played again when voided (:meth:`Recorder.void`)."""
RATE_WINDOW_S = 300.0
"""The status's games/min is over the last this many seconds."""


def again_id(game_id: str, attempt: int) -> str:
    """The id of the game that plays voided game ``game_id`` (its try ``attempt``, 0 the
    first) again.

    >>> again_id("s4-2", 0), again_id("s4-2-r1", 1), again_id("c7", 0)
    ('s4-2-r1', 's4-2-r2', 'c7-r1')
    """
    return f"{game_id.split('-r')[0]}-r{attempt + 1}"


@dataclass
class Counters:
    """What the host has done since it started (for the status page)."""

    started: float = dataclasses.field(default_factory=time.monotonic)
    finished: collections.deque[float] = dataclasses.field(default_factory=collections.deque)
    """When (``time.monotonic()``) each game of the last :data:`RATE_WINDOW_S` finished."""
    voided: int = 0

    def game_finished(self, now: float | None = None) -> None:
        """Count a finished game, and forget those older than the rate's window (the host's
        memory must not grow with the games it plays)."""
        now = time.monotonic() if now is None else now
        self.finished.append(now)
        while self.finished and now - self.finished[0] > RATE_WINDOW_S:
            self.finished.popleft()


class Recorder:
    """Writes games' outcomes, on ``writer``: :meth:`record` a finished game,
    :meth:`void_game` one that could not be played, :meth:`add_validation_game` a
    version's validation game as it starts. ``players``: seats a game;
    ``forfeit_limit``: forfeits in a row that disable a version."""

    def __init__(self, session: sessionmaker[Session], writer: Writer, players: int,
                 forfeit_limit: int, counters: Counters) -> None:
        self.Session = session
        self.writer = writer
        self.players = players
        self.forfeit_limit = forfeit_limit
        self.counters = counters

    async def record(self, fg: FinishedGame) -> None:
        """Write finished game ``fg`` (:meth:`record_now`) on the writer thread."""
        await self.writer.write(self.record_now, fg)

    async def void_game(self, game_id: str, reason: str) -> None:
        """Void running game ``game_id`` (:meth:`void`) on the writer thread; a game no
        longer running is left as it is."""
        await self.writer.write(self._void_game, game_id, reason)

    async def add_validation_game(self, game_id: str, version_id: int, seed: int,
                                  seats: tuple[BotSpec, ...]) -> None:
        """Write a version's validation game, ``running``: the version in seat 0, the
        reference bots ``seats[1:]`` in the others."""
        await self.writer.write(self._add_validation_game, game_id, version_id, seed, seats)

    def record_now(self, fg: FinishedGame) -> None:
        """Write a finished game whole, with its rating update, in one transaction; a game
        the database does not have ``running`` (recorded already, voided) is left as it
        is, with a warning. Run it on the writer thread."""
        res = fg.result
        with self.Session.begin() as s:
            g = s.get(Game, fg.request.game_id, with_for_update=True)
            if g is None or g.status != "running":
                log.warning("game %s finished here, but the database has it %s (did "
                            "another process change it?): its result is not recorded",
                            fg.request.game_id,
                            f"as {g.status}" if g else "no longer")
                return
            g.status = "finished"
            g.termination, g.winner = name_of(res.termination), res.winner
            g.scores, g.places = list(res.scores), list(res.places)
            g.hands, g.wall_ms, g.think_ms = res.hands_played, fg.wall_ms, fg.think_ms
            g.record_path = str(fg.record_path) if fg.record_path else None
            g.finished_at = utcnow()
            g.seq = (s.scalar(select(func.max(Game.seq))) or 0) + 1
            for seat in g.seats:
                seat.place = res.places[seat.side]
                seat.score = res.scores[seat.side]
            by_seat = {x.seat: x.version_id for x in g.seats}
            for f in fg.faults:
                g.faults.append(FaultRow(seat=f.seat, version_id=by_seat.get(f.seat),
                                         reason=name_of(f.reason), detail=f.detail[:2000],
                                         forfeit=f.forfeit))
            if g.kind != "rated":
                return
            forfeited = {by_seat[f.seat] for f in fg.faults if f.forfeit}
            limit = self.forfeit_limit
            # the last game of its set to end, and it finished: its versions have played
            # the set (their placement series counts sets)
            set_done = g.dset_id is not None and s.scalar(
                select(func.count()).select_from(Game).where(
                    Game.dset_id == g.dset_id, Game.id != g.id,
                    Game.status.in_(("queued", "running")))) == 0
            for vid in sorted({v for v in by_seat.values() if v is not None}):
                v = s.get(Version, vid)
                assert v is not None
                v.games += 1
                v.sets += int(set_done)
                if vid not in forfeited:
                    v.forfeits_in_row = 0
                    continue
                v.forfeits_in_row += 1
                if v.forfeits_in_row >= limit and v.status == "active":
                    last = next(f for f in fg.faults if f.forfeit and by_seat[f.seat] == vid)
                    v.status = "disabled"
                    v.reason = (f"disabled after {v.forfeits_in_row} forfeits in a row "
                                f"(forfeit_limit = {limit}); the last: "
                                f"{name_of(last.reason)} in game {g.id}"
                                + (f" ({last.detail})" if last.detail else "")
                                + "; submit a new version to play again")
                    if v.bot.active_version_id == v.id:
                        v.bot.active_version_id = None
            live_update(s, g)
            g.rated = True

    def void(self, s: Session, g: Game, reason: str) -> None:
        """Void ``g`` in session ``s`` (never rated) and queue its replay (:func:`again_id`),
        unless it was a validation game (the version is validated again) or a table's, or
        has had its tries. A challenge game is played again for its asker as a rated one
        is (the same seats and deal, asked at the same time: counted once in the quota),
        and its reason, which the asker reads, says what became of it."""
        g.status = "voided"
        g.void_reason = reason
        self.counters.voided += 1
        if g.kind not in REPLAYED:
            return
        if g.attempt + 1 >= MAX_ATTEMPTS:
            log.warning("game %s voided %d times: given up", g.id, g.attempt + 1)
            if g.kind == "challenge":
                g.void_reason = (f"{reason}; voided {g.attempt + 1} times, the most: not "
                                 "played again (ask again)")
            elif g.kind == "rated":
                sets_ended(s, [g.dset_id])
            return
        again = Game(id=again_id(g.id, g.attempt), kind=g.kind, dset_id=g.dset_id,
                     seating=g.seating, attempt=g.attempt + 1, seed=g.seed, status="queued",
                     created_at=g.created_at, asked_by=g.asked_by)
        again.seats = [GameSeat(seat=x.seat, version_id=x.version_id,
                                reference=x.reference, side=x.side) for x in g.seats]
        s.add(again)
        if g.kind == "challenge":
            g.void_reason = f"{reason}; played again as {again.id}"

    def _void_game(self, game_id: str, reason: str) -> None:
        with self.Session.begin() as s:
            g = s.get(Game, game_id)
            if g is not None and g.status == "running":
                self.void(s, g, reason)

    def _add_validation_game(self, game_id: str, version_id: int, seed: int,
                             seats: tuple[BotSpec, ...]) -> None:
        with self.Session.begin() as s:
            g = Game(id=game_id, kind="validation", seed=seed, status="running",
                     started_at=utcnow())
            g.seats = [GameSeat(seat=i, version_id=version_id if i == 0 else None,
                                reference="" if i == 0 else b.name,
                                side=side(i, self.players))
                       for i, b in enumerate(seats)]
            s.add(g)


__all__ = ["MAX_ATTEMPTS", "RATE_WINDOW_S", "REPLAYED", "Counters", "Recorder",
           "again_id"]
