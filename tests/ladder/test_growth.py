"""Ladders that grow, notice edited bots, refuse other settings and concurrent runs, and
rate only complete duplicate sets."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from moon_sdk.rules import Ruleset
from rich.console import Console

from arena.bots.manifest import BotSpec
from arena.bots.versions import version_label
from arena.core.results import GameResult, Termination
from arena.core.timecontrol import TimeControl
from arena.executor.local import FinishedGame, GameRequest
from arena.ladder.config import load_ladder
from arena.ladder.report import build_report, export, print_report
from arena.ladder.schedule import ScheduledGame, make_schedule
from arena.ladder.store import ResultsStore, hold_results

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"


def write_ladder(path: Path, bots: list[tuple[str, Path]], seed: int = 5,
                 boards: int = 1) -> Path:
    # one hand a game keeps it quick; start-up is generous on a busy machine
    text = (f'[ladder]\nname = "g"\npreset = "moon3"\nboards = {boards}\nseed = {seed}\n'
            "concurrency = 2\ncheck = false\n\n[time_control]\nstartup_ms = 30000\n"
            "max_hands = 1\n")
    for name, folder in bots:
        text += f'\n[[bots]]\npath = "{folder}"\nname = "{name}"\n'
    path.write_text(text)
    return path


def moon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=900, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200"})


def game_ids(results: Path) -> list[str]:
    return [r[0] for r in sqlite3.connect(results).execute("SELECT id FROM games")]


def test_adding_a_bot_plays_only_its_games_and_removing_one_keeps_its_out(tmp_path):
    res = tmp_path / "r.sqlite"
    three = [("heuristic", EXAMPLES / "heuristic"), ("random", EXAMPLES / "random"),
             ("weak", EXAMPLES / "weak")]
    lf = write_ladder(tmp_path / "l.toml", three)
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    first = game_ids(res)
    assert len(first) == 6      # one triple in its 6 seatings, one board
    # a fourth bot: of the C(4,3) = 4 triples, the 3 that hold it are new: 3 x 6 games
    write_ladder(lf, [*three, ("random2", EXAMPLES / "random")])
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    assert "resuming" in out.stdout and "6 of 24 games done" in out.stdout
    now = game_ids(res)
    assert len(now) == len(set(now)) == 24 and now[:6] == first
    cfg = load_ladder(lf)
    assert set(now) == {g.game_id for g in make_schedule(
        [b.name for b in cfg.bots], 3, 1, 5, versions=cfg.versions)}
    added = [g for g in make_schedule([b.name for b in cfg.bots], 3, 1, 5,
                                      versions=cfg.versions) if g.game_id not in first]
    assert all("random2" in g.seats for g in added)
    # weak removed: nothing to play (its triple without it was played), and its games,
    # kept in the file, are out of the ratings
    write_ladder(lf, [three[0], three[1], ("random2", EXAMPLES / "random")])
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    assert len(game_ids(res)) == 24
    store = ResultsStore(res)
    rep = build_report(store, bootstrap=10)
    assert sorted(r.bot for r in rep.ratings) == ["heuristic", "random", "random2"]
    assert rep.games == 6 and rep.retired_games == 18 and rep.partial_sets == 0
    assert "not rated: 18 games of bots or versions no longer in the ladder" in out.stdout


def test_an_edited_bot_is_noticed_and_never_mixed(tmp_path):
    mine = tmp_path / "mybot"
    shutil.copytree(EXAMPLES / "random", mine)
    res = tmp_path / "r.sqlite"
    lf = write_ladder(tmp_path / "l.toml", [("mybot", mine), ("weak", EXAMPLES / "weak")])
    v1 = load_ladder(lf).versions["mybot"]
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    assert len(game_ids(res)) == 6  # 2 bots: (a, a, b) and (a, b, b), 3 seatings each
    # building or caching changes nothing; editing a source does
    (mine / "__pycache__").mkdir(exist_ok=True)
    (mine / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert load_ladder(lf).versions["mybot"] == v1
    with open(mine / "bot.py", "a") as f:
        f.write("\n# tuned\n")
    v2 = load_ladder(lf).versions["mybot"]
    assert v2 != v1
    out = moon("ladder", "run", str(lf), "--results", str(res))
    assert out.returncode == 1
    assert (f"Error: {res}: the code of mybot ({version_label('mybot', v1)} there, "
            f"{version_label('mybot', v2)} now) changed since its games there") in out.stderr
    assert "--on-change new-version" in out.stderr and "Traceback" not in out.stderr
    assert len(game_ids(res)) == 6  # nothing played
    # as a new version: its own 6 games on the same board, rated apart from the old
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10",
               "--on-change", "new-version")
    assert out.returncode == 0, out.stderr
    db = sqlite3.connect(res)
    versions = db.execute("SELECT version, COUNT(DISTINCT game_id) FROM seats "
                          "WHERE bot = 'mybot' GROUP BY version").fetchall()
    assert dict(versions) == {v1: 6, v2: 6}
    rep = build_report(ResultsStore(res), bootstrap=10)
    assert sorted(r.bot for r in rep.ratings) == sorted(
        [version_label("mybot", v1), version_label("mybot", v2), "weak"])
    # replace: only the new code is rated; the old version's games stay in the file
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10",
               "--on-change", "replace")
    assert out.returncode == 0, out.stderr
    rep = build_report(ResultsStore(res), bootstrap=10)
    assert sorted(r.bot for r in rep.ratings) == ["mybot", "weak"]
    assert rep.games == 6 and rep.retired_games == 6


def test_other_settings_are_refused_naming_each_difference(tmp_path):
    res = tmp_path / "r.sqlite"
    bots = [("random", EXAMPLES / "random"), ("weak", EXAMPLES / "weak")]
    lf = write_ladder(tmp_path / "l.toml", bots, seed=5)
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    write_ladder(lf, bots, seed=6)
    out = moon("ladder", "run", str(lf), "--results", str(res), "--decision-ms", "900",
               "-o", "min_bid=3")
    assert out.returncode == 1
    err = out.stderr
    assert f"Error: {res} holds games played under other settings: seed = 5 there, 6 here" \
        in err
    assert "ruleset option min_bid = 4 there, 3 here" in err
    assert "time control decision_ms = 2000 there, 900 here" in err
    assert "set them back to the file's values to resume it, or give a new --results path" \
        in err
    assert len(game_ids(res)) == 6


def test_a_held_ladder_file_is_refused_and_left_untouched(tmp_path):
    res = tmp_path / "r.sqlite"
    lf = write_ladder(tmp_path / "l.toml", [("random", EXAMPLES / "random"),
                                            ("weak", EXAMPLES / "weak")])
    fd = hold_results(res, "a test")
    try:
        out = moon("ladder", "run", str(lf), "--results", str(res))
    finally:
        os.close(fd)
    assert out.returncode == 1
    assert f"Error: {res} is in use by another run (pid {os.getpid()}, a test, since " \
        in out.stderr
    assert not res.exists() and not res.with_name(res.name + ".records").exists()


def add(store: ResultsStore, gid: str, board: int, dset: str, seats: tuple[str, ...],
        places: tuple[int, ...]) -> None:
    request = GameRequest(gid, tuple(BotSpec(b, Path("."), "") for b in seats),
                          Ruleset.preset("moon3"), "moon3", 1, TimeControl())
    result = GameResult(Termination.TARGET, places.index(1), (0, 0, 0), places, 1)
    store.add_game(ScheduledGame(gid, board, dset, 1, seats),
                   FinishedGame(request, result, (), (), None, 1, 0))


def test_only_complete_duplicate_sets_are_rated(tmp_path):
    # as a ladder killed after one game of a set leaves it: 8 whole sets on 8 boards, and
    # one game of a ninth
    store = ResultsStore(tmp_path / "r.sqlite", "id", meta={
        "name": "t", "preset": "moon3", "boards": 9, "players": 3,
        "bots": [{"name": b} for b in "abc"]})
    games = make_schedule(["a", "b", "c"], 3, 9, seed=1)
    for g in games[:8 * 6 + 1]:
        rank = {"a": 1, "b": 2, "c": 3} if g.board % 2 else {"a": 2, "b": 1, "c": 3}
        add(store, g.game_id, g.board, g.dset, g.seats, tuple(rank[s] for s in g.seats))
    rep = build_report(store, bootstrap=20)
    assert rep.games == 48 and rep.boards == 8 and rep.duplicate_sets == 8
    assert rep.partial_sets == 1 and rep.partial_games == 1
    assert rep.stats["a"].games == 48
    # a and b each ahead of the other on 4 boards: the fit cannot tell them apart
    [first, second, third] = rep.ratings
    assert {first.bot, second.bot} == {"a", "b"} and third.bot == "c"
    assert abs(first.rating - second.rating) < 1e-6
    out = io.StringIO()
    print_report(Console(file=out, width=160), rep)
    text = out.getvalue()
    assert "not rated yet: 1 duplicate set with only 1 game played" in text
    assert "only 8 boards" not in text  # 8 whole boards: no rough-interval warning
    js = json.loads(export(rep, "json"))
    assert js["partial_sets"] == 1 and js["games"] == 48
