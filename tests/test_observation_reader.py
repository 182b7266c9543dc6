"""moon_sdk.convert.ObservationReader (the SDK bot loop's converter, one per stream): every
turn it reads is the engine's own observation of that seat (``observe``), on every turn of
whole games of every preset, though it converts each finished hand once; a reader that meets
another game, or a list of finished hands that is not the last one extended, converts it
whole."""

from __future__ import annotations

import random

import pytest
from moon_sdk.convert import ObservationReader, ProtocolError, action_to_pb, observation_to_pb
from moon_sdk.rules import PRESETS, GameState, observe
from moon_sdk.v1 import bot_pb2 as bpb


def turn_of(state: GameState, seat: int, preset: str) -> bpb.Turn:
    """The turn as the protocol defines it, parsed back as a bot receives it."""
    obs = observe(state, seat)
    raw = bpb.PlayResponse(turn=bpb.Turn(
        request_id=1, observation=observation_to_pb(obs, preset),
        legal_actions=[action_to_pb(a) for a in obs.legal_actions])).SerializeToString()
    return bpb.PlayResponse.FromString(raw).turn


def play(preset: str, seed: int, readers: list[ObservationReader]) -> tuple[int, int]:
    """Plays a random game, each seat's turns read by its reader; returns (turns, the most
    finished hands a turn carried)."""
    state = GameState(PRESETS[preset], seed)
    rng = random.Random(seed)
    turns = most = 0
    while not state.is_terminal() and turns < 600:
        seat = state.current_player
        t = turn_of(state, seat, preset)
        got = readers[seat].observation(t.observation, list(t.legal_actions))
        assert got == observe(state, seat)
        most = max(most, len(got.hands))
        state.apply(rng.choice(state.legal_actions()))
        turns += 1
    return turns, most


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_turn_of_whole_games_is_the_seats_observation(preset):
    readers = [ObservationReader() for _ in range(PRESETS[preset].players)]
    turns, most = play(preset, 1, readers)
    assert turns > 100 and most >= 2
    # the same readers meet another game (other finished hands, fewer of them at first)
    turns, most = play(preset, 2, readers)
    assert turns > 100 and most >= 2


def test_a_list_that_is_not_the_last_one_extended_is_read_whole():
    state = GameState(PRESETS["moon3"], 5)
    rng = random.Random(5)
    while len(state.hand_records) < 3:
        state.apply(rng.choice(state.legal_actions()))
    seat = state.current_player
    t = turn_of(state, seat, "moon3")
    reader = ObservationReader()
    assert len(reader.observation(t.observation).hands) == 3
    # the same count, but the last hand is another message; then an earlier hand dropped
    changed = bpb.Turn()
    changed.CopyFrom(t)
    changed.observation.hands[-1].scores[0] += 7
    assert reader.observation(changed.observation).hands[-1].scores[0] == \
        t.observation.hands[-1].scores[0] + 7
    del changed.observation.hands[0]
    shorter = reader.observation(changed.observation).hands
    assert shorter[:1] == observe(state, seat).hands[1:2] and len(shorter) == 2
    assert shorter[1].scores[0] == t.observation.hands[-1].scores[0] + 7
    assert reader.observation(t.observation).hands == observe(state, seat).hands


def test_a_value_out_of_range_is_a_protocol_error_every_time():
    state = GameState(PRESETS["moon3"], 4)
    t = turn_of(state, state.current_player, "moon3")
    bad_hand = bpb.Turn()
    bad_hand.CopyFrom(t)
    bad_hand.observation.hand[0].high = 7
    bad_action = bpb.Turn()
    bad_action.CopyFrom(t)
    bad_action.legal_actions[0].bid.value = 9  # no such bid (a bid's values are 0, 4..7)
    reader = ObservationReader()
    for _ in range(2):  # the second time too: no error is cached away
        with pytest.raises(ProtocolError, match="tile ends must be 0..6, got 7-"):
            reader.observation(bad_hand.observation, list(bad_hand.legal_actions))
        with pytest.raises(ProtocolError, match="9"):
            reader.observation(bad_action.observation, list(bad_action.legal_actions))
    assert reader.observation(t.observation, list(t.legal_actions)) == \
        observe(state, state.current_player)


def test_deferred_observations_equal_the_seats_observation_whichever_fields_are_read():
    """The bot loop's deferred observations: every turn of whole games of every preset equals
    ``observe`` (compared field by field, either way round, and hashed alike), whether a
    field was read before or not; a copy or a pickle is the plain Observation."""
    import copy
    import dataclasses
    import pickle

    from moon_sdk.rules import Observation

    names = [f.name for f in dataclasses.fields(Observation)]
    for preset in sorted(PRESETS):
        state = GameState(PRESETS[preset], 3)
        readers = [ObservationReader() for _ in range(state.n)]
        rng = random.Random(3)
        turns = 0
        while not state.is_terminal() and turns < 400:
            seat = state.current_player
            t = turn_of(state, seat, preset)
            got = readers[seat].deferred(t.observation, list(t.legal_actions))
            want = observe(state, seat)
            assert isinstance(got, Observation)
            if turns % 3 == 0:  # some turns read one field first, in another order
                name = names[turns % len(names)]
                assert getattr(got, name) == getattr(want, name)
            if turns % 2:
                assert want == got and hash(want) == hash(got)
            else:
                assert got == want and repr(got) == repr(want)
            for other in (copy.copy(got), pickle.loads(pickle.dumps(got))):
                assert type(other) is Observation and other == want
            assert dataclasses.replace(got, seat=9) == dataclasses.replace(want, seat=9)
            state.apply(rng.choice(state.legal_actions()))
            turns += 1
        assert turns > 100


def test_a_deferred_field_out_of_range_is_a_protocol_error_when_read():
    state = GameState(PRESETS["moon3"], 4)
    t = turn_of(state, state.current_player, "moon3")
    t.observation.hand[0].high = 7
    obs = ObservationReader().deferred(t.observation, list(t.legal_actions))
    assert obs.legal_actions == tuple(state.legal_actions())  # the rest reads fine
    for _ in range(2):  # the second time too: no error is kept as the field's value
        with pytest.raises(ProtocolError, match="tile ends must be 0..6, got 7-"):
            obs.hand  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'no_such_field'"):
        obs.no_such_field  # noqa: B018
    t.legal_actions[0].bid.value = 9  # the legal actions are converted at once
    with pytest.raises(ProtocolError, match="9"):
        ObservationReader().deferred(t.observation, list(t.legal_actions))
