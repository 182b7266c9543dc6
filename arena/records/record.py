"""Game records: a versioned JSON document per game, read once into a typed record, and
`verify` that re-simulates one.

A record holds the schema version, the ruleset, the seed and the version of the deal that
dealt from it, the seats (bot name and version, and a seat's own clock when it had one:
``clock``, its ``decision_ms`` and ``bank_ms``), every hand (dealer, each seat's dealt
tiles and the widow, the bids, the discard, the trump, every play with its seat and
milliseconds, each trick's winner, the hand's scores), the engine's action list, the
result and its termination reason, and every fault. The seed plus the actions are the
whole game; the rest is there for people and tools, and `verify` checks that it agrees
with a re-simulation.

Writing: the referee builds a match's document (:func:`arena.referee.referee.game_record`,
with :mod:`moon_sdk.records`, which the SDK's in-process runner shares, and
:func:`fault_dict`, :func:`result_dict` here); :func:`write_json_atomic` writes it. Reading:
:func:`load_record` checks a file's envelope and gives its JSON document;
:func:`read_record` gives a :class:`GameRecord`, every field typed, whose
:attr:`~GameRecord.errors` name each damaged field (in the manner of python-chess's
``Game.errors``); the viewers (`moon replay show|html`) and :func:`verify_record` read
that, never the raw document.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moon_sdk.records import SCHEMA, SCHEMA_VERSION, hands_from_actions  # noqa: F401 (re-exported)
from moon_sdk.rules import DEAL_VERSION, GameState, IllegalActionError, Ruleset, RulesetError

from ..core.results import Fault, GameResult
from ..errors import RecordError


def fault_dict(f: Fault) -> dict[str, Any]:
    """A fault as a record holds it: ``{"seat", "reason" (its key), "detail", "forfeit"}``."""
    return {"seat": f.seat, "reason": f.reason.key, "detail": f.detail, "forfeit": f.forfeit}


def result_dict(r: GameResult | None) -> dict[str, Any]:
    """A result as a record holds it (``termination`` by its key; "unknown" if none)."""
    if r is None:
        return {"termination": "unknown", "winner": None, "scores": [], "places": [],
                "forfeit": None, "hands_played": 0}
    return {"termination": r.termination.key, "winner": r.winner, "scores": list(r.scores),
            "places": list(r.places),
            "forfeit": None if r.forfeit is None else fault_dict(r.forfeit),
            "hands_played": r.hands_played}


def write_json_atomic(path: str | Path, data: dict[str, Any]) -> None:
    """Write JSON to ``path`` atomically (temp file + rename), so a crash never leaves a
    half-written record."""
    # compact, one line: an indented document goes through the json module's pure-Python
    # encoder, some 40 times slower (12 ms against 0.3 ms for a 40 KB record), and every
    # game's record is written on a busy host (`python -m json.tool` indents one to read)
    write_atomic(path, (json.dumps(data, separators=(",", ":")) + "\n").encode())


def write_atomic(path: str | Path, data: bytes, sync: bool = True) -> None:
    """Write ``path`` whole or not at all (a temporary file in its folder, renamed), synced
    to disk first unless not ``sync``.

    Raises:
        OSError: it could not be written (a full disk...); no temporary file is left.
    """
    folder, name = os.path.split(os.fspath(path))
    os.makedirs(folder or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder or ".", prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # a full disk, say: no half-written temp file left on it
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record's JSON document and check its envelope (the schema, its version, and
    the top-level fields a record cannot do without); :func:`read_record` reads it into a
    typed :class:`GameRecord`.

    Raises:
        RecordError: unreadable, not JSON, not a game record, or a newer schema version.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path} is not valid JSON (line {e.lineno}: {e.msg}); "
                          "the file is damaged or not a game record") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path} is not UTF-8 text; the file is damaged or not a game "
                          "record") from None
    except RecursionError:
        raise RecordError(f"{path} nests too deeply to be a game record") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise RecordError(f"{path} is not a Moon Arena game record (no schema {SCHEMA!r})")
    v = data.get("schema_version")
    if v != SCHEMA_VERSION:
        raise RecordError(f"{path} has schema_version {v!r}; this version of moon reads "
                          f"{SCHEMA_VERSION}: upgrade moon-arena to read it")
    for key, kind in _SHAPE.items():
        if key not in data:
            raise RecordError(f"{path} lacks the field {key!r}")
        if not isinstance(data[key], kind) or isinstance(data[key], bool):
            raise RecordError(f"{path}: the field {key!r} must be {_KIND_NAMES[kind]}, not "
                              f"{type(data[key]).__name__}; the record is damaged")
    for key, kind in (("seats", dict), ("hands", dict), ("faults", dict), ("actions", int)):
        items = data.get(key, [])
        if not isinstance(items, list) or not all(
                isinstance(x, kind) and not isinstance(x, bool) for x in items):
            raise RecordError(f"{path}: the field {key!r} must be a list of "
                              f"{'objects' if kind is dict else 'ints'}; the record is damaged")
    if not all(isinstance(x.get("name"), str) for x in data["seats"]):
        raise RecordError(f"{path}: every seat must have a name; the record is damaged")
    return data


_SHAPE: dict[str, type | tuple[type, ...]] = {
    "ruleset": dict, "seed": (int, str), "seats": list, "actions": list, "hands": list,
    "result": dict}
_KIND_NAMES: dict[type | tuple[type, ...], str] = {
    dict: "an object", list: "a list", (int, str): "an int (or its digits)"}


# -- reading: a record loaded once into typed parts that collect what is wrong ------------
class _Fields:
    """Reads the fields of one JSON object into typed values; each one missing or of the
    wrong type becomes an entry in ``errors`` ("hand 2 bidder: 'x' is not an int") and the
    field's default (in the manner of python-chess's ``Game.errors``)."""

    def __init__(self, data: object, where: str, errors: list[str]) -> None:
        self.where = where
        self.errors = errors
        self.broken = not isinstance(data, dict)
        """Not an object at all: said once, its fields are not each called missing."""
        if self.broken:
            errors.append(f"{where}: {_short(data)} is not an object")
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}

    def _bad(self, key: str, v: object, what: str) -> None:
        self.errors.append(f"{self.where}{' ' if self.where else ''}{key}: {_short(v)} is not "
                           f"{what}")

    def _get(self, key: str, required: bool) -> tuple[bool, Any]:
        if key not in self.data:
            if required and not self.broken:
                self.errors.append(f"{self.where}{' ' if self.where else ''}{key}: missing")
            return False, None
        return True, self.data[key]

    def int(self, key: str, default: int | None = None, *, required: bool = True
            ) -> int | None:
        """An int (not a bool); None allowed only where ``default`` is None."""
        there, v = self._get(key, required)
        if not there or (v is None and default is None):
            return default
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        self._bad(key, v, "an int" + (" or null" if default is None else ""))
        return default

    def str(self, key: str, default: str | None = "", *, required: bool = True) -> str | None:
        """A string; None allowed only where ``default`` is None."""
        there, v = self._get(key, required)
        if not there or (v is None and default is None):
            return default
        if isinstance(v, str):
            return v
        self._bad(key, v, "a string" + (" or null" if default is None else ""))
        return default

    # Below, the builtins are named as such: `str`, `bool` and `int` are methods here.
    def bool(self, key: builtins.str, default: builtins.bool | None = False, *,
             required: builtins.bool = True) -> builtins.bool | None:
        """A bool; None allowed only where ``default`` is None."""
        there, v = self._get(key, required)
        if not there or (v is None and default is None):
            return default
        if isinstance(v, bool):
            return v
        self._bad(key, v, "true or false" + (" or null" if default is None else ""))
        return default

    def ints(self, key: builtins.str, *, required: builtins.bool = True,
             nullable: builtins.bool = False) -> tuple[builtins.int, ...] | None:
        """A list of ints (as a tuple); empty when missing or malformed, or None where
        ``nullable`` and null."""
        there, v = self._get(key, required)
        if there and v is None and nullable:
            return None
        if not there:
            return None if nullable else ()
        if isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool)
                                       for x in v):
            return tuple(v)
        self._bad(key, v, "a list of ints" + (" or null" if nullable else ""))
        return None if nullable else ()

    def strs(self, key: builtins.str, *, required: builtins.bool = True
             ) -> tuple[builtins.str, ...]:
        """A list of strings (as a tuple); empty when missing or malformed."""
        there, v = self._get(key, required)
        if not there:
            return ()
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return tuple(v)
        self._bad(key, v, "a list of strings")
        return ()

    def objects(self, key: builtins.str, *, required: builtins.bool = True) -> list[object]:
        """A list (its items are read by the caller); empty when missing or malformed."""
        there, v = self._get(key, required)
        if not there:
            return []
        if isinstance(v, list):
            return v
        self._bad(key, v, "a list")
        return []


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class RecordedSeat:
    """A seat as recorded: the bot meant for it, and what the bot said it was."""

    seat: int
    name: str
    version: str
    reported_name: str
    reported_version: str

    @property
    def shown_name(self) -> str:
        """The name to show: a seat started by hand (named ``manual``,
        :data:`arena.executor.game.MANUAL`) shows the name its bot reported once it joined."""
        return self.reported_name if self.name == "manual" and self.reported_name else self.name


@dataclass(frozen=True)
class RecordedBid:
    """A bid or pass (``bid`` 0) of a hand."""

    seat: int | None
    bid: int
    ms: int | None


@dataclass(frozen=True)
class RecordedPlay:
    """A tile played (``"6-4"``), by a seat, with its milliseconds where recorded."""

    seat: int | None
    tile: str
    ms: int | None = None


@dataclass(frozen=True)
class RecordedTrick:
    """A finished trick: who led, the plays in order, who won it."""

    leader: int | None
    plays: tuple[RecordedPlay, ...]
    winner: int | None


@dataclass(frozen=True)
class RecordedHand:
    """One hand (deal) of a record: the deal, the auction, the contract, the plays and the
    tricks, and (finished) its outcome. Tiles and trumps are their names (``"6-4"``,
    ``"5"``, ``"doubles"``, ``"none"``)."""

    number: int
    dealer: int | None
    dealt: tuple[tuple[str, ...], ...]
    """Each seat's 7 dealt tiles."""
    widow: tuple[str, ...]
    bids: tuple[RecordedBid, ...]
    bidder: int | None
    bid: int
    discard: str | None
    discard_ms: int | None
    trump: str | None
    trump_ms: int | None
    plays: tuple[RecordedPlay, ...]
    """Every play in order (the tricks' plays, then those of a trick in progress)."""
    tricks: tuple[RecordedTrick, ...]
    tricks_taken: tuple[int, ...] | None
    made: bool | None
    deltas: tuple[int, ...] | None
    """Change of each side's score (None: unfinished)."""
    scores: tuple[int, ...] | None
    """Each side's score after the hand (None: unfinished)."""
    finished: bool

    def facts(self) -> dict[str, Any]:
        """Everything a re-simulation can check, in the record's JSON shape (no
        milliseconds): what :func:`verify_record` compares."""
        def trick(t: RecordedTrick) -> dict[str, Any]:
            return {"leader": t.leader, "plays": [{"seat": p.seat, "tile": p.tile}
                                                  for p in t.plays], "winner": t.winner}
        return {
            "number": self.number, "dealer": self.dealer,
            "dealt": [list(d) for d in self.dealt], "widow": list(self.widow),
            "bids": [{"seat": b.seat, "bid": b.bid} for b in self.bids],
            "bidder": self.bidder, "bid": self.bid, "discard": self.discard,
            "trump": self.trump, "plays": [{"seat": p.seat, "tile": p.tile}
                                           for p in self.plays],
            "tricks": [trick(t) for t in self.tricks],
            "tricks_taken": None if self.tricks_taken is None else list(self.tricks_taken),
            "made": self.made, "deltas": None if self.deltas is None else list(self.deltas),
            "scores": None if self.scores is None else list(self.scores),
            "finished": self.finished,
        }


