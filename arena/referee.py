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
    outcome_to_pb,
    ruleset_to_pb,
    tile_to_pb,
    trick_to_pb,
    trump_to_pb,
)
from moon_sdk.records import game_record
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

from .errors import ConfigError
from .records import write_json_atomic
from .timecontrol import TimeControl

log = logging.getLogger("arena.referee")

EXIT_REFUSED = 3
"""A bot's exit code for "refused by the referee" (docs/protocol.md)."""
MAX_MESSAGE_BYTES = 64 * 1024
"""Largest message a bot may send; a larger one is a protocol error."""

FAULT_NAMES = {
    pb.FAULT_REASON_STARTUP_STALL: "startup_stall", pb.FAULT_REASON_TIMEOUT: "timeout",
    pb.FAULT_REASON_DISCONNECT: "disconnect", pb.FAULT_REASON_PROTOCOL_ERROR: "protocol_error",
    pb.FAULT_REASON_ILLEGAL_ACTION: "illegal_action", pb.FAULT_REASON_CRASH: "crash",
    pb.FAULT_REASON_OUT_OF_MEMORY: "out_of_memory",
}
TERMINATION_NAMES = {
    pb.TERMINATION_TARGET: "target", pb.TERMINATION_MOON: "moon",
    pb.TERMINATION_FORFEIT: "forfeit", pb.TERMINATION_CANCELLED: "cancelled",
    pb.TERMINATION_ABORTED: "aborted", pb.TERMINATION_HAND_LIMIT: "hand_limit",
}


