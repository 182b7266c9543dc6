"""The compiled core (``moon_engine``, sdk/rust) against the pure engine, and
``moon_sdk.rules.fast``'s choice between them.

The differential games (``differential.py``) need the compiled core and skip without it
(``make setup`` builds it where cargo is installed; with ``MOON_REQUIRE_ENGINE_CORE=1``, as
CI sets it where cargo is, its absence fails); the 100,000-game run is
``python -m tests.rules.differential``. The fallback tests run everywhere.
"""

from __future__ import annotations

import copy
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from moon_sdk.rules import (
    DEAL_VERSION,
    PRESETS,
    GameState,
    IllegalActionError,
    Ruleset,
    deal,
    first_dealer,
    mask_of,
    parse_action,
    tiles_of,
)

from . import differential
from .helpers import sensible_action

ROOT = Path(__file__).resolve().parents[2]

try:
    import moon_engine  # type: ignore[import-not-found]
except ImportError:
    moon_engine = None

MISSING = ("the compiled core (moon_engine) is not installed: `make setup` builds it when "
           "cargo is on PATH (sdk/rust)")
needs_core = pytest.mark.skipif(moon_engine is None, reason=MISSING)


def test_the_compiled_core_is_installed_where_required() -> None:
    """CI sets MOON_REQUIRE_ENGINE_CORE=1 where cargo is installed: then a missing core
    fails here instead of skipping the differential tests."""
    if moon_engine is None:
        if os.environ.get("MOON_REQUIRE_ENGINE_CORE") == "1":
            pytest.fail("MOON_REQUIRE_ENGINE_CORE=1 but " + MISSING)
        pytest.skip(MISSING)
    assert moon_engine.GameState.__module__ == "moon_engine"

BOUNDED_GAMES = 3 * len(differential.COMBINATIONS)
"""Games in the bounded differential run: every option combination three times."""


@needs_core
def test_the_compiled_core_deals_the_documented_version() -> None:
    assert moon_engine.DEAL_VERSION == DEAL_VERSION == 2


@needs_core
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_deals_and_first_dealers_agree_for_every_kind_of_seed(preset: str) -> None:
    r = PRESETS[preset]
    rng = random.Random(preset)
    seeds = [0, 1, -1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**64), 2**200 + 7, -(3**90)]
    seeds += [rng.randrange(-(2**80), 2**80) for _ in range(300)]
    for seed in seeds:
        assert moon_engine.first_dealer(seed, r.players) == first_dealer(seed, r.players)
        for hand_number in (0, 1, 2, 57, 199, 2**32 + 5):
            assert moon_engine.deal(seed, hand_number, r) == deal(seed, hand_number, r), \
                (seed, hand_number)


@needs_core
def test_bounded_differential_run_over_every_option_combination() -> None:
    tally = differential.run(range(BOUNDED_GAMES), moon_engine.GameState)
    assert tally["games"] == BOUNDED_GAMES
    assert tally["3 players"] == tally["4 players"] == BOUNDED_GAMES // 2
    # the run reached what it claims to check
    for what in ("refusals", "observations", "clones", "replays", "redeals", "end target",
                 "end moon"):
        assert tally[what] > 0, what
    assert tally["actions"] > 100 * BOUNDED_GAMES


class _Wrong(GameState):
    """A pure engine with one deliberate mistake: a made 5 scores 6 (3 players)."""

    def _finish_hand(self, made: bool | None, deltas: tuple[int, ...]) -> None:
        if made and self.high_bid == 5 and self.n == 3:
            deltas = tuple(d + (side == self.bidder) for side, d in enumerate(deltas))
        super()._finish_hand(made, deltas)


@needs_core
def test_the_differential_check_catches_a_scoring_difference() -> None:
    with pytest.raises(differential.Mismatch, match="scores differs|hand records differs"):
        differential.run(range(0, 2 * len(differential.COMBINATIONS), 2), _Wrong)


