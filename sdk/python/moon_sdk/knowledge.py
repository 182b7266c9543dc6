"""What one seat knows of the hidden tiles, and deals sampled consistently with it.

From an :class:`~moon_sdk.rules.Observation` (:func:`knowledge`):

- the unseen tiles: not in this seat's hand, not played, not its own discard;
- each other seat's hand size: 7 less the tiles it has played (8 for a bidder holding the
  widow before its discard);
- the *dead* slot: what is left over (3-player Moon with a widow): the widow before the
  bidder takes it, then the bidder's discard; unknown to everyone but the bidder, and
  under no constraint (the bidder may discard any tile);
- voids: a seat that did not follow the suit led holds no tile that follows it
  (``FOLLOW_MASK[trump][led]``, the engine's own definition of following).

:func:`sample` deals the unseen tiles into the other hands and the dead slot, every
constraint respected; :func:`determinize` turns a sample into a full ``GameState``.
Searches over the hidden tiles use it: the example search bot's, and the OpenSpiel game's
``resample_from_infostate`` (:mod:`moon_sdk.openspiel_game`). Standard library only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from moon_sdk.rules import (
    FOLLOW_MASK,
    LED_SUIT,
    RANK,
    GameState,
    Observation,
    Phase,
    unseen_tiles,
)

DEAD = -1
"""The dead slot's key in a sample (the widow, or the bidder's discard)."""


@dataclass(frozen=True)
class Knowledge:
    """One seat's constraints on the hidden tiles."""

    seat: int
    n: int
    hand: int
    """This seat's tiles (exact)."""
    unseen: int
    played: int
    """Every tile played this hand (completed tricks and the trick in progress)."""
    sizes: tuple[int, ...]
    """Tiles each seat holds now (this seat's included)."""
    allowed: tuple[int, ...]
    """``allowed[s]``: the unseen tiles seat ``s`` may hold (its voids removed); this seat's
    own entry is its hand."""
    dead_size: int
    """Tiles of the dead slot still unseen by this seat (0 or 1)."""
    known_dead: int
    """The dead tiles this seat knows (its own discard as the bidder), else 0."""


def voids(obs: Observation) -> list[int]:
    """``voids[s]``: the tiles seat ``s`` cannot hold, from its failures to follow suit."""
    out = [0] * obs.ruleset.players
    trump = obs.trump
    if trump < 0:
        return out
    tricks: list[tuple[tuple[int, int], ...]] = [t.plays for t in obs.tricks]
    if obs.trick:
        tricks.append(obs.trick)
    for plays in tricks:
        follow = FOLLOW_MASK[trump][LED_SUIT[trump][plays[0][1]]]
        for seat, t in plays[1:]:
            if not (follow >> t) & 1:
                out[seat] |= follow
    return out


def played_by(obs: Observation) -> tuple[int, list[int]]:
    """``(all tiles played, tiles played by each seat)`` this hand."""
    per = [0] * obs.ruleset.players
    plays = [p for t in obs.tricks for p in t.plays] + list(obs.trick)
    for seat, t in plays:
        per[seat] |= 1 << t
    allp = 0
    for m in per:
        allp |= m
    return allp, per


def knowledge(obs: Observation) -> Knowledge:
    """The constraints ``obs.seat`` has on the hidden tiles (see the module doc)."""
    n = obs.ruleset.players
    me = obs.seat
    played, per = played_by(obs)
    unseen = unseen_tiles(obs)
    sizes = []
    for s in range(n):
        if s == me:
            sizes.append(obs.hand.bit_count())
            continue
        size = 7 - per[s].bit_count()
        if s == obs.bidder and obs.phase == Phase.DISCARD:
            size += 1  # holding the widow
        sizes.append(size)
    dead = unseen.bit_count() - (sum(sizes) - sizes[me])
    if not 0 <= dead <= 1:
        raise ValueError(f"inconsistent observation: {dead} unplaced tiles")
    vd = voids(obs)
    allowed = tuple(obs.hand if s == me else unseen & ~vd[s] for s in range(n))
    known_dead = (1 << obs.discard) if obs.discard >= 0 else 0
    return Knowledge(me, n, obs.hand, unseen, played, tuple(sizes), allowed, dead, known_dead)


def _greedy(k: Knowledge, rng: random.Random) -> dict[int, int] | None:
    """One try at a random deal: tiles in order of fewest possible places, each to a place
    with room drawn in proportion to the room left. None on a dead end."""
    slots = [s for s in range(k.n) if s != k.seat]
    room = {s: k.sizes[s] for s in slots}
    room[DEAD] = k.dead_size
    allowed = {s: k.allowed[s] for s in slots}
    allowed[DEAD] = k.unseen
    out = {s: 0 for s in room}
    tiles = []
    m = k.unseen
    while m:
        low = m & -m
        t = low.bit_length() - 1
        m ^= low
        places = [s for s in room if (allowed[s] >> t) & 1]
        tiles.append((len(places), rng.random(), t, places))
    tiles.sort()
    for _, _, t, places in tiles:
        total = 0
        for s in places:
            total += room[s]
        if total == 0:
            return None
        x = rng.random() * total
        for s in places:
            x -= room[s]
            if x < 0 and room[s]:
                break
        else:
            s = next(s for s in places if room[s])
        room[s] -= 1
        out[s] |= 1 << t
    return out


