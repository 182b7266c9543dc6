"""The referee: matches, seats, turns, clocks and faults. Transport-free: the gRPC
servicers in :mod:`arena.server` only translate messages and call in here.

A :class:`Match` runs one game in an asyncio task. Everything that happens to it (a seat
joins, a reply arrives, a stream drops, a bot process exits) goes into one inbox that the
task alone consumes, so the game logic is sequential and a fault of one bot can only
touch its own match.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moon_sdk.convert import (
    PROTOCOL_VERSION,
    ProtocolError,
    action_from_pb,
    action_to_pb,
    hand_summary_to_pb,
    observation_to_pb,
    ruleset_to_pb,
    tile_to_pb,
    trick_to_pb,
    trump_to_pb,
)
from moon_sdk.rules import (
    ActionKind,
    GameState,
    IllegalActionError,
    Ruleset,
    action_kind,
    bid_value,
    observe,
    summarize,
)
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb
from moon_sdk.v1 import match_pb2 as mpb

from .convert import fault_to_pb, result_to_pb, time_control_to_pb
from .errors import ConfigError
from .records import game_record, write_json_atomic
from .results import Fault, FaultReason, GameResult, Termination
from .timecontrol import TimeControl

log = logging.getLogger("arena.referee")

EXIT_REFUSED = 3
"""A bot's exit code for "refused by the referee" (docs/protocol.md)."""
MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message a bot may send; a larger one is a protocol error."""



class Refusal(Exception):
    """A join or request the referee refuses; ``code`` names the gRPC status."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Forfeit(Exception):
    def __init__(self, faults: list[Fault]) -> None:
        super().__init__(faults[0].detail)
        self.faults = faults


class Status(enum.IntEnum):
    """Match status (mirrors ``MatchStatus``)."""

    WAITING = mpb.MATCH_STATUS_WAITING
    RUNNING = mpb.MATCH_STATUS_RUNNING
    FINISHED = mpb.MATCH_STATUS_FINISHED


class SeatLink:
    """One live stream holding a seat: the servicer drains :attr:`outbox` to the wire."""

    def __init__(self, quiet: bool = False) -> None:
        self.outbox: asyncio.Queue[bpb.PlayResponse | None] = asyncio.Queue()
        self.closed = False
        self.quiet = quiet
        """The bot asked for no public events (``Join.quiet``) but the game's end."""

    def send(self, msg: bpb.PlayResponse) -> None:
        """Queue a message for the bot (dropped if the link is closed)."""
        if not self.closed:
            self.outbox.put_nowait(msg)

    def close(self) -> None:
        """End the stream after the queued messages."""
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(None)


@dataclass
class _Item:
    kind: str  # join | reply | bad | gone | exit
    seat: int
    payload: Any = None
    at: float = field(default_factory=time.monotonic)


