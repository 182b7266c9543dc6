"""A bot version is the content hash of its sources (arena.bots.versions)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from arena.bots.versions import bot_version, version_files, version_label

ROOT = Path(__file__).resolve().parents[2]


def by_hand(folder: Path, files: dict[str, bytes]) -> str:
    """The documented hash worked out independently for plain, non-executable files."""
    h = hashlib.sha256()
    for name in sorted(files):
        n = name.encode()
        h.update(b"f" + len(n).to_bytes(4, "big") + n + len(files[name]).to_bytes(8, "big"))
        h.update(files[name])
    return h.hexdigest()


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    d = tmp_path / "bot"
    (d / "lib").mkdir(parents=True)
    (d / "bot.toml").write_text('name = "x"\nrun = "{python} bot.py"\n')
    (d / "bot.py").write_text("print('hi')\n")
    (d / "lib" / "util.py").write_text("X = 1\n")
    for p in d.rglob("*"):
        if p.is_file():
            p.chmod(0o644)
    return d


def test_hash_of_the_sources(bot: Path) -> None:
    files = {p.relative_to(bot).as_posix(): p.read_bytes() for p in bot.rglob("*")
             if p.is_file()}
    assert bot_version(bot) == by_hand(bot, files)
    assert version_label("x", bot_version(bot)) == f"x@{bot_version(bot)[:12]}"


def test_build_outputs_stamps_and_vcs_do_not_count(bot: Path, tmp_path: Path) -> None:
    v = bot_version(bot)
    for d in ("node_modules", "target", "__pycache__", ".git", ".venv"):
        (bot / d).mkdir()
        (bot / d / "junk").write_text("built")
    (bot / ".build-stamp").write_text("go build")
    (bot / ".build-lock").write_text("")
    (bot / "lib" / "util.cpython-311.pyc").write_bytes(b"\0")
    assert bot_version(bot) == v
    assert all(".git" not in p.parts for p in version_files(bot))
    copy = tmp_path / "elsewhere"
    shutil.copytree(bot, copy)
    assert bot_version(copy) == v  # where the folder is does not matter


def test_every_change_to_a_source_counts(bot: Path) -> None:
    seen = {bot_version(bot)}
    (bot / "bot.py").write_text("print('hi!')\n")
    seen.add(bot_version(bot))
    (bot / "bot.py").chmod(0o755)
    seen.add(bot_version(bot))
    (bot / "lib" / "util.py").rename(bot / "lib" / "util2.py")
    seen.add(bot_version(bot))
    os.symlink("util2.py", bot / "lib" / "link.py")
    seen.add(bot_version(bot))
    assert len(seen) == 5


def test_example_bots_differ() -> None:
    names = ("heuristic", "random", "weak")
    assert len({bot_version(ROOT / "example_bots" / n) for n in names}) == 3


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        bot_version(tmp_path / "nope")


def go_style_bot(tmp_path: Path, outputs: str = '["bot", "build/"]') -> Path:
    """A bot like example_bots/go-heuristic: its build writes the program ``bot`` (and a
    ``build/`` folder) into its own folder, and its bot.toml declares them."""
    d = tmp_path / "gobot"
    d.mkdir()
    (d / "bot.toml").write_text('name = "g"\nbuild = "go build -o bot ."\nrun = "./bot"\n'
                                f"outputs = {outputs}\n")
    (d / "main.go").write_text("package main\n")
    for p in d.iterdir():
        p.chmod(0o644)
    return d


def test_declared_build_outputs_are_not_the_version(tmp_path: Path) -> None:
    bot = go_style_bot(tmp_path)
    toml = (bot / "bot.toml").read_bytes()
    sources = {"bot.toml": toml, "main.go": b"package main\n"}
    assert bot_version(bot) == by_hand(bot, sources)  # before any build
    (bot / "bot").write_bytes(b"\x7fELF first build")
    (bot / "bot").chmod(0o755)
    (bot / "build" / "obj").mkdir(parents=True)
    (bot / "build" / "obj" / "main.o").write_bytes(b"object")
    assert bot_version(bot) == by_hand(bot, sources)
    (bot / "bot").write_bytes(b"\x7fELF rebuilt, other bytes")  # `make bots` again
    assert bot_version(bot) == by_hand(bot, sources)
    assert [p.as_posix() for p in version_files(bot)] == ["bot.toml", "main.go"]
    (bot / "main.go").write_text("package main // changed\n")  # a source still counts
    assert bot_version(bot) == by_hand(bot, {"bot.toml": toml,
                                             "main.go": b"package main // changed\n"})
    # a file merely named like an output's prefix is a source
    (bot / "bots.go").write_text("package main\n")
    (bot / "bots.go").chmod(0o644)
    assert "bots.go" in [p.as_posix() for p in version_files(bot)]


def test_outputs_must_be_paths_in_the_folder_with_a_build(tmp_path: Path) -> None:
    from arena.bots.manifest import load_bot
    from arena.errors import ConfigError

    assert load_bot(go_style_bot(tmp_path)).outputs == ("bot", "build")
    for bad, says in (('"bot"', "must be a list"), ('["../x"]', "inside the bot's folder"),
                      ('["/usr/bin"]', "inside the bot's folder"),
                      ('["bot.toml"]', "cannot hold bot.toml")):
        shutil.rmtree(tmp_path / "gobot")
        with pytest.raises(ConfigError, match=says):
            load_bot(go_style_bot(tmp_path, bad))
    (tmp_path / "gobot" / "bot.toml").write_text('name = "g"\nrun = "./bot"\n'
                                                 'outputs = ["bot"]\n')
    with pytest.raises(ConfigError, match="has no build"):
        load_bot(tmp_path / "gobot")


def test_examples_and_starters_declare_their_build_outputs(tmp_path: Path) -> None:
    from arena.bots.manifest import load_bot

    expected = {"example_bots/go-heuristic": ("bot",),
                "example_bots/rust-stdio": ("target",),
                "example_bots/node-heuristic": ("node_modules",),
                "arena/bots/templates/cpp": ("build",), "arena/bots/templates/go": ("bot",),
                "arena/bots/templates/java": ("target",),
                "arena/bots/templates/node": ("node_modules",),
                "arena/bots/templates/typescript": ("node_modules", "dist", "src/gen")}
    for folder in [*ROOT.glob("example_bots/*"), *ROOT.glob("arena/bots/templates/*")]:
        rel = folder.relative_to(ROOT).as_posix()
        toml = tmp_path / rel / "bot.toml"  # a starter's name is filled in by moon new-bot
        toml.parent.mkdir(parents=True)
        toml.write_text((folder / "bot.toml").read_text().replace("__NAME__", "starter"))
        spec = load_bot(toml)
        assert spec.outputs == expected.get(rel, ()), rel
        assert bool(spec.build) == (rel in expected), rel
