"""The final (``[final]`` in ``competition.toml``): when the phase reaches ``final``, the
season's best active versions (the top ``entrants`` of the season's batch fit; 0: every
active one) are locked in and play a balanced duplicate schedule among themselves
(:func:`arena.ladder.schedule.make_schedule`: every group of entrants on every board, in
every seating, so every entrant plays the same boards from the same seats) on boards dealt
from a fresh master seed of the final's own, kept secret until the final is over.

- A *board* is the final's duplicate set: every game on it, whatever its group, is dealt
  the same hands, so the whole board is one :class:`arena.host.models.DuplicateSet`. Its
  games never run at once (:meth:`Final.claim`), so no live view of one shows the deal of
  another that is playing, and :mod:`arena.host.embargo` withholds a finished game's
  record until the last game of its board has ended.
- The games are ``kind = "final"``: played by the same executor, slots, recorder, faults
  and voiding rules as rated games (a voided one is played again), never in the season's
  ratings.
- After ``boards`` boards the final ends, unless ``separate`` asks for its top places to
  be told apart: then a board more at a time, until the final's fit gives each of the top
  ``separate`` places to one version alone, or ``max_boards``.
- The standings are the batch fit (:func:`arena.ladder.ratings.rate`: the ladder's model,
  95% bootstrap intervals over whole boards, shared places) over final games alone,
  recomputed in a worker process each time a game ends, with the final's master seed as
  the bootstrap's seed, so anyone with the exported archive refits the same figures.

The final's state is kept in :class:`arena.host.models.Meta` (``final``; its standings
under ``final_standings``), so a restart resumes it: the games that were running are
voided and played again, the finished ones are kept.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from ..bots.manifest import BotSpec
from ..ladder.ratings import Rating, rate
from ..ladder.report import shared_ranks
from ..ladder.schedule import ScheduledGame, board_seed, make_schedule
from ..ladder.store import GameRow
from .batchworker import BatchWorker
from .matchmaker import Matchmaker
from .matchmaking import side
from .models import DuplicateSet, Game, GameSeat, Meta, Version, utcnow
from .outage import cannot_write
from .phases import iso
from .ratings import game_row
from .season import Season
from .settings import FinalTable, new_master_seed
from .writer import Writer

log = logging.getLogger("arena.host")

KIND = "final"
"""``Game.kind`` of the final's games."""
STATE_KEY = "final"
"""The :class:`Meta` key of the final's :class:`FinalState`."""
STANDINGS_KEY = "final_standings"
"""The :class:`Meta` key of the final's last fit (:func:`standings_of`)."""
IN_PLAY = ("queued", "running")


@dataclass
class FinalState:
    """The final as the database keeps it: the entrants (version ids, best of the season
    first), its master seed (secret until ``over``), the boards scheduled so far, and when
    and why it ended."""

    entrants: list[int]
    seed: int
    boards: int
    started_at: str
    over: bool = False
    ended_at: str | None = None
    why: str = ""
    set_ids: list[int] = field(default_factory=list)
    """The duplicate set of each board, board 0 first."""

    @classmethod
    def from_json(cls, data: Any) -> FinalState | None:
        """From :func:`dataclasses.asdict`'s shape; None for anything else."""
        try:
            return cls(entrants=[int(v) for v in data["entrants"]], seed=int(data["seed"]),
                       boards=int(data["boards"]), started_at=str(data["started_at"]),
                       over=bool(data.get("over", False)), ended_at=data.get("ended_at"),
                       why=str(data.get("why", "")),
                       set_ids=[int(i) for i in data.get("set_ids", [])])
        except (KeyError, TypeError, ValueError):
            return None


def read_state(s: Session) -> FinalState | None:
    """The final's state (None before it started)."""
    row = s.get(Meta, STATE_KEY)
    return FinalState.from_json(row.value) if row is not None else None


def _keep(s: Session, key: str, value: Any) -> None:
    row = s.get(Meta, key)
    if row is None:
        s.add(Meta(key=key, value=value))
    else:
        row.value = value


def season_order(versions: list[Version]) -> list[Version]:
    """``versions`` best first as the season's leaderboard orders them: by batch rating,
    then (not fitted yet) by the live μ − 3σ, then by id."""
    return sorted(versions, key=lambda v: (v.rating is None, -(v.rating or 0.0),
                                           -(v.mu - 3 * v.sigma), v.id))