class Refusal(Exception):
    """A join or request the referee refuses; ``code`` names the gRPC status."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Forfeit(Exception):
    def __init__(self, faults: list[pb.Fault]) -> None:
        super().__init__(faults[0].detail)
        self.faults = faults


class Status(enum.IntEnum):
    """Match status (mirrors ``MatchStatus``)."""

    WAITING = mpb.MATCH_STATUS_WAITING
    RUNNING = mpb.MATCH_STATUS_RUNNING
    FINISHED = mpb.MATCH_STATUS_FINISHED


def hand_limit_result(scores: list[int], hands: int) -> pb.GameResult:
    """The adjudication of a game stopped at ``max_hands`` (TimeControl): each side placed
    by its score (equal scores share a place), a winner only if alone on top."""
    places = [1 + sum(1 for o in scores if o > s) for s in scores]
    res = pb.GameResult(termination=pb.TERMINATION_HAND_LIMIT, scores=list(scores),
                        places=places, hands_played=hands)
    if places.count(1) == 1:
        res.winner = places.index(1)
    return res


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
        self.faults: list[pb.Fault] = []
        self.action_ms: list[int] = []
        self.turn_seconds = 0.0
        """Every answered turn's time from sending it to the answer, summed (seconds): the
        precise total of what :attr:`action_ms` holds in whole milliseconds."""
        self.result: pb.GameResult | None = None
        self.record_path = ""
        self.logs: dict[int, str] = {}
        self.inbox: asyncio.Queue[_Item] = asyncio.Queue()
        self.done = asyncio.Event()
        self._next_request = 0
        self._pending: tuple[int, int, bpb.Turn] | None = None
        self._stop: tuple[int, str] | None = None
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
                self.fault(seat, pb.FAULT_REASON_PROTOCOL_ERROR,
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
            time_control=self.tc.to_pb(), protocol_version=PROTOCOL_VERSION,
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

    def fault(self, seat: int, reason: int, detail: str, forfeit: bool) -> pb.Fault:
        """Record (and broadcast) a fault of ``seat``."""
        f = pb.Fault(seat=seat, reason=reason, detail=detail, forfeit=forfeit)  # type: ignore[arg-type]
        self.faults.append(f)
        public = f
        if reason == pb.FAULT_REASON_ILLEGAL_ACTION:
            public = pb.Fault(seat=seat, reason=reason, forfeit=forfeit,  # type: ignore[arg-type]
                              detail="an illegal action (the reason went to the seat alone)")
        self._emit(fault=public)
        log.info("match %s seat %d fault %s: %s", self.match_id, seat,
                 FAULT_NAMES.get(reason, reason), detail)
        return f

    def _forfeit(self, seat: int, reason: int, detail: str) -> _Forfeit:
        return _Forfeit([self.fault(seat, reason, detail, forfeit=True)])

    # -- the game ------------------------------------------------------------------------
    def start(self) -> None:
        """Start the match task (call from the event loop)."""
        self._task = asyncio.get_running_loop().create_task(self._run(),
                                                            name=f"match-{self.match_id}")

    def stop(self, termination: int, reason: str) -> None:
        """Cancel the match: it ends as ``termination`` (CANCELLED or ABORTED)."""
        if self.status != Status.FINISHED and self._task is not None and self._stop is None:
            self._stop = (termination, reason)
            self._task.cancel()

    async def _run(self) -> None:
        result: pb.GameResult
        try:
            await self._wait_for_seats()
            self.status = Status.RUNNING
            self._emit(hand_started=pb.HandStarted(hand_number=0, dealer=self.state.dealer))
            while not self.state.is_terminal():
                if len(self.state.hand_records) >= self.tc.max_hands:
                    break
                await self._turn(self.state.current)
            if self.state.outcome is not None:
                result = outcome_to_pb(self.state.outcome, len(self.state.hand_records))
            else:
                result = hand_limit_result(self.state.scores, len(self.state.hand_records))
        except _Forfeit as f:
            result = self._forfeit_result(f.faults)
        except asyncio.CancelledError:
            term, why = self._stop or (pb.TERMINATION_ABORTED, "cancelled")
            result = pb.GameResult(termination=term,  # type: ignore[arg-type]
                                   scores=list(self.state.scores),
                                   hands_played=len(self.state.hand_records))
            log.info("match %s stopped: %s", self.match_id, why)
        except Exception:  # an infrastructure fault: never scored against a bot
            log.exception("match %s: internal error", self.match_id)
            result = pb.GameResult(termination=pb.TERMINATION_ABORTED,
                                   scores=list(self.state.scores),
                                   hands_played=len(self.state.hand_records))
        self._finish(result)

    def _forfeit_result(self, faults: list[pb.Fault]) -> pb.GameResult:
        r = self.ruleset
        offenders = {r.side_of(f.seat) for f in faults}
        scores = list(self.state.scores)
        others = [s for s in range(r.num_sides) if s not in offenders]
        places = [0] * r.num_sides
        for s in others:
            places[s] = 1 + sum(1 for o in others if scores[o] > scores[s])
        for s in offenders:
            places[s] = len(others) + 1
        res = pb.GameResult(termination=pb.TERMINATION_FORFEIT, scores=scores, places=places,
                            forfeit=faults[0],
                            hands_played=len(self.state.hand_records)
                            + (self.status == Status.RUNNING))
        best = [s for s in others if places[s] == 1]
        if len(best) == 1:
            res.winner = best[0]
        return res

    def _finish(self, result: pb.GameResult) -> None:
        self.result = result
        self.status = Status.FINISHED
        self.finished_at = _now_iso()
        self._pending = None
        self._emit(game_ended=result)
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
            raise self._forfeit(s, pb.FAULT_REASON_PROTOCOL_ERROR, item.payload)
        if item.kind == "reply":
            what = item.payload.WhichOneof("kind") or "an empty message"
            if what == "join":
                raise self._forfeit(s, pb.FAULT_REASON_PROTOCOL_ERROR,
                                    "sent a second join on its stream")
            raise self._forfeit(s, pb.FAULT_REASON_PROTOCOL_ERROR,
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
            return self._forfeit(seat, pb.FAULT_REASON_OUT_OF_MEMORY,
                                 f"the bot was killed for using too much memory {when}")
        if rc == EXIT_REFUSED and not self.joined[seat]:
            return self._forfeit(seat, pb.FAULT_REASON_PROTOCOL_ERROR,
                                 "the bot exited with code 3 (refused by the referee: a bad "
                                 "token or protocol version) before joining")
        return self._forfeit(seat, pb.FAULT_REASON_CRASH,
                             f"the bot process exited (code {rc}) {when}"
                             + (f": {detail}" if detail else ""))

    async def _wait_for_seats(self) -> None:
        deadline = self.created_mono + self.tc.startup_ms / 1000
        while not all(self.joined):
            item = await self._next(deadline)
            if item is None:
                missing = [s for s in range(self.n) if not self.joined[s]]
                raise _Forfeit([
                    self.fault(s, pb.FAULT_REASON_STARTUP_STALL,
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
                            seat, pb.FAULT_REASON_DISCONNECT,
                            f"the stream dropped and did not come back within "
                            f"{self.tc.reconnect_ms} ms")
                    self.bank_ms[seat] = 0
                    raise self._forfeit(
                        seat, pb.FAULT_REASON_TIMEOUT,
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
                        seat, pb.FAULT_REASON_PROTOCOL_ERROR,
                        f"answered request {msg.action.request_id}, but the open request is "
                        f"{rid}")
                if item.at < sent:
                    raise self._forfeit(
                        seat, pb.FAULT_REASON_PROTOCOL_ERROR,
                        f"answered request {rid} before it was sent")
                self.turn_seconds += item.at - sent
                ms = int((item.at - sent) * 1000)
                over = ms - self.tc.decision_ms
                if over > 0:
                    self.bank_ms[seat] = max(0, self.bank_ms[seat] - over)
                try:
                    action = action_from_pb(msg.action.action)
                except ProtocolError as e:
                    raise self._forfeit(seat, pb.FAULT_REASON_PROTOCOL_ERROR,
                                        f"sent a malformed action: {e}") from None
                try:
                    self._apply(seat, action, ms)
                    return
                except IllegalActionError as e:
                    left = self.retries_left[seat]
                    self.fault(seat, pb.FAULT_REASON_ILLEGAL_ACTION, str(e), forfeit=left == 0)
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
            write_json_atomic(path, self.record())
            self.record_path = str(path)
        except OSError:
            log.exception("match %s: cannot write the record", self.match_id)

    # -- views ---------------------------------------------------------------------------
    def info(self) -> mpb.MatchInfo:
        """The match as a ``MatchInfo`` message."""
        m = mpb.MatchInfo(
            match_id=self.match_id, status=self.status.value,  # type: ignore[arg-type]
            ruleset=ruleset_to_pb(self.ruleset, self.preset),
            seed=self.seed if self.status == Status.FINISHED else 0,
            seats=[mpb.SeatInfo(seat=i, name=n, version=v, connected=self.links[i] is not None)
                   for i, (n, v) in enumerate(self.seats)],
            time_control=self.tc.to_pb(), scores=list(self.state.scores),
            hands_played=len(self.state.hand_records), record_path=self.record_path,
            faults=self.faults)
        if self.result is not None:
            m.result.CopyFrom(self.result)
        return m

    def record(self) -> dict[str, Any]:
        """The game record (built by :func:`moon_sdk.records.game_record`)."""
        res = self.result or pb.GameResult()
        forfeit = None
        if res.HasField("forfeit"):
            forfeit = _fault_dict(res.forfeit)
        return game_record(
            match_id=self.match_id, created_at=self.created_at, finished_at=self.finished_at,
            preset=self.preset, ruleset=self.ruleset, seed=self.seed,
            time_control=self.tc.__dict__.copy(),
            seats=[{"seat": i, "name": n, "version": v,
                    "reported_name": self.joined_as[i][0],
                    "reported_version": self.joined_as[i][1]}
                   for i, (n, v) in enumerate(self.seats)],
            actions=self.state.history, action_ms=self.action_ms,
            result={
                "termination": TERMINATION_NAMES.get(res.termination, "unknown"),
                "winner": res.winner if res.HasField("winner") else None,
                "scores": list(res.scores), "places": list(res.places),
                "forfeit": forfeit, "hands_played": res.hands_played,
            },
            faults=[_fault_dict(f) for f in self.faults],
            bank_ms_left=self.bank_ms, logs=self.logs)

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


def _fault_dict(f: pb.Fault) -> dict[str, Any]:
    return {"seat": f.seat, "reason": FAULT_NAMES.get(f.reason, "unknown"),
            "detail": f.detail, "forfeit": f.forfeit}


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
            m.stop(pb.TERMINATION_ABORTED, "the referee is shutting down")
        for m in running:
            await m.done.wait()


def default_record_dir() -> Path:
    """``./runs/records`` — where games are recorded unless told otherwise."""
    return Path("runs") / "records"


__all__ = ["Match", "Referee", "Refusal", "SeatLink", "Status", "ConfigError",
           "MAX_MESSAGE_BYTES", "FAULT_NAMES", "TERMINATION_NAMES", "default_record_dir"]
