"""The PettingZoo environment: PettingZoo's own API and seed tests for 3 and 4 players and
every rules option, and games that are the arena's games."""

from __future__ import annotations

import random

import numpy as np
import pytest
from moon_sdk import Bot
from moon_sdk.features import OBSERVATION_PIECES, observation_features
from moon_sdk.local import play_local
from moon_sdk.pettingzoo_env import env, parallel_env, raw_env
from moon_sdk.rules import PASS, GameState, Ruleset, observe, tiles_of
from pettingzoo.test import api_test, seed_test

CONFIGS = [
    ("moon3", {}), ("moon4", {}), ("moon3-21", {}), ("moon3-marks", {}),
    ("moon3-pagat", {}), ("moon4-force", {}),
    ("moon3", {"min_bid": 3, "allow_doubles_trump": False, "allow_no_trump": False}),
    ("moon3", {"moon_wins_game": False, "all_pass": "force_dealer", "min_bid": 5}),
    ("moon4", {"team_made_scores": "bid", "scoring": "marks", "target_marks": 3}),
    ("moon3", {"target_score": 7, "trump_before_widow": True}),
]


@pytest.mark.parametrize("preset,options", CONFIGS, ids=lambda c: str(c))
def test_pettingzoo_api_and_seed_tests_pass(preset, options):
    api_test(env(preset, render_mode="ansi", **options), num_cycles=300)
    seed_test(lambda: env(preset, **options), num_cycles=200)
    # the information-state features pass too
    api_test(env(preset, features="information_state", reward="game", **options),
             num_cycles=100)


class SeededRandom(Bot):
    name = "seeded-random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, obs):
        return self.rng.choice(obs.legal_actions)


@pytest.mark.parametrize("preset", ["moon3", "moon4"])
def test_an_episode_is_the_arena_game_of_its_seed(preset):
    """Reset with a seed, step the actions of a local game of that seed: each agent sees
    what the arena showed its seat, the rewards add up to the final scores, and the
    episode ends when the game does."""
    n = 4 if preset == "moon4" else 3
    record = play_local([SeededRandom(i) for i in range(n)], preset, seed=21,
                        time_control={"max_hands": 40})
    e = env(preset, max_hands=40)
    e.reset(seed=21)
    raw = e.unwrapped
    totals = dict.fromkeys(raw.possible_agents, 0.0)
    actions = iter(record["actions"])
    steps = 0
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        totals[agent] += reward
        seat = int(agent.split("_")[1])
        if terminated or truncated:
            final = observe(raw.game, seat)
            assert (final.outcome is not None) == terminated
            assert obs["observation"].tolist() == pytest.approx(observation_features(final))
            assert not obs["action_mask"].any()
            e.step(None)
            continue
        assert seat == raw.game.current_player
        want = observe(raw.game, seat)
        assert raw.moon_observation(agent) == want
        assert obs["observation"].tolist() == pytest.approx(observation_features(want))
        assert np.flatnonzero(obs["action_mask"]).tolist() == list(want.legal_actions)
        e.step(next(actions))
        steps += 1
    assert steps == len(record["actions"])
    ruleset = Ruleset.preset(preset)
    scores = record["result"]["scores"]
    assert [totals[f"seat_{s}"] for s in range(n)] == [scores[ruleset.side_of(s)]
                                                         for s in range(n)]
    assert raw.game.history == record["actions"]


def test_observation_features_by_hand():
    """Seat 1's first view of seed 3 (3 players): its seven tiles in the hand piece, the
    dealer's slot relative to seat 1, nobody's bid yet, every score 0."""
    s = GameState(Ruleset(), 3)
    f = observation_features(observe(s, 1))
    at = {}
    i = 0
    for name, size in OBSERVATION_PIECES:
        at[name] = (i, i + size)
        i += size
    lo, hi = at["hand"]
    assert [t for t in range(28) if f[lo + t]] == tiles_of(s.hands[1])
    lo, hi = at["dealer"]
    assert f[lo:hi] == [1.0 if k == (s.dealer - 1) % 3 else 0.0 for k in range(4)]
    lo, hi = at["bids"]
    assert [f[lo + 8 * k] for k in range(4)] == [1.0, 1.0, 1.0, 0.0]  # "not yet" x 3 seats
    lo, hi = at["players"]
    assert f[lo:hi] == [1.0, 0.0]
    lo, hi = at["scores"]
    assert f[lo:hi] == [0.0, 0.0, 0.0]
    assert max(f) <= 2 and min(f) >= -2


