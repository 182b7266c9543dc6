"""Run games: a referee server in this process, bots as fresh processes or containers
(:func:`arena.sandbox.make_process` picks by the bot's runner).

:func:`serving` starts a referee server for the duration of a ``with`` block;
:func:`play_game` plays one game between bot folders and returns the finished match.
Both `moon play` and the ladder use them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from ..bots.manifest import BotSpec, Limits
from ..core.timecontrol import TimeControl
from ..errors import ArenaError, ConfigError, InfrastructureError
from ..referee.referee import Match, Referee
from ..referee.server import OpenStreams, create_server, set_serving
from ..sandbox import BotProcess, exit_detail, make_process

if TYPE_CHECKING:
    from ..sandbox.docker import DockerLimits
    from ..sandbox.forkserver import ForkServer

_STARTER = ThreadPoolExecutor(max_workers=32, thread_name_prefix="moon-bot-proc")
"""Starting and killing a container blocks for a while: it happens here, never on the
event loop, which must keep serving every game's clock."""


MANUAL = "manual"
"""The runner of a seat whose bot the caller starts itself (by hand, in a debugger): the
game makes no process for it, and the seat's token is in the match (``Match.tokens``)."""


class ManualSeat:
    """The :class:`~arena.sandbox.BotProcess` of a :data:`MANUAL` seat: nothing to start,
    stop or read; the bot joins with the seat's token by itself."""

    def start(self) -> None:
        """Nothing to start."""

    def poll(self) -> int | None:
        """Never known to exit (it is not ours)."""
        return None

    def kill(self) -> None:
        """Not ours to kill."""

    def log_tail(self) -> str:
        """Its output went wherever it was started."""
        return "(a seat started by hand: its output is where it ran)"


@dataclass
class Endpoint:
    """Where bots reach a running referee."""

    address: str
    """For MOON_ADDRESS: ``unix:///path`` or ``127.0.0.1:PORT``."""
    port: int
    unix_socket: str | None


@contextlib.asynccontextmanager
async def serving(referee: Referee, tcp: str | None = "127.0.0.1:0",
                  unix_socket: str | None = None, grace_s: float = 1.0,
                  match_service: bool = False, admin_token: str | None = None
                  ) -> AsyncIterator[Endpoint]:
    """Serve ``referee`` over gRPC inside the block; on exit, matches still running get
    ``grace_s`` seconds, then are aborted, their streams end, and the server stops.

    With neither ``tcp`` nor ``unix_socket`` a Unix socket in a temp folder is used. Bots
    reach this address, so MatchService (seeds, cancel) is off unless ``match_service``.
    """
    tmp = None
    if not tcp and not unix_socket:
        tmp = tempfile.TemporaryDirectory(prefix="moon-")
        unix_socket = str(Path(tmp.name) / "referee.sock")
    streams = OpenStreams()
    server, port = create_server(referee, tcp, unix_socket, match_service=match_service,
                                 admin_token=admin_token, streams=streams)
    await server.start()
    await set_serving(server)
    address = f"unix://{unix_socket}" if unix_socket else f"127.0.0.1:{port}"
    try:
        yield Endpoint(address, port, unix_socket)
    finally:
        await referee.shutdown(grace_s)
        await streams.end()  # every stream ended before the server stops (OpenStreams)
        await server.stop(grace_s)
        if tmp is not None:
            tmp.cleanup()


