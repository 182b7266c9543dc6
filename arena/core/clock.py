"""A seat's clock: time per decision and a bank for the game, measured at the referee
(docs/protocol.md, "Time"). Plain arithmetic on times the caller passes in
(``time.monotonic()`` seconds), so it is tested without an event loop; the referee owns
one per seat.

    >>> c = Clock(decision_ms=2000, bank_ms=1000)
    >>> c.start(99.8)              # a turn is opened (queued for the bot) at t = 99.8 s
    >>> c.delivered(100.0)         # and delivered at t = 100 s: its time runs from here
    >>> c.deadline                 # answer by 100 s + 2 s + the 1 s bank
    103.0
    >>> c.left(101.5)              # sent again on a rejoin 1.5 s in: (decision, bank) left
    (500, 1000)
    >>> round(c.charge(102.25), 3)  # answered 2.25 s in: 250 ms over, taken from the bank
    2.25
    >>> c.bank_ms
    750
"""

from __future__ import annotations


class Clock:
    """One seat's clock for one game.

    Each turn gets ``decision_ms`` of its own; time beyond it comes out of the bank, which
    lasts the whole game. A turn sent at ``t`` must be answered by ``t + (decision_ms +
    bank_ms) / 1000`` (:attr:`deadline`). Times are seconds of ``time.monotonic()``;
    durations are milliseconds, counted in whole ms (a turn's partial ms is never charged).
    """

    __slots__ = ("decision_ms", "bank_ms", "sent_at", "opened_at", "is_delivered")

    def __init__(self, decision_ms: int, bank_ms: int) -> None:
        self.decision_ms = decision_ms
        """Per decision, before the bank is touched (ms)."""
        self.bank_ms = bank_ms
        """What is left of the bank (ms)."""
        self.sent_at = 0.0
        """When the open turn's time began (seconds): its delivery, or its opening until
        it is delivered."""
        self.opened_at = 0.0
        """When the open turn was opened (queued for the bot), seconds."""
        self.is_delivered = False
        """Whether the open turn has been delivered (:meth:`delivered`)."""

    def start(self, now: float) -> None:
        """A turn is opened at ``now`` (queued for the bot): its time runs from here until
        :meth:`delivered` says when the bot's stream took it."""
        self.sent_at = self.opened_at = now
        self.is_delivered = False

    def delivered(self, at: float) -> None:
        """The open turn was delivered (written to the bot's stream) at ``at``: its time
        runs from there, so time the turn spent queued in a busy referee is not the bot's.
        Only the first delivery counts (a turn sent again on a rejoin does not restart the
        clock); a time before the opening is taken as the opening."""
        if not self.is_delivered:
            self.is_delivered = True
            self.sent_at = max(self.sent_at, at)

    @property
    def deadline(self) -> float:
        """When the open turn runs out (seconds): its decision time plus the bank."""
        return self.sent_at + (self.decision_ms + self.bank_ms) / 1000

    def left(self, now: float) -> tuple[int, int]:
        """``(decision_ms, bank_ms)`` still left of the open turn at ``now``: what a turn
        sent again (to a seat that rejoined) shows, so that a reconnect never restarts the
        clock."""
        used = int((now - self.sent_at) * 1000)
        over = max(0, used - self.decision_ms)
        return max(0, self.decision_ms - used), max(0, self.bank_ms - over)

    def charge(self, at: float) -> float:
        """The open turn was answered at ``at``: the whole milliseconds over the decision
        time come out of the bank (never below 0). Returns the turn's time in seconds,
        unrounded (sums of them stay precise where each turn's whole ms would round to 0).
        """
        seconds = max(0.0, at - self.sent_at)  # read before the delivery was noted: 0
        over = int(seconds * 1000) - self.decision_ms
        if over > 0:
            self.bank_ms = max(0, self.bank_ms - over)
        return seconds

    def flag(self) -> None:
        """The open turn ran out: the bank is spent."""
        self.bank_ms = 0

    def __repr__(self) -> str:
        return f"Clock(decision_ms={self.decision_ms}, bank_ms={self.bank_ms})"
