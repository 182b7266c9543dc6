"""The OpenSpiel game: OpenSpiel's random-simulation test, chance nodes that deal, the
arena's games inside it, information states that resampling keeps, ISMCTS and
outcome-sampling MCCFR running on it, and an OpenSpiel bot playing a real arena game."""

from __future__ import annotations

import json
import os
import pickle
import random
import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from moon_sdk import Bot
from moon_sdk import openspiel_game as og
from moon_sdk.features import OBSERVATION_PIECES
from moon_sdk.knowledge import voids
from moon_sdk.local import play_local
from moon_sdk.rules import Phase, Ruleset, deal, first_dealer, observe, tiles_of
from open_spiel.python.algorithms import ismcts, mcts
from open_spiel.python.algorithms import outcome_sampling_mccfr as os_mccfr
from open_spiel.python.observation import make_observation
from research_support import EXAMPLES, MOON, bot_module

from arena.records.record import load_record, verify_record

SPECS = [
    "python_moon", "python_moon(players=4)", "python_moon(remove_double_blank=true)",
    "python_moon(trump_before_widow=true,all_pass=force_dealer,min_bid=3)",
    "python_moon(scoring=marks,max_hands=4,returns=win)",
    "python_moon(players=4,team_made_scores=bid,allow_no_trump=false,first_dealer=2)",
    "python_moon(max_hands=3,moon_wins_game=false,allow_doubles_trump=false)",
]


@pytest.mark.parametrize("spec", SPECS)
def test_openspiel_random_simulation_test_passes(spec):
    pyspiel.random_sim_test(pyspiel.load_game(spec), num_sims=3, serialize=True,
                            verbose=False)


ROUND_TRIP_SPECS = [
    "python_moon(max_hands=3)", "python_moon(players=4,max_hands=3)",
    "python_moon(trump_before_widow=true,all_pass=force_dealer,min_bid=3,max_hands=2)",
    "python_moon(scoring=marks,max_hands=3,returns=win,remove_double_blank=true)",
    "python_moon(players=4,team_made_scores=bid,allow_no_trump=false,first_dealer=2,"
    "max_hands=2)",
]


def _facts(state) -> dict:
    """What a state restored from a string must share with the original, read through
    OpenSpiel's API only, as JSON (so that facts made in another process compare)."""
    n = state.get_game().num_players()
    f = {"history": state.history(),
         "full_history": [[a.player, a.action] for a in state.full_history()],
         "move_number": state.move_number(), "current_player": state.current_player(),
         "terminal": state.is_terminal(), "returns": state.returns(), "text": str(state),
         "information_state": [state.information_state_string(p) for p in range(n)],
         "information_tensor": [state.information_state_tensor(p) for p in range(n)],
         "observation": [state.observation_string(p) for p in range(n)],
         "observation_tensor": [state.observation_tensor(p) for p in range(n)]}
    if state.is_chance_node():
        f["chance_outcomes"] = state.chance_outcomes()
    elif not state.is_terminal():
        f["legal_actions"] = state.legal_actions()
        f["legal_mask"] = state.legal_actions_mask()
    return json.loads(json.dumps(f))


def _random_game(game, seed):
    """Every state of one random playthrough of ``game`` (chance nodes included), and its
    actions."""
    rng = np.random.RandomState(seed)
    s = game.new_initial_state()
    states = [s.clone()]
    while not s.is_terminal():
        if s.is_chance_node():
            _chance(s, rng)
        else:
            s.apply_action(int(rng.choice(s.legal_actions())))
        states.append(s.clone())
    return states


_RESTORE_ELSEWHERE = """
import json, sys
import pyspiel
from moon_sdk import openspiel_game  # registers python_moon
from test_openspiel import _facts
out = []
for spec, state_text, both_text in json.load(sys.stdin):
    game = pyspiel.load_game(spec)
    _, restored = pyspiel.deserialize_game_and_state(both_text)
    out.append([_facts(game.deserialize_state(state_text)), _facts(restored)])
json.dump(out, sys.stdout)
"""


