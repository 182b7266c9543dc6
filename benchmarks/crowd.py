"""The competition host under a crowd of visitors: games per minute of a running host
playing rated games, quiet and under a crowd, side by side in one run, and what the crowd
was served.

    .venv/bin/python benchmarks/crowd.py [--clients 64] [--seconds 60] [--concurrency 2]
        [--one-address] [--identity] [--budget N] [--database URL] [--url URL]

1. `moon host run` as a real process (SQLite unless ``--database``, local runner) with the
   example bots heuristic, random and weak of three participants, playing rated games.
2. Quiet: the rated games finished in ``seconds`` (counted from the host's own database,
   so that counting costs the host nothing).
3. Crowd: ``clients`` concurrent clients on loopback for ``seconds``, no think time, each
   on a keep-alive connection (a new one after a reset), in turns over a mix of what a
   crowd asks for: the front page (the leaderboard), the games list, a finished game's
   page, ``/api/leaderboard``, ``/api/games``, ``/api/status``, a finished game's record
   and a bot's page. Each client sends its own ``X-Forwarded-For`` address (a crowd of
   different visitors behind a reverse proxy on the same machine, which the host trusts);
   ``--one-address`` sends none (one visitor with many connections). Meanwhile the games
   are counted as in 2, and ``/api/status`` is asked once a second by a probe of its own.
4. Quiet again (the machine is shared: its load changes); the quiet figure is the mean of
   the two. Each window also says the cores the host's own process (its bots apart) and
   this one (the crowd) used.

``--url URL`` runs steps 2-4 against a host already running there (`make host-demo`, say:
the new-user trial of the crowd), its games counted from its ``/api/status``.

Prints games/min quiet and under the crowd with their ratio (aim: at least 0.9), the
crowd's requests answered per second (2xx/3xx) and refused (429), errors (5xx, resets,
other), latency percentiles (ms) of the crowd's requests and of the status probe. A
figure, not a test: the machine is shared and noisy. The crowd runs in this process, so
it takes a share of the same cores as the host and its bots.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import re
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "host"))

from host_support import EXAMPLES, HostProcess, make_competition, tar_folder  # noqa: E402

BOTS = ("heuristic", "random", "weak")


@dataclass
class Tally:
    """What the crowd got."""

    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    resets: int = 0
    other: int = 0
    body_bytes: int = 0
    latencies_ms: list[float] = field(default_factory=list)


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool, int]:
    """One HTTP/1.1 response off ``reader``: its status, whether the connection stays
    open (Content-Length or chunked bodies) and the bytes of its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k:
            headers[k.strip().lower()] = v.strip()
    size = 0
    if "content-length" in headers:
        size = int(headers["content-length"])
        await reader.readexactly(size)
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            chunk = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(chunk + 2)
            size += chunk
            if chunk == 0:
                break
    elif status not in (204, 304):
        size = len(await reader.read())  # to the end of the connection
        return status, False, size
    return status, headers.get("connection", "").lower() != "close", size


async def client(port: int, paths: list[str], start: int, until: float, tally: Tally,
                 forwarded: str | None, gzip: bool = True) -> None:
    """Ask ``paths`` in turns (from ``start``) until ``until`` (monotonic), no think
    time, on one keep-alive connection at a time; with ``gzip``, accepting gzip as
    every browser does."""
    k = start
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    extra = f"X-Forwarded-For: {forwarded}\r\n" if forwarded else ""
    extra += "Accept-Encoding: gzip, deflate, br\r\n" if gzip else ""
    while time.monotonic() < until:
        path = paths[k % len(paths)]
        k += 1
        t0 = time.perf_counter()
        try:
            if conn is None:
                conn = await asyncio.open_connection("127.0.0.1", port)
            reader, writer = conn
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}"
                         "Accept: */*\r\n\r\n".encode())
            await writer.drain()
            status, keep, size = await asyncio.wait_for(_read_response(reader), 120)
        except (ConnectionError, asyncio.IncompleteReadError):
            tally.resets += 1
            conn = await _close(conn)
            continue
        except (OSError, TimeoutError, ValueError, IndexError):
            tally.other += 1
            conn = await _close(conn)
            continue
        tally.latencies_ms.append((time.perf_counter() - t0) * 1000)
        tally.statuses[status] += 1
        tally.body_bytes += size
        if not keep:
            conn = await _close(conn)
    await _close(conn)


async def _close(conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None) -> None:
    if conn is not None:
        conn[1].close()
        with contextlib.suppress(Exception):
            await conn[1].wait_closed()


