"""How the host plays a game: the arena's executor seam (:mod:`arena.executor.local`:
``GameExecutor.play(GameRequest) -> FinishedGame``, ``InfrastructureError`` for a game
the arena could not play), with the host's defaults. This is the only module of the host
that names an executor; everything else uses what it exports.
"""

from __future__ import annotations

import os
from pathlib import Path

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


__all__ = ["Fault", "FinishedGame", "GameExecutor", "GameRequest", "GameResult",
           "InfrastructureError", "LocalExecutor", "name_of"]