def board_games(entrants: list[int], players: int, board: int, seed: int
                ) -> list[ScheduledGame]:
    """The games of board ``board`` of a final among ``entrants`` (version ids) with master
    seed ``seed``: every group of the entrants in every seating (seats are version ids as
    text)."""
    bots = [str(v) for v in entrants]
    return [g for g in make_schedule(bots, players, board + 1, seed) if g.board == board]


def final_rows(s: Session) -> list[GameRow]:
    """Every finished final game as the fit reads it, in the order results were written
    (the board of each is its duplicate set's id)."""
    games = s.scalars(select(Game).where(Game.status == "finished", Game.kind == KIND)
                      .order_by(Game.seq).options(selectinload(Game.seats)))
    return [game_row(g) for g in games]


def fit_final(rows: list[GameRow], entrants: list[int], bootstrap: int, seed: int
              ) -> list[Rating]:
    """The final's standings fit: the ladder's batch fit of ``entrants`` over ``rows``
    alone, ``bootstrap`` resamples of whole boards drawn with ``seed``; best first."""
    return rate(rows, [str(v) for v in entrants], bootstrap=bootstrap, seed=seed)


def fit_from_database(url: str, entrants: list[int], bootstrap: int, seed: int
                      ) -> tuple[int, list[Rating]]:
    """Read the finished final games of the database at ``url`` and fit them
    (:func:`fit_final`): how many games, and the ratings. Run in the host's worker
    process."""
    from .db import read_once

    rows = read_once(url, final_rows)
    return len(rows), fit_final(rows, entrants, bootstrap, seed)


def standings_of(ratings: list[Rating], games: int, boards: int, bootstrap: int
                 ) -> dict[str, Any]:
    """The standings as the database keeps them and the export writes them: each
    version's place (``"2="``: shared, the data cannot tell it from its neighbour),
    rating and 95% interval (None: unbounded on that side), whether the data leave it
    open; with the games and whole boards fitted and the bootstrap's resamples."""
    places = shared_ranks(ratings)
    return {"games": games, "boards": boards, "bootstrap": bootstrap,
            "at": iso(utcnow()),
            "rows": [{"place": p, "version_id": int(r.bot), "rating": r.rating,
                      "low": r.low, "high": r.high, "determined": r.determined}
                     for p, r in zip(places, ratings, strict=True)]}


def separated(standings: dict[str, Any], top: int) -> bool:
    """Whether the top ``top`` places of ``standings`` each belong to one version alone."""
    places = [r["place"] for r in standings.get("rows", [])]
    return len(places) >= top and places[:top] == [str(i + 1) for i in range(top)]


