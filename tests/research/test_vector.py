"""moon_sdk.vector: N games in one call. Each row is what the pure engine says of its game
(followed apart, game by game), and the compiled vector agrees with the pure one action
for action over 2,000 games (benchmarks/vector.py --differential runs more)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from moon_sdk import vector
from moon_sdk.features import OBSERVATION_PIECES, information_state_features, observation_features
from moon_sdk.rules import GameState, IllegalActionError, Ruleset, observe

ENGINES = ["compiled", "pure"]
MODES = ["float32", "int8", "none"]
WIDTH = 9
"""The legal lists' width, worked out from docs/rules.md: at most 7 bids (a pass, 3..7 and
21 with min_bid 3), 8 discards (7 tiles and the widow), 9 trumps (0..6, doubles, none) and
7 plays (a hand of 7)."""


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
            legal = ref.legal_actions()
            assert np.flatnonzero(info["action_mask"][i]).tolist() == legal
            assert info["legal_actions"][i].tolist() == legal + [-1] * (WIDTH - len(legal))
            assert info["legal_count"][i] == len(legal)

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


@pytest.mark.parametrize("observations", MODES)
@pytest.mark.parametrize("engine", ENGINES)
def test_an_illegal_action_raises_and_no_game_moves(engine, observations):
    _need(engine)
    games = vector.VectorGames(2, "moon3", engine=engine, observations=observations)
    obs, info = games.reset(seed=1)
    before = obs.copy()
    illegal = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    legal = int(np.flatnonzero(info["action_mask"][0])[0])
    with pytest.raises(IllegalActionError, match="^game 1: "):
        games.step([legal, illegal])
    for wrong in (-1, 72, 1000):  # outside the action space
        with pytest.raises(IllegalActionError, match="^game 0: "):
            games.step([wrong, legal])
    assert [games.state(i).history for i in range(2)] == [[], []]
    with pytest.raises(ValueError, match="2 games need 2 actions"):
        games.step([legal])
    with pytest.raises(ValueError, match="2 games need 2 actions"):
        games.step([0.5, 1.0])
    obs, *_ = games.step([legal, legal])  # (both bidding: the lowest legal is a pass)
    assert games.state(0).history == [legal]
    assert observations == "none" or not np.array_equal(obs, before)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_refused_step_leaves_the_arrays_as_they_were(engine):
    """With copy=False the step writes in place: a refused one writes nothing."""
    _need(engine)
    games = vector.VectorGames(3, "moon4", engine=engine, copy=False, observations="int8")
    obs, info = games.reset(seed=4)
    kept = [obs.copy()] + [info[k].copy() for k in sorted(info)]
    actions = info["legal_actions"][:, 0].astype(np.int64)
    actions[2] = 71 if actions[2] != 71 else 0  # bidding: a trump is not legal
    with pytest.raises(IllegalActionError, match="^game 2: "):
        games.step(actions)
    assert all(np.array_equal(a, b) for a, b in
               zip(kept, [obs] + [info[k] for k in sorted(info)], strict=True))


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
    with pytest.raises(ValueError, match="observations must be"):
        vector.VectorGames(1, observations="float16")
    with pytest.raises(ValueError, match="target of at most 63"):
        vector.VectorGames(1, "moon3", observations="int8", target_score=64)
    vector.VectorGames(1, "moon3", observations="int8", target_score=63)
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
                 num_games: int = 64, seed: int = 0, threads: int = 1,
                 observations: str = "float32") -> dict[str, int]:
    """Step a compiled and a pure vector side by side with the same random legal actions
    until ``games`` games have ended; every array of every step must be equal. Returns the
    counts of steps and of games terminated and truncated."""
    a = vector.VectorGames(num_games, preset, max_hands=max_hands, features=features,
                           engine="compiled", threads=threads, observations=observations,
                           **options)
    assert a.threads == threads
    b = vector.VectorGames(num_games, preset, max_hands=max_hands, features=features,
                           engine="pure", observations=observations, **options)
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


@pytest.mark.parametrize("observations", MODES)
@pytest.mark.parametrize("preset,options,features,max_hands", DIFFERENTIAL)
def test_the_compiled_vector_agrees_with_the_pure_one(preset, options, features, max_hands,
                                                      observations):
    """About 2,000 games in all (6 configs) with float32 observations, 900 in each other
    mode, action for action."""
    _need("compiled")
    want = 340 if observations == "float32" else 150
    counts = differential(preset, options, features, max_hands, games=want,
                          seed=len(options), observations=observations)
    assert counts["terminated"] + counts["truncated"] >= want
    if max_hands >= 20:
        assert counts["terminated"] > 0


def _scale(ruleset: Ruleset, size: int) -> np.ndarray:
    """What turns the int8 observations into the float32 ones, from features.py's pieces:
    tricks taken are counted in sevenths, scores in targets, the rest is 0 or 1."""
    scale = np.ones(size, np.float32)
    at = 0
    for name, width in OBSERVATION_PIECES:
        if name == "tricks_taken":
            scale[at:at + width] = 7
        elif name == "scores":
            scale[at:at + width] = ruleset.target
        at += width
    return scale


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("preset,options,features,max_hands", DIFFERENTIAL)
def test_int8_observations_are_the_float32_ones_scaled(preset, options, features, max_hands,
                                                       engine):
    """Three vectors (float32, int8, none) stepped with the same actions through many
    hands: int8 / scale is float32 exactly, and every other array is the same in all."""
    _need(engine)
    ruleset = Ruleset.from_dict({**Ruleset.preset(preset).to_dict(), **options})
    made = {m: vector.VectorGames(16, preset, max_hands=max_hands, features=features,
                                  engine=engine, observations=m, **options) for m in MODES}
    size = made["float32"].size
    scale = _scale(ruleset, size)
    assert np.array_equal(made["int8"].observation_scale, scale)
    first = {m: g.reset(seed=9) for m, g in made.items()}
    obs = {m: o for m, (o, _) in first.items()}
    infos = {m: i for m, (_, i) in first.items()}
    rng = np.random.default_rng(3)
    fractions = 0
    for _ in range(60 if engine == "pure" else 400):
        assert obs["float32"].dtype == np.float32 and obs["int8"].dtype == np.int8
        assert obs["int8"].shape == (16, size) and obs["none"].shape == (16, 0)
        assert np.array_equal(obs["int8"].astype(np.float32) / scale, obs["float32"])
        fractions += int(np.count_nonzero(obs["float32"] % 1))
        for m in ("int8", "none"):
            assert all(np.array_equal(infos[m][k], infos["float32"][k]) for k in infos[m])
        info = infos["float32"]
        actions = info["legal_actions"][np.arange(16),
                                        (rng.random(16) * info["legal_count"]).astype(int)]
        steps = {m: g.step(actions) for m, g in made.items()}
        for m, (o, rewards, terminated, truncated, i) in steps.items():
            obs[m], infos[m] = o, i
            assert np.array_equal(rewards, steps["float32"][1])
            assert np.array_equal(terminated, steps["float32"][2])
            assert np.array_equal(truncated, steps["float32"][3])
    assert fractions > 0  # the scaled pieces were not all 0
    for m in ("int8", "none"):
        space = made[m].observation_space
        assert space.dtype == obs[m].dtype and space.contains(obs[m])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("preset,options", [
    ("moon3", {}), ("moon4", {}), ("moon3", {"min_bid": 3, "all_pass": "force_dealer"}),
    ("moon3", {"remove_double_blank": True, "allow_doubles_trump": False}),
])
def test_the_legal_lists_are_the_mask_and_never_wider_than_9(preset, options, engine):
    """Random games in every mode: each row of legal_actions is the mask's legal actions
    ascending, padded with -1 to 9, legal_count the mask's sum; 9 is never exceeded."""
    _need(engine)
    games = vector.VectorGames(32, preset, max_hands=3, engine=engine, observations="none",
                               **options)
    assert vector.MAX_LEGAL == WIDTH
    _, info = games.reset(seed=5)
    rng = np.random.default_rng(8)
    widest = 0
    for _ in range(100 if engine == "pure" else 1500):
        mask, legal, count = info["action_mask"], info["legal_actions"], info["legal_count"]
        assert legal.shape == (32, WIDTH) and legal.dtype == np.int8
        assert np.array_equal(count, mask.sum(axis=1))
        for row, m in zip(legal.tolist(), mask, strict=True):
            on = np.flatnonzero(m).tolist()
            assert row == on + [-1] * (WIDTH - len(on))
        widest = max(widest, int(count.max()))
        actions = legal[np.arange(32), (rng.random(32) * count).astype(int)]
        *_, info = games.step(actions)
    assert 7 <= widest <= WIDTH


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("preset,options,discards,trumps", [
    # a widow: 7 tiles and the widow to discard from; trumps 0..6, doubles, none
    ("moon3", {}, 8, list(range(63, 72))),
    # no widow: straight to trumps
    ("moon4", {}, None, list(range(63, 72))),
    # no 0-0, so no trump 0, and no doubles: 1..6 and none
    ("moon3", {"remove_double_blank": True, "allow_doubles_trump": False}, None,
     list(range(64, 70)) + [71]),
])
def test_the_widest_decisions(preset, options, discards, trumps, engine):
    """Bid 21 at once (the highest legal action opens with a moon bid, which ends the
    auction): a discard of 8 (moon3's bidder holds 8 tiles with the widow), then the trump
    decision, 9 of them where 0-0, doubles and no trumps are allowed (the bound)."""
    _need(engine)
    games = vector.VectorGames(6, preset, engine=engine, **options)
    _, info = games.reset(seed=2)
    *_, info = games.step(np.full(6, 62))  # bid 21
    if discards is not None:
        assert info["legal_count"].tolist() == [discards] * 6
        assert (info["legal_actions"][:, :discards] >= 28).all()
        assert (info["legal_actions"][:, :discards] < 56).all()
        *_, info = games.step(info["legal_actions"][:, 0])
    want = trumps + [-1] * (WIDTH - len(trumps))
    assert info["legal_actions"].tolist() == [want] * 6
    assert info["legal_count"].tolist() == [len(trumps)] * 6


