"""Example bots named by their name alone, the same in a ladder file, a gauntlet, `moon play`
and `moon match`, in a clone and in a pip install; a folder that exists wins; an unknown
name's error lists the names there are; `moon ladder run FILE --bot X` is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bots import resources
from arena.cli import main
from arena.cli.play import resolve_bot
from arena.errors import ConfigError
from arena.ladder.config import load_ladder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
NAMES = "go-heuristic, heuristic, learned, node-heuristic, openspiel-ismcts, random, " \
        "rust-stdio, search, weak"
"""The folders of example_bots/, written out by hand."""


def ladder(tmp_path: Path, *paths: str, extra: str = "") -> Path:
    p = tmp_path / "ladders" / "l.toml"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("[ladder]\nboards = 2\n" + extra + "".join(
        f'[[bots]]\npath = "{x}"\n' for x in paths))
    return p


def test_a_ladder_file_names_example_bots(tmp_path):
    cfg = load_ladder(ladder(tmp_path, "heuristic", "random"))
    assert [(b.name, b.folder) for b in cfg.bots] == [
        ("heuristic", EXAMPLES / "heuristic"), ("random", EXAMPLES / "random")]


def test_a_folder_that_exists_wins(tmp_path):
    mine = tmp_path / "ladders" / "random"
    mine.mkdir(parents=True)
    (mine / "bot.toml").write_text('name = "mine"\nrun = "{python} bot.py"\n')
    (mine / "bot.py").write_text("")
    cfg = load_ladder(ladder(tmp_path, "heuristic", "random"))
    assert [(b.name, b.folder) for b in cfg.bots] == [
        ("heuristic", EXAMPLES / "heuristic"), ("mine", mine)]


def test_an_unknown_name_lists_the_example_bots(tmp_path):
    p = ladder(tmp_path, "heuristic", "heurstic")
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    assert str(e.value) == (f"{p}:6: no bot 'heurstic': not a folder (relative to {p.parent}) "
                            f"nor an example bot ({NAMES})")


def test_a_clone_path_says_to_use_the_name(tmp_path):
    p = ladder(tmp_path, "heuristic", "../example_bots/weak")
    with pytest.raises(ConfigError) as e:
        load_ladder(p)
    assert str(e.value).endswith("; an example bot is named by its name alone: 'weak'")


def test_a_gauntlet_challenger_may_be_an_example_bot(tmp_path):
    cfg = load_ladder(ladder(tmp_path, "heuristic", "random", extra='gauntlet = "weak"\n'))
    assert cfg.gauntlet == ("weak",)
    assert cfg.joined == ("weak",) and cfg.bots[-1].folder == EXAMPLES / "weak"


def test_a_pip_install_names_its_own_example_bots(tmp_path, monkeypatch):
    # an installed wheel: the example bots in arena/_data/, no checkout around them
    data = tmp_path / "site" / "arena" / "_data"
    for name in ("heuristic", "random"):
        shutil.copytree(EXAMPLES / name, data / "example_bots" / name)
    monkeypatch.setattr(resources, "PACKAGE_DATA", data)
    monkeypatch.setattr(resources, "CHECKOUT", tmp_path / "no-checkout")
    cfg = load_ladder(ladder(tmp_path / "elsewhere", "heuristic", "random"))
    assert [b.folder for b in cfg.bots] == [data / "example_bots" / "heuristic",
                                           data / "example_bots" / "random"]
    with pytest.raises(ConfigError, match=r"nor an example bot \(heuristic, random\)"):
        load_ladder(ladder(tmp_path / "elsewhere", "heuristic", "weak"))


def test_play_and_match_name_them_the_same(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_bot("weak").folder == EXAMPLES / "weak"
    (tmp_path / "weak").mkdir()
    (tmp_path / "weak" / "bot.toml").write_text('name = "myweak"\nrun = "{python} bot.py"\n')
    (tmp_path / "weak" / "bot.py").write_text("")
    assert resolve_bot("weak").name == "myweak"
    out = CliRunner().invoke(main, ["match", "heuristic", "nosuch", "--games", "2"])
    assert out.exit_code == 2
    assert f"no bot 'nosuch': not a folder (relative to {tmp_path}) nor an example bot " \
           f"({NAMES})" in " ".join(out.output.replace("│", " ").split())


def test_ladder_run_refuses_bot_with_a_file(tmp_path):
    p = ladder(tmp_path, "heuristic", "random")
    out = CliRunner().invoke(main, ["ladder", "run", str(p), "--bot", "weak"])
    assert out.exit_code == 2
    assert f"--bot makes a ladder without a file: {p}'s bots are its [[bots]] entries; add " \
           "one there, or play a bot against them with --gauntlet BOT" \
           in " ".join(out.output.replace("│", " ").split())
