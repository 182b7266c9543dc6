"""How the host plays a game: the arena's executor seam (:mod:`arena.executor.local`:
``GameExecutor.play(GameRequest) -> FinishedGame``, ``InfrastructureError`` for a game
the arena could not play), with the host's defaults. This is the only module of the host
that names an executor; everything else uses what it exports.

:class:`GameSlots` is the host's side of the seam: the executor while the host runs, the
``[matchmaking] concurrency`` slots shared by validation and rated games, and the games
being played (a stop waits for them to end).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..core.results import Fault, GameResult
from ..errors import InfrastructureError
from ..executor.local import FinishedGame, GameExecutor, GameRequest
from ..executor.local import LocalExecutor as _LocalExecutor


def name_of(value: object) -> str:
    """The name of a termination or fault reason as records and the API write it
    (``"target"``, ``"timeout"``): the value itself when it is text, else its ``key``
    (:class:`arena.core.results.Termination`, :class:`arena.core.results.FaultReason`)."""
    return value if isinstance(value, str) else str(getattr(value, "key", value))


class LocalExecutor(_LocalExecutor):
    """The arena's local pool (:class:`arena.executor.local.LocalExecutor`) with records in
    ``record_dir`` (made if missing) and the games still running when the host stops
    aborted at once (the next start voids and replays them)."""

    def __init__(self, record_dir: Path, concurrency: int = 2,
                 fork_server: bool | None = None) -> None:
        record_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(record_dir, concurrency, grace_s=0.0, fork_server=fork_server)

    def seat_log(self, game_id: str, seat: int) -> str:
        """Where the output of ``seat`` in game ``game_id`` is kept (text, not a Path: see
        :attr:`FinishedGame.record_path`)."""
        assert self.record_dir is not None
        return os.path.join(self.record_dir, "logs", f"{game_id}.seat{seat}.log")


ExecutorFactory = Callable[[Path, int], GameExecutor]
"""Makes the host's executor from its records' folder and how many games it plays at once."""


@runtime_checkable
class KeepsSeatLogs(Protocol):
    """An executor that says where it keeps a seat's output of a game."""

    def seat_log(self, game_id: str, seat: int) -> str | os.PathLike[str] | None: ...


class GameSlots:
    """The host's executor once it runs (:attr:`executor`, None before) and its
    ``capacity`` slots: a game takes one (``async with slots``, or :meth:`acquire` and
    :meth:`release`) for as long as it plays."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.executor: GameExecutor | None = None
        """Set by the host when its executor has started; kept after it stopped."""
        self._free = asyncio.Semaphore(capacity)
        self._inflight: set[asyncio.Task[FinishedGame]] = set()

    async def acquire(self) -> None:
        """Take a slot, waiting for one."""
        await self._free.acquire()

    def release(self) -> None:
        """Give a slot back."""
        self._free.release()

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    async def play(self, req: GameRequest) -> FinishedGame:
        """``executor.play(req)`` in a task of its own that a cancelled caller does not
        cancel: a game is never interrupted while its bots or containers start (they would
        be left behind), only aborted by the executor, which stops them.

        Raises:
            InfrastructureError: the game could not be played (void it, never rate it).
        """
        assert self.executor is not None, "the host is not running"
        task = asyncio.create_task(self.executor.play(req), name=f"play-{req.game_id}")
        self._inflight.add(task)
        task.add_done_callback(self._ended)
        return await asyncio.shield(task)

    def _ended(self, task: asyncio.Task[FinishedGame]) -> None:
        self._inflight.discard(task)
        # A caller cancelled at a stop no longer awaits the game: its end ("aborted: the
        # referee is shutting down") is then read here, or asyncio would log it with a
        # traceback ("Task exception was never retrieved") when the task is collected.
        if not task.cancelled():
            task.exception()

    async def settle(self) -> None:
        """Wait for the games still being played to end (the executor aborts them when it
        stops)."""
        await asyncio.gather(*self._inflight, return_exceptions=True)

    def seat_log(self, game_id: str, seat: int) -> Path | None:
        """Where the executor keeps a seat's output of a game, or None when it does not say
        (or the host has not started)."""
        if isinstance(self.executor, KeepsSeatLogs):
            path = self.executor.seat_log(game_id, seat)
            return None if path is None else Path(path)
        return None


__all__ = ["ExecutorFactory", "Fault", "FinishedGame", "GameExecutor", "GameRequest",
           "GameResult", "GameSlots", "InfrastructureError", "KeepsSeatLogs",
           "LocalExecutor", "name_of"]
