"""A bot version is the content hash of its sources (arena.versions)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from arena.versions import bot_version, version_files, version_label

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