@pytest.mark.parametrize("spec", ROUND_TRIP_SPECS)
def test_a_state_round_trips_through_its_serialization_at_every_step(spec):
    """``serialize``/``game.deserialize_state``, ``pyspiel.serialize_game_and_state``/
    ``deserialize_game_and_state`` and pickle give back the state, at every step of random
    games (the dealer draw, the deal, the auction, the widow and trumps, play, between
    hands, the end): the same history, views, legal actions, chance outcomes and returns as
    the original's own, and the same game onwards. OpenSpiel's ``random_sim_test`` with
    ``serialize=True`` passes on this game and did not catch the restored states' broken
    game attributes (every restored state raised AttributeError on use)."""
    game = pyspiel.load_game(spec)
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)
    elsewhere = []
    for seed in (1, 2):
        states = _random_game(game, seed)
        assert states[-1].is_terminal() and len(states) > 50
        phases = set()
        for k, state in enumerate(states):
            want = _facts(state)
            state_text = state.serialize()
            both_text = pyspiel.serialize_game_and_state(game, state)
            restored = [game.deserialize_state(state_text),
                        pyspiel.deserialize_game_and_state(both_text)[1],
                        pickle.loads(pickle.dumps(state))]
            for r in restored:
                assert _facts(r) == want
            if state.is_terminal():
                phases.add("end")
            elif state.is_chance_node():
                phases.add("next deal" if state.game_state.hand_records else "chance")
            else:
                phases.add(state.game_state.phase)
            if k % 15 == 0:  # the restored state plays on as the original did
                r = restored[k // 15 % 3]
                for later in states[k + 1:]:
                    r.apply_action(later.history()[-1])
                assert _facts(r) == _facts(states[-1])
                elsewhere.append([spec, state_text, both_text])
        assert {"chance", "next deal", "end", Phase.BIDDING, Phase.TRUMP, Phase.PLAY} <= phases
    # and in a fresh process, which has never made this game's states (where a restored
    # state met a game object without its attributes)
    done = subprocess.run([sys.executable, "-c", _RESTORE_ELSEWHERE],
                          input=json.dumps(elsewhere), capture_output=True, text=True,
                          timeout=300, cwd=os.path.dirname(__file__),
                          env={**os.environ, "PYTHONPATH": os.path.dirname(__file__)})
    assert done.returncode == 0, done.stderr
    there = json.loads(done.stdout)
    assert len(there) == len(elsewhere)
    for (_, state_text, _), got in zip(elsewhere, there, strict=True):
        want = _facts(game.deserialize_state(state_text))
        assert got == [want, want]


def _chance(state, rng):
    outcomes = state.chance_outcomes()
    pick = rng.choice(len(outcomes), p=[p for _, p in outcomes])
    state.apply_action(outcomes[pick][0])


def test_chance_nodes_draw_the_dealer_then_deal_each_tile():
    game = og.load_game("moon3")
    s = game.new_initial_state()
    assert s.is_chance_node() and s.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    s.apply_action(2)  # seat 2 deals: seat 0 bids first
    tiles = tiles_of(Ruleset().tile_set)  # the 22 tiles of 3-player Moon, 1-0 up to 6-6
    assert len(tiles) == 22
    for k, t in enumerate(tiles):
        assert s.is_chance_node()
        outcomes = s.chance_outcomes()
        assert [a for a, _ in outcomes] == tiles[k:]
        assert all(p == pytest.approx(1 / (22 - k)) for _, p in outcomes)
        s.apply_action(t)
    # dealt in order: positions 0-6 to seat 0, 7-13 to seat 1, 14-20 to seat 2, then the widow
    g = s.game_state
    assert [tiles_of(h) for h in g.hands] == [tiles[0:7], tiles[7:14], tiles[14:21]]
    assert tiles_of(g.widow) == [tiles[21]]
    assert s.current_player() == 0 and g.dealer == 2 and g.phase == Phase.BIDDING


@pytest.mark.parametrize("preset", ["moon3", "moon4", "moon3-pagat"])
def test_an_arena_game_replays_inside_the_openspiel_game(preset):
    """Deal through the chance nodes what the arena dealt from a seed, then play the
    actions of an arena game: the OpenSpiel game ends when it ends, with its scores."""
    ruleset = Ruleset.preset(preset)
    heuristic = bot_module(EXAMPLES / "heuristic").HeuristicBot
    bots = [heuristic() if i % 2 == 0 else SeededRandom(i) for i in range(ruleset.players)]
    record = play_local(bots, preset, seed=33, time_control={"max_hands": 30})
    assert record["result"]["termination"] in ("target", "moon")
    game = og.load_game(preset, max_hands=30)
    s = game.new_initial_state()
    s.apply_action(first_dealer(33, ruleset.players))
    actions = iter(record["actions"])
    for hand in range(record["result"]["hands_played"]):
        hands, widow = deal(33, hand, ruleset)
        for h in (*hands, widow):
            for t in tiles_of(h):
                s.apply_action(t)
        while not s.is_chance_node() and not s.is_terminal():
            s.apply_action(next(actions))
    assert next(actions, None) is None and s.is_terminal()
    scores = record["result"]["scores"]
    assert s.returns() == [float(scores[ruleset.side_of(p)]) for p in range(ruleset.players)]


class SeededRandom(Bot):
    name = "seeded-random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, obs):
        return self.rng.choice(obs.legal_actions)


def _random_decisions(game, seed, limit=400):
    """Every decision state of a random playthrough of ``game``."""
    rng = np.random.RandomState(seed)
    s = game.new_initial_state()
    out = []
    while not s.is_terminal() and len(out) < limit:
        if s.is_chance_node():
            _chance(s, rng)
            continue
        out.append(s.clone())
        s.apply_action(int(rng.choice(s.legal_actions())))
    return out


@pytest.mark.parametrize("spec", ["python_moon(max_hands=4)", "python_moon(players=4)",
                                  "python_moon(trump_before_widow=true,max_hands=3)",
                                  "python_moon(remove_double_blank=true,max_hands=2)"])
def test_resampling_keeps_what_the_player_knows_and_deals_the_rest(spec):
    game = pyspiel.load_game(spec)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    varied = 0
    for state in _random_decisions(game, seed=5)[::3]:
        p = state.current_player()
        seen = observe(state.game_state, p)
        void = voids(seen)
        deals = set()
        for _ in range(6):
            r = state.resample_from_infostate(p, sampler)
            assert observe(r.game_state, p) == seen  # the same knowledge, exactly
            assert r.information_state_string(p) == state.information_state_string(p)
            assert r.information_state_tensor(p) == state.information_state_tensor(p)
            assert r.legal_actions() == state.legal_actions()
            g = r.game_state
            held = 0
            for q in range(g.n):
                assert not held & g.hands[q]
                held |= g.hands[q]
                if q != p:  # no tile of a suit it showed void in
                    assert not g.hands[q] & void[q]
            assert g.hands[p] == state.game_state.hands[p]
            deals.add(tuple(g.hands))
        varied += len(deals) > 1
    assert varied >= 3


def test_the_adapter_sees_the_information_state_the_game_has():
    """A state rebuilt from the arena's observation (what OpenSpielBot plays from) has the
    player's information state of the real one: string and tensor."""
    game = og.load_game("moon3", max_hands=5)
    rng = random.Random(1)
    for state in _random_decisions(game, seed=9)[::2]:
        p = state.current_player()
        rebuilt = og.from_observation(game, state.view(p), rng)
        assert rebuilt.information_state_string(p) == state.information_state_string(p)
        assert rebuilt.observation_tensor(p) == state.observation_tensor(p)


def test_tensors_and_public_observations_by_hand():
    game = og.load_game("moon3")
    s = game.new_initial_state()
    rng = np.random.RandomState(2)
    while s.is_chance_node():
        _chance(s, rng)
    p = s.current_player()
    lo = sum(size for name, size in OBSERVATION_PIECES[:OBSERVATION_PIECES.index(("hand", 28))])
    tensor = s.information_state_tensor(p)
    assert len(tensor) == game.information_state_tensor_shape()[0] == 1209
    assert [t for t in range(28) if tensor[lo + t]] == tiles_of(s.game_state.hands[p])
    assert len(s.observation_tensor(p)) == 397
    public = make_observation(game, pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.NONE))
    public.set_from(s, p)
    assert not public.dict["hand"].any()
    assert "tiles" not in public.string_from(s, p)
    assert "tiles " in s.information_state_string(p)
    other = (p + 1) % 3
    assert s.information_state_string(p) != s.information_state_string(other)