async def probe(port: int, until: float, out: list[float], errors: list[int]) -> None:
    """``/api/status`` once a second, on a new connection each time: its latency, ms."""
    while time.monotonic() < until:
        t0 = time.perf_counter()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Connection: close\r\n\r\n")
            await writer.drain()
            status, _, _ = await asyncio.wait_for(_read_response(reader), 120)
            writer.close()
            out.append((time.perf_counter() - t0) * 1000)
            if status >= 500:
                errors.append(status)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError):
            errors.append(0)
        await asyncio.sleep(max(0.0, 1.0 - (time.perf_counter() - t0)))


async def crowd(port: int, paths: list[str], clients: int, seconds: float,
                one_address: bool, gzip: bool = True) -> tuple[Tally, list[float], list[int]]:
    until = time.monotonic() + seconds
    tally, status_ms, status_errors = Tally(), [], []
    await asyncio.gather(
        probe(port, until, status_ms, status_errors),
        *(client(port, paths, i, until, tally,
                 None if one_address else f"10.{i // 250}.{i % 250}.{1 + i % 7}", gzip)
          for i in range(clients)))
    return tally, status_ms, status_errors


def host_cpu(pid: int) -> float:
    """CPU seconds process ``pid`` has used (user and system, its bots apart)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    """CPU seconds this process (the crowd) has used."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def finished(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        return int(conn.execute("SELECT count(*) FROM games WHERE kind = 'rated' AND "
                                "status = 'finished'").fetchone()[0])


def finished_pg(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM games WHERE kind = 'rated' AND "
                           "status = 'finished'").fetchone()
        return int(row[0]) if row else 0