@dataclass(frozen=True)
class RecordedFault:
    """A fault as recorded (``reason`` its key: ``"timeout"``, ``"crash"``, ...)."""

    seat: int | None
    reason: str
    detail: str
    forfeit: bool


@dataclass(frozen=True)
class RecordedResult:
    """The result as recorded (``termination`` its key: ``"target"``, ``"forfeit"``, ...)."""

    termination: str
    winner: int | None
    scores: tuple[int, ...]
    places: tuple[int, ...]
    forfeit: RecordedFault | None
    hands_played: int | None


@dataclass(frozen=True)
class GameRecord:
    """A game record, read once (:func:`read_record`, :meth:`from_dict`): every field
    typed, with a default where the file lacks it or holds something else, and
    :attr:`errors` saying what was wrong. Viewers show it as it is; :func:`verify_record`
    checks it against a re-simulation."""

    source: str
    """Where it was read from (a path), for messages."""
    match_id: str
    created_at: str
    finished_at: str
    preset: str
    ruleset: dict[str, Any]
    """As recorded (:meth:`moon_sdk.rules.Ruleset.from_dict` reads it)."""
    seed: int | None
    """None when the recorded seed is not an int (or its digits)."""
    deal_version: int
    time_control: dict[str, Any] | None
    """As recorded (milliseconds, counts), or None."""
    seats: tuple[RecordedSeat, ...]
    hands: tuple[RecordedHand, ...]
    actions: tuple[int, ...]
    result: RecordedResult
    faults: tuple[RecordedFault, ...]
    bank_ms_left: tuple[int, ...]
    logs: dict[str, str]
    """The end of each seat's stderr, by seat number as text."""
    errors: tuple[str, ...]
    """Every field that was missing or malformed, as a sentence (empty: well formed)."""

    @property
    def max_hands(self) -> int | None:
        """The time control's ``max_hands``, when recorded as an int."""
        v = (self.time_control or {}).get("max_hands")
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def seat_label(self, seat: int | None) -> str:
        """``"1:random"``, or ``"7:?"`` for a seat the record does not have; a manual
        seat by its bot's reported name (:attr:`RecordedSeat.shown_name`)."""
        if seat is not None and 0 <= seat < len(self.seats):
            return f"{seat}:{self.seats[seat].shown_name}"
        return f"{seat}:?"

    def side_labels(self) -> list[str]:
        """The scoring sides: each seat (3 players) or the partnerships {0, 2}, {1, 3}."""
        if len(self.seats) == 4:
            return [f"{self.seat_label(0)} & {self.seat_label(2)}",
                    f"{self.seat_label(1)} & {self.seat_label(3)}"]
        return [self.seat_label(i) for i in range(len(self.seats))]

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "") -> GameRecord:
        """Read a record's JSON document (its envelope already checked by
        :func:`load_record`, or not): never raises for a damaged field, which goes to
        :attr:`errors` with its default."""
        errors: list[str] = []
        top = _Fields(data, "", errors)
        seats = []
        for i, x in enumerate(top.objects("seats")):
            f = _Fields(x, f"seat {i}", errors)
            seats.append(RecordedSeat(
                i, str(f.str("name", "?")), str(f.str("version", required=False)),
                str(f.str("reported_name", required=False)),
                str(f.str("reported_version", required=False))))
        raw_seed = top.data.get("seed")
        seed: int | None = None
        try:
            seed = int(raw_seed)  # type: ignore[arg-type]
            if isinstance(raw_seed, bool) or isinstance(raw_seed, float):
                raise TypeError
        except (TypeError, ValueError):
            errors.append(f"seed: {_short(raw_seed)} is not an int")
            seed = None
        tc = top.data.get("time_control")
        if tc is not None and not isinstance(tc, dict):
            errors.append(f"time_control: {_short(tc)} is not an object")
            tc = None
        if isinstance(tc, dict):
            limit = tc.get("max_hands")
            if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
                errors.append(f"time_control max_hands: {_short(limit)} is not a whole number")
        ruleset = top.data.get("ruleset")
        if not isinstance(ruleset, dict):
            errors.append(f"ruleset: {_short(ruleset)} is not an object")
            ruleset = {}
        logs = top.data.get("logs") or {}
        if not isinstance(logs, dict):
            errors.append(f"logs: {_short(logs)} is not an object")
            logs = {}
        actions = top.ints("actions")
        return cls(
            source=source, match_id=str(top.str("match_id", required=False)),
            created_at=str(top.str("created_at", required=False)),
            finished_at=str(top.str("finished_at", required=False)),
            preset=str(top.str("preset", required=False)), ruleset=ruleset, seed=seed,
            deal_version=top.int("deal_version", 1, required=False) or 1,
            time_control=tc, seats=tuple(seats),
            hands=tuple(_read_hand(x, i, errors) for i, x in enumerate(top.objects("hands"))),
            actions=actions or (), result=_read_result(top.data.get("result"), errors),
            faults=tuple(_read_fault(x, f"fault {i}", errors)
                         for i, x in enumerate(top.objects("faults", required=False))),
            bank_ms_left=top.ints("bank_ms_left", required=False, nullable=True) or (),
            logs={str(k): str(v) for k, v in logs.items()}, errors=tuple(errors))


