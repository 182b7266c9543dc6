"""How the host plays a game: the executor seam (``GameExecutor.play(GameRequest) ->
FinishedGame``), here as a thin adapter over :func:`arena.game.play_game` and an
in-process :class:`~arena.referee.Referee` serving bots on a Unix socket.

This is the only module of the host that knows how a game is played; everything else
uses :class:`GameRequest`, :class:`FinishedGame`, :class:`InfrastructureError` and
:class:`LocalExecutor` from here.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from ..bots import BotSpec
from ..game import Endpoint, play_game, serving
from ..referee import FAULT_NAMES, TERMINATION_NAMES, Match, Referee
from ..timecontrol import TimeControl

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits


def name_of(value: object) -> str:
    """The name of a termination or fault reason as records and the API write it
    (``"target"``, ``"timeout"``): the value itself when it is text, else its ``key``. The
    rest of the host reads results through this, whatever type the executor uses."""
    return value if isinstance(value, str) else str(getattr(value, "key", value))


class InfrastructureError(Exception):
    """The game could not be played through no bot's fault (the sandbox failed, the host is
    stopping): the caller voids it and plays it again, and never rates it."""


@dataclass(frozen=True)
class GameRequest:
    """What to play: one game of ``bots`` (one per seat) on a board (``seed``)."""

    game_id: str
    """Unique; the record is ``<record_dir>/<game_id>.json``, seat logs
    ``<record_dir>/logs/<game_id>.seat<N>.log``."""
    bots: tuple[BotSpec, ...]
    ruleset: Ruleset
    preset: str
    seed: int
    time_control: TimeControl
    docker_limits: DockerLimits | None = None


@dataclass(frozen=True)
class Fault:
    """A recorded fault of one seat (docs/protocol.md, "Faults")."""

    seat: int
    reason: str
    """``timeout``, ``crash``, ``illegal_action``, ``startup_stall``, ..."""
    detail: str
    forfeit: bool


@dataclass(frozen=True)
class GameResult:
    """How a game ended: ``scores`` and ``places`` per side (a seat with 3 players, a
    partnership {0, 2} / {1, 3} with 4), place 1 the best."""

    termination: str
    """``target``, ``moon``, ``forfeit`` or ``hand_limit``."""
    winner: int | None
    scores: tuple[int, ...]
    places: tuple[int, ...]
    hands_played: int
    forfeit: Fault | None


@dataclass(frozen=True)
class FinishedGame:
    """What came of a :class:`GameRequest`."""

    request: GameRequest
    result: GameResult
    faults: tuple[Fault, ...]
    hands: tuple[dict[str, Any], ...]
    """Per-hand summaries as in the record (bidder, bid, trump, made, tricks, deltas)."""
    record_path: Path | None
    wall_ms: int
    think_ms: int


def _fault(f: pb.Fault) -> Fault:
    return Fault(f.seat, FAULT_NAMES.get(f.reason, "unknown"), f.detail, f.forfeit)


class LocalExecutor:
    """Games in this process: one referee on a private Unix socket, bots as fresh local
    processes or containers (each bot's ``runner``). ``capacity`` is how many games the
    caller should run at once."""

    def __init__(self, record_dir: Path, concurrency: int = 2) -> None:
        self.record_dir = record_dir
        self.capacity = concurrency
        self._referee = Referee(record_dir=record_dir)
        self._serving: contextlib.AbstractAsyncContextManager[Endpoint] | None = None
        self._endpoint: Endpoint | None = None

    async def __aenter__(self) -> Self:
        self.record_dir.mkdir(parents=True, exist_ok=True)
        self._serving = serving(self._referee, tcp=None, grace_s=0.0)
        self._endpoint = await self._serving.__aenter__()
        return self

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._serving is not None:
            await self._serving.__aexit__(et, ev, tb)
        self._serving = self._endpoint = None

    async def play(self, request: GameRequest) -> FinishedGame:
        """Play ``request`` to its end.

        Raises:
            InfrastructureError: the executor is not started, the runner failed, or the
                game ended ABORTED/CANCELLED (never a bot's fault).
        """
        if self._endpoint is None:
            raise InfrastructureError("the executor is not running")
        t0 = time.monotonic()
        try:
            match: Match = await play_game(
                self._referee, self._endpoint, list(request.bots), request.ruleset,
                preset=request.preset, seed=request.seed, tc=request.time_control,
                match_id=request.game_id, docker_limits=request.docker_limits)
        except Exception as e:  # the runner's fault, never a bot's
            raise InfrastructureError(f"runner failure: {e}") from e
        finally:
            self._referee.matches.pop(request.game_id, None)  # the host keeps no old match
        wall_ms = int((time.monotonic() - t0) * 1000)
        res = match.result
        if res is None or res.termination in (pb.TERMINATION_ABORTED,
                                              pb.TERMINATION_CANCELLED):
            why = "no result" if res is None else TERMINATION_NAMES[res.termination]
            raise InfrastructureError(f"game {request.game_id} was {why}")
        result = GameResult(
            termination=TERMINATION_NAMES.get(res.termination, "unknown"),
            winner=res.winner if res.HasField("winner") else None,
            scores=tuple(res.scores), places=tuple(res.places),
            hands_played=res.hands_played,
            forfeit=_fault(res.forfeit) if res.HasField("forfeit") else None)
        return FinishedGame(
            request=request, result=result, faults=tuple(_fault(f) for f in match.faults),
            hands=tuple(match.record()["hands"]),
            record_path=Path(match.record_path) if match.record_path else None,
            wall_ms=wall_ms, think_ms=round(match.turn_seconds * 1000))

    def seat_log(self, game_id: str, seat: int) -> Path:
        """Where the stderr of ``seat`` in game ``game_id`` is kept."""
        return self.record_dir / "logs" / f"{game_id}.seat{seat}.log"
