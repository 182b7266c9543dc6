"""Fixed-size feature vectors of an :class:`~moon_sdk.rules.Observation`, for learning.

The PettingZoo environment's observations and the OpenSpiel game's observation and
information-state tensors are these vectors, and they are computed from the same
``Observation`` a :class:`~moon_sdk.Bot` receives in the arena, so a policy trained on
either plays in the arena as it trained (``features(obs)`` in ``Bot.act``).

Seats are relative to the observer (slot 0 is the observer, slot 1 the next seat in
turn...; 3-player games leave slot 3 empty) and so are scoring sides (slot 0 the
observer's side). Every value lies in [-2, 2]. Standard library only: plain lists of
floats; wrap them with ``numpy.asarray`` where you need arrays.

:func:`observation_features` (:data:`OBSERVATION_SIZE` values) holds, in this order
(:data:`OBSERVATION_PIECES`): the number of players, the ruleset's options, the phase,
the dealer, the seat to act, this seat's tiles, the widow it took and its discard, each
seat's bid this hand, the high bid, the bidder, the trumps, the tiles each seat has
played this hand, the trick in progress and its leader, the tricks each seat has taken
(/7) and each side's score (/target, clipped to [-2, 2]).
:func:`information_state_features` (:data:`INFORMATION_STATE_SIZE`) adds the order of
play: for each of the hand's 7 tricks, its leader and the tile played at each position,
which makes it perfect recall within the hand (earlier hands show only in the scores).
"""

from __future__ import annotations

from .rules import MOON_BID, Observation, Phase

_BID_SLOTS = {0: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 6, MOON_BID: 7}
"""Slot of a bid value in a seat's bid one-hot (slot 0: has not bid yet)."""
_HIGH_SLOTS = {0: 0, 3: 1, 4: 2, 5: 3, 6: 4, 7: 5, MOON_BID: 6}
_PHASE_SLOTS = {Phase.BIDDING: 0, Phase.DISCARD: 1, Phase.TRUMP: 2, Phase.PLAY: 3}

OBSERVATION_PIECES: tuple[tuple[str, int], ...] = (
    ("players", 2), ("rules", 12), ("phase", 4), ("dealer", 4), ("to_act", 4),
    ("hand", 28), ("widow", 28), ("discard", 28), ("bids", 4 * 8), ("high_bid", 7),
    ("bidder", 4), ("trump", 9), ("played", 4 * 28), ("trick", 4 * 28), ("leader", 4),
    ("tricks_taken", 4), ("scores", 3),
)
"""The observation vector's pieces, ``(name, size)`` in order."""
SEQUENCE_PIECE = ("sequence", 7 * (4 + 4 * 28))
"""The piece the information-state vector adds: per trick, its leader (4) and the tile at
each of the 4 positions (4 x 28)."""

_OFFSET: dict[str, int] = {}
_at = 0
for _name, _size in OBSERVATION_PIECES:
    _OFFSET[_name] = _at
    _at += _size
OBSERVATION_SIZE = _at
"""Length of :func:`observation_features`' vector (397)."""
INFORMATION_STATE_SIZE = OBSERVATION_SIZE + SEQUENCE_PIECE[1]
"""Length of :func:`information_state_features`' vector (1209)."""
del _at, _name, _size


def _fill(out: list[float], obs: Observation, private: bool) -> None:
    r = obs.ruleset
    n = r.players
    me = obs.seat
    o = _OFFSET
    out[o["players"] + (n - 3)] = 1.0
    rules = o["rules"]
    for i, flag in enumerate((r.remove_double_blank, r.has_widow, r.trump_before_widow,
                              r.allow_doubles_trump, r.allow_no_trump, r.moon_wins_game,
                              r.scoring == "marks", r.team_made_scores == "bid",
                              r.all_pass == "force_dealer")):
        if flag:
            out[rules + i] = 1.0
    out[rules + 9 + r.min_bid - 3] = 1.0
    phase = _PHASE_SLOTS.get(obs.phase)
    if phase is not None:
        out[o["phase"] + phase] = 1.0
    out[o["dealer"] + (obs.dealer - me) % n] = 1.0
    if obs.current_player >= 0:
        out[o["to_act"] + (obs.current_player - me) % n] = 1.0
    if private:
        for piece, mask in (("hand", obs.hand), ("widow", obs.widow)):
            base = o[piece]
            while mask:
                low = mask & -mask
                out[base + low.bit_length() - 1] = 1.0
                mask ^= low
        if obs.discard >= 0:
            out[o["discard"] + obs.discard] = 1.0
    bids = o["bids"]
    bid_of = dict(obs.bids)
    for seat in range(n):
        value = bid_of.get(seat)
        out[bids + 8 * ((seat - me) % n) + (0 if value is None else _BID_SLOTS[value])] = 1.0
    out[o["high_bid"] + _HIGH_SLOTS[obs.bid]] = 1.0
    if obs.bidder >= 0:
        out[o["bidder"] + (obs.bidder - me) % n] = 1.0
    if obs.trump >= 0:
        out[o["trump"] + obs.trump] = 1.0
    played = o["played"]
    for t in obs.tricks:
        for seat, tile in t.plays:
            out[played + 28 * ((seat - me) % n) + tile] = 1.0
    trick = o["trick"]
    for seat, tile in obs.trick:
        out[played + 28 * ((seat - me) % n) + tile] = 1.0
        out[trick + 28 * ((seat - me) % n) + tile] = 1.0
    if obs.trick:
        out[o["leader"] + (obs.trick[0][0] - me) % n] = 1.0
    for seat, taken in enumerate(obs.tricks_taken):
        out[o["tricks_taken"] + (seat - me) % n] = taken / 7
    sides = r.num_sides
    my_side = r.side_of(me)
    target = r.target
    for side, score in enumerate(obs.scores):
        out[o["scores"] + (side - my_side) % sides] = max(-2.0, min(2.0, score / target))


def observation_features(obs: Observation, private: bool = True) -> list[float]:
    """The observation vector of ``obs`` (:data:`OBSERVATION_SIZE` floats; see the module
    doc). ``private=False`` leaves out what only this seat knows (its tiles, the widow it
    took, its discard): the public observation."""
    out = [0.0] * OBSERVATION_SIZE
    _fill(out, obs, private)
    return out


def information_state_features(obs: Observation, private: bool = True) -> list[float]:
    """The observation vector followed by the hand's order of play
    (:data:`INFORMATION_STATE_SIZE` floats; see the module doc)."""
    out = [0.0] * INFORMATION_STATE_SIZE
    _fill(out, obs, private)
    n = obs.ruleset.players
    me = obs.seat
    base = OBSERVATION_SIZE
    tricks = [t.plays for t in obs.tricks]
    if obs.trick:
        tricks.append(obs.trick)
    for i, plays in enumerate(tricks):
        at = base + i * (4 + 4 * 28)
        out[at + (plays[0][0] - me) % n] = 1.0
        for position, (_, tile) in enumerate(plays):
            out[at + 4 + 28 * position + tile] = 1.0
    return out


__all__ = ["INFORMATION_STATE_SIZE", "OBSERVATION_PIECES", "OBSERVATION_SIZE", "SEQUENCE_PIECE",
           "information_state_features", "observation_features"]
