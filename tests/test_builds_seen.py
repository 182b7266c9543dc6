"""Builds you can see: a line on stderr as a build starts and one as it ends; `moon bot
check`'s line for a failed build carries the compiler's error line; a build done by hand
(as a starter's README says) is not done again, nor one a ladder finds stamped; an
installed wheel's example bots are built in the user's cache, never in site-packages."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bots import resources
from arena.bots.manifest import load_bot
from arena.cli import main
from arena.cli.play import build_local_bots
from arena.ladder.config import ladder_from_dict
from arena.ladder.runner import build_all
from arena.sandbox.stamps import STAMP, ensure_built, is_stale


def bot(folder: Path, build: str, outputs: str = '["out/"]', run: str = "./out/prog") -> Path:
    """A bot folder whose build (``build``) is counted in ``../builds`` (outside it)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(f'name = "{folder.name}"\nbuild = {build!r}\n'
                                     f"outputs = {outputs}\nrun = {run!r}\n")
    (folder / "main.src").write_text("source\n")
    return folder


COUNTED = "echo x >> ../builds && mkdir -p out && printf '#!/bin/sh\\n' > out/prog " \
          "&& chmod +x out/prog"


def builds(tmp_path: Path) -> int:
    f = tmp_path / "builds"
    return len(f.read_text().splitlines()) if f.exists() else 0


def test_a_build_says_when_it_starts_and_ends_on_stderr(tmp_path, capsys):
    spec = load_bot(bot(tmp_path / "b", COUNTED))
    build_local_bots([spec])  # what `moon play` does before the game
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"building b ({COUNTED})..."
    assert re.fullmatch(r"built b in \d+\.\d s", err[1]) and len(err) == 2
    build_local_bots([spec])  # fresh now: nothing built, nothing said
    assert capsys.readouterr().err == "" and builds(tmp_path) == 1


def test_bot_check_names_the_compilers_error(tmp_path):
    failing = ("echo '[INFO] compiling'; echo 'In file included from main.cpp:1:' >&2; "
               "echo 'main.cpp:3:5: error: expected ; before }' >&2; echo '1 error' >&2; exit 1")
    folder = bot(tmp_path / "broken", failing)
    out = CliRunner().invoke(main, ["bot", "check", str(folder)])
    assert out.exit_code == 1
    line = next(x for x in out.stdout.splitlines() if "build failed" in x).strip()
    assert line.startswith("build failed (exit 1): main.cpp:3:5: error: expected "
                           "; before }; fix the build command in bot.toml (log: ")
    err = out.stderr.splitlines()
    assert err[0] == f"building broken ({failing})..."
    assert re.fullmatch(r"build of broken failed after \d+\.\d s", err[1])


def test_a_build_made_by_hand_is_not_made_again(tmp_path):
    folder = bot(tmp_path / "java", COUNTED)
    spec = load_bot(folder)
    # `mvn package` by hand: the outputs written after the last change to the sources
    (folder / "out").mkdir()
    (folder / "out" / "prog").write_text("#!/bin/sh\n")
    old = time.time() - 100
    for p in (folder / "bot.toml", folder / "main.src"):
        os.utime(p, (old, old))
    assert not is_stale(spec)
    assert ensure_built(spec) is False and builds(tmp_path) == 0
    assert (folder / STAMP).read_text() == COUNTED  # stamped: fresh from now on
    # a source changed after the build by hand: built
    (folder / STAMP).unlink()
    os.utime(folder / "main.src", (time.time() + 100, time.time() + 100))
    assert is_stale(spec) and ensure_built(spec) is True and builds(tmp_path) == 1


def test_a_ladder_does_not_build_again_what_is_built(tmp_path):
    a, b = bot(tmp_path / "a", COUNTED), bot(tmp_path / "b", COUNTED)
    cfg = ladder_from_dict({"bots": [{"path": str(a)}, {"path": str(b)}]}, tmp_path / "l.toml")
    said: list[str] = []
    assert build_all(cfg, tmp_path / "logs", said.append) == {}
    assert builds(tmp_path) == 2 and [x.split(" (")[0] for x in said[::2]] == \
        ["building a", "building b"]
    assert build_all(cfg, tmp_path / "logs", said.append) == {}
    assert builds(tmp_path) == 2 and len(said) == 4
    assert "up to date" in (tmp_path / "logs" / "build-a.log").read_text()


def test_an_installed_example_bot_is_built_in_the_users_cache(tmp_path, monkeypatch):
    data = tmp_path / "site" / "arena" / "_data"
    example = bot(data / "example_bots" / "compiled", "mkdir -p out && printf x > out/prog",
                  run="cat out/prog")
    (data / "proto").mkdir()
    (data / "proto" / "a.proto").write_text("syntax = 'proto3';\n")
    monkeypatch.setattr(resources, "PACKAGE_DATA", data)
    monkeypatch.setattr(resources, "CHECKOUT", tmp_path / "no-checkout")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    site_before = sorted(p.relative_to(data) for p in data.rglob("*"))

    folder = resources.find_bot_folder("compiled", tmp_path)
    root = tmp_path / "cache" / "moon-arena" / "0.1.0"
    assert folder == root / "example_bots" / "compiled"
    assert (root / "proto" / "a.proto").is_file()  # ../../proto holds as in the wheel
    assert ensure_built(load_bot(folder)) is True
    assert (folder / "out" / "prog").read_text() == "x"
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == site_before
    # the same bot again: the copy and its build kept; a changed bot: copied again
    assert resources.find_bot_folder("compiled", tmp_path) == folder
    assert not is_stale(load_bot(folder))
    (example / "main.src").write_text("changed\n")
    assert (resources.find_bot_folder("compiled", tmp_path) / "main.src").read_text() == \
        "changed\n"
    # a bot with nothing to build is used where it is
    bot(data / "example_bots" / "plain", "")
    assert resources.find_bot_folder("plain", tmp_path) == data / "example_bots" / "plain"


@pytest.mark.parametrize("log, said", [
    ("# moonbot\n./strategy.go:10:2: undefined: x\n", "./strategy.go:10:2: undefined: x"),
    ("[ERROR] COMPILATION ERROR :\n[ERROR] /b/src/Main.java:[5,9] cannot find symbol\n"
     "[ERROR]   symbol: x\n", "[ERROR] /b/src/Main.java:[5,9] cannot find symbol"),
    ("src/bot.ts(3,1): error TS2304: Cannot find name 'x'.\n",
     "src/bot.ts(3,1): error TS2304: Cannot find name 'x'."),
    ("   Compiling b v0.1.0\nerror[E0425]: cannot find value `x`\n --> src/main.rs:3:5\n",
     "error[E0425]: cannot find value `x` --> src/main.rs:3:5"),
    ("npm ERR! code E404\nnpm ERR! 404 Not Found\n", "npm ERR! code E404"),
    ("sh: 1: mvn: not found\n", "sh: 1: mvn: not found"),
])
def test_the_error_line_of_each_compiler(log, said):
    from arena.core.text import build_error

    assert build_error(log) == said