def _matching(k: Knowledge, rng: random.Random) -> dict[int, int]:
    """A deal by augmenting paths (always succeeds when a deal exists): random order, so
    varied though not uniform."""
    slots = [s for s in range(k.n) if s != k.seat] + [DEAD]
    cap = {s: (k.sizes[s] if s != DEAD else k.dead_size) for s in slots}
    allowed = {s: (k.allowed[s] if s != DEAD else k.unseen) for s in slots}
    tiles = [t for t in range(28) if (k.unseen >> t) & 1]
    rng.shuffle(tiles)
    owner: dict[int, int] = {}
    held: dict[int, list[int]] = {s: [] for s in slots}

    def place(t: int, seen: set[int]) -> bool:
        order = [s for s in slots if (allowed[s] >> t) & 1]
        rng.shuffle(order)
        for s in order:
            if len(held[s]) < cap[s]:
                held[s].append(t)
                owner[t] = s
                return True
        for s in order:
            if s in seen:
                continue
            seen.add(s)
            for u in list(held[s]):
                held[s].remove(u)
                if place(u, seen):
                    held[s].append(t)
                    owner[t] = s
                    return True
                held[s].append(u)
        return False

    for t in tiles:
        if not place(t, set()):
            raise ValueError("no deal is consistent with this observation")
    out = {s: 0 for s in slots}
    for t, s in owner.items():
        out[s] |= 1 << t
    return out


def sample(k: Knowledge, rng: random.Random, tries: int = 20) -> tuple[list[int], int]:
    """A deal consistent with ``k``: ``(hands, dead)``, every seat's tiles (this seat's
    exact) and the unseen dead tile (0 if none).

    Raises:
        ValueError: no deal fits (the observation contradicts itself).
    """
    for _ in range(tries):
        out = _greedy(k, rng)
        if out is not None:
            break
    else:
        out = _matching(k, rng)
    hands = [out[s] if s != k.seat else k.hand for s in range(k.n)]
    return hands, out[DEAD]


def determinize(obs: Observation, hands: list[int], dead: int) -> GameState:
    """A full ``GameState`` at ``obs``'s moment with these hidden tiles: the public history
    and this seat's tiles as observed, the other hands from ``hands``, the dead tile (the
    widow before it is taken, the discard after) from ``dead``.

    The state plays on like any other (its later hands are dealt from an arbitrary seed),
    so it is for searches and tests, not for replays.
    """
    r = obs.ruleset
    n = r.players
    s = GameState(r, seed=0)
    s.hand_number = obs.hand_number
    s.dealer = obs.dealer
    s._first_dealer = (obs.dealer - obs.hand_number) % n
    s.phase = obs.phase
    s.current = obs.current_player
    s.hands = list(hands)
    s.bids = list(obs.bids)
    s.high_bid = obs.bid
    s.bidder = obs.bidder
    s.trump = obs.trump
    s.tricks = list(obs.tricks)
    s.trick = list(obs.trick)
    s.tricks_taken = list(obs.tricks_taken)
    s.scores = list(obs.scores)
    played, per = played_by(obs)
    s.played = played
    s.led = LED_SUIT[obs.trump][obs.trick[0][1]] if obs.trick else -1
    me_bidder = obs.seat == obs.bidder
    if r.has_widow:
        taken = obs.bidder >= 0 and (
            obs.phase == Phase.DISCARD or obs.phase == Phase.PLAY
            or (obs.phase == Phase.TRUMP and not r.trump_before_widow))
        s.widow_taken = taken
        if not taken:
            s.widow = dead
            s.discard = -1
        elif me_bidder:
            s.widow = obs.widow
            s.discard = obs.discard
        elif obs.phase == Phase.DISCARD:  # not reached: only the bidder acts here
            s.widow = dead
            s.discard = -1
        else:  # as if the bidder had discarded the widow tile itself
            s.widow = dead
            s.discard = dead.bit_length() - 1
    else:
        s.widow = 0
        s.widow_taken = False
        s.discard = -1
    dealt = [hands[i] | per[i] for i in range(n)]
    if s.widow_taken and obs.bidder >= 0:
        b = obs.bidder
        dealt[b] = (dealt[b] | ((1 << s.discard) if s.discard >= 0 else 0)) & ~s.widow
    s.dealt = tuple(dealt)
    s.history = []
    s.hand_records = []
    s.outcome = None
    return s


def trick_state(trick: tuple[tuple[int, int], ...], trump: int) -> tuple[int, int, int, int]:
    """``(plays so far, suit led, winning seat, winning tile)`` of a trick in progress."""
    if not trick:
        return 0, -1, -1, -1
    led = LED_SUIT[trump][trick[0][1]]
    ranks = RANK[trump][led]
    ws, wt = trick[0]
    for seat, t in trick[1:]:
        if ranks[t] > ranks[wt]:
            ws, wt = seat, t
    return len(trick), led, ws, wt


__all__ = ["DEAD", "Knowledge", "determinize", "knowledge", "played_by", "sample",
           "trick_state", "voids"]
