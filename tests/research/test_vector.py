"""moon_sdk.vector: N games in one call. Each row is what the pure engine says of its game
(followed apart, game by game), and the compiled vector agrees with the pure one action
for action over 2,000 games (benchmarks/vector.py --differential runs more)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from moon_sdk import vector
from moon_sdk.features import information_state_features, observation_features
from moon_sdk.rules import GameState, IllegalActionError, Ruleset, observe

ENGINES = ["compiled", "pure"]


def _need(engine: str) -> None:
    if engine == "compiled" and not vector.compiled_available():
        pytest.skip("no compiled core with the vector")


def test_game_seeds_are_the_splitmix64_stream():
    """The seeds are splitmix64's values >> 1 (the first one of seed 0 is the published
    0xE220A8397B1DCDAF)."""
    assert vector.splitmix64(0) == (0x9E3779B97F4A7C15, 0xE220A8397B1DCDAF)
    assert vector.game_seeds(0, 1) == [0xE220A8397B1DCDAF >> 1]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("preset,options,features", [
    ("moon3", {}, "observation"), ("moon4", {}, "information_state"),
    ("moon3", {"trump_before_widow": True, "all_pass": "force_dealer"}, "observation"),
])
def test_every_row_is_its_own_game(preset, options, features, engine):
    """Step 5 games with random legal actions (through game ends and restarts) and follow
    each apart in the pure engine from its seed: every step's row is the features of the
    pure observation of the seat to act, the mask its legal actions, the rewards the hand's
    score changes by seat, the flags the game's end, and an ended game restarts with the
    stream's next seed."""
    _need(engine)
    ruleset = Ruleset.from_dict({**Ruleset.preset(preset).to_dict(), **options})
    f = information_state_features if features == "information_state" else observation_features
    n = ruleset.players
    k, max_hands = 5, 4
    games = vector.VectorGames(k, preset, max_hands=max_hands, features=features,
                               engine=engine, **options)
    assert games.engine == engine
    obs, info = games.reset(seed=11)
    stream = vector.game_seeds(11, 10_000)
    assert games.game_seeds == stream[:k] == info["game_seed"].tolist()
    refs = [GameState(ruleset, seed) for seed in stream[:k]]
    drawn = k

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
                assert info["final_scores"][i].tolist() == list(ref.scores)
                refs[i] = GameState(ruleset, stream[drawn])
                drawn += 1
            else:
                assert not info["final_scores"][i].any()
            assert info["game_seed"][i] == refs[i].seed
        check(obs, info)
    assert ended >= 3


@pytest.mark.parametrize("engine", ENGINES)
def test_an_illegal_action_raises_and_no_game_moves(engine):
    _need(engine)
    games = vector.VectorGames(2, "moon3", engine=engine)
    obs, info = games.reset(seed=1)
    before = obs.copy()
    illegal = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    legal = int(np.flatnonzero(info["action_mask"][0])[0])
    with pytest.raises(IllegalActionError, match="^game 1: "):
        games.step([legal, illegal])
    assert [games.state(i).history for i in range(2)] == [[], []]
    with pytest.raises(ValueError, match="2 games need 2 actions"):
        games.step([legal])
    with pytest.raises(ValueError, match="2 games need 2 actions"):
        games.step([0.5, 1.0])
    obs, *_ = games.step([legal, legal])  # (both bidding: the lowest legal is a pass)
    assert games.state(0).history == [legal] and not np.array_equal(obs, before)


@pytest.mark.parametrize("engine", ENGINES)
def test_copy_false_rewrites_the_same_arrays(engine):
    _need(engine)
    games = vector.VectorGames(3, "moon4", engine=engine, copy=False)
    obs, info = games.reset(seed=2)
    first = obs.copy()
    again, *_ = games.step(np.argmax(info["action_mask"], axis=1))
    assert again is obs and not np.array_equal(again, first)
    fresh = vector.VectorGames(3, "moon4", engine=engine)
    o1, i1 = fresh.reset(seed=2)
    o2, *_ = fresh.step(np.argmax(i1["action_mask"], axis=1))
    assert o2 is not o1 and np.array_equal(o1, first)


def test_bad_arguments_give_one_line_errors():
    with pytest.raises(ValueError, match="num_games"):
        vector.VectorGames(0)
    with pytest.raises(ValueError, match="engine must be"):
        vector.VectorGames(1, engine="gpu")
    with pytest.raises(RuntimeError, match="reset"):
        vector.VectorGames(1).step([0])


