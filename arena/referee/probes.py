"""The conformance check's planted situations (`moon bot check`, :mod:`arena.check.conformance`):
kinds of :class:`~arena.referee.referee.Match` that do one thing a real game rarely does, once,
to seat 0 (:data:`PROBED_SEAT`, where the check seats the bot) at its first turn, and
otherwise referee exactly as a match does.

- ``reject`` (:class:`RejectOnce`): the seat's first answer is refused as an illegal action
  (a ``Rejected`` with the reason :data:`PLANTED_REJECTION`); the seat must answer the new
  turn that follows (any legal action, the same one too). The refusal costs a retry and is
  recorded as a fault the check leaves out; the game gives one retry more for it.
- ``drop`` (:class:`DropOnce`): the stream of the seat to act is broken (status
  ``UNAVAILABLE``) instead of sending it its first turn; the seat must reconnect with the
  same token within the reconnect grace, and answers the turn the referee sends it again
  (docs/protocol.md, "Reconnecting"). A crash of that seat after the drop says whether
  the bot had joined again (:data:`AFTER_REJOINING`) or not (:data:`WITHOUT_REJOINING`):
  a bot that rejoined and then crashed is not to be told to reconnect.

A game request asks for one by name (:attr:`arena.executor.local.GameRequest.probe`).
"""

from __future__ import annotations

from moon_sdk.rules import IllegalActionError

from .referee import DURING_THE_GAME, Match, Seat, _Forfeit, _OpenTurn

PROBED_SEAT = 0
"""The seat a planted situation happens to."""
PLANTED_REJECTION = ("conformance check: this answer is refused on purpose, to see the "
                     "bot answer the next turn")
"""The reason of the planted refusal (the check leaves the fault with it out)."""
PLANTED_DROP = "conformance check: the stream is dropped on purpose; reconnect with the token"
"""The status detail of the planted drop."""
WITHOUT_REJOINING = "after the referee dropped its stream, without joining again"
"""When the probed seat's process ended, in its crash's detail (:class:`DropOnce`): after
the planted drop, before any rejoin."""
AFTER_REJOINING = "during the game, after it joined again following the dropped stream"
"""When the probed seat's process ended, in its crash's detail: after it rejoined."""


class RejectOnce(Match):
    """A match that refuses the first answer of seat 0 (``reject``)."""

    probed = False

    def _apply(self, seat: int, action: int, ms: int) -> None:
        if not self.probed and seat == PROBED_SEAT:  # its first answer, whatever it is
            self.probed = True
            raise IllegalActionError(PLANTED_REJECTION)  # rejected as an illegal one is
        super()._apply(seat, action, ms)


class DropOnce(Match):
    """A match that breaks the stream of seat 0 instead of sending it its first turn
    (``drop``). Its process ending after that is said in the fault's detail as
    :data:`WITHOUT_REJOINING` or :data:`AFTER_REJOINING` (for "during the game")."""

    probed = False
    rejoins_before = 0
    """The seat's rejoins when its stream was dropped (:attr:`Seat.rejoins`)."""

    def _open_turn(self, seat: Seat) -> _OpenTurn:
        if not self.probed and seat.index == PROBED_SEAT and seat.link is not None:
            self.probed = True
            self.rejoins_before = seat.rejoins
            seat.link.drop(PLANTED_DROP)  # the turn below is not sent; a rejoin gets it
        return super()._open_turn(seat)

    def _exit_forfeit(self, seat: Seat, when: str) -> _Forfeit:
        if self.probed and seat.index == PROBED_SEAT and when == DURING_THE_GAME:
            when = AFTER_REJOINING if seat.rejoins > self.rejoins_before \
                else WITHOUT_REJOINING
        return super()._exit_forfeit(seat, when)


PROBES: dict[str, type[Match]] = {"reject": RejectOnce, "drop": DropOnce}
"""The planted situations by name."""
