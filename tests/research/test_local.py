"""The in-process runner (moon_sdk.local): what bots see, the referee's rules for faults and
limits, many games across processes, and records that `moon replay` reads."""

from __future__ import annotations

import random
import subprocess

import pytest
from moon_sdk import Bot
from moon_sdk.convert import action_to_pb, observation_from_pb, observation_to_pb
from moon_sdk.local import play_games, play_local
from moon_sdk.rules import PASS, PRESETS, GameState, Phase, Ruleset, observe
from research_support import MOON, game_facts

from arena.records.record import load_record, verify_record


class SeededRandom(Bot):
    """A random bot with its own seeded generator (deterministic), keeping every
    observation it was given."""

    name = "seeded-random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.seen: list = []

    def act(self, obs):
        self.seen.append(obs)
        return self.rng.choice(obs.legal_actions)


class Passer(Bot):
    name = "passer"

    def act(self, obs):
        return PASS if PASS in obs.legal_actions else obs.legal_actions[0]


class Stubborn(Bot):
    """Answers an illegal action (a discard while bidding) every time it bids."""

    name = "stubborn"

    def __init__(self) -> None:
        self.rejections: list = []

    def act(self, obs):
        return 28 if obs.phase == Phase.BIDDING else obs.legal_actions[0]

    def on_rejected(self, rejected):
        self.rejections.append((rejected.retries_left, rejected.reason))


class Broken(Bot):
    name = "broken"

    def act(self, obs):
        raise RuntimeError("a bug in the bot")


RULESETS = [*PRESETS.values(), Ruleset(min_bid=3, moon_wins_game=False),
            Ruleset(players=4, team_made_scores="bid", allow_doubles_trump=False),
            Ruleset(scoring="marks", target_marks=3, trump_before_widow=True,
                    all_pass="force_dealer")]


@pytest.mark.parametrize("ruleset", RULESETS, ids=lambda r: repr(r)[8:60])
def test_each_observation_is_what_the_referee_would_send(ruleset):
    """At every turn the bot got what ``observe`` gives, which is also what it decodes from
    the referee's Turn message (the protocol round trip)."""
    total = 0
    for seed in range(4):
        bots = [SeededRandom(seed * 10 + i) for i in range(ruleset.players)]
        record = play_local(bots, ruleset, seed=seed, time_control={"max_hands": 8})
        state = GameState(ruleset, seed)
        turns = [0] * ruleset.players
        for action in record["actions"]:
            seat = state.current
            got = bots[seat].seen[turns[seat]]
            turns[seat] += 1
            want = observe(state, seat)
            assert got == want
            wire = observation_from_pb(observation_to_pb(want, record["preset"]),
                                       [action_to_pb(a) for a in want.legal_actions])
            assert got == wire
            state.apply(action)
        assert turns == [len(b.seen) for b in bots]
        assert verify_record(record) == []
        total += sum(turns)
    assert total > 200


def test_an_illegal_action_is_rejected_then_retried_then_forfeits():
    """illegal_retries=2: two illegal actions are forgiven (a fault each, a rejection
    saying 1, then 0 retries left), the third forfeits; the forfeiting seat's side is
    placed last, the others by score (all 0: they share first place, no winner)."""
    stubborn = Stubborn()
    record = play_local([Passer(), stubborn, Passer()], "moon3", seed=1)
    faults = record["faults"]
    assert [(f["seat"], f["reason"], f["forfeit"]) for f in faults] == [
        (1, "illegal_action", False), (1, "illegal_action", False), (1, "illegal_action", True)]
    assert "must bid" in faults[0]["detail"]
    assert [left for left, _ in stubborn.rejections] == [1, 0]
    res = record["result"]
    assert res["termination"] == "forfeit" and res["forfeit"] == faults[-1]
    assert res["places"] == [1, 3, 1] and res["winner"] is None
    assert verify_record(record) == []


def test_a_game_that_never_ends_is_adjudicated_at_max_hands():
    """Always passing: every hand is a redeal (docs/rules.md, "Bidding"), so the game stops
    after max_hands deals with every score 0, all sharing first place and no winner."""
    record = play_local([Passer()] * 3, "moon3", seed=2, time_control={"max_hands": 3})
    assert record["result"] == {"termination": "hand_limit", "winner": None,
                                "scores": [0, 0, 0], "places": [1, 1, 1], "forfeit": None,
                                "hands_played": 3}
    assert len(record["hands"]) == 3 and len(record["actions"]) == 9
    assert record["time_control"]["max_hands"] == 3
    assert verify_record(record) == []