def _read_play(x: object, where: str, errors: list[str]) -> RecordedPlay:
    f = _Fields(x, where, errors)
    return RecordedPlay(f.int("seat"), str(f.str("tile", "?")), f.int("ms", required=False))


def _read_hand(x: object, i: int, errors: list[str]) -> RecordedHand:
    """The ``i``-th hand of a record (from 0); a damaged field is named as a reader counts,
    from 1 (``hand 1 trick 2 play 1``, the replay page's labels; ``dealt`` by seat)."""
    f = _Fields(x, f"hand {i + 1}", errors)
    dealt = []
    for j, d in enumerate(f.objects("dealt")):
        if isinstance(d, list) and all(isinstance(t, str) for t in d):
            dealt.append(tuple(d))
        else:
            errors.append(f"hand {i + 1} dealt {j}: {_short(d)} is not a list of tiles")
            dealt.append(())
    bids = []
    for j, b in enumerate(f.objects("bids")):
        g = _Fields(b, f"hand {i + 1} bid {j + 1}", errors)
        bids.append(RecordedBid(g.int("seat"), g.int("bid", 0) or 0,
                                g.int("ms", required=False)))
    tricks = []
    for k, t in enumerate(f.objects("tricks")):
        g = _Fields(t, f"hand {i + 1} trick {k + 1}", errors)
        tricks.append(RecordedTrick(
            g.int("leader"), tuple(_read_play(p, f"hand {i + 1} trick {k + 1} play {j + 1}", errors)
                                   for j, p in enumerate(g.objects("plays"))),
            g.int("winner")))
    return RecordedHand(
        number=f.int("number", i) or 0, dealer=f.int("dealer"), dealt=tuple(dealt),
        widow=f.strs("widow"), bids=tuple(bids), bidder=f.int("bidder"),
        bid=f.int("bid", 0) or 0, discard=f.str("discard", None),
        discard_ms=f.int("discard_ms", required=False), trump=f.str("trump", None),
        trump_ms=f.int("trump_ms", required=False),
        plays=tuple(_read_play(p, f"hand {i + 1} play {j + 1}", errors)
                    for j, p in enumerate(f.objects("plays"))),
        tricks=tuple(tricks), tricks_taken=f.ints("tricks_taken", nullable=True),
        made=f.bool("made", None), deltas=f.ints("deltas", nullable=True),
        scores=f.ints("scores", nullable=True), finished=bool(f.bool("finished")))


