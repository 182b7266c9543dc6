"""Stopping the referee while bots' streams are open mid-turn ends every stream before the
gRPC server stops (``serving`` in arena/executor/game.py, ``OpenStreams`` in
arena/referee/server.py): a handler still running when grpc.aio's server has stopped makes
gRPC log "Aborting method ... due to server stop" as it returns, which an organiser
pressing Ctrl-C read in the host's log. The bots are real SDK processes (they reconnect
when their stream ends before the game did); the server's stop is watched to see that no
stream handler is open when it begins."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import grpc
import pytest
from e2e_support import TEST_BOTS
from moon_sdk.rules import Ruleset

import arena.executor.game
from arena.bots.manifest import BotSpec
from arena.core.timecontrol import TimeControl
from arena.executor.game import play_game, serving
from arena.referee.referee import Match, Referee
from arena.referee.server import OpenStreams

GAMES = 4
"""Games at once (12 streams, each with a bot thinking for 30 s over its turn)."""
PONDER = BotSpec(name="ponder", folder=TEST_BOTS, run="{python} ponder.py")


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.parametrize("grace_s", [0.0, 1.0])
def test_a_stop_mid_turn_ends_the_streams_before_the_server(
        tmp_path: Path, grace_s: float, monkeypatch: pytest.MonkeyPatch) -> None:
    open_at_stop: list[int] = []
    real_create = arena.executor.game.create_server

    def create_server(*args: Any, streams: OpenStreams, **kw: Any) -> Any:
        server, port = real_create(*args, streams=streams, **kw)
        real_stop = server.stop

        async def stop(grace: float | None) -> None:
            open_at_stop.append(len(streams.tasks))
            await real_stop(grace)
        server.stop = stop  # type: ignore[method-assign]
        return server, port

    monkeypatch.setattr(arena.executor.game, "create_server", create_server)
    kept = Kept()
    root = logging.getLogger()
    root.addHandler(kept)

    async def go() -> None:
        referee = Referee(record_dir=tmp_path / "records")
        async with serving(referee, None, grace_s=grace_s) as ep:
            started: list[Match] = []
            games = [asyncio.create_task(play_game(
                referee, ep, [PONDER] * 3, Ruleset.preset("moon3"), seed=7 + i,
                tc=TimeControl(decision_ms=60_000, bank_ms=0, startup_ms=30_000),
                on_start=started.append)) for i in range(GAMES)]
            # every game has its first turn delivered: each thinking bot's stream is open
            for _ in range(3000):
                if len(started) == GAMES and all(
                        m._turn is not None and m._turn.seat.clock.is_delivered
                        for m in started):
                    break
                await asyncio.sleep(0.01)
            else:
                raise AssertionError("the games' first turns were not delivered in 30 s")
        await asyncio.gather(*games)

    try:
        asyncio.run(go())
    finally:
        root.removeHandler(kept)
    assert open_at_stop == [0]
    warned = [r.getMessage() for r in kept.records
              if r.name.startswith("grpc") and r.levelno >= logging.WARNING]
    assert warned == []


def test_a_stream_opened_while_the_server_stops_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    kept: list[OpenStreams] = []
    real_create = arena.executor.game.create_server

    def create_server(*args: Any, streams: OpenStreams, **kw: Any) -> Any:
        kept.append(streams)
        return real_create(*args, streams=streams, **kw)

    monkeypatch.setattr(arena.executor.game, "create_server", create_server)

    async def go() -> tuple[grpc.StatusCode, str]:
        referee = Referee(record_dir=None)
        async with serving(referee, None) as ep:
            kept[0].closing = True  # as serving's exit sets it, before the server stops
            async with grpc.aio.insecure_channel(ep.address) as channel:
                call = channel.stream_stream("/moon.v1.BotService/Play")(iter([b""]))
                try:
                    async for _ in call:
                        pass
                except grpc.aio.AioRpcError as e:
                    return e.code(), e.details() or ""
        raise AssertionError("the stream was taken")

    assert asyncio.run(go()) == (grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