def test_a_bot_that_raises_stops_the_game_or_forfeits():
    with pytest.raises(RuntimeError, match="a bug in the bot") as info:
        play_local([Passer(), Passer(), Broken()], "moon3", seed=3)
    assert any("seat 2" in note for note in info.value.__notes__)
    record = play_local([Passer(), Passer(), Broken()], "moon3", seed=3, on_error="forfeit")
    [fault] = record["faults"]
    assert fault["seat"] == 2 and fault["reason"] == "crash" and fault["forfeit"]
    assert "RuntimeError: a bug in the bot" in fault["detail"]
    assert record["result"]["places"][2] == 3
    assert verify_record(record) == []


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="for 4 players; 3 bots"):
        play_local([Passer()] * 3, "moon4")
    with pytest.raises(ValueError, match="unknown time control field 'max_hand'"):
        play_local([Passer()] * 3, time_control={"max_hand": 3})
    with pytest.raises(TypeError, match="not a moon_sdk.Bot"):
        play_local([Passer(), Passer(), object()])
    with pytest.raises(ValueError, match="unknown ruleset preset"):
        play_local([Passer()] * 3, "moon5")


def test_many_games_in_two_processes_are_the_games_played_here(tmp_path):
    seeds = [101, 102, 103, 104, 105]
    here = list(play_games([SeededRandom] * 3, seeds, time_control={"max_hands": 20}))
    there = list(play_games([SeededRandom] * 3, seeds, processes=2, chunksize=1,
                            time_control={"max_hands": 20}, record_dir=tmp_path))
    assert [r["seed"] for r in there] == seeds
    assert [game_facts(r) for r in there] == [game_facts(r) for r in here]
    # a fresh bot per game: each game is what a single play_local with fresh bots gives
    alone = play_local([SeededRandom() for _ in range(3)], "moon3", seed=103,
                       time_control={"max_hands": 20})
    assert game_facts(alone) == game_facts(here[2])
    files = sorted(tmp_path.glob("*.json"))
    assert [f.name for f in files] == [f"local-{i:06d}.json" for i in range(5)]
    assert game_facts(load_record(files[3])) == game_facts(here[3])


def test_moon_replay_reads_a_local_record(tmp_path):
    path = tmp_path / "g.json"
    play_local([SeededRandom(1), SeededRandom(2), SeededRandom(3), SeededRandom(4)], "moon4",
               seed=9, time_control={"max_hands": 15}, record_path=path)
    for args in (["verify", str(path)], ["show", str(path)],
                 ["html", str(path), "--output", str(tmp_path / "g.html")]):
        done = subprocess.run([MOON, "replay", *args], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "ok" in subprocess.run([MOON, "replay", "verify", str(path)], capture_output=True,
                                  text=True, timeout=60).stdout
    assert (tmp_path / "g.html").stat().st_size > 1000


@pytest.mark.parametrize("ruleset", RULESETS, ids=lambda r: repr(r)[8:60])
def test_hands_described_from_the_played_game_are_the_replayed_ones(ruleset):
    """The runner describes the hands from the game it played (no re-simulation); that is
    exactly what re-simulating the actions gives, think times included."""
    from moon_sdk.records import hands_from_actions, hands_from_state

    rng = random.Random(7)
    for seed in range(6):
        s = GameState(ruleset, seed)
        while not s.is_terminal() and len(s.hand_records) < 25:
            s.apply(rng.choice(s.legal_actions()))
        ms = [rng.randrange(50) for _ in s.history]
        replayed, _ = hands_from_actions(ruleset, seed, s.history, ms)
        if not s.is_terminal():
            replayed = replayed[:len(s.hand_records)]  # the next deal: no action yet
        assert hands_from_state(s, ms) == replayed
        assert list(map(list, (h.keys() for h in hands_from_state(s, ms)))) == \
            list(map(list, (h.keys() for h in replayed)))
    # stopped inside a hand: no description (the caller re-simulates)
    s = GameState(ruleset, 1)
    s.apply(s.legal_actions()[0])
    assert hands_from_state(s) is None


def test_play_games_takes_endless_seeds_and_stops_when_told():
    import itertools

    games = play_games([Passer] * 3, itertools.count(), processes=2, chunksize=2,
                       time_control={"max_hands": 1})
    first = list(itertools.islice(games, 7))
    games.close()
    assert [r["seed"] for r in first] == list(range(7))
    assert all(r["result"]["termination"] == "hand_limit" for r in first)
    with pytest.raises(ValueError, match="processes must be at least 1"):
        play_games([Passer] * 3, range(3), processes=0)


class Sloppy(Bot):
    """Answers with a numpy integer (fine), then, on its first play, with text (no action
    at all: rejected as an illegal action, as over gRPC), then plays its first legal tile."""

    name = "sloppy"

    def __init__(self) -> None:
        import numpy as np

        self.np = np
        self.rejected: list = []

    def act(self, obs):
        if obs.phase == Phase.PLAY and not self.rejected:
            return "play 6-4"
        return self.np.int64(obs.legal_actions[0])

    def on_rejected(self, rejected):
        self.rejected.append(rejected.reason)


def test_what_act_may_return_is_what_the_sdk_sends_over_grpc():
    sloppy = Sloppy()
    record = play_local([sloppy, Passer(), Passer()], Ruleset(all_pass="force_dealer"), seed=2,
                        time_control={"max_hands": 3})
    assert verify_record(record) == []
    assert len(sloppy.rejected) == 1
    [fault] = record["faults"]
    assert fault["seat"] == 0 and fault["reason"] == "illegal_action" and not fault["forfeit"]
    assert all(isinstance(a, int) for a in record["actions"])