@needs_core
def test_refusals_say_the_same_thing() -> None:
    r = Ruleset.preset("moon3", all_pass="force_dealer", allow_no_trump=False,
                       remove_double_blank=True)
    texts = []
    for cls in (GameState, moon_engine.GameState):
        s = cls(r, 11)
        out = []
        for bad in ["play 6-6", "bid 3", "trump 5", "discard 1-1", 58.0, True, "58", 99, -1]:
            a = parse_action(bad) if isinstance(bad, str) and " " in bad else bad
            with pytest.raises(IllegalActionError) as e:
                s.apply(a)
            out.append(str(e.value))
        texts.append(out)
    assert texts[0] == texts[1]
    assert texts[1][1] == "bid 3 is below the minimum bid 4 (min_bid)"
    assert texts[1][4] == "not an action: 58.0"


@needs_core
def test_a_finished_game_refuses_everything_and_reports_the_same_outcome() -> None:
    rng = random.Random(3)
    pure = GameState(PRESETS["moon4"], 5)
    fast = moon_engine.GameState(PRESETS["moon4"], 5)
    while not pure.is_terminal():
        a = sensible_action(pure, rng)
        pure.apply(a)
        fast.apply(a)
    assert fast.is_terminal() and fast.current_player == -1 and fast.legal_actions() == []
    assert fast.outcome == pure.outcome and fast.outcome is not None
    with pytest.raises(IllegalActionError, match="^the game is over$"):
        fast.apply(0)


@needs_core
def test_the_compiled_state_is_read_only() -> None:
    s = moon_engine.GameState(PRESETS["moon3"], 1)
    with pytest.raises(AttributeError):
        s.hands = [0, 0, 0]
    hands = s.hands
    hands[0] = 0  # a copy: the state does not change
    assert s.hands[0] != 0


@needs_core
def test_copies_are_independent() -> None:
    s = moon_engine.GameState(PRESETS["moon4"], 9)
    for _ in range(12):
        s.apply(s.legal_actions()[-1])
    for twin in (copy.copy(s), copy.deepcopy(s), s.clone()):
        assert [getattr(twin, k) for k in differential.EVERYTHING] == \
            [getattr(s, k) for k in differential.EVERYTHING]
        twin.apply(twin.legal_actions()[0])
        assert len(twin.history) == len(s.history) + 1 == 13


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=60)


REPORT = "from moon_sdk.rules import fast; print(fast.COMPILED, fast.GameState.__module__)"


@needs_core
def test_moon_engine_chooses_the_engine() -> None:
    auto = _python(REPORT, MOON_ENGINE="auto")
    assert auto.stdout.split() == ["True", "moon_engine"], auto.stderr
    pure = _python(REPORT, MOON_ENGINE="pure")
    assert pure.stdout.split() == ["False", "moon_sdk.rules.state"], pure.stderr
    bad = _python(REPORT, MOON_ENGINE="turbo")
    assert bad.returncode != 0 and "MOON_ENGINE='turbo' is invalid" in bad.stderr


def test_without_the_compiled_core_the_pure_engine_is_used() -> None:
    # As if moon_engine were not installed (a None entry in sys.modules fails the import).
    code = ("import sys; sys.modules['moon_engine'] = None; " + REPORT
            + "; print(fast.REASON)")
    out = _python(code, MOON_ENGINE="auto")
    assert out.stdout.splitlines()[0].split() == ["False", "moon_sdk.rules.state"], out.stderr
    assert "not installed" in out.stdout
    required = _python("import sys; sys.modules['moon_engine'] = None; " + REPORT,
                       MOON_ENGINE="compiled")
    assert required.returncode != 0
    assert "MOON_ENGINE=compiled but the compiled core (moon_engine) is not installed" \
        in required.stderr


def _fingerprint(s: object) -> list[object]:
    return [getattr(s, k) for k in differential.EVERYTHING]


has_from_deal = pytest.mark.skipif(
    not hasattr(GameState, "from_deal"),
    reason="the pure engine has no GameState.from_deal yet (the core branch adds it)")


