"""arena/protocol/turns.py: a turn encoded incrementally is, byte for byte, the turn built whole
(``observe`` + ``observation_to_pb`` + ``SerializeToString``, the referee's former path and
the protocol's definition), on every turn of whole games of every preset."""

from __future__ import annotations

import random

import pytest
from moon_sdk.convert import action_to_pb, observation_to_pb
from moon_sdk.rules import PRESETS, GameState, observe
from moon_sdk.v1 import bot_pb2 as bpb

from arena.protocol.turns import EncodedTurn, TurnEncoder, legal_actions_field


def whole(state: GameState, seat: int, preset: str, request_id: int, decision_ms: int,
          bank_ms: int) -> bytes:
    obs = observe(state, seat)
    return bpb.PlayResponse(turn=bpb.Turn(
        request_id=request_id, observation=observation_to_pb(obs, preset),
        legal_actions=[action_to_pb(a) for a in obs.legal_actions],
        decision_ms=decision_ms, bank_ms=bank_ms)).SerializeToString()


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_turn_of_whole_games_is_the_whole_message(preset):
    turns = 0
    for seed in (1, 2):
        state = GameState(PRESETS[preset], seed)
        rng = random.Random(seed)
        encoders = [TurnEncoder(state, s, preset) for s in range(state.n)]
        request = 0
        while not state.is_terminal() and request < 400:
            seat = state.current_player
            request += 1
            clocks = (rng.choice((0, 1, 2000, 300_000)), rng.choice((0, 7, 30_000)))
            got = EncodedTurn(request, encoders[seat].observation(state),
                              legal_actions_field(state.legal_actions()), *clocks).response()
            assert got == whole(state, seat, preset, request, *clocks)
            state.apply(rng.choice(state.legal_actions()))
            turns += 1
    assert turns > 100


def test_a_turn_sent_again_carries_the_new_clocks():
    state = GameState(PRESETS["moon4"], 3)
    turn = EncodedTurn(9, TurnEncoder(state, state.current_player, "moon4").observation(state),
                       legal_actions_field(state.legal_actions()), 2000, 30_000)
    turn.decision_ms, turn.bank_ms = 150, 0
    msg = bpb.PlayResponse.FromString(turn.response()).turn
    assert (msg.request_id, msg.decision_ms, msg.bank_ms) == (9, 150, 0)
    assert msg.observation.seat == state.current_player
    assert len(msg.legal_actions) == len(state.legal_actions())
    assert turn.message() == msg
