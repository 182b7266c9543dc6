"""Play games in this process: the bots that enter the arena, without processes or gRPC.

    from moon_sdk.local import play_local, play_games

    record = play_local([MyBot(), RandomBot(), RandomBot()], "moon3", seed=7)
    record["result"]["places"]          # [1, 3, 2]
    for record in play_games([MyBot, RandomBot, RandomBot], range(1000), processes=2):
        ...

:func:`play_local` referees one game the way the arena's referee does: the same engine,
the same :class:`~moon_sdk.rules.Observation` each turn (what the referee's ``observe``
gives, after the same protocol round trip a bot makes over gRPC: the test suite checks
that the two are equal at every turn), the same hooks in the same order (``on_welcome``,
``on_event`` for a bot that listens, ``on_rejected``, ``on_game_over``), what ``act``
returns taken as the SDK takes it over gRPC (:func:`moon_sdk.bot.checked_action`), the
same illegal action rule (a fault, then a retry; one more than the time control's
``illegal_retries`` forfeits), the same ``max_hands`` adjudication, and the same record
(:func:`moon_sdk.records.game_record`), which `moon replay show|verify|html` read. With
deterministic bots and the same seed, a game played here and in the arena (`moon play`,
`moon ladder`) has the same actions, hands and result. What differs: nothing is timed
against a clock (the milliseconds in the record are each decision's thinking time), and a
bot that raises an exception stops the game with the traceback (``on_error="raise"``,
the default) or forfeits like a crashed bot process (``on_error="forfeit"``).

:func:`play_games` plays many games, one seed each, optionally across processes (a
:class:`concurrent.futures.ProcessPoolExecutor`).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import secrets
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

from .bot import Bot, checked_action
from .convert import (
    PROTOCOL_VERSION,
    hand_summary_to_pb,
    ruleset_to_pb,
    tile_to_pb,
    trick_to_pb,
    trump_to_pb,
)
from .records import game_record
from .rules import (
    PRESETS,
    ActionKind,
    GameState,
    HandSummary,
    IllegalActionError,
    Observation,
    Phase,
    Ruleset,
    action_kind,
    bid_value,
)
from .rules.actions import NUM_ACTIONS

log = logging.getLogger("moon_sdk")

DEFAULT_TIME_CONTROL: dict[str, int] = {"max_hands": 200, "illegal_retries": 2}
"""The limits a local game enforces, as the arena's defaults: a game that has not ended
after ``max_hands`` deals is adjudicated on the scores (``hand_limit``), and a seat may
retry ``illegal_retries`` illegal actions per game (one more forfeits). The arena's clock
fields (``decision_ms``, ``bank_ms``...) may be given too: they are passed to the bots in
the welcome, as the arena does, but nothing is timed."""

BotFactory = Bot | Callable[[], Bot]
"""A seat's bot: a :class:`Bot` instance (it plays every game it is given), or a class or
zero-argument callable that makes a fresh one per game (as the arena starts a fresh
process per game)."""

_TERMINATION = {"target": pb.TERMINATION_TARGET, "moon": pb.TERMINATION_MOON,
                "forfeit": pb.TERMINATION_FORFEIT, "hand_limit": pb.TERMINATION_HAND_LIMIT}
_FAULT = {"illegal_action": pb.FAULT_REASON_ILLEGAL_ACTION, "crash": pb.FAULT_REASON_CRASH}
_PUBLIC_ILLEGAL = "an illegal action (the reason went to the seat alone)"
_new_object = object.__new__
_set_attribute = object.__setattr__


def _preset_name(ruleset: Ruleset) -> str:
    return next((name for name, r in PRESETS.items() if r == ruleset), "")


def resolve_ruleset(ruleset: Ruleset | str, preset: str | None = None) -> tuple[Ruleset, str]:
    """``(ruleset, preset name)`` from a preset name or a :class:`Ruleset` (whose preset
    name is the one it equals, if any, unless ``preset`` names it).

    Raises:
        RulesetError: an unknown preset name.
    """
    if isinstance(ruleset, str):
        return Ruleset.preset(ruleset), ruleset if preset is None else preset
    return ruleset, _preset_name(ruleset) if preset is None else preset


def _make_bot(b: BotFactory, seat: int) -> Bot:
    bot = b if isinstance(b, Bot) or not callable(b) else b()
    if not isinstance(bot, Bot):
        raise TypeError(f"seat {seat}: {b!r} is not a moon_sdk.Bot, nor a class or function "
                        "that makes one")
    return bot


def _time_control(time_control: Mapping[str, int] | None) -> dict[str, int]:
    tc = dict(DEFAULT_TIME_CONTROL)
    known = set(pb.TimeControl.DESCRIPTOR.fields_by_name)
    for k, v in (time_control or {}).items():
        if k not in known:
            raise ValueError(f"unknown time control field {k!r}; known: {', '.join(sorted(known))}")
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"time control {k}={v!r}: must be a whole number >= 0")
        tc[k] = v
    if tc["max_hands"] < 1:
        raise ValueError("time control max_hands must be at least 1")
    return tc


class Observer:
    """``observe(state, seat)`` for one game followed from start to end, without
    re-summarising every finished hand on every call (the summaries are kept as the game
    goes): the :class:`Observation` equals :func:`moon_sdk.rules.observe`'s, which is what
    a bot decodes from the referee's Turn message (the tests check both at every turn).

    Call it as ``observer(state, seat, legal)`` with ``legal`` the seat's legal actions if
    it is to act, else empty; always with the same game."""

    __slots__ = ("summaries",)

    def __init__(self) -> None:
        self.summaries: tuple[HandSummary, ...] = ()

    def __call__(self, s: GameState, seat: int, legal: list[int]) -> Observation:
        records = s.hand_records
        if len(records) != len(self.summaries):
            self.summaries += tuple(
                HandSummary(h.number, h.dealer, h.bids, h.bidder, h.bid, h.trump,
                            h.tricks_taken, h.made, h.deltas, h.scores)
                for h in records[len(self.summaries):])
        is_bidder = seat == s.bidder
        over = s.phase == Phase.GAME_OVER
        o = _new_object(Observation)
        # the fields of a frozen dataclass at once (its __init__ sets them one by one)
        _set_attribute(o, "__dict__", {
            "seat": seat, "ruleset": s.ruleset, "phase": s.phase,
            "hand_number": s.hand_number, "dealer": s.dealer,
            "current_player": -1 if over else s.current,
            "hand": s.hands[seat], "widow": s.widow if is_bidder and s.widow_taken else 0,
            "discard": s.discard if is_bidder else -1, "bids": tuple(s.bids),
            "bidder": s.bidder, "bid": s.high_bid, "trump": s.trump, "tricks": tuple(s.tricks),
            "trick": tuple(s.trick), "tricks_taken": tuple(s.tricks_taken),
            "scores": tuple(s.scores), "hands": self.summaries,
            "legal_actions": tuple(legal), "outcome": s.outcome})
        return o


class _Table:
    """One game's bots and the public events they hear (numbered as the referee does)."""

    def __init__(self, bots: list[Bot]) -> None:
        self.bots = bots
        self.loud = [seat for seat, b in enumerate(bots) if not b.quiet()]
        self.sequence = 0
        self.crashed: set[int] = set()
        self.calling = -1
        """The seat whose ``on_event`` is running, else -1."""

    def emit(self, **kind: Any) -> None:
        self.sequence += 1
        if self.loud:
            ev = pb.Event(sequence=self.sequence, **kind)
            for seat in self.loud:
                if seat not in self.crashed:
                    self.calling = seat
                    self.bots[seat].on_event(ev)
            self.calling = -1

    def after(self, s: GameState, seat: int, action: int, hands_before: int,
              tricks_before: int, widow_before: bool, max_hands: int) -> None:
        """The events of one applied action, as the referee sends them."""
        if not self.loud:  # nobody listens: only count them (the end's number shows)
            finished = len(s.hand_records) > hands_before
            self.sequence += 1 + (not finished and s.widow_taken and not widow_before)
            if action < 28 and (finished or len(s.tricks) > tricks_before):
                self.sequence += 1
            if finished:
                self.sequence += 1 + (not s.is_terminal() and len(s.hand_records) < max_hands)
            return
        kind = action_kind(action)
        if kind is ActionKind.BID:
            self.emit(bid=pb.SeatBid(seat=seat, value=bid_value(action)))
        elif kind is ActionKind.DISCARD:
            self.emit(discarded=pb.SeatOnly(seat=seat))
        elif kind is ActionKind.TRUMP:
            self.emit(trump_named=pb.TrumpNamed(seat=seat, trump=trump_to_pb(s.trump)))
        else:
            self.emit(played=pb.SeatPlay(seat=seat, tile=tile_to_pb(action)))
        finished = len(s.hand_records) > hands_before
        if not finished and s.widow_taken and not widow_before:
            self.emit(widow_taken=pb.SeatOnly(seat=s.bidder))
        tricks = s.hand_records[-1].tricks if finished else tuple(s.tricks)
        if kind is ActionKind.PLAY and len(tricks) > tricks_before:
            t = tricks[-1]
            self.emit(trick_won=pb.TrickWon(seat=t.winner, trick_number=len(tricks) - 1,
                                            trick=trick_to_pb(t)))
        if finished:
            h = s.hand_records[-1]
            self.emit(hand_ended=hand_summary_to_pb(HandSummary(
                h.number, h.dealer, h.bids, h.bidder, h.bid, h.trump, h.tricks_taken, h.made,
                h.deltas, h.scores)))
            if not s.is_terminal() and len(s.hand_records) < max_hands:
                self.emit(hand_started=pb.HandStarted(hand_number=s.hand_number,
                                                      dealer=s.dealer))

    def fault(self, fault: dict[str, Any]) -> None:
        detail = _PUBLIC_ILLEGAL if fault["reason"] == "illegal_action" else fault["detail"]
        self.emit(fault=pb.Fault(seat=fault["seat"], reason=_FAULT[fault["reason"]],
                                 detail=detail, forfeit=fault["forfeit"]))