class Passer(Bot):
    name = "passer"

    def act(self, obs):
        return PASS


def test_max_hands_truncates_and_game_rewards():
    """Everyone passes: every hand is a redeal, so the episode is truncated after
    max_hands deals with no reward (no side leads)."""
    e = env("moon3", max_hands=2, reward="game")
    e.reset(seed=1)
    seen = []
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        if terminated or truncated:
            seen.append((agent, reward, terminated, truncated))
            e.step(None)
        else:
            e.step(PASS)
    assert sorted(seen) == [(f"seat_{i}", 0.0, False, True) for i in range(3)]


def test_an_illegal_action_ends_the_game_for_the_wrapped_env():
    e = env("moon3")
    e.reset(seed=4)
    offender = e.agent_selection
    e.step(0)  # a play while bidding
    rewards = {}
    for agent in e.agent_iter():
        _, reward, terminated, truncated, _ = e.last()
        assert terminated or truncated
        rewards[agent] = reward
        e.step(None)
    assert rewards[offender] == -1 and sum(rewards.values()) == -1


def test_render_ansi_shows_the_table():
    e = raw_env("moon4", render_mode="ansi")
    e.reset(seed=8)
    text = e.render()
    for seat in range(4):
        assert f"seat {seat}:" in text
    silent = raw_env("moon3")  # no render mode: a warning, no text
    silent.reset(seed=8)
    assert silent.render() is None
    with pytest.raises(ValueError, match="render_mode"):
        raw_env("moon3", render_mode="human")


@pytest.mark.parametrize("preset,legal_steps", [("moon3", 0), ("moon3", 5), ("moon4", 12)])
def test_writing_into_an_observation_changes_nothing_the_env_knows(preset, legal_steps):
    """The mask and features that ``last()``/``observe()`` return are the caller's: after
    writing a 1 over an illegal action (and scribbling on the features), the env's next
    observation is still the game's, and that action, played, ends the game as the
    module doc says: reward -1 for the seat that made it, 0 for the others."""
    ruleset = Ruleset.preset(preset)
    mirror = GameState(ruleset, 9)  # the same game, followed apart from the env
    rng = random.Random(3)
    e = env(preset)
    e.reset(seed=9)
    for _ in range(legal_steps):
        action = rng.choice(mirror.legal_actions())
        mirror.apply(action)
        e.step(action)
    offender = e.agent_selection
    seat = int(offender.split("_")[1])
    assert seat == mirror.current_player
    want = observe(mirror, seat)
    illegal = next(a for a in range(72) if a not in want.legal_actions)
    obs, *_ = e.last()
    obs["action_mask"][illegal] = 1
    obs["action_mask"][list(want.legal_actions)] = 0
    obs["observation"][:] = 2.0
    again = e.observe(offender)
    assert np.flatnonzero(again["action_mask"]).tolist() == list(want.legal_actions)
    assert again["observation"].tolist() == pytest.approx(observation_features(want))
    again["action_mask"][illegal] = 1  # the latest observation, written into too
    e.step(illegal)
    rewards = {}
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        assert terminated and truncated and not obs["action_mask"].any()
        rewards[agent] = reward
        e.step(None)
    assert rewards == {a: (-1.0 if a == offender else 0.0) for a in e.possible_agents}
    assert e.unwrapped.game.history == mirror.history  # the illegal action was not played
    # the raw env: its observations are new arrays too
    raw = raw_env(preset)
    raw.reset(seed=9)
    first = raw.observe(raw.agent_selection)
    first["action_mask"][:] = 1
    first["observation"][:] = 2.0
    fresh = GameState(ruleset, 9)
    second = raw.observe(raw.agent_selection)
    assert np.flatnonzero(second["action_mask"]).tolist() == fresh.legal_actions()
    assert second["observation"].tolist() == pytest.approx(
        observation_features(observe(fresh, fresh.current_player)))