async def play_game(referee: Referee, endpoint: Endpoint, bots: list[BotSpec],
                    ruleset: Ruleset, *, preset: str = "", seed: int | None = None,
                    tc: TimeControl | None = None, match_id: str = "",
                    log_dir: Path | None = None, limits: Limits | None = None,
                    on_start: Callable[[Match], None] | None = None,
                    docker_limits: DockerLimits | None = None,
                    seat_clocks: Mapping[int, tuple[int, int]] | None = None,
                    match_cls: type[Match] | None = None,
                    fork_server: ForkServer | None = None,
                    processes: Mapping[int, ManualSeat] | None = None) -> Match:
    """Play one game: create the match, start one fresh process (or container) per seat,
    wait for the end, kill every process group (remove every container), and rewrite the
    record with the bots' output tails. A failure of the sandbox itself (no Docker engine)
    aborts the game (not scored) instead of faulting the bot. A bot whose ``runner`` is
    :data:`MANUAL` gets no process: the caller starts it with the seat's token (``on_start``
    sees the match, and its ``tokens``, before the start-up clock matters). ``seat_clocks``
    gives seats a clock of their own, ``match_cls`` the kind of match
    (:meth:`Referee.create_match`). With a
    ``fork_server``, Python SDK bots are forked from it (:mod:`arena.sandbox.forkserver`).
    ``processes`` are seats the caller plays itself, by seat (a person at the table,
    :mod:`arena.table`): like a manual seat, but their ``poll`` may say they left.

    Raises:
        ConfigError: wrong number of bots for the ruleset (other failures of a bot are
            that bot's recorded faults, never exceptions here).
    """
    if len(bots) != ruleset.players:
        raise ConfigError(f"{ruleset.players} bots are needed for this ruleset, got {len(bots)}")
    match = referee.create_match(ruleset, [(b.name, b.version) for b in bots], preset=preset,
                                 seed=seed, tc=tc, match_id=match_id, seat_clocks=seat_clocks,
                                 match_cls=match_cls)
    # written once, below, with the bots' output tails and off the event loop (its JSON
    # and fsync would hold up the turns of every other game and the host's pages)
    match.record_at_finish = False
    if on_start is not None:
        on_start(match)
    logs = log_dir or (referee.record_dir / "logs" if referee.record_dir else None)
    tmp = None
    if logs is None:
        tmp = tempfile.TemporaryDirectory(prefix="moon-logs-")
        logs = Path(tmp.name)
    procs: list[BotProcess] = [
        (processes or {}).get(i) or ManualSeat() if b.runner == MANUAL else make_process(
            b, endpoint.address, token, os.path.join(logs, f"{match.match_id}.seat{i}.log"),
            limits,
            docker_limits=docker_limits, match_id=match.match_id, seat=i,
            fork_server=fork_server)
        for i, (b, token) in enumerate(zip(bots, match.tokens, strict=True))]
    loop = asyncio.get_running_loop()

    async def start(seat: int, p: BotProcess) -> None:
        if not isinstance(p, ManualSeat):
            match.seat_starting(seat)  # its start-up limit counts once it runs
        try:
            await loop.run_in_executor(_STARTER, p.start)
            if not isinstance(p, ManualSeat):
                # a local process or a container says how long it waited for a CPU
                # (not its start-up)
                match.seat_started(seat, waited=getattr(p, "cpu_wait_s", None))
        except InfrastructureError as e:  # no Docker engine...: never the bot's fault
            match.stop(pb.TERMINATION_ABORTED, f"sandbox failure: {e}")
        except ArenaError as e:  # the bot's own: its program or image cannot start
            match.note_exit(seat, 127, str(e))

    try:
        await asyncio.gather(*(start(seat, p) for seat, p in enumerate(procs)))
        seen = [False] * len(procs)
        while not match.done.is_set():
            for seat, p in enumerate(procs):
                rc = p.poll()
                if rc is None or seen[seat]:
                    continue
                seen[seat] = True
                # off the loop: it may wait a moment for the bot's last output (or, for a
                # container, ask the Docker engine)
                match.note_exit(seat, rc, await loop.run_in_executor(_STARTER, exit_detail, p))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.05):
                    await match.done.wait()
    finally:
        if not match.done.is_set():
            # stopped from outside (the caller cancelled: Ctrl-C of a ladder): the match
            # ends here, its record written once below, not later by a task left running
            match.stop(pb.TERMINATION_ABORTED, "the game was stopped")
            await match.done.wait()
        # bots exit by themselves at game end; give them a moment, then kill what's left
        for _ in range(20):
            if all(p.poll() is not None for p in procs if not isinstance(p, ManualSeat)):
                break
            await asyncio.sleep(0.025)
        await asyncio.gather(*(loop.run_in_executor(_STARTER, p.kill) for p in procs))
        match.logs = {i: p.log_tail() for i, p in enumerate(procs)}
        try:
            await loop.run_in_executor(None, match.write_record)
        except asyncio.CancelledError:  # stopped meanwhile: written here, then stopped
            match.write_record()
            raise
        if tmp is not None:
            tmp.cleanup()
    return match
