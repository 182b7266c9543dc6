"""Golden playthroughs: each file in ``golden/`` re-rendered from its own recorded actions
must match it line for line. Regenerate with ``.venv/bin/python -m tests.rules.playthrough``
(then read the diff: it is the change in behaviour).

A few lines of ``moon3_seed23.txt`` checked by hand against docs/rules.md: hand 0 is dealt by
seat 0, everyone passes, nobody scores and the deal moves on: hand 1 is dealt by seat 1, so
seat 2 bids first and the dealer last. After seat 2's 4, seat 0 may only pass or bid 5..7 or
21; seat 2 wins at 4, holds 8 tiles with the widow 3-2, discards 5-3 and names sixes. 6-6
led is a trump lead: seat 0 must play its only six 6-5 and seat 1 its 6-3; 6-6 (the top
trump) wins. On 6-4 led seat 0 holds no trump and may play anything (0-0). 1-1 led calls
for ones (a non-trump double leads its number): seat 1 must play 3-1, and 1-1 wins (the
double is the highest of its suit). 5-4 led: seat 0 may play 5-2 or 5-5, and 5-5 wins.
Seat 2 takes 5 tricks, made: it scores its bid, 4 (no overtricks); seats 0 and 1 score their
2 and 0 tricks. In hand 5 seat 0 bids 21 and takes 2 tricks: set, -21. Hand 9 ends with seat
2 alone on 21: it wins, places 3/2/1.
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
