"""Game records: a versioned JSON document per game, and `verify` that re-simulates one.

A record holds the schema version, the ruleset, the seed and the version of the deal that
dealt from it, the seats (bot name and version), every hand (dealer, each seat's dealt
tiles and the widow, the bids, the discard, the trump, every play with its seat and
milliseconds, each trick's winner, the hand's scores), the engine's action list, the
result and its termination reason, and every fault. The
seed plus the actions are the whole game; the rest is there for people and tools, and
`verify` checks that it agrees with a re-simulation.

The record itself is built by :mod:`moon_sdk.records` (the referee and the SDK's in-process
runner share it); this module reads, checks and writes records.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moon_sdk.records import SCHEMA, SCHEMA_VERSION, hands_from_actions  # noqa: F401 (re-exported)
from moon_sdk.records import game_record as record_document
from moon_sdk.rules import DEAL_VERSION, GameState, IllegalActionError, Ruleset, RulesetError

from .errors import RecordError
from .results import Fault, GameResult

if TYPE_CHECKING:
    from .referee import Match


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


def game_record(match: Match) -> dict[str, Any]:
    """The record of a match (finished, or as far as it went), as the JSON document
    described above, built by :func:`moon_sdk.records.game_record` (which the SDK's
    in-process runner shares) from the match's own types.

    Raises:
        IllegalActionError: never for a refereed match (its actions were all applied).
    """
    return record_document(
        match_id=match.match_id, created_at=match.created_at,
        finished_at=match.finished_at, preset=match.preset, ruleset=match.ruleset,
        seed=match.seed, time_control=match.tc.__dict__.copy(),
        seats=[{"seat": i, "name": n, "version": v,
                "reported_name": match.joined_as[i][0],
                "reported_version": match.joined_as[i][1]}
               for i, (n, v) in enumerate(match.seats)],
        actions=match.state.history, action_ms=match.action_ms,
        result=result_dict(match.result), faults=[fault_dict(f) for f in match.faults],
        bank_ms_left=list(match.bank_ms), logs=match.logs, state=match.state)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write JSON to ``path`` atomically (temp file + rename), so a crash never leaves a
    half-written record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_record(path: Path) -> dict[str, Any]:
    """Read and check a record's envelope.

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


