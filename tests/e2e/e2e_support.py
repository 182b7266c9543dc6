"""Helpers for end-to-end tests: a real referee server, real bot processes, real gRPC."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import grpc

from arena.bots.manifest import BotSpec, load_bot
from arena.executor.game import Endpoint, serving
from arena.referee.referee import Referee

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




def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    """A running `moon serve`: its address, process and log file."""

    address: str
    proc: subprocess.Popen[bytes]
    log: Path


def start_serve(folder: Path, *args: str, log_name: str = "serve.log",
                env: dict[str, str] | None = None) -> Served:
    """Start `moon serve` on a free 127.0.0.1 port with records in ``folder/records``,
    output in ``folder/log_name``; ``args`` are added (the admin token, ...)."""
    address = f"127.0.0.1:{free_port()}"
    log = folder / log_name
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--address", address,
             "--records", str(folder / "records"), "--grace", "1", *args],
            cwd=folder, stdout=out, stderr=subprocess.STDOUT,
            env=env if env is not None else dict(os.environ))
    return Served(address, proc, log)


def wait_ready(served: Served, within: float = 60) -> None:
    """Wait until the server's gRPC channel is ready; fails with its log if it exits."""
    with grpc.insecure_channel(served.address) as channel:
        deadline = time.monotonic() + within
        while True:
            try:
                grpc.channel_ready_future(channel).result(timeout=1)
                return
            except grpc.FutureTimeoutError:
                assert served.proc.poll() is None, served.log.read_text()
                assert time.monotonic() < deadline, "moon serve did not come up"


def stop_serve(served: Served) -> None:
    """SIGTERM, then SIGKILL after 30 s."""
    served.proc.terminate()
    try:
        served.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        served.proc.kill()
        served.proc.wait()


@contextlib.contextmanager
def moon_serve(folder: Path, *args: str, log_name: str = "serve.log",
               env: dict[str, str] | None = None) -> Iterator[Served]:
    """A `moon serve` that is ready to take calls inside the block and stopped after it."""
    served = start_serve(folder, *args, log_name=log_name, env=env)
    try:
        wait_ready(served)
        yield served
    finally:
        stop_serve(served)
