"""The arena's own result types: how a game ended, a bot's fault, a game's result and its
hands. Plain enums and frozen dataclasses, no protobuf (in the manner of python-chess's
``Outcome`` and ``Termination``): :mod:`arena.protocol.convert` turns them into ``moon.v1``
messages for the wire, :mod:`arena.records.record` into a record's JSON, and the ladder's store
into rows.

The enums are :class:`enum.IntEnum`s whose values are the wire numbers of ``moon.v1``'s
``Termination`` and ``FaultReason`` (tests/test_proto.py holds them equal), so a value
compares equal to its protobuf constant; :attr:`Termination.key` and
:attr:`FaultReason.key` are the names records and results files use (``"forfeit"``,
``"timeout"``).

    >>> Termination.HAND_LIMIT.key, Termination.from_key("moon")
    ('hand_limit', <Termination.MOON: 2>)
    >>> GameResult.hand_limit((5, 9, 5), hands_played=200).places
    (2, 1, 2)
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

from moon_sdk.rules import GameState, Outcome, Ruleset, Trump
from moon_sdk.rules import Termination as RulesTermination


class _Keyed(enum.IntEnum):
    @property
    def key(self) -> str:
        """The lower-case name records and results files use (``"hand_limit"``)."""
        return self.name.lower()

    @classmethod
    def from_key(cls, key: str) -> Self:
        """The member named ``key`` (as :attr:`key` gives it).

        Raises:
            ValueError: no member has that key.
        """
        try:
            return cls[key.upper()]
        except (KeyError, AttributeError):
            raise ValueError(f"{key!r} is not one of "
                             f"{', '.join(m.key for m in cls)}") from None


class Termination(_Keyed):
    """How a game ended (docs/protocol.md, "Results")."""

    TARGET = 1
    """A side reached the target and was strictly ahead at the end of a hand
    (docs/rules.md, "End of the game")."""
    MOON = 2
    """A made bid of 21 won the game (``moon_wins_game``)."""
    FORFEIT = 3
    """A seat forfeited: :attr:`GameResult.forfeit` says who and why."""
    CANCELLED = 4
    """Stopped by an operator: not scored."""
    ABORTED = 5
    """Stopped by the arena (shutdown, an internal or sandbox failure): an infrastructure
    fault, not scored."""
    HAND_LIMIT = 6
    """The time control's ``max_hands`` deals were played without an end: adjudicated on
    the scores. An arena limit, not a rule."""

    @property
    def scored(self) -> bool:
        """Whether the game counts (rated, stored): False for CANCELLED and ABORTED, which
        are voided and played again."""
        return self not in (Termination.CANCELLED, Termination.ABORTED)

    @classmethod
    def of_rules(cls, t: RulesTermination) -> Termination:
        """The engine's ending (:class:`moon_sdk.rules.Termination`) as an arena one."""
        return cls.MOON if t is RulesTermination.MOON else cls.TARGET


class FaultReason(_Keyed):
    """Kinds of bot fault, each recorded separately (docs/protocol.md, "Faults")."""

    STARTUP_STALL = 1
    """The bot did not join within the start-up limit."""
    TIMEOUT = 2
    """No answer within the decision limit plus the time bank."""
    DISCONNECT = 3
    """The stream went away and did not come back within the reconnect grace."""
    PROTOCOL_ERROR = 4
    """A malformed or out-of-turn message, a wrong request id."""
    ILLEGAL_ACTION = 5
    """An illegal action (beyond the allowed retries, a forfeit)."""
    CRASH = 6
    """The bot's process exited (or could not start) while the game needed it."""
    OUT_OF_MEMORY = 7
    """The sandbox killed the bot for its memory."""


ILLEGAL_ACTION_PUBLIC = "an illegal action (the reason went to the seat alone)"
"""What everyone but the seat sees of an illegal action's fault: the engine's reason
("must follow fives: holds 5-5") would tell the table what the seat holds."""


@dataclass(frozen=True)
class Fault:
    """A fault of one seat."""

    seat: int
    reason: FaultReason
    detail: str
    """What happened, for people (may name the seat's hidden tiles: see :meth:`public`)."""
    forfeit: bool
    """Whether it cost the seat the game."""

    def public(self) -> Fault:
        """The fault as the other seats and spectators may see it: an illegal action's
        reason is replaced by :data:`ILLEGAL_ACTION_PUBLIC`."""
        if self.reason is FaultReason.ILLEGAL_ACTION:
            return Fault(self.seat, self.reason, ILLEGAL_ACTION_PUBLIC, self.forfeit)
        return self


