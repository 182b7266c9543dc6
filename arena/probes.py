"""The conformance check's planted situations (`moon bot check`, :mod:`arena.botcheck`):
kinds of :class:`~arena.referee.Match` that do one thing a real game rarely does, once,
to seat 0 (:data:`PROBED_SEAT`, where the check seats the bot) at its first turn, and
otherwise referee exactly as a match does.

- ``reject`` (:class:`RejectOnce`): the seat's first answer is refused as an illegal action
  (a ``Rejected`` with the reason :data:`PLANTED_REJECTION`); the seat must answer the new
  turn that follows (any legal action, the same one too). The refusal costs a retry and is
  recorded as a fault the check leaves out; the game gives one retry more for it.
- ``drop`` (:class:`DropOnce`): the stream of the seat to act is broken (status
  ``UNAVAILABLE``) instead of sending it its first turn; the seat must reconnect with the
  same token within the reconnect grace, and answers the turn the referee sends it again
  (docs/protocol.md, "Reconnecting").

A game request asks for one by name (:attr:`arena.executor.GameRequest.probe`).
"""

from __future__ import annotations

from moon_sdk.rules import IllegalActionError

from .referee import Match, Seat, _OpenTurn

PROBED_SEAT = 0
"""The seat a planted situation happens to."""
PLANTED_REJECTION = ("conformance check: this answer is refused on purpose, to see the "
                     "bot answer the next turn")
"""The reason of the planted refusal (the check leaves the fault with it out)."""
PLANTED_DROP = "conformance check: the stream is dropped on purpose; reconnect with the token"
"""The status detail of the planted drop."""


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
    (``drop``)."""

    probed = False

    def _open_turn(self, seat: Seat) -> _OpenTurn:
        if not self.probed and seat.index == PROBED_SEAT and seat.link is not None:
            self.probed = True
            seat.link.drop(PLANTED_DROP)  # the turn below is not sent; a rejoin gets it
        return super()._open_turn(seat)


PROBES: dict[str, type[Match]] = {"reject": RejectOnce, "drop": DropOnce}
"""The planted situations by name."""
