"""A second, deliberately simple model of the Moon rules, written from docs/rules.md alone.

The property tests compare the engine with it, so it shares nothing with the engine's
tables: a tile is a ``(high, low)`` tuple, a hand is a list, a contract is ``0``..``6``,
``"doubles"`` or ``"none"``, and every rule is spelled out the slow, obvious way.
The only thing taken from the engine is its documented numbering of tiles and contracts
(:func:`pips`, :func:`contract`), which ``test_tiles.py`` checks separately.
"""

from __future__ import annotations

Pips = tuple[int, int]
Contract = int | str
"""0..6 (that number is trump), "doubles" or "none"."""
TRUMPS = "trumps"
"""The suit led when a trump is led."""

PIPS_BY_INDEX: list[Pips] = [(h, lo) for h in range(7) for lo in range(h + 1)]
"""The engine's documented numbering: tile ``h*(h+1)//2 + lo`` is ``(h, lo)``."""


def pips(index: int) -> Pips:
    """The ``(high, low)`` of an engine tile index."""
    return PIPS_BY_INDEX[index]


def index(t: Pips) -> int:
    """The engine tile index of ``(high, low)``."""
    h, lo = max(t), min(t)
    return h * (h + 1) // 2 + lo


def contract(engine_trump: int) -> Contract:
    """The engine's contract int (0..6, 7 doubles, 8 none) in this model's terms."""
    return {7: "doubles", 8: "none"}.get(engine_trump, engine_trump)


def tile_set(players: int, remove_double_blank: bool = False) -> list[Pips]:
    """docs/rules.md "Tiles, suits and rank": 28 tiles for 4 players; for 3 players both
    ends 1..6 plus 0-0 (22), or without 0-0 (21)."""
    full = [(h, lo) for h in range(7) for lo in range(h + 1)]
    if players == 4:
        return full
    return [t for t in full if t[1] >= 1 or (t == (0, 0) and not remove_double_blank)]


def is_trump(t: Pips, trump: Contract) -> bool:
    if trump == "none":
        return False
    if trump == "doubles":
        return t[0] == t[1]
    return trump in t


def suit_led(lead: Pips, trump: Contract) -> int | str:
    """A trump lead leads trumps; otherwise the higher end is the suit led."""
    if is_trump(lead, trump):
        return TRUMPS
    return max(lead)


def follows(t: Pips, suit: int | str, trump: Contract) -> bool:
    """A trump is followed only by trumps; a number suit by its non-trump tiles (a double
    belongs to no number suit when doubles are trumps, which is_trump already covers)."""
    if suit == TRUMPS:
        return is_trump(t, trump)
    return suit in t and not is_trump(t, trump)


def legal_plays(hand: list[Pips], trick: list[Pips], trump: Contract) -> list[Pips]:
    """Any tile may be led; a follower plays a tile of the suit led if it holds one."""
    if not trick:
        return list(hand)
    suit = suit_led(trick[0], trump)
    following = [t for t in hand if follows(t, suit, trump)]
    return following if following else list(hand)


def strength(t: Pips, suit: int | str, trump: Contract) -> tuple[int, int]:
    """Higher wins: trumps (class 2) beat the suit led (class 1) beat the rest (class 0,
    never wins). Within a class the double is highest, then the other end."""
    if is_trump(t, trump):
        if trump == "doubles":
            return (2, t[0])
        other = t[1] if t[0] == trump else t[0]
        return (2, 99 if t[0] == t[1] else other)
    if suit != TRUMPS and follows(t, suit, trump):
        other = t[1] if t[0] == suit else t[0]
        return (1, 99 if t[0] == t[1] else other)
    return (0, 0)


def trick_winner(trick: list[Pips], trump: Contract) -> int:
    """Index in play order of the winning tile (the lead is index 0)."""
    suit = suit_led(trick[0], trump)
    best = 0
    for i, t in enumerate(trick):
        if strength(t, suit, trump) > strength(trick[best], suit, trump):
            best = i
    return best


def legal_bid_values(bids_so_far: list[int], is_dealer: bool, min_bid: int,
                     force_dealer: bool) -> list[int]:
    """Values a player may bid on their one turn: 0 (pass), min_bid..7 above every earlier
    bid, or 21. With force_dealer the dealer may not pass when all others passed."""
    high = max(bids_so_far, default=0)
    out = [] if (force_dealer and is_dealer and high == 0) else [0]
    out += [v for v in range(min_bid, 8) if v > high]
    out.append(21)
    return out


def side(seat: int, players: int) -> int:
    return seat if players == 3 else seat % 2


def hand_deltas(players: int, scoring: str, team_made_scores: str, bidder: int, bid: int,
                tricks_taken: list[int]) -> tuple[bool, list[int]]:
    """``(made, change of each side's score)`` for a played hand (docs/rules.md "Scoring")."""
    sides = 3 if players == 3 else 2
    taken = [0] * sides
    for seat, k in enumerate(tricks_taken):
        taken[side(seat, players)] += k
    bs = side(bidder, players)
    need = 7 if bid == 21 else bid
    made = taken[bs] >= need
    if scoring == "marks":
        if made:
            return made, [1 if s == bs else 0 for s in range(sides)]
        return made, [0 if s == bs else 1 for s in range(sides)]
    deltas = list(taken)  # every side scores 1 a trick ...
    if not made:
        deltas[bs] = -bid  # ... but the bidder's side: set loses the bid
    elif bid == 21 or players == 3 or team_made_scores == "bid":
        deltas[bs] = bid
    else:
        deltas[bs] = taken[bs]  # 4 players, team_made_scores = tricks
    return made, deltas


def winner_at_target(scores: list[int], target: int) -> int | None:
    """After a hand: the side strictly ahead if someone reached the target, else None
    (nobody there yet, or the highest score shared: another hand is played)."""
    top = max(scores)
    if top < target:
        return None
    leaders = [s for s, v in enumerate(scores) if v == top]
    return leaders[0] if len(leaders) == 1 else None


def places(scores: list[int], winner: int) -> list[int]:
    """1 for the winner; any other side is 1 + the winner + the sides strictly ahead."""
    out = []
    for s, v in enumerate(scores):
        if s == winner:
            out.append(1)
        else:
            ahead = [o for o in range(len(scores)) if o == winner or scores[o] > v]
            out.append(1 + len(ahead))
    return out
