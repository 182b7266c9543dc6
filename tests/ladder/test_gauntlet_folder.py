"""`--gauntlet` takes a bot of the ladder by name or a bot folder: the folder of a bot of
the ladder is that bot; any other bot folder joins the ladder as the challenger (another
ladder, so another default results file); anything else is one clear error."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.ladder.config import load_ladder

ROOT = Path(__file__).resolve().parents[2]
LADDER = f"""[ladder]
name = "pool"
preset = "moon3"
boards = 1
seed = 5

[time_control]
max_hands = 2

[[bots]]
path = "{ROOT}/example_bots/random"

[[bots]]
path = "{ROOT}/example_bots/weak"
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "l.toml").write_text(LADDER)
    mine = tmp_path / "mybot"
    shutil.copytree(ROOT / "example_bots" / "random", mine)
    toml = mine / "bot.toml"
    toml.write_text(toml.read_text().replace('name = "random"', 'name = "mybot"'))
    return tmp_path


def test_a_ladder_bots_folder_is_that_bot(files, monkeypatch):
    monkeypatch.chdir(ROOT)
    for given in ("example_bots/weak", "example_bots/weak/", "example_bots/weak/bot.toml",
                  str(ROOT / "example_bots" / "weak"), "weak"):
        cfg = load_ladder(files / "l.toml", {"gauntlet": [given]})
        assert cfg.gauntlet == ("weak",), given
        assert [b.name for b in cfg.bots] == ["random", "weak"] and cfg.joined == ()


def test_another_bot_folder_joins_the_ladder_as_the_challenger(files, monkeypatch):
    monkeypatch.chdir(files)
    plain = load_ladder(files / "l.toml")
    cfg = load_ladder(files / "l.toml", {"gauntlet": ["./mybot"]})
    assert [b.name for b in cfg.bots] == ["random", "weak", "mybot"]
    assert cfg.gauntlet == ("mybot",) and cfg.joined == ("mybot",)
    assert cfg.bots[2].folder == (files / "mybot").resolve()
    # the same settings (a ladder grows by bots), so its results file is told apart by
    # its default path (moon ladder run: runs/<ladder>-gauntlet-<bot>.sqlite)
    assert cfg.identity() == plain.identity()
    assert cfg.joined and not plain.joined


def test_a_file_s_gauntlet_folder_is_relative_to_the_file(files, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    (files / "l.toml").write_text(LADDER.replace('seed = 5', 'seed = 5\ngauntlet = ["mybot"]'))
    assert load_ladder(files / "l.toml").gauntlet == ("mybot",)


def test_neither_a_bot_nor_a_folder_is_one_clear_error(files, monkeypatch):
    monkeypatch.chdir(files)
    with pytest.raises(ConfigError) as e:
        load_ladder(files / "l.toml", {"gauntlet": ["./nothing-here"]})
    msg = str(e.value)
    assert msg.startswith("--gauntlet:") and "'./nothing-here'" in msg
    assert "random, weak" in msg and "bot folder" in msg


def test_a_folder_whose_bot_has_a_ladder_bots_name_is_refused(files, monkeypatch):
    monkeypatch.chdir(files)
    shutil.copytree(ROOT / "example_bots" / "random", files / "other-random")
    with pytest.raises(ConfigError) as e:
        load_ladder(files / "l.toml", {"gauntlet": ["other-random"]})
    assert "named 'random'" in str(e.value) and "another name" in str(e.value)


def test_moon_ladder_run_with_a_gauntlet_folder_plays_its_games(files):
    # 3 bots, 1 challenger: the one triple that holds it, in all 6 seatings of 1 board
    out = subprocess.run([sys.executable, "-m", "arena.cli", "ladder", "run", "l.toml",
                          "--gauntlet", "./mybot", "-j", "1"], cwd=files, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "COLUMNS": "120"})
    assert out.returncode == 0, out.stdout + out.stderr
    results = files / "runs" / "pool-gauntlet-mybot.sqlite"   # not the plain ladder's file
    assert results.exists() and not (files / "runs" / "pool.sqlite").exists()
    with sqlite3.connect(results) as db:
        seats = db.execute("SELECT game_id, bot FROM seats").fetchall()
    games = {g for g, _ in seats}
    assert len(games) == 6
    assert all(sum(1 for g2, b in seats if g2 == g and b == "mybot") == 1 for g in games)
    assert "gauntlet of mybot" in " ".join(out.stdout.split())
