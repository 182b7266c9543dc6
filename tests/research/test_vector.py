"""moon_sdk.vector: N games in one call, each row what the pure engine says of its game."""

from __future__ import annotations

import random

import numpy as np
import pytest
from moon_sdk import vector
from moon_sdk.features import information_state_features, observation_features
from moon_sdk.rules import GameState, IllegalActionError, Ruleset, fast, observe


@pytest.mark.parametrize("engine", ["compiled", "pure"])
@pytest.mark.parametrize("preset,options,features", [
    ("moon3", {}, "observation"), ("moon4", {}, "information_state"),
    ("moon3", {"trump_before_widow": True, "all_pass": "force_dealer"}, "observation"),
])
def test_every_row_is_its_own_game(preset, options, features, engine, monkeypatch):
    """Step 5 games with random legal actions (through game ends and restarts) and follow
    each apart in the pure engine from its seed: every step's row is the features of the
    pure observation of the seat to act, the mask its legal actions, the rewards the hand's
    score changes by seat, the flags the game's end, and an ended game restarts."""
    if engine == "pure":
        monkeypatch.setattr(vector, "GameState", GameState)
    elif not fast.COMPILED:
        pytest.skip(f"no compiled core: {fast.REASON}")
    ruleset = Ruleset.from_dict({**Ruleset.preset(preset).to_dict(), **options})
    f = information_state_features if features == "information_state" else observation_features
    n = ruleset.players
    k, max_hands = 5, 4
    games = vector.VectorGames(k, preset, max_hands=max_hands, features=features, **options)
    obs, info = games.reset(seed=11)
    refs = [GameState(ruleset, seed) for seed in games.game_seeds]
    assert len(set(games.game_seeds)) == k

    def check(obs, info):
        for i, ref in enumerate(refs):
            seat = ref.current_player
            assert info["seat"][i] == seat
            assert np.array_equal(obs[i], np.asarray(f(observe(ref, seat)), np.float32))
            assert np.flatnonzero(info["action_mask"][i]).tolist() == ref.legal_actions()

    check(obs, info)
    rng = random.Random(5)
    ended = 0
    for _ in range(400):
        actions = [rng.choice(np.flatnonzero(m).tolist()) for m in info["action_mask"]]
        obs, rewards, terminated, truncated, info = games.step(np.asarray(actions))
        for i, (ref, action) in enumerate(zip(refs, actions, strict=True)):
            hands = len(ref.hand_records)
            ref.apply(action)
            want = [0.0] * n
            if len(ref.hand_records) > hands:
                want = [float(ref.hand_records[-1].deltas[ruleset.side_of(p)])
                        for p in range(n)]
            assert rewards[i].tolist() == want
            over = ref.is_terminal()
            stop = not over and len(ref.hand_records) >= max_hands
            assert (terminated[i], truncated[i]) == (over, stop)
            if over or stop:
                ended += 1
                assert info["final_scores"][i] == list(ref.scores)
                refs[i] = GameState(ruleset, games.game_seeds[i])
            else:
                assert i not in info["final_scores"]
        check(obs, info)
    assert ended >= 3


def test_an_illegal_action_raises():
    games = vector.VectorGames(2, "moon3")
    obs, info = games.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"][0] == 0)[0])
    legal = int(np.flatnonzero(info["action_mask"][1])[0])
    with pytest.raises(IllegalActionError):
        games.step([illegal, legal])
    with pytest.raises(ValueError, match="2 games need 2 actions"):
        games.step([legal])
