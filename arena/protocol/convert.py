"""The arena's own types as ``moon.v1`` messages and back, in one place: results, faults
and time controls (:mod:`arena.core.results`, :mod:`arena.core.timecontrol`). The referee uses it
for what it sends to seats and spectators, the server for the match service; nothing
else in the arena handles these messages. The rules engine's values go through
:mod:`moon_sdk.convert`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from moon_sdk.v1 import game_pb2 as pb

from ..core.results import Fault, FaultReason, GameResult, Termination
from ..core.timecontrol import TimeControl


def fault_to_pb(f: Fault) -> pb.Fault:
    """:class:`Fault` → ``Fault``."""
    return pb.Fault(seat=f.seat, reason=f.reason.value,  # type: ignore[arg-type]
                    detail=f.detail, forfeit=f.forfeit)


def fault_from_pb(m: pb.Fault) -> Fault:
    """``Fault`` → :class:`Fault`.

    Raises:
        ValueError: a reason this arena does not know (UNSPECIFIED included).
    """
    return Fault(m.seat, FaultReason(m.reason), m.detail, m.forfeit)


def result_to_pb(r: GameResult) -> pb.GameResult:
    """:class:`GameResult` → ``GameResult`` (``winner`` unset when None, ``forfeit`` unset
    unless a forfeit)."""
    m = pb.GameResult(termination=r.termination.value,  # type: ignore[arg-type]
                      scores=r.scores, places=r.places, hands_played=r.hands_played)
    if r.winner is not None:
        m.winner = r.winner
    if r.forfeit is not None:
        m.forfeit.CopyFrom(fault_to_pb(r.forfeit))
    return m


def result_from_pb(m: pb.GameResult) -> GameResult:
    """``GameResult`` → :class:`GameResult`.

    Raises:
        ValueError: a termination or fault reason this arena does not know.
    """
    return GameResult(Termination(m.termination), m.winner if m.HasField("winner") else None,
                      tuple(m.scores), tuple(m.places), m.hands_played,
                      fault_from_pb(m.forfeit) if m.HasField("forfeit") else None)


def time_control_to_pb(tc: TimeControl) -> pb.TimeControl:
    """:class:`TimeControl` → ``TimeControl`` (the same field names)."""
    return pb.TimeControl(**dataclasses.asdict(tc))


def time_control_from_pb(m: pb.TimeControl, base: TimeControl | None = None) -> TimeControl:
    """``TimeControl`` → :class:`TimeControl`; every zero field takes its value from
    ``base`` (the referee's defaults, e.g. `moon serve --bank-ms`), else from the class's
    defaults.

    Raises:
        ConfigError: a value out of range.
    """
    base = base or TimeControl()
    return TimeControl(**{f.name: getattr(m, f.name) or getattr(base, f.name)
                          for f in dataclasses.fields(TimeControl)})


def event_to_dict(ev: pb.Event) -> dict[str, Any]:
    """A public event of the referee's watch stream as JSON-ready data for spectators (the
    host's live page): ``{"seq": 7, "kind": "played", "seat": 1, "tile": "6-4"}``; the
    other kinds (``hand_started``, ``bid``, ``widow_taken``, ``discarded``, ``trump_named``,
    ``trick_won``, ``hand_ended``, ``game_ended``, ``fault``) carry their message's fields
    by their proto names. Public events hold no hidden tile (the widow and the discard are
    only ``seat``), so neither does this."""
    from google.protobuf.json_format import MessageToDict

    kind = ev.WhichOneof("kind")
    body: dict[str, Any] = {}
    if kind is not None:
        body = MessageToDict(getattr(ev, kind), preserving_proto_field_name=True,
                             always_print_fields_with_no_presence=True)
        if kind == "played":
            body["tile"] = f"{ev.played.tile.high}-{ev.played.tile.low}"
    return {"seq": ev.sequence, "kind": kind or "", **body}


__all__ = ["event_to_dict", "fault_from_pb", "fault_to_pb", "result_from_pb", "result_to_pb",
           "time_control_from_pb", "time_control_to_pb"]