# every preset and option the engine plays differently, both vector kinds
DIFFERENTIAL = [
    ("moon3", {}, "observation", 4),
    ("moon4", {}, "information_state", 3),
    ("moon3", {"trump_before_widow": True, "all_pass": "force_dealer", "min_bid": 3},
     "information_state", 5),
    ("moon4", {"scoring": "marks", "team_made_scores": "bid", "allow_no_trump": False},
     "observation", 5),
    ("moon3", {"remove_double_blank": True, "moon_wins_game": False,
               "allow_doubles_trump": False}, "observation", 5),
    ("moon4", {"min_bid": 5, "target_score": 11}, "observation", 20),
]


def differential(preset: str, options: dict, features: str, max_hands: int, games: int,
                 num_games: int = 64, seed: int = 0, threads: int = 1) -> dict[str, int]:
    """Step a compiled and a pure vector side by side with the same random legal actions
    until ``games`` games have ended; every array of every step must be equal. Returns the
    counts of steps and of games terminated and truncated."""
    a = vector.VectorGames(num_games, preset, max_hands=max_hands, features=features,
                           engine="compiled", threads=threads, **options)
    assert a.threads == threads
    b = vector.VectorGames(num_games, preset, max_hands=max_hands, features=features,
                           engine="pure", **options)
    oa, ia = a.reset(seed=seed)
    ob, ib = b.reset(seed=seed)
    assert np.array_equal(oa, ob)
    assert all(np.array_equal(ia[key], ib[key]) for key in ia)
    rng = np.random.default_rng(seed)
    counts = {"steps": 0, "terminated": 0, "truncated": 0}
    while counts["terminated"] + counts["truncated"] < games:
        noise = rng.integers(1, 128, ia["action_mask"].shape, dtype=np.int8)
        actions = np.argmax(ia["action_mask"] * noise, axis=1)
        ra, rb = a.step(actions), b.step(actions)
        for x, y in zip(ra[:4], rb[:4], strict=True):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        assert ra[4].keys() == rb[4].keys()
        for key in ra[4]:
            assert np.array_equal(ra[4][key], rb[4][key]), key
        ia = ra[4]
        counts["steps"] += 1
        counts["terminated"] += int(ra[2].sum())
        counts["truncated"] += int(ra[3].sum())
    return counts


@pytest.mark.parametrize("preset,options,features,max_hands", DIFFERENTIAL)
def test_the_compiled_vector_agrees_with_the_pure_one(preset, options, features, max_hands):
    """About 2,000 games in all (6 configs), action for action."""
    _need("compiled")
    counts = differential(preset, options, features, max_hands, games=340, seed=len(options))
    assert counts["terminated"] + counts["truncated"] >= 340
    if max_hands >= 20:
        assert counts["terminated"] > 0


@pytest.mark.parametrize("threads,num_games", [(2, 64), (3, 50)])
def test_threads_change_no_number(threads, num_games):
    """Split between threads (50 games in shares of 17, 17 and 16), the compiled vector
    still agrees with the pure one at every step, through games that end in several
    shares at once (their seeds drawn in the order of the games)."""
    _need("compiled")
    counts = differential("moon3", {}, "observation", 2, games=300, num_games=num_games,
                          seed=threads, threads=threads)
    assert counts["terminated"] + counts["truncated"] >= 300


def test_one_thread_unless_asked():
    _need("compiled")
    assert vector.VectorGames(1024, "moon3").threads == 1
    assert vector.VectorGames(4, "moon3", threads=2).threads == 2
    with pytest.raises(ValueError, match="threads must be"):
        vector.VectorGames(4, "moon3", threads=0)


def test_it_is_a_gymnasium_vector_env():
    import gymnasium

    games = vector.VectorGames(3, "moon4", features="information_state")
    assert isinstance(games, gymnasium.vector.VectorEnv) and games.num_envs == 3
    obs, info = games.reset(seed=3)
    assert games.observation_space.contains(obs)
    assert games.single_observation_space.shape == (1209,)
    assert games.single_action_space == gymnasium.spaces.Discrete(72)
    assert games.action_space.contains(np.argmax(info["action_mask"], axis=1))
