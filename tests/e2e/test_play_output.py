"""What `moon play` prints: a forfeit said once (with the bot's name and the end of its
output), and a seat started by hand shown by the name its bot gives when it joins."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOON = [sys.executable, "-m", "arena.cli"]
ENV = {**os.environ, "COLUMNS": "200"}


def test_a_forfeit_is_said_once(tmp_path):
    bot = tmp_path / "crasher"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "crasher"\nrun = "{python} bot.py"\n')
    (bot / "bot.py").write_text("import sys\nprint('about to fail', file=sys.stderr)\n"
                                "sys.exit(1)\n")
    out = subprocess.run([*MOON, "play", "--seed", "3", "--records", str(tmp_path / "rec"),
                          "random", str(bot), "random"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=ENV)
    assert out.returncode == 3, out.stderr
    both = out.stdout + out.stderr
    # the reason once (it was twice: the story's own forfeit line, then this one)
    assert len(re.findall(r"\bcrash\b", both)) == 1, both
    assert len(re.findall(r"exited \(code 1\)", both)) == 1, both
    assert "seat 1 (crasher) forfeited: crash" in out.stderr
    assert "  | about to fail" in out.stderr


def test_a_manual_seat_shows_its_bots_name_once_it_joins(tmp_path):
    proc = subprocess.Popen([*MOON, "play", "--seed", "5", "--tcp", "--records",
                             str(tmp_path / "rec"), "manual", "weak", "weak"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stderr is not None
    address = token = None
    for line in proc.stderr:
        m = re.search(r"MOON_ADDRESS=(\S+) MOON_TOKEN=(\S+)", line)
        if m:
            address, token = m.groups()
            break
    assert address and token
    bot = subprocess.Popen([sys.executable, "bot.py"], cwd=ROOT / "example_bots" / "random",
                           env={**os.environ, "MOON_ADDRESS": address, "MOON_TOKEN": token})
    try:
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        bot.wait(timeout=60)
    assert proc.returncode == 0, stderr
    assert "0:random" in stdout and "0:manual" not in stdout
    assert "1:weak" in stdout and "2:weak" in stdout


def test_replay_show_in_80_columns_names_every_seat_in_full(tmp_path):
    out = subprocess.run([*MOON, "play", "--seed", "4", "--records", str(tmp_path), "random",
                          "weak", "random", "--max-hands", "1"], capture_output=True, text=True,
                         timeout=300, env=ENV)
    assert out.returncode == 0, out.stderr
    [path] = tmp_path.glob("*.json")
    data = json.loads(path.read_text())
    long = [f"search-mcts-rollouts-1000-seed-0001-{c}" for c in "abc"]   # 37 characters
    for seat, name in zip(data["seats"], long, strict=True):
        seat["name"] = name
    path.write_text(json.dumps(data))
    shown = subprocess.run([*MOON, "replay", "show", str(path)], capture_output=True,
                           text=True, timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    flat = "".join(shown.stdout.split())       # the line may wrap between names
    for seat, name in enumerate(long):
        assert f"{seat}:{name}" in flat
    assert all(len(line) <= 80 for line in shown.stdout.splitlines())
    # and no column header is a name cut short ("0:sea…" three times over)
    headers = [line for line in shown.stdout.splitlines() if line.startswith("┃")]
    assert headers and not any("…" in line for line in headers), headers


def test_the_hand_table_has_a_legend_that_tells_what_its_cells_hold(tmp_path):
    out = subprocess.run([*MOON, "play", "--seed", "11", "--records", str(tmp_path), "heuristic",
                          "random", "heuristic", "--max-hands", "3"], capture_output=True,
                         text=True, timeout=300, env=ENV)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    [header] = [ln for ln in lines if ln.startswith("┃")]
    columns = [c.strip() for c in header.strip("┃").split("┃")]
    end = next(i for i, ln in enumerate(lines) if ln.startswith("└"))
    legend = lines[end + 1:end + 3]
    assert lines[end + 3].startswith(("winner:", "no winner")), lines[end:]  # legend, result
    assert all(len(ln) <= 80 for ln in legend), legend  # two lines in 80 columns too
    text = " ".join(legend)
    # every column that is not plain ("hand" number, "dealer" seat) is explained, the score
    # columns (headed by seat numbers) together
    named = [c for c in columns if not c.isdigit() and c not in ("hand", "dealer")]
    assert named == ["auction", "contract", "tricks", "result"]
    for c in named:
        assert f"{c}:" in text, c
    assert " ".join(c for c in columns if c.isdigit()) + ": scores so far" in text
    # and it says true things: each hand's row, written from the record by the legend's own
    # words (a bid of 0 is a pass; the scores are the rules' points for the hand (docs/rules.md,
    # "Scoring": the bidder the bid if made, minus it if set; the others a point a trick)
    # added up since the start)
    [path] = tmp_path.glob("*.json")
    record = json.loads(path.read_text())
    rows = [[c.strip() for c in ln.strip("│").split("│")] for ln in lines
            if ln.startswith("│") and ln.strip("│ ").split("│")[0].strip().isdigit()]
    totals = [0, 0, 0]
    for h, row in zip(record["hands"], rows, strict=True):
        auction = " ".join(f"{b['seat']}:{'-' if b['bid'] == 0 else b['bid']}"
                           for b in h["bids"])
        assert row[2] == auction
        if h["bidder"] is None:  # all passed: nobody scores
            assert row[3:] == ["—", "", "all passed: redeal", *map(str, totals)]
            continue
        assert row[3] == f"{h['bidder']}:{h['bid']} trump {h['trump']}"
        assert row[4] == " ".join(str(t) for t in h["tricks_taken"])
        assert row[5] == ("made" if h["made"] else "set")
        for seat in range(3):
            bidder = seat == h["bidder"]
            totals[seat] += (h["bid"] if h["made"] else -h["bid"]) if bidder \
                else h["tricks_taken"][seat]
        assert row[6:] == [str(x) for x in totals]
        if h["bid"] == 21 and h["made"]:
            break  # the moon shot wins the game


def test_piped_output_keeps_the_final_scores_on_one_line(tmp_path):
    # piped (no terminal, no COLUMNS), the result line of three bots is ~85 columns: rich
    # would wrap it at 80, splitting a bot's score from its name
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run([*MOON, "play", "--seed", "3", "--records", str(tmp_path / "rec"),
                          "heuristic", "random", "random"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    record = json.loads(next((tmp_path / "rec").glob("*.json")).read_text())
    final = record["result"]["scores"]
    names = ["heuristic", "random", "random"]
    scores = ", ".join(f"{i}:{n} {s}" for i, (n, s) in enumerate(zip(names, final, strict=True)))
    assert f"final scores {scores}\n" in out.stdout + out.stderr, out.stdout + out.stderr
