"""The executor seam: every game — a ladder's, `moon match`'s, a hosted competition's —
is a :class:`GameRequest` handed to a :class:`GameExecutor`, which plays it and returns a
:class:`FinishedGame` (the arena's own types, no protobuf), or raises
:class:`~arena.errors.InfrastructureError` when the game could not be played through no
bot's fault. Callers never see a referee, a server or a bot process; executors own how
and where games run, and how many at once (:attr:`GameExecutor.capacity`).

:class:`LocalExecutor` is the default: a referee in this process served on a Unix socket,
each bot a fresh process (or container) on this machine. An executor is used as an async
context manager (start, play games, stop)::

    async with LocalExecutor(record_dir, concurrency=2) as ex:
        finished = await ex.play(GameRequest("g1", bots, ruleset, "moon3", 7, TimeControl()))

The rule that keeps ratings honest lives here, once: a game that ended ABORTED or
CANCELLED (a sandbox failure, a shutdown, an operator) is not a result. ``play`` raises
:class:`~arena.errors.InfrastructureError` for it; the caller voids the game and plays
it again, and never rates it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

from moon_sdk.rules import Ruleset

from ..bots.manifest import BotSpec, Limits
from ..core.results import Fault, GameResult, HandResult, hand_results
from ..core.timecontrol import TimeControl
from ..errors import ConfigError, InfrastructureError

if TYPE_CHECKING:
    from types import TracebackType

    from ..referee.referee import Referee
    from ..sandbox.docker import DockerLimits
    from ..sandbox.forkserver import ForkServer
    from .game import Endpoint, ManualSeat

log = logging.getLogger("arena.executor.local")


@dataclass(frozen=True)
class GameRequest:
    """One game to play: who, under which rules, on which deal, with which clocks."""

    game_id: str
    """Unique among the executor's games (1-64 letters, digits, '-', '_'); the record is
    ``<record_dir>/<game_id>.json``."""
    bots: tuple[BotSpec, ...]
    """One per seat, seat 0 first (as many as ``ruleset.players``)."""
    ruleset: Ruleset
    preset: str
    """The preset's name for people and records ("" for a custom ruleset)."""
    seed: int
    """The deal: with the ruleset, it fixes the first dealer and every hand."""
    time_control: TimeControl
    """The clocks and limits (ms), retries, and ``max_hands``: a game not over after that
    many deals is adjudicated on the scores (``max_hands=1`` plays exactly one hand)."""
    docker_limits: DockerLimits | None = None
    """Limits of the bots run with ``runner = "docker"`` (None: the defaults)."""
    probe: str = ""
    """A planted situation of the conformance check (:mod:`arena.referee.probes`: ``"reject"``,
    ``"drop"``), or "" for a game like any other."""
    seat_clocks: Mapping[int, tuple[int, int]] | None = None
    """Seats with a clock of their own, ``seat -> (decision_ms, bank_ms)`` (a person's)."""
    people: Mapping[int, ManualSeat] | None = None
    """Seats the caller plays itself (a person at a table, :mod:`arena.table`), whose bot
    is a ``runner = "manual"`` one: the executor starts no process for them, and their
    stand-in's ``poll`` says when they left (:func:`arena.executor.game.play_game`'s
    ``processes``). Only an executor with :attr:`LocalExecutor.seats_people` plays them."""
    on_start: Callable[[str, tuple[str, ...]], None] | None = None
    """Told, once the game is created and before its start-up clock matters, the address
    its seats join and each seat's join token (so the caller's own seats can join)."""


@dataclass(frozen=True)
class FinishedGame:
    """A game that was played to a result (never ABORTED or CANCELLED)."""

    request: GameRequest
    result: GameResult
    faults: tuple[Fault, ...]
    """Every fault of the game, in order (the forfeit among them)."""
    hands: tuple[HandResult, ...]
    """Each hand in brief; an unfinished last one when a forfeit cut it short."""
    record_path: str | None
    """The game record's file (:mod:`arena.records.record`), or None when none was written. Text,
    not a Path: pathlib interns every part of a path it builds, and a long-running host
    names a new file in every game."""
    wall_ms: int
    """From the request to the result, milliseconds (start-up and clean-up included)."""
    think_ms: int
    """The bots' turns, from each turn sent to its answer, summed: milliseconds."""


