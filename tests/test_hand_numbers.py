"""Hands are counted from 1 wherever a person reads them (the replay page's labels do, and
docs/rules.md keeps ``hand_number`` from 0 for the protocol only): `moon play`'s table,
`moon replay show`, and `moon replay verify`'s disagreements."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOON = [sys.executable, "-m", "arena.cli"]


def moon(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOON, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "160"})


def hand_column(table: str) -> list[str]:
    """The first cell of each row of a printed game's table."""
    return [line.split("│")[1].strip() for line in table.splitlines()
            if line.startswith("│") and line.split("│")[1].strip()]


def test_play_and_replay_show_count_hands_from_1(tmp_path):
    out = moon("play", "random", "random", "random", "--seed", "3", "--max-hands", "2",
               "--records", str(tmp_path / "rec"), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    # two hands played (the hand limit), numbered 0 and 1 in the record: shown as 1 and 2
    [path] = (tmp_path / "rec").glob("*.json")
    record = json.loads(path.read_text())
    assert [h.get("number", 0) for h in record["hands"]] == [0, 1]
    assert hand_column(out.stdout) == ["1", "2"], out.stdout
    shown = moon("replay", "show", str(path), cwd=tmp_path)
    assert shown.returncode == 0 and hand_column(shown.stdout) == ["1", "2"], shown.stdout


def test_verify_names_a_disagreeing_hand_from_1(tmp_path):
    out = moon("play", "random", "random", "random", "--seed", "3", "--max-hands", "2",
               "--records", str(tmp_path / "rec"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    [path] = (tmp_path / "rec").glob("*.json")
    data = json.loads(path.read_text())
    # the second hand (number 1, "hand 2" to a reader): its first trick given to another
    trick = data["hands"][1]["tricks"][0]
    trick["winner"] = (trick["winner"] + 1) % 3
    path.write_text(json.dumps(data))
    v = moon("replay", "verify", str(path), cwd=tmp_path)
    assert v.returncode == 1 and "hand 2 tricks: recorded" in v.stdout, v.stdout
    assert "hand 1 tricks" not in v.stdout