@needs_core
@has_from_deal
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_from_deal_is_the_same_game(preset: str) -> None:
    """GameState.from_deal on both engines: the same position and the same game after it,
    applied with apply_unchecked, is_legal agreeing on legal and illegal actions."""
    r = PRESETS[preset]
    rng = random.Random(preset)
    tiles = tiles_of(r.tile_set)
    for _ in range(60):
        rng.shuffle(tiles)
        hands = [mask_of(tiles[7 * i:7 * i + 7]) for i in range(r.players)]
        widow = mask_of(tiles[7 * r.players:])
        kw: dict[str, object] = {"dealer": rng.randrange(r.players)}
        if rng.random() < 0.5:
            kw["seed"] = rng.randrange(-(2**70), 2**70)
        if rng.random() < 0.5:
            kw["scores"] = [rng.randrange(-30, 30) for _ in range(r.num_sides)]
        pure = GameState.from_deal(r, hands, widow, **kw)
        fast = moon_engine.GameState.from_deal(r, hands, widow, **kw)
        assert fast.hands == hands and fast.dealer == kw["dealer"]
        assert _fingerprint(pure) == _fingerprint(fast)
        while not pure.is_terminal() and pure.hand_number < 3:
            legal = pure.legal_actions()
            for a in [rng.randrange(-1, 73), 58.0, True, *legal[:2]]:
                assert pure.is_legal(a) == fast.is_legal(a) == (a in legal and type(a) is int)
            a = sensible_action(pure, rng, legal)
            pure.apply_unchecked(a)
            fast.apply_unchecked(a)
            assert _fingerprint(pure) == _fingerprint(fast)


@needs_core
@has_from_deal
def test_from_deal_refuses_the_same_deals_with_the_same_words() -> None:
    r = PRESETS["moon3"]
    tiles = tiles_of(r.tile_set)
    hands = [mask_of(tiles[7 * i:7 * i + 7]) for i in range(3)]
    widow = mask_of(tiles[21:])
    cases = [
        (hands[:2], widow, 0, None, "2 hands for 3 players"),
        (hands, widow, 3, None, "dealer 3 is not a seat (0..2)"),
        ([hands[0] | hands[1], hands[1], hands[2]], widow, 0, None,
         "seat 0 has 14 tiles; a hand has 7"),
        ([hands[1], hands[1], hands[2]], widow, 0, None, "dealt twice (seat 1)"),
        (hands, 0, 0, None, "the widow has 0 tiles; this ruleset's has 1"),
        (hands, 1 << 1, 0, None, "1-0 not in this ruleset's tile set"),
        (hands, widow, 0, [1, 2], "2 scores for 3 sides"),
    ]
    for h, w, dealer, scores, words in cases:
        messages = []
        for cls in (GameState, moon_engine.GameState):
            with pytest.raises(ValueError) as e:
                cls.from_deal(r, h, w, dealer=dealer, scores=scores)
            messages.append(str(e.value))
        assert messages[0] == messages[1]
        assert words in messages[1]


@needs_core
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_features_are_the_pure_features_of_the_observation(preset: str) -> None:
    """``GameState.features(seat, sequence)`` is ``moon_sdk.features``' vector of the pure
    engine's ``observe`` of the same game (the ruleset's options left 0), for every seat at
    every step of random games, as float32."""
    import numpy as np
    from moon_sdk.features import information_state_features, observation_features
    from moon_sdk.rules import observe

    ruleset = PRESETS[preset]
    rng = random.Random(7)
    for seed in (3, 4):
        pure, fast = GameState(ruleset, seed), moon_engine.GameState(ruleset, seed)
        while not pure.is_terminal() and len(pure.hand_records) < 6:
            for seat in range(ruleset.players):
                obs = observe(pure, seat)
                for sequence, f in ((False, observation_features),
                                    (True, information_state_features)):
                    want = np.asarray(f(obs), np.float32)
                    want[2:14] = 0.0  # the rules piece
                    got = np.frombuffer(fast.features(seat, sequence), np.float32)
                    assert np.array_equal(got, want)
            action = rng.choice(pure.legal_actions())
            pure.apply(action)
            fast.apply(action)
    with pytest.raises(ValueError, match="seat"):
        fast.features(ruleset.players, False)