class GameExecutor(Protocol):
    """Plays games. An async context manager: enter to start it, exit to stop it."""

    capacity: int
    """How many games it plays at once; callers may ask for more, the rest wait."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None,
                        tb: TracebackType | None) -> None: ...

    async def play(self, request: GameRequest) -> FinishedGame:
        """Play one game to its result.

        Raises:
            InfrastructureError: the game could not be played through no bot's fault (a
                runner or sandbox failure, a shutdown, its record not written: its
                ``__cause__`` is then the ``OSError``), or ended ABORTED or CANCELLED:
                void it and play it again; never rate it.
            ConfigError: the request itself is wrong (seats for another number of
                players, a bad or duplicate game id).
        """
        ...


class LocalExecutor:
    """The local pool: an in-process referee (:class:`arena.referee.referee.Referee`) served on a
    Unix socket in a temporary folder (:func:`arena.executor.game.serving`), and a fresh process
    or container per bot and game on this machine (:func:`arena.executor.game.play_game`), at most
    ``concurrency`` games at once.

    A finished match is forgotten as soon as its game is returned (memory stays flat over a
    long run); its record and logs stay on disk.

    Args:
        record_dir: where game records (``<game_id>.json``) and bot logs (``logs/``) go;
            None: no records.
        concurrency: games at once (at least 1).
        limits: limits of the bots run as local processes (None: the defaults).
        grace_s: on exit, how long games still running may go on before they are aborted
            (seconds; 0: at once). Their ``play`` then raises InfrastructureError.
        fork_server: fork Python SDK bots from a server that has imported gRPC and the SDK
            (:mod:`arena.sandbox.forkserver`; still a fresh process per bot and game, contained
            alike) rather than start each; False: start every bot as a process; None: as
            ``MOON_FORK_SERVER`` says (unset: on, the default; ``0``: off). If the server
            cannot start, bots are started as processes; if it dies, the games that had
            bots forked from it are voided (InfrastructureError) and later bots are
            started as processes.

    Raises:
        ConfigError: ``concurrency`` below 1; a ``MOON_FORK_SERVER`` that is neither on
            nor off.
    """

    def __init__(self, record_dir: Path | None, concurrency: int = 1,
                 limits: Limits | None = None, grace_s: float = 1.0,
                 fork_server: bool | None = None) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency {concurrency}: must be at least 1")
        self.record_dir = record_dir
        self.capacity = concurrency
        self.limits = limits
        self.grace_s = grace_s
        self._slots = asyncio.Semaphore(concurrency)
        self._stack: contextlib.AsyncExitStack | None = None
        self._referee: Referee | None = None
        self._endpoint: Endpoint | None = None
        if fork_server is None:
            from ..sandbox.forkserver import enabled_by_env

            fork_server = enabled_by_env()
        self.fork_server = fork_server
        self.forks: ForkServer | None = None
        """The fork server (None: off, not needed yet, or it could not start). It starts
        with the first game that has a Python SDK bot (:func:`arena.sandbox.forkserver.forkable`),
        so that an executor of other bots only (one per game on a cluster's worker) never
        pays for it."""
        self._forks_tried = False
        self._forks_lock = asyncio.Lock()

    seats_people = True
    """It plays :attr:`GameRequest.people`: its referee is in this process, where they join."""

    async def __aenter__(self) -> Self:
        from ..referee.referee import Referee
        from .game import serving

        # the executor hands each game back and forgets it: the referee keeps none
        self._referee = Referee(record_dir=self.record_dir, keep_finished=0)
        async with contextlib.AsyncExitStack() as stack:
            # closed after the games (serving, below, ends them first): closing it kills
            # the bots it forked, which would end a game still in its grace time
            stack.callback(self._close_forks)
            self._endpoint = await stack.enter_async_context(
                serving(self._referee, tcp=None, match_service=False, grace_s=self.grace_s))
            self._stack = stack.pop_all()
        return self

    def _close_forks(self) -> None:
        forks, self.forks = self.forks, None
        if forks is not None:
            forks.close()

    async def start_fork_server(self, bots: tuple[BotSpec, ...]) -> ForkServer | None:
        """The fork server, started first (once per executor, :meth:`play` does it) if it
        is on, not tried yet, and one of ``bots`` is a Python SDK bot. None: off, not
        needed, or it could not start (bots are then started as processes)."""
        if not self.fork_server or self._forks_tried:
            return self.forks
        from ..sandbox.forkserver import ForkServer, forkable

        if not any(forkable(b) for b in bots):
            return None
        async with self._forks_lock:
            if not self._forks_tried:
                self._forks_tried = True
                forks = ForkServer()
                try:
                    await asyncio.to_thread(forks.start)
                    self.forks = forks
                except OSError as e:
                    log.warning("%s; Python bots are started as processes", e)
                if self._stack is None:  # the executor stopped meanwhile
                    self._close_forks()
        return self.forks

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None,
                        tb: TracebackType | None) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def play(self, request: GameRequest) -> FinishedGame:
        """Play one game (waiting for a free slot first); see :meth:`GameExecutor.play`.

        Raises:
            InfrastructureError: the executor is not running, the game could not be
                played, or it ended ABORTED or CANCELLED (the message says why).
            ConfigError: a bad request (wrong number of bots, a bad or duplicate id).
        """
        referee, endpoint = self._referee, self._endpoint
        if referee is None or endpoint is None or self._stack is None:
            raise InfrastructureError(f"game {request.game_id}: the executor is not running")
        from ..referee.probes import PROBES
        from .game import play_game

        if request.probe and request.probe not in PROBES:
            raise ConfigError(f"game {request.game_id}: no probe {request.probe!r} "
                              f"(one of {', '.join(PROBES)})")
        async with self._slots:
            forks = await self.start_fork_server(request.bots)
            if self._stack is None:
                # the executor stopped while this game waited for a slot or for the fork
                # server: its referee has aborted the games it had, and a match made now
                # would wait out its start-up limit (its bots cannot join a stopped server)
                raise InfrastructureError(f"game {request.game_id}: stopped with the "
                                          "executor")
            t0 = time.monotonic()
            forked = forks is not None and any(forks.usable_for(b) for b in request.bots)
            try:
                match = await play_game(
                    referee, endpoint, list(request.bots), request.ruleset,
                    preset=request.preset, seed=request.seed, tc=request.time_control,
                    match_id=request.game_id, limits=self.limits,
                    docker_limits=request.docker_limits,
                    match_cls=PROBES[request.probe] if request.probe else None,
                    fork_server=forks, seat_clocks=request.seat_clocks,
                    processes=request.people,
                    on_start=None if request.on_start is None else functools.partial(
                        _tell_start, request.on_start, endpoint.address))
            except ConfigError:
                raise
            except OSError as e:  # the machine's (a full disk...): one line, no traceback
                log.warning("game %s: infrastructure failure: %s", request.game_id, e)
                raise InfrastructureError(f"game {request.game_id}: runner failure: {e}"
                                          ) from e
            except Exception as e:  # the runner's own failure: never a bot's
                log.exception("game %s: infrastructure failure", request.game_id)
                raise InfrastructureError(f"game {request.game_id}: runner failure: {e}"
                                          ) from e
            finally:
                referee.matches.pop(request.game_id, None)  # done with: keep memory flat
            wall_ms = int((time.monotonic() - t0) * 1000)
            if forked and forks is not None and not forks.alive():
                # its children were killed with it: whatever the game says, no bot's fault
                if self._stack is None:  # the executor stopped (Ctrl-C): not a failure
                    raise InfrastructureError(f"game {request.game_id}: stopped with the "
                                              "executor")
                log.warning("game %s: the fork server died; voided, and bots are started as "
                            "processes from now on", request.game_id)
                raise InfrastructureError(f"game {request.game_id}: the fork server died "
                                          "during the game (its bots were killed with it)")
        if match.record_error is not None and self.record_dir is not None:
            # played, but not kept: the caller voids it (the host, once it can write)
            unwritten = match.record_error
            raise InfrastructureError(f"game {request.game_id}: its record could not be "
                                      f"written: {unwritten.strerror or unwritten}"
                                      ) from unwritten
        result = match.result
        if result is None or not result.termination.scored:
            what = result.termination.key if result is not None else "unfinished"
            raise InfrastructureError(f"game {request.game_id} {what}: "
                                      f"{match.stop_reason or 'no result'}")
        return FinishedGame(
            request=request, result=result, faults=tuple(match.faults),
            hands=hand_results(match.state, result.termination),
            record_path=match.record_path or None,
            wall_ms=wall_ms, think_ms=round(match.turn_seconds * 1000))

    def abort(self, game_id: str, reason: str) -> bool:
        """Abort the game ``game_id`` (its ``play`` then raises InfrastructureError) and
        leave the executor's other games alone. False: no such game is being played here
        (not started yet, or over)."""
        referee = self._referee
        match = referee.matches.get(game_id) if referee is not None else None
        if match is None or match.done.is_set():
            return False
        from ..core.results import Termination

        match.stop(Termination.ABORTED, reason)
        return True

    def watch(self, game_id: str) -> AsyncIterator[Any] | None:
        """The referee's public watch stream of a game being played here: every
        ``moon.v1.Event`` from the start, then live ones until the game ends (no hidden
        tile: the widow and the discard are never in it). None if the game is not playing
        here (not started yet, or over)."""
        referee = self._referee
        match = referee.matches.get(game_id) if referee is not None else None
        return match.watch() if match is not None else None

    def seat_log(self, game_id: str, seat: int) -> str | None:
        """Where the output of ``seat`` in game ``game_id`` is kept (while the game runs,
        and after), or None without a record folder (text: see ``record_path``)."""
        if self.record_dir is None:
            return None
        return os.path.join(self.record_dir, "logs", f"{game_id}.seat{seat}.log")


def _tell_start(on_start: Callable[[str, tuple[str, ...]], None], address: str,
                match: Any) -> None:
    """``on_start(address, tokens)`` of a :class:`GameRequest`, from the created match."""
    on_start(address, tuple(match.tokens))


__all__ = ["FinishedGame", "GameExecutor", "GameRequest", "LocalExecutor"]
