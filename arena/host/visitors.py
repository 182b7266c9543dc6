"""What the host does so that a crowd of visitors cannot slow its games (docs/host.md, "A
crowd of visitors"): :class:`Visitors`, a pure ASGI middleware in front of the whole app.

- **A short-lived cache of public answers** (:class:`PublicCache`): a ``GET`` without
  credentials (no ``Authorization``, no session cookie) of a public page or API answer
  (:data:`CACHEABLE`) is answered from memory while its copy is fresh (``ttl_s``, or the
  ``max-age`` the route itself sent, e.g. a finished game's record), with an ``ETag`` and
  a ``Last-Modified``; ``If-None-Match`` / ``If-Modified-Since`` get a 304 without a body.
  One request per address computes a stale copy again while the others are answered with
  the stale one (or, with none yet, wait for it), so the database sees at most one read per
  address per ``ttl_s``, however many visitors ask. A request with ``Cache-Control:
  no-cache`` (or ``max-age=0``: a browser's reload) is read anew, as a miss. While the
  database cannot answer (503), a stale copy is served instead.
- **Finished records as static files**: a finished game's record with every bot's stderr
  left out is written once (:func:`public_record_path`) and served from the file, without
  the database.
- **A budget for the visitors' work**: every request waits for its turn at
  ``rate`` requests a second (it costs the event loop that keeps the games' clocks); a
  request that would wait over ``max_wait_s`` is refused (429). An *expensive* one (any
  that reaches the routes: a cache miss, a signed-in page, an upload) also takes one of
  ``in_flight`` places, waiting at most ``place_wait_s`` for one (the threads and database
  connections the routes may hold at once: fewer than the web's own pool of connections,
  apart from the games', :func:`arena.host.db.web_engine`) and a token of its client's
  bucket (``per_client`` a second, ``burst`` at once); over
  either it is refused with 429 and ``Retry-After``. A client is its address as the
  server saw it: behind a reverse proxy on the same machine the address the proxy sends in
  ``X-Forwarded-For`` (uvicorn's trusted proxies, 127.0.0.1 by default), an IPv6 client by
  its /64 (:func:`arena.host.registrations.client_key`).
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import hashlib
import json
import logging
import math
import os
import re
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .registrations import client_key

log = logging.getLogger("arena.host")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CACHEABLE = re.compile(r"^(/|/games|/games/[^/]+|/bots/[^/]+|/versions/\d+|/docs"
                       r"|/openapi\.json|/api/leaderboard|/api/games|/api/games/[^/]+"
                       r"|/api/games/[^/]+/record|/api/bots|/api/bots/[^/]+"
                       r"|/api/versions/\d+|/api/status|/final|/api/final|/api/final\.csv)$")
"""The public answers a visitor's ``GET`` may be served from the cache (never a live
game's event stream, a seat's stderr, a log, a form)."""
RECORD = re.compile(r"^/api/games/([A-Za-z0-9_.-]{1,128})/record$")
CHEAP = re.compile(r"^/static/")
"""Answers that never reach the database (the assets: they have their own ETags)."""
STREAMS = re.compile(r"^/games/[^/]+/events$|^/tables/[^/]+/state$")
"""Long answers with limits of their own (:mod:`arena.host.pages.live`; a table's long
poll, :mod:`arena.host.pages.tables`, answers only the holder of its key)."""
SESSION_COOKIE = "moon_session="


@dataclass(frozen=True)
class VisitorLimits:
    """The visitors' budget (module docstring); every figure per second or at once."""

    rate: float = 250.0
    """Requests a second served in all; more wait their turn."""
    max_wait_s: float = 2.0
    """The longest a request waits for its turn or a place before a 429."""
    in_flight: int = 6
    """Expensive requests (that reach the routes) at once."""
    place_wait_s: float = 10.0
    """The longest an expensive request waits for one of those places before a 429 (a
    waiting request costs nothing: a dozen uploads at once wait their turn)."""
    per_client: float = 20.0
    """Expensive requests a second one client may make, on average."""
    burst: int = 60
    """Expensive requests one client may make at once after a pause."""
    ttl_s: float = 5.0
    """How long a cached public answer is fresh, seconds."""
    max_entries: int = 512
    max_bytes: int = 64 * 1024 * 1024
    """The cache's size: answers and bytes (the oldest go first)."""