def verify_record(data: dict[str, Any]) -> list[str]:
    """Re-simulate a record with the engine; every disagreement as a sentence (empty: the
    record is consistent).

    Checks the hands (deals, widow, bids, discard, trump, plays, tricks, winners, scores),
    for a game that ended by the rules the result (termination, winner, scores, places),
    for one stopped at the hand limit its length and adjudication, and for a forfeit that
    it stands in the faults, on an unfinished game, ranked last.

    It checks that a record is *consistent* with the rules, not that it is *authentic*:
    records are not signed, so who sat where, or a fault itself, cannot be re-derived.
    """
    problems: list[str] = []
    dealt_by = data.get("deal_version", 1)
    if dealt_by != DEAL_VERSION:
        return [f"deal_version: the record was dealt by version {dealt_by!r} of the deal and "
                f"this moon deals version {DEAL_VERSION} (docs/rules.md, 'Deal and dealer'): "
                "its seed gives other tiles here, so it cannot be re-simulated; its hands "
                "as recorded still show with `moon replay show`"]
    try:
        ruleset = Ruleset.from_dict(data["ruleset"])
    except (RulesetError, TypeError) as e:
        return [f"ruleset: {e}"]
    actions = data["actions"]
    if not isinstance(actions, list) or not all(isinstance(a, int) for a in actions):
        return ["actions: must be a list of ints"]
    try:
        seed = int(data["seed"])
    except (TypeError, ValueError):
        return [f"seed: {data['seed']!r} is not an int"]
    if len(data["seats"]) != ruleset.players:
        problems.append(f"seats: {len(data['seats'])} recorded, the ruleset is for "
                        f"{ruleset.players} players")
    try:
        hands, state = hands_from_actions(ruleset, seed, actions)
    except IllegalActionError as e:
        return [f"actions: {e}"]
    result = data["result"]
    if result.get("termination") == "hand_limit":
        hands = hands[:len(state.hand_records)]  # the next deal was never played
    finished = len(state.hand_records)
    played = result.get("hands_played")
    if result.get("termination") in ("target", "moon", "hand_limit") and played != finished:
        problems.append(f"result hands_played: recorded {played!r}, the replay finished "
                        f"{finished}")
    elif result.get("termination") == "forfeit" and played not in (finished, finished + 1):
        problems.append(f"result hands_played: recorded {played!r}, the replay finished "
                        f"{finished} (and a forfeit may cut one more short)")
    tc = data.get("time_control")
    if tc is not None and not isinstance(tc, dict):
        problems.append(f"time_control: {tc!r} is not an object")
        tc = None
    limit = (tc or {}).get("max_hands")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        problems.append(f"time_control max_hands: {limit!r} is not a whole number")
    elif isinstance(limit, int) and finished > limit:
        problems.append(f"time_control max_hands: {limit}, but the replay finished "
                        f"{finished} hands")
    recorded = data["hands"]
    if len(recorded) != len(hands):
        problems.append(f"the record has {len(recorded)} hands, the replay {len(hands)}")
    for i, (got, want) in enumerate(zip(recorded, hands, strict=False)):
        for key, value in want.items():
            if key.endswith("ms"):
                continue
            have = got.get(key)
            if key in ("bids", "plays") and isinstance(have, list):
                have = [{k: v for k, v in x.items() if k != "ms"} for x in have]
                value = [{k: v for k, v in x.items() if k != "ms"} for x in value]
            if have != value:
                problems.append(f"hand {i} {key}: recorded {have!r}, replay gives {value!r}")
    if state.outcome is not None:
        o = state.outcome
        if result.get("termination") != o.termination.value:
            problems.append(f"result termination: recorded {result.get('termination')!r}, "
                            f"replay gives {o.termination.value!r}")
        if result.get("winner") != o.winner:
            problems.append(f"result winner: recorded {result.get('winner')!r}, "
                            f"replay gives {o.winner}")
        if result.get("scores") != list(o.scores):
            problems.append(f"result scores: recorded {result.get('scores')!r}, "
                            f"replay gives {list(o.scores)}")
        if result.get("places") != list(o.places):
            problems.append(f"result places: recorded {result.get('places')!r}, "
                            f"replay gives {list(o.places)}")
    elif result.get("termination") in ("target", "moon"):
        problems.append("result says the game ended by the rules, but the replay is unfinished")
    elif result.get("termination") == "hand_limit":
        if len(state.hand_records) != limit:
            problems.append(f"result hand_limit: the replay has {len(state.hand_records)} "
                            f"finished hands, the time control's max_hands is {limit!r}")
        places = [1 + sum(1 for o in state.scores if o > x) for x in state.scores]
        if result.get("scores") != list(state.scores) or result.get("places") != places:
            problems.append(f"result hand_limit: recorded scores {result.get('scores')!r} and "
                            f"places {result.get('places')!r}, the replay gives "
                            f"{list(state.scores)} and {places}")
    problems += _forfeit_problems(data, state)
    return problems


def _forfeit_problems(data: dict[str, Any], state: GameState) -> list[str]:
    """A forfeit must stand in the faults, on a game the rules had not ended, and rank its
    side last (docs/protocol.md, faults)."""
    result = data["result"]
    forfeit = result.get("forfeit")
    if result.get("termination") != "forfeit":
        return ["result forfeit: recorded, but the termination is "
                f"{result.get('termination')!r}"] if forfeit else []
    if not isinstance(forfeit, dict) or not isinstance(forfeit.get("seat"), int):
        return ["result forfeit: the termination is a forfeit, but no forfeiting seat"]
    out = []
    seat = forfeit["seat"]
    if state.outcome is not None:
        out.append("result forfeit: the replay ended by the rules before any forfeit")
    if not any(f.get("forfeit") and f.get("seat") == seat
               and f.get("reason") == forfeit.get("reason") for f in data.get("faults", [])):
        out.append(f"result forfeit: seat {seat} forfeits for {forfeit.get('reason')!r}, "
                   "but the faults hold no such forfeit")
    places = result.get("places")
    side = seat if len(data["seats"]) == 3 else seat % 2
    if isinstance(places, list) and 0 <= side < len(places) and places[side] != max(places):
        out.append(f"result places: the forfeiting side {side} must rank last, not "
                   f"{places[side]}")
    return out
