"""The host's status counters keep only the games of the rate's window: their memory does
not grow with the number of games played."""

from __future__ import annotations

from arena.host.service import RATE_WINDOW_S, Counters


def test_finished_games_older_than_the_window_are_forgotten() -> None:
    c = Counters(started=0.0)
    for t in range(1000):  # one game a second for 1,000 s
        c.game_finished(float(t))
    assert RATE_WINDOW_S == 300.0
    # at t = 999 the window holds t = 699..999: 301 games (by hand)
    assert list(c.finished) == [float(t) for t in range(699, 1000)]
    c.game_finished(2000.0)  # a quiet spell: only the new game is left
    assert list(c.finished) == [2000.0]
