"""Game records as data: the hands of a game from its actions, and the record document.

A record is one JSON object per game (schema ``moon-arena.game-record``, version
:data:`SCHEMA_VERSION`): the ruleset, the seed and the version of the deal that dealt from
it, the seats (bot name and version), every hand (dealer, each seat's dealt tiles and the
widow, the bids, the discard, the trump, every play with its seat and milliseconds, each
trick's winner, the hand's scores), the engine's action list, the result and its
termination, and every fault. The seed plus the actions are the whole game; the rest is
there for people and tools (`moon replay show|verify|html`).

Both the arena's referee and the in-process runner (:mod:`moon_sdk.local`) build their
records here, so a game played either way has the same record. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .rules import (
    DEAL_VERSION,
    ActionKind,
    GameState,
    HandRecord,
    IllegalActionError,
    Ruleset,
    action_kind,
    action_tile,
    action_trump,
    bid_value,
    tile_name,
    tiles_of,
    trump_name,
)

SCHEMA = "moon-arena.game-record"
SCHEMA_VERSION = 1


def _tiles(mask: int) -> list[str]:
    return [tile_name(t) for t in reversed(tiles_of(mask))]


def _new_hand(s: GameState) -> dict[str, Any]:
    return {
        "number": s.hand_number, "dealer": s.dealer,
        "dealt": [_tiles(m) for m in s.dealt], "widow": _tiles(s.widow),
        "bids": [], "bidder": None, "bid": 0, "discard": None, "trump": None,
        "plays": [], "tricks": [], "tricks_taken": None, "made": None,
        "deltas": None, "scores": None, "finished": False,
    }


def _finish_hand(h: dict[str, Any], rec: HandRecord) -> None:
    h.update(
        bidder=rec.bidder if rec.bidder >= 0 else None, bid=rec.bid,
        trump=trump_name(rec.trump) if rec.trump >= 0 else None,
        tricks=[{"leader": t.leader, "plays": [{"seat": s, "tile": tile_name(x)}
                                               for s, x in t.plays], "winner": t.winner}
                for t in rec.tricks],
        tricks_taken=list(rec.tricks_taken), made=rec.made, deltas=list(rec.deltas),
        scores=list(rec.scores), finished=True,
    )


def hands_from_actions(ruleset: Ruleset, seed: int, actions: Sequence[int],
                       ms: Sequence[int] | None = None) -> tuple[list[dict[str, Any]], GameState]:
    """Re-simulate a game and describe it hand by hand (the ``hands`` of a record).

    Args:
        actions: the engine's action list.
        ms: milliseconds each action took (same length), or None.

    Returns:
        ``(hands, state)``: one dict per hand dealt (the last one unfinished if the game
        is), and the engine state after the last action.

    Raises:
        IllegalActionError: an action is illegal where it stands (the message gives its
            index).
    """
    s = GameState(ruleset, seed)
    hands: list[dict[str, Any]] = []
    cur = _new_hand(s)
    for i, a in enumerate(actions):
        seat = s.current
        t = ms[i] if ms is not None else None
        try:
            s.apply(a)
        except IllegalActionError as e:
            raise IllegalActionError(f"action {i}: {e}") from None
        kind = action_kind(a)
        if kind is ActionKind.BID:
            cur["bids"].append({"seat": seat, "bid": bid_value(a), "ms": t})
        elif kind is ActionKind.DISCARD:
            cur["discard"] = tile_name(action_tile(a))
            cur["discard_ms"] = t
        elif kind is ActionKind.TRUMP:
            cur["trump"] = trump_name(action_trump(a))
            cur["trump_ms"] = t
        else:
            cur["plays"].append({"seat": seat, "tile": tile_name(a), "ms": t})
        if len(s.hand_records) > len(hands):
            _finish_hand(cur, s.hand_records[-1])
            hands.append(cur)
            if not s.is_terminal():
                cur = _new_hand(s)
    if not s.is_terminal():
        cur["bidder"] = s.bidder if s.bidder >= 0 else None
        cur["bid"] = s.high_bid
        cur["tricks"] = [
            {"leader": t.leader, "plays": [{"seat": p, "tile": tile_name(x)} for p, x in t.plays],
             "winner": t.winner} for t in s.tricks]
        cur["tricks_taken"] = list(s.tricks_taken)
        hands.append(cur)
    return hands, s


def hands_from_state(state: GameState, ms: Sequence[int] | None = None
                     ) -> list[dict[str, Any]] | None:
    """The ``hands`` of a record from a game already played (what :func:`hands_from_actions`
    gives for ``state.history``, without re-simulating it), or None when the game stopped
    inside a hand (then re-simulate).

    Args:
        state: the game after its last action.
        ms: milliseconds each action of ``state.history`` took, or None.
    """
    hands: list[dict[str, Any]] = []
    i = 0
    for rec in state.hand_records:
        h: dict[str, Any] = {
            "number": rec.number, "dealer": rec.dealer,
            "dealt": [_tiles(m) for m in rec.dealt], "widow": _tiles(rec.widow),
            "bids": [], "bidder": None, "bid": 0, "discard": None, "trump": None,
            "plays": [], "tricks": [], "tricks_taken": None, "made": None,
            "deltas": None, "scores": None, "finished": False}
        for seat, value in rec.bids:
            h["bids"].append({"seat": seat, "bid": value, "ms": ms[i] if ms else None})
            i += 1
        named = ["trump", "discard"] if state.ruleset.trump_before_widow else ["discard", "trump"]
        for key in named:
            if key == "discard" and rec.discard >= 0:
                h["discard"] = tile_name(rec.discard)
                h["discard_ms"] = ms[i] if ms else None
                i += 1
            elif key == "trump" and rec.trump >= 0:
                h["trump_ms"] = ms[i] if ms else None
                i += 1
        for t in rec.tricks:
            for seat, x in t.plays:
                h["plays"].append({"seat": seat, "tile": tile_name(x), "ms": ms[i] if ms else None})
                i += 1
        _finish_hand(h, rec)
        hands.append(h)
    if i != len(state.history):
        return None
    return hands


def game_record(*, match_id: str, ruleset: Ruleset, preset: str, seed: int,
                seats: Sequence[Mapping[str, Any]], actions: Sequence[int],
                action_ms: Sequence[int] | None, result: Mapping[str, Any],
                faults: Sequence[Mapping[str, Any]] = (),
                time_control: Mapping[str, Any] | None = None,
                created_at: str = "", finished_at: str = "",
                bank_ms_left: Sequence[int] | None = None,
                logs: Mapping[int, str] | Mapping[str, str] | None = None,
                state: GameState | None = None) -> dict[str, Any]:
    """The record of one game, as the JSON-ready dict `moon replay` reads.

    Args:
        seats: one dict per seat: ``seat``, ``name``, ``version``, ``reported_name``,
            ``reported_version`` (what the bot said of itself when it joined).
        actions: the engine's action list; ``action_ms`` the milliseconds each took.
        result: ``termination`` (``target``, ``moon``, ``hand_limit``, ``forfeit``,
            ``cancelled``, ``aborted``), ``winner`` (a side or None), ``scores``,
            ``places``, ``forfeit`` (a fault dict or None), ``hands_played``.
        faults: dicts of ``seat``, ``reason``, ``detail``, ``forfeit``.
        time_control: the limits the game was played under (``max_hands`` is checked by
            `moon replay verify`); None when there were none.
        logs: the end of each seat's output, by seat.
        state: the game after ``actions``, if at hand: its hands are described from it
            instead of re-simulating the actions (the same result, faster).

    Raises:
        IllegalActionError: ``actions`` is not a legal game from ``seed``.
    """
    described = None
    if state is not None and (state.is_terminal() or result.get("termination") == "hand_limit") \
            and state.history == list(actions):
        described = hands_from_state(state, action_ms)
    if described is None or state is None:
        described, state = hands_from_actions(ruleset, seed, actions, action_ms)
    hands = described
    if result.get("termination") == "hand_limit":  # the next deal was never played
        hands = hands[:len(state.hand_records)]
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "match_id": match_id, "created_at": created_at, "finished_at": finished_at,
        "preset": preset, "ruleset": ruleset.to_dict(), "seed": seed,
        "deal_version": DEAL_VERSION,
        "time_control": dict(time_control) if time_control is not None else None,
        "seats": [dict(s) for s in seats],
        "hands": hands,
        "actions": list(actions),
        "result": dict(result),
        "faults": [dict(f) for f in faults],
        "bank_ms_left": list(bank_ms_left) if bank_ms_left is not None else None,
        "logs": {str(k): v for k, v in (logs or {}).items()},
    }


__all__ = ["SCHEMA", "SCHEMA_VERSION", "game_record", "hands_from_actions", "hands_from_state"]
