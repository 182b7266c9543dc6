"""The arena's own result types: their wire numbers, keys, and the results worked out by
hand from docs/protocol.md (forfeits rank last, the hand limit places by score)."""

from __future__ import annotations

import pytest
from moon_sdk.rules import GameState, Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.core.results import (
    ILLEGAL_ACTION_PUBLIC,
    Fault,
    FaultReason,
    GameResult,
    HandResult,
    Termination,
    hand_results,
)
from arena.protocol.convert import fault_from_pb, fault_to_pb, result_from_pb, result_to_pb


@pytest.mark.parametrize("enum, pb_enum, prefix", [
    (Termination, pb.Termination, "TERMINATION_"),
    (FaultReason, pb.FaultReason, "FAULT_REASON_")])
def test_enums_are_the_wire_numbers_member_for_member(enum, pb_enum, prefix):
    wire = {n[len(prefix):]: v for n, v in pb_enum.items() if not n.endswith("UNSPECIFIED")}
    assert {m.name: m.value for m in enum} == wire


def test_keys_round_trip_and_unknown_keys_are_refused():
    assert [t.key for t in Termination] == ["target", "moon", "forfeit", "cancelled",
                                            "aborted", "hand_limit"]
    assert FaultReason.from_key("out_of_memory") is FaultReason.OUT_OF_MEMORY
    for t in Termination:
        assert Termination.from_key(t.key) is t
    with pytest.raises(ValueError, match="'draw' is not one of target, moon"):
        Termination.from_key("draw")
    assert [t for t in Termination if not t.scored] == [Termination.CANCELLED,
                                                        Termination.ABORTED]


def test_a_forfeit_ranks_its_side_last_and_the_others_by_score():
    crash = Fault(1, FaultReason.CRASH, "exit 1", True)
    # 3 players, seat 1 (ahead on 9) forfeits: seats 0 and 2 tie on 5 and share first
    r = GameResult.forfeited(Ruleset.preset("moon3"), [5, 9, 5], [crash], 3)
    assert (r.termination, r.places, r.winner, r.forfeit) == \
        (Termination.FORFEIT, (1, 3, 1), None, crash)
    r = GameResult.forfeited(Ruleset.preset("moon3"), [5, 9, 7], [crash], 3)
    assert (r.places, r.winner) == ((2, 3, 1), 2)
    # 4 players: seat 3 is partnership 1, which ranks last whatever its score
    late = Fault(3, FaultReason.TIMEOUT, "no answer", True)
    r = GameResult.forfeited(Ruleset.preset("moon4"), [1, 6], [late], 2)
    assert (r.places, r.winner) == ((1, 2), 0)
    # two seats forfeit at once (start-up): both last, the one left first
    stall = [Fault(0, FaultReason.STARTUP_STALL, "", True),
             Fault(2, FaultReason.STARTUP_STALL, "", True)]
    r = GameResult.forfeited(Ruleset.preset("moon3"), [0, 0, 0], stall, 0)
    assert (r.places, r.winner, r.forfeit) == ((2, 1, 2), 1, stall[0])
    with pytest.raises(ValueError):
        GameResult.forfeited(Ruleset.preset("moon3"), [0, 0, 0], [], 0)


def test_a_stopped_game_places_nobody():
    r = GameResult.stopped(Termination.ABORTED, [3, 0, 1], 2)
    assert (r.winner, r.places, r.scores, r.hands_played) == (None, (), (3, 0, 1), 2)


def test_an_illegal_actions_reason_is_not_public():
    f = Fault(2, FaultReason.ILLEGAL_ACTION, "must follow fives: holds 5-5", False)
    assert f.public() == Fault(2, FaultReason.ILLEGAL_ACTION, ILLEGAL_ACTION_PUBLIC, False)
    t = Fault(2, FaultReason.TIMEOUT, "no answer within 2000 ms", True)
    assert t.public() is t


def test_protobuf_round_trip():
    f = Fault(1, FaultReason.PROTOCOL_ERROR, "answered request 3", True)
    assert fault_from_pb(fault_to_pb(f)) == f
    for r in (GameResult(Termination.FORFEIT, 0, (4, -2, 3), (1, 3, 2), 5, f),
              GameResult(Termination.HAND_LIMIT, None, (7, 7), (1, 1), 200),
              GameResult.stopped(Termination.CANCELLED, (0, 0, 0), 0)):
        m = result_to_pb(r)
        assert m.HasField("winner") == (r.winner is not None)
        assert m.HasField("forfeit") == (r.forfeit is not None)
        assert result_from_pb(m) == r
    m = result_to_pb(GameResult(Termination.MOON, 1, (0, 21), (2, 1), 1))
    assert m.termination == pb.TERMINATION_MOON and m.winner == 1


def test_hand_results_of_a_game_cut_short_in_its_second_hand():
    # moon3, seed 4: play the first hand out with the first legal action each time,
    # then one bid of the second hand
    s = GameState(Ruleset.preset("moon3"), 4)
    while not s.hand_records:
        s.apply(s.legal_actions()[0])
    s.apply(s.legal_actions()[-1])  # the moon: the highest bid
    [first, second] = hand_results(s, Termination.FORFEIT)
    rec = s.hand_records[0]
    assert first == HandResult(0, rec.dealer, None if rec.bidder < 0 else rec.bidder,
                               rec.bid, None if rec.trump < 0 else rec.trump, rec.made,
                               rec.tricks_taken, rec.deltas, True)
    assert second == HandResult(1, s.dealer, s.bidder, 21, None, None, (0, 0, 0), None,
                                False)
    # at the hand limit the next deal was never played: only the finished hands
    assert hand_results(s, Termination.HAND_LIMIT) == (first,)
