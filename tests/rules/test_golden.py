"""Golden playthroughs: each file in ``golden/`` re-rendered from its own recorded actions
must match it line for line. Regenerate with ``.venv/bin/python -m tests.rules.playthrough``
(then read the diff: it is the change in behaviour).

A few lines of ``moon3_seed1.txt`` checked by hand against RULES.md: hand 0 is dealt by
seat 1, so seat 2 bids first and the dealer last; after seat 2's 4, seat 0 may only pass or
bid 5..7 or 21; seat 0 wins at 5 and holds 8 tiles with the widow 3-3, discards 6-2 and names
ones. 6-1 led is a trump lead: seat 1 must play one of its trumps 1-1, 2-1, 5-1 and seat 2
one of 3-1, 4-1; 1-1 wins (the double is the top trump). 5-1 led: seat 2's only trump is 4-1;
seat 0 has no trump and may play anything (0-0 is no one); 5-1 beats 4-1 (other end 5 > 4).
5-5 led calls for fives (a non-trump double leads its number): seat 2 must play 5-3 and
seat 0 5-2. 6-5 led: sixes; 6-6 wins. Seat 0 takes no trick: set, -5; seats 1 and 2 score
their 5 and 2 tricks. Hands 1 and 2 are passed out: no score, and the deal moves on to
seats 2, 0, then 1.
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