def _result_pb(result: Mapping[str, Any]) -> pb.GameResult:
    m = pb.GameResult(termination=_TERMINATION[result["termination"]],
                      scores=result["scores"], places=result["places"],
                      hands_played=result["hands_played"])
    if result["winner"] is not None:
        m.winner = result["winner"]
    f = result["forfeit"]
    if f is not None:
        m.forfeit.CopyFrom(pb.Fault(seat=f["seat"], reason=_FAULT[f["reason"]],
                                    detail=f["detail"], forfeit=True))
    return m


def _forfeit_result(ruleset: Ruleset, s: GameState, fault: dict[str, Any]) -> dict[str, Any]:
    """The referee's adjudication of a forfeit: the offending side last, the others placed
    by their scores (docs/protocol.md, faults)."""
    offender = ruleset.side_of(fault["seat"])
    scores = list(s.scores)
    others = [x for x in range(ruleset.num_sides) if x != offender]
    places = [0] * ruleset.num_sides
    for x in others:
        places[x] = 1 + sum(1 for o in others if scores[o] > scores[x])
    places[offender] = len(others) + 1
    best = [x for x in others if places[x] == 1]
    return {"termination": "forfeit", "winner": best[0] if len(best) == 1 else None,
            "scores": scores, "places": places, "forfeit": fault,
            "hands_played": len(s.hand_records) + 1}