class Final:
    """The final of the competition whose phase is ``season``, configured by
    ``settings``, for games of ``players`` seats: :meth:`tick_now` starts it, schedules
    its boards and ends it; :meth:`claim` hands the matchmaker's loop its next game; its
    standings are fitted from the database at ``url`` (with ``bootstrap`` resamples)."""

    def __init__(self, session: sessionmaker[Session], writer: Writer, matchmaker: Matchmaker,
                 season: Season, settings: FinalTable, players: int, url: str,
                 bootstrap: int) -> None:
        self.Session = session
        self.writer = writer
        self.matchmaker = matchmaker
        self.season = season
        self.settings = settings
        self.players = players
        self.url = url
        self.bootstrap = bootstrap

    # -- on the writer thread ---------------------------------------------------------------
    def tick_now(self, now: dt.datetime | None = None) -> str | None:
        """Start the final when the phase is ``final``; schedule its next board or end it
        when its boards are played; end it when the competition has ended (queued games
        cancelled, running ones finish). What happened in a line, or None. Run it on the
        writer thread."""
        now = now or utcnow()
        with self.Session.begin() as s:
            phase = self.season.phase(s, now)
            st = read_state(s)
            if st is None:
                return self._start(s, now) if phase == "final" else None
            if st.over:
                return None
            if phase == "ended":
                cancelled = 0
                for g in s.scalars(select(Game).where(Game.kind == KIND,
                                                      Game.status == "queued")):
                    g.status = "cancelled"
                    g.void_reason = "the competition ended before it was played"
                    cancelled += 1
                s.flush()
                if self._in_play(s):
                    return None  # the games running finish and count
                return self._end(s, st, now, f"the competition ended after {st.boards} "
                                 f"board(s)" + (f"; {cancelled} queued game(s) cancelled"
                                                if cancelled else ""))
            if phase != "final" or self._in_play(s):
                return None
            kept = s.get(Meta, STANDINGS_KEY)
            standings = kept.value if kept is not None else None
            if standings is None or standings.get("games") != self._finished(s):
                return None  # the fit of its last games is still to come
            top = min(self.settings.separate, len(st.entrants))
            apart = bool(top) and separated(standings, top)
            if st.boards < self.settings.boards or (
                    top and not apart and st.boards < self.settings.max_boards):
                n = self._plan_board(s, st, st.boards, now)
                st.boards += 1
                _keep(s, STATE_KEY, asdict(st))
                return f"final: board {st.boards} scheduled ({n} games)"
            if apart:
                why = f"its top {top} place(s) told apart after {st.boards} board(s)"
            elif top:
                why = (f"max_boards: {st.boards} board(s) played, its top {top} place(s) "
                       "not all told apart")
            else:
                why = f"{st.boards} board(s) played"
            return self._end(s, st, now, why)

    def _start(self, s: Session, now: dt.datetime) -> str:
        active = season_order(list(s.scalars(select(Version).where(
            Version.status == "active"))))
        n = self.settings.entrants
        entrants = [v.id for v in (active[:n] if n else active)]
        st = FinalState(entrants=entrants, seed=new_master_seed(), boards=0,
                        started_at=iso(now) or "")
        if len(entrants) < 2:
            st.over, st.ended_at = True, iso(now)
            st.why = f"no final: it needs 2 active versions ({len(entrants)} there were)"
            _keep(s, STATE_KEY, asdict(st))
            log.info("final: %s", st.why)
            return st.why
        games = 0
        for board in range(self.settings.boards):
            games += self._plan_board(s, st, board, now)
        st.boards = self.settings.boards
        _keep(s, STATE_KEY, asdict(st))
        line = (f"final: started among {len(entrants)} versions ({', '.join(map(str, entrants))})"
                f", {st.boards} board(s), {games} games")
        log.info("%s", line)
        return line

    def _plan_board(self, s: Session, st: FinalState, board: int, now: dt.datetime) -> int:
        """Queue the games of ``board``, one duplicate set (they share its deal)."""
        games = board_games(st.entrants, self.players, board, st.seed)
        dset = DuplicateSet(seed=board_seed(st.seed, board))
        s.add(dset)
        s.flush()
        st.set_ids.append(dset.id)
        for k, sg in enumerate(games):
            # "fb0-<the group's tag>-s3": apart from the season's "s12-3" and validation's
            # "v7-...", and whole in the games lists' 18-character column
            g = Game(id=f"f{sg.game_id}", kind=KIND, dset_id=dset.id, seating=k,
                     seed=sg.seed, status="queued", created_at=now)
            g.seats = [GameSeat(seat=i, version_id=int(v), side=side(i, self.players))
                       for i, v in enumerate(sg.seats)]
            s.add(g)
        s.flush()
        return len(games)

    def _end(self, s: Session, st: FinalState, now: dt.datetime, why: str) -> str:
        st.over, st.ended_at, st.why = True, iso(now), why
        _keep(s, STATE_KEY, asdict(st))
        log.info("final: over: %s", why)
        return f"final: over: {why}"

    @staticmethod
    def _in_play(s: Session) -> int:
        return int(s.scalar(select(func.count()).select_from(Game).where(
            Game.kind == KIND, Game.status.in_(IN_PLAY))) or 0)

    @staticmethod
    def _finished(s: Session) -> int:
        return int(s.scalar(select(func.count()).select_from(Game).where(
            Game.kind == KIND, Game.status == "finished")) or 0)

    def claim(self) -> tuple[str, int, tuple[BotSpec, ...]] | None:
        """Take the next queued final game whose board has no game running (boards in
        order) and mark it running: its id, seed and bots; None if there is none, or the
        phase is not ``final``. A game with a version the organiser disabled since is
        cancelled (the version plays no more games). Run it on the writer thread."""
        with self.Session.begin() as s:
            st = read_state(s)
            if st is None or st.over or self.season.phase(s) != "final":
                return None
            busy = set(s.scalars(select(Game.dset_id).where(Game.kind == KIND,
                                                           Game.status == "running")))
            versions = {v.id: v for v in s.scalars(select(Version).where(
                Version.id.in_(st.entrants)).options(selectinload(Version.bot)))}
            queued = s.scalars(select(Game).where(Game.kind == KIND, Game.status == "queued")
                               .order_by(Game.dset_id, Game.seating, Game.attempt)
                               .options(selectinload(Game.seats))).all()
            for g in queued:
                if g.dset_id in busy:
                    continue
                ids = [x.version_id for x in g.seats]
                if any(i is None or i not in versions or versions[i].status == "disabled"
                       for i in ids):
                    g.status = "cancelled"
                    g.void_reason = "a version in it was disabled before it was played"
                    continue
                return self.matchmaker.start(g, ids, versions)
            return None

    def store_standings(self, n: int, ratings: list[Rating]) -> None:
        """Write the fit of ``n`` final games as the standings (whole boards counted now).
        Run it on the writer thread."""
        with self.Session.begin() as s:
            st = read_state(s)
            boards = 0
            if st is not None and st.set_ids:
                open_sets = set(s.scalars(select(Game.dset_id).where(
                    Game.kind == KIND, Game.status.in_(IN_PLAY))))
                boards = sum(1 for i in st.set_ids if i not in open_sets)
            _keep(s, STANDINGS_KEY, standings_of(ratings, n, boards, self.bootstrap))

    # -- reading ------------------------------------------------------------------------------
    def progress(self, s: Session) -> dict[str, Any]:
        """The final's progress: ``state`` (``not started``, ``playing``, ``over``),
        boards scheduled, games finished, running, still to play, cancelled; the standings'
        last fit."""
        st = read_state(s)
        if st is None:
            return {"state": "not started"}
        counts = dict(s.execute(select(Game.status, func.count()).where(Game.kind == KIND)
                                .group_by(Game.status)).all())
        kept = s.get(Meta, STANDINGS_KEY)
        return {"state": "over" if st.over else "playing", "entrants": st.entrants,
                "boards": st.boards, "max_boards": self.settings.max_boards,
                "finished": int(counts.get("finished", 0)),
                "running": int(counts.get("running", 0)),
                "queued": int(counts.get("queued", 0)),
                "cancelled": int(counts.get("cancelled", 0)),
                "voided": int(counts.get("voided", 0)),
                "started_at": st.started_at, "ended_at": st.ended_at, "why": st.why,
                "seed": st.seed if st.over else None, "set_ids": st.set_ids,
                "standings": kept.value if kept is not None else None}

    def line(self, s: Session) -> str | None:
        """The final's progress in one line (``moon host status``), None before it."""
        p = self.progress(s)
        if p["state"] == "not started":
            return None
        done = (f"{p['finished']} of {p['finished'] + p['running'] + p['queued']} games "
                f"finished, {p['running']} running")
        if p["state"] == "over":
            return f"over ({p['why']}): {done}"
        return f"board {p['boards']} (at most {p['max_boards']}): {done}"

    # -- the loop ---------------------------------------------------------------------------
    async def run(self, every_s: float = 1.0) -> None:
        """For as long as the host runs: the final's games (through the matchmaker's loop,
        :meth:`claim`), and every ``every_s`` its :meth:`tick_now` and, when final games
        have finished since, their fit in a worker process."""
        games = asyncio.create_task(self.matchmaker.run(self.claim), name="host-final-games")
        worker: BatchWorker | None = None
        fitted = -1
        try:
            while True:
                await asyncio.sleep(every_s)
                if self.matchmaker.outage.on:  # said once by the outage, mended by it
                    continue
                try:
                    if await self.writer.write(self.tick_now):
                        self.matchmaker.wake()
                    with self.Session() as s:
                        st = read_state(s)
                        n = self._finished(s) if st is not None else 0
                        kept = s.get(Meta, STANDINGS_KEY)
                        stored = kept.value.get("games") if kept is not None else None
                    if st is None or (n == fitted and stored == n) or not st.entrants:
                        continue
                    worker = worker or BatchWorker()
                    got, ratings = await worker.run(fit_from_database, self.url,
                                                    st.entrants, self.bootstrap, st.seed)
                    await self.writer.write(self.store_standings, got, ratings)
                    fitted = got
                except asyncio.CancelledError:
                    raise
                except Exception as e:
                    if cannot_write(e):  # the database is gone: one line of the outage
                        self.matchmaker.outage.hit("the final's step", e)
                    elif isinstance(e, SQLAlchemyError | OSError):
                        log.warning("the final's step failed: %s (tried again in a moment)",
                                    e.__class__.__name__)
                    else:
                        log.exception("the final's step failed")
        finally:
            games.cancel()
            await asyncio.gather(games, return_exceptions=True)
            if worker is not None:
                worker.stop()


__all__ = ["IN_PLAY", "KIND", "STANDINGS_KEY", "STATE_KEY", "Final", "FinalState",
           "board_games", "final_rows", "fit_final", "fit_from_database", "read_state",
           "season_order", "separated", "standings_of"]
