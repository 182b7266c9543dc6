"""A Dask worker's game runner, kept for the worker's lifetime (:class:`WarmRunner`), and
the worker plugin that closes it with the worker (:class:`WarmWorkers`).

A game on a worker (:func:`arena.cluster.worker.play_task`) is played by the worker's one
:class:`~arena.executor.local.LocalExecutor`, started with its first game on an event loop
thread of its own: the referee, its gRPC server and the fork server are set up once per
worker, not once per game, and no game runs on the Dask worker's own event loop. Imported
on workers and by the client only (it imports Dask's ``distributed``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from ..errors import ArenaError, InfrastructureError
from ..executor.local import FinishedGame, GameRequest, LocalExecutor
from .logs import quiet_dask_logs

log = logging.getLogger("arena.cluster")

STOP_POLL_S = 1.0
"""How often a game on a worker asks whether the client has stopped (seconds)."""


@dataclass
class Played:
    """What :meth:`WarmRunner.play` brings back from one game."""

    finished: FinishedGame | None
    """The result; None when the game could not be played (``error`` says why)."""
    error: ArenaError | None
    """What :meth:`LocalExecutor.play <arena.executor.local.LocalExecutor.play>` raised."""
    record: bytes | None
    """The game record's JSON, when one was written."""
    logs: dict[int, bytes]
    """Each seat's log, by seat."""


@dataclass(eq=False)  # kept in a set by identity
class _Pool:
    """One :class:`~arena.executor.local.LocalExecutor` of a :class:`WarmRunner` and the
    folder its records and seat logs go to (read back and removed after each game)."""

    executor: LocalExecutor
    record_dir: Path
    games: int = 0
    """Games it is playing now."""
    retired: bool = False
    """No new game goes to it: it closes when its last game ends."""