def public_record_path(record_dir: Path, game_id: str) -> Path:
    """Where a finished game's public record (every bot's stderr left out) is kept."""
    return record_dir / "public" / f"{game_id}.json"


def write_public_record(record_dir: Path, game_id: str, record: dict[str, Any]) -> None:
    """Write ``record`` (stderr already left out) as game ``game_id``'s public record,
    atomically (a reader sees the whole file or none); a failure to write is only a
    missed shortcut."""
    path = public_record_path(record_dir, game_id)
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(json.dumps(record, separators=(",", ":")))
        os.replace(tmp, path)
    except OSError:
        pass


@dataclass
class Entry:
    """A cached answer: its status line's code, headers, body, ETag, Last-Modified."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    etag: bytes
    modified: float
    """Wall-clock time (Unix seconds) its content was first seen."""
    fresh_until: float
    """Monotonic time until which it is fresh."""
    max_age: int
    changes: int = 0
    """The count of changes (:attr:`Visitors.changes`) it was made under: after another
    change it is read anew."""
    gz: bytes | None = None
    """``body`` gzipped once, for the clients that accept it (None: not worth it)."""

    @property
    def gz_etag(self) -> bytes:
        """The ETag of the gzipped body (another representation: another tag)."""
        return self.etag[:-1] + b'-gz"'


GZIP_MIN = 1024
"""The smallest body worth gzipping, bytes."""


def gzipped(body: bytes) -> bytes | None:
    """``body`` gzipped (level 6), or None if it is too small for it to pay."""
    if len(body) < GZIP_MIN:
        return None
    c = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip wrapper
    out = c.compress(body) + c.flush()
    return out if len(out) < len(body) * 0.9 else None


class PublicCache:
    """The cached public answers, newest used last (thread-unsafe: the event loop's)."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.entries: collections.OrderedDict[str, Entry] = collections.OrderedDict()
        self.bytes = 0
        self.computing: dict[str, asyncio.Future[Entry | None]] = {}

    def get(self, key: str) -> Entry | None:
        e = self.entries.get(key)
        if e is not None:
            self.entries.move_to_end(key)
        return e

    def put(self, key: str, e: Entry) -> None:
        old = self.entries.pop(key, None)
        if old is not None:
            self.bytes -= _size(old)
        if len(e.body) > self.max_bytes // 8:
            return
        self.entries[key] = e
        self.bytes += _size(e)
        while self.entries and (len(self.entries) > self.max_entries
                                or self.bytes > self.max_bytes):
            _, gone = self.entries.popitem(last=False)
            self.bytes -= _size(gone)


def _size(e: Entry) -> int:
    return len(e.body) + len(e.gz or b"")


class Pace:
    """Turns at ``rate`` a second: :meth:`turn` is how long a request must wait for its
    own (it is booked), or None if that is over ``max_wait_s`` (nothing booked)."""

    def __init__(self, rate: float, max_wait_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.step = 1.0 / rate
        self.max_wait_s = max_wait_s
        self.clock = clock
        self.next = 0.0

    def turn(self) -> float | None:
        now = self.clock()
        at = max(self.next, now)
        if at - now > self.max_wait_s:
            return None
        self.next = at + self.step
        return at - now


class Buckets:
    """A token bucket per client: ``rate`` tokens a second, at most ``burst``; a bounded
    table (the fullest buckets, which are as good as new, are forgotten first)."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 max_clients: int = 65536) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.max_clients = max_clients
        self.tokens: collections.OrderedDict[str, tuple[float, float]] = (
            collections.OrderedDict())

    def take(self, client: str) -> float:
        """Take a token of ``client``'s: 0 if taken, else the seconds until one is
        there (nothing taken)."""
        now = self.clock()
        level, at = self.tokens.pop(client, (self.burst, now))
        level = min(self.burst, level + (now - at) * self.rate)
        if level < 1.0:
            self.tokens[client] = (level, now)
            return (1.0 - level) / self.rate
        self.tokens[client] = (level - 1.0, now)
        while len(self.tokens) > self.max_clients:
            self.tokens.popitem(last=False)
        return 0.0


@dataclass
class Counts:
    """What the visitors got (for the tests and the benchmark)."""

    hits: int = 0
    misses: int = 0
    not_modified: int = 0
    stale: int = 0
    refused: collections.Counter[str] = field(default_factory=collections.Counter)

    def as_dict(self) -> dict[str, int]:
        """The counts as the status gives them."""
        return {"hits": self.hits, "misses": self.misses,
                "not_modified": self.not_modified, "stale": self.stale,
                "refused": sum(self.refused.values())}


def _header(scope: Scope, name: bytes) -> bytes:
    for k, v in scope.get("headers", ()):
        if k == name:
            return bytes(v)
    return b""


def _wants_fresh(scope: Scope) -> bool:
    """Whether the request asks for an answer read anew (``Cache-Control: no-cache`` or
    ``max-age=0``, ``Pragma: no-cache``: a browser's reload, a tool that needs the figure
    of now)."""
    cc = _header(scope, b"cache-control").lower()
    return b"no-cache" in cc or b"max-age=0" in cc or b"no-cache" in _header(
        scope, b"pragma").lower()


def _accepts_gzip(scope: Scope) -> bool:
    """Whether the request's ``Accept-Encoding`` takes gzip (named, or ``*``, with a
    ``q`` other than 0)."""
    for part in _header(scope, b"accept-encoding").lower().split(b","):
        coding, _, params = part.partition(b";")
        if coding.strip() in (b"gzip", b"x-gzip", b"*"):
            q = params.strip().removeprefix(b"q=")
            try:
                return not params.strip() or float(q) > 0
            except ValueError:
                return True
    return False


def _etag(body: bytes) -> bytes:
    return b'"' + hashlib.blake2b(body, digest_size=12).hexdigest().encode() + b'"'


def _http_date(t: float) -> bytes:
    return email.utils.formatdate(t, usegmt=True).encode()


def _max_age(headers: list[tuple[bytes, bytes]]) -> int | None:
    for k, v in headers:
        if k.lower() == b"cache-control":
            m = re.search(rb"max-age=(\d+)", v)
            if b"no-store" in v or b"private" in v:
                return 0
            return int(m.group(1)) if m else None
    return None


class Visitors:
    """The middleware (module docstring) around ``app``, under ``limits``; ``record_dir``
    holds the public records."""

    def __init__(self, app: ASGIApp, record_dir: Path, limits: VisitorLimits | None = None,
                 changes: Callable[[], int] = lambda: 0) -> None:
        self.app = app
        self._host_changes = changes
        self._writes = 0
        self.record_dir = record_dir
        self.limits = limits or VisitorLimits()
        self.cache = PublicCache(self.limits.max_entries, self.limits.max_bytes)
        self.pace = Pace(self.limits.rate, self.limits.max_wait_s)
        self.buckets = Buckets(self.limits.per_client, self.limits.burst)
        self.places = asyncio.Semaphore(self.limits.in_flight)
        self.counts = Counts()
        self._said: dict[str, float] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        wait = self.pace.turn()
        if wait is None:
            await self._refuse(send, "busy", 1, "the host has more visitors than it serves "
                               "at once: try again in a second")
            return
        if wait > 0:
            await asyncio.sleep(wait)
        if CHEAP.match(path) or STREAMS.match(path):
            await self.app(scope, receive, send)
            return
        anonymous = (not _header(scope, b"authorization")
                     and SESSION_COOKIE.encode() not in _header(scope, b"cookie"))
        if scope.get("method") == "GET" and anonymous and self.limits.ttl_s > 0 \
                and CACHEABLE.match(path):
            await self._cached(scope, receive, send)
            return
        await self._expensive(scope, receive, send)

    def _client(self, scope: Scope) -> str:
        client = scope.get("client")
        return client_key(client[0] if client else None)

    async def _place(self, scope: Scope) -> tuple[str, int] | None:
        """Take the client's token and a place for an expensive request: None, or why not
        and when to try again (seconds)."""
        wait = self.buckets.take(self._client(scope))
        if wait > 0:
            return "client", max(1, math.ceil(wait))
        try:
            await asyncio.wait_for(self.places.acquire(), self.limits.place_wait_s)
        except TimeoutError:
            return "places", 1
        return None

    @property
    def changes(self) -> int:
        """Changes since the start that a cached answer must not hide: the host's
        (``changes``: a version judged) and every request that may have written (not a
        ``GET`` or ``HEAD``: a submission, a registration...)."""
        return self._host_changes() + self._writes

    async def _expensive(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = await self._place(scope)
        if refusal is not None:
            await self._refuse_for(send, *refusal)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.places.release()
            if scope.get("method") not in ("GET", "HEAD"):
                self._writes += 1

    async def _cached(self, scope: Scope, receive: Receive, send: Send) -> None:
        qs = scope.get("query_string", b"")
        key = scope["path"] + ("?" + qs.decode("latin-1") if qs else "")
        now = time.monotonic()
        entry = self.cache.get(key)
        if entry is not None and entry.changes != self.changes:
            entry = None  # something changed that it would hide: not even as a stale copy
        if entry is not None and _wants_fresh(scope):  # read anew, as a miss (the client's
            entry = None  # limit applies), and the cache updated
        if entry is not None and now < entry.fresh_until:
            self.counts.hits += 1
            await self._serve(scope, send, entry)
            return
        m = RECORD.match(scope["path"])
        if m and not qs:
            entry = await self._record_file(key, m.group(1))
            if entry is not None:
                self.counts.hits += 1
                await self._serve(scope, send, entry)
                return
        computing = self.cache.computing.get(key)
        if computing is not None:
            if entry is not None:  # someone is computing it again: the stale copy
                self.counts.stale += 1
                await self._serve(scope, send, entry)
                return
            try:
                fresh = await asyncio.wait_for(asyncio.shield(computing),
                                               self.limits.max_wait_s)
            except TimeoutError:
                fresh = None
            if fresh is not None:
                self.counts.hits += 1
                await self._serve(scope, send, fresh)
                return
        # taken before the first wait, so that requests meanwhile wait for this one
        future: asyncio.Future[Entry | None] = asyncio.get_running_loop().create_future()
        self.cache.computing[key] = future
        refusal = await self._place(scope)
        if refusal is not None:
            self.cache.computing.pop(key, None)
            future.set_result(None)
            if entry is not None:
                self.counts.stale += 1
                await self._serve(scope, send, entry)
            else:
                await self._refuse_for(send, *refusal)
            return
        self.counts.misses += 1
        made: Entry | None = None
        try:
            changes = self.changes
            status, headers, body = await self._capture(scope, receive)
            if status == 200:
                made = self._entry(entry, status, headers, body)
                made.changes = changes
                if made.max_age > 0:
                    self.cache.put(key, made)
        except Exception:
            if entry is None:
                raise
            status, headers, body = 503, [], b""
        finally:
            self.places.release()
            self.cache.computing.pop(key, None)
            future.set_result(made if made is not None and made.max_age > 0 else None)
        if made is not None and made.max_age > 0:
            await self._serve(scope, send, made)
        elif status >= 500 and entry is not None and key != "/api/status":
            # the database is down: what it was (but the status: which games run now)
            self.counts.stale += 1
            await self._serve(scope, send, entry)
        else:
            await send({"type": "http.response.start", "status": status,
                        "headers": headers})
            await send({"type": "http.response.body", "body": body})

    async def _capture(self, scope: Scope, receive: Receive
                       ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        status = 500
        headers: list[tuple[bytes, bytes]] = []
        parts: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                parts.append(bytes(message.get("body", b"")))

        await self.app(scope, receive, capture)
        return status, headers, b"".join(parts)

    def _entry(self, old: Entry | None, status: int, headers: list[tuple[bytes, bytes]],
               body: bytes) -> Entry:
        etag = _etag(body)
        age = _max_age(headers)  # the route's own say, if any
        ttl = self.limits.ttl_s if age is None else float(age)
        kept = [(k, v) for k, v in headers
                if k.lower() not in (b"set-cookie", b"content-length", b"etag",
                                     b"last-modified", b"cache-control", b"vary")]
        modified = old.modified if old is not None and old.etag == etag else time.time()
        gz = old.gz if old is not None and old.etag == etag else gzipped(body)
        return Entry(status, kept, body, etag, modified, time.monotonic() + ttl,
                     math.ceil(ttl) if ttl > 0 else 0, gz=gz)

    async def _record_file(self, key: str, game_id: str) -> Entry | None:
        path = public_record_path(self.record_dir, game_id)

        def read() -> tuple[bytes, bytes | None]:  # gzipped off the event loop
            body = path.read_bytes()
            return body, gzipped(body)

        try:
            body, gz = await asyncio.to_thread(read)
        except OSError:
            return None
        old = Entry(0, [], b"", _etag(body), time.time(), 0.0, 0, gz=gz)
        entry = self._entry(old, 200, [(b"content-type", b"application/json")], body)
        entry.max_age, entry.fresh_until = 3600, time.monotonic() + 60.0
        entry.changes = self.changes
        self.cache.put(key, entry)
        return entry

    async def _serve(self, scope: Scope, send: Send, e: Entry) -> None:
        gz = e.gz is not None and _accepts_gzip(scope)
        common = [(b"etag", e.gz_etag if gz else e.etag),
                  (b"last-modified", _http_date(e.modified)),
                  (b"cache-control", b"public, max-age=%d" % e.max_age),
                  (b"vary", b"Authorization, Cookie, Accept-Encoding")]
        if self._not_modified(scope, e):
            self.counts.not_modified += 1
            await send({"type": "http.response.start", "status": 304, "headers": common})
            await send({"type": "http.response.body", "body": b""})
            return
        body = e.gz if gz and e.gz is not None else e.body
        extra = [(b"content-encoding", b"gzip")] if gz else []
        await send({"type": "http.response.start", "status": e.status,
                    "headers": [*e.headers, *common, *extra,
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _not_modified(scope: Scope, e: Entry) -> bool:
        inm = _header(scope, b"if-none-match")
        if inm:
            tags = [t.strip().removeprefix(b"W/") for t in inm.split(b",")]
            return b"*" in tags or e.etag in tags or (e.gz is not None and e.gz_etag in tags)
        ims = _header(scope, b"if-modified-since")
        if ims:
            try:
                since = email.utils.parsedate_to_datetime(ims.decode("latin-1"))
            except (TypeError, ValueError, IndexError):
                return False
            return int(e.modified) <= since.timestamp()
        return False

    async def _refuse_for(self, send: Send, why: str, retry_s: int) -> None:
        detail = ("too many requests from your address that the host must compute: try "
                  f"again in {retry_s} s" if why == "client" else
                  "the host is answering as many requests as it takes at once: try again "
                  f"in {retry_s} s")
        await self._refuse(send, why, retry_s, detail)

    async def _refuse(self, send: Send, why: str, retry_s: int, detail: str) -> None:
        self.counts.refused[why] += 1
        now = time.monotonic()
        if now - self._said.get(why, -1e9) >= 60.0:  # one line a minute per reason
            self._said[why] = now
            log.warning("visitors: refusing requests (429): %s (counted so far: %d)",
                        detail, self.counts.refused[why])
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": 429, "headers": [
            (b"content-type", b"application/json"), (b"retry-after", str(retry_s).encode()),
            (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class Corked:
    """A transport whose writes within one turn of the event loop leave as one send: an
    answer's head and body (uvicorn writes each on its own) are one segment, one
    system call and one wake-up of the reader, not two (each system call is also a
    chance for another thread to take the GIL from the loop that keeps the games'
    clocks). Anything else is the transport's own."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._parts: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._parts:
            self._loop.call_soon(self.flush)
        self._parts.append(bytes(data))

    def flush(self) -> None:
        """Send what was written so far (if the transport is still open)."""
        if self._parts:
            data = b"".join(self._parts)
            self._parts.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._parts))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def corked_http() -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools) on :class:`Corked` transports (``http=`` of
    ``uvicorn.Config``)."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class CorkedHttpTools(HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(Corked(transport, self.loop))  # type: ignore[arg-type]

    return CorkedHttpTools


__all__ = ["CACHEABLE", "Buckets", "Corked", "Counts", "Entry", "Pace", "PublicCache",
           "VisitorLimits", "Visitors", "corked_http", "public_record_path",
           "write_public_record"]
