"""A soak of `moon serve`: many short games one after another, the server's resident memory
(RSS) printed after every window of games, so that a leak shows as a steady climb.

    .venv/bin/python benchmarks/soak.py [--games 1000] [--window 100] [--parallel 4]
        [--max-hands 1] [--keep-finished N] [--compare] [--json]

It starts a real `moon serve` (a subprocess, an admin token, records in a temporary
folder) and plays moon3 games against it over gRPC: each game is created with
MatchService.CreateMatch and played by three quick bots in this process (each a Play
stream that bids its highest bid and otherwise answers with its first legal action),
``--parallel`` games at a time. After each ``--window`` games it reads the server's VmRSS
from ``/proc``.

The figures: RSS (MB) after each window; the growth ratio, the last window's growth over
the 2nd window's (the 1st is start-up; in the 2nd the server fills its cache of finished
matches, ``--keep-finished``, and the engine's bounded caches of converted tricks, so a
server that forgets reads near 0 and one that keeps everything near 1); and the RSS at
the end over the RSS after the 2nd window. ``--compare`` runs the same soak a second time with
a server that keeps every finished match (``--keep-finished`` = the number of games), as
`moon serve` did before it forgot them: its RSS climbs with every window. ``--json``
prints one JSON object per soak instead of the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from moon_sdk.convert import PROTOCOL_VERSION  # noqa: E402
from moon_sdk.v1 import bot_pb2 as bpb  # noqa: E402
from moon_sdk.v1 import game_pb2 as pb  # noqa: E402
from moon_sdk.v1 import match_pb2 as mpb  # noqa: E402
from moon_sdk.v1 import match_pb2_grpc  # noqa: E402


def rss_mb(pid: int) -> float:
    """The resident memory of ``pid`` (VmRSS), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def seat(channel: grpc.aio.Channel, token: str) -> pb.GameResult:
    """One quick bot: join, answer every turn (its highest bid in the auction, so that
    hands are played out, else its first legal action); the result."""
    play = channel.stream_stream("/moon.v1.BotService/Play",
                                 request_serializer=bpb.PlayRequest.SerializeToString,
                                 response_deserializer=bpb.PlayResponse.FromString)
    call = play()
    await call.write(bpb.PlayRequest(join=bpb.Join(
        token=token, protocol_version=PROTOCOL_VERSION, bot_name="soak", quiet=True)))
    async for resp in call:
        kind = resp.WhichOneof("kind")
        if kind == "turn":
            legal = resp.turn.legal_actions
            action = legal[-1] if legal[0].WhichOneof("kind") == "bid" else legal[0]
            await call.write(bpb.PlayRequest(action=bpb.ActionReply(
                request_id=resp.turn.request_id, action=action)))
        elif kind == "event" and resp.event.WhichOneof("kind") == "game_ended":
            await call.done_writing()
            return resp.event.game_ended
    raise RuntimeError("the stream ended before the game did")


async def one_game(channel: grpc.aio.Channel, stub: Any, metadata: Any, seed: int,
                   max_hands: int) -> pb.GameResult:
    created = await stub.CreateMatch(mpb.CreateMatchRequest(
        ruleset=pb.Ruleset(preset="moon3"), seed=seed,
        seats=[mpb.SeatConfig(name=f"soak{i}", version="1") for i in range(3)],
        time_control=pb.TimeControl(decision_ms=10_000, bank_ms=10_000,
                                    max_hands=max_hands)), metadata=metadata, timeout=60)
    results = await asyncio.gather(*(seat(channel, t.token) for t in created.tokens))
    return results[0]


async def drive(address: str, token: str, pid: int, games: int, window: int,
                parallel: int, max_hands: int) -> list[tuple[int, float]]:
    """Play ``games`` games, ``parallel`` at a time; ``(games so far, RSS MB)`` after each
    window (and once before the first game)."""
    metadata = (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(address) as channel:
        await asyncio.wait_for(channel.channel_ready(), 60)
        points = [(0, rss_mb(pid))]
        stub = match_pb2_grpc.MatchServiceStub(channel)
        done = 0
        sem = asyncio.Semaphore(parallel)

        async def game(i: int) -> None:
            async with sem:
                r = await one_game(channel, stub, metadata, 1000 + i, max_hands)
                if r.termination == pb.TERMINATION_FORFEIT:
                    raise RuntimeError(f"game {i} ended in a forfeit: {r}")

        while done < games:
            n = min(window, games - done)
            await asyncio.gather(*(game(done + i) for i in range(n)))
            done += n
            points.append((done, rss_mb(pid)))
    return points


def soak(games: int, window: int, parallel: int, max_hands: int,
         keep_finished: int | None) -> dict[str, Any]:
    """Run one `moon serve` through ``games`` games; the figures."""
    token = secrets.token_urlsafe(18)
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="moon-soak-") as tmp:
        argv = [sys.executable, "-m", "arena.cli", "serve", "--address", f"127.0.0.1:{port}",
                "--records", str(Path(tmp) / "records"), "--grace", "1",
                "--admin-token", token]
        if keep_finished is not None:
            argv += ["--keep-finished", str(keep_finished)]
        log = open(Path(tmp) / "serve.log", "w")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        started = time.monotonic()
        try:
            points = asyncio.run(drive(f"127.0.0.1:{port}", token, proc.pid, games, window,
                                       parallel, max_hands))
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
        records = len(list((Path(tmp) / "records").glob("*.json")))
    growth = [b[1] - a[1] for a, b in zip(points, points[1:], strict=False)]
    second, last = growth[min(1, len(growth) - 1)], growth[-1]
    return {"games": games, "window": window, "keep_finished": keep_finished,
            "records": records, "seconds": round(time.monotonic() - started, 1),
            "rss_mb": [[g, round(m, 1)] for g, m in points],
            "growth_mb": [round(g, 2) for g in growth],
            "growth_ratio": round(last / second, 3) if second > 0 else None,
            "rss_ratio": round(points[-1][1] / points[min(2, len(points) - 1)][1], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--window", type=int, default=100)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--max-hands", type=int, default=1,
                    help="hands per game (1: short games)")
    ap.add_argument("--keep-finished", type=int, default=None,
                    help="the server's --keep-finished (default: its own)")
    ap.add_argument("--compare", action="store_true",
                    help="also soak a server that keeps every finished match")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    runs = [("forgets finished matches", a.keep_finished)]
    if a.compare:
        runs.append(("keeps every match", a.games))
    for label, keep in runs:
        r = soak(a.games, a.window, a.parallel, a.max_hands, keep)
        if a.json:
            print(json.dumps({"label": label, **r}), flush=True)
            continue
        print(f"moon serve, {label} (--keep-finished {keep if keep is not None else 'default'})"
              f": {r['games']} games, {r['records']} records, {r['seconds']} s")
        prev = None
        for g, m in r["rss_mb"]:
            step = "" if prev is None else f"  ({m - prev:+.1f} MB)"
            print(f"  after {g:>5} games: RSS {m:7.1f} MB{step}")
            prev = m
        print(f"  growth in the last window / in the 2nd: {r['growth_ratio']}; RSS at the "
              f"end / after the 2nd window: {r['rss_ratio']:.3f}x", flush=True)


if __name__ == "__main__":
    main()
