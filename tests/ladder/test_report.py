"""The ladder report from a results file built by hand: head-to-head counts and scores,
and how the leaderboard shows intervals (one form; one-sided or n/a when the data cannot
give two sides)."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import pytest
from moon_sdk.rules import Ruleset
from rich.console import Console

from arena.bots.manifest import BotSpec
from arena.core.results import GameResult, Termination
from arena.core.timecontrol import TimeControl
from arena.executor.local import FinishedGame, GameRequest
from arena.ladder.report import build_report, export, print_report
from arena.ladder.schedule import ScheduledGame, make_schedule
from arena.ladder.store import ResultsStore


def add(store: ResultsStore, gid: str, seats: list[str], places: list[int],
        board: int = 0, dset: str | None = None) -> None:
    preset = "moon3" if len(seats) == 3 else "moon4"
    request = GameRequest(gid, tuple(BotSpec(b, Path("."), "") for b in seats),
                          Ruleset.preset(preset), preset, 1, TimeControl())
    result = GameResult(Termination.TARGET, places.index(1), (0,) * len(places),
                        tuple(places), 1)
    store.add_game(ScheduledGame(gid, board, dset or gid, 1, tuple(seats)),
                   FinishedGame(request, result, (), (), None, 1, 0))


def test_head_to_head_counts_games_not_seats(tmp_path):
    store = ResultsStore(tmp_path / "r.sqlite", "id", meta={"bots": [{"name": "x"},
                                                                     {"name": "y"}]})
    # 4 players, each bot partnering a copy of itself; a whole duplicate set (both
    # tables): x's side first at both
    add(store, "g4a", ["x", "y", "x", "y"], [1, 2], dset="d4")
    add(store, "g4b", ["y", "x", "y", "x"], [2, 1], dset="d4")
    # 3 players, x in two seats, in the set's 3 seatings. Each x seat is a player: with
    # x first and third, one x seat beat y, the other lost to it (1 of 2); with both x
    # ahead of y 2 of 2; with both behind 0 of 2
    add(store, "g3a", ["x", "y", "x"], [1, 2, 3], dset="d3")
    add(store, "g3b", ["x", "x", "y"], [1, 2, 3], dset="d3")
    add(store, "g3c", ["y", "x", "x"], [1, 2, 3], dset="d3")
    rep = build_report(store, bootstrap=10)
    # x vs y: each 4-player game once (2 wins), each 3-player one twice (3 of 6)
    assert rep.cross["x"]["y"] == (5 / 8, 8)
    assert rep.cross["y"]["x"] == (3 / 8, 8)
    assert rep.duplicate_sets == 2 and rep.unrated == [] and rep.partial_sets == 0


def ladder(tmp_path, bots, boards, places_of) -> ResultsStore:
    """A results file of a 3-player ladder on the project's schedule."""
    store = ResultsStore(tmp_path / "r.sqlite", "id",
                         meta={"name": "t", "preset": "moon3", "boards": boards,
                               "bots": [{"name": b} for b in bots]})
    for g in make_schedule(bots, 3, boards, seed=1):
        add(store, g.game_id, list(g.seats), places_of(g.board, g.seats), g.board, g.dset)
    return store


def shown(rep) -> str:
    out = io.StringIO()
    print_report(Console(file=out, width=140), rep)
    return out.getvalue()


def leaderboard_row(text: str, bot: str) -> str:
    return next(line for line in text.splitlines() if f" {bot} " in line and "│" in line)


def test_a_one_board_ladder_says_no_interval_can_be_estimated(tmp_path):
    # the demo's shape: 1 board, several duplicate sets (4 triples): the warning counts
    # boards, not sets
    store = ladder(tmp_path, ["a", "b", "c", "d"], 1, lambda board, seats: [1, 2, 3])
    rep = build_report(store, bootstrap=20)
    assert rep.boards == 1 and rep.duplicate_sets == 4
    text = shown(rep)
    assert "only 1 board: no interval can be estimated" in text
    rows = [leaderboard_row(text, b) for b in "abcd"]
    assert all("±" not in row for row in rows) and "n/a" in rows[0]
    out = list(csv.DictReader(io.StringIO(export(rep, "csv"))))
    assert out[0]["ci_low"] == out[0]["ci_high"] == out[0]["los_next"] == ""
    assert out[0]["boards"] == "1" and out[0]["ci_note"].startswith("1 board")


def test_a_sweep_shows_one_sided_bounds_never_plus_minus_zero(tmp_path):
    # A always first, B always second, C always last on 24 boards: A "≥", C "≤", B
    # unbounded both ways (n/a); the differences one-sided; no "± 0" anywhere
    order = {"A": 1, "B": 2, "C": 3}
    store = ladder(tmp_path, ["A", "B", "C"], 24, lambda board, seats: [order[s] for s in seats])
    rep = build_report(store, bootstrap=50)
    text = shown(rep)
    assert "± 0" not in text
    a, b, c = (leaderboard_row(text, x) for x in "ABC")
    assert "≥ " in a and "≥ +" in a and "n/a" in b and "≥ +" in b and "≤ " in c
    # the fit's own figures for A and C are the prior's, not the data's: not shown
    assert f" {rep.ratings[0].rating:.0f} " not in a and f" {rep.ratings[2].rating:.0f} " not in c
    assert "A: never behind B, C" in text and "C: never ahead of A, B" in text
    assert "B: never behind C; never ahead of A" in text
    assert "only" not in text                      # 24 boards: no warning
    js = {r["bot"]: r for r in json.loads(export(rep, "json"))["leaderboard"]}
    assert js["A"]["ci_high"] is None and js["A"]["ci_low"] > 1500 and js["A"]["rating"] is None
    assert js["C"]["ci_low"] is None and js["C"]["ci_high"] < 1500
    assert js["A"]["diff_next_high"] is None and js["A"]["diff_next_low"] > 0
    assert js["A"]["los_next"] == round(1 - 0.5 ** 24, 4)


