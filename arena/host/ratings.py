"""The host's ratings, with the ladder's own models (:mod:`arena.ladder.ratings`):

- live: OpenSkill (Plackett–Luce) per version, updated by :func:`live_update` in the same
  transaction that records a finished game, in game order, by the one writer — so a game is
  rated once and only once, whatever happens to the process;
- batch: the Bradley–Terry / Plackett–Luce fit with 95% bootstrap intervals over whole
  boards (:func:`batch_fit`; a host's board is one duplicate set), recomputed periodically
  from every finished rated game, exactly as `moon ladder show` computes it for the same
  games.

:class:`Ratings` is the host's part that keeps them: :meth:`Ratings.run`, the loop of batch
fits in the host's worker process, and the repairs of a stopped host (`moon host rerate`:
:meth:`Ratings.rerate`, :meth:`Ratings.batch_now`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from ..ladder.ratings import LiveRatings, Rating, head_to_head_table, ladder_fit, leaderboard
from ..ladder.store import GameRow
from ..stats.places import places
from .batchworker import BatchWorker
from .models import Game, Meta, RatingPoint, Version, utcnow
from .writer import Writer

log = logging.getLogger("arena.host")


def game_row(game: Game) -> GameRow:
    """A finished rated game as the ladder's ratings read it (bots are version ids; the
    board, the bootstrap's unit, is the game's duplicate set: each set has a deal of its
    own)."""
    seats = [str(s.version_id) for s in game.seats]
    return GameRow(game.id, game.dset_id or 0, f"set{game.dset_id}", len(seats),
                   game.termination or "", game.winner, list(game.scores or []),
                   list(game.places or []), seats,
                   game.hands or 0, game.wall_ms or 0, game.think_ms or 0)


def live_update(session: Session, game: Game) -> None:
    """Apply one finished rated game to the live OpenSkill ratings of its versions (the
    caller commits it with the game)."""
    ids = sorted({s.version_id for s in game.seats if s.version_id is not None})
    versions = {v.id: v for v in session.scalars(select(Version).where(Version.id.in_(ids)))}
    live = LiveRatings([str(i) for i in ids])
    for i, v in versions.items():
        live.ratings[str(i)] = live.model.rating(mu=v.mu, sigma=v.sigma, name=str(i))
    live.update(game_row(game))
    for i, v in versions.items():
        r = live.ratings[str(i)]
        v.mu, v.sigma = float(r.mu), float(r.sigma)


def batch_table(session: Session) -> dict[str, Any]:
    """What the last batch fit said of the table beside the ratings: ``places`` (version
    id as text → the fit's place, ``"2="`` shared), ``anchor`` (the ids whose mean is 1500
    when the data separate some versions, else empty) and ``h2h`` (``"a-b"`` with a < b →
    ``[a's score against b, games]``, for the pairs that met); empty before the first."""
    batch = session.get(Meta, "batch")
    if batch is None or not isinstance(batch.value, dict):
        return {"places": {}, "anchor": [], "h2h": {}}
    v = batch.value
    return {"places": v.get("places") or {}, "anchor": v.get("anchor") or [],
            "h2h": v.get("h2h") or {}}


def h2h_of(table: dict[str, Any], a: int, b: int) -> tuple[float, int] | None:
    """``(a's score against b, games)`` from :func:`batch_table`'s ``h2h``; None when they
    never met."""
    v = table["h2h"].get(f"{min(a, b)}-{max(a, b)}")
    if not v:
        return None
    score, games = float(v[0]), int(v[1])
    return (score, games) if a < b else (1.0 - score, games)


def open_ratings(session: Session) -> set[int]:
    """The ids of the versions whose rating the last batch fit left open (never behind,
    or never ahead of, some other version): quoted by its bound, not by its figure
    (docs/ladder.md, "When the data cannot give an interval"); empty before the first fit."""
    batch = session.get(Meta, "batch")
    if batch is None or not isinstance(batch.value, dict):
        return set()
    return {int(i) for i in batch.value.get("open", ())}


def finished_games(session: Session) -> list[GameRow]:
    """Every finished rated game, in the order their results were written."""
    games = session.scalars(
        select(Game).where(Game.status == "finished", Game.kind == "rated")
        .order_by(Game.seq).options(selectinload(Game.seats)))
    return [game_row(g) for g in games]


def batch_from_database(url: str, bootstrap: int, seed: int = 0
                        ) -> tuple[int, list[Rating], dict[str, Any]]:
    """Read every finished rated game from the database at ``url`` (a SQLAlchemy URL, as
    :func:`arena.host.db.database_url` gives) and fit them (:func:`batch_fit`); returns how
    many games and the ratings. The host runs it in its batch worker process: reading all
    games is the one thing the host does whose memory grows with the number of games, and
    a process of its own keeps that out of the long-running server (whose allocator would
    keep the peak of each read, so its memory would creep up by ~1 MB per 100 games).
    The third value is the table beside the ratings (:func:`batch_fit`)."""
    from .db import read_once

    games = read_once(url, finished_games)
    return (len(games), *batch_fit(games, bootstrap, seed))


def batch_fit(games: list[GameRow], bootstrap: int, seed: int = 0
              ) -> tuple[list[Rating], dict[str, Any]]:
    """The batch ratings of every version that played ``games`` (``Rating.bot`` is the
    version id as text), best first, [] with no games; and the table beside them, as
    :func:`batch_table` reads it back: the places (Holm's step-down over the whole
    table, :mod:`arena.stats.places`), the anchor, and the head-to-head of every pair
    that met."""
    bots = sorted({b for g in games for b in g.seats}, key=int)
    if not bots:
        return [], {"places": {}, "anchor": [], "h2h": {}}
    fit = ladder_fit(games, bots, bootstrap=bootstrap, seed=seed)
    ratings = leaderboard(fit)
    shown = places([r.los_next for r in ratings])
    h2h = {f"{a}-{b}": [round(v[0], 6), v[1]]
           for a, row in head_to_head_table(games).items() for b, v in row.items()
           if int(a) < int(b)}
    anchor = sorted(int(b) for b in fit.anchor_bots) if len(fit.anchor_bots) < len(bots) \
        else []
    return ratings, {"places": {r.bot: p for r, p in zip(ratings, shown, strict=True)},
                     "anchor": anchor, "h2h": h2h}


def next_point(played: int) -> int:
    """The rated games a version must have played for its next :class:`RatingPoint`, its
    last one at ``played``: 2% more, at least one more. A fit a minute for a season would
    otherwise keep some 130,000 points a version; this keeps every fit while it has
    played few games, 297 points to 10,000 games, 413 to 100,000, and none once it
    plays no more (retired): the chart ends on its rating now in any case
    (:func:`arena.host.pages.bots.rating_lines`).

    >>> next_point(0), next_point(49), next_point(50), next_point(51), next_point(1000)
    (1, 50, 51, 53, 1020)
    """
    return played + max(1, -(-played * 2 // 100))


class Ratings:
    """The batch fits of the database at ``url`` (a SQLAlchemy URL with its password):
    ``bootstrap`` resamples, ``seed`` their draws, one every ``every_s`` seconds when games
    have finished since the last; the fits' figures are written on ``writer``. A fit or
    chore that fails for a database or disk error is told to ``unwritten(what, error)``
    when given, which returns whether it took it (the host's outage, which says it once a
    minute); else it is said in a line."""

    def __init__(self, session: sessionmaker[Session], writer: Writer, url: str,
                 bootstrap: int, seed: int, every_s: float,
                 unwritten: Callable[[str, BaseException], bool] | None = None) -> None:
        self.unwritten = unwritten
        self.Session = session
        self.writer = writer
        self.url = url
        self.bootstrap = bootstrap
        self.seed = seed
        self.every_s = every_s

    def rerate(self) -> int:
        """Recompute every version's live rating, game count and sets played whole (a set
        with a finished game and none left to play) from all finished rated games, in
        result order (``seq``), in one transaction; returns how many games. Run it on a
        stopped host (``moon host rerate``): the result is what the live updates gave, or
        the repair of it."""
        with self.Session.begin() as s:
            for v in s.scalars(select(Version)):
                v.mu, v.sigma, v.games, v.sets = 25.0, 25.0 / 3, 0, 0
            s.flush()
            in_play = set(s.scalars(select(Game.dset_id).where(
                Game.status.in_(("queued", "running"))).distinct()))
            played_sets: set[tuple[int, int]] = set()
            games = s.scalars(select(Game).where(Game.status == "finished",
                                                 Game.kind == "rated")
                              .order_by(Game.seq).options(selectinload(Game.seats))).all()
            for g in games:
                for vid in {x.version_id for x in g.seats if x.version_id is not None}:
                    played = s.get(Version, vid)
                    assert played is not None
                    played.games += 1
                    if g.dset_id is not None and g.dset_id not in in_play \
                            and (vid, g.dset_id) not in played_sets:  # a set played whole
                        played_sets.add((vid, g.dset_id))
                        played.sets += 1
                live_update(s, g)
                s.flush()
                g.rated = True
        return len(games)

    def batch_now(self) -> int:
        """Recompute the batch ratings of every version from every finished rated game, in
        this process (``moon host rerate``; a running host fits in its worker process, see
        :meth:`run`); returns how many games went into it."""
        n, ratings, table = batch_from_database(self.url, self.bootstrap, self.seed)
        self.writer.write_now(self.store_batch, n, ratings, table)
        return n

    def store_batch(self, n: int, ratings: list[Rating],
                    table: dict[str, Any] | None = None) -> None:
        """Write a fit of ``n`` games: each version's rating and interval, the same as a
        :class:`RatingPoint` (a bot page's chart) for a version with none yet or that has
        played its :func:`next_point` games, and the ``batch`` entry (how many
        games, when, which versions' ratings are open, and ``table``: the places, anchor
        and head-to-head of :func:`batch_fit`)."""
        with self.Session.begin() as s:
            at = utcnow()
            last = dict(s.execute(select(RatingPoint.version_id, func.max(RatingPoint.played))
                                  .group_by(RatingPoint.version_id)).all())
            for r in ratings:
                v = s.get(Version, int(r.bot))
                if v is not None:
                    v.rating, v.rating_low, v.rating_high = r.rating, r.low, r.high
                    if v.id not in last or v.games >= next_point(last[v.id]):
                        s.add(RatingPoint(version_id=v.id, games=n, played=v.games, at=at,
                                          rating=r.rating, low=r.low, high=r.high,
                                          open=not r.determined))
            m = s.get(Meta, "batch") or Meta(key="batch", value={})
            m.value = {"games": n, "at": at.isoformat(),
                       "open": sorted(int(r.bot) for r in ratings if not r.determined),
                       **(table or {})}
            s.merge(m)

    async def run(self, chores: tuple[Callable[[], object], ...] = ()) -> None:
        """Every ``every_s``, when games have finished since the last fit, refit the batch
        ratings in a worker process of the host's own (:class:`BatchWorker`): its CPU never
        holds the host's interpreter (and the referee's clocks) for the seconds a bootstrap
        over many games takes, and the host's memory does not grow with the number of games
        (the worker reads them, :func:`batch_from_database`). The worker dies with the
        host, and is killed when the host stops (this task cancelled), even mid-fit. After
        each round, ``chores`` run in turn in a thread (retention, giving memory back)."""
        last = -1
        every = self.every_s
        worker = BatchWorker()
        try:
            while True:
                await asyncio.sleep(min(every, 5.0) if last <= 0 else every)
                try:
                    with self.Session() as s:
                        n = s.scalar(select(func.count()).select_from(Game).where(
                            Game.status == "finished", Game.kind == "rated")) or 0
                except SQLAlchemyError:  # the database is down: said by the games' side
                    continue  # (arena.host.outage); the next round tries again
                if n != last:
                    try:
                        got, ratings, table = await worker.run(
                            batch_from_database, self.url, self.bootstrap, self.seed)
                        await self.writer.write(self.store_batch, got, ratings, table)
                        last = got
                    except BrokenProcessPool:
                        log.warning("the batch fit's worker process died; the next fit "
                                    "starts a new one")
                    except Exception as e:
                        if isinstance(e, SQLAlchemyError | OSError):  # no traceback for
                            self._failed("the batch ratings", e)  # it
                        else:
                            log.exception("batch fit failed")
                for chore in chores:
                    try:
                        await asyncio.to_thread(chore)
                    except (SQLAlchemyError, OSError) as e:  # the next round tries again
                        self._failed(getattr(chore, "__name__", "a chore"), e)
        finally:
            worker.stop()

    def _failed(self, what: str, e: SQLAlchemyError | OSError) -> None:
        if self.unwritten is None or not self.unwritten(what, e):
            log.warning("%s failed: %s", what, e.__class__.__name__)
