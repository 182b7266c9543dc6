"""A person's seat: a client of the referee's protocol (``moon.v1.BotService.Play``, as
every bot speaks it) that asks a :class:`Person` for each decision, and the seat's
stand-in for a bot process (:class:`HumanSeat`), through which the game learns that the
person left.

The person's view is what the protocol gives the seat and nothing else: the Welcome, each
turn's observation and clock, the public events, its own refusals. Hidden information holds
by construction.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Protocol

import grpc
from moon_sdk.bot import reply_bytes
from moon_sdk.convert import PROTOCOL_VERSION, ObservationReader
from moon_sdk.rules import Action, Observation
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from ..executor.game import ManualSeat
from ..referee.referee import LEFT_THE_TABLE
from . import HUMAN


class LeftTable(Exception):
    """The person left the game; ``str()`` says how (``end of input``, ``Ctrl-C``, ``the
    page was closed``)."""


class TimedOut(Exception):
    """The seat's time for the decision ran out while the person was still deciding: the
    referee has ruled (a timeout), and the game's end follows on the stream."""


class Person(Protocol):
    """Who plays a seat by hand: a terminal or a page. :meth:`choose` blocks until the
    person decides; every method runs on the thread of :func:`sit`."""

    def welcome(self, welcome: bpb.Welcome) -> None:
        """The seat is joined: its number, the ruleset, the names of the seats."""

    def event(self, event: pb.Event) -> None:
        """A public event (a bid, a play, a trick won, a hand's or the game's end)."""

    def choose(self, obs: Observation, decision_ms: int, bank_ms: int) -> Action:
        """The seat's action (one of ``obs.legal_actions``): ``decision_ms`` for it
        before the ``bank_ms`` bank is touched.

        Raises:
            LeftTable: the person left.
            TimedOut: ``decision_ms + bank_ms`` passed with no decision.
        """
        ...

    def rejected(self, reason: str, retries_left: int) -> None:
        """The referee refused the last action (a new turn follows)."""


_PLAY = f"/{bpb.DESCRIPTOR.services_by_name['BotService'].full_name}/Play"


def sit(person: Person, address: str, token: str, connect_s: float = 10.0) -> pb.GameResult:
    """Play the seat whose join ``token`` this is at the referee at ``address`` to the end
    of the game, asking ``person`` for every decision.

    Returns:
        The game's result.

    Raises:
        LeftTable: the person left (the stream is closed first: the referee sees it go).
        grpc.RpcError: the referee refused the join or the stream broke.
        ConnectionError: the stream ended before the game did.
        grpc.FutureTimeoutError: no referee at ``address`` within ``connect_s`` seconds.
    """
    outbox: queue.Queue[bytes | None] = queue.Queue()
    outbox.put(bpb.PlayRequest(join=bpb.Join(
        token=token, protocol_version=PROTOCOL_VERSION, bot_name=HUMAN,
        bot_version="")).SerializeToString())

    def requests() -> Iterator[bytes]:
        while (m := outbox.get()) is not None:
            yield m

    reader = ObservationReader()
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=connect_s)
        method: grpc.StreamStreamMultiCallable[bytes, bpb.PlayResponse] = \
            channel.stream_stream(_PLAY, request_serializer=None,
                                  response_deserializer=bpb.PlayResponse.FromString)
        call = method(requests())
        try:
            for resp in call:
                kind = resp.WhichOneof("kind")
                if kind == "turn":
                    t = resp.turn
                    obs = reader.observation(t.observation, list(t.legal_actions))
                    try:
                        action = person.choose(obs, t.decision_ms, t.bank_ms)
                    except TimedOut:
                        continue  # the referee's ruling (a timeout) follows on the stream
                    outbox.put(reply_bytes(t.request_id, action))
                elif kind == "event":
                    person.event(resp.event)
                    if resp.event.WhichOneof("kind") == "game_ended":
                        return resp.event.game_ended
                elif kind == "welcome":
                    person.welcome(resp.welcome)
                elif kind == "rejected":
                    person.rejected(resp.rejected.reason, resp.rejected.retries_left)
        except (LeftTable, KeyboardInterrupt):
            call.cancel()  # the referee sees the stream go now, not at the channel's close
            raise
        finally:
            outbox.put(None)
    raise ConnectionError("the referee ended the stream before the game ended")


class HumanSeat(ManualSeat):
    """The stand-in for a bot process of a seat a person plays (for
    :func:`arena.executor.game.play_game`'s ``processes``): nothing to start or kill;
    :meth:`left` makes it look ended, with an exit detail that makes the seat's forfeit a
    disconnect by a person who left (:data:`arena.referee.referee.LEFT_THE_TABLE`).
    Thread-safe: the person's thread says it left, the game's loop polls."""

    def __init__(self) -> None:
        self._how = ""
        self._gone = threading.Event()

    def left(self, how: str) -> None:
        """The person left, ``how`` (one line)."""
        self._how = how
        self._gone.set()

    def poll(self) -> int | None:
        """1 once the person left, else None."""
        return 1 if self._gone.is_set() else None

    def exit_detail(self) -> str:
        """What the referee's fault says (:data:`LEFT_THE_TABLE` and how)."""
        return f"{LEFT_THE_TABLE}: {self._how}" if self._how else LEFT_THE_TABLE

    def log_tail(self) -> str:
        """A person's seat has no output."""
        return "(a person played this seat)" + (f"; they left: {self._how}"
                                                 if self._gone.is_set() else "")
