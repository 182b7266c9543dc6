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
from moon_sdk.rules import GameState, Phase, Trick, tiles_of
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
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _uint_field(number: int, value: int) -> bytes:
    """A proto3 scalar field (``uint32``/``uint64``): nothing when 0, as proto3 encodes."""
    return bytes([number << 3]) + _varint(value) if value else b""


@functools.lru_cache(maxsize=4096)
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


def legal_actions_field(actions: list[int] | tuple[int, ...]) -> bytes:
    """``Turn.legal_actions`` encoded, for engine actions (sorted, as the engine gives)."""
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
        mid = pb.Observation(
            phase=_PHASE[s.phase], hand_number=s.hand_number, dealer=s.dealer,
            hand=[_TILE[t] for t in reversed(tiles_of(s.hands[seat]))],
            bids=[pb.SeatBid(seat=b, value=v) for b, v in s.bids], bid=s.high_bid)
        if s.current_player >= 0:
            mid.current_seat = s.current_player
        if is_bidder:
            if s.widow_taken and s.widow:
                mid.widow.extend([_TILE[t] for t in reversed(tiles_of(s.widow))])
            if s.discard >= 0:
                mid.discard.CopyFrom(_TILE[s.discard])
        if s.bidder >= 0:
            mid.bidder = s.bidder
        if s.trump >= 0:
            mid.trump.CopyFrom(trump_to_pb(s.trump))
        tricks = s.tricks
        done, hand = self._tricks_key
        if hand != s.hand_number or len(tricks) < done:
            self._tricks, done = b"", 0
        if len(tricks) > done:
            self._tricks += b"".join([_trick_field(t) for t in tricks[done:]])
        self._tricks_key = (len(tricks), s.hand_number)
        records = s.hand_records
        if len(records) > self._hands_done:
            self._hands += b"".join([_hand_field(h) for h in records[self._hands_done:]])
            self._hands_done = len(records)
        tail = pb.Observation(trick=[pb.SeatPlay(seat=p, tile=_TILE[x]) for p, x in s.trick],
                              tricks_taken=s.tricks_taken, scores=s.scores)
        return b"".join((self._head, mid.SerializeToString(), self._tricks,
                         tail.SerializeToString(), self._hands))


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
        body = b"".join((_uint_field(1, self.request_id), _TURN_TAG, _varint(len(obs)), obs,
                         self.legal_actions, _uint_field(4, self.decision_ms),
                         _uint_field(5, self.bank_ms)))
        out = TurnBytes(_TURN_TAG + _varint(len(body)) + body)
        out.request_id = self.request_id
        return out

    def message(self) -> bpb.Turn:
        """The same turn as a message (for tools and tests)."""
        return bpb.PlayResponse.FromString(self.response()).turn


__all__ = ["EncodedTurn", "TurnBytes", "TurnEncoder", "legal_actions_field"]
