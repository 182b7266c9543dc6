"""What a match counts: complete boards from board 0, in board order whatever order the
games were recorded in, and nothing after the verdict."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from arena.bots.manifest import BotSpec
from arena.ladder.match import Tally, a_result, unique_names
from arena.ladder.store import GameRow
from arena.stats.match import SPRT, SetCounts, llr


def row4(board: int, k: int, a_side_first: bool) -> GameRow:
    # table k = 0: A's partnership in seats 0/2 (side 0); k = 1: in seats 1/3 (side 1)
    seats = ["A", "B", "A", "B"] if k == 0 else ["B", "A", "B", "A"]
    a_side = k
    places = [1, 2] if (a_side == 0) == a_side_first else [2, 1]
    return GameRow(f"b{board}-s{k}", board, f"b{board}", 4, "target", None, [0, 0], places,
                   seats, 1, 1, 0)


def test_a_result_reads_sides_with_four_players_and_seats_with_three():
    assert a_result(row4(0, 0, True), "A", "B") == 1.0
    assert a_result(row4(0, 1, True), "A", "B") == 1.0
    assert a_result(row4(0, 1, False), "A", "B") == 0.0
    g3 = GameRow("g", 0, "d", 3, "target", None, [0, 0, 0], [2, 3, 1], ["A", "B", "C"],
                 1, 1, 0)
    assert a_result(g3, "A", "B") == 1.0 and a_result(g3, "B", "A") == 0.0
    tie = GameRow("g", 0, "d", 3, "target", None, [0, 0, 0], [1, 1, 3], ["A", "B", "C"],
                  1, 1, 0)
    assert a_result(tie, "A", "B") == 0.5


def test_boards_count_in_order_once_complete_whatever_the_order_of_the_games():
    # boards 0..5: A wins both tables on even boards, one of two on odd ones; board 6 has
    # one game only
    rows = [row4(b, k, b % 2 == 0 or k == 0) for b in range(6) for k in (0, 1)]
    rows.append(row4(6, 0, True))
    rng = random.Random(3)
    for _ in range(5):
        rng.shuffle(rows)
        t = Tally("A", "B", 2, None)
        for r in rows:
            t.add(r)
        st = t.status()
        # by hand: 3 boards at score 1 (class 4 of 0..4), 3 at ½ (class 2)
        assert st.counts == SetCounts(2, (0, 0, 3, 0, 3))
        assert (st.games, st.counted_games, st.uncounted) == (13, 12, 1)
        assert st.stats.score == 0.75


def test_nothing_is_counted_after_the_verdict():
    test = SPRT(0, 100)
    t = Tally("A", "B", 2, test)
    for b in range(40):
        for k in (0, 1):
            t.add(row4(b, k, True))
    st = t.status()
    # the first k with the LLR of k boards all at 1 at or above the upper bound
    first = next(k for k in itertools.count(1)
                 if llr(SetCounts(2, (0, 0, 0, 0, k)), 0, 100) >= test.upper)
    assert st.verdict == "H1" and st.stats.sets == first and st.games == 80
    assert st.llr == llr(SetCounts(2, (0, 0, 0, 0, first)), 0, 100)
    assert [b.counted for b in st.boards] == [b < first for b in range(40)]


def test_names_that_clash_are_told_apart():
    spec = BotSpec("mybot", Path("."), "")
    a, b, thirds = unique_names(spec, spec, [spec, BotSpec("heuristic", Path("."), "")])
    assert (a.name, b.name) == ("mybot.A", "mybot.B")
    assert [c.name for c in thirds] == ["mybot", "heuristic"]
    a, b, thirds = unique_names(BotSpec("x", Path("."), ""), spec, [spec, spec])
    assert [c.name for c in thirds] == ["mybot.third", "mybot.third2"]


def test_a_sweep_of_few_boards_says_why_its_bound_is_wide():
    # 3 players, 4 boards of 6 games, A ahead of B in all 24: the Elo has a lower bound
    # only, elo(0.05^(1/4)) = -400 log10(1/0.4729 - 1) = -18.9 (docs/match.md), and the
    # sign test gives LOS 1 - 1/2^4 = 93.75%; the line must say it rests on 4 boards won
    from arena.ladder.match import MatchStatus, progress_line, verdict_line
    from arena.stats.match import match_stats

    counts = SetCounts(6, (0,) * 12 + (4,))
    status = MatchStatus(24, 24, counts, match_stats(counts), None, None, None, [])
    line = progress_line(status, "mybot", "random")
    assert line == ("games 24 · boards 4 · mybot scores 100.0% against random · Elo ≥ -19 "
                    "(mybot won all 4 boards: a bound, not an estimate; more games narrow "
                    "it) · LOS 93.8%")
    assert verdict_line(status, "mybot", "random") == (
        "mybot against random: Elo ≥ -19, LOS 93.8% after 4 boards (24 games): mybot won "
        "all 4 boards, so the Elo has one bound only, and 4 boards make a loose one; more "
        "games (--games) narrow it")
    # B's sweep: an upper bound, +19, said of B
    lost = SetCounts(6, (4,) + (0,) * 12)
    status = MatchStatus(24, 24, lost, match_stats(lost), None, None, None, [])
    assert "Elo ≤ +19 (random won all 4 boards: a bound" in progress_line(status, "mybot",
                                                                          "random")
    # a two-sided interval says nothing of the kind
    mixed = SetCounts(6, (0,) * 6 + (2, 0, 0, 0, 0, 0, 2))
    status = MatchStatus(24, 24, mixed, match_stats(mixed), None, None, None, [])
    assert "won all" not in progress_line(status) + verdict_line(status)
