"""The Dask executor: a :class:`~arena.executor.local.GameExecutor` whose games are tasks on a
Dask cluster's workers (docs/distributed.md).

Each game is one task (:func:`arena.cluster.worker.play_task`) that runs where the
scheduler finds the worker resources it asks for (:func:`resources_for`): ``seats``, one
per bot process or container, and ``docker``, one per seat run in a container. The
client (this process) owns what a run writes: the task sends back the result, the
record and the seat logs, and the executor writes the record files; the caller (a
ladder, a host) writes its results as with the local pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ..bots.versions import bot_version
from ..errors import ConfigError, InfrastructureError
from ..executor.local import FinishedGame, GameRequest
from ..records.record import write_atomic
from .artifacts import pack_folder
from .logs import one_line, quiet_dask_logs
from .worker import GameJob, GameOutcome, play_task

if TYPE_CHECKING:
    from types import TracebackType

    from distributed import Client, Future

log = logging.getLogger("arena.cluster")

SEATS = "seats"
"""The worker resource a game takes one of per seat (bot process or container): give a
worker as many as the bots it may run at once (its cores, for bots that compute)."""
DOCKER = "docker"
"""The worker resource a game takes one of per seat run in Docker: give it (as many as
``seats``) only to workers whose machine has a Docker engine."""
_ADDRESS = re.compile(r"((tcp|tls)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}")


def check_address(address: str, where: str = "--cluster") -> str:
    """A Dask scheduler's address, checked: ``tcp://HOST:PORT`` (or ``tls://``; a bare
    ``HOST:PORT`` means tcp).

    Raises:
        ConfigError: anything else (``where`` names the setting).
    """
    if not isinstance(address, str) or not _ADDRESS.fullmatch(address.strip()):
        raise ConfigError(f"{where}: {address!r} is not a Dask scheduler's address: give "
                          "tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)")
    address = address.strip()
    return address if "://" in address else f"tcp://{address}"


def resources_for(request: GameRequest) -> dict[str, float]:
    """The worker resources a game takes while it runs: ``{"seats": <bots>}``, and
    ``{"docker": <bots in containers>}`` when any is."""
    needs: dict[str, float] = {SEATS: len(request.bots)}
    docker = sum(1 for b in request.bots if b.runner == "docker")
    if docker:
        needs[DOCKER] = docker
    return needs


def _fits(worker: dict[str, Any], needs: dict[str, float]) -> bool:
    have = worker.get("resources") or {}
    return all(float(have.get(k, 0)) >= v for k, v in needs.items())


class DaskExecutor:
    """Plays each game as a task on a Dask cluster (see the module's docstring).

    Args:
        address: the scheduler, ``tcp://HOST:PORT`` (:func:`check_address`).
        record_dir: where game records and seat logs are written (as the local pool
            writes them: ``<game_id>.json``, ``logs/<game_id>.seat<N>.log``); None: none.
        capacity: games handed to the cluster at once; None: as many as the workers'
            ``seats`` hold games of ``players`` bots when the executor starts (at least 1).
            More wait on the scheduler until seats are free.
        players: bots per game, for the default capacity.
        grace_s: on exit, how long games still running may go on before they are aborted
            (seconds). Their ``play`` then raises InfrastructureError.
        connect_timeout_s: how long to try to reach the scheduler (seconds).
        worker_wait_s: how long a game waits for a worker that can play it (with the
            resources it needs) before the executor gives up with a ConfigError (seconds).

    Raises:
        ConfigError: a bad address (here); on entering, a scheduler that cannot be
            reached, no worker, or ``distributed`` not installed.
    """

    def __init__(self, address: str, record_dir: Path | None, *, capacity: int | None = None,
                 players: int = 3, grace_s: float = 1.0, connect_timeout_s: float = 10.0,
                 worker_wait_s: float = 60.0) -> None:
        self.address = check_address(address)
        if capacity is not None and capacity < 1:
            raise ConfigError(f"capacity {capacity}: must be at least 1")
        self.record_dir = record_dir
        self.capacity = capacity or 1
        self._capacity = capacity
        self.players = players
        self.grace_s = grace_s
        self.connect_timeout_s = connect_timeout_s
        self.worker_wait_s = worker_wait_s
        self.session = secrets.token_hex(6)
        """Names this executor's tasks and events on the cluster."""
        self.fetched = 0
        """Artifacts the workers had to fetch for this executor's games (cache misses)."""
        self._client: Client | None = None
        self._artifacts: dict[Path, tuple[str, str, Future[bytes]]] = {}
        """By bot folder: its version, its artifact's version and the artifact."""
        self._artifact_lock = asyncio.Lock()
        self._running: dict[str, Future[GameOutcome]] = {}
        self._workers: dict[str, dict[str, Any]] = {}
        self._workers_at = 0.0

    # -- start and stop ------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        try:
            from distributed import Client
        except ImportError:
            raise ConfigError("a cluster needs Dask's distributed package: pip install "
                              "'moon-arena[cluster]'") from None
        quiet_dask_logs()
        try:
            self._client = await Client(self.address, asynchronous=True,
                                        timeout=self.connect_timeout_s, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise ConfigError(f"cannot reach the Dask scheduler at {self.address} "
                              f"({one_line(e)}): start it (dask scheduler) or fix "
                              "--cluster") from None
        try:
            workers = await self._wait_for(lambda ws: bool(ws), self.worker_wait_s)
            if not workers:
                raise ConfigError(f"no worker is connected to the Dask scheduler at "
                                  f"{self.address} (waited {self.worker_wait_s:g} s): start "
                                  "some (dask worker ... --resources \"seats=N\")")
            if self._capacity is None:
                slots = sum(min(int(w.get("nthreads") or 1),
                                int(float((w.get("resources") or {}).get(SEATS, 0))
                                    // max(1, self.players)))
                            for w in workers.values())
                self.capacity = max(1, slots)
            from .warm import WarmWorkers

            # each worker's runner closes with the worker (registered once per cluster)
            await self._client.register_plugin(WarmWorkers())
        except BaseException:
            await self._close()
            raise
        log.info("cluster %s: %d worker(s), %d game(s) at once", self.address, len(workers),
                 self.capacity)
        return self

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None,
                        tb: TracebackType | None) -> None:
        client = self._client
        if client is None:
            return
        try:
            running = list(self._running.values())
            if running and self.grace_s > 0:
                await asyncio.wait([asyncio.ensure_future(_settled(f)) for f in running],
                                   timeout=self.grace_s)
            from distributed import Event

            stop = Event(self._stop_event, client=client)
            await stop.set()
            running = [f for f in self._running.values() if not f.done()]
            if running:  # each notices the stop within a poll and sends back an abort
                await asyncio.wait([asyncio.ensure_future(_settled(f)) for f in running],
                                   timeout=3 * 1.0 + 10)
            for f in self._running.values():
                if not f.done():
                    await f.cancel()
            await stop.clear()
        except Exception as e:  # the scheduler went away: nothing more to tell it
            log.warning("cluster %s: stopping: %s", self.address, one_line(e))
        finally:
            await self._close()

    async def _close(self) -> None:
        client, self._client = self._client, None
        self._artifacts.clear()
        self._running.clear()
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close(timeout=5)

    @property
    def _stop_event(self) -> str:
        return f"moon-stop-{self.session}"

    # -- workers -------------------------------------------------------------------------
    async def _workers_now(self, max_age_s: float = 2.0) -> dict[str, dict[str, Any]]:
        assert self._client is not None
        if time.monotonic() - self._workers_at > max_age_s:
            scheduler = self._client.scheduler
            assert scheduler is not None  # a connected client's
            info = await scheduler.identity(n_workers=-1)
            self._workers = dict(info.get("workers") or {})
            self._workers_at = time.monotonic()
        return self._workers

    async def _wait_for(self, ok: Any, wait_s: float) -> dict[str, dict[str, Any]]:
        """The workers, once ``ok(workers)`` holds (or after ``wait_s``: as they are)."""
        deadline = time.monotonic() + wait_s
        while True:
            workers = await self._workers_now(0.0 if self._workers_at else 2.0)
            if ok(workers) or time.monotonic() >= deadline:
                return workers
            await asyncio.sleep(0.5)

    async def _check_fits(self, request: GameRequest, needs: dict[str, float]) -> None:
        """Wait (up to ``worker_wait_s``) for a worker that offers ``needs``.

        Raises:
            ConfigError: none came.
        """
        if any(_fits(w, needs) for w in (await self._workers_now()).values()):
            return
        workers = await self._wait_for(lambda ws: any(_fits(w, needs) for w in ws.values()),
                                       self.worker_wait_s)
        if any(_fits(w, needs) for w in workers.values()):
            return
        want = ",".join(f"{k}={v:g}" for k, v in needs.items())
        raise ConfigError(
            f"no worker of the cluster at {self.address} can play game {request.game_id}: "
            f"it needs the worker resources {want} (waited {self.worker_wait_s:g} s); start "
            f"workers with dask worker {self.address} --resources \"{want}\" or more"
            + (" on machines with a Docker engine" if DOCKER in needs else ""))

    # -- artifacts -----------------------------------------------------------------------
    async def _artifact(self, folder: Path) -> tuple[str, Future[bytes]]:
        """A bot folder's artifact on the cluster and the version it unpacks to: packed
        (:func:`~arena.cluster.artifacts.pack_folder`) and scattered once per executor, and
        again if every worker that held it left. The folder is hashed again for each game:
        a bot edited during the run is a new version, sent as such."""
        assert self._client is not None
        async with self._artifact_lock:
            try:
                now = await asyncio.to_thread(bot_version, folder)
            except OSError as e:
                raise InfrastructureError(f"cannot read the bot folder {folder}: {e}"
                                          ) from None
            have = self._artifacts.get(folder)
            if have is not None and have[2].status == "finished":
                if now == have[0]:
                    return have[1], have[2]
            elif have is not None:
                log.info("bot artifact %s lost with its workers: sent again", have[1][:12])
            version, data = await asyncio.to_thread(pack_folder, folder)
            key = f"moon-bot-{version}-{self.session}-{secrets.token_hex(3)}"
            futures = await self._client.scatter({key: data}, hash=False)
            # the folder's version when it was hashed: an edit since is seen next game
            self._artifacts[folder] = (now, version, futures[key])
            return version, futures[key]

    # -- games ---------------------------------------------------------------------------
    async def play(self, request: GameRequest) -> FinishedGame:
        """Play one game on a worker; see :meth:`arena.executor.local.GameExecutor.play`.

        Raises:
            InfrastructureError: the executor is not running; the game could not be
                played (its worker left the cluster mid-game, the scheduler went away, a
                bot could not be fetched or built on the worker), it ended ABORTED or
                CANCELLED, or its record could not be written here (its ``__cause__``
                the ``OSError``: a full disk), as with the local pool.
            ConfigError: a bad request (wrong number of bots, a duplicate id), a worker
                running another moon-arena, or no worker with the resources it needs.
        """
        client = self._client
        if client is None:
            raise InfrastructureError(f"game {request.game_id}: the executor is not running")
        if len(request.bots) != request.ruleset.players:
            raise ConfigError(f"{request.ruleset.players} bots are needed for this ruleset, "
                              f"got {len(request.bots)}")
        if request.game_id in self._running:
            raise ConfigError(f"game id {request.game_id!r} is already being played")
        needs = resources_for(request)
        await self._check_fits(request, needs)
        try:
            artifacts = [await self._artifact(b.folder) for b in request.bots]
        except InfrastructureError:
            raise
        except Exception as e:  # the scheduler went away while handing it over
            raise InfrastructureError(f"game {request.game_id}: cannot hand its bots to the "
                                      f"cluster: {one_line(e)}") from None
        job = GameJob(request=request, versions=tuple(v for v, _ in artifacts),
                      started_event=f"moon-started-{self.session}-{request.game_id}",
                      stop_event=self._stop_event)
        key = f"moon-game-{request.game_id}-{self.session}"
        future = client.submit(play_task, job, dict(artifacts), key=key, resources=needs,
                               pure=False)
        self._running[request.game_id] = future
        try:
            outcome = await future
        except asyncio.CancelledError:
            raise  # our caller's: __aexit__ stops the task on the worker
        except Exception as e:  # a worker died too often, the scheduler went away...
            self._running.pop(request.game_id, None)
            raise InfrastructureError(f"game {request.game_id} on the cluster: "
                                      f"{one_line(e)}") from None
        self._running.pop(request.game_id, None)
        with contextlib.suppress(Exception):
            from distributed import Event

            await Event(job.started_event, client=client).clear()
        # the files' writes off the event loop: it serves the other games meanwhile
        return await asyncio.to_thread(self._finish, request, outcome)

    def _finish(self, request: GameRequest, outcome: GameOutcome) -> FinishedGame:
        """Write what came back (the record, the seat logs), then the result or the error.

        Raises:
            InfrastructureError: the worker's (it could not play the game), or the
                record could not be written here (its ``__cause__`` the ``OSError``).
            ConfigError: the request was wrong (the worker said why).
        """
        self.fetched += outcome.fetched
        record_path = None
        if self.record_dir is not None:
            if outcome.record is not None:
                record_path = self.record_dir / f"{request.game_id}.json"
                try:
                    write_atomic(record_path, outcome.record)
                except OSError as e:  # a full disk, say: as the local pool's referee
                    # says it, one line a game; the caller voids the game (the host once
                    # it can write again), never rates it
                    log.warning("match %s: cannot write the record: %s", request.game_id,
                                e.strerror or e)
                    raise InfrastructureError(
                        f"game {request.game_id}: its record could not be written: "
                        f"{e.strerror or e}") from e
            for seat, data in outcome.logs.items():
                # a seat log is not synced, as the local pool's are not: syncing each
                # made writing a game's files take 12-42 ms a game here. One that cannot
                # be written is lost, as a local bot's output is on a full disk: the
                # game is recorded
                with contextlib.suppress(OSError):
                    write_atomic(self.seat_log(request.game_id, seat), data, sync=False)
        if outcome.config_error:
            raise ConfigError(outcome.config_error)
        if outcome.infrastructure_error or outcome.finished is None:
            raise InfrastructureError(outcome.infrastructure_error
                                      or f"game {request.game_id}: the worker sent no result")
        return dataclasses.replace(outcome.finished, request=request,
                                   record_path=str(record_path) if record_path else None)

    def seat_log(self, game_id: str, seat: int) -> Path:
        """Where the output of ``seat`` in game ``game_id`` is written once the game is
        over (the worker keeps none of it).

        Raises:
            ConfigError: no record folder.
        """
        if self.record_dir is None:
            raise ConfigError("this executor keeps no records (record_dir is None)")
        return self.record_dir / "logs" / f"{game_id}.seat{seat}.log"


def check_cluster(address: str, players: int = 3, connect_timeout_s: float = 10.0,
                  worker_wait_s: float = 10.0) -> int:
    """Reach the scheduler at ``address`` and see its workers, before a long-running
    caller (the host) starts; returns how many games of ``players`` bots its workers'
    seats hold at once.

    Raises:
        ConfigError: a bad address, the scheduler unreachable, no worker,
            ``distributed`` not installed.
    """
    async def probe() -> int:
        async with DaskExecutor(address, None, players=players, grace_s=0.0,
                                connect_timeout_s=connect_timeout_s,
                                worker_wait_s=worker_wait_s) as ex:
            return ex.capacity

    return asyncio.run(probe())


async def _settled(future: Future[Any]) -> None:
    with contextlib.suppress(Exception):
        await future


__all__ = ["DOCKER", "SEATS", "DaskExecutor", "check_address", "check_cluster",
           "resources_for"]
