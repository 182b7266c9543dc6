"""The table in words: seats, events and the contract as a person reads them, shared by
the terminal and the page."""

from __future__ import annotations

from moon_sdk.convert import tile_from_pb, trump_from_pb
from moon_sdk.rules import Ruleset
from moon_sdk.rules.tiles import tile_name, trump_name
from moon_sdk.v1 import game_pb2 as pb

from ..core.results import FaultReason
from ..core.text import clean_line
from ..records.record import GameRecord


def trumps_text(trump: int) -> str:
    """``fives``-style words for a trump contract: ``trumps 5``, ``doubles``, ``no trumps``."""
    name = trump_name(trump)
    return {"doubles": "doubles are trumps", "none": "no trumps"}.get(name, f"trumps {name}")


class Seats:
    """How the seats are called from one seat's chair: ``you``, ``seat 1 (heuristic)``,
    ``seat 2 (random, your partner)``."""

    def __init__(self, me: int, names: list[str], ruleset: Ruleset) -> None:
        self.me = me
        self.names = [clean_line(n) for n in names]
        self.ruleset = ruleset

    def __call__(self, seat: int) -> str:
        if seat == self.me:
            return "you"
        name = self.names[seat] if seat < len(self.names) else "?"
        partner = self.ruleset.players == 4 and seat % 2 == self.me % 2
        return f"seat {seat} ({name}{', your partner' if partner else ''})"

    def side(self, side: int) -> str:
        """A side of the scores: a seat, or a partnership (``you & seat 2``)."""
        if self.ruleset.players == 4:
            a, b = side, side + 2
            return "you & partner" if self.me % 2 == side else f"seats {a} & {b}"
        return "you" if side == self.me else f"seat {side}"


def bid_text(value: int) -> str:
    """``pass``, ``bid 5``, ``bid 21 (the moon)``."""
    return "pass" if value == 0 else "bid 21 (the moon)" if value == 21 else f"bid {value}"


def event_line(ev: pb.Event, seats: Seats) -> str | None:
    """One line for a public event, or None for one that says nothing new (the game's
    end: the caller says it with the result). A hand's start is a heading of its own."""
    kind = ev.WhichOneof("kind")
    if kind == "hand_started":
        h = ev.hand_started
        return f"hand {h.hand_number + 1} · {seats(h.dealer)} dealt"
    if kind == "bid":
        return f"{seats(ev.bid.seat)}: {bid_text(ev.bid.value)}"
    if kind == "widow_taken":
        return f"{seats(ev.widow_taken.seat)}: took the widow"
    if kind == "discarded":
        return f"{seats(ev.discarded.seat)}: discarded a tile"
    if kind == "trump_named":
        return f"{seats(ev.trump_named.seat)}: {trumps_text(trump_from_pb(ev.trump_named.trump))}"
    if kind == "played":
        return f"{seats(ev.played.seat)}: played {tile_name(tile_from_pb(ev.played.tile))}"
    if kind == "trick_won":
        t = ev.trick_won
        return f"trick {t.trick_number + 1} to {seats(t.seat)}"
    if kind == "hand_ended":
        return hand_line(ev.hand_ended, seats)
    if kind == "fault":
        f = ev.fault
        what = FaultReason(f.reason).key.replace("_", " ")
        return (f"{seats(f.seat)}: {what}{' (forfeits the game)' if f.forfeit else ''}: "
                f"{clean_line(f.detail)}")
    return None


def hand_line(h: pb.HandResult, seats: Seats) -> str:
    """A finished hand: who bid what and whether it was made, the scores."""
    scores = ", ".join(f"{seats.side(k)} {v}" for k, v in enumerate(h.scores))
    if not h.HasField("bidder"):
        return f"hand {h.hand_number + 1}: everyone passed, redeal · scores: {scores}"
    made = "made it" if h.made else "was set"
    return (f"hand {h.hand_number + 1}: {seats(h.bidder)} {bid_text(h.bid)} and {made} · "
            f"scores: {scores}")


def result_line(r: pb.GameResult, seats: Seats) -> str:
    """The game's end: who won, or why it stopped."""
    scores = ", ".join(f"{seats.side(k)} {v}" for k, v in enumerate(r.scores))
    if r.termination == pb.TERMINATION_FORFEIT:
        f = r.forfeit
        return f"game over: {seats(f.seat)} forfeited ({clean_line(f.detail)}) · {scores}"
    if not r.HasField("winner"):
        return f"game over, no winner · scores: {scores}"
    won = seats.side(r.winner)
    verb = "win" if won.startswith("you") else "wins"
    return f"game over: {won} {verb} · scores: {scores}"


def record_line(record: GameRecord) -> str:
    """One line of how a recorded game ended, for the person's page."""
    r = record.result
    scores = ", ".join(str(x) for x in r.scores or ())
    if r.forfeit is not None and r.forfeit.seat is not None:
        return (f"seat {r.forfeit.seat} forfeited ({clean_line(r.forfeit.reason)}) · scores "
                f"{scores}")
    if r.winner is None:
        return f"no winner · scores {scores}"
    return f"{record.side_labels()[r.winner]} won · scores {scores}"