def _now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class Match:
    """One game of Moon between seated bots, refereed to the end.

    Created by :meth:`Referee.create_match`; :meth:`start` begins the task.
    """

    def __init__(self, match_id: str, ruleset: Ruleset, preset: str, seed: int,
                 seats: list[tuple[str, str]], tc: TimeControl,
                 record_dir: Path | None) -> None:
        self.match_id = match_id
        self.ruleset = ruleset
        self.preset = preset
        self.seed = seed
        self.seats = seats
        self.tc = tc
        self.record_dir = record_dir
        self.n = ruleset.players
        self.tokens = [secrets.token_urlsafe(18) for _ in range(self.n)]
        self.state = GameState(ruleset, seed)
        self.status = Status.WAITING
        self.created_mono = time.monotonic()
        self.created_at = _now_iso()
        self.finished_at = ""
        self.events: list[pb.Event] = []
        self.watchers: list[asyncio.Queue[pb.Event | None]] = []
        self.links: list[SeatLink | None] = [None] * self.n
        self.joined = [False] * self.n
        self.joined_as: list[tuple[str, str]] = [("", "")] * self.n
        self.disconnected_at: list[float | None] = [None] * self.n
        self.exited: list[int | None] = [None] * self.n
        self.exit_detail = [""] * self.n
        self.bank_ms = [tc.bank_ms] * self.n
        self.retries_left = [tc.illegal_retries] * self.n
        self.faults: list[Fault] = []
        self.action_ms: list[int] = []
        self.turn_seconds = 0.0
        """Every answered turn's time from sending it to the answer, summed (seconds): the
        precise total of what :attr:`action_ms` holds in whole milliseconds."""
        self.result: GameResult | None = None
        self.stop_reason = ""
        """Why a stopped (CANCELLED or ABORTED) match was stopped."""
        self.record_path = ""
        self.logs: dict[int, str] = {}
        self.inbox: asyncio.Queue[_Item] = asyncio.Queue()
        self.done = asyncio.Event()
        self._next_request = 0
        self._pending: tuple[int, int, bpb.Turn] | None = None
        self._stop: tuple[Termination, str] | None = None
        self._task: asyncio.Task[None] | None = None
        self.on_finish: list[Callable[[Match], None]] = []
        self._double_join_noted: set[int] = set()

    # -- seats ---------------------------------------------------------------------------
    def attach(self, seat: int, join: bpb.Join) -> SeatLink:
        """Give ``seat`` to a new stream that sent ``join``.

        Raises:
            Refusal: the match is over, or another live stream holds the seat.
        """
        if self.status == Status.FINISHED:
            raise Refusal("FAILED_PRECONDITION", f"match {self.match_id} is over")
        if self.links[seat] is not None:
            if seat not in self._double_join_noted:  # once: a fault per attempt is a flood
                self._double_join_noted.add(seat)
                self.fault(seat, FaultReason.PROTOCOL_ERROR,
                           f"a second stream tried to join seat {seat}, which is held; refused",
                           forfeit=False)
            raise Refusal("FAILED_PRECONDITION",
                          f"seat {seat} of match {self.match_id} is already held by a live "
                          "stream; one stream per seat")
        link = SeatLink(quiet=join.quiet)
        resumed = self.joined[seat]
        self.links[seat] = link
        self.joined[seat] = True
        self.joined_as[seat] = (join.bot_name, join.bot_version)
        self.disconnected_at[seat] = None
        link.send(bpb.PlayResponse(welcome=bpb.Welcome(
            match_id=self.match_id, seat=seat, ruleset=ruleset_to_pb(self.ruleset, self.preset),
            time_control=time_control_to_pb(self.tc), protocol_version=PROTOCOL_VERSION,
            seat_names=[name for name, _ in self.seats], resumed=resumed)))
        if resumed and not link.quiet:
            for ev in self.events:
                link.send(bpb.PlayResponse(event=ev))
        self.inbox.put_nowait(_Item("join", seat, link))
        return link

    def receive(self, seat: int, link: SeatLink, raw: bytes) -> None:
        """A message from ``seat``'s stream, still as bytes (garbage is a protocol error)."""
        if self.links[seat] is not link or self.status == Status.FINISHED:
            return
        if len(raw) > MAX_MESSAGE_BYTES:
            self.inbox.put_nowait(_Item("bad", seat, f"sent a message of {len(raw)} bytes; "
                                        f"the limit is {MAX_MESSAGE_BYTES}"))
            return
        try:
            msg = bpb.PlayRequest.FromString(raw)
        except Exception:  # noqa: BLE001 - protobuf raises DecodeError or others
            self.inbox.put_nowait(_Item("bad", seat, "sent bytes that are not a PlayRequest"))
            return
        self.inbox.put_nowait(_Item("reply", seat, msg))

    def detach(self, seat: int, link: SeatLink) -> None:
        """``seat``'s stream ended (bot closed it, crashed, or the network dropped)."""
        if self.links[seat] is link:
            self.links[seat] = None
            link.close()
            self.disconnected_at[seat] = time.monotonic()
            self.inbox.put_nowait(_Item("gone", seat))

    def note_exit(self, seat: int, returncode: int, detail: str = "") -> None:
        """The runner saw ``seat``'s bot process end (a crash unless the game is over)."""
        self.inbox.put_nowait(_Item("exit", seat, (returncode, detail)))

    # -- events --------------------------------------------------------------------------
    def _emit(self, **kind: Any) -> None:
        ev = pb.Event(sequence=len(self.events) + 1, **kind)
        self.events.append(ev)
        msg = bpb.PlayResponse(event=ev)
        ending = "game_ended" in kind
        for link in self.links:
            if link is not None and (ending or not link.quiet):
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

    # -- the game ------------------------------------------------------------------------
    def start(self) -> None:
        """Start the match task (call from the event loop)."""
        self._task = asyncio.get_running_loop().create_task(self._run(),
                                                            name=f"match-{self.match_id}")

    def stop(self, termination: Termination | int, reason: str) -> None:
        """Cancel the match: it ends as ``termination`` (CANCELLED or ABORTED; a
        :class:`Termination` or its wire number)."""
        if self.status != Status.FINISHED and self._task is not None and self._stop is None:
            self._stop = (Termination(termination), reason)
            self._task.cancel()

    async def _run(self) -> None:
        result: GameResult
        hands = self.state.hand_records
        try:
            await self._wait_for_seats()
            self.status = Status.RUNNING
            self._emit(hand_started=pb.HandStarted(hand_number=0, dealer=self.state.dealer))
            while not self.state.is_terminal():
                if len(self.state.hand_records) >= self.tc.max_hands:
                    break
                await self._turn(self.state.current)
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
        self._pending = None
        self._emit(game_ended=result_to_pb(result))
        self.write_record()
        for link in self.links:
            if link is not None:
                link.close()
        for q in self.watchers:
            q.put_nowait(None)
        self.done.set()
        for cb in self.on_finish:
            cb(self)

    async def _next(self, deadline: float) -> _Item | None:
        if self._stop is not None:  # stop() cancels the task, but a cancel can be lost
            raise asyncio.CancelledError  # (or not land while items keep coming): end here
        if not self.inbox.empty():  # no waiting, no timer: the common case under load
            return self.inbox.get_nowait()
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            return None
        try:
            async with asyncio.timeout(timeout):  # a timer, not a task per wait (wait_for)
                return await self.inbox.get()
        except TimeoutError:
            return None

    def _common(self, item: _Item, waiting_for: int) -> None:
        """Handle an inbox item that is not the awaited seat's reply; raise on a fault."""
        s = item.seat
        if item.kind == "bad":
            raise self._forfeit(s, FaultReason.PROTOCOL_ERROR, item.payload)
        if item.kind == "reply":
            what = item.payload.WhichOneof("kind") or "an empty message"
            if what == "join":
                raise self._forfeit(s, FaultReason.PROTOCOL_ERROR,
                                    "sent a second join on its stream")
            raise self._forfeit(s, FaultReason.PROTOCOL_ERROR,
                                f"sent {what} out of turn (seat {waiting_for} is to act)"
                                if waiting_for >= 0 else f"sent {what} before the game began")
        if item.kind == "exit":
            self.exited[s], self.exit_detail[s] = item.payload
        if item.kind in ("exit", "gone") and self.exited[s] is not None and self.links[s] is None:
            raise self._exit_forfeit(s, "during the game")

    def _exit_forfeit(self, seat: int, when: str) -> _Forfeit:
        """The fault for a bot process that ended (crash, out of memory, refused)."""
        rc, detail = self.exited[seat], self.exit_detail[seat]
        if detail == "out_of_memory":
            return self._forfeit(seat, FaultReason.OUT_OF_MEMORY,
                                 f"the bot was killed for using too much memory {when}")
        if rc == EXIT_REFUSED and not self.joined[seat]:
            return self._forfeit(seat, FaultReason.PROTOCOL_ERROR,
                                 "the bot exited with code 3 (refused by the referee: a bad "
                                 "token or protocol version) before joining")
        return self._forfeit(seat, FaultReason.CRASH,
                             f"the bot process exited (code {rc}) {when}"
                             + (f": {detail}" if detail else ""))

    async def _wait_for_seats(self) -> None:
        deadline = self.created_mono + self.tc.startup_ms / 1000
        while not all(self.joined):
            item = await self._next(deadline)
            if item is None:
                missing = [s for s in range(self.n) if not self.joined[s]]
                raise _Forfeit([
                    self.fault(s, FaultReason.STARTUP_STALL,
                               f"seat {s} did not join within {self.tc.startup_ms} ms",
                               forfeit=True) for s in missing])
            if item.kind == "exit" and not self.joined[item.seat]:
                self.exited[item.seat], self.exit_detail[item.seat] = item.payload
                raise self._exit_forfeit(item.seat, "before joining")
            self._common(item, -1)

    async def _turn(self, seat: int) -> None:
        """Ask ``seat`` for its action until it gives a legal one; apply it."""
        state = self.state
        while True:
            self._next_request += 1
            rid = self._next_request
            obs = observe(state, seat)
            turn = bpb.Turn(
                request_id=rid, observation=observation_to_pb(obs, self.preset),
                legal_actions=[action_to_pb(a) for a in obs.legal_actions],
                decision_ms=self.tc.decision_ms, bank_ms=self.bank_ms[seat])
            self._pending = (seat, rid, turn)
            sent = time.monotonic()
            link = self.links[seat]
            if link is not None:
                link.send(bpb.PlayResponse(turn=turn))
            turn_deadline = sent + (self.tc.decision_ms + self.bank_ms[seat]) / 1000
            while True:
                if self.links[seat] is None:
                    gone = self.disconnected_at[seat] or sent
                    if self.exited[seat] is not None:
                        raise self._exit_forfeit(seat, "during the game")
                    # the turn's clock keeps running while the seat is away
                    deadline = min(gone + self.tc.reconnect_ms / 1000, turn_deadline)
                else:
                    deadline = turn_deadline
                item = await self._next(deadline)
                if item is None:
                    if self.links[seat] is None and deadline < turn_deadline:
                        raise self._forfeit(
                            seat, FaultReason.DISCONNECT,
                            f"the stream dropped and did not come back within "
                            f"{self.tc.reconnect_ms} ms")
                    self.bank_ms[seat] = 0
                    raise self._forfeit(
                        seat, FaultReason.TIMEOUT,
                        f"no answer within {self.tc.decision_ms} ms plus the "
                        f"{self.tc.bank_ms} ms bank")
                if item.kind == "join" and item.seat == seat:
                    # A reconnected seat gets the turn again on its new stream. The join
                    # of the stream that already has the turn (a first join still queued
                    # when the game began) must not send it twice.
                    if item.payload is not link:
                        link = item.payload
                        # the same clock: what is left of the decision time, and the bank
                        used = int((time.monotonic() - sent) * 1000)
                        turn.decision_ms = max(0, self.tc.decision_ms - used)
                        over = max(0, used - self.tc.decision_ms)
                        turn.bank_ms = max(0, self.bank_ms[seat] - over)
                        link.send(bpb.PlayResponse(turn=turn))
                    continue
                if item.kind != "reply" or item.seat != seat:
                    self._common(item, seat)
                    continue
                msg: bpb.PlayRequest = item.payload
                if msg.WhichOneof("kind") != "action":
                    self._common(item, seat)
                if msg.action.request_id != rid:
                    raise self._forfeit(
                        seat, FaultReason.PROTOCOL_ERROR,
                        f"answered request {msg.action.request_id}, but the open request is "
                        f"{rid}")
                if item.at < sent:
                    raise self._forfeit(
                        seat, FaultReason.PROTOCOL_ERROR,
                        f"answered request {rid} before it was sent")
                self.turn_seconds += item.at - sent
                ms = int((item.at - sent) * 1000)
                over = ms - self.tc.decision_ms
                if over > 0:
                    self.bank_ms[seat] = max(0, self.bank_ms[seat] - over)
                try:
                    action = action_from_pb(msg.action.action)
                except ProtocolError as e:
                    raise self._forfeit(seat, FaultReason.PROTOCOL_ERROR,
                                        f"sent a malformed action: {e}") from None
                try:
                    self._apply(seat, action, ms)
                    return
                except IllegalActionError as e:
                    left = self.retries_left[seat]
                    self.fault(seat, FaultReason.ILLEGAL_ACTION, str(e), forfeit=left == 0)
                    if left == 0:
                        raise _Forfeit([self.faults[-1]]) from None
                    self.retries_left[seat] = left - 1
                    if self.links[seat] is not None:
                        self.links[seat].send(bpb.PlayResponse(rejected=bpb.Rejected(  # type: ignore[union-attr]
                            request_id=rid, reason=str(e), retries_left=left - 1)))
                    break  # a fresh turn

    def _apply(self, seat: int, action: int, ms: int) -> None:
        s = self.state
        hands_before = len(s.hand_records)
        tricks_before = len(s.tricks)
        widow_before = s.widow_taken
        s.apply(action)  # raises IllegalActionError, state unchanged
        self.action_ms.append(ms)
        self._pending = None
        kind = action_kind(action)
        if kind is ActionKind.BID:
            self._emit(bid=pb.SeatBid(seat=seat, value=bid_value(action)))
        elif kind is ActionKind.DISCARD:
            self._emit(discarded=pb.SeatOnly(seat=seat))
        elif kind is ActionKind.TRUMP:
            self._emit(trump_named=pb.TrumpNamed(seat=seat, trump=trump_to_pb(s.trump)))
        else:
            self._emit(played=pb.SeatPlay(seat=seat, tile=tile_to_pb(action)))
        finished = len(s.hand_records) > hands_before
        if not finished and s.widow_taken and not widow_before:
            self._emit(widow_taken=pb.SeatOnly(seat=s.bidder))
        tricks = s.hand_records[-1].tricks if finished else tuple(s.tricks)
        if kind is ActionKind.PLAY and len(tricks) > tricks_before:
            t = tricks[-1]
            self._emit(trick_won=pb.TrickWon(seat=t.winner, trick_number=len(tricks) - 1,
                                              trick=trick_to_pb(t)))
        if finished:
            self._emit(hand_ended=hand_summary_to_pb(summarize(s)[-1]))
            if not s.is_terminal() and len(s.hand_records) < self.tc.max_hands:
                self._emit(hand_started=pb.HandStarted(hand_number=s.hand_number,
                                                       dealer=s.dealer))

    def write_record(self) -> None:
        """Write (or rewrite, e.g. with bot logs added) the game record, if recording."""
        if self.record_dir is None:
            return
        try:
            path = self.record_dir / f"{self.match_id}.json"
            write_json_atomic(path, game_record(self))
            self.record_path = str(path)
        except OSError:
            log.exception("match %s: cannot write the record", self.match_id)

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
            while (ev := await q.get()) is not None:
                yield ev
        finally:
            if q in self.watchers:
                self.watchers.remove(q)