@pytest.mark.parametrize("engine", ["compiled", "pure"])
@pytest.mark.parametrize("preset,options", CONFIGS, ids=lambda c: str(c))
def test_observations_are_the_features_of_what_the_arena_shows(preset, options, engine,
                                                               monkeypatch):
    """At every step of random games, every agent's observation (both feature kinds) is
    exactly the :mod:`moon_sdk.features` vector of :func:`~moon_sdk.rules.observe` of the
    game, and its mask the game's legal actions, with the compiled core and the pure
    engine (the env builds them from the engine state it follows, not from an
    Observation)."""
    from moon_sdk import pettingzoo_env
    from moon_sdk.features import information_state_features
    from moon_sdk.rules import fast

    if engine == "pure":
        monkeypatch.setattr(pettingzoo_env, "GameState", GameState)
    elif not fast.COMPILED:
        pytest.skip(f"no compiled core: {fast.REASON}")
    for features, f in (("observation", observation_features),
                        ("information_state", information_state_features)):
        e = env(preset, features=features, max_hands=8, **options)
        raw = e.unwrapped
        for seed in (1, 2):
            e.reset(seed=seed)
            assert isinstance(raw.game, fast.GameState if engine == "compiled" else GameState)
            rng = random.Random(seed)
            for _agent in e.agent_iter():
                game = raw.game
                for other in raw.possible_agents:
                    seat = int(other.split("_")[1])
                    want = observe(game, seat)
                    got = e.observe(other)
                    assert got["observation"].dtype == np.float32
                    assert np.array_equal(got["observation"], np.asarray(f(want), np.float32))
                    assert np.flatnonzero(got["action_mask"]).tolist() == (
                        [] if raw.terminations.get(other, True)
                        or raw.truncations.get(other, True)
                        else list(want.legal_actions))
                obs, _, terminated, truncated, _ = e.last()
                if terminated or truncated:
                    e.step(None)
                else:
                    e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))


@pytest.mark.parametrize("preset", ["moon3", "moon4"])
def test_the_parallel_env_plays_the_aec_games(preset):
    """PettingZoo's parallel API test passes, and with the same seed and actions the
    parallel env gives the AEC env's observations of every seat and its rewards, the
    game's end at the same step, and rewards summing to the final scores by seat."""
    from pettingzoo.test import parallel_api_test

    parallel_api_test(parallel_env(preset, max_hands=3), num_cycles=200)
    p, a = parallel_env(preset, max_hands=3), raw_env(preset, max_hands=3)
    obs, _ = p.reset(seed=4)
    a.reset(seed=4)
    rng = random.Random(4)
    totals = dict.fromkeys(p.possible_agents, 0.0)
    while p.agents:
        for agent in p.agents:
            want = a.observe(agent)
            assert np.array_equal(obs[agent]["observation"], want["observation"])
            assert np.array_equal(obs[agent]["action_mask"], want["action_mask"])
        mover = a.agent_selection
        action = rng.choice(np.flatnonzero(obs[mover]["action_mask"]).tolist())
        actions = {ag: (action if ag == mover else 0) for ag in p.agents}
        obs, rewards, terms, truncs, _ = p.step(actions)
        a.step(action)
        assert rewards == {ag: a.rewards[ag] for ag in a.agents}
        assert terms == {ag: a.terminations[ag] for ag in a.agents}
        assert truncs == {ag: a.truncations[ag] for ag in a.agents}
        for ag, r in rewards.items():
            totals[ag] += r
    side = a.ruleset.side_of
    assert [totals[f"seat_{i}"] for i in range(a.ruleset.players)] == [
        float(a.game.scores[side(i)]) for i in range(a.ruleset.players)]


def test_an_illegal_parallel_action_ends_the_game():
    p = parallel_env("moon3")
    obs, _ = p.reset(seed=2)
    mover = next(ag for ag in p.agents if obs[ag]["action_mask"].any())
    illegal = int(np.flatnonzero(obs[mover]["action_mask"] == 0)[0])
    obs, rewards, terms, _, infos = p.step(dict.fromkeys(p.agents, illegal))
    assert rewards[mover] == -1 and sum(rewards.values()) == -1
    assert all(terms.values()) and p.agents == []
    assert infos[mover] == {"illegal_action": illegal}
    assert not any(o["action_mask"].any() for o in obs.values())
    with pytest.raises(ValueError, match="game is over"):
        p.step({mover: 0})
