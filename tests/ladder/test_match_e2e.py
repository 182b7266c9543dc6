"""`moon match` for real: bot processes over gRPC through the executor, verdicts against
strengths known beforehand, the LLR recomputed from the recorded games, resume after
kill -9, and the lock."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from arena.stats.match import SPRT, SetCounts, llr

ROOT = Path(__file__).resolve().parents[2]
SLOW_START = ("--startup-ms", "30000")  # the machine may be busy with other tests


def moon(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200"})


def recorded_board_scores(results: Path, a: str, b: str) -> dict[int, list[float]]:
    """A's result against B in every recorded game, by board, read from the file with SQL
    alone (a second reading of the results, independent of arena.ladder.match)."""
    db = sqlite3.connect(results)
    out: dict[int, list[float]] = defaultdict(list)
    for gid, board in db.execute("SELECT id, board FROM games").fetchall():
        place = dict(db.execute("SELECT bot, place FROM seats WHERE game_id = ?", (gid,))
                     .fetchall())          # a bot's place (its side's, at 4 players)
        pa, pb = place[a], place[b]
        out[board].append(1.0 if pa < pb else 0.5 if pa == pb else 0.0)
    db.close()
    return out


def first_crossing(scores: dict[int, list[float]], unit: int, test: SPRT
                   ) -> tuple[int, float, str | None]:
    """Boards from 0 while complete, stopping at the first whose LLR crosses a bound:
    ``(boards, llr, verdict)``."""
    counts = [0] * (2 * unit + 1)
    value, k = 0.0, 0
    while len(scores.get(k, [])) == unit:
        counts[round(sum(scores[k]) * 2)] += 1  # the board's score in 1/(2 unit) steps
        k += 1
        value = float(llr(SetCounts(unit, tuple(counts)), test.elo0, test.elo1))
        if value >= test.upper:
            return k, value, "H1"
        if value <= test.lower:
            return k, value, "H0"
    return k, value, None


def test_a_strong_bot_against_a_much_weaker_one_accepts_h1(tmp_path):
    # the heuristic bids and plays by counting; random plays anything: far more than
    # 100 Elo apart
    res = tmp_path / "m.sqlite"
    out = moon("match", "heuristic", "random", "--preset", "moon4", "--elo1", "100",
               "--games", "200", "--results", str(res), "--format", "json", *SLOW_START)
    assert out.returncode == 0, out.stderr
    js = json.loads(out.stdout)
    assert js["verdict"] == "H1"
    scores = recorded_board_scores(res, "heuristic", "random")
    boards, value, verdict = first_crossing(scores, 2, SPRT(0, 100))
    assert verdict == "H1" and js["boards"] == boards and js["counted_games"] == 2 * boards
    assert abs(js["llr"] - value) < 1e-6
    # the lines shown say the same
    assert f"LLR {value:.2f} (-2.94, 2.94)" in out.stderr
    assert f"H1 accepted: heuristic is stronger than random (elo1 = 100); LLR {value:.2f} " \
           f"≥ 2.94 after {boards} boards ({2 * boards} games)" in out.stderr
    # every board is one deal played in both orientations
    db = sqlite3.connect(res)
    for board in range(boards):
        rows = db.execute("SELECT id, seed FROM games WHERE board = ?", (board,)).fetchall()
        assert len(rows) == 2 and len({s for _, s in rows}) == 1
        sides = {gid: {bot: side for bot, side in db.execute(
            "SELECT bot, side FROM seats WHERE game_id = ?", (gid,))} for gid, _ in rows}
        assert [s["heuristic"] for s in sides.values()] in ([0, 1], [1, 0])
    # run again: decided, nothing played
    again = moon("match", "heuristic", "random", "--preset", "moon4", "--elo1", "100",
                 "--games", "200", "--results", str(res), *SLOW_START)
    assert again.returncode == 0, again.stderr
    assert "H1 accepted" in again.stdout
    assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == sum(
        len(v) for v in scores.values())


def test_a_bot_against_its_own_copy_does_not_accept_h1(tmp_path):
    # the heuristic is deterministic: at both tables of a board its copies play the same
    # game with the sides swapped, so every board scores exactly ½ and the SPRT can only
    # drift towards H0
    res = tmp_path / "m.sqlite"
    out = moon("match", "heuristic", "heuristic", "--preset", "moon4", "--elo1", "100",
               "--games", "60", "--results", str(res), "--format", "json", *SLOW_START)
    assert out.returncode == 0, out.stderr
    js = json.loads(out.stdout)
    assert js["verdict"] != "H1"
    assert js["match"]["a"] == "heuristic.A" and js["match"]["b"] == "heuristic.B"
    scores = recorded_board_scores(res, "heuristic.A", "heuristic.B")
    assert all(sum(v) / len(v) == 0.5 for v in scores.values())
    boards, value, verdict = first_crossing(scores, 2, SPRT(0, 100))
    assert (js["verdict"], js["boards"]) == (verdict, boards) and abs(js["llr"] - value) < 1e-6
    assert js["games"] <= 60
    if verdict == "H0":  # the verdict says what H0 is: at most elo0, not "within" it
        assert ("H0 accepted: heuristic.A is not stronger than heuristic.B by elo1 = 100 "
                "(the games favour a difference of at most elo0 = 0; measured Elo ") in out.stderr
        assert f"LLR {value:.2f} ≤ -2.94 after {boards} boards ({2 * boards} games)" in out.stderr


def test_a_three_player_match_plays_every_seating_with_the_third_bot(tmp_path):
    res = tmp_path / "m.sqlite"
    out = moon("match", "random", "weak", "--games", "12", "--no-check", "--results",
               str(res), "--format", "json", *SLOW_START)
    assert out.returncode == 0, out.stderr
    js = json.loads(out.stdout)
    assert js["sprt"] is None and js["verdict"] is None and js["games"] == 12
    db = sqlite3.connect(res)
    for board in (0, 1):
        games = db.execute("SELECT id FROM games WHERE board = ?", (board,)).fetchall()
        seatings = {tuple(b for (b,) in db.execute(
            "SELECT bot FROM seats WHERE game_id = ? ORDER BY seat", g)) for g in games}
        assert seatings == {(x, y, z) for x in ("random", "weak", "heuristic")
                            for y in ("random", "weak", "heuristic")
                            for z in ("random", "weak", "heuristic") if len({x, y, z}) == 3}
    scores = recorded_board_scores(res, "random", "weak")
    # the export rounds to 6 decimals
    assert [b["score"] for b in js["board_scores"]] == \
        pytest.approx([sum(scores[k]) / 6 for k in (0, 1)], abs=1e-6)
    assert js["score"] == round(sum(sum(v) for v in scores.values()) / 12, 3)


def test_a_match_too_short_for_an_interval_says_why(tmp_path):
    # one board (6 games with 3 players): no spread between boards can be measured, and
    # the text says so instead of a bare "n/a"
    res = tmp_path / "m.sqlite"
    out = moon("match", "random", "weak", "--games", "6", "--no-check", "--results", str(res),
               *SLOW_START)
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-2 if "results:" in out.stdout else -1]
    note = json.loads(moon("match", "--results", str(res), "--show", "--format", "json"
                           ).stdout)["elo_note"]
    assert note and f"after 1 board (6 games) (no interval: {note})" in last, out.stdout


def test_a_match_killed_mid_board_resumes_and_counts_each_game_once(tmp_path):
    res = tmp_path / "m.sqlite"
    args = ["match", "random", "weak", "--preset", "moon4", "--games", "40", "--no-check",
            "--results", str(res), *SLOW_START]
    p = subprocess.Popen([sys.executable, "-m", "arena.cli", *args], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        n = 0
        while time.monotonic() < deadline and n < 5:
            time.sleep(0.2)
            if res.exists():
                try:
                    n = sqlite3.connect(res).execute("SELECT COUNT(*) FROM games").fetchone()[0]
                except sqlite3.OperationalError:
                    n = 0
        assert n >= 5, "the match did not get going"
    finally:
        os.killpg(p.pid, signal.SIGKILL)  # the arena and its bots, mid-game
        p.wait()
    db = sqlite3.connect(res)
    before = db.execute("SELECT id, scores, places FROM games").fetchall()
    assert 5 <= len(before) < 40
    out = moon(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert "resuming" in out.stderr
    after = db.execute("SELECT id, scores, places FROM games").fetchall()
    ids = [r[0] for r in after]
    assert len(ids) == len(set(ids)) == 40 and set(before) <= set(after)
    js = json.loads(out.stdout)
    assert js["games"] == js["counted_games"] == 40 and js["boards"] == 20
    assert sorted(b["board"] for b in js["board_scores"]) == list(range(20))


def test_a_second_run_on_a_held_results_file_is_refused_at_once(tmp_path):
    res = tmp_path / "m.sqlite"
    args = ["match", "random", "weak", "--preset", "moon4", "--games", "400", "--no-check",
            "--results", str(res), *SLOW_START]
    p = subprocess.Popen([sys.executable, "-m", "arena.cli", *args], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        lock = res.with_name(res.name + ".lock")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (lock.exists() and lock.read_text()):
            time.sleep(0.1)
        second = moon(*args)
        assert second.returncode == 1
        assert f"Error: {res} is in use by another run (pid {p.pid}, moon match, since " \
            in second.stderr
        assert "wait for it to end (or stop it), then run again" in second.stderr
        assert "Traceback" not in second.stderr
        assert p.poll() is None  # the first run goes on
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    # once it is gone its lock is gone too (released by the system, even after kill -9)
    db = sqlite3.connect(res)
    n = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    show = moon("match", "--results", str(res), "--show", "--format", "json")
    assert show.returncode == 0, show.stderr
    assert json.loads(show.stdout)["games"] == n
    wrong = moon("ladder", "show", str(res))
    assert wrong.returncode == 1 and "holds an A/B match, not a ladder" in wrong.stderr