class WarmRunner:
    """This worker process's game runner, kept for the worker's lifetime: one
    :class:`~arena.executor.local.LocalExecutor` (its referee and gRPC server on a Unix
    socket, its fork server once a game has a Python SDK bot) on an event loop thread of
    its own, so that a game pays none of their set-up and the Dask worker's event loop is
    never blocked by a game. Each game still gets fresh bot processes that never played.

    A fork server that died takes only the games whose bots it forked (the executor voids
    them); the next game finds it dead and gets a new executor, with a new fork server,
    while the old one closes when its last game ends. A game whose id another game on this
    worker is playing (two clients with the same ids) gets an executor of its own.

    Args:
        concurrency: games at once (the worker's threads: Dask runs no more tasks).
    """

    def __init__(self, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)
        self.pools_opened = 0
        """Executors started so far (1, plus one per fork server lost, plus one-offs)."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="moon-warm-runner",
                                        daemon=True)
        self._pool: _Pool | None = None
        self._pools: set[_Pool] = set()
        self._playing: set[str] = set()
        self._closed = False
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def play(self, request: GameRequest, stopped: Callable[[], bool]) -> Played:
        """Play ``request`` (its bots' folders on this machine) and wait for it, from a
        thread that is not the runner's (a Dask task's); ``stopped()`` is asked every
        :data:`STOP_POLL_S` seconds, and once it is true the game is aborted.

        Raises:
            InfrastructureError: the runner is closed.
        """
        if self._closed:
            raise InfrastructureError(f"game {request.game_id}: the worker is stopping")
        game = asyncio.run_coroutine_threadsafe(self._play(request), self._loop)
        aborted = False
        while True:
            try:
                return game.result(timeout=STOP_POLL_S)
            except concurrent.futures.TimeoutError:
                pass
            if aborted or stopped():
                if not aborted:
                    log.info("game %s: the client stopped: aborting it", request.game_id)
                aborted = True  # asked again each poll: the match may not exist yet
                self._loop.call_soon_threadsafe(self._abort, request.game_id)

    def _abort(self, game_id: str) -> None:
        for pool in self._pools:
            pool.executor.abort(game_id, "the client stopped")

    async def _open(self) -> _Pool:
        record_dir = Path(tempfile.mkdtemp(prefix="moon-cluster-worker-"))
        ex = LocalExecutor(record_dir, self.concurrency, grace_s=0.0)
        try:
            await ex.__aenter__()
        except BaseException:
            shutil.rmtree(record_dir, ignore_errors=True)
            raise
        self.pools_opened += 1
        pool = _Pool(ex, record_dir)
        self._pools.add(pool)
        return pool

    async def _close_pool(self, pool: _Pool) -> None:
        self._pools.discard(pool)
        try:
            await pool.executor.__aexit__(None, None, None)
        finally:
            shutil.rmtree(pool.record_dir, ignore_errors=True)

    async def _take(self, game_id: str) -> _Pool:
        """The executor for a new game: the current one, unless its fork server died."""
        pool = self._pool
        forks = pool.executor.forks if pool is not None else None
        if pool is not None and forks is not None and not forks.alive():
            log.warning("the fork server died: a new one plays the next games")
            self._pool, pool.retired = None, True
            if pool.games == 0:
                await self._close_pool(pool)
        if game_id in self._playing:  # the same id from another client: kept apart
            pool = await self._open()
            pool.retired = True
        else:
            if self._pool is None:
                self._pool = await self._open()
            pool = self._pool
        pool.games += 1
        return pool

    async def _play(self, request: GameRequest) -> Played:
        pool = await self._take(request.game_id)
        first = request.game_id not in self._playing
        self._playing.add(request.game_id)
        finished: FinishedGame | None = None
        error: ArenaError | None = None
        try:
            finished = await pool.executor.play(request)
        except ArenaError as e:
            error = e
        finally:
            if first:
                self._playing.discard(request.game_id)
            record, logs = _take_files(pool.record_dir, request)
            pool.games -= 1
            if pool.retired and pool.games == 0:
                await self._close_pool(pool)
        return Played(finished, error, record, logs)

    def close(self, timeout_s: float = 10.0) -> None:
        """Abort the games still playing, close every executor and stop the thread."""
        if self._closed:
            return
        self._closed = True

        async def close_all() -> None:
            self._pool = None
            for pool in list(self._pools):
                await self._close_pool(pool)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close_all(), self._loop).result(timeout_s)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout_s)
        if not self._thread.is_alive():
            self._loop.close()


def _take_files(record_dir: Path, request: GameRequest) -> tuple[bytes | None,
                                                                   dict[int, bytes]]:
    """The game's record and seat logs as bytes, removed from ``record_dir``."""
    record = None
    path = record_dir / f"{request.game_id}.json"
    with contextlib.suppress(OSError):
        record = path.read_bytes()
        path.unlink()
    logs = {}
    for seat in range(len(request.bots)):
        p = record_dir / "logs" / f"{request.game_id}.seat{seat}.log"
        with contextlib.suppress(OSError):
            logs[seat] = p.read_bytes()
            p.unlink()
    return record, logs


_runner_lock = threading.Lock()
_runners: dict[str, WarmRunner] = {}


def warm_runner() -> WarmRunner:
    """This Dask worker's :class:`WarmRunner`, started with its first game."""
    worker = get_worker()
    with _runner_lock:
        runner = _runners.get(worker.address)
        if runner is None:
            runner = _runners[worker.address] = WarmRunner(worker.state.nthreads)
        return runner


class WarmWorkers(WorkerPlugin):
    """The worker plugin that closes a worker's :class:`WarmRunner` when the worker
    closes (its bots killed, its fork server and referee stopped, its folders removed);
    :class:`~arena.cluster.DaskExecutor` registers it once per cluster."""

    idempotent = True
    """Registered once: a second client's registration would tear down the first's."""
    name = "moon-arena-warm-runner"

    def setup(self, worker: Any) -> None:
        """Dask's log lines on this worker one line each (:mod:`arena.cluster.logs`)."""
        quiet_dask_logs()

    def teardown(self, worker: Any) -> None:
        """Close the worker's runner, if it started one. On the worker's event loop, not
        awaited in a thread: the worker's own close is cancelled when its process ends,
        and a close cancelled there left the worker's Dask client reconnecting to a
        scheduler that had gone, its process alive for as long (tens of seconds). With
        no game left it takes some milliseconds."""
        with _runner_lock:
            runner = _runners.pop(worker.address, None)
        if runner is not None:
            runner.close()


__all__ = ["STOP_POLL_S", "Played", "WarmRunner", "WarmWorkers", "warm_runner"]
