"""The gRPC referee server: thin servicers over :class:`arena.referee.referee.Referee`.

``BotService.Play`` is registered with a raw-bytes request deserializer so that garbage
from a bot is the bot's recorded protocol error, not an opaque transport failure.
Errors map to status codes in one place (:func:`_status`). The standard health service
and server reflection are served too.

MatchService goes through :class:`MatchServiceGuard`, a server interceptor: the admin token
is checked first, before the request is even parsed (a refused request costs one log line
at most, rate-limited), and a request that does not parse is INVALID_ARGUMENT, never a
traceback in the log. Every view of a running match shows only what a spectator may see.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import logging
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar, cast

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from moon_sdk.convert import ruleset_from_pb, ruleset_to_pb
from moon_sdk.rules import Ruleset, RulesetError
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import match_pb2 as mpb
from moon_sdk.v1 import match_pb2_grpc

from ..core.results import Fault, FaultReason, GameResult, Termination
from ..core.timecontrol import TimeControl
from ..errors import ConfigError
from ..protocol.convert import fault_to_pb, result_to_pb, time_control_from_pb, time_control_to_pb
from ..protocol.turns import TurnBytes
from ..records.record import GameRecord, read_record
from .referee import _ID, MAX_MESSAGE_BYTES, Match, Referee, Refusal, Status

log = logging.getLogger("arena.referee.server")

JOIN_TIMEOUT_S = 10.0
"""How long a new stream may wait before sending its join."""
WRITE_TIMEOUT_S = 60.0
"""A message the bot does not take within this long ends its stream (a drop)."""
MAX_RECEIVE_BYTES = 4 * 1024 * 1024
"""Transport limit, bytes (gRPC's default). The referee's own limit (MAX_MESSAGE_BYTES,
64 KiB) is checked below it, so a bot's oversized message is recorded as its protocol
error. A message over this limit never reaches the referee: gRPC cuts the stream, and on
this side that cannot be told from a dropped stream (grpc.aio's request iterator just
ends), so it is recorded as one."""

_CODES = {name: getattr(grpc.StatusCode, name) for name in (
    "UNAUTHENTICATED", "FAILED_PRECONDITION", "NOT_FOUND", "INVALID_ARGUMENT",
    "ALREADY_EXISTS", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED")}
MATCH_SERVICE = "/moon.v1.MatchService/"
"""The method prefix of MatchService calls (the ones the admin token guards)."""
REFUSED_LOG_EVERY_S = 10.0
"""At most one log line per this many seconds for refused (unauthenticated) calls; the next
line counts the ones left out."""

T = TypeVar("T")


def match_info(m: Match) -> mpb.MatchInfo:
    """A match as a ``MatchInfo`` message. While it runs, only what a spectator may see: no
    seed, and each fault as :meth:`Fault.public` gives it (an illegal action's reason would
    tell a seat's tiles); once it is over, the seed and the faults as recorded."""
    over = m.status == Status.FINISHED
    info = mpb.MatchInfo(
        match_id=m.match_id, status=m.status.value,
        ruleset=ruleset_to_pb(m.ruleset, m.preset),
        seed=m.seed if over else 0,
        seats=[mpb.SeatInfo(seat=s.index, name=s.name, version=s.version,
                            connected=s.link is not None) for s in m.seats],
        time_control=time_control_to_pb(m.tc), scores=list(m.state.scores),
        hands_played=len(m.state.hand_records), record_path=m.record_path,
        faults=[fault_to_pb(f if over else f.public()) for f in m.faults])
    if m.result is not None:
        info.result.CopyFrom(result_to_pb(m.result))
    return info


def record_info(rec: GameRecord) -> mpb.MatchInfo:
    """A finished match the referee no longer keeps in memory, as a ``MatchInfo`` read from
    its record.

    Raises:
        Refusal: FAILED_PRECONDITION, the record is not a well-formed finished game.
    """
    try:
        if rec.errors:
            raise ValueError(rec.errors[0])
        ruleset = Ruleset.from_dict(rec.ruleset)
        r = rec.result
        faults = [Fault(f.seat if f.seat is not None else 0, FaultReason.from_key(f.reason),
                        f.detail, f.forfeit) for f in rec.faults]
        forfeit = r.forfeit
        result = GameResult(
            Termination.from_key(r.termination), r.winner, tuple(r.scores), tuple(r.places),
            r.hands_played if r.hands_played is not None else len(rec.hands),
            None if forfeit is None else Fault(
                forfeit.seat if forfeit.seat is not None else 0,
                FaultReason.from_key(forfeit.reason), forfeit.detail, forfeit.forfeit))
        tc = TimeControl(**(rec.time_control or {}))
    except (ValueError, TypeError, KeyError, ConfigError, RulesetError) as e:
        raise Refusal("FAILED_PRECONDITION", f"the record of match {rec.match_id!r} "
                      f"({rec.source}) cannot be read: {e}") from None
    info = mpb.MatchInfo(
        match_id=rec.match_id, status=mpb.MATCH_STATUS_FINISHED,
        ruleset=ruleset_to_pb(ruleset, rec.preset), seed=rec.seed or 0,
        seats=[mpb.SeatInfo(seat=s.seat, name=s.name, version=s.version, connected=False)
               for s in rec.seats],
        time_control=time_control_to_pb(tc), scores=list(r.scores),
        hands_played=result.hands_played, record_path=rec.source,
        faults=[fault_to_pb(f) for f in faults])
    info.result.CopyFrom(result_to_pb(result))
    return info


def _status(e: Exception) -> tuple[grpc.StatusCode, str]:
    """The one place errors become gRPC status codes."""
    if isinstance(e, Refusal):
        return _CODES[e.code], str(e)
    if isinstance(e, (ConfigError, RulesetError)):
        return grpc.StatusCode.INVALID_ARGUMENT, str(e)
    return grpc.StatusCode.INTERNAL, f"internal error: {e}"


class _WriteWatchdog:
    """Cancels the current task when one write takes longer than ``limit_s`` seconds, as
    ``asyncio.timeout`` around each write would, but with one timer per stream instead of
    one per message: the caller sets :attr:`started` around each write; the timer rings
    every ``limit_s`` at most and, unless the write in progress has run that long, is
    armed again for ``limit_s`` after that write began (so a write is cut exactly
    ``limit_s`` after it began)."""

    __slots__ = ("limit_s", "started", "_task", "_loop", "_timer", "_expired")

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self.started = 0.0
        """When the write in progress began (the event loop's ``time()``, seconds); 0.0
        while none is."""
        self._expired = False
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(limit_s, self._ring)

    def _ring(self) -> None:
        now = self._loop.time()
        started = self.started
        if started and now - started >= self.limit_s:
            self._timer = None
            self._expired = True
            if self._task is not None:
                self._task.cancel()
            return
        self._timer = self._loop.call_at((started or now) + self.limit_s, self._ring)

    def expired(self) -> bool:
        """Whether the watchdog cancelled the task (a write ran out; the cancel is taken
        back, so the task goes on); False for any other cancel."""
        if self._expired and self._task is not None:
            self._task.uncancel()
        return self._expired

    def stop(self) -> None:
        """Disarm (the stream is over)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Take a finished read's outcome, so that asyncio logs no exception never retrieved
    (the stream's end, which the handler has already dealt with)."""
    if not task.cancelled():
        task.exception()


class OpenStreams:
    """The handlers of the streaming calls open now, so that every stream is ended before
    the server stops (:meth:`end`). A handler still running when grpc.aio's server stops
    makes gRPC log "Aborting method ... due to server stop" when it returns or writes: a
    warning, from gRPC's internals, that an organiser who pressed Ctrl-C would read."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()
        self.closing = False
        """Set by :meth:`end`: a stream opened after it is refused at once."""

    @contextlib.contextmanager
    def held(self) -> Iterator[bool]:
        """Around a streaming handler: yields False when the server is stopping (the
        handler refuses the call), else True while the handler is counted as open."""
        task = asyncio.current_task()
        if self.closing or task is None:
            yield False
            return
        self.tasks.add(task)
        try:
            yield True
        finally:
            self.tasks.discard(task)

    async def end(self, wait_s: float = 2.0) -> None:
        """Refuse new streams and end the open ones: each handler whose match is over
        (its link closed) returns by itself; one that has not within ``wait_s`` seconds (a
        bot that never joined, a write the bot never took) is cancelled, which gRPC logs
        at debug level only."""
        self.closing = True
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=wait_s)
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(set(self.tasks), timeout=wait_s)


class BotServicer:
    """``moon.v1.BotService``: one stream per seat."""

    def __init__(self, referee: Referee, streams: OpenStreams | None = None) -> None:
        self.referee = referee
        self.reads: set[asyncio.Future[Any]] = set()
        """Reads of streams whose handler has returned, until they end (with their call)."""
        self.streams = streams or OpenStreams()

    def _let_end(self, task: asyncio.Future[Any]) -> None:
        """Keep ``task`` (a read of a stream) until it ends by itself, never cancelled: a
        read cancelled while it waits for gRPC is the one way grpc.aio's server loses
        memory per stream (the C batch of the pending read, about 80 bytes, is never
        freed: 3 streams a game, 0.25 MB per 1,000 games in a long-running host). Once the
        handler returns, its call ends and gRPC fails the pending read, which ends the task
        (at once: it never waits on the bot)."""
        if task.done():
            _retrieve(task)
            return
        self.reads.add(task)
        task.add_done_callback(self._read_ended)

    def _read_ended(self, task: asyncio.Future[Any]) -> None:
        self.reads.discard(task)
        _retrieve(task)

    async def play(self, requests: AsyncIterator[bytes],
                   context: grpc.aio.ServicerContext[bytes, bpb.PlayResponse | bytes]) -> None:
        """Join, then pump the seat's outbox to the wire while reading replies. No read
        is ever cancelled (:meth:`_let_end`)."""
        with self.streams.held() as taken:
            if taken:
                await self._play(requests, context)
            else:  # the server is about to stop: no new stream is taken
                await context.abort(grpc.StatusCode.UNAVAILABLE,
                                    "the referee is shutting down")

    async def _play(self, requests: AsyncIterator[bytes],
                    context: grpc.aio.ServicerContext[bytes, bpb.PlayResponse | bytes]) -> None:
        it = requests.__aiter__()
        join: asyncio.Future[bytes] = asyncio.ensure_future(it.__anext__())
        try:
            await asyncio.wait((join,), timeout=JOIN_TIMEOUT_S)  # never cancels the read
        except asyncio.CancelledError:
            self._let_end(join)
            return
        if not join.done():
            self._let_end(join)
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"no join within {JOIN_TIMEOUT_S:.0f} s")
            return
        try:
            first = join.result()
        except (StopAsyncIteration, asyncio.CancelledError):
            return
        try:
            if len(first) > MAX_MESSAGE_BYTES:
                raise Refusal("INVALID_ARGUMENT", "the join message is too large")
            try:
                req = bpb.PlayRequest.FromString(first)
            except Exception:  # noqa: BLE001
                raise Refusal("INVALID_ARGUMENT",
                              "the first message is not a moon.v1.PlayRequest") from None
            if req.WhichOneof("kind") != "join":
                raise Refusal("INVALID_ARGUMENT", "the first message on a stream must be a join")
            match, seat, link = await self.referee.join(req.join)
        except Refusal as e:
            code, why = _status(e)
            await context.abort(code, why)
            return

        async def read() -> None:
            try:
                async for raw in it:
                    match.receive(seat, link, raw)
                    # a reply may have sent the next turn (Match.receive): its stream's
                    # writer, woken by it, writes before this asks gRPC for the next read
                    await asyncio.sleep(0)
            except Exception:  # noqa: BLE001 - the stream broke; treated as a drop
                pass
            match.detach(seat, link)

        reader = asyncio.create_task(read())
        # a bot that never reads must not pin this handler (and its reader) forever
        watchdog = _WriteWatchdog(WRITE_TIMEOUT_S)
        now = asyncio.get_running_loop().time
        try:
            while (msg := await link.outbox.get()) is not None:
                watchdog.started = now()
                await context.write(msg)
                watchdog.started = 0.0
                if isinstance(msg, TurnBytes):  # the bot's time runs from here, not the
                    match.delivered(seat, link, msg.request_id)  # queueing
                elif not isinstance(msg, bytes) and msg.HasField("turn"):
                    match.delivered(seat, link, msg.turn.request_id)
        except asyncio.CancelledError:
            if not watchdog.expired():
                raise
        finally:
            watchdog.stop()
            match.detach(seat, link)
            self._let_end(reader)  # not cancelled: it ends with the call (_let_end)
        if link.dropped:  # broken on purpose: the bot sees a lost connection, not the end
            await context.abort(grpc.StatusCode.UNAVAILABLE, link.dropped)


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    """``moon.v1.MatchService``: create, get, list, watch, cancel.

    With an ``admin_token`` every call must carry the metadata
    ``authorization: Bearer <admin_token>`` (UNAUTHENTICATED otherwise): bots that reach
    the same address cannot manage matches or read seeds.
    """

    def __init__(self, referee: Referee, admin_token: str | None = None,
                 streams: OpenStreams | None = None) -> None:
        self.referee = referee
        self.admin_token = admin_token
        self.streams = streams or OpenStreams()

    def _authorized(self, context: grpc.aio.ServicerContext[Any, Any]) -> bool:
        if not self.admin_token:
            return True
        md = dict(context.invocation_metadata() or ())
        return hmac.compare_digest(str(md.get("authorization", "")),
                                   f"Bearer {self.admin_token}")

    async def _guard(self, context: grpc.aio.ServicerContext[Any, Any],
                     fn: Callable[[], Awaitable[T]]) -> T:
        try:
            if not self._authorized(context):
                raise Refusal("UNAUTHENTICATED", "MatchService needs the metadata "
                              "'authorization: Bearer <admin token>' (moon serve --admin-token)")
            return await fn()
        except (Refusal, ConfigError, RulesetError) as e:
            code, msg = _status(e)
            await context.abort(code, msg)
            raise  # unreachable: abort raises

    async def CreateMatch(self, request: mpb.CreateMatchRequest,  # noqa: N802
                          context: grpc.aio.ServicerContext[Any, Any]) -> mpb.CreateMatchResponse:
        async def go() -> mpb.CreateMatchResponse:
            rd = self.referee.record_dir
            if request.match_id and rd is not None and (rd / f"{request.match_id}.json").exists():
                # a restarted referee must not let a client replace an old game's record
                raise Refusal("ALREADY_EXISTS", f"match id {request.match_id!r} was recorded "
                              "already")
            ruleset = ruleset_from_pb(request.ruleset)
            tc = time_control_from_pb(request.time_control, self.referee.default_tc)
            m = self.referee.create_match(
                ruleset, [(s.name or f"seat{i}", s.version) for i, s in enumerate(request.seats)],
                preset=request.ruleset.preset or "moon3",
                seed=request.seed if request.HasField("seed") else None, tc=tc,
                match_id=request.match_id)
            return mpb.CreateMatchResponse(
                match=match_info(m),
                tokens=[mpb.SeatToken(seat=i, token=t) for i, t in enumerate(m.tokens)])
        return await self._guard(context, go)

    async def GetMatch(self, request: mpb.GetMatchRequest,  # noqa: N802
                       context: grpc.aio.ServicerContext[Any, Any]) -> mpb.GetMatchResponse:
        async def go() -> mpb.GetMatchResponse:
            try:
                return mpb.GetMatchResponse(match=match_info(self.referee.get(request.match_id)))
            except Refusal:  # forgotten (finished long ago)? Its record says what it was
                rd = self.referee.record_dir
                path = rd / f"{request.match_id}.json" if rd is not None else None
                if path is None or not _ID.match(request.match_id) or not path.is_file():
                    raise
                return mpb.GetMatchResponse(match=record_info(read_record(path)))
        return await self._guard(context, go)

    async def ListMatches(self, request: mpb.ListMatchesRequest,  # noqa: N802
                          context: grpc.aio.ServicerContext[Any, Any]) -> mpb.ListMatchesResponse:
        """Running matches and the most recent finished ones (``Referee.keep_finished``);
        older ones are in the record folder."""
        async def go() -> mpb.ListMatchesResponse:
            return mpb.ListMatchesResponse(
                matches=[match_info(m) for m in self.referee.matches.values()])
        return await self._guard(context, go)

    async def WatchMatch(self, request: mpb.WatchMatchRequest,  # noqa: N802
                         context: grpc.aio.ServicerContext[Any, Any]
                         ) -> AsyncIterator[mpb.WatchMatchResponse]:
        async def find() -> Match:
            return self.referee.get(request.match_id)
        with self.streams.held() as taken:
            if not taken:
                await context.abort(grpc.StatusCode.UNAVAILABLE,
                                    "the referee is shutting down")
            m = await self._guard(context, find)
            async for ev in m.watch():
                yield mpb.WatchMatchResponse(event=ev)

    async def CancelMatch(self, request: mpb.CancelMatchRequest,  # noqa: N802
                          context: grpc.aio.ServicerContext[Any, Any]) -> mpb.CancelMatchResponse:
        async def go() -> mpb.CancelMatchResponse:
            m = self.referee.get(request.match_id)
            m.stop(Termination.CANCELLED, request.reason or "cancelled by an operator")
            await m.done.wait()
            return mpb.CancelMatchResponse(match=match_info(m))
        return await self._guard(context, go)


def tcp_listen_problem(address: str) -> str | None:
    """Why ``address`` (``host:port``) cannot be listened on, as one line saying what to do,
    or None when it can (or port 0, any free port). Found by binding a socket there first,
    as gRPC would (``SO_REUSEADDR``), so that gRPC's own log line never reaches a user:
    the port in use (another referee, or any program), not an address of this machine, a
    privileged port, an unknown host name. Raises nothing."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        return f"cannot listen on {address!r}: write HOST:PORT, e.g. 127.0.0.1:50051"
    port = int(port_text)
    if port == 0:
        return None
    host = host.strip("[]") or "0.0.0.0"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return (f"cannot listen on {address}: {host!r} is not a host name this machine "
                "knows; use 127.0.0.1 (this machine only) or one of its own addresses")
    for family, kind, proto, _, sockaddr in infos[:1]:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(sockaddr)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return (f"cannot listen on {address}: port {port} is already in use "
                            "(another referee, or another program): stop that one, or "
                            f"choose another port (e.g. --address {host}:{port + 1}; "
                            "port 0 picks a free one)")
                if e.errno == errno.EADDRNOTAVAIL:
                    return (f"cannot listen on {address}: {host} is not an address of this "
                            "machine; use 127.0.0.1 (this machine only) or one of its own")
                if e.errno == errno.EACCES:
                    return (f"cannot listen on {address}: ports below 1024 need "
                            "privileges; choose a port from 1024 up")
                return f"cannot listen on {address}: {e.strerror}"
    return None


class _RefusedLog:
    """One log line per refused call, at most one per ``every_s`` seconds: a flood of
    unauthenticated calls cannot grow the log faster than that."""

    def __init__(self, every_s: float = REFUSED_LOG_EVERY_S) -> None:
        self.every_s = every_s
        self.last = -float("inf")
        self.left_out = 0

    def refused(self, method: str) -> None:
        now = time.monotonic()
        if now - self.last < self.every_s:
            self.left_out += 1
            return
        more = (f" ({self.left_out} more refused in the last {now - self.last:.0f} s)"
                if self.left_out else "")
        self.last, self.left_out = now, 0
        log.warning("refused a %s call without the admin token%s", method, more)


class MatchServiceGuard(grpc.aio.ServerInterceptor):
    """The gate of MatchService (calls whose method starts with :data:`MATCH_SERVICE`):
    with an ``admin_token``, a call without ``authorization: Bearer <admin_token>`` is
    refused (UNAUTHENTICATED) before its request is parsed, with one rate-limited log line
    (:class:`_RefusedLog`); a request that does not parse is INVALID_ARGUMENT (no
    traceback). Other services pass through untouched."""

    def __init__(self, admin_token: str | None) -> None:
        self.admin_token = admin_token
        self.refusals = _RefusedLog()

    def _authorized(self, details: grpc.HandlerCallDetails) -> bool:
        if not self.admin_token:
            return True
        want = f"Bearer {self.admin_token}".encode()
        for key, value in details.invocation_metadata or ():
            if key == "authorization":
                got = value.encode() if isinstance(value, str) else bytes(value)
                return hmac.compare_digest(got, want)
        return False

    async def intercept_service(
            self, continuation: Callable[[grpc.HandlerCallDetails],
                                         Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
            handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method = handler_call_details.method
        if not method.startswith(MATCH_SERVICE):
            return await continuation(handler_call_details)
        if not self._authorized(handler_call_details):
            self.refusals.refused(method)
            return _REFUSE
        return _parsed_in_handler(await continuation(handler_call_details))


async def _refuse(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                        "MatchService needs the metadata 'authorization: Bearer <admin token>' "
                        "(the token `moon serve` was started with: --admin-token or "
                        "MOON_ADMIN_TOKEN)")


# raw bytes in: nothing is parsed
_REFUSE: grpc.RpcMethodHandler[bytes, Any] = grpc.unary_unary_rpc_method_handler(_refuse)


async def _parse(deserializer: Callable[[bytes], Any] | None, raw: bytes,
                 context: grpc.aio.ServicerContext[Any, Any]) -> Any:
    if deserializer is None:
        return raw
    try:
        return deserializer(raw)
    except Exception:  # noqa: BLE001 - protobuf raises DecodeError or others
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                            "the request is not the message this call takes")


def _parsed_in_handler(handler: grpc.RpcMethodHandler[Any, Any] | None
                       ) -> grpc.RpcMethodHandler[Any, Any] | None:
    """``handler`` with its request parsed inside the call (a parse failure is the call's
    INVALID_ARGUMENT) instead of by gRPC (which logs a traceback)."""
    if handler is None or handler.request_streaming:
        return handler
    deserializer = handler.request_deserializer
    if handler.unary_unary is not None:
        # grpc.aio's behaviours are coroutines (async generators below); the stubs type
        # the handler's fields as the synchronous server's
        inner = cast(Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]],
                     handler.unary_unary)

        async def unary(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            return await inner(await _parse(deserializer, raw, context), context)
        return grpc.unary_unary_rpc_method_handler(
            unary, response_serializer=handler.response_serializer)
    if handler.unary_stream is not None:
        inner_stream = cast(Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]],
                            handler.unary_stream)

        async def stream(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            async for item in inner_stream(await _parse(deserializer, raw, context), context):
                yield item
        return grpc.unary_stream_rpc_method_handler(
            stream, response_serializer=handler.response_serializer)
    return handler


def _encoded(msg: bpb.PlayResponse | bytes) -> bytes:
    """The wire bytes of an outbox item: a message, or bytes the referee already encoded
    (each turn; each event, once for every seat)."""
    if isinstance(msg, bytes):
        return msg if type(msg) is bytes else bytes(msg)
    return msg.SerializeToString()


def create_server(referee: Referee, address: str | None = "127.0.0.1:0",
                  unix_socket: str | None = None, match_service: bool = False,
                  admin_token: str | None = None, streams: OpenStreams | None = None
                  ) -> tuple[grpc.aio.Server, int]:
    """Build the referee server (not started).

    Args:
        address: ``host:port`` for TCP (port 0 picks a free one), or None for no TCP.
        unix_socket: a filesystem path for a Unix socket listener, or None.
        match_service: serve MatchService too. Never on an address untrusted bots reach
            without ``admin_token``: it lists seeds and cancels matches.
        admin_token: if set, MatchService calls need ``authorization: Bearer <token>``.
        streams: where the streaming handlers are counted, to end them before the server
            stops (:meth:`OpenStreams.end`).

    Returns:
        ``(server, port)``: the TCP port bound (0 when there is no TCP listener).

    Raises:
        ConfigError: the address or socket cannot be listened on (in use, not this
            machine's, a folder that does not exist).
    """
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.so_reuseport", 0),
        ("grpc.max_concurrent_streams", 64),
    ], interceptors=[MatchServiceGuard(admin_token)] if match_service else None)
    bots = BotServicer(referee, streams)
    handler = grpc.method_handlers_generic_handler("moon.v1.BotService", {
        "Play": grpc.stream_stream_rpc_method_handler(
            bots.play, request_deserializer=None,
            response_serializer=_encoded),
    })
    server.add_generic_rpc_handlers((handler,))
    if match_service:  # never on a listener that untrusted bots reach
        match_pb2_grpc.add_MatchServiceServicer_to_server(
            MatchServicer(referee, admin_token, streams), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (
        bpb.DESCRIPTOR.services_by_name["BotService"].full_name,
        *([mpb.DESCRIPTOR.services_by_name["MatchService"].full_name] if match_service else []),
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)
    port = 0
    problem = tcp_listen_problem(address) if address else None
    if problem:
        raise ConfigError(problem)
    try:
        if address:
            port = server.add_insecure_port(address)
            if port == 0:
                raise RuntimeError("the port cannot be bound")
        if unix_socket:
            server.add_insecure_port(f"unix:{unix_socket}")
    except RuntimeError:  # grpc's own, or the one above (grpc logs the details)
        where = address if port == 0 and address else f"unix:{unix_socket}"
        raise ConfigError(f"cannot listen on {where}: it is in use, or not an address of "
                          "this machine; give another") from None
    server._moon_health = health_servicer  # type: ignore[attr-defined]
    return server, port


async def set_serving(server: grpc.aio.Server) -> None:
    """Mark every service SERVING in the health service (call after start)."""
    h = server._moon_health  # type: ignore[attr-defined]
    for name in ("", "moon.v1.BotService", "moon.v1.MatchService"):
        await h.set(name, health_pb2.HealthCheckResponse.SERVING)