def legend(text: str) -> str:
    """The words between the leaderboard and the head-to-head table, as one line."""
    lines = text.splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("head to head"))
    start = max(i for i, line in enumerate(lines[:end]) if line.startswith("└"))
    return " ".join(" ".join(lines[start + 1:end]).split())


def test_the_legend_says_what_n_a_means_when_the_table_shows_it(tmp_path):
    # the sweep: B never behind C and never ahead of A, bounded on neither side: "n/a"
    order = {"A": 1, "B": 2, "C": 3}
    sweep = ladder(tmp_path / "sweep", ["A", "B", "C"], 24,
                   lambda board, seats: [order[s] for s in seats])
    text = shown(build_report(sweep, bootstrap=50))
    assert "n/a" in leaderboard_row(text, "B")
    said = legend(text)
    assert said.count("n/a: ") == 1
    assert "n/a: the data bound it on neither side (a bot never behind one bot and never " \
        "ahead of another" in said

    # mixed results: every rating two-sided, no n/a in the table and none in the legend
    def places(board, seats):
        k = (board * 7 + sum(ord(s) for s in seats[:2]) * (1 + board % 3)) % 6
        return [[1, 2, 3], [1, 3, 2], [2, 1, 3], [2, 3, 1], [3, 1, 2], [3, 2, 1]][k]
    text = shown(build_report(ladder(tmp_path / "mixed", ["p", "q", "r"], 10, places),
                              bootstrap=50))
    assert "n/a" not in text
    assert "rating: strength" in legend(text) and "n/a" not in legend(text)


def test_identical_bots_read_n_a_not_1500_plus_minus_zero(tmp_path):
    store = ladder(tmp_path, ["x", "y", "z"], 6,
                   lambda board, seats: [(s + board) % 3 + 1 for s in range(3)])
    rep = build_report(store, bootstrap=20)
    text = shown(rep)
    assert "± 0" not in text
    assert "1500 (n/a)" in leaderboard_row(text, "x")
    assert "no interval: every board gave the same result" in text
    assert "only 6 boards: the intervals are wide and rough" in text


def test_a_normal_ladder_shows_one_symmetric_interval_form(tmp_path):
    # mixed results on 10 boards: "rating ± x" and the difference from the next bot with
    # its own "± x"; no second, uneven "low–high" form beside it
    def places(board, seats):
        k = (board * 7 + sum(ord(s) for s in seats[:2]) * (1 + board % 3)) % 6
        return [[1, 2, 3], [1, 3, 2], [2, 1, 3], [2, 3, 1], [3, 1, 2], [3, 2, 1]][k]
    store = ladder(tmp_path, ["p", "q", "r"], 10, places)
    rep = build_report(store, bootstrap=50)
    text = shown(rep)
    top = leaderboard_row(text, rep.ratings[0].bot)
    r0 = rep.ratings[0]
    assert f"{r0.rating:.0f} ± {r0.margin:.0f}" in top
    assert f"{r0.diff_next.value:+.0f} ± {r0.diff_next.margin:.0f}" in top
    assert "–" not in top
    assert r0.high - r0.rating == r0.rating - r0.low


def test_a_bot_that_always_loses_leaves_the_others_their_figures(tmp_path):
    # z last in every game; x ahead of y in 2, 3, 4, 5 of the six seatings on boards 0,
    # 1, 2, 3, ... (8 boards: 28 of 48 games, 58%). The others keep "± x", the scale is
    # anchored on them, z is "≤", and the head-to-head beside each gap is counted here:
    # x ahead of y in 28 of their 48 games, y ahead of z in all 48.
    seatings = sorted(set(itertools.permutations(["x", "y", "z"])))

    def order(board, seats):
        x_ahead = seatings.index(tuple(seats)) < 2 + board % 4
        return [3 if s == "z" else 1 if (s == "x") == x_ahead else 2 for s in seats]
    rep = build_report(ladder(tmp_path, ["x", "y", "z"], 8, order), bootstrap=50)
    assert [r.bot for r in rep.ratings] == ["x", "y", "z"] and rep.anchor == ["x", "y"]
    text = shown(rep)
    x, y, z = (leaderboard_row(text, b) for b in "xyz")
    assert "±" in x.split("│")[3] and "±" in y.split("│")[3] and "≤ " in z.split("│")[3]
    assert "58% of 48" in x and "100% of 48" in y
    said = legend(text)
    assert "1500 is the average of x, y" in said
    assert "the scale is anchored on x, y" in said and "z is rated by a bound" in said
    assert "z: never ahead of x, y" in said
    assert rep.ratings[0].rating + rep.ratings[1].rating == pytest.approx(3000)
    js = {r["bot"]: r for r in json.loads(export(rep, "json"))["leaderboard"]}
    assert js["x"]["h2h_next"] == round(28 / 48, 4) and js["x"]["h2h_next_games"] == 48
    assert js["y"]["h2h_next"] == 1.0 and js["z"]["h2h_next"] is None
    assert js["x"]["rating"] is not None and js["z"]["rating"] is None
