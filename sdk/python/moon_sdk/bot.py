"""Write a bot: subclass :class:`Bot`, answer :meth:`Bot.act`, call :func:`run`.

    import random
    from moon_sdk import Bot, run

    class RandomBot(Bot):
        name = "random"

        def act(self, obs):
            return random.choice(obs.legal_actions)

    run(RandomBot())

:func:`run` reads ``MOON_ADDRESS`` and ``MOON_TOKEN`` from the environment, joins the
seat, answers every turn with :meth:`Bot.act`, reconnects after a dropped stream, and
exits with the protocol's exit codes (docs/protocol.md): 0 game over, 1 error,
2 bad configuration, 3 refused by the referee.
"""

from __future__ import annotations

import functools
import logging
import operator
import os
import queue
import sys
import time
from collections.abc import Iterator

import grpc

from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from .convert import PROTOCOL_VERSION, ObservationReader, action_to_pb
from .rules import PASS, Action, ActionKind, Observation, action_kind, action_name
from .rules import play as play_tile
from .rules.actions import NUM_ACTIONS

log = logging.getLogger("moon_sdk")

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
EXIT_REFUSED = 3


class Bot:
    """Base class of a bot. Override :meth:`act`; the hooks are optional."""

    name = "bot"
    """Sent in the join, shown in records."""
    version = "0"
    """Sent in the join, shown in records."""
    wants_events: bool | None = None
    """Whether the referee should send the public events (:meth:`on_event`). ``None``
    (default): only if this class overrides :meth:`on_event`; otherwise the bot joins
    ``quiet`` and gets half the messages (every turn's observation holds everything
    public anyway). :meth:`on_game_over` is called either way."""

    def quiet(self) -> bool:
        """Whether to join ``quiet`` (no public events): see :attr:`wants_events`."""
        if self.wants_events is None:
            return type(self).on_event is Bot.on_event
        return not self.wants_events

    def act(self, obs: Observation) -> Action:
        """Choose an action for this turn.

        Args:
            obs: everything this seat may know (:class:`moon_sdk.rules.Observation`);
                ``obs.legal_actions`` lists the legal actions (engine ints, sorted).

        Returns:
            One of ``obs.legal_actions``: an ``int``, or any integral value
            (``numpy.int64``...; whatever :func:`operator.index` accepts, ``bool`` aside).
            A legal-looking action that is not legal now is sent as it is and the referee
            rejects it; a value that is no action at all (``1062``, ``None``, ``"play
            6-4"``) is logged and replaced by an action that is surely illegal, so either
            way the referee answers with a ``Rejected`` (:meth:`on_rejected`) and a fresh
            turn while the game's illegal-action retries last (docs/protocol.md, "Illegal
            actions and protocol errors").
        """
        raise NotImplementedError

    def on_welcome(self, welcome: bpb.Welcome) -> None:
        """Called once the seat is joined (``welcome.seat``, ``welcome.ruleset``...)."""

    def on_event(self, event: pb.Event) -> None:
        """Called for every public event (bids, trumps, plays, trick and hand results)."""

    def on_rejected(self, rejected: bpb.Rejected) -> None:
        """Called when an action was illegal (``rejected.reason``); a new turn follows."""

    def on_game_over(self, result: pb.GameResult) -> None:
        """Called when the game ends."""


class _Refused(Exception):
    pass


def checked_action(value: object, obs: Observation) -> tuple[Action, str]:
    """What :meth:`Bot.act` returned, as the action to send, and why it is no action ('' if
    it is one).

    Any integral value (``int``, ``numpy.int64``: whatever :func:`operator.index` takes) in
    0..71 is an action and is sent as it is, legal or not: the referee judges it. A value
    that is no action at all (``1062``, ``-1``, ``True``, ``None``, ``"play 6-4"``, ``58.0``)
    is replaced by an action that is surely illegal on this turn (an action of another kind
    than ``obs.legal_actions``: a pass in the play, else a play), so that the referee
    rejects it and the illegal-action retries apply, as they would to a legal-looking
    mistake, instead of the SDK failing with a traceback.

    Args:
        value: what ``act`` returned.
        obs: the turn's observation (its ``legal_actions`` are not empty).

    Returns:
        ``(action, why)``: the engine action (0..71) to send, and ``''`` or a one-line reason
        for the log.
    """
    if value.__class__ is not bool:
        try:
            action = operator.index(value)  # type: ignore[arg-type]  # TypeError: no integer
        except TypeError:
            pass
        else:
            if 0 <= action < NUM_ACTIONS:
                return action, ""
    legal = obs.legal_actions
    stand_in = PASS if legal and action_kind(legal[0]) is ActionKind.PLAY else play_tile(0)
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    why = (f"act() returned {shown} ({type(value).__name__}), which is no action: it must "
           f"return one of obs.legal_actions, ints 0..{NUM_ACTIONS - 1} "
           "(moon_sdk.rules.parse_action turns text like 'play 6-4' into one); sending "
           f"{action_name(stand_in)!r} instead, an illegal action, so that the referee "
           "rejects it and asks again while the illegal-action retries last")
    return stand_in, why


_thinking = [0, 0.0]
"""Decisions made and seconds spent in Bot.act, logged at game end (benchmarks read it)."""


