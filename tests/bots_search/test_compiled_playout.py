"""The search bot's playout and quick count in the compiled core (``moon_engine.playout``,
``moon_engine.quick_count``) against their Python specification
(``moon_search.playout.python_playout``, ``python_strength``): move for move, bit for bit;
and the bot's decisions on both engines. Skipped without the compiled core (``make setup``
builds it where cargo is installed)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "example_bots" / "search"))

from moon_sdk.rules import PRESETS, GameState, Phase, Ruleset, tiles_of  # noqa: E402
from moon_search.knowledge import trick_state  # noqa: E402
from moon_search.playout import python_playout, python_strength  # noqa: E402

try:
    import moon_engine  # type: ignore[import-not-found]
except ImportError:
    moon_engine = None

pytestmark = pytest.mark.skipif(
    moon_engine is None, reason="the compiled core (moon_engine) is not installed: "
    "`make setup` builds it when cargo is on PATH (sdk/rust)")


def _positions(preset: str, games: int, rng: random.Random):
    """Play-phase positions of random games (any trumps, any point of a trick)."""
    r = Ruleset.preset(preset)
    for seed in range(games):
        s = GameState(r, seed)
        hn = s.hand_number
        while not s.is_terminal() and s.hand_number == hn:
            if s.phase == Phase.PLAY and rng.random() < 0.3:
                yield s
            s.apply(rng.choice(s.legal_actions()))


@pytest.mark.parametrize("preset", ["moon3", "moon4", "moon3-21", "moon4-force"])
def test_the_compiled_playout_plays_the_same_moves(preset: str) -> None:
    rng = random.Random(preset)
    checked = firsts = 0
    for s in _positions(preset, 150, rng):
        k, led, ws, wt = trick_state(tuple(s.trick), s.trump)
        first = -1
        if rng.random() < 0.4:
            first = rng.choice(s.legal_actions())  # the candidate the search tries
            firsts += 1
        bidder = s.bidder if rng.random() < 0.8 else rng.randrange(s.n)
        out = []
        for fn in (python_playout, moon_engine.playout):
            hands, taken, trace = list(s.hands), list(s.tricks_taken), []
            ret = fn(hands, s.trump, bidder, s.current, k, led, ws, wt, taken, first, trace)
            assert ret is taken
            out.append((hands, taken, trace))
        assert out[0] == out[1], (s.hands, s.trump, bidder, s.current, k, led, ws, wt, first)
        assert all(h == 0 for h in out[1][0])
        checked += 1
    assert checked > 200 and firsts > 50


def test_the_compiled_playout_refuses_a_position_that_is_none() -> None:
    with pytest.raises(ValueError, match="hands and taken"):
        moon_engine.playout([1, 2], 3, 0, 0, 0, -1, -1, -1, [0, 0])
    with pytest.raises(ValueError, match="out of range"):
        moon_engine.playout([1, 2, 4], 9, 0, 0, 0, -1, -1, -1, [0, 0, 0])
    with pytest.raises(ValueError, match="led, win_seat or win_tile"):
        moon_engine.playout([1, 2, 4], 3, 0, 1, 1, 8, 0, 5, [0, 0, 0])


def test_the_compiled_quick_count_is_the_same_number() -> None:
    rng = random.Random(5)
    for r in (PRESETS["moon3"], PRESETS["moon4"], PRESETS["moon3-21"]):
        tiles = tiles_of(r.tile_set)
        for _ in range(3000):
            hand = 0
            for t in rng.sample(tiles, rng.choice((7, 8, rng.randrange(0, 12)))):
                hand |= 1 << t
            for trump in range(9):
                assert moon_engine.quick_count(hand, trump) == python_strength(hand, trump)


def test_the_bot_decides_the_same_on_both_engines() -> None:
    """benchmarks/search.py's run: the same decision points, seed and number of deals on
    the pure engine and with the compiled core give the same actions and values."""
    digests = []
    for engine in ("pure", "compiled"):
        out = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "search.py"), "--child",
             "--samples", "12", "--points", "12"],
            capture_output=True, text=True, timeout=300, check=True,
            env={**os.environ, "MOON_ENGINE": engine})
        result = json.loads(out.stdout)
        assert result["compiled"] == (engine == "compiled")
        assert result["decisions"] == 24 and result["deals"] >= 24 * 12
        digests.append(result["digest"])
    assert digests[0] == digests[1]
