"""A running game's public events as server-sent events (``/games/{id}/events``), from the
referee's watch stream, which the live view reads; streams held open at once are limited
per client address and in all (:class:`StreamSlots`)."""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from sqlalchemy import select

from ...protocol.convert import event_to_dict
from ..deps import HostDep
from ..embargo import withheld_game
from ..models import Game
from ..registrations import client_key
from ..service import Host
from .games import visible_game
from .sessions import signed_in

router = APIRouter(include_in_schema=False)


def _watch(host: Host, game_id: str) -> AsyncIterator[Any] | None:
    ex = getattr(host, "_executor", None)
    watch = getattr(ex, "watch", None)
    return watch(game_id) if watch is not None else None


STREAMS_PER_CLIENT = 8
"""Live event streams (``/games/ID/events``) one client address may hold open at once; one
more is refused (429). A spectator's tabs need a few; one client holding hundreds slowed
every page and the API to seconds (400 streams: 1-5 s an answer)."""
STREAMS_MAX = 256
"""Live event streams open at once from every client together; one more is refused (503)."""


class StreamSlots:
    """The live event streams open now, counted per client address (thread-safe)."""

    def __init__(self, per_client: int = STREAMS_PER_CLIENT, total: int = STREAMS_MAX
                 ) -> None:
        self.per_client = per_client
        self.total = total
        self.open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, client: str) -> tuple[int, str] | None:
        """Take a slot for ``client``: None if taken, else the refusal to answer with
        (``(status, detail)``: 429 for a client at its own limit, 503 for the host at
        its)."""
        with self._lock:
            if self.open[client] >= self.per_client:
                return 429, (f"you have {self.open[client]} live game streams open (at "
                             f"most {self.per_client} at once): close some live pages "
                             "first")
            if sum(self.open.values()) >= self.total:
                return 503, (f"the host has {self.total} live game streams open, its "
                             "most: watch the replay once the game is over, or try "
                             "again later")
            self.open[client] += 1
            return None

    def give_back(self, client: str) -> None:
        """Give back a slot of ``client`` taken by :meth:`take`."""
        with self._lock:
            self.open[client] -= 1
            if self.open[client] <= 0:
                del self.open[client]


_SLOTS: weakref.WeakKeyDictionary[Host, StreamSlots] = weakref.WeakKeyDictionary()
_SLOTS_LOCK = threading.Lock()


def stream_slots(host: Host) -> StreamSlots:
    """The host's :class:`StreamSlots` (made at the first stream)."""
    with _SLOTS_LOCK:
        slots = _SLOTS.get(host)
        if slots is None:
            slots = _SLOTS[host] = StreamSlots()
        return slots


def stream_client(address: str) -> str:
    """Who holds a stream, for :data:`STREAMS_PER_CLIENT`: an IPv4 address, or an IPv6
    address's /64 (one machine commonly has a whole /64 to pick addresses from), as open
    registrations count callers (:func:`arena.host.registrations.client_key`).

    >>> stream_client("2001:db8::1"), stream_client("2001:db8::ffff:2")
    ('2001:db8::/64', '2001:db8::/64')
    >>> stream_client("10.0.0.1"), stream_client("::ffff:10.0.0.1")
    ('10.0.0.1', '10.0.0.1')
    """
    return client_key(address)


class _EventStream(StreamingResponse):
    """A stream that gives its slot back when it ends, however it ends (the end of the
    game, or the reader gone). A game's public events are a few tens of kB, which the
    sockets' buffers hold: a reader that never reads does not hold its stream past the
    game's end."""

    def __init__(self, content: AsyncIterator[bytes], release: Any, **kw: Any) -> None:
        super().__init__(content, **kw)
        self._release = release

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


def _game_status(host: Host, game_id: str) -> str | None:
    with host.WebSession() as s:
        return s.scalar(select(Game.status).where(Game.id == game_id))


def _visible_status(host: Host, request: Request, game_id: str
                    ) -> tuple[str | None, str | None]:
    """The game's status if the caller may see it (else None), and why its plays are not
    theirs to watch yet (a challenge game another asked for, a game of a set whose other
    games are still to be played: :mod:`arena.host.embargo`), or None."""
    with host.WebSession() as s:
        user = signed_in(request, s)
        g = visible_game(s, game_id, user)
        return (g.status, withheld_game(s, g, user)) if g is not None else (None, None)


@router.get("/games/{game_id}/events")
async def game_events(game_id: str, request: Request, host: HostDep) -> Response:
    """The game's public events as server-sent events (``event: moon``, data a JSON object
    of :func:`arena.protocol.convert.event_to_dict`), from the referee's watch stream: from the
    start, then live, then ``event: end``. Only the referee's public events go out: no
    tile is sent before it is played, and the widow and the discard never are; a game
    that is over sends only ``event: end`` (its replay is its record's, withheld while
    other games of its set are played: :mod:`arena.host.embargo`). While other games of
    its set are still to be played, its plays are withheld too (403, saying when they are
    shown), and a challenge game's plays are its asker's alone (403 to its opponent's
    owner, who sees only its result).

    A client address holds at most :data:`STREAMS_PER_CLIENT` streams at once (more: 429),
    the host :data:`STREAMS_MAX` (more: 503); the database is read in a thread, never on
    the event loop that keeps the games' clocks."""
    slots = stream_slots(host)
    client = stream_client(request.client.host if request.client is not None else "")
    refused = slots.take(client)
    if refused is not None:
        raise HTTPException(refused[0], refused[1], headers={"Retry-After": "20"})
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            slots.give_back(client)

    try:
        status, why = await run_in_threadpool(_visible_status, host, request, game_id)
    except BaseException:
        release()
        raise
    if status is None:
        release()
        raise HTTPException(404, f"no game {game_id!r}")
    if why is not None:  # its plays are its record's, as they are made
        release()
        raise HTTPException(403, f"the plays of game {game_id} are {why}")

    async def stream() -> AsyncIterator[bytes]:
        yield b"retry: 3000\n\n"
        events = None
        now: str | None = status
        for i in range(100):  # queued: wait for it to start here (up to ~20 s)
            if now not in ("queued", "running"):
                # over: its events are its record's plays, which stay withheld while its
                # set's other games are played (arena.host.embargo); the replay has them
                break
            events = _watch(host, game_id)
            if events is not None or now not in ("queued", "running"):
                break
            yield b": waiting\n\n"
            await asyncio.sleep(0.2)
            if i % 5 == 4:  # once a second: has it ended (cancelled, voided) meanwhile?
                now = await run_in_threadpool(_game_status, host, game_id)
        if events is not None:
            async for ev in events:
                if await request.is_disconnected():
                    return
                d = event_to_dict(ev)
                yield f"id: {d['seq']}\nevent: moon\ndata: {json.dumps(d)}\n\n".encode()
        yield b"event: end\ndata: {}\n\n"

    return _EventStream(stream(), release, media_type="text/event-stream",
                        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


__all__ = ["STREAMS_MAX", "STREAMS_PER_CLIENT", "StreamSlots", "router", "stream_client",
           "stream_slots"]
