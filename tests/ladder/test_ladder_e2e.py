"""Real ladders over gRPC with bot processes: duplicate deals, resume after kill -9,
and ratings that separate a strong bot from a weak one."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.ladder.config import load_ladder
from arena.ladder.report import build_report, export
from arena.ladder.schedule import make_schedule
from arena.ladder.store import ResultsStore
from arena.records.record import load_record, verify_record

ROOT = Path(__file__).resolve().parents[2]


def ladder_file(tmp_path: Path, bots: list[str], boards: int, preset: str = "moon3",
                concurrency: int = 2, seed: int = 3) -> Path:
    # start-up is generous: the machine may be busy with other tests
    text = f'[ladder]\nname = "t"\npreset = "{preset}"\nboards = {boards}\nseed = {seed}\n' \
           f"concurrency = {concurrency}\n\n[time_control]\nstartup_ms = 30000\n"
    for b in bots:
        text += f'\n[[bots]]\npath = "{ROOT}/example_bots/{b}"\n'
    p = tmp_path / "ladder.toml"
    p.write_text(text)
    return p


def moon(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=900, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200"}, **kw)


def test_duplicate_sets_replay_the_same_deal_in_every_seating(tmp_path):
    lf = ladder_file(tmp_path, ["heuristic", "random", "weak"], boards=2)
    res = tmp_path / "r.sqlite"
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "20")
    assert out.returncode == 0, out.stderr
    db = sqlite3.connect(res)
    rows = db.execute("SELECT id, dset, seed, record_path FROM games").fetchall()
    assert len(rows) == 2 * 6  # 2 boards x 6 seatings of the one triple
    by_set: dict[str, list[dict]] = {}
    for _gid, dset, _seed, path in rows:
        rec = load_record(Path(path))
        assert verify_record(rec) == []
        by_set.setdefault(dset, []).append(rec)
    for recs in by_set.values():
        assert len(recs) == 6
        # the same seed, the same first dealer and the same deal to every seat...
        assert len({r["seed"] for r in recs}) == 1
        assert len({r["hands"][0]["dealer"] for r in recs}) == 1
        assert len({json.dumps(r["hands"][0]["dealt"]) for r in recs}) == 1
        # ... held by a different bot in every seating
        seatings = {tuple(s["name"] for s in r["seats"]) for r in recs}
        assert len(seatings) == 6
        # hands that every game reached were dealt identically too
        common = min(len(r["hands"]) for r in recs)
        for k in range(common):
            assert len({json.dumps(r["hands"][k]["dealt"]) for r in recs}) == 1


def test_resume_after_kill_9_loses_nothing_and_plays_nothing_twice(tmp_path):
    lf = ladder_file(tmp_path, ["heuristic", "random", "weak"], boards=3, concurrency=1)
    res = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "arena.cli", "ladder", "run", str(lf), "--results", str(res),
           "--bootstrap", "10"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    before: list = []
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if res.exists():
                try:
                    n = sqlite3.connect(res).execute("SELECT COUNT(*) FROM games").fetchone()[0]
                except sqlite3.OperationalError:
                    continue
                if n >= 4:
                    break
        os.killpg(proc.pid, signal.SIGKILL)  # mid-game, no chance to clean up
        proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    db = sqlite3.connect(res)
    before = db.execute("SELECT id, scores, places, termination FROM games").fetchall()
    assert 4 <= len(before) < 18
    db.close()
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    assert "resuming" in out.stdout
    db = sqlite3.connect(res)
    after = db.execute("SELECT id, scores, places, termination FROM games").fetchall()
    ids = [r[0] for r in after]
    versions = load_ladder(lf).versions
    expected = {g.game_id for g in make_schedule(["heuristic", "random", "weak"], 3, 3, 3,
                                                 versions=versions)}
    assert len(ids) == len(set(ids)) == 18 and set(ids) == expected
    assert set(before) <= set(after)  # finished games survive unchanged
    seats = db.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    assert seats == 18 * 3


def test_ctrl_c_keeps_the_games_and_says_how_to_resume(tmp_path):
    lf = ladder_file(tmp_path, ["heuristic", "random", "weak"], boards=3, concurrency=1)
    res = tmp_path / "r.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "ladder", "run", str(lf),
                             "--results", str(res), "--bootstrap", "10"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            time.sleep(0.2)
            try:
                if res.exists() and sqlite3.connect(res).execute(
                        "SELECT COUNT(*) FROM games").fetchone()[0] >= 2:
                    break
            except sqlite3.OperationalError:
                continue
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-2000:]
    kept = sqlite3.connect(res).execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert f"interrupted: {kept} finished game(s) are kept in" in out
    assert "run the same command again to resume" in out
    # the games Ctrl-C stopped are not reported as a failure of the fork server
    assert "fork server died" not in out and "WARNING" not in out, out[-2000:]


def test_weak_bot_ends_below_heuristic_with_separate_intervals(tmp_path):
    lf = ladder_file(tmp_path, ["heuristic", "weak"], boards=4, seed=11)
    res = tmp_path / "r.sqlite"
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "100")
    assert out.returncode == 0, out.stderr
    store = ResultsStore(res)
    rep = build_report(store, bootstrap=100)
    r = {x.bot: x for x in rep.ratings}
    assert rep.games == 4 * 6
    assert r["heuristic"].low > r["weak"].high, (r["heuristic"], r["weak"])
    # the weak bot never wins an auction it could pass, so it never makes a contract
    assert rep.stats["weak"].contracts_made == 0
    rows = {row["bot"]: row for row in json.loads(export(rep, "json"))["leaderboard"]}
    assert rows["heuristic"]["rank"] == 1
    # intervals apart imply LOS >= 95% (each marginal puts at most 2.5% past the other)
    assert rows["heuristic"]["los_next"] >= 0.95 and rows["weak"]["los_next"] is None
    csv = export(rep, "csv").splitlines()
    assert csv[0].startswith("rank,bot,rating") and len(csv) == 3
    shown = moon("ladder", "show", str(res), "--bootstrap", "20")
    assert shown.returncode == 0 and "heuristic" in shown.stdout and "head to head" in shown.stdout


def test_gauntlet_then_widened_to_the_round_robin(tmp_path):
    # 4 bots, one board of 3-player Moon: the round robin is 4 triples x 6 seatings; the
    # gauntlet of "weak" is the 3 triples that hold it (18 games). Widening it to the
    # round robin on the same results file plays only the 6 games of the 4th triple.
    text = '[ladder]\nname = "g"\npreset = "moon3"\nboards = 1\nseed = 5\nconcurrency = 2\n' \
           'gauntlet = ["weak"]\n\n[time_control]\nstartup_ms = 30000\n'
    for b, name in (("heuristic", ""), ("random", ""), ("weak", ""), ("random", "random-b")):
        text += f'\n[[bots]]\npath = "{ROOT}/example_bots/{b}"\n'
        text += f'name = "{name}"\n' if name else ""
    lf = tmp_path / "g.toml"
    lf.write_text(text)
    res = tmp_path / "g.sqlite"
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    assert "gauntlet of weak" in out.stdout
    db = sqlite3.connect(res)
    first = db.execute("SELECT id, scores, places FROM games").fetchall()
    seats = db.execute("SELECT game_id, bot FROM seats").fetchall()
    assert len(first) == 18
    by_game: dict[str, set[str]] = {}
    for gid, bot in seats:
        by_game.setdefault(gid, set()).add(bot)
    assert all("weak" in bots for bots in by_game.values())  # every game has the challenger
    db.close()
    lf.write_text(text.replace('gauntlet = ["weak"]\n', ""))
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    assert "resuming" in out.stdout and "18 of 24 games done" in out.stdout
    db = sqlite3.connect(res)
    after = db.execute("SELECT id, scores, places FROM games").fetchall()
    assert len(after) == 24 and set(first) <= set(after)
    new_games = {gid for gid, *_ in after} - {gid for gid, *_ in first}
    new_seats = {bot for gid, bot in db.execute("SELECT game_id, bot FROM seats")
                 if gid in new_games}
    assert sorted(new_seats) == ["heuristic", "random", "random-b"]


def crasher_bot(tmp_path: Path) -> Path:
    """A bot that crashes at its first play (tests/bots/misbehave.py, mode crash)."""
    folder = tmp_path / "crasher"
    folder.mkdir()
    script = ROOT / "tests" / "bots" / "misbehave.py"
    (folder / "bot.toml").write_text(f'name = "crasher"\nrun = "{{python}} {script} crash"\n')
    return folder


def test_a_bot_that_fails_its_admission_check_is_left_out(tmp_path):
    crasher = crasher_bot(tmp_path)
    res = tmp_path / "r.sqlite"
    pool = [str(ROOT / "example_bots" / b) for b in ("heuristic", "random", "weak")]
    out = moon("ladder", "run", *(a for b in pool for a in ("--bot", b)), "--bot", str(crasher),
               "--boards", "1", "--results", str(res), "--bootstrap", "10")
    assert out.returncode == 0, out.stderr
    # it crashes at its first play, which its check reaches although it always passes
    # (the check's dealer may not pass the hand out)
    assert "left out crasher: failed its admission check" in out.stdout
    assert "crash" in out.stdout.split("left out crasher", 1)[1].splitlines()[0]
    db = sqlite3.connect(res)
    bots = {b for (b,) in db.execute("SELECT DISTINCT bot FROM seats")}
    # the others play the games without it: the one triple (h, r, w), in its 6 seatings
    assert bots == {"heuristic", "random", "weak"}
    assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 6
    assert db.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 0
    shown = moon("ladder", "show", str(res), "--bootstrap", "10")
    assert "left out of the last run: crasher" in shown.stdout
    # it played nothing, so it is not rated (not a 1500 above the bots that played)
    assert "not rated (no games): crasher" in shown.stdout
    report = json.loads(moon("ladder", "show", str(res), "--format", "json").stdout)
    assert [r["bot"] for r in report["leaderboard"]] != [] and \
        "crasher" not in {r["bot"] for r in report["leaderboard"]}
    # one board of one triple is one duplicate set: nothing for a bootstrap to vary
    assert report["duplicate_sets"] == 1 and report["boards"] == 1
    # ...and the exports say so too: no interval, no LOS, rather than a false certainty
    assert all(r["ci_low"] is None and r["los_next"] is None for r in report["leaderboard"])
    assert "only 1 board: no interval can be estimated" in shown.stdout
    assert "n/a" in shown.stdout


def test_max_forfeits_drops_a_bot_and_skips_its_games(tmp_path):
    crasher = crasher_bot(tmp_path)
    res = tmp_path / "r.sqlite"
    args = ["ladder", "run", "--bot", str(ROOT / "example_bots" / "heuristic"),
            "--bot", str(ROOT / "example_bots" / "random"), "--bot", str(crasher),
            "--boards", "2", "-j", "1", "--no-check", "--max-forfeits", "2",
            "--results", str(res), "--bootstrap", "10"]
    out = moon(*args)
    assert out.returncode == 0, out.stderr
    # one triple, 2 boards x 6 seatings = 12 games, every one with the crasher: it forfeits
    # the first two, then the other 10 are skipped
    db = sqlite3.connect(res)
    assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2
    assert db.execute("SELECT COUNT(*) FROM faults WHERE forfeit = 1 AND bot = 'crasher'"
                      ).fetchone()[0] == 2
    assert "dropped crasher: dropped after 2 forfeits" in out.stdout
    assert "10 game(s) with a dropped bot not played" in out.stdout
    db.close()
    # the next run leaves it out from the start: nothing to play
    out = moon(*args)
    assert out.returncode == 0, out.stderr
    assert "left out crasher: has forfeited 2 games of this ladder" in out.stdout
    assert sqlite3.connect(res).execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2


def test_a_ladder_mixing_python_node_go_and_stdio_bots(tmp_path):
    # One board of 4-player Moon among four languages: every 4-set in all 3 pairings, each
    # at two tables with the partnerships swapped = 6 games, all ending by the rules.
    from arena.bots.manifest import load_bot
    from arena.sandbox.stamps import ensure_built, missing_tool

    bots = ["heuristic", "node-heuristic", "go-heuristic", "rust-stdio"]
    for b in bots[1:]:
        spec = load_bot(ROOT / "example_bots" / b)
        why = missing_tool(spec)
        if why:
            pytest.skip(f"cannot build {b}: {why}")
        ensure_built(spec)
    lf = ladder_file(tmp_path, bots, boards=1, preset="moon4", seed=8)
    res = tmp_path / "r.sqlite"
    out = moon("ladder", "run", str(lf), "--results", str(res), "--bootstrap", "20")
    assert out.returncode == 0, out.stderr
    db = sqlite3.connect(res)
    rows = db.execute("SELECT termination FROM games").fetchall()
    assert len(rows) == 6 and {r[0] for r in rows} <= {"target", "moon"}
    assert db.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 0
    assert {r[0] for r in db.execute("SELECT DISTINCT bot FROM seats")} == set(bots)