def play(bot: Bot, address: str | None = None, token: str | None = None,
         reconnect_s: float = 4.0, connect_s: float = 10.0) -> int:
    """Play one game as ``bot``; returns the process exit code (see the module doc).

    Args:
        address: ``host:port`` or ``unix:///path``; default ``$MOON_ADDRESS``.
        token: the seat's join token; default ``$MOON_TOKEN``.
        reconnect_s: how long to keep trying after a dropped stream, in seconds.
        connect_s: how long to wait for the referee at start, in seconds.
    """
    address = address or os.environ.get("MOON_ADDRESS")
    token = token or os.environ.get("MOON_TOKEN")
    if not address or not token:
        log.error("MOON_ADDRESS and MOON_TOKEN must be set (the referee's address and this "
                  "seat's join token)")
        return EXIT_CONFIG
    over = False
    dropped_at: float | None = None
    while True:
        try:
            over = _stream(bot, address, token, connect_s if dropped_at is None else reconnect_s)
            if over:
                return EXIT_OK
            log.warning("the referee closed the stream before the game ended; reconnecting")
        except _Refused as e:
            log.error("the referee refused this bot: %s", e)
            return EXIT_REFUSED
        except grpc.RpcError as e:
            log.warning("stream dropped (%s: %s); reconnecting", e.code().name, e.details())
        except grpc.FutureTimeoutError:
            log.error("cannot reach the referee at %s", address)
            if dropped_at is None:
                return EXIT_ERROR
        now = time.monotonic()
        dropped_at = dropped_at or now
        if now - dropped_at > reconnect_s:
            log.error("gave up reconnecting after %.1f s", reconnect_s)
            return EXIT_ERROR
        time.sleep(0.2)


_PLAY_METHOD = f"/{bpb.DESCRIPTOR.services_by_name['BotService'].full_name}/Play"
"""The bidirectional method a bot plays on (``moon.v1.BotService.Play``)."""
_REPLY_TAG = bytes([bpb.PlayRequest.DESCRIPTOR.fields_by_name["action"].number << 3 | 2])
_REQUEST_ID_TAG = bytes([bpb.ActionReply.DESCRIPTOR.fields_by_name["request_id"].number << 3])


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@functools.lru_cache(maxsize=NUM_ACTIONS)
def _action_field(action: Action) -> bytes:
    # ActionReply.action (the field after request_id) for each of the 72 actions, once
    return bytes(bpb.ActionReply(action=action_to_pb(action)).SerializeToString())


def reply_bytes(request_id: int, action: Action) -> bytes:
    """``PlayRequest{action: ActionReply{request_id, action}}`` encoded: exactly what
    serializing that message gives, from the action's field encoded once (the bot loop
    sends these bytes; no message is built per turn).

    Args:
        request_id: the turn's ``request_id`` (>= 0).
        action: an engine action, 0..71.
    """
    body = (_REQUEST_ID_TAG + _varint(request_id) if request_id else b"") \
        + _action_field(action)
    return _REPLY_TAG + _varint(len(body)) + body


def _stream(bot: Bot, address: str, token: str, connect_s: float) -> bool:
    """One stream; True if the game ended on it."""
    outbox: queue.Queue[bytes | None] = queue.Queue()  # encoded PlayRequests
    outbox.put(bpb.PlayRequest(join=bpb.Join(
        token=token, protocol_version=PROTOCOL_VERSION, bot_name=bot.name,
        bot_version=bot.version, quiet=bot.quiet())).SerializeToString())

    def requests() -> Iterator[bytes]:
        while (m := outbox.get()) is not None:
            yield m

    # converts each finished hand once, not on every turn, and a field only once act() reads it
    reader = ObservationReader()
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=connect_s)
        play_method: grpc.StreamStreamMultiCallable[bytes, bpb.PlayResponse] = \
            channel.stream_stream(_PLAY_METHOD, request_serializer=None,
                                  response_deserializer=bpb.PlayResponse.FromString)
        over = False
        try:
            for resp in play_method(requests()):
                kind = resp.WhichOneof("kind")
                if kind == "turn":
                    t = resp.turn
                    obs = reader.deferred(t.observation, t.legal_actions)
                    t0 = time.perf_counter()
                    chosen = bot.act(obs)
                    _thinking[0] += 1
                    _thinking[1] += time.perf_counter() - t0
                    action, why = checked_action(chosen, obs)
                    if why:
                        log.error("%s.%s", type(bot).__name__, why)
                    outbox.put(reply_bytes(t.request_id, action))
                elif kind == "event":
                    bot.on_event(resp.event)
                    if resp.event.WhichOneof("kind") == "game_ended":
                        over = True
                        bot.on_game_over(resp.event.game_ended)
                        log.info("game over: %d decisions, %.1f ms thinking",
                                 _thinking[0], _thinking[1] * 1000)
                elif kind == "welcome":
                    log.info("joined match %s as seat %d%s", resp.welcome.match_id,
                             resp.welcome.seat, " (resumed)" if resp.welcome.resumed else "")
                    bot.on_welcome(resp.welcome)
                elif kind == "rejected":
                    log.warning("action rejected: %s", resp.rejected.reason)
                    bot.on_rejected(resp.rejected)
        except grpc.RpcError as e:
            if e.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.FAILED_PRECONDITION,
                            grpc.StatusCode.INVALID_ARGUMENT):
                raise _Refused(f"{e.code().name}: {e.details()}") from None
            if over:
                return True
            raise
        finally:
            outbox.put(None)
        return over


def run(bot: Bot) -> None:
    """Play one game as ``bot`` with the address and token from the environment, then
    exit the process with the protocol's exit code."""
    logging.basicConfig(level=os.environ.get("MOON_LOG_LEVEL", "INFO"),
                        format=f"%(asctime)s {bot.name} %(levelname)s %(message)s",
                        stream=sys.stderr)
    sys.exit(play(bot))