def _rules_result(s: GameState) -> dict[str, Any]:
    if s.outcome is not None:
        o = s.outcome
        return {"termination": o.termination.value, "winner": o.winner,
                "scores": list(o.scores), "places": list(o.places), "forfeit": None,
                "hands_played": len(s.hand_records)}
    # stopped at max_hands: places by score, a winner only if alone on top
    places = [1 + sum(1 for o in s.scores if o > x) for x in s.scores]
    return {"termination": "hand_limit",
            "winner": places.index(1) if places.count(1) == 1 else None,
            "scores": list(s.scores), "places": places, "forfeit": None,
            "hands_played": len(s.hand_records)}


def play_local(bots: Sequence[BotFactory], ruleset: Ruleset | str = "moon3", *,
               seed: int | None = None, preset: str | None = None,
               time_control: Mapping[str, int] | None = None, game_id: str | None = None,
               on_error: str = "raise", record_path: str | Path | None = None
               ) -> dict[str, Any]:
    """Play one game between ``bots`` (seat 0 first) in this process and return its record.

    Args:
        bots: one per seat (3 or 4, as the ruleset says): :class:`Bot` instances, or
            classes or zero-argument callables that make one (see :data:`BotFactory`).
        ruleset: a preset name (``"moon3"``, ``"moon4"``...) or a :class:`Ruleset`.
        seed: the seed of the deals and the first dealer (docs/rules.md, "Deal and
            dealer"); random if None.
        preset: the preset name to record (default: the one given, or the one the ruleset
            equals).
        time_control: limits, as the arena's (see :data:`DEFAULT_TIME_CONTROL`).
        game_id: the record's ``match_id``; default ``local-<seed>``.
        on_error: ``"raise"`` (an exception in a bot propagates, with the game and seat in
            a note) or ``"forfeit"`` (the seat forfeits, as a crashed bot process does).
        record_path: also write the record there (JSON), e.g. for `moon replay`.

    Returns:
        The game record, the dict `moon replay show|verify|html` read
        (:func:`moon_sdk.records.game_record`): ``record["result"]`` holds the
        ``termination``, the ``winner`` side, ``scores`` and ``places`` by side.

    Raises:
        ValueError: wrong number of bots, a bad time control or ``on_error``.
        RulesetError: an unknown preset.
        Exception: what a bot raised, with ``on_error="raise"``.
    """
    rules, preset_name = resolve_ruleset(ruleset, preset)
    if len(bots) != rules.players:
        raise ValueError(f"the ruleset is for {rules.players} players; {len(bots)} bots given")
    if on_error not in ("raise", "forfeit"):
        raise ValueError(f"on_error must be 'raise' or 'forfeit', not {on_error!r}")
    tc = _time_control(time_control)
    if seed is None:
        seed = secrets.randbits(63)
    game_id = game_id or f"local-{seed}"
    table = _Table([_make_bot(b, i) for i, b in enumerate(bots)])
    record = _referee(table, rules, preset_name, seed, tc, game_id, on_error)
    if record_path is not None:
        save_record(record, record_path)
    return record


