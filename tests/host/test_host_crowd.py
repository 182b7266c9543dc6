"""A real `moon host run` under a crowd of visitors (bounded, loopback): rated games keep
being recorded while it lasts and no visitor gets a 5xx or a reset connection; behind a
reverse proxy each visitor's own address is held to its limit (429 with Retry-After).
The games' pace under a crowd is a figure, in benchmarks/crowd.py.

The crowd runs on PostgreSQL alone (``postgres_only``): its failure mode is the pages'
pool of connections running dry (arena.host.db.web_engine: 8, apart from the games'), a
pool PostgreSQL alone has (on SQLite the pages read through the host's one engine, whose
readers never wait for its writer: WAL); the limit behind a proxy is the host's policy,
on SQLite alone (``one_database``)."""

from __future__ import annotations

import asyncio
import collections
import re
import time

import httpx
import pytest
from host_support import HostProcess, make_competition, wait_for

BOTS = ("heuristic", "random", "weak")
GAMES = 24
"""Rated games the crowd must see recorded."""
MAX_REQUESTS = 40_000
"""The crowd's bound: it stops once this many requests were answered, games or not."""


def published(host: HostProcess) -> str | None:
    """A finished game whose record a visitor may read now, or None."""
    for g in host.ok("GET", "/api/games?status=finished&limit=50")["games"]:
        if host.call("GET", f"/api/games/{g['id']}/record").status_code == 200:
            return str(g["id"])
    return None


def finished(host: HostProcess) -> int:
    """Finished rated games, asked past the cache (signed in)."""
    return int(host.ok("GET", "/api/status", host.admin)["finished"])


async def crowd(host: HostProcess, paths: list[str], clients: int, target: int
                ) -> tuple[collections.Counter[int], int, int]:
    """``clients`` visitors (each its own address behind a proxy on this machine), no
    think time, until ``target`` rated games are finished or :data:`MAX_REQUESTS` are
    answered: the statuses they got, transport errors, the games finished."""
    statuses: collections.Counter[int] = collections.Counter()
    errors = 0
    done = asyncio.Event()
    games = 0

    async def visitor(i: int) -> None:
        nonlocal errors
        headers = {"X-Forwarded-For": f"10.1.{i}.1"}
        async with httpx.AsyncClient(base_url=host.url, timeout=120) as c:
            k = i
            while not done.is_set():
                try:
                    r = await c.get(paths[k % len(paths)], headers=headers)
                    statuses[r.status_code] += 1
                except httpx.TransportError:
                    errors += 1
                k += 1
                if sum(statuses.values()) >= MAX_REQUESTS:
                    done.set()

    async def count() -> None:
        nonlocal games
        async with httpx.AsyncClient(base_url=host.url, timeout=120) as c:
            while not done.is_set():
                r = await c.get("/api/status", headers={"Authorization":
                                                        f"Bearer {host.admin}"})
                if r.status_code == 200:
                    games = int(r.json()["finished"])
                    if games >= target:
                        done.set()
                await asyncio.sleep(0.5)

    await asyncio.wait_for(asyncio.gather(count(), *(visitor(i) for i in range(clients))),
                           600)
    return statuses, errors, games


@pytest.mark.slow
@pytest.mark.postgres_only
def test_rated_games_keep_being_recorded_under_a_crowd(tmp_path, database) -> None:
    host = HostProcess(make_competition(tmp_path / "comp"), database).start()
    try:
        host.enter(BOTS)
        # a game whose record is published: its duplicate set's other games are played
        # (before that its page and record are withheld, 409, and rightly so)
        game = wait_for(lambda: published(host), 180, "a rated game's record published")
        paths = ["/", "/games", f"/games/{game}", "/api/leaderboard", "/api/games",
                 "/api/status", f"/api/games/{game}/record", "/bots/heuristic",
                 "/api/games?limit=20&offset=3"]
        start = finished(host)
        statuses, errors, games = asyncio.run(crowd(host, paths, 32, start + GAMES))
        assert errors == 0
        assert {s: n for s, n in statuses.items() if s >= 500} == {}
        assert set(statuses) <= {200, 429}, statuses
        assert games >= start + GAMES, (f"{games - start} rated games recorded during "
                                        f"{sum(statuses.values())} requests")
        assert host.proc is not None and host.proc.poll() is None
    finally:
        host.stop()
    assert "Traceback" not in host.log.read_text()


@pytest.mark.one_database
def test_behind_a_proxy_each_visitor_is_held_to_its_own_limit(tmp_path) -> None:
    folder = make_competition(tmp_path / "comp")
    toml = folder / "competition.toml"
    toml.write_text(re.sub(r"(?m)^per_client_per_s = .*$", "per_client_per_s = 0.001",
                           re.sub(r"(?m)^burst = .*$", "burst = 3", toml.read_text())))
    host = HostProcess(folder, None).start()
    try:
        def get(n: int, address: str | None) -> httpx.Response:
            return host.call("GET", f"/api/games?limit={n}", headers=(
                {"X-Forwarded-For": address} if address else {}))

        # 3 at once, then one each 1000 s: the 4th of an address is refused until its
        # bucket, refilled at 0.001 a second since the first, holds one again: 1000 s less
        # the time the four took (worked out from the clock here, which a loaded machine
        # makes more than a second)
        t0 = time.monotonic()
        assert [get(n, "198.51.100.7").status_code for n in (1, 2, 3)] == [200, 200, 200]
        refused = get(4, "198.51.100.7")
        took = time.monotonic() - t0
        assert refused.status_code == 429
        assert 1000 - took - 1 <= int(refused.headers["retry-after"]) <= 1000
        # another visitor behind the same proxy, and the proxy's own address, are not
        assert get(4, "198.51.100.8").status_code == 200
        assert get(5, None).status_code == 200
    finally:
        host.stop()