def test_ismcts_plays_a_hand():
    """OpenSpiel's Python information-set MCTS plays every seat of one hand (the dealer
    must bid, so the hand is played out); its actions are legal and the returns are the
    hand's scores, worked out from the tricks taken."""
    game = og.load_game("moon3", all_pass="force_dealer")
    rng = np.random.RandomState(3)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
                           uct_c=2.0, max_simulations=25, random_state=rng)
    s = game.new_initial_state()
    decisions = 0
    while not s.is_terminal():
        if s.is_chance_node():
            _chance(s, rng)
            continue
        action = bot.step(s)
        assert action in s.legal_actions()
        s.apply_action(action)
        decisions += 1
    [hand] = s.game_state.hand_records
    assert decisions == len(hand.bids) + 2 + 21
    made = hand.tricks_taken[hand.bidder] >= (7 if hand.bid == 21 else hand.bid)
    want = [float(t) for t in hand.tricks_taken]
    want[hand.bidder] = float(hand.bid if made else -hand.bid)
    assert s.returns() == want


def test_outcome_sampling_mccfr_learns_a_policy():
    game = og.load_game("moon3", all_pass="force_dealer")
    solver = os_mccfr.OutcomeSamplingSolver(game)
    for _ in range(60):
        solver.iteration()
    policy = solver.average_policy()
    for state in _random_decisions(game, seed=4, limit=30):
        probs = policy.action_probabilities(state)
        assert set(probs) == set(state.legal_actions())
        assert sum(probs.values()) == pytest.approx(1.0)