def _note(e: Exception, table: _Table, seat: int, game_id: str) -> None:
    if hasattr(e, "add_note"):  # Python 3.11+
        e.add_note(f"(moon_sdk.local: game {game_id}, seat {seat}, "
                   f"{type(table.bots[seat]).__name__})")


def _referee(table: _Table, rules: Ruleset, preset: str, seed: int, tc: dict[str, int],
             game_id: str, on_error: str) -> dict[str, Any]:
    bots = table.bots
    s = GameState(rules, seed)
    max_hands = tc["max_hands"]
    retries = [tc["illegal_retries"]] * rules.players
    ruleset_pb = ruleset_to_pb(rules, preset)
    time_pb = pb.TimeControl(**tc)
    names = [b.name for b in bots]
    faults: list[dict[str, Any]] = []
    action_ms: list[int] = []
    observer = Observer()
    request = 0
    result: dict[str, Any] | None = None
    perf = time.perf_counter
    hand_records = s.hand_records
    calling = -1  # the seat whose hook is running (a bot's exception is that seat's)
    try:
        for seat, b in enumerate(bots):
            calling = seat
            b.on_welcome(bpb.Welcome(
                match_id=game_id, seat=seat, ruleset=ruleset_pb, time_control=time_pb,
                protocol_version=PROTOCOL_VERSION, seat_names=names, resumed=False))
        calling = -1
        table.emit(hand_started=pb.HandStarted(hand_number=0, dealer=s.dealer))
        while s.phase != Phase.GAME_OVER and len(hand_records) < max_hands:
            seat = s.current
            bot = bots[seat]
            request += 1
            obs = observer(s, seat, s.legal_actions())
            calling = seat
            t0 = perf()
            action = bot.act(obs)
            ms = int((perf() - t0) * 1000)
            calling = -1
            if action.__class__ is not int or not 0 <= action < NUM_ACTIONS:
                # as over gRPC: an integral value is its int, no action at all is logged
                # and replaced by a surely illegal one (rejected, then retried)
                action, why = checked_action(action, obs)
                if why:
                    log.error("%s.%s", type(bot).__name__, why)
            hands_before, tricks_before, widow_before = (
                len(hand_records), len(s.tricks), s.widow_taken)
            try:
                s.apply(action)
            except IllegalActionError as e:
                left = retries[seat]
                fault = {"seat": seat, "reason": "illegal_action", "detail": str(e),
                         "forfeit": left == 0}
                faults.append(fault)
                table.fault(fault)
                if left == 0:
                    result = _forfeit_result(rules, s, fault)
                    break
                retries[seat] = left - 1
                calling = seat
                bot.on_rejected(bpb.Rejected(request_id=request, reason=str(e),
                                             retries_left=left - 1))
                calling = -1
                continue
            action_ms.append(ms)
            table.after(s, seat, action, hands_before, tricks_before, widow_before,
                        max_hands)
    except Exception as e:
        culprit = calling if calling >= 0 else table.calling
        if culprit < 0:
            raise  # not a bot's: ours
        if on_error != "forfeit":
            _note(e, table, culprit, game_id)
            raise
        # as a crashed bot process: a fault that forfeits (docs/protocol.md, faults)
        table.calling = -1
        fault = {"seat": culprit, "reason": "crash", "forfeit": True,
                 "detail": f"the bot raised {type(e).__name__}: {e}"}
        faults.append(fault)
        table.crashed.add(culprit)
        table.fault(fault)
        result = _forfeit_result(rules, s, fault)
    if result is None:
        result = _rules_result(s)
    end = _result_pb(result)
    table.sequence += 1
    ended = pb.Event(sequence=table.sequence, game_ended=end)
    for seat, b in enumerate(bots):
        if seat in table.crashed:
            continue
        try:
            b.on_event(ended)
            b.on_game_over(end)
        except Exception as e:
            if on_error != "forfeit":  # (else ignored: the game is over, nothing to forfeit)
                _note(e, table, seat, game_id)
                raise
    return game_record(
        match_id=game_id, ruleset=rules, preset=preset, seed=seed,
        seats=[{"seat": i, "name": b.name, "version": b.version, "reported_name": b.name,
                "reported_version": b.version} for i, b in enumerate(bots)],
        actions=s.history, action_ms=action_ms, result=result, faults=faults,
        time_control=tc, state=s)


