"""Golden playthroughs: each file in ``golden/`` re-rendered from its own recorded actions
must match it line for line. Regenerate with ``.venv/bin/python -m tests.rules.playthrough``
(then read the diff: it is the change in behaviour).

A few lines of ``moon3_seed1.txt`` checked by hand against RULES.md (also in docs/rules.md):
hand 0 is dealt by seat 1, so seat 2 bids first and the dealer last; after seat 2's 4, seat 0
may only pass or bid 5..7 or 21; seat 1 wins at 5 and holds 8 tiles with the widow 5-5. Ones
trump, 2-1 led: it is a trump, so seat 2 must play a trump (4-1 or 5-1) and seat 0 may play
1-1, 3-1 or 6-1 but not 0-0; 6-1 wins (highest other end). 4-3 led: fours, and seat 1's
only four is 5-4 (4-4 already played), which beats 4-3, while 3-3 is no four. Seat 1 takes 2
tricks, short of 5: set, -5; seats 0 and 2 score their 3 and 2 tricks. Hand 1 is passed out:
no score, and hand 2 is dealt by seat 0.
"""

from __future__ import annotations

import difflib

import pytest

from .playthrough import GAMES, GOLDEN_DIR, recorded_actions, render


@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_playthrough(name: str) -> None:
    preset, seed = GAMES[name]
    path = GOLDEN_DIR / name
    want = path.read_text()
    actions = recorded_actions(want)
    assert actions, f"{path} records no actions"
    got = render(preset, seed, actions)
    if got != want:
        diff = "".join(list(difflib.unified_diff(
            want.splitlines(keepends=True), got.splitlines(keepends=True),
            fromfile=f"{path} (golden)", tofile="engine now"))[:60])
        pytest.fail(f"{name} differs from the engine's playthrough; if the change is "
                    "intended, regenerate with `.venv/bin/python -m tests.rules.playthrough`"
                    f" and review the diff:\n{diff}")


def test_golden_files_are_whole_games() -> None:
    for name, (preset, seed) in GAMES.items():
        text = (GOLDEN_DIR / name).read_text()
        assert text.splitlines()[-1].startswith("game over:"), name
        assert f"preset {preset}, seed {seed}." in text.splitlines()[0]
