"""The referee: matches, seats, turns, clocks and faults. Transport-free: the gRPC
servicers in :mod:`arena.referee.server` only translate messages and call in here.

A :class:`Match` runs one game in an asyncio task. Everything that happens to it goes
into one inbox, as a typed event the task consumes, each kind with its own handler: a
stream joined a seat (:class:`Joined`), a seat's message arrived (:class:`Replied`) or
could not be read (:class:`Garbled`), a stream ended (:class:`StreamGone`), a bot process
exited (:class:`ProcessExited`). So the game logic is sequential, and a fault of one bot
can only touch its own match. One shortcut: a reply that arrives while the task waits for
it, with nothing before it in the inbox, is handled by the same handler at once in the
stream's reader task (:meth:`Match.receive`), which spares the task a wake-up per
decision; the order of events is the same either way. Each seat is one
:class:`Seat` (its stream, :class:`~arena.core.clock.Clock`, retries, who joined, how its
process ended); results and faults are the arena's own types (:mod:`arena.core.results`).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime as dt
import enum
import logging
import os
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from moon_sdk.convert import (
    PROTOCOL_VERSION,
    action_from_pb,
    hand_summary_to_pb,
    ruleset_to_pb,
    tile_to_pb,
    trick_to_pb,
    trump_to_pb,
)
from moon_sdk.convert import ProtocolError as SdkProtocolError
from moon_sdk.records import game_record as record_document
from moon_sdk.rules import (
    Action,
    ActionKind,
    GameState,
    HandRecord,
    HandSummary,
    IllegalActionError,
    Ruleset,
    Trick,
    action_kind,
    bid_value,
)
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb
from moon_sdk.v1 import match_pb2 as mpb

from ..core.clock import Clock
from ..core.results import Fault, FaultReason, GameResult, Termination
from ..core.timecontrol import TimeControl
from ..errors import ConfigError, ProtocolError
from ..protocol.convert import fault_to_pb, result_to_pb, time_control_to_pb
from ..protocol.turns import EncodedTurn, TurnBytes, TurnEncoder, legal_actions_field
from ..records.record import fault_dict, result_dict, write_json_atomic

log = logging.getLogger("arena.referee.referee")

EXIT_REFUSED = 3
"""A bot's exit code for "refused by the referee" (docs/protocol.md)."""
MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message a bot may send; a larger one is a protocol error."""
BEFORE_JOINING = "before joining"
"""How a fault's detail ends (or its ``": "`` follows) when the bot's process ended
before its first join (:meth:`Match._exit_forfeit`)."""
DURING_THE_GAME = "during the game"
"""When a bot's process ended after it joined, in its crash's detail (a planted situation
may say more: :mod:`arena.referee.probes`)."""
REPORTED_MAX = 64
"""Characters kept of the name and of the version a bot reports in its ``Join`` (the rest
is cut, ending in ``…``): they go into every record of its games and onto the public replay
page, and a message may be 64 KiB."""
LEFT_THE_TABLE = "left the table"
"""The start of the exit detail (``Match.note_exit``) of a seat a person played who left
the game (the end of input, Ctrl-C, a closed page), then ``": "`` and how: that seat
forfeits by disconnecting at once, with no reconnect grace (it said it is not coming
back)."""
MAX_REJOINS = 20
"""How many times one seat may join again after a drop, in one game; further joins are
refused (a fault says so, once), so a reconnect storm cannot slow the other tables."""
HELD_GRACE_S = 0.5
"""How long a join that finds its seat held waits for the holder's stream to end before
it is refused (s): a bot that drops its stream and joins again at once on the same
connection can be heard before the referee has seen the old stream close (the two reach
its event loop together, in either order)."""
UNDELIVERED_GRACE_S = 5.0
"""How much longer than its time a turn may wait to be delivered to a connected seat's
stream (a busy referee's queue); a turn still not taken then is that seat's timeout."""
KEEP_FINISHED = 64
"""How many finished matches a referee keeps in memory (for the match service); older ones
are forgotten, and their record on disk is what is left of them."""


class Refusal(Exception):
    """A join or request the referee refuses; ``code`` names the gRPC status."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Forfeit(Exception):
    """Ends the game: the seats of ``faults`` forfeit (raised by the handlers, caught by
    :meth:`Match._run`)."""

    def __init__(self, faults: list[Fault]) -> None:
        super().__init__(faults[0].detail)
        self.faults = faults


class Status(enum.IntEnum):
    """Match status (mirrors ``MatchStatus``)."""

    WAITING = mpb.MATCH_STATUS_WAITING
    RUNNING = mpb.MATCH_STATUS_RUNNING
    FINISHED = mpb.MATCH_STATUS_FINISHED


class Outbox:
    """What is queued for one stream, in order (a message, encoded bytes, or None: the end),
    drained by its servicer alone: an ``asyncio.Queue`` without the bookkeeping a queue of
    many readers and writers needs (one message a turn passes here)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: collections.deque[bpb.PlayResponse | bytes | None] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: bpb.PlayResponse | bytes | None) -> None:
        """Queue ``item``; wakes the reader."""
        self._items.append(item)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def empty(self) -> bool:
        """Whether nothing is queued."""
        return not self._items

    def withdraw(self, request_id: int) -> None:
        """Take back the queued turn ``request_id`` (encoded: :class:`TurnBytes`), if it is
        still queued."""
        for item in self._items:
            if isinstance(item, TurnBytes) and item.request_id == request_id:
                self._items.remove(item)
                return

    def qsize(self) -> int:
        """How many items are queued."""
        return len(self._items)

    def get_nowait(self) -> bpb.PlayResponse | bytes | None:
        """The oldest item (raises IndexError when there is none)."""
        return self._items.popleft()

    async def get(self) -> bpb.PlayResponse | bytes | None:
        """The oldest item, waiting for one."""
        items = self._items
        while not items:
            self._waiter = w = asyncio.get_running_loop().create_future()
            try:
                await w
            finally:
                self._waiter = None
        return items.popleft()


class SeatLink:
    """One live stream holding a seat: the servicer drains :attr:`outbox` to the wire."""

    def __init__(self, quiet: bool = False) -> None:
        self.outbox = Outbox()
        self.closed = False
        self.quiet = quiet
        """The bot asked for no public events (``Join.quiet``) but the game's end."""
        self.dropped = ""
        """Why the referee broke the stream (:meth:`drop`), or ""."""
        self.detached = asyncio.Event()
        """Set once the stream no longer holds its seat (:meth:`Match.detach`)."""

    def send(self, msg: bpb.PlayResponse | bytes) -> None:
        """Queue a message for the bot, or its encoded bytes (dropped if the link is
        closed)."""
        if not self.closed:
            self.outbox.put_nowait(msg)

    def close(self) -> None:
        """End the stream after the queued messages."""
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(None)

    def drop(self, reason: str) -> None:
        """Break the stream after the queued messages, as a lost connection would: it ends
        with status ``UNAVAILABLE`` and ``reason``, not ``OK`` (the conformance check's
        reconnect probe, :mod:`arena.referee.probes`)."""
        if not self.closed:
            self.dropped = reason
            self.close()


# -- what reaches a match's inbox ---------------------------------------------------------
class Joined(NamedTuple):
    """A stream took the seat (its first join, or its return after a drop)."""

    seat: int
    link: SeatLink


class Replied(NamedTuple):
    """A message from the seat's stream, read."""

    seat: int
    message: bpb.PlayRequest
    at: float
    """When it arrived (``time.monotonic()`` seconds): the seat's clock stops here."""


class Garbled(NamedTuple):
    """A message from the seat's stream that is not one (too large, not a PlayRequest)."""

    seat: int
    detail: str
    """What was wrong, for the fault."""


class StreamGone(NamedTuple):
    """The seat's stream ended (closed by the bot, broken, or the process died)."""

    seat: int


class ProcessExited(NamedTuple):
    """The runner saw the seat's bot process end."""

    seat: int
    returncode: int
    detail: str
    """Why, when the sandbox knows (``"out_of_memory"``), else ``""``."""


class Woken(NamedTuple):
    """Internal: a reply handled on arrival (:meth:`Match.receive`) ended the game or found a
    fault, which the match task takes over from here (:meth:`Match._on_woken`)."""


InboxEvent = Joined | Replied | Garbled | StreamGone | ProcessExited | Woken

_HANDLERS: dict[type, str] = {
    Joined: "_on_joined", Replied: "_on_replied", Garbled: "_on_garbled",
    StreamGone: "_on_stream_gone", ProcessExited: "_on_process_exited", Woken: "_on_woken"}
"""The :class:`Match` method that handles each inbox event, by name (a match holding its
own bound methods would be in a reference cycle: its whole game, state and events, would
stay in memory after the game until the garbage collector's next full pass)."""


class Inbox:
    """A match's inbox: events in arrival order, read by the match task alone, which waits
    for the next one until a deadline (:meth:`get`).

    One wake-up timer is kept per match and armed lazily: a wait whose deadline is no
    earlier than the armed one leaves it (when it rings early, the wait looks again and
    arms its own), so a turn's wait costs no timer of its own, and :meth:`move` changes the
    deadline of the wait in progress (a turn delivered: its time runs from then) without
    waking the task. Deadlines are ``time.monotonic()`` seconds, the event
    loop's clock.
    """

    __slots__ = ("_items", "_waiter", "_timer", "_timer_at", "deadline")

    def __init__(self) -> None:
        self._items: collections.deque[InboxEvent] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")
        self.deadline = float("inf")
        """The deadline of the wait in progress, or of the last one (seconds)."""

    def put_nowait(self, ev: InboxEvent) -> None:
        """Add an event; wakes the waiting task."""
        self._items.append(ev)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def empty(self) -> bool:
        """Whether no event is waiting."""
        return not self._items

    def get_nowait(self) -> InboxEvent:
        """The oldest event (raises IndexError when there is none)."""
        return self._items.popleft()

    async def get(self, deadline: float) -> InboxEvent | None:
        """The oldest event, waiting for one until ``deadline`` (or the one :meth:`move`
        set meanwhile); None once it has passed with no event."""
        self.deadline = deadline
        items = self._items
        while not items:
            if time.monotonic() >= self.deadline:
                return None
            loop = asyncio.get_running_loop()
            self._arm(loop)
            self._waiter = w = loop.create_future()
            try:
                await w
            finally:
                self._waiter = None
        return items.popleft()

    def move(self, deadline: float) -> None:
        """Make ``deadline`` the deadline of the wait in progress (earlier or later)."""
        self.deadline = deadline
        if self._waiter is not None and self._timer_at > deadline:  # else _arm keeps it
            self._arm(asyncio.get_running_loop())

    def close(self) -> None:
        """Cancel the wake-up timer (the match is over)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer, self._timer_at = None, float("inf")

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        deadline = self.deadline
        if self._timer is not None:
            if self._timer_at <= deadline:  # rings no later: the wait looks again then
                return
            self._timer.cancel()
        self._timer_at = deadline
        self._timer = loop.call_at(loop.time() + (deadline - time.monotonic()), self._ring)

    def _ring(self) -> None:
        self._timer, self._timer_at = None, float("inf")
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)


class SeatStatus(enum.Enum):
    """Where a seat's bot is."""

    WAITING = "waiting"
    """It has not joined yet."""
    CONNECTED = "connected"
    """A live stream holds the seat."""
    AWAY = "away"
    """It joined, and its stream is gone (it may come back within ``reconnect_ms``)."""


HOST_START_MAX_S = 120.0
"""The longest the host may take to start a seat's process or container (a loaded
machine, a Docker engine pulling or creating); past it the match is aborted (voided,
replayed), never a start-up stall of the bot's."""


class Seat:
    """One seat of a match: the bot meant for it, the stream that holds it, its clock,
    the illegal actions it may still retry, and how its process ended.

    Args:
        index: the seat, 0-based.
        name: the bot's name, as the match was created with it.
        version: the bot's version, likewise.
        tc: the seat's time control: the match's, or the match's with a clock of the seat's
            own (:meth:`Referee.create_match`'s ``seat_clocks``). The clock and the retries
            start from it.
    """

    __slots__ = ("index", "name", "version", "tc", "link", "joined", "joined_as",
                 "away_since", "exit", "clock", "retries_left", "double_join_noted",
                 "rejoins", "refusal", "starting", "started", "waited", "excused")

    def __init__(self, index: int, name: str, version: str, tc: TimeControl) -> None:
        self.index = index
        self.tc = tc
        """The seat's time control (what its Welcome says)."""
        self.name = name
        self.version = version
        self.link: SeatLink | None = None
        """The live stream holding the seat, or None."""
        self.joined = False
        """Whether a stream ever joined it."""
        self.joined_as: tuple[str, str] = ("", "")
        """``(name, version)`` the bot reported in its last join."""
        self.away_since: float | None = None
        """When its stream went (``time.monotonic()`` seconds), while it is away."""
        self.exit: ProcessExited | None = None
        """How its process ended, once the runner saw it end."""
        self.clock = Clock(tc.decision_ms, tc.bank_ms)
        self.retries_left = tc.illegal_retries
        """Illegal actions it may still retry (one more forfeits)."""
        self.double_join_noted = False
        """A second stream tried to take the seat (faulted once, not per attempt)."""
        self.rejoins = 0
        """How many times a stream joined it again after a drop (at most MAX_REJOINS)."""
        self.refusal = ""
        """Why the last join with its token was refused ("" if none was)."""
        self.starting = False
        """Whether the runner is starting its process or container (its start-up clock
        waits for it: :meth:`Match.seat_starting`)."""
        self.started: float | None = None
        """When (``time.monotonic()``) its process or container was running, if the runner
        said so: its start-up clock runs from then."""
        self.waited: Callable[[], float | None] | None = None
        """How long (seconds) its process has waited for a CPU since it started, as the
        runner measures it (None: not measured): that time is not its start-up's."""
        self.excused = 0.0
        """The start-up time not counted (seconds): what :attr:`waited` said last."""

    @property
    def status(self) -> SeatStatus:
        """Waiting, connected or away."""
        if self.link is not None:
            return SeatStatus.CONNECTED
        return SeatStatus.AWAY if self.joined else SeatStatus.WAITING

    def __repr__(self) -> str:
        return f"<Seat {self.index} {self.name!r} {self.status.value} {self.clock!r}>"


@dataclass(eq=False, slots=True)
class _OpenTurn:
    """The turn a seat is asked to answer."""

    seat: Seat
    request_id: int
    message: EncodedTurn
    link: SeatLink | None
    """The stream it was last sent on (None: the seat was away)."""
    answer: tuple[Action, int] | None = None
    """``(action, ms)`` once the seat answered it with a well-formed action."""


# How each kind of event is built from the facts it needs (Match._event).
def _seat_bid(seat: int, value: int) -> pb.SeatBid:
    return pb.SeatBid(seat=seat, value=value)


def _seat_only(seat: int) -> pb.SeatOnly:
    return pb.SeatOnly(seat=seat)


def _trump_named(seat: int, trump: int) -> pb.TrumpNamed:
    return pb.TrumpNamed(seat=seat, trump=trump_to_pb(trump))


def _seat_play(seat: int, tile: int) -> pb.SeatPlay:
    return pb.SeatPlay(seat=seat, tile=tile_to_pb(tile))


def _trick_won(t: Trick, number: int) -> pb.TrickWon:
    return pb.TrickWon(seat=t.winner, trick_number=number, trick=trick_to_pb(t))


def _hand_ended(h: HandRecord) -> pb.HandResult:
    """A finished hand's public result (as :func:`moon_sdk.rules.summarize` gives it)."""
    return hand_summary_to_pb(HandSummary(h.number, h.dealer, h.bids, h.bidder, h.bid, h.trump,
                                          h.tricks_taken, h.made, h.deltas, h.scores))


def _hand_started(hand_number: int, dealer: int) -> pb.HandStarted:
    return pb.HandStarted(hand_number=hand_number, dealer=dealer)


def _now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class Match:
    """One game of Moon between seated bots, refereed to the end.

    Created by :meth:`Referee.create_match`; :meth:`start` begins the task. Streams and
    the runner report to it through :meth:`attach`, :meth:`receive`, :meth:`detach` and
    :meth:`note_exit`; :meth:`stop` ends it early.
    """

    def __init__(self, match_id: str, ruleset: Ruleset, preset: str, seed: int,
                 seats: list[tuple[str, str]], tc: TimeControl,
                 record_dir: Path | None,
                 seat_clocks: Mapping[int, tuple[int, int]] | None = None) -> None:
        self.match_id = match_id
        self.ruleset = ruleset
        self.preset = preset
        self.seed = seed
        self.tc = tc
        """The game's time control (a seat's own clock, if it has one, is its
        :attr:`Seat.tc`)."""
        self.record_dir = record_dir
        self.n = ruleset.players
        clocks = seat_clocks or {}
        self.seats = [
            Seat(i, name, version, tc if i not in clocks else dataclasses.replace(
                tc, decision_ms=clocks[i][0], bank_ms=clocks[i][1]))
            for i, (name, version) in enumerate(seats)]
        self.tokens = [secrets.token_urlsafe(18) for _ in range(self.n)]
        self.state = GameState(ruleset, seed)
        self.status = Status.WAITING
        self.created_mono = time.monotonic()
        self.created_at = _now_iso()
        self.finished_at = ""
        self._events: list[pb.Event | tuple[str, Callable[..., Any], tuple[Any, ...]]] = []
        """Every public event, in order; one nobody needed yet (all seats quiet, no
        watcher) is kept as how to build it (:meth:`_event`) until :attr:`events` is read."""
        self._events_built = 0
        self.watchers: list[asyncio.Queue[pb.Event | None]] = []
        self.faults: list[Fault] = []
        self.action_ms: list[int] = []
        """Each applied action's time from its turn sent to its answer, whole ms."""
        self.turn_seconds = 0.0
        """Every answered turn's time from sending it to the answer, summed (seconds): the
        precise total of what :attr:`action_ms` holds in whole milliseconds."""
        self.result: GameResult | None = None
        self.stop_reason = ""
        """Why a stopped (CANCELLED or ABORTED) match was stopped."""
        self.record_path = ""
        self.record_error: OSError | None = None
        """Why the record's last write failed (a full disk, say); None once written."""
        self.record_at_finish = True
        """Whether the match writes its record as it ends (on the event loop); a caller that
        writes it afterwards itself (:func:`arena.executor.game.play_game`) turns it off."""
        self.logs: dict[int, str] = {}
        self.inbox = Inbox()
        self.done = asyncio.Event()
        self.on_finish: list[Callable[[Match], None]] = []
        self._next_request = 0
        self._turn: _OpenTurn | None = None
        self._encoders: dict[int, TurnEncoder] = {}
        self._stop: tuple[Termination, str] | None = None
        self._task: asyncio.Task[None] | None = None
        self._listening = False
        """Whether a seat's stream gets every public event (one not ``quiet``)."""
        self._waiting = False
        """Whether the match task is waiting for the open turn's answer (:meth:`_play`)."""
        self._pending: Exception | None = None
        """What a reply handled on arrival raised, for the match task to raise
        (:meth:`_on_woken`)."""

    # -- what streams and the runner report ----------------------------------------------
    def attach(self, seat: int, join: bpb.Join) -> SeatLink:
        """Give ``seat`` to a new stream that sent ``join``: welcome it. Back after a drop,
        the seat's open turn (if it has one) is sent again, whose observation is complete;
        past events are not replayed (a rejoin costs the referee the same at any point of
        the game), and a seat may come back at most :data:`MAX_REJOINS` times.

        Raises:
            Refusal: the match is over, another live stream holds the seat, or the seat
                came back too often (RESOURCE_EXHAUSTED).
        """
        if self.status == Status.FINISHED:
            raise Refusal("FAILED_PRECONDITION", f"match {self.match_id} is over")
        s = self.seats[seat]
        if s.link is not None:
            if not s.double_join_noted:  # once: a fault per attempt is a flood
                s.double_join_noted = True
                self.fault(seat, FaultReason.PROTOCOL_ERROR,
                           f"a second stream tried to join seat {seat}, which is held; refused",
                           forfeit=False)
            raise Refusal("FAILED_PRECONDITION",
                          f"seat {seat} of match {self.match_id} is already held by a live "
                          "stream; one stream per seat")
        resumed = s.joined
        if resumed:
            if s.rejoins >= MAX_REJOINS:
                if s.rejoins == MAX_REJOINS:  # once: a fault per attempt is a flood
                    s.rejoins += 1
                    self.fault(seat, FaultReason.PROTOCOL_ERROR,
                               f"seat {seat} joined again after {MAX_REJOINS} drops, the "
                               "limit for a game; its further joins are refused",
                               forfeit=False)
                raise Refusal("RESOURCE_EXHAUSTED",
                              f"seat {seat} of match {self.match_id} has rejoined "
                              f"{MAX_REJOINS} times, the limit for a game; no more joins")
            s.rejoins += 1
        link = SeatLink(quiet=join.quiet)
        s.link, s.joined, s.away_since = link, True, None
        s.joined_as = (_reported(join.bot_name), _reported(join.bot_version))
        self._listening = self._listening or not link.quiet
        link.send(bpb.PlayResponse(welcome=bpb.Welcome(
            match_id=self.match_id, seat=seat, ruleset=ruleset_to_pb(self.ruleset, self.preset),
            time_control=time_control_to_pb(s.tc), protocol_version=PROTOCOL_VERSION,
            seat_names=[x.name for x in self.seats], resumed=resumed)))
        self.inbox.put_nowait(Joined(seat, link))
        return link

    def receive(self, seat: int, link: SeatLink, raw: bytes) -> None:
        """A message from ``seat``'s stream, still as bytes (garbage is a protocol error).
        Ignored from a stream that no longer holds the seat, or once the match is over.

        While the match task waits for the open turn's answer with nothing before it in the
        inbox, a well-formed message is handled here and now, in the caller's task (the
        stream's reader), as the match task would handle it next (:meth:`_handle_now`): the
        answer applied and the next turn sent without waking the match task, which goes on
        waiting, for the next turn's deadline. Anything else goes through the inbox."""
        if self.seats[seat].link is not link or self.status == Status.FINISHED:
            return
        if len(raw) > MAX_MESSAGE_BYTES:
            self.inbox.put_nowait(Garbled(seat, f"sent a message of {len(raw)} bytes; "
                                                f"the limit is {MAX_MESSAGE_BYTES}"))
            return
        try:
            msg = bpb.PlayRequest.FromString(raw)
        except Exception:  # noqa: BLE001 - protobuf raises DecodeError or others
            self.inbox.put_nowait(Garbled(seat, "sent bytes that are not a PlayRequest"))
            return
        ev = Replied(seat, msg, time.monotonic())
        if self._waiting and self._stop is None and self.inbox.empty():
            self._handle_now(ev)
        else:
            self.inbox.put_nowait(ev)

    def _handle_now(self, ev: Replied) -> None:
        """Handle ``ev`` as the waiting match task would (:meth:`_play`): the reply's checks,
        then the answer applied (or rejected) and the next turn opened (:meth:`_step`), the
        wait's deadline moved to the new turn's. When that ends the game or raises (a fault
        that forfeits, an internal error), the match task is woken to finish it."""
        try:
            self._on_replied(ev)
            turn = self._step()
        except Exception as e:  # noqa: BLE001 - the match task raises it (_on_woken)
            self._pending = e
            turn = None
        if turn is None:
            self.inbox.put_nowait(Woken())
        else:
            self.inbox.move(self._deadline(turn))

    def delivered(self, seat: int, link: SeatLink, request_id: int) -> None:
        """``seat``'s stream ``link`` wrote the turn ``request_id`` to the transport just
        now: the open turn's clock runs from here (:meth:`Clock.delivered`), and the wait
        for its answer ends at its deadline from here. Done at once, not through the inbox
        (nothing else about the match changes, so the match task need not wake)."""
        turn = self._turn
        if turn is None or turn.request_id != request_id or turn.seat.index != seat \
                or self.seats[seat].link is not link or self.status == Status.FINISHED:
            return
        clock = turn.seat.clock
        if not clock.is_delivered:
            clock.delivered(time.monotonic())
            self.inbox.move(self._deadline(turn))

    def detach(self, seat: int, link: SeatLink) -> None:
        """``seat``'s stream ended (bot closed it, crashed, or the network dropped)."""
        s = self.seats[seat]
        if s.link is link:
            s.link = None
            self._listening = any(x.link is not None and not x.link.quiet for x in self.seats)
            link.close()
            link.detached.set()
            s.away_since = time.monotonic()
            self.inbox.put_nowait(StreamGone(seat))

    def note_exit(self, seat: int, returncode: int, detail: str = "") -> None:
        """The runner saw ``seat``'s bot process end (a crash unless the game is over);
        ``detail`` is the sandbox's reason if it knows one (``"out_of_memory"``)."""
        self.inbox.put_nowait(ProcessExited(seat, returncode, detail))

    # -- events and faults ---------------------------------------------------------------
    @property
    def events(self) -> list[pb.Event]:
        """Every public event so far, in order (``Event.sequence`` is its place, from 1)."""
        evs = self._events
        for i in range(self._events_built, len(evs)):
            e = evs[i]
            if isinstance(e, tuple):
                field, make, args = e
                evs[i] = pb.Event(sequence=i + 1, **{field: make(*args)})
        self._events_built = len(evs)
        return evs  # type: ignore[return-value]  # every entry is built now

    def _event(self, field: str, make: Callable[..., Any], *args: Any) -> None:
        """Publish the event whose ``field`` is ``make(*args)``: at once when a seat or a
        watcher gets it, else only when :attr:`events` is read (quiet seats get no events
        but the game's end, so most events of their games are never built). ``args`` must
        not change afterwards."""
        if self.watchers or self._listening:
            self._emit(**{field: make(*args)})
        else:
            self._events.append((field, make, args))

    def _emit(self, **kind: Any) -> None:
        ev = pb.Event(sequence=len(self._events) + 1, **kind)
        self._events.append(ev)
        msg = b""  # encoded once for every seat that gets it; not at all for quiet seats
        ending = "game_ended" in kind
        for s in self.seats:
            link = s.link
            if link is not None and (ending or not link.quiet):
                if not msg:
                    msg = bpb.PlayResponse(event=ev).SerializeToString()
                link.send(msg)
        for q in self.watchers:
            q.put_nowait(ev)

    def fault(self, seat: int, reason: FaultReason, detail: str, forfeit: bool) -> Fault:
        """Record a fault of ``seat`` and broadcast it (an illegal action's reason to
        nobody: :meth:`Fault.public`)."""
        f = Fault(seat, reason, detail, forfeit)
        self.faults.append(f)
        self._emit(fault=fault_to_pb(f.public()))
        log.info("match %s seat %d fault %s: %s", self.match_id, seat, reason.key, detail)
        return f

    def _forfeit(self, seat: int, reason: FaultReason, detail: str) -> _Forfeit:
        return _Forfeit([self.fault(seat, reason, detail, forfeit=True)])

    def _exit_forfeit(self, seat: Seat, when: str) -> _Forfeit:
        """The forfeit of a seat whose process ended: a person who left the table (a
        disconnect), out of memory, refused by the referee (exit code 3 before joining),
        else a crash."""
        assert seat.exit is not None
        _, rc, detail = seat.exit
        if detail.startswith(LEFT_THE_TABLE):
            how = detail.removeprefix(LEFT_THE_TABLE).removeprefix(": ")
            return self._forfeit(seat.index, FaultReason.DISCONNECT,
                                 f"the person at seat {seat.index} left the table {when}"
                                 + (f" ({how})" if how else ""))
        if detail == "out_of_memory":
            return self._forfeit(seat.index, FaultReason.OUT_OF_MEMORY,
                                 f"the bot was killed for using too much memory {when}")
        if rc == EXIT_REFUSED and not seat.joined:
            if seat.refusal:  # the SDK's exit code after the referee refused its join
                return self._forfeit(seat.index, FaultReason.PROTOCOL_ERROR,
                                     f"the bot exited with code 3 {BEFORE_JOINING}: the "
                                     f"referee refused its join ({seat.refusal})")
            return self._forfeit(seat.index, FaultReason.PROTOCOL_ERROR,
                                 f"the bot exited with code 3 {BEFORE_JOINING}, and no join "
                                 "with its token reached the referee: it joined with another "
                                 "token (use MOON_TOKEN's), or exited with 3 on its own (the "
                                 "code the SDK exits with when the referee refuses its join)")
        return self._forfeit(seat.index, FaultReason.CRASH,
                             f"the bot process exited (code {rc}) {when}"
                             + (f": {detail}" if detail else ""))

    # -- the game ------------------------------------------------------------------------
    def start(self) -> None:
        """Start the match task (call from the event loop)."""
        self._task = asyncio.get_running_loop().create_task(self._run(),
                                                            name=f"match-{self.match_id}")
        self._task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """The task is over: a task cancelled before it ever ran never reached
        :meth:`_run`'s ending, so the match is finished here (stopped)."""
        if self.status != Status.FINISHED:
            term, self.stop_reason = self._stop or (Termination.ABORTED, "cancelled")
            self._finish(GameResult.stopped(term, self.state.scores,
                                            len(self.state.hand_records)))

    def stop(self, termination: Termination | int, reason: str) -> None:
        """Cancel the match: it ends as ``termination`` (CANCELLED or ABORTED; a
        :class:`Termination` or its wire number). A turn still queued for its stream (not
        yet written) is taken back: no seat is asked to act in a stopped match."""
        if self.status != Status.FINISHED and self._task is not None and self._stop is None:
            self._stop = (Termination(termination), reason)
            self._task.cancel()
            turn = self._turn  # a turn not yet written to its stream is taken back
            if turn is not None and turn.link is not None and not turn.seat.clock.is_delivered:
                turn.link.outbox.withdraw(turn.request_id)

    async def _run(self) -> None:
        result: GameResult
        hands = self.state.hand_records
        try:
            await self._wait_for_seats()
            self.status = Status.RUNNING
            self._emit(hand_started=pb.HandStarted(hand_number=0, dealer=self.state.dealer))
            await self._play()
            if self.state.outcome is not None:
                result = GameResult.of_outcome(self.state.outcome, len(hands))
            else:
                result = GameResult.hand_limit(self.state.scores, len(hands))
        except _Forfeit as f:  # a hand cut short by it counts as played
            result = GameResult.forfeited(self.ruleset, self.state.scores, f.faults,
                                          len(hands) + (self.status == Status.RUNNING))
        except asyncio.CancelledError:
            term, self.stop_reason = self._stop or (Termination.ABORTED, "cancelled")
            result = GameResult.stopped(term, self.state.scores, len(hands))
            log.info("match %s stopped: %s", self.match_id, self.stop_reason)
        except Exception as e:  # an infrastructure fault: never scored against a bot
            log.exception("match %s: internal error", self.match_id)
            self.stop_reason = f"internal error of the referee: {e!r}"
            result = GameResult.stopped(Termination.ABORTED, self.state.scores, len(hands))
        self._finish(result)

    def _finish(self, result: GameResult) -> None:
        self.result = result
        self.status = Status.FINISHED
        self.finished_at = _now_iso()
        self._turn = None
        self.inbox.close()
        self._emit(game_ended=result_to_pb(result))
        if self.record_at_finish:
            self.write_record()
        for s in self.seats:
            if s.link is not None:
                s.link.close()
        for q in self.watchers:
            q.put_nowait(None)
        self.done.set()
        for cb in self.on_finish:
            cb(self)

    async def _next(self, deadline: float) -> InboxEvent | None:
        """The next inbox event, or None once ``deadline`` (monotonic seconds; or the
        earlier one a delivery set meanwhile, :attr:`Inbox.deadline`) passed."""
        if self._stop is not None:  # stop() cancels the task, but a cancel can be lost
            raise asyncio.CancelledError  # (or not land while items keep coming): end here
        return await self.inbox.get(deadline)

    def seat_starting(self, index: int) -> None:
        """The runner is starting seat ``index``'s process or container: its start-up
        clock waits until :meth:`seat_started` (at most :data:`HOST_START_MAX_S`: then the
        host, not the bot, failed to start it, and the match is aborted)."""
        self.seats[index].starting = True

    def seat_started(self, index: int,
                     waited: Callable[[], float | None] | None = None) -> None:
        """Seat ``index``'s process or container is running: its start-up limit counts
        from now, so the time the host took to start it (a loaded machine, a slow Docker
        engine) is never the bot's. ``waited()``, if given, says how long (seconds) the
        process has since waited for a CPU (a loaded machine): when the limit is reached,
        that time is added to it (up to :data:`HOST_START_MAX_S`), so the join is measured
        by the bot's own time."""
        seat = self.seats[index]
        seat.started = time.monotonic()
        seat.waited = waited
        if self.status != Status.WAITING:
            return
        missing = [s for s in self.seats if not s.joined]
        if missing:
            self.inbox.move(min(self._join_deadline(s) for s in missing))

    def _join_deadline(self, seat: Seat) -> float:
        """When ``seat`` must have joined (monotonic seconds): the start-up limit from its
        process's start (:meth:`seat_started`), or from the match's creation; while the
        runner is still starting it, :data:`HOST_START_MAX_S` after the creation."""
        if seat.started is not None:
            return (max(seat.started, self.created_mono) + self.tc.startup_ms / 1000
                    + seat.excused)
        if seat.starting:
            return self.created_mono + HOST_START_MAX_S
        return self.created_mono + self.tc.startup_ms / 1000

    async def _wait_for_seats(self) -> None:
        """Until every seat has joined, or its start-up limit (:meth:`_join_deadline`):
        every seat missing then forfeits (a start-up stall), unless the host has not
        started its process in :data:`HOST_START_MAX_S` (then the match is aborted:
        never the bot's fault)."""
        while not all(s.joined for s in self.seats):
            now = time.monotonic()
            missing = [s for s in self.seats if not s.joined]
            late = [s for s in missing if self._join_deadline(s) <= now]
            if self._excuse(late):  # it waited for a CPU meanwhile: not its time
                late = [s for s in missing if self._join_deadline(s) <= now]
            if any(s.started is None and s.starting for s in late):
                self._stop = (Termination.ABORTED, "the host did not start a bot's process "
                              f"or container within {HOST_START_MAX_S:g} s")
                raise asyncio.CancelledError
            if late:
                raise _Forfeit([self.fault(s.index, FaultReason.STARTUP_STALL,
                                           self._stall_detail(s), forfeit=True)
                                for s in late])
            ev = await self._next(min(self._join_deadline(s) for s in missing))
            if ev is not None:
                getattr(self, _HANDLERS[type(ev)])(ev)

    @staticmethod
    def _excuse(late: list[Seat]) -> bool:
        """Set each late seat's :attr:`Seat.excused` to the time its process waited for a
        CPU (:meth:`seat_started`'s ``waited``), up to :data:`HOST_START_MAX_S`; whether
        any grew."""
        grew = False
        for s in late:
            w = s.waited() if s.waited is not None else None
            if w is not None and min(w, HOST_START_MAX_S) > s.excused + 0.001:
                s.excused = min(w, HOST_START_MAX_S)
                grew = True
        return grew

    def _stall_detail(self, seat: Seat) -> str:
        """A start-up stall's detail: the limit, and the host's own start and the time the
        process waited for a CPU when they were measured (not counted)."""
        if seat.started is None:
            return f"seat {seat.index} did not join within {self.tc.startup_ms} ms"
        host_ms = max(0, round((seat.started - self.created_mono) * 1000))
        waited = (f"; it waited {round(seat.excused * 1000)} ms for a CPU, not counted "
                  "either" if seat.excused >= 0.001 else "")
        return (f"seat {seat.index} did not join within {self.tc.startup_ms} ms of its "
                f"process starting (the host took {host_ms} ms to start it, not counted"
                f"{waited})")

    async def _play(self) -> None:
        """Play until the game ends (or the hand limit): handle inbox events while a turn
        is open, settle it once answered and open the next (:meth:`_step`). A reply that
        arrives while this waits may be handled on arrival instead (:meth:`receive`), which
        moves the wait on to the next turn.

        Raises:
            _Forfeit: a turn ran out (a timeout), its seat stayed away past the reconnect
                grace (a disconnect), or a handler found a fault.
        """
        while (turn := self._step()) is not None:
            self._waiting = True
            try:
                ev = await self._next(self._deadline(turn))
            finally:
                self._waiting = False
            if ev is None:  # the deadline, as a delivery or a reply may have moved it
                assert self._turn is not None  # the wait for a turn ends only with a Woken
                raise self._out_of_time(self._turn, self.inbox.deadline)
            getattr(self, _HANDLERS[type(ev)])(ev)

    def _step(self) -> _OpenTurn | None:
        """Settle the open turn once it is answered: its action applied, or, illegal, a
        retry spent (:meth:`_reject`, which forfeits when none is left) and a fresh turn to
        the same seat. Then the open turn: the one still awaited, or a new one for the seat
        to act; None when the game is over or reached the hand limit.

        Raises:
            _Forfeit: an illegal action with no retry left.
        """
        turn = self._turn
        if turn is not None and turn.answer is not None:
            action, ms = turn.answer
            try:
                self._apply(turn.seat.index, action, ms)
            except IllegalActionError as e:
                self._reject(turn, e)
            turn = self._turn = None
        if turn is None:
            s = self.state
            if s.is_terminal() or len(s.hand_records) >= self.tc.max_hands:
                return None
            turn = self._open_turn(self.seats[s.current])
        return turn

    def _open_turn(self, seat: Seat) -> _OpenTurn:
        """Send ``seat`` a new turn (if it is connected) and start its clock (from the
        turn's delivery to a connected seat: :meth:`delivered`)."""
        self._next_request += 1
        encoder = self._encoders.get(seat.index)
        if encoder is None:
            encoder = self._encoders[seat.index] = TurnEncoder(self.state, seat.index,
                                                               self.preset)
        msg = EncodedTurn(self._next_request, encoder.observation(self.state),
                          legal_actions_field(self.state.legal_actions()),
                          seat.clock.decision_ms, seat.clock.bank_ms)
        turn = self._turn = _OpenTurn(seat, self._next_request, msg, seat.link)
        seat.clock.start(time.monotonic())
        if seat.link is not None:  # its time runs from the delivery (delivered())
            seat.link.send(msg.response())
        else:  # away: its time runs from now (time away counts)
            seat.clock.delivered(seat.clock.opened_at)
        return turn

    def _deadline(self, turn: _OpenTurn) -> float:
        """When the wait for ``turn``'s answer ends (monotonic seconds): its time from its
        delivery (:attr:`Clock.deadline`), plus :data:`UNDELIVERED_GRACE_S` while it is
        still queued for a connected seat, and no later than the reconnect grace while its
        seat is away (the turn's clock keeps running meanwhile)."""
        seat = turn.seat
        clock = seat.clock
        deadline = clock.deadline  # from the turn's delivery, once it was delivered
        if seat.link is not None:
            if not clock.is_delivered:
                deadline += UNDELIVERED_GRACE_S  # still queued: the referee's delay
            return deadline
        away = (seat.away_since or clock.sent_at) + self.tc.reconnect_ms / 1000
        return min(away, deadline)

    def _out_of_time(self, turn: _OpenTurn, deadline: float) -> _Forfeit:
        """The fault of a turn whose ``deadline`` passed: a disconnect (away past the
        reconnect grace), a turn its stream never took, or a timeout that says how much
        bank the seat actually had left."""
        seat = turn.seat
        clock = seat.clock
        if seat.link is None and deadline < clock.deadline:
            return self._forfeit(seat.index, FaultReason.DISCONNECT,
                                 f"the stream dropped and did not come back within "
                                 f"{self.tc.reconnect_ms} ms")
        bank = clock.bank_ms  # what was left when the turn began
        clock.flag()
        tc = seat.tc
        if not clock.is_delivered and seat.link is not None:
            return self._forfeit(seat.index, FaultReason.TIMEOUT,
                                 "its stream did not take the turn (the bot does not read "
                                 f"it) within {tc.decision_ms} ms plus {bank} ms of "
                                 f"bank plus {UNDELIVERED_GRACE_S:g} s")
        if tc.bank_ms == 0:
            left = " (no bank)"
        elif bank == tc.bank_ms:
            left = f" plus the whole {bank} ms bank"
        else:
            left = f" plus only {bank} ms of bank left (of {tc.bank_ms} ms at the start)"
        return self._forfeit(seat.index, FaultReason.TIMEOUT,
                             f"no answer within the {tc.decision_ms} ms decision time" + left)

    def _reject(self, turn: _OpenTurn, e: IllegalActionError) -> None:
        """An illegal action: a fault (its reason to the seat alone), and a forfeit when
        no retry is left; else the seat is told (``Rejected``) and loses a retry.

        Raises:
            _Forfeit: no retry left.
        """
        seat = turn.seat
        left = seat.retries_left
        f = self.fault(seat.index, FaultReason.ILLEGAL_ACTION, str(e), forfeit=left == 0)
        if left == 0:
            raise _Forfeit([f])
        seat.retries_left = left - 1
        if seat.link is not None:
            seat.link.send(bpb.PlayResponse(rejected=bpb.Rejected(
                request_id=turn.request_id, reason=str(e), retries_left=left - 1)))

    # -- one handler per inbox event (each raises _Forfeit for a fault that ends the game)
    def _on_joined(self, ev: Joined) -> None:
        """A seat to act that came back gets its open turn again on its new stream, with
        the time left (:meth:`Clock.left`): a reconnect never restarts the clock. The
        join of the stream that already has the turn (a first join still queued when the
        game began) sends nothing."""
        turn = self._turn
        if turn is None or turn.seat.index != ev.seat or ev.link is turn.link:
            return
        turn.link = ev.link
        clock = turn.seat.clock
        clock.delivered(clock.sent_at)  # whatever became of the first sending: no restart
        turn.message.decision_ms, turn.message.bank_ms = clock.left(time.monotonic())
        ev.link.send(turn.message.response())

    def _on_replied(self, ev: Replied) -> None:
        """The seat to act answering its open turn with a well-formed action sets the
        turn's answer (its clock charged); anything else is that seat's protocol error.

        Raises:
            _Forfeit: the sender's protocol error (:meth:`_answer_of`).
        """
        try:
            self._answer_of(ev)
        except ProtocolError as e:
            raise self._forfeit(ev.seat, FaultReason.PROTOCOL_ERROR, str(e)) from None

    def _answer_of(self, ev: Replied) -> None:
        """Check a message against the open turn; set the turn's answer.

        Raises:
            ProtocolError: a second join, a message out of turn or before the game began,
                an answer to another request or before it was sent, a malformed action.
        """
        turn = self._turn
        what = ev.message.WhichOneof("kind")
        if what == "join":
            raise ProtocolError("sent a second join on its stream")
        if turn is None:
            raise ProtocolError(f"sent {what or 'an empty message'} before the game began")
        if ev.seat != turn.seat.index:
            raise ProtocolError(f"sent {what or 'an empty message'} out of turn "
                                f"(seat {turn.seat.index} is to act)")
        if what != "action":
            raise ProtocolError(f"sent {what or 'an empty message (no action set)'} in "
                                f"answer to its turn (request {turn.request_id}); a turn is "
                                "answered with an action")
        reply = ev.message.action
        if reply.request_id != turn.request_id:
            raise ProtocolError(f"answered request {reply.request_id}, but the open request "
                                f"is {turn.request_id}")
        clock = turn.seat.clock
        if ev.at < clock.opened_at:
            raise ProtocolError(f"answered request {turn.request_id} before it was sent")
        seconds = clock.charge(ev.at)
        self.turn_seconds += seconds
        try:
            action = action_from_pb(reply.action)
        except SdkProtocolError as e:
            raise ProtocolError(f"sent a malformed action: {e}") from None
        turn.answer = (action, int(seconds * 1000))

    def _on_garbled(self, ev: Garbled) -> None:
        """Bytes that are no message: a protocol error, whoever sent them."""
        raise self._forfeit(ev.seat, FaultReason.PROTOCOL_ERROR, ev.detail)

    def _on_stream_gone(self, ev: StreamGone) -> None:
        """A stream went: the seat is away (its turn, if open, keeps running for the
        reconnect grace), unless its process has ended too: then it crashed."""
        seat = self.seats[ev.seat]
        if seat.exit is not None and seat.link is None:
            raise self._exit_forfeit(seat, DURING_THE_GAME)

    def _on_process_exited(self, ev: ProcessExited) -> None:
        """A bot process ended: before its seat joined, or with its stream gone too, that
        seat forfeits (:meth:`_exit_forfeit`); with its stream still open, once the
        stream goes."""
        seat = self.seats[ev.seat]
        seat.exit = ev
        if not seat.joined:
            raise self._exit_forfeit(seat, BEFORE_JOINING)
        if seat.link is None:
            raise self._exit_forfeit(seat, DURING_THE_GAME)

    def _on_woken(self, ev: Woken) -> None:
        """A reply handled on arrival ended the game (nothing to do: :meth:`_play` sees it)
        or raised: raise it here, in the match task."""
        pending, self._pending = self._pending, None
        if pending is not None:
            raise pending

    # -- applying an action --------------------------------------------------------------
    def _apply(self, seat: int, action: int, ms: int) -> None:
        """Apply ``seat``'s action and broadcast what it did (and a trick, hand or deal
        that it finished or began).

        Raises:
            IllegalActionError: not legal now; nothing changed.
        """
        s = self.state
        hands_before = len(s.hand_records)
        tricks_before = len(s.tricks)
        widow_before = s.widow_taken
        s.apply(action)  # raises IllegalActionError, state unchanged
        self.action_ms.append(ms)
        self._turn = None
        kind = action_kind(action)
        if kind is ActionKind.BID:
            self._event("bid", _seat_bid, seat, bid_value(action))
        elif kind is ActionKind.DISCARD:
            self._event("discarded", _seat_only, seat)
        elif kind is ActionKind.TRUMP:
            self._event("trump_named", _trump_named, seat, s.trump)
        else:
            self._event("played", _seat_play, seat, action)
        finished = len(s.hand_records) > hands_before
        if not finished and s.widow_taken and not widow_before:
            self._event("widow_taken", _seat_only, s.bidder)
        tricks = s.hand_records[-1].tricks if finished else s.tricks
        if kind is ActionKind.PLAY and len(tricks) > tricks_before:
            self._event("trick_won", _trick_won, tricks[-1], len(tricks) - 1)
        if finished:
            self._event("hand_ended", _hand_ended, s.hand_records[-1])
            if not s.is_terminal() and len(s.hand_records) < self.tc.max_hands:
                self._event("hand_started", _hand_started, s.hand_number, s.dealer)

    def write_record(self) -> None:
        """Write (or rewrite, e.g. with bot logs added) the game record, if recording."""
        if self.record_dir is None:
            return
        try:
            # text, not a Path: pathlib interns every part of a path, and this one is new
            # in every game (a long-running host would fill the interpreter's table)
            path = os.path.join(self.record_dir, f"{self.match_id}.json")
            write_json_atomic(path, game_record(self))
            self.record_path = path
            self.record_error = None
        except OSError as e:  # a full disk, say: one line a match, and the caller is told
            if self.record_error is None:
                log.warning("match %s: cannot write the record: %s", self.match_id,
                            e.strerror or e)
            self.record_error = e

    # -- views ---------------------------------------------------------------------------
    async def watch(self) -> Any:
        """Every public event from the start, then live ones until the game ends."""
        q: asyncio.Queue[pb.Event | None] = asyncio.Queue()
        for ev in self.events:
            q.put_nowait(ev)
        if self.status == Status.FINISHED:
            q.put_nowait(None)
        else:
            self.watchers.append(q)
        try:
            while (event := await q.get()) is not None:
                yield event
        finally:
            if q in self.watchers:
                self.watchers.remove(q)


def _reported(text: str) -> str:
    """A name or version a bot reported, cut to :data:`REPORTED_MAX` characters."""
    return text if len(text) <= REPORTED_MAX else text[:REPORTED_MAX - 1] + "…"


_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Referee:
    """All matches of one server process, and the token → seat index.

    Finished matches are kept in memory only up to ``keep_finished`` (the most recent
    ones); older ones are forgotten (their record on disk stays), so a server's memory
    stays flat over any number of games.
    """

    def __init__(self, record_dir: Path | None = None,
                 default_tc: TimeControl | None = None,
                 keep_finished: int = KEEP_FINISHED) -> None:
        self.record_dir = record_dir
        self.default_tc = default_tc or TimeControl()
        self.keep_finished = keep_finished
        self.matches: dict[str, Match] = {}
        """Running matches and the last ``keep_finished`` finished ones, by id."""
        self._tokens: dict[str, tuple[Match, int]] = {}
        self._finished: collections.deque[Match] = collections.deque()

    def create_match(self, ruleset: Ruleset, seats: list[tuple[str, str]], *,
                     preset: str = "", seed: int | None = None,
                     tc: TimeControl | None = None, match_id: str = "",
                     seat_clocks: Mapping[int, tuple[int, int]] | None = None,
                     match_cls: type[Match] | None = None) -> Match:
        """Create and start a match; its :attr:`Match.tokens` are the join tokens.

        Args:
            seat_clocks: seats with a clock of their own, ``seat -> (decision_ms,
                bank_ms)`` (a seat a person plays through a debugger, `moon play manual`);
                every other seat keeps the match's clock (``tc``).
            match_cls: the kind of match (None: :class:`Match`; the conformance check's
                probing kind, :class:`arena.referee.probes.ProbeMatch`).

        Raises:
            ConfigError: wrong number of seats, a bad or duplicate match id, a seat clock of
                no seat or with a bad value.
        """
        if len(seats) != ruleset.players:
            raise ConfigError(f"the ruleset is for {ruleset.players} players, "
                              f"but {len(seats)} seats were given")
        if match_id and not _ID.match(match_id):
            raise ConfigError(f"match id {match_id!r}: use 1-64 letters, digits, '-' or '_'")
        if match_id in self.matches:
            raise ConfigError(f"match id {match_id!r} exists already")
        tc = tc or self.default_tc
        for seat, (decision_ms, bank_ms) in (seat_clocks or {}).items():
            if not 0 <= seat < ruleset.players:
                raise ConfigError(f"a clock for seat {seat}, but the seats are 0.."
                                  f"{ruleset.players - 1}")
            dataclasses.replace(tc, decision_ms=decision_ms, bank_ms=bank_ms)  # checks them
        match_id = match_id or secrets.token_hex(6)
        if seed is None:
            seed = secrets.randbits(63)
        m = (match_cls or Match)(match_id, ruleset, preset, seed, seats, tc, self.record_dir,
                                 seat_clocks)
        self.matches[match_id] = m
        for seat, token in enumerate(m.tokens):
            self._tokens[token] = (m, seat)
        m.on_finish.append(self._forget_tokens)
        m.on_finish.append(self._retire)
        m.start()
        return m

    def _forget_tokens(self, m: Match) -> None:
        for t in m.tokens:
            self._tokens.pop(t, None)

    def _retire(self, m: Match) -> None:
        """A match finished: keep it among the last ``keep_finished``, forget the oldest."""
        self._finished.append(m)
        while len(self._finished) > self.keep_finished:
            old = self._finished.popleft()
            if self.matches.get(old.match_id) is old:
                del self.matches[old.match_id]

    async def join(self, join: bpb.Join, held_grace_s: float = HELD_GRACE_S
                   ) -> tuple[Match, int, SeatLink]:
        """Seat a new stream. A seat held by another stream is waited for up to
        ``held_grace_s`` (:data:`HELD_GRACE_S`) before the join is refused.

        Raises:
            Refusal: unknown token (UNAUTHENTICATED), protocol version mismatch, seat held
                or match over (FAILED_PRECONDITION).
        """
        found = self._tokens.get(join.token)
        if join.protocol_version != PROTOCOL_VERSION:
            why = (f"protocol version {join.protocol_version} is not supported; this "
                   f"referee speaks version {PROTOCOL_VERSION}")
            if found is not None:  # said in the seat's fault if its bot then exits
                found[0].seats[found[1]].refusal = why
            raise Refusal("FAILED_PRECONDITION", why)
        if found is None:
            raise Refusal("UNAUTHENTICATED",
                          "unknown join token: check MOON_TOKEN (a token is good for one "
                          "match, until it ends)")
        match, seat = found
        held = match.seats[seat].link
        if held is not None and match.status != Status.FINISHED:
            try:  # a rejoin heard before its old stream's end: let that end come first
                await asyncio.wait_for(held.detached.wait(), held_grace_s)
            except TimeoutError:
                pass  # a second live stream: attach refuses it
        return match, seat, match.attach(seat, join)

    def get(self, match_id: str) -> Match:
        """The match with this id.

        Raises:
            Refusal: NOT_FOUND.
        """
        try:
            return self.matches[match_id]
        except KeyError:
            raise Refusal("NOT_FOUND", f"no match {match_id!r}") from None

    async def shutdown(self, grace_s: float) -> None:
        """Let running matches finish for up to ``grace_s`` seconds, then abort the rest."""
        running = [m for m in self.matches.values() if m.status != Status.FINISHED]
        if running and grace_s > 0:
            await asyncio.wait([asyncio.create_task(m.done.wait()) for m in running],
                               timeout=grace_s)
        for m in running:
            m.stop(Termination.ABORTED, "the referee is shutting down")
        for m in running:
            await m.done.wait()


def game_record(match: Match) -> dict[str, Any]:
    """The record of a match (finished, or as far as it went), as the JSON document
    :mod:`arena.records.record` describes, built by :func:`moon_sdk.records.game_record`
    (which the SDK's in-process runner shares) from the match's own types.

    Raises:
        IllegalActionError: never for a refereed match (its actions were all applied).
    """
    return record_document(
        match_id=match.match_id, created_at=match.created_at,
        finished_at=match.finished_at, preset=match.preset, ruleset=match.ruleset,
        seed=match.seed, time_control=match.tc.__dict__.copy(),
        seats=[{"seat": s.index, "name": s.name, "version": s.version,
                "reported_name": s.joined_as[0], "reported_version": s.joined_as[1],
                **({"clock": {"decision_ms": s.tc.decision_ms, "bank_ms": s.tc.bank_ms}}
                   if s.tc != match.tc else {})}
               for s in match.seats],
        actions=match.state.history, action_ms=match.action_ms,
        result=result_dict(match.result), faults=[fault_dict(f) for f in match.faults],
        bank_ms_left=[s.clock.bank_ms for s in match.seats], logs=match.logs,
        state=match.state)


def default_record_dir() -> Path:
    """``./runs/records`` — where games are recorded unless told otherwise."""
    return Path("runs") / "records"


__all__ = ["EXIT_REFUSED", "KEEP_FINISHED", "MAX_MESSAGE_BYTES", "MAX_REJOINS",
           "Garbled", "Inbox", "InboxEvent", "Joined", "Match", "Outbox",
           "ProcessExited", "Referee", "Refusal", "Replied", "Seat", "SeatLink", "SeatStatus",
           "Status", "StreamGone", "default_record_dir", "game_record"]