def save_record(record: Mapping[str, Any], path: str | Path) -> Path:
    """Write a record as JSON (atomically: a temporary file, then a rename), as the arena
    writes its records. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


# -- many games --------------------------------------------------------------------------
_worker_options: dict[str, Any] = {}
"""In a worker process of :func:`play_games`: what every game there is played with."""


def _init_worker(options: dict[str, Any]) -> None:
    _worker_options.update(options)


def _play_chunk(jobs: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [_play_job(_worker_options, job) for job in jobs]


def _play_job(o: Mapping[str, Any], job: tuple[int, int]) -> dict[str, Any]:
    index, seed = job
    record_dir = o["record_dir"]
    game_id = f"{o['prefix']}{index:06d}"
    return play_local(o["bots"], o["ruleset"], seed=seed, preset=o["preset"],
                      time_control=o["time_control"], game_id=game_id,
                      on_error=o["on_error"],
                      record_path=None if record_dir is None else Path(record_dir)
                      / f"{game_id}.json")


def play_games(bots: Sequence[BotFactory], seeds: Iterable[int],
               ruleset: Ruleset | str = "moon3", *, processes: int = 1,
               preset: str | None = None, time_control: Mapping[str, int] | None = None,
               on_error: str = "raise", record_dir: str | Path | None = None,
               prefix: str = "local-", chunksize: int = 4) -> Iterator[dict[str, Any]]:
    """Play one game per seed (with :func:`play_local`) and yield the records in the seeds'
    order.

    Args:
        bots: one per seat; give classes (or zero-argument callables) for a fresh bot per
            game, as in the arena. An instance plays every game itself (in each process:
            each worker has its own copy).
        seeds: one game per seed.
        processes: worker processes (a ``ProcessPoolExecutor``); 1 plays here. With more,
            the bots must pickle (module-level classes do).
        record_dir: also write each record to ``<record_dir>/<game id>.json``; the game
            ids are ``<prefix><index>`` (index in ``seeds``, six digits).
        chunksize: seeds handed to a worker at a time (a few such chunks per worker are
            in flight at once, so ``seeds`` may be endless).

    Returns:
        An iterator of records; stopping early stops the workers.

    Raises:
        ValueError: ``processes`` below 1, or as :func:`play_local` (at once, before any
            game).
    """
    rules, preset_name = resolve_ruleset(ruleset, preset)
    if processes < 1:
        raise ValueError(f"processes must be at least 1, not {processes}")
    if len(bots) != rules.players:
        raise ValueError(f"the ruleset is for {rules.players} players; {len(bots)} bots given")
    _time_control(time_control)  # a bad one fails here, not in every worker
    options = {"bots": list(bots), "ruleset": rules, "preset": preset_name,
               "time_control": dict(time_control or {}), "on_error": on_error,
               "record_dir": None if record_dir is None else str(record_dir),
               "prefix": prefix}
    return _games(options, enumerate(seeds), processes, chunksize)


def _games(options: dict[str, Any], jobs: Iterator[tuple[int, int]], processes: int,
           chunksize: int) -> Iterator[dict[str, Any]]:
    if processes == 1:
        for job in jobs:
            yield _play_job(options, job)
        return
    # A few chunks in flight per worker, no more: the seeds may be millions, and records
    # wait here only until they are taken.
    chunks = iter(lambda: list(itertools.islice(jobs, chunksize)), [])
    pool = ProcessPoolExecutor(max_workers=processes, initializer=_init_worker,
                               initargs=(options,))
    try:
        pending = deque(pool.submit(_play_chunk, c)
                        for c in itertools.islice(chunks, 2 * processes))
        while pending:
            done = pending.popleft().result()
            more = next(chunks, None)
            if more is not None:
                pending.append(pool.submit(_play_chunk, more))
            yield from done
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


__all__ = ["DEFAULT_TIME_CONTROL", "BotFactory", "Observer", "play_games", "play_local",
           "resolve_ruleset", "save_record"]
