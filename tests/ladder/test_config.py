"""Bad ladder files give clear errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.errors import ConfigError
from arena.ladder.config import load_ladder

ROOT = Path(__file__).resolve().parents[2]
GOOD = f"""[ladder]
preset = "moon3"
boards = 2
seed = 5

[[bots]]
path = "{ROOT}/example_bots/heuristic"

[[bots]]
path = "{ROOT}/example_bots/random"
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "l.toml"
    p.write_text(text)
    return p


def test_good_file_loads(tmp_path):
    cfg = load_ladder(write(tmp_path, GOOD))
    assert [b.name for b in cfg.bots] == ["heuristic", "random"]
    assert cfg.boards == 2 and cfg.seed == 5 and cfg.ruleset.players == 3


@pytest.mark.parametrize("old, new, line, words", [
    ("boards = 2", "boards = -1", 3, "boards"),
    ("seed = 5", "seeed = 5", 4, "unknown key 'seeed'"),
    ('preset = "moon3"', 'preset = "moon9"', 2, "moon9"),
    ("seed = 5", "seed = 5\noptions = { min_bid = 8 }", 5, "min_bid"),
    ("seed = 5", "seed = 5\noptions = { colour = 1 }", 5, "colour"),
    ('path = "{R}/example_bots/random"', 'path = "{R}/example_bots/nothere"', 10, "no such folder"),
    ('path = "{R}/example_bots/random"', 'path = "{R}/example_bots/random"\nrunner = "vm"', 11,
     "runner"),
    ('path = "{R}/example_bots/random"', 'path = "{R}/example_bots/heuristic"', 10,
     "two bots are named"),
    ("seed = 5", 'seed = 5\ngauntlet = ["heuristc"]', 5,
     "challenger 'heuristc' is neither a bot of this ladder (heuristic, random) nor a bot folder"),
    ("seed = 5", "seed = 5\ngauntlet = 3", 5, "gauntlet must list the challengers"),
])
def test_bad_values_name_the_line(tmp_path, old, new, line, words):
    text = GOOD.replace(old.replace("{R}", str(ROOT)), new.replace("{R}", str(ROOT)))
    assert text != GOOD
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    assert f"{p}:{line}" in str(e.value)
    assert words in str(e.value)


def test_bad_toml_names_the_line(tmp_path):
    p = write(tmp_path, GOOD.replace("boards = 2", "boards = = 2"))
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    assert "not valid TOML" in str(e.value) and "line 3" in str(e.value)


def test_too_few_bots(tmp_path):
    one_bot = f'[[bots]]\npath = "{ROOT}/example_bots/random"\n'
    p = write(tmp_path, GOOD.split("[[bots]]")[0] + one_bot)
    with pytest.raises(ConfigError, match="at least 2"):
        load_ladder(p)


def test_gauntlet_names_challengers(tmp_path):
    cfg = load_ladder(write(tmp_path, GOOD.replace("seed = 5", 'seed = 5\ngauntlet = "random"')))
    assert cfg.gauntlet == ("random",)
    round_robin = load_ladder(write(tmp_path, GOOD))
    assert round_robin.gauntlet == ()
    # the same games either way, so one results file serves both
    assert cfg.identity() == round_robin.identity()


def test_a_bad_flag_is_blamed_on_the_flag_not_the_file(tmp_path):
    p = write(tmp_path, GOOD)
    with pytest.raises(ConfigError) as e:
        load_ladder(p, {"preset": "moon3x"})
    assert str(e.value).startswith("--preset: ") and "moon3x" in str(e.value)
    with pytest.raises(ConfigError) as e:
        load_ladder(p, {"gauntlet": ["nobody"]})
    assert str(e.value).startswith("--gauntlet: ")
    with pytest.raises(ConfigError) as e:
        load_ladder(p, {"boards": 0})
    assert str(e.value).startswith("--boards: ")


def test_flags_override_rules_options_and_time_control(tmp_path):
    p = write(tmp_path, GOOD.replace("seed = 5", "seed = 5\noptions = { min_bid = 3 }")
              + "\n[time_control]\ndecision_ms = 700\n")
    cfg = load_ladder(p, {"options": {"all_pass": "force_dealer"},
                          "time_control": {"bank_ms": 900}})
    # the flags add to the file's tables, key by key
    assert cfg.ruleset.min_bid == 3 and cfg.ruleset.all_pass == "force_dealer"
    assert cfg.time_control.decision_ms == 700 and cfg.time_control.bank_ms == 900
    with pytest.raises(ConfigError) as e:
        load_ladder(p, {"options": {"min_bid": 9}})
    assert str(e.value).startswith("--option: ") and "min_bid" in str(e.value)
    with pytest.raises(ConfigError) as e:
        load_ladder(p, {"time_control": {"max_hands": 0}})
    assert str(e.value).startswith("the time control flags: ")


def test_a_bad_time_control_key_names_its_own_line(tmp_path):
    p = write(tmp_path, GOOD + "\n[time_control]\ndecision_ms = 700\nbank_ms = -5\n")
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    line = GOOD.count("\n") + 4  # the blank line, the header, decision_ms, then bank_ms
    assert str(e.value).startswith(f"{p}:{line}: time control bank_ms=-5")