@pytest.mark.parametrize("threads,num_games,observations", [
    (2, 64, "float32"), (3, 50, "float32"), (2, 64, "int8"), (3, 50, "none"),
])
def test_threads_change_no_number(threads, num_games, observations):
    """Split between threads (50 games in shares of 17, 17 and 16), the compiled vector
    still agrees with the pure one at every step, through games that end in several
    shares at once (their seeds drawn in the order of the games)."""
    _need("compiled")
    counts = differential("moon3", {}, "observation", 2, games=300, num_games=num_games,
                          seed=threads, threads=threads, observations=observations)
    assert counts["terminated"] + counts["truncated"] >= 300


def test_one_thread_unless_asked():
    _need("compiled")
    assert vector.VectorGames(1024, "moon3").threads == 1
    assert vector.VectorGames(4, "moon3", threads=2).threads == 2
    with pytest.raises(ValueError, match="threads must be"):
        vector.VectorGames(4, "moon3", threads=0)


@pytest.mark.parametrize("observations", MODES)
def test_the_observation_space_follows_the_mode(observations):
    games = vector.VectorGames(3, "moon3", observations=observations)
    obs, _ = games.reset(seed=1)
    width = 0 if observations == "none" else 397
    dtype = np.int8 if observations == "int8" else np.float32
    assert games.single_observation_space.shape == (width,) and obs.shape == (3, width)
    assert games.single_observation_space.dtype == dtype == obs.dtype
    assert games.observation_space.contains(obs)


def test_it_is_a_gymnasium_vector_env():
    import gymnasium

    games = vector.VectorGames(3, "moon4", features="information_state")
    assert isinstance(games, gymnasium.vector.VectorEnv) and games.num_envs == 3
    obs, info = games.reset(seed=3)
    assert games.observation_space.contains(obs)
    assert games.single_observation_space.shape == (1209,)
    assert games.single_action_space == gymnasium.spaces.Discrete(72)
    assert games.action_space.contains(np.argmax(info["action_mask"], axis=1))
