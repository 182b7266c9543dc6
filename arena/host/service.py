"""The competition host's engine room: builds and validates new versions, keeps the
matchmaker's games running, records results and ratings, and recovers after a crash.

One :class:`Host` per ``moon host run``. Its loops run on the server's event loop (beside
the API); every write of theirs goes through one writer thread, in order, so results and
rating updates never race. A finished game is written whole — game, seats, faults, the
live rating update and the ``rated`` mark — in one transaction: a host killed at any moment
loses no finished game and rates none twice. At start :meth:`Host.recover` voids the games
that were running (they are replayed as new games, never rated) and sends versions caught
in their build or validation back to the queue.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import functools
import logging
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session, selectinload, sessionmaker

from .. import sandbox
from ..bots.manifest import BotSpec, load_bot
from ..errors import ConfigError
from ..ladder.schedule import board_seed
from ..sandbox.containment import cleanup_stale_once
from . import matchmaking
from .builds import Builds, VersionSpecs, for_participant
from .executor import (
    ExecutorFactory,
    GameExecutor,
    GameRequest,
    GameSlots,
    InfrastructureError,
    LocalExecutor,
)
from .lock import HostLock
from .memory import trim_heap
from .models import (
    DuplicateSet,
    Game,
    GameSeat,
    Participant,
    Version,
    utcnow,
)
from .ratings import Ratings
from .recorder import MAX_ATTEMPTS, RATE_WINDOW_S, Counters, Recorder
from .registrations import RegistrationWindow
from .retention import Retention, seat_log_path
from .security import digest
from .settings import ADMIN_TOKEN_FILE, Settings
from .writer import Writer

log = logging.getLogger("arena.host")

T = TypeVar("T")

RECORDS = "records"
STORE = "store"



class Host:
    """One competition: its folder, settings, database and loops.

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
                               settings.matchmaking.batch_every_s)
        self.registrations = RegistrationWindow(settings.competition.registrations_per_hour)
        """Open registrations per client address in the last hour (docs/host.md); its
        ``lock`` is held by every registration from its checks (the name, and for an open
        one its limits) to its commit: of two names that read alike sent at once, the
        second sees the first."""
        self.submissions = threading.Lock()
        """Held by a submission from its quota check to its new version's commit
        (:func:`arena.host.routes.submissions.submit`): of two at once, the second sees the
        first's version (its quota, its number, its sources)."""
        self.rng = random.Random()
        self._executor_factory: ExecutorFactory = executor_factory or functools.partial(
            LocalExecutor, fork_server=settings.runner.fork_server)
        self._wake_games = asyncio.Event()
        self._running: dict[str, asyncio.Task[None]] = {}
        self._stopping = asyncio.Event()
        self.docker_limits: Any = None
        if settings.runner.kind == "docker":
            from ..sandbox.docker import DockerLimits

            self.docker_limits = DockerLimits(memory_mb=settings.runner.memory_mb,
                                              build_timeout_s=settings.runner.build_timeout_s,
                                              pull=frozenset(settings.runner.images or ()))
        self.specs = VersionSpecs(self.store, settings.runner.kind)
        self.builds = Builds(self.folder, settings, self.Session, self.writer, self.recorder,
                             self.slots, self.specs, self.references, self.ruleset, self.tc,
                             self.docker_limits, self._wake_games.set)

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
        results were never written) and replayed as new games; builds and validations
        that were under way start again. Returns what was done."""
        with self.Session.begin() as s:
            rebuilt = s.execute(update(Version).where(
                Version.status.in_(("building", "validating"))).values(status="pending")
            ).rowcount
            # reasons written before they were kept free of the host's folder
            s.execute(update(Version).where(Version.reason.contains(str(self.folder),
                                                              autoescape=True))
                      .values(reason=func.replace(Version.reason, str(self.folder),
                                                  "<competition>")))
            running = s.scalars(select(Game).where(Game.status == "running")
                                .options(selectinload(Game.seats))).all()
            for g in running:
                self.recorder.void(s, g, "the host stopped while the game was being played")
        return {"voided": len(running), "rebuilt": int(rebuilt or 0)}

    # -- running --------------------------------------------------------------------------
    async def write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the one writer thread."""
        return await self.writer.write(fn, *args)

    @property
    def _executor(self) -> GameExecutor | None:
        """The executor while :meth:`run` runs (the game pages follow its games)."""
        return self.slots.executor

    def wake(self) -> None:
        """A new version was stored: start its build (thread-safe)."""
        self.builds.wake()

    async def run(self) -> None:
        """Serve until :meth:`stop`: the build queue, the games, the batch fits. On the
        way out the games still running are aborted by the executor (their bots and
        containers are stopped and removed) and stay ``running`` in the database: the
        next start voids and replays them, as after a crash."""
        # what a killed host left: bot processes and cgroups, containers
        await asyncio.to_thread(cleanup_stale_once)
        if self.settings.runner.kind == "docker":
            await asyncio.to_thread(sandbox.cleanup_stale)
        try:
            async with self._executor_factory(self.record_dir, self.capacity) as ex:
                self.slots.executor = ex
                tasks = [*(asyncio.create_task(self.builds.builder(), name=f"host-builder-{i}")
                           for i in range(self.settings.runner.builders)),
                         asyncio.create_task(self._matchmaker(), name="host-matchmaker"),
                         # a quiet moment after each fit: retention, and the heap's free
                         # memory given back (docs/host.md, "Memory")
                         asyncio.create_task(self.ratings.run((self.prune, trim_heap)),
                                             name="host-batch")]
                try:
                    await self._stopping.wait()
                finally:
                    for t in [*tasks, *self._running.values()]:
                        t.cancel()
                    await asyncio.gather(*tasks, *self._running.values(),
                                         return_exceptions=True)
            # the executor has aborted what was still playing: let those games end
            await self.slots.settle()
        finally:
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
    def _claim(self) -> tuple[str, int, tuple[BotSpec, ...]] | None:
        """Take the next queued game (making a new duplicate set when none is queued) and
        mark it running; None if there is nothing to play.

        A version sits in at most :meth:`per_version` of the running rated games while
        other games can be played: a queued game that would put it over is held back
        (the oldest queued game that is not held goes first, and when none is queued a
        new set is made of the versions under the cap), so one slow bot cannot fill every
        slot with its own long games and starve the others. When nothing else can be
        played (every version at its cap, say with no more versions than seats), the
        oldest held-back game is started, as without the cap."""
        with self.Session.begin() as s:
            active = {v.id: v for v in s.scalars(select(Version).where(
                Version.status == "active").options(selectinload(Version.bot)))}
            cap = self.per_version()
            running = collections.Counter(s.scalars(
                select(GameSeat.version_id).join(Game, GameSeat.game_id == Game.id)
                .where(Game.status == "running", Game.kind == "rated")))
            made_free, made_any = False, False
            while True:
                queued = s.scalars(select(Game).where(Game.status == "queued")
                                   .order_by(Game.created_at, Game.id)
                                   .options(selectinload(Game.seats))).all()
                held: tuple[Game, list[int | None]] | None = None
                for g in queued:
                    ids = [x.version_id for x in g.seats]
                    if not all(i in active for i in ids):
                        g.status = "cancelled"
                        g.void_reason = "a version in it left the pool before it was played"
                        continue
                    if any(running[i] >= cap for i in set(ids) if i is not None):
                        held = held or (g, ids)
                        continue
                    return self._start(g, ids, active)
                if not made_free:  # a set of the versions under the cap
                    made_free = True
                    if self._new_set(s, [v for v in active.values() if running[v.id] < cap]):
                        continue
                if held is not None:  # nothing else can be played
                    return self._start(*held, active)
                if not made_any:  # nothing queued: a set of every active version
                    made_any = True
                    if self._new_set(s, list(active.values())):
                        continue
                return None

    def per_version(self) -> int:
        """The running rated games one version may sit in while other games can be
        played: half the games' slots, rounded up (``[matchmaking] concurrency``)."""
        return max(1, -(-self.capacity // 2))

    def _start(self, g: Game, ids: list[int | None], active: dict[int, Version]
               ) -> tuple[str, int, tuple[BotSpec, ...]]:
        """Mark queued game ``g`` running; its id, seed and bots."""
        g.status = "running"
        g.started_at = utcnow()
        return g.id, g.seed, tuple(self.specs(active[i], active[i].bot.name)
                                   for i in ids if i is not None)

    def _new_set(self, s: Session, active: list[Version]) -> bool:
        pool = [matchmaking.Candidate(v.id, v.games, v.mu, v.sigma) for v in active]
        group = matchmaking.pick_group(pool, self.ruleset.players, self.rng,
                                       self.settings.matchmaking.closeness)
        if not group:
            return False
        dset = DuplicateSet(seed=0)
        s.add(dset)
        s.flush()
        dset.seed = board_seed(self.settings.matchmaking.seed, dset.id)
        now = utcnow()
        for k, seating in enumerate(matchmaking.seatings(group, self.ruleset.players,
                                                         self.rng)):
            g = Game(id=f"s{dset.id}-{k}", kind="rated", dset_id=dset.id, seating=k,
                     seed=dset.seed, status="queued", created_at=now)
            g.seats = [GameSeat(seat=i, version_id=v,
                                side=matchmaking.side(i, self.ruleset.players))
                       for i, v in enumerate(seating)]
            s.add(g)
        s.flush()
        return True

    async def _matchmaker(self) -> None:
        while True:
            await self.slots.acquire()
            try:
                job = await self.write(self._claim)
            except Exception:
                self.slots.release()
                log.exception("matchmaking failed")
                await asyncio.sleep(2)
                continue
            if job is None:
                self.slots.release()
                self._wake_games.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1.0):
                        await self._wake_games.wait()
                continue
            game_id = job[0]
            task = asyncio.create_task(self._play(*job), name=f"game-{game_id}")
            self._running[game_id] = task
            task.add_done_callback(lambda _t, g=game_id: self._running.pop(g, None))

    async def _play(self, game_id: str, seed: int, bots: tuple[BotSpec, ...]) -> None:
        slot = True
        try:
            req = GameRequest(game_id, bots, self.ruleset, self.settings.competition.preset,
                              seed, self.tc, self.docker_limits)
            try:
                fg = await self.slots.play(req)
            except InfrastructureError as e:
                log.warning("game %s voided: %s", game_id, e)
                if not self._stopping.is_set():
                    await self.recorder.void_game(game_id, str(e))
                return
            # the slot is free for the next game now; its claim queues on the one writer
            # behind this result, so it sees this game's outcome (a version disabled...)
            self.slots.release()
            slot = False
            await self.recorder.record(fg)
            self.counters.game_finished()
            try:
                await asyncio.to_thread(self.cut_logs, game_id)
            except Exception:  # the game is recorded: only its bots' older logs stay whole
                log.exception("game %s: its bots' older logs were not cut", game_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("game %s: the host failed", game_id)
            with contextlib.suppress(Exception):
                await self.recorder.void_game(game_id, "the host failed")
        finally:
            if slot:
                self.slots.release()

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
            "running": count(Game.status == "running"),
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
        }

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
