"""The gRPC referee server: thin servicers over :class:`arena.referee.Referee`.

``BotService.Play`` is registered with a raw-bytes request deserializer so that garbage
from a bot is the bot's recorded protocol error, not an opaque transport failure.
Errors map to status codes in one place (:func:`_status`). The standard health service
and server reflection are served too.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from moon_sdk.convert import ruleset_from_pb, ruleset_to_pb
from moon_sdk.rules import RulesetError
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import match_pb2 as mpb
from moon_sdk.v1 import match_pb2_grpc

from .convert import fault_to_pb, result_to_pb, time_control_from_pb, time_control_to_pb
from .errors import ConfigError
from .referee import MAX_MESSAGE_BYTES, Match, Referee, Refusal, Status
from .results import Termination

log = logging.getLogger("arena.server")

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
    "ALREADY_EXISTS", "DEADLINE_EXCEEDED")}

T = TypeVar("T")


def match_info(m: Match) -> mpb.MatchInfo:
    """A match as a ``MatchInfo`` message (its seed only once it is over)."""
    info = mpb.MatchInfo(
        match_id=m.match_id, status=m.status.value,  # type: ignore[arg-type]
        ruleset=ruleset_to_pb(m.ruleset, m.preset),
        seed=m.seed if m.status == Status.FINISHED else 0,
        seats=[mpb.SeatInfo(seat=s.index, name=s.name, version=s.version,
                            connected=s.link is not None) for s in m.seats],
        time_control=time_control_to_pb(m.tc), scores=list(m.state.scores),
        hands_played=len(m.state.hand_records), record_path=m.record_path,
        faults=[fault_to_pb(f) for f in m.faults])
    if m.result is not None:
        info.result.CopyFrom(result_to_pb(m.result))
    return info


def _status(e: Exception) -> tuple[grpc.StatusCode, str]:
    """The one place errors become gRPC status codes."""
    if isinstance(e, Refusal):
        return _CODES[e.code], str(e)
    if isinstance(e, (ConfigError, RulesetError)):
        return grpc.StatusCode.INVALID_ARGUMENT, str(e)
    return grpc.StatusCode.INTERNAL, f"internal error: {e}"


class BotServicer:
    """``moon.v1.BotService``: one stream per seat."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    async def play(self, requests: AsyncIterator[bytes],
                   context: grpc.aio.ServicerContext[bytes, bpb.PlayResponse]) -> None:
        """Join, then pump the seat's outbox to the wire while reading replies."""
        it = requests.__aiter__()
        try:
            first = await asyncio.wait_for(it.__anext__(), JOIN_TIMEOUT_S)
        except (StopAsyncIteration, asyncio.CancelledError):
            return
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"no join within {JOIN_TIMEOUT_S:.0f} s")
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
            match, seat, link = self.referee.join(req.join)
        except Refusal as e:
            code, msg = _status(e)
            await context.abort(code, msg)
            return

        async def read() -> None:
            try:
                async for raw in it:
                    match.receive(seat, link, raw)
            except Exception:  # noqa: BLE001 - the stream broke; treated as a drop
                pass
            match.detach(seat, link)

        reader = asyncio.create_task(read())
        try:
            while (msg := await link.outbox.get()) is not None:
                # a bot that never reads must not pin this handler (and its reader) forever
                async with asyncio.timeout(WRITE_TIMEOUT_S):  # a timer, not a task per write
                    await context.write(msg)
        except TimeoutError:
            pass
        finally:
            reader.cancel()
            match.detach(seat, link)
        if link.dropped:  # broken on purpose: the bot sees a lost connection, not the end
            await context.abort(grpc.StatusCode.UNAVAILABLE, link.dropped)


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    """``moon.v1.MatchService``: create, get, list, watch, cancel.

    With an ``admin_token`` every call must carry the metadata
    ``authorization: Bearer <admin_token>`` (UNAUTHENTICATED otherwise): bots that reach
    the same address cannot manage matches or read seeds.
    """

    def __init__(self, referee: Referee, admin_token: str | None = None) -> None:
        self.referee = referee
        self.admin_token = admin_token

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
            return mpb.GetMatchResponse(match=match_info(self.referee.get(request.match_id)))
        return await self._guard(context, go)

    async def ListMatches(self, request: mpb.ListMatchesRequest,  # noqa: N802
                          context: grpc.aio.ServicerContext[Any, Any]) -> mpb.ListMatchesResponse:
        async def go() -> mpb.ListMatchesResponse:
            return mpb.ListMatchesResponse(
                matches=[match_info(m) for m in self.referee.matches.values()])
        return await self._guard(context, go)

    async def WatchMatch(self, request: mpb.WatchMatchRequest,  # noqa: N802
                         context: grpc.aio.ServicerContext[Any, Any]
                         ) -> AsyncIterator[mpb.WatchMatchResponse]:
        async def find() -> Match:
            return self.referee.get(request.match_id)
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


def create_server(referee: Referee, address: str | None = "127.0.0.1:0",
                  unix_socket: str | None = None, match_service: bool = False,
                  admin_token: str | None = None) -> tuple[grpc.aio.Server, int]:
    """Build the referee server (not started).

    Args:
        address: ``host:port`` for TCP (port 0 picks a free one), or None for no TCP.
        unix_socket: a filesystem path for a Unix socket listener, or None.
        match_service: serve MatchService too. Never on an address untrusted bots reach
            without ``admin_token``: it lists seeds and cancels matches.
        admin_token: if set, MatchService calls need ``authorization: Bearer <token>``.

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
    ])
    bots = BotServicer(referee)
    handler = grpc.method_handlers_generic_handler("moon.v1.BotService", {
        "Play": grpc.stream_stream_rpc_method_handler(
            bots.play, request_deserializer=None,
            response_serializer=bpb.PlayResponse.SerializeToString),
    })
    server.add_generic_rpc_handlers((handler,))
    if match_service:  # never on a listener that untrusted bots reach
        match_pb2_grpc.add_MatchServiceServicer_to_server(MatchServicer(referee, admin_token),
                                                          server)
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
