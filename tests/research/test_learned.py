"""example_bots/learned: its trainer's returns are each hand's score change, worked out
again by replaying each game's actions in the pure engine, and the bot folder plays legal
moves in a real `moon match` against the heuristic bot."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from moon_sdk import vector
from moon_sdk.rules import GameState
from research_support import EXAMPLES, MOON

from arena.records.record import load_record, verify_record

pytestmark = pytest.mark.slow
LEARNED = EXAMPLES / "learned"


def _load(name: str):
    import importlib.util
    import sys

    key = f"_learned_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, LEARNED / f"{name}.py")
        assert spec is not None and spec.loader is not None
        sys.modules[key] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[key]


class Recorder:
    """A VectorGames that keeps, before each step, a copy of every game and the actions."""

    def __init__(self, games: vector.VectorGames) -> None:
        self.games = games
        self.num_envs, self.ruleset = games.num_envs, games.ruleset
        self.before: list[list[GameState]] = []
        self.actions: list[list[int]] = []

    def step(self, actions):
        self.before.append([self.games.state(i) for i in range(self.num_envs)])
        self.actions.append([int(a) for a in actions])
        return self.games.step(actions)


@pytest.mark.parametrize("engine", ["compiled", "pure"])
def test_a_decisions_return_is_its_hands_score_change(engine):
    if engine == "compiled" and not vector.compiled_available():
        pytest.skip("no compiled core with the vector")
    train = _load("train")
    games = vector.VectorGames(6, "moon3", max_hands=2, engine=engine)
    rec = Recorder(games)
    state = list(games.reset(seed=3))
    p = train.init(np.random.default_rng(1))
    steps = 90
    xs, masks, acts, returns, learn = train.rollout(rec, p, state, steps,
                                                    np.random.default_rng(2))
    assert learn.all()
    keep = steps - train.HAND_LONGEST
    assert len(acts) == len(returns) == keep * 6
    checked = set()
    for t in range(keep):
        for i in range(6):
            ref = rec.before[t][i].clone()
            seat, hand = ref.current_player, len(ref.hand_records)
            assert acts[t * 6 + i] == rec.actions[t][i]
            # the game's own actions from here until its hand ends
            u = t
            while len(ref.hand_records) == hand:
                ref.apply(rec.actions[u][i])
                u += 1
            want = ref.hand_records[hand].deltas[ref.ruleset.side_of(seat)]
            assert returns[t * 6 + i] == want, (t, i)
            checked.add(want)
    assert len(checked) > 3  # made and set bids, tricks taken: not all one value


def test_the_learned_bot_plays_legal_moves_in_a_moon_match(tmp_path):
    assert (LEARNED / "weights.npz").stat().st_size < 200_000
    results = tmp_path / "m.sqlite"
    done = subprocess.run([MOON, "match", str(LEARNED), "heuristic", "--games", "6",
                           "--results", str(results)], capture_output=True, text=True,
                          timeout=280, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "learned against heuristic" in done.stdout
    # one board's 6 games (b0-...), and each bot's admission hand (check-...)
    records = sorted((tmp_path / "m.sqlite.records").glob("*.json"))
    assert len([p for p in records if p.name.startswith("b0-")]) == 6
    assert "check-0-learned.json" in [p.name for p in records]
    for path in records:
        record = load_record(path)
        assert verify_record(record) == [] and record["faults"] == [], path
        if path.name.startswith("b0-"):
            assert "learned" in [s["reported_name"] for s in record["seats"]]