_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Referee:
    """All matches of one server process, and the token → seat index."""

    def __init__(self, record_dir: Path | None = None,
                 default_tc: TimeControl | None = None) -> None:
        self.record_dir = record_dir
        self.default_tc = default_tc or TimeControl()
        self.matches: dict[str, Match] = {}
        self._tokens: dict[str, tuple[Match, int]] = {}

    def create_match(self, ruleset: Ruleset, seats: list[tuple[str, str]], *,
                     preset: str = "", seed: int | None = None,
                     tc: TimeControl | None = None, match_id: str = "") -> Match:
        """Create and start a match; its :attr:`Match.tokens` are the join tokens.

        Raises:
            ConfigError: wrong number of seats, a bad or duplicate match id.
        """
        if len(seats) != ruleset.players:
            raise ConfigError(f"the ruleset is for {ruleset.players} players, "
                              f"but {len(seats)} seats were given")
        if match_id and not _ID.match(match_id):
            raise ConfigError(f"match id {match_id!r}: use 1-64 letters, digits, '-' or '_'")
        if match_id in self.matches:
            raise ConfigError(f"match id {match_id!r} exists already")
        match_id = match_id or secrets.token_hex(6)
        if seed is None:
            seed = secrets.randbits(63)
        m = Match(match_id, ruleset, preset, seed, seats, tc or self.default_tc,
                  self.record_dir)
        self.matches[match_id] = m
        for seat, token in enumerate(m.tokens):
            self._tokens[token] = (m, seat)
        m.on_finish.append(self._forget_tokens)
        m.start()
        return m

    def _forget_tokens(self, m: Match) -> None:
        for t in m.tokens:
            self._tokens.pop(t, None)

    def join(self, join: bpb.Join) -> tuple[Match, int, SeatLink]:
        """Seat a new stream.

        Raises:
            Refusal: unknown token (UNAUTHENTICATED), protocol version mismatch, seat held
                or match over (FAILED_PRECONDITION).
        """
        if join.protocol_version != PROTOCOL_VERSION:
            raise Refusal("FAILED_PRECONDITION",
                          f"protocol version {join.protocol_version} is not supported; this "
                          f"referee speaks version {PROTOCOL_VERSION}")
        found = self._tokens.get(join.token)
        if found is None:
            raise Refusal("UNAUTHENTICATED",
                          "unknown join token: check MOON_TOKEN (a token is good for one "
                          "match, until it ends)")
        match, seat = found
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


def default_record_dir() -> Path:
    """``./runs/records`` — where games are recorded unless told otherwise."""
    return Path("runs") / "records"


__all__ = ["Match", "Referee", "Refusal", "SeatLink", "Status", "MAX_MESSAGE_BYTES",
           "default_record_dir"]