def percentiles(xs: list[float]) -> str:
    if not xs:
        return "none"
    qs = statistics.quantiles(xs, n=100, method="inclusive") if len(xs) > 1 else [xs[0]] * 99
    return (f"p50 {qs[49]:7.1f}  p90 {qs[89]:7.1f}  p99 {qs[98]:7.1f}  "
            f"max {max(xs):7.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=64, help="concurrent clients")
    ap.add_argument("--seconds", type=float, default=60.0,
                    help="length of each window: quiet, crowd, quiet")
    ap.add_argument("--concurrency", type=int, default=2, help="the host's game slots")
    ap.add_argument("--one-address", action="store_true",
                    help="every client from one address (no X-Forwarded-For)")
    ap.add_argument("--budget", type=float, default=None,
                    help="the host's [visitors] requests_per_s (default: its default)")
    ap.add_argument("--identity", action="store_true",
                    help="accept no compression (a script's client, not a browser)")
    ap.add_argument("--database", default=None, help="a PostgreSQL URL (default: SQLite)")
    ap.add_argument("--url", default=None,
                    help="a host already running there (e.g. make host-demo's)")
    args = ap.parse_args()
    if args.url:
        beside(args)
        return
    tmp = Path(tempfile.mkdtemp(prefix="moon-bench-crowd-"))
    folder = make_competition(tmp / "comp", concurrency=args.concurrency)
    toml = folder / "competition.toml"
    text = toml.read_text().replace("batch_every_s = 2", "batch_every_s = 30")
    if args.budget is not None:
        text = re.sub(r"(?m)^requests_per_s = \S+", f"requests_per_s = {args.budget:g}", text)
    toml.write_text(text)
    count = ((lambda: finished_pg(args.database)) if args.database
             else (lambda: finished(folder / "host.sqlite")))
    host = HostProcess(folder, args.database).start()
    try:
        versions = []
        for i, bot in enumerate(BOTS):
            token = host.register(f"p{i}")
            versions.append((token, host.submit(token, tar_folder(EXAMPLES / bot)).json()))
        for token, v in versions:
            assert host.wait_version(token, v["id"])["status"] == "active"
        game = None  # a finished game for the crowd to look at, its record published (a
        while game is None:  # set's games are withheld, 409, while the set is played)
            time.sleep(1.0)
            game = next((g["id"] for g in host.ok(
                "GET", "/api/games?status=finished&limit=50")["games"]
                if host.call("GET", f"/api/games/{g['id']}/record").status_code == 200),
                None)
        paths = ["/", "/games", f"/games/{game}", "/api/leaderboard", "/api/games",
                 "/api/status", f"/api/games/{game}/record", "/bots/heuristic"]
        port = int(host.url.rsplit(":", 1)[1])

        assert host.proc is not None
        pid = host.proc.pid

        def window(what: str) -> tuple[float, int]:
            n0, t0 = count(), time.monotonic()
            cpu0, own0 = host_cpu(pid), own_cpu()
            result = None
            if what == "crowd":
                result = asyncio.run(crowd(port, paths, args.clients, args.seconds,
                                           args.one_address, not args.identity))
            else:
                time.sleep(args.seconds)
            n, t = count() - n0, time.monotonic() - t0
            cpu, own = (host_cpu(pid) - cpu0) / t, (own_cpu() - own0) / t
            rate = n * 60 / t
            print(f"{what:>6}: {n:4d} games in {t:5.1f} s: {rate:6.1f} games/min; cores "
                  f"used: the host's process {cpu:.2f}, this one's {own:.2f}", flush=True)
            if result is not None:
                report(*result, t)
                # signed in: past the cache, so the figures are today's
                seen = host.ok("GET", "/api/status", host.admin).get("visitors")
                if seen:
                    print(f"  the host's own count: {seen}", flush=True)
            return rate, n

        quiet_a, _ = window("quiet")
        crowded, _ = window("crowd")
        quiet_b, _ = window("quiet")
    finally:
        host.stop()
    quiet = (quiet_a + quiet_b) / 2
    print(f"games/min: quiet {quiet:.1f} (mean of {quiet_a:.1f} and {quiet_b:.1f}), "
          f"under a {args.clients}-client crowd {crowded:.1f}: "
          f"{crowded / quiet if quiet else 0:.2f}x (aim >= 0.9)", flush=True)


def beside(args: argparse.Namespace) -> None:
    """The crowd beside a host already running at ``args.url``."""
    import httpx

    url = args.url.rstrip("/")

    def get(path: str) -> Any:
        r = httpx.get(url + path, timeout=60)
        r.raise_for_status()
        return r.json()

    def count() -> int:  # a query of its own: past the host's cache of the status
        return int(get(f"/api/status?at={time.monotonic_ns()}")["finished"])

    game = get("/api/games?status=finished&limit=1")["games"][0]["id"]
    bot = get("/api/leaderboard")[0]["bot"]
    paths = ["/", "/games", f"/games/{game}", "/api/leaderboard", "/api/games",
             "/api/status", f"/api/games/{game}/record", f"/bots/{bot}"]
    port = int(url.rsplit(":", 1)[1])
    rates = []
    for what in ("quiet", "crowd", "quiet"):
        n0, t0 = count(), time.monotonic()
        result = None
        if what == "crowd":
            result = asyncio.run(crowd(port, paths, args.clients, args.seconds,
                                       args.one_address, not args.identity))
        else:
            time.sleep(args.seconds)
        n, t = count() - n0, time.monotonic() - t0
        rates.append(n * 60 / t)
        print(f"{what:>6}: {n:4d} games in {t:5.1f} s: {rates[-1]:6.1f} games/min",
              flush=True)
        if result is not None:
            report(*result, t)
    quiet = (rates[0] + rates[2]) / 2
    print(f"games/min: quiet {quiet:.1f}, under a {args.clients}-client crowd "
          f"{rates[1]:.1f}: {rates[1] / quiet if quiet else 0:.2f}x (aim >= 0.9)", flush=True)


def report(tally: Tally, status_ms: list[float], status_errors: list[int],
           seconds: float) -> None:
    ok = sum(n for s, n in tally.statuses.items() if s < 400)
    refused = tally.statuses.get(429, 0)
    five = sum(n for s, n in tally.statuses.items() if s >= 500)
    other4 = sum(n for s, n in tally.statuses.items() if 400 <= s < 500 and s != 429)
    print(f"  crowd: {ok / seconds:8.1f} requests/s answered (2xx/3xx), "
          f"{refused / seconds:7.1f}/s refused (429); errors: {five} 5xx, "
          f"{tally.resets} resets, {tally.other} other, {other4} other 4xx "
          f"(statuses {dict(sorted(tally.statuses.items()))})", flush=True)
    answers = sum(tally.statuses.values())
    print(f"  crowd's bodies: {tally.body_bytes / max(1, answers) / 1024:.1f} KB an answer, "
          f"{tally.body_bytes / seconds / 1e6:.1f} MB/s", flush=True)
    print(f"  crowd latency ms:  {percentiles(tally.latencies_ms)}", flush=True)
    print(f"  /api/status probe: {percentiles(status_ms)} ({len(status_ms)} asked, "
          f"{len(status_errors)} failed)", flush=True)


if __name__ == "__main__":
    main()