@dataclass(frozen=True)
class GameResult:
    """The result of a game: why it ended, the winning side, each side's score and place.

    Sides are seats in 3-player Moon and partnerships (0: seats 0 and 2, 1: seats 1 and
    3) in 4-player Moon. Scores are points or marks (``Ruleset.scoring``); places start
    at 1, equal scores share a place.
    """

    termination: Termination
    winner: int | None
    """The winning side, or None (no side alone on top, or not scored)."""
    scores: tuple[int, ...]
    places: tuple[int, ...]
    """Empty when the game was stopped (CANCELLED, ABORTED): nobody is placed."""
    hands_played: int
    """Deals played, redeals included (a forfeit may cut one more short)."""
    forfeit: Fault | None = None
    """The fault that ended the game (FORFEIT only)."""

    @classmethod
    def of_outcome(cls, o: Outcome, hands_played: int) -> GameResult:
        """The result of a game the rules ended (:class:`moon_sdk.rules.Outcome`)."""
        return cls(Termination.of_rules(o.termination), o.winner, tuple(o.scores),
                   tuple(o.places), hands_played)

    @classmethod
    def hand_limit(cls, scores: Sequence[int], hands_played: int) -> GameResult:
        """The adjudication of a game stopped at ``max_hands``: each side placed by its
        score (equal scores share a place), a winner only if alone on top."""
        places = tuple(1 + sum(1 for o in scores if o > s) for s in scores)
        winner = places.index(1) if places.count(1) == 1 else None
        return cls(Termination.HAND_LIMIT, winner, tuple(scores), places, hands_played)

    @classmethod
    def forfeited(cls, ruleset: Ruleset, scores: Sequence[int], faults: Sequence[Fault],
                  hands_played: int) -> GameResult:
        """The result when the seats of ``faults`` forfeit (the first one is
        :attr:`forfeit`): their sides rank last, the others by score (docs/protocol.md,
        "Faults"); a winner only if one side is alone in first place.

        Raises:
            ValueError: no fault.
        """
        if not faults:
            raise ValueError("a forfeit needs the fault that caused it")
        offenders = {ruleset.side_of(f.seat) for f in faults}
        others = [s for s in range(ruleset.num_sides) if s not in offenders]
        places = [0] * ruleset.num_sides
        for s in others:
            places[s] = 1 + sum(1 for o in others if scores[o] > scores[s])
        for s in offenders:
            places[s] = len(others) + 1
        best = [s for s in others if places[s] == 1]
        return cls(Termination.FORFEIT, best[0] if len(best) == 1 else None, tuple(scores),
                   tuple(places), hands_played, faults[0])

    @classmethod
    def stopped(cls, termination: Termination, scores: Sequence[int],
                hands_played: int) -> GameResult:
        """A game stopped before its end (CANCELLED or ABORTED): no winner, no places."""
        return cls(termination, None, tuple(scores), (), hands_played)


@dataclass(frozen=True)
class HandResult:
    """One hand of a game in brief (the ladder's ``hands`` table), finished or not."""

    number: int
    """0-based count of deals in the game, redeals included."""
    dealer: int
    bidder: int | None
    """The seat that won the auction; None when everyone passed, or no bid yet."""
    bid: int
    """The high bid (21: the moon), 0 if none."""
    trump: Trump | None
    """The trumps named (engine value, :func:`moon_sdk.rules.trump_name`), or None."""
    made: bool | None
    """Whether the contract was made; None if passed out or unfinished."""
    tricks_taken: tuple[int, ...]
    """Tricks taken by each seat (so far, in an unfinished hand)."""
    deltas: tuple[int, ...] | None
    """Change of each side's score; None for an unfinished hand."""
    finished: bool


def hand_results(state: GameState, termination: Termination) -> tuple[HandResult, ...]:
    """Every hand of a game in brief: the finished ones, then (unless the game ended by
    the rules or at the hand limit, whose next deal was never played) the hand in
    progress when it stopped."""
    out = [HandResult(h.number, h.dealer, None if h.bidder < 0 else h.bidder, h.bid,
                      None if h.trump < 0 else h.trump, h.made, h.tricks_taken, h.deltas,
                      True) for h in state.hand_records]
    if not state.is_terminal() and termination is not Termination.HAND_LIMIT:
        out.append(HandResult(state.hand_number, state.dealer,
                              None if state.bidder < 0 else state.bidder, state.high_bid,
                              None if state.trump < 0 else state.trump, None,
                              tuple(state.tricks_taken), None, False))
    return tuple(out)


__all__ = ["ILLEGAL_ACTION_PUBLIC", "Fault", "FaultReason", "GameResult", "HandResult",
           "Termination", "hand_results"]