def _read_fault(x: object, where: str, errors: list[str]) -> RecordedFault:
    f = _Fields(x, where, errors)
    return RecordedFault(f.int("seat"), str(f.str("reason", "?")), str(f.str("detail")),
                         bool(f.bool("forfeit")))


def _read_result(x: object, errors: list[str]) -> RecordedResult:
    f = _Fields(x, "result", errors)
    forfeit = f.data.get("forfeit")
    return RecordedResult(
        termination=str(f.str("termination")), winner=f.int("winner"),
        scores=f.ints("scores") or (), places=f.ints("places") or (),
        forfeit=None if forfeit is None else _read_fault(forfeit, "result forfeit", errors),
        hands_played=f.int("hands_played"))


def read_record(path: str | Path) -> GameRecord:
    """Load a record (:func:`load_record`) into a :class:`GameRecord`: once, typed, with
    the problems of its fields in :attr:`GameRecord.errors`.

    Raises:
        RecordError: unreadable, not JSON, not a game record, a newer schema version, or
            its top-level fields unusable.
    """
    return GameRecord.from_dict(load_record(path), str(path))


# -- verify ----------------------------------------------------------------------------------
def verify_record(record: GameRecord | dict[str, Any]) -> list[str]:
    """Re-simulate a record with the engine; every disagreement as a sentence (empty: the
    record is consistent). ``record`` is a :class:`GameRecord` or a record's JSON document.

    Checks that its fields are well formed (:attr:`GameRecord.errors`), the hands (deals,
    widow, bids, discard, trump, plays, tricks, winners, scores), for a game that ended by
    the rules the result (termination, winner, scores, places), for one stopped at the
    hand limit its length and adjudication, and for a forfeit that it stands in the
    faults, on an unfinished game, ranked last (docs/protocol.md, "Faults").

    It checks that a record is *consistent* with the rules, not that it is *authentic*:
    records are not signed, so who sat where, or a fault itself, cannot be re-derived.
    """
    rec = record if isinstance(record, GameRecord) else GameRecord.from_dict(record)
    if rec.deal_version != DEAL_VERSION:
        return [f"deal_version: the record was dealt by version {rec.deal_version!r} of the "
                f"deal and this moon deals version {DEAL_VERSION} (docs/rules.md, 'Deal and "
                "dealer'): its seed gives other tiles here, so it cannot be re-simulated; its "
                "hands as recorded still show with `moon replay show`"]
    problems = list(rec.errors)
    if any(e.startswith("actions:") for e in rec.errors):
        return problems  # nothing to re-simulate
    try:
        ruleset = Ruleset.from_dict(rec.ruleset)
    except (RulesetError, TypeError) as e:
        return problems + [f"ruleset: {e}"]
    if rec.seed is None:
        return problems
    if len(rec.seats) != ruleset.players:
        problems.append(f"seats: {len(rec.seats)} recorded, the ruleset is for "
                        f"{ruleset.players} players")
    try:
        hands, state = hands_from_actions(ruleset, rec.seed, rec.actions)
    except IllegalActionError as e:
        return problems + [f"actions: {e}"]
    result = rec.result
    term = result.termination
    if term == "hand_limit":
        hands = hands[:len(state.hand_records)]  # the next deal was never played
    finished = len(state.hand_records)
    played = result.hands_played
    if term in ("target", "moon", "hand_limit") and played != finished:
        problems.append(f"result hands_played: recorded {played!r}, the replay finished "
                        f"{finished}")
    elif term == "forfeit" and played not in (finished, finished + 1):
        problems.append(f"result hands_played: recorded {played!r}, the replay finished "
                        f"{finished} (and a forfeit may cut one more short)")
    limit = rec.max_hands
    if limit is not None and finished > limit:
        problems.append(f"time_control max_hands: {limit}, but the replay finished "
                        f"{finished} hands")
    if len(rec.hands) != len(hands):
        problems.append(f"the record has {len(rec.hands)} hands, the replay {len(hands)}")
    for i, (got, want) in enumerate(zip(rec.hands, hands, strict=False)):
        have, value = got.facts(), _read_hand(want, i, []).facts()
        for key in value:
            if have[key] != value[key]:
                problems.append(f"hand {i + 1} {key}: recorded {have[key]!r}, replay gives "
                                f"{value[key]!r}")
    if state.outcome is not None:
        o = state.outcome
        if term != o.termination.value:
            problems.append(f"result termination: recorded {term!r}, "
                            f"replay gives {o.termination.value!r}")
        if result.winner != o.winner:
            problems.append(f"result winner: recorded {result.winner!r}, "
                            f"replay gives {o.winner}")
        if result.scores != tuple(o.scores):
            problems.append(f"result scores: recorded {list(result.scores)!r}, "
                            f"replay gives {list(o.scores)}")
        if result.places != tuple(o.places):
            problems.append(f"result places: recorded {list(result.places)!r}, "
                            f"replay gives {list(o.places)}")
    elif term in ("target", "moon"):
        problems.append("result says the game ended by the rules, but the replay is unfinished")
    elif term == "hand_limit":
        if len(state.hand_records) != limit:
            problems.append(f"result hand_limit: the replay has {len(state.hand_records)} "
                            f"finished hands, the time control's max_hands is {limit!r}")
        places = tuple(1 + sum(1 for o in state.scores if o > x) for x in state.scores)
        if result.scores != tuple(state.scores) or result.places != places:
            problems.append(f"result hand_limit: recorded scores {list(result.scores)!r} and "
                            f"places {list(result.places)!r}, the replay gives "
                            f"{list(state.scores)} and {list(places)}")
    problems += _forfeit_problems(rec, state)
    return problems


def _forfeit_problems(rec: GameRecord, state: GameState) -> list[str]:
    """A forfeit must stand in the faults, on a game the rules had not ended, and rank its
    side last (docs/protocol.md, faults)."""
    result = rec.result
    forfeit = result.forfeit
    if result.termination != "forfeit":
        return ["result forfeit: recorded, but the termination is "
                f"{result.termination!r}"] if forfeit else []
    if forfeit is None or forfeit.seat is None:
        return ["result forfeit: the termination is a forfeit, but no forfeiting seat"]
    out = []
    seat = forfeit.seat
    if state.outcome is not None:
        out.append("result forfeit: the replay ended by the rules before any forfeit")
    if not any(f.forfeit and f.seat == seat and f.reason == forfeit.reason
               for f in rec.faults):
        out.append(f"result forfeit: seat {seat} forfeits for {forfeit.reason!r}, "
                   "but the faults hold no such forfeit")
    places = result.places
    side = seat if len(rec.seats) == 3 else seat % 2
    if places and 0 <= side < len(places) and places[side] != max(places):
        out.append(f"result places: the forfeiting side {side} must rank last, not "
                   f"{places[side]}")
    return out
