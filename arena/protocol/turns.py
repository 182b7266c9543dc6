"""Each turn's message, encoded once and built incrementally: the referee's hot path.

A ``PlayResponse{turn}`` carries the seat's whole observation (docs/protocol.md), on
average about 1.2 KB, mostly the finished tricks of the hand and the finished hands of the
game, which do not change once they are done. :class:`TurnEncoder` (one per seat and game)
keeps those parts as encoded bytes and adds only what is new since the seat's last turn;
the rest of the observation (a few small fields) is encoded afresh per turn. Protocol
Buffers' wire format is the concatenation of a message's encoded fields, so joining the
parts in field order gives exactly the bytes that ``SerializeToString`` of the whole
message would (tests/test_turns.py checks it over whole games): a bot sees nothing new.

The result is bytes, sent as they are (the server's response serializer passes bytes
through), so no ``PlayResponse`` is built or serialized per turn.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from moon_sdk.convert import (
    action_to_pb,
    hand_summary_to_pb,
    ruleset_to_pb,
    tile_to_pb,
    trick_to_pb,
    trump_to_pb,
)
from moon_sdk.rules import GameState, Phase, Trick
from moon_sdk.rules.observation import HandSummary
from moon_sdk.v1 import bot_pb2 as bpb
from moon_sdk.v1 import game_pb2 as pb

_PHASE = {Phase.BIDDING: pb.PHASE_BIDDING, Phase.DISCARD: pb.PHASE_DISCARD,
          Phase.TRUMP: pb.PHASE_TRUMP, Phase.PLAY: pb.PHASE_PLAY,
          Phase.GAME_OVER: pb.PHASE_GAME_OVER}
_TILE = tuple(tile_to_pb(t) for t in range(28))
_TURN_TAG = b"\x12"
"""``PlayResponse.turn`` and ``Turn.observation``: both field 2, length-delimited."""


def _varint(n: int) -> bytes:
    """``n`` (>= 0) as a protobuf varint (a turn's lengths: one or two bytes).

    The caches of this module are sized for the reuse they serve, which is near in time (a
    game's seats, a hand's turns): a long-running referee (``moon host run``) meets ever new
    keys (clock values, tricks, scores), and a large cache only fills slowly with them, so
    its memory crept up over thousands of games (about 4.7 MB with the earlier sizes)."""
    if n < 0x80:
        return _ONE_BYTE[n]
    if n < 0x4000:
        return bytes(((n & 0x7F) | 0x80, n >> 7))
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_ONE_BYTE = tuple(bytes((n,)) for n in range(0x80))


@functools.lru_cache(maxsize=1024)
def _uint_field(number: int, value: int) -> bytes:
    """A proto3 scalar field (``uint32``/``uint64``): nothing when 0, as proto3 encodes."""
    return bytes([number << 3]) + _varint(value) if value else b""


@functools.lru_cache(maxsize=64)
def _trick_field(t: Trick) -> bytes:
    return bytes(pb.Observation(tricks=[trick_to_pb(t)]).SerializeToString())


@functools.lru_cache(maxsize=128)
def _legal_field(a: int) -> bytes:
    return bytes(bpb.Turn(legal_actions=[action_to_pb(a)]).SerializeToString())


def _hand_field(h: object) -> bytes:
    """``Observation.hands`` for one finished hand record (as
    :func:`moon_sdk.rules.observation.summarize` summarizes it)."""
    s = HandSummary(h.number, h.dealer, h.bids, h.bidder, h.bid,  # type: ignore[attr-defined]
                    h.trump, h.tricks_taken, h.made, h.deltas, h.scores)  # type: ignore[attr-defined]
    return bytes(pb.Observation(hands=[hand_summary_to_pb(s)]).SerializeToString())


# Each piece of an Observation below is encoded by protobuf itself, once (cached), so the
# joined pieces are exactly what serializing the whole message gives.
_HAND = tuple(bytes(pb.Observation(hand=[_TILE[t]]).SerializeToString()) for t in range(28))
_WIDOW = tuple(bytes(pb.Observation(widow=[_TILE[t]]).SerializeToString()) for t in range(28))


def _tile_chunks(field: tuple[bytes, ...]) -> tuple[tuple[bytes, ...], ...]:
    """For each 7-tile chunk of a tile set (tiles 0-6, 7-13, 14-20, 21-27), its tiles'
    pieces of ``field`` joined, highest tile first, for each of the chunk's 128 subsets."""
    return tuple(tuple(b"".join([field[base + i] for i in reversed(range(7)) if sub >> i & 1])
                       for sub in range(128)) for base in (0, 7, 14, 21))


_HAND_CHUNKS = _tile_chunks(_HAND)
_WIDOW_CHUNKS = _tile_chunks(_WIDOW)


def _tiles_field(chunks: tuple[tuple[bytes, ...], ...], mask: int) -> bytes:
    """A repeated ``Tile`` field of the tile set ``mask``, highest tile first (as
    ``tiles_to_pb`` lists them), from its four chunks."""
    return (chunks[3][mask >> 21 & 127] + chunks[2][mask >> 14 & 127]
            + chunks[1][mask >> 7 & 127] + chunks[0][mask & 127])
_DISCARD = tuple(bytes(pb.Observation(discard=_TILE[t]).SerializeToString())
                 for t in range(28))


@functools.lru_cache(maxsize=4096)
def _scalars(phase: int, hand_number: int, dealer: int, current: int) -> bytes:
    """``Observation`` fields 3-6 (``current`` -1: no seat to act)."""
    # protoc's stubs take a Phase or its name; the number is as good on the wire
    m = pb.Observation(phase=phase, hand_number=hand_number, dealer=dealer)  # type: ignore[arg-type]
    if current >= 0:
        m.current_seat = current
    return bytes(m.SerializeToString())


@functools.lru_cache(maxsize=256)
def _bids(bids: tuple[tuple[int, int], ...]) -> bytes:
    """``Observation.bids`` (field 10)."""
    return bytes(pb.Observation(bids=[pb.SeatBid(seat=b, value=v) for b, v in bids])
                 .SerializeToString())


@functools.lru_cache(maxsize=4096)
def _contract(bidder: int, bid: int, trump: int) -> bytes:
    """``Observation`` fields 11-13: the bidder (-1: none), the bid, the trump (-1: none)."""
    m = pb.Observation(bid=bid)
    if bidder >= 0:
        m.bidder = bidder
    if trump >= 0:
        m.trump.CopyFrom(trump_to_pb(trump))
    return bytes(m.SerializeToString())


@functools.lru_cache(maxsize=512)
def _play_field(seat: int, tile: int) -> bytes:
    """One ``Observation.trick`` entry (field 15): a play of the trick in progress."""
    return bytes(pb.Observation(trick=[pb.SeatPlay(seat=seat, tile=_TILE[tile])])
                 .SerializeToString())


@functools.lru_cache(maxsize=256)
def _counts(tricks_taken: tuple[int, ...], scores: tuple[int, ...]) -> bytes:
    """``Observation`` fields 16-17: tricks taken per seat, scores."""
    return bytes(pb.Observation(tricks_taken=tricks_taken, scores=scores).SerializeToString())


def legal_actions_field(actions: list[int] | tuple[int, ...]) -> bytes:
    """``Turn.legal_actions`` encoded, for engine actions (sorted, as the engine gives)."""
    return _legal_actions(tuple(actions))


@functools.lru_cache(maxsize=512)
def _legal_actions(actions: tuple[int, ...]) -> bytes:
    # the lists recur: an auction's bids, the trumps, a hand's plays over its tricks
    return b"".join([_legal_field(a) for a in actions])


class TurnEncoder:
    """One seat's observation in one game, as ``Observation`` bytes, per turn.

    Equal to ``observation_to_pb(observe(state, seat), preset).SerializeToString()``
    (:mod:`moon_sdk.convert`, :func:`moon_sdk.rules.observe`), built from what changed.
    The state must be the same game throughout (its finished hands only ever grow).
    """

    def __init__(self, state: GameState, seat: int, preset: str = "") -> None:
        self.seat = seat
        self._head = pb.Observation(
            seat=seat, ruleset=ruleset_to_pb(state.ruleset, preset)).SerializeToString()
        self._hands = b""
        self._hands_done = 0
        self._tricks = b""
        self._tricks_key = (0, -1)

    def observation(self, state: GameState) -> bytes:
        """This seat's ``Observation`` of ``state`` now, encoded."""
        seat = self.seat
        s = state
        is_bidder = seat == s.bidder
        parts = [self._head,
                 _scalars(_PHASE[s.phase], s.hand_number, s.dealer, s.current_player),
                 _tiles_field(_HAND_CHUNKS, s.hands[seat])]
        if is_bidder:
            if s.widow_taken and s.widow:
                parts.append(_tiles_field(_WIDOW_CHUNKS, s.widow))
            if s.discard >= 0:
                parts.append(_DISCARD[s.discard])
        if s.bids:
            parts.append(_bids(tuple(s.bids)))
        parts.append(_contract(s.bidder, s.high_bid, s.trump))
        tricks = s.tricks
        done, hand = self._tricks_key
        if hand != s.hand_number or len(tricks) < done:
            self._tricks, done = b"", 0
        if len(tricks) > done:
            self._tricks += b"".join([_trick_field(t) for t in tricks[done:]])
        self._tricks_key = (len(tricks), s.hand_number)
        parts.append(self._tricks)
        for p, x in s.trick:
            parts.append(_play_field(p, x))
        parts.append(_counts(tuple(s.tricks_taken), tuple(s.scores)))
        records = s.hand_records
        if len(records) > self._hands_done:
            self._hands += b"".join([_hand_field(h) for h in records[self._hands_done:]])
            self._hands_done = len(records)
        parts.append(self._hands)
        return b"".join(parts)


class TurnBytes(bytes):
    """A ``PlayResponse{turn}``'s bytes that know their ``request_id`` (the server tells the
    match when it has delivered the turn)."""

    request_id: int


@dataclass
class EncodedTurn:
    """A ``Turn`` whose observation and legal actions are encoded; the clock fields change
    when the turn is sent again to a seat that came back (:meth:`response` re-encodes)."""

    request_id: int
    observation: bytes
    legal_actions: bytes
    decision_ms: int
    bank_ms: int

    def response(self) -> TurnBytes:
        """The ``PlayResponse{turn}`` bytes."""
        obs = self.observation
        request = _uint_field(1, self.request_id)
        obs_len = _varint(len(obs))
        clocks = _uint_field(4, self.decision_ms) + _uint_field(5, self.bank_ms)
        legal = self.legal_actions
        size = len(request) + 1 + len(obs_len) + len(obs) + len(legal) + len(clocks)
        out = TurnBytes(b"".join((_TURN_TAG, _varint(size), request, _TURN_TAG, obs_len, obs,
                                  legal, clocks)))
        out.request_id = self.request_id
        return out

    def message(self) -> bpb.Turn:
        """The same turn as a message (for tools and tests)."""
        return bpb.PlayResponse.FromString(self.response()).turn


__all__ = ["EncodedTurn", "TurnBytes", "TurnEncoder", "legal_actions_field"]
