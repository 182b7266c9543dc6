"""The competition host's engine room: :class:`Host`, one per ``moon host run``, builds its
parts, starts their loops in :meth:`Host.run` (on the server's event loop, beside the API)
and stops them; the API's routes, the web pages and ``moon host`` read it.

The parts, each in a module of its own:

- :class:`arena.host.builds.Builds`: the build queue and the validation gate (its
  builders, ``[runner] builders``, take pending versions in turns);
- :class:`arena.host.matchmaker.Matchmaker`: claims the next rated game (a new duplicate
  set when none is queued, :mod:`arena.host.matchmaking`), plays and records it;
- :class:`arena.host.recorder.Recorder`: the one writer of game results — a finished game
  is written whole (game, seats, faults, the live rating update, the ``rated`` mark) in
  one transaction, so a host killed at any moment loses no finished game and rates none
  twice; a game that could not be played is voided and replayed;
- :class:`arena.host.final.Final`: the final, from the phase ``final`` on: its entrants,
  boards and games (through the matchmaker's loop, one game of a board at a time) and its
  standings;
- :class:`arena.host.ratings.Ratings`: the batch fits, in a worker process, and the
  repairs of a stopped host (``moon host rerate``);
- :class:`arena.host.retention.Retention`: old records pruned, seat logs past a version's
  last ``full_logs`` games cut to their tail.

They share :class:`arena.host.writer.Writer`, the one thread every write of theirs goes
through, in order (results, claims and rating updates never race), and
:class:`arena.host.executor.GameSlots`, the executor and its ``[matchmaking] concurrency``
slots. At start :meth:`Host.recover` voids the games that were running (they are replayed
as new games, never rated) and sends versions caught in their build or validation back to
the queue.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import CursorResult, Engine, func, select, update
from sqlalchemy.orm import Session, selectinload, sessionmaker

from .. import sandbox
from ..bots.manifest import BotSpec, load_bot
from ..errors import ConfigError
from ..sandbox.containment import cleanup_stale_once
from .builds import Builds, VersionSpecs, for_participant
from .db import web_engine
from .executor import ExecutorFactory, GameExecutor, GameSlots, LocalExecutor
from .final import Final
from .lock import HostLock
from .matchmaker import Matchmaker
from .memory import trim_heap
from .models import Game, Participant, Version
from .outage import Mender, Outage, cannot_write, probe_disk
from .ratings import Ratings
from .recorder import MAX_ATTEMPTS, RATE_WINDOW_S, Counters, Recorder
from .refusals import UploadRefusals
from .registrations import RegistrationWindow
from .retention import Retention, seat_log_path
from .season import Season
from .security import digest
from .settings import ADMIN_TOKEN_FILE, Settings
from .tables import CUT_BY_RESTART, Tables
from .tables import KIND as TABLE_KIND
from .writer import Writer

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits

log = logging.getLogger("arena.host")

T = TypeVar("T")

RECORDS = "records"
STORE = "store"


class Host:
    """One competition: its folder, settings, database, and the parts that run its loops
    (:attr:`builds`, :attr:`matchmaker`, :attr:`recorder`, :attr:`ratings`,
    :attr:`retention`; see the module's docstring).

    Raises (on construction):
        ConfigError: a bad setting or reference bot.
    """

    def __init__(self, folder: Path, settings: Settings, engine: Engine,
                 executor_factory: ExecutorFactory | None = None,
                 lock: HostLock | None = None) -> None:
        self.folder = folder.resolve()
        self._lock = lock
        self.settings = settings
        self.engine = engine
        self.Session = sessionmaker(engine, expire_on_commit=False)
        self.web_engine = web_engine(engine)
        self.WebSession = sessionmaker(self.web_engine, expire_on_commit=False)
        """Sessions of the API and the pages: their own connections
        (:func:`arena.host.db.web_engine`), never the games'."""
        self.ruleset = settings.ruleset()
        self.tc = settings.tc()
        self.record_dir = self.folder / RECORDS
        self.store = self.folder / STORE
        self.capacity = settings.matchmaking.concurrency
        self.references = [self._reference(r.path) for r in settings.reference]
        self.counters = Counters()
        self.slots = GameSlots(self.capacity)
        self.writer = Writer()
        self.recorder = Recorder(self.Session, self.writer, self.ruleset.players,
                                 settings.matchmaking.forfeit_limit, self.counters)
        self.retention = Retention(self.Session, self.writer, self.record_dir,
                                   self.ruleset.players, settings.retention.full_logs,
                                   settings.retention.record_days, self.seat_log)
        self.ratings = Ratings(self.Session, self.writer,
                               engine.url.render_as_string(hide_password=False),
                               settings.matchmaking.bootstrap, settings.matchmaking.seed,
                               settings.matchmaking.batch_every_s,
                               unwritten=self._unwritten)
        self.registrations = RegistrationWindow(settings.competition.registrations_per_hour)
        """Open registrations per client address in the last hour (docs/host.md); its
        ``lock`` is held by every registration from its checks (the name, and for an open
        one its limits) to its commit: of two names that read alike sent at once, the
        second sees the first."""
        self.submissions = threading.Lock()
        """Held by a submission from its quota check to its new version's commit
        (:func:`arena.host.routes.submissions.submit`): of two at once, the second sees the
        first's version (its quota, its number, its sources)."""
        self.refusals = UploadRefusals(self.Session)
        """Refused uploads per participant over the last day, in the database: each counts
        against ``max_versions_per_day`` (:mod:`arena.host.refusals`)."""
        self.rng = random.Random()
        self._executor_factory: ExecutorFactory = executor_factory or functools.partial(
            LocalExecutor, fork_server=settings.runner.fork_server)
        self._stopping = asyncio.Event()
        self.docker_limits: DockerLimits | None = None
        if settings.runner.kind == "docker":
            from ..sandbox.docker import DockerLimits

            self.docker_limits = DockerLimits(memory_mb=settings.runner.memory_mb,
                                              build_timeout_s=settings.runner.build_timeout_s,
                                              pull=frozenset(settings.runner.images or ()))
        self.specs = VersionSpecs(self.store, settings.runner.kind)
        self.outage = Outage()
        """Whether the host can write to its database and disk (:mod:`arena.host.outage`)."""
        self.matchmaker = Matchmaker(
            self.Session, self.writer, self.recorder, self.slots, self.specs, self.ruleset,
            settings.competition.preset, self.tc, self.docker_limits,
            settings.matchmaking.closeness, settings.matchmaking.seed, self.rng,
            self.counters, self.cut_logs, self._stopping, outage=self.outage)
        self.builds = Builds(self.folder, settings, self.Session, self.writer, self.recorder,
                             self.slots, self.specs, self.references, self.ruleset, self.tc,
                             self.docker_limits, self._judged, outage=self.outage)
        self.season = Season(self.Session, self.writer, settings.calendar.calendar(),
                             self.outage)
        """The phase (docs/host.md, "A season"): rated games only in a phase that plays."""
        self.matchmaker.gate = lambda s: self.season.refused(s, "play") is None
        self.matchmaker.placement_sets = settings.matchmaking.placement_sets
        self.final = Final(self.Session, self.writer, self.matchmaker, self.season,
                           settings.final, self.ruleset.players,
                           engine.url.render_as_string(hide_password=False),
                           settings.matchmaking.bootstrap)
        """The final (docs/host.md, "The final"): its games from the phase ``final`` on."""
        self.matchmaker.challenge_share = settings.challenges.share
        self.matchmaker.references = {r.name: r for r in self.references}
        self.ratings_epoch = 0
        """Counts the games voided by the organiser: the pages' running tallies of the
        games (leaderboard, rating history) start again when it changes."""
        self.tables = Tables(settings.tables, self.Session, self.writer, self.recorder,
                             self.slots, self.specs, self.references, self.ruleset,
                             settings.competition.preset, self.tc, self.docker_limits,
                             self.folder)
        """People playing the bots at tables (:mod:`arena.host.tables`; never rated)."""
        self.mender = Mender(self.Session, self.writer, self.recorder, self.outage,
                             playing=lambda: set(self.matchmaker.running)
                             | self.tables.playing(),
                             building=lambda: set(self.builds.busy), wake=self._mended,
                             probe=functools.partial(probe_disk, self.record_dir))
        self.changes = 0
        """Counts the changes a visitor's cached page must not hide (a version judged):
        :class:`arena.host.visitors.Visitors` reads anew what it cached before one."""

    def _mended(self) -> None:
        """The host can write again (:class:`arena.host.outage.Mender`): games and builds
        go on."""
        self.changes += 1
        self.matchmaker.wake()
        self.builds.wake()

    def _judged(self) -> None:
        """A version was judged: its pages change, and a new active one may start games."""
        self.changes += 1
        self.matchmaker.wake()

    def _reference(self, path: str) -> BotSpec:
        p = Path(path)
        folder = p if p.is_absolute() else self.folder / p
        try:
            spec = load_bot(folder)
        except ConfigError as e:
            raise ConfigError(f"[[reference]] {path}: {e}") from None
        return dataclasses.replace(spec, runner="local")  # the host's own, trusted

    # -- set-up ---------------------------------------------------------------------------
    def ensure_admin(self) -> None:
        """Make sure the organiser (the token in ``admin.token``) has an account."""
        path = self.folder / ADMIN_TOKEN_FILE
        if not path.is_file():
            raise ConfigError(f"{path}: missing (made by `moon host init`): the organiser's "
                              "token")
        token_hash = digest(path.read_text().strip())
        with self.Session.begin() as s:
            admin = s.scalar(select(Participant).where(Participant.is_admin))
            if admin is None:
                s.add(Participant(name="admin", token_hash=token_hash, is_admin=True))
            elif admin.token_hash != token_hash:
                admin.token_hash = token_hash  # the organiser replaced the file

    def recover(self) -> dict[str, int]:
        """Start-up after a stop or a crash: games that were running are voided (their
        results were never written) and replayed as new games, but a table's (its person
        is gone: it ends there, :data:`arena.host.tables.CUT_BY_RESTART`, and its page
        says so); builds and validations that were under way start again. Returns what
        was done: ``voided`` games (``tables`` of them at tables), ``rebuilt`` versions."""
        with self.Session.begin() as s:
            # an UPDATE's result is a CursorResult, which SQLAlchemy's stubs type as Result
            rebuilt = cast(CursorResult[Any], s.execute(update(Version).where(
                Version.status.in_(("building", "validating"))).values(status="pending")
            )).rowcount
            # reasons written before they were kept free of the host's folder
            s.execute(update(Version).where(Version.reason.contains(str(self.folder),
                                                              autoescape=True))
                      .values(reason=func.replace(Version.reason, str(self.folder),
                                                  "<competition>")))
            running = s.scalars(select(Game).where(Game.status == "running")
                                .options(selectinload(Game.seats))).all()
            for g in running:
                self.recorder.void(s, g, CUT_BY_RESTART if g.kind == TABLE_KIND else
                                   "the host stopped while the game was being played")
        return {"voided": len(running), "rebuilt": int(rebuilt or 0),
                "tables": sum(g.kind == TABLE_KIND for g in running)}

    # -- running --------------------------------------------------------------------------
    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the one writer thread."""
        return await self.writer.write(fn, *args)

    @property
    def _executor(self) -> GameExecutor | None:
        """The executor while :meth:`run` runs (the game pages follow its games)."""
        return self.slots.executor

    def _unwritten(self, what: str, e: BaseException) -> bool:
        """Tell the outage of ``e`` if it is a failure to write (``what`` failed); whether
        it was."""
        if not cannot_write(e):
            return False
        self.outage.hit(what, e)
        return True

    def wake(self) -> None:
        """A new version was stored: start its build (thread-safe)."""
        self.builds.wake()

    async def run(self) -> None:
        """Serve until :meth:`stop`: the build queue, the games, the batch fits. On the
        way out the games still running are aborted by the executor (their bots and
        containers are stopped and removed) and stay ``running`` in the database: the
        next start voids and replays them, as after a crash."""
        # the phase first: the pages and the API show it from the first request, and a
        # phase that plays no games cancels the queued ones, while the clean-up and the
        # executor's start below take seconds on a loaded machine
        phases = asyncio.create_task(self.season.run(), name="host-phases")
        try:
            # what a killed host left: bot processes and cgroups, containers
            await asyncio.to_thread(cleanup_stale_once)
            if self.settings.runner.kind == "docker":
                await asyncio.to_thread(sandbox.cleanup_stale)
            async with self._executor_factory(self.record_dir, self.capacity) as ex:
                self.slots.executor = ex
                tasks = [*(asyncio.create_task(self.builds.builder(), name=f"host-builder-{i}")
                           for i in range(self.settings.runner.builders)),
                         phases,
                         asyncio.create_task(self.matchmaker.run(), name="host-matchmaker"),
                         asyncio.create_task(self.final.run(), name="host-final"),
                         # a quiet moment after each fit: retention, and the heap's free
                         # memory given back (docs/host.md, "Memory")
                         asyncio.create_task(self.ratings.run((self.prune, trim_heap)),
                                             name="host-batch"),
                         asyncio.create_task(self.mender.run(), name="host-mender")]
                try:
                    await self._stopping.wait()
                finally:
                    games = [*self.matchmaker.running.values(), *self.tables.tasks()]
                    for t in [*tasks, *games]:
                        t.cancel()
                    await asyncio.gather(*tasks, *games, return_exceptions=True)
            # the executor has aborted what was still playing: let those games end
            await self.slots.settle()
        finally:
            phases.cancel()
            await asyncio.gather(phases, return_exceptions=True)
            self.writer.shutdown()

    def stop(self) -> None:
        """Ask :meth:`run` to end (games still running are voided, replayed next time)."""
        self._stopping.set()

    def close(self) -> None:
        """Give back the competition's locks (:class:`arena.host.lock.HostLock`, taken by
        :func:`arena.host.run.open_host`) and the database's connections; the host is not
        to be used after. Safe to call twice."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None
        if self.web_engine is not self.engine:
            self.web_engine.dispose()
        self.engine.dispose()

    # -- builds and validation ------------------------------------------------------------
    def spec(self, version: Version, bot_name: str) -> BotSpec:
        """The runnable bot of ``version`` (:class:`arena.host.builds.VersionSpecs`)."""
        return self.specs(version, bot_name)

    def for_participant(self, text: str) -> str:
        """``text`` as a participant may see it (:func:`arena.host.builds.for_participant`)."""
        return for_participant(text, self.folder)

    def build_log(self, version_id: int) -> Path:
        """Where a version's build and validation log is kept."""
        return self.builds.build_log(version_id)

    @property
    def _builder_problem(self) -> str:
        """The builder's last infrastructure failure, "" after a success (the status)."""
        return self.builds.problem

    # -- rated games ----------------------------------------------------------------------
    def per_version(self) -> int:
        """The running rated games one version may sit in while other games can be played
        (:meth:`arena.host.matchmaker.Matchmaker.per_version`)."""
        return self.matchmaker.per_version()

    # -- ratings, retention --------------------------------------------------------------
    def rerate(self) -> int:
        """Recompute every version's live rating from all finished rated games
        (:meth:`arena.host.ratings.Ratings.rerate`, on a stopped host); how many games."""
        return self.ratings.rerate()

    def batch_now(self) -> int:
        """Refit the batch ratings in this process (``moon host rerate``:
        :meth:`arena.host.ratings.Ratings.batch_now`); how many games went into it."""
        return self.ratings.batch_now()

    def prune(self) -> int:
        """Retention: delete old records of retired versions' games
        (:meth:`arena.host.retention.Retention.prune`); how many games were pruned."""
        return self.retention.prune()

    def cut_logs(self, game_id: str) -> int:
        """Cut the older seat logs of game ``game_id``'s versions
        (:meth:`arena.host.retention.Retention.cut_logs`); how many logs were cut."""
        return self.retention.cut_logs(game_id)

    def seat_log(self, game_id: str, seat: int) -> Path:
        """Where a seat's stderr of a game is kept."""
        return (self.slots.seat_log(game_id, seat)
                or seat_log_path(self.record_dir, game_id, seat))

    # -- status ---------------------------------------------------------------------------
    def status(self, s: Session, finished: int | None = None) -> dict[str, Any]:
        """The host's status: queue, running games, games/min, workers, versions.
        ``finished``: the number of finished rated games when the caller knows it (the
        leaderboard's tally does: its count reads every finished game's index entry)."""
        def count(*where: Any) -> int:
            return int(s.scalar(select(func.count()).select_from(Game).where(*where)) or 0)

        now = time.monotonic()
        window = min(RATE_WINDOW_S, max(now - self.counters.started, 1.0))
        recent = sum(1 for t in self.counters.finished if now - t <= window)
        versions = dict(s.execute(select(Version.status, func.count())
                                  .group_by(Version.status)).all())
        return {
            "name": self.settings.competition.name,
            "queued": count(Game.status == "queued"),
            "running": self._running(s) if self.outage.on else count(Game.status == "running"),
            "finished": count(Game.status == "finished", Game.kind == "rated")
            if finished is None else finished,
            "voided": count(Game.status == "voided"),
            "games_per_min": round(recent * 60.0 / window, 2),
            "workers": self.capacity,
            "runner": self.settings.runner.kind,
            "versions": {str(k): int(v) for k, v in versions.items()},
            "builds_pending": int(versions.get("pending", 0)) + int(versions.get("building", 0))
            + int(versions.get("validating", 0)),
            "uptime_s": round(now - self.counters.started, 1),
            "waiting": self._waiting(int(versions.get("active", 0))),
            **self._phase(s),
        }

    def _phase(self, s: Session) -> dict[str, Any]:
        v = self.season.view(s)
        waiting = "" if v.games else (self.season.refused(s, "play") or "")
        final = self.final.line(s)
        return {"phase": v.phase, "next_phase": v.next_phase, "next_change_at": v.next_at,
                **({"waiting": waiting} if waiting and final is None else {}),
                **({"final": final} if final else {})}

    def _running(self, s: Session) -> int:
        """The games being played, while the host cannot write: the database still has
        ``running`` the games whose results it could not write (voided once it can:
        :class:`arena.host.outage.Mender`), which are not."""
        playing, building = set(self.matchmaker.running), set(self.builds.busy)
        return sum(1 for g in s.scalars(select(Game).where(Game.status == "running")
                                        .options(selectinload(Game.seats)))
                   if g.id in playing or (g.kind != "rated" and any(
                       x.version_id in building for x in g.seats)))

    @staticmethod
    def _waiting(active: int) -> str:
        """Why no rated game can start, or "" when they can: a game needs two active
        versions (:func:`arena.host.matchmaking.pick_group`; with fewer versions than seats,
        a version takes more than one seat)."""
        if active >= 2:
            return ""
        return (f"no rated games yet: they start once 2 versions are active "
                f"({'none is' if active == 0 else 'only 1 is'} now)")


__all__ = ["MAX_ATTEMPTS", "RATE_WINDOW_S", "Counters", "Host"]