def test_a_function_policy_plays_a_local_game_through_the_adapter():
    first = og.OpenSpielBot(lambda game, seat: (lambda state: state.legal_actions()[0]))
    record = play_local([first, SeededRandom(1), SeededRandom(2)], "moon3", seed=6,
                        time_control={"max_hands": 10})
    assert record["faults"] == [] and verify_record(record) == []


def test_an_openspiel_bot_plays_a_whole_arena_game(tmp_path):
    """The example ISMCTS bot, a real `moon play` game: a referee server, a process per
    bot, gRPC; the game ends by the rules with no fault."""
    env = {**os.environ, "MOON_ISMCTS_SIMULATIONS": "15"}
    done = subprocess.run(
        [MOON, "play", str(EXAMPLES / "openspiel-ismcts"), "heuristic", "heuristic",
         "--seed", "5", "--records", str(tmp_path), "--decision-ms", "5000"],
        capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = tmp_path.glob("*.json")
    record = load_record(path)
    assert verify_record(record) == []
    assert record["faults"] == []
    assert record["result"]["termination"] in ("target", "moon")
    assert record["seats"][0]["reported_name"] == "openspiel-ismcts"
    plays = [p for h in record["hands"] for p in h["plays"] if p["seat"] == 0]
    assert len(plays) >= 7
    # the same bot class, in-process
    bot = bot_module(EXAMPLES / "openspiel-ismcts").IsmctsBot()
    assert isinstance(bot, og.OpenSpielBot)
    json.dumps(record)
