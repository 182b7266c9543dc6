"""Helpers for end-to-end tests: a real referee server, real bot processes, real gRPC."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from arena.bots import BotSpec, load_bot
from arena.game import Endpoint, serving
from arena.referee import Referee

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
TEST_BOTS = ROOT / "tests" / "bots"

T = TypeVar("T")


def example(name: str) -> BotSpec:
    """An example bot by folder name."""
    return load_bot(EXAMPLES / name)


def misbehaving(mode: str) -> BotSpec:
    """The misbehaving test bot in one of its modes (tests/bots/misbehave.py)."""
    return BotSpec(name=mode, folder=TEST_BOTS, run=f"{{python}} misbehave.py {mode}")


def with_referee(tmp_path: Path, body: Callable[[Referee, Endpoint], Awaitable[T]],
                 tcp: bool = False, match_service: bool = False,
                 admin_token: str | None = None) -> T:
    """Run ``body`` against a live referee server (Unix socket, or TCP)."""
    async def go() -> T:
        referee = Referee(record_dir=tmp_path / "records")
        async with serving(referee, "127.0.0.1:0" if tcp else None,
                           match_service=match_service, admin_token=admin_token) as ep:
            return await body(referee, ep)
    return asyncio.run(go())


