"""The `moon` command's frame: every command registered whatever is installed, and errors
as one line (an ArenaError from anywhere below, a missing package), never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from arena.cli import ArenaGroup, main
from arena.errors import (
    ArenaError,
    BotError,
    ConfigError,
    InfrastructureError,
    ProtocolError,
    RecordError,
)

ROOT = Path(__file__).resolve().parents[1]


def blocked(*modules: str, args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`moon ARGS` in a fresh interpreter where importing ``modules`` fails as if they were
    not installed (``sys.modules[name] = None`` makes ``import name`` raise
    ModuleNotFoundError)."""
    code = ("import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
            + "from arena.cli import main\nmain(prog_name='moon')\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env={**os.environ, "COLUMNS": "200"})


def test_every_command_is_registered():
    assert set(main.commands) == {"serve", "play", "replay", "ladder", "match", "new-bot",
                                  "host", "submit", "challenge", "bot"}
    assert set(main.commands["bot"].commands) == {"check"}  # type: ignore[attr-defined]


def test_a_missing_package_keeps_the_command_and_says_what_it_needs(tmp_path):
    # scipy (the batch ratings) unimportable: `moon ladder` is still listed, and running it
    # names the package in one line instead of the command vanishing or a traceback
    listed = blocked("scipy", args=["--help"])
    assert listed.returncode == 0 and "ladder" in listed.stdout
    res = tmp_path / "r.sqlite"
    res.write_bytes(b"")  # click checks that RESULTS exists
    out = blocked("scipy", args=["ladder", "show", str(res)], cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert out.stderr.strip().splitlines() == [
        "Error: moon ladder needs the Python package 'scipy', which is not installed here: "
        "install it (pip install scipy), or reinstall moon-arena with its dependencies"]
    # other commands do not need it
    ok = blocked("scipy", args=["replay", "--help"])
    assert ok.returncode == 0 and "Traceback" not in ok.stderr


def test_a_missing_module_of_our_own_is_a_bug_and_not_hidden():
    grp = ArenaGroup(name="t")

    @grp.command()
    def boom() -> None:
        import arena.no_such_module  # noqa: F401

    out = CliRunner().invoke(grp, ["boom"])
    assert isinstance(out.exception, ModuleNotFoundError)


@pytest.mark.parametrize("error", [ConfigError("bad setting x=1: use 2"),
                                   BotError("bot b: build failed"),
                                   ProtocolError("bot b: sent garbage"),
                                   InfrastructureError("no Docker engine"),
                                   RecordError("r.json is not JSON")])
def test_any_arena_error_is_one_line_exit_1(error):
    grp = ArenaGroup(name="t")
    sub = click.Group(name="sub")  # nested, as `moon ladder run` is
    grp.add_command(sub)

    @sub.command()
    def fail() -> None:
        raise error

    out = CliRunner().invoke(grp, ["sub", "fail"])
    assert isinstance(error, ArenaError)
    assert out.exit_code == 1
    assert out.output == f"Error: {error}\n"


def test_a_real_command_reports_a_bad_file_in_one_line(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database")
    out = CliRunner().invoke(main, ["ladder", "show", str(bad)])
    assert out.exit_code == 1
    assert out.output.startswith(f"Error: {bad} is not a usable results file")
    assert len(out.output.strip().splitlines()) == 1


def test_every_time_control_flag_has_its_own_help():
    import dataclasses

    from arena.cli.options import TIME_HELP
    from arena.core.timecontrol import TimeControl

    fields = [f.name for f in dataclasses.fields(TimeControl)]
    assert sorted(TIME_HELP) == sorted(fields)
    for command in (main.commands["play"], main.commands["serve"],
                    main.commands["ladder"].commands["run"]):  # type: ignore[attr-defined]
        opts = {o.name: o for o in command.params}
        for name in fields:
            text = opts[name].help or ""
            assert text.startswith(TIME_HELP[name]) and len(text.split()) > 8, (command, name)
            assert "--" + name.replace("_", "-") in opts[name].opts


@pytest.mark.parametrize("lang", ["python", "node", "go", "java", "typescript", "cpp",
                                  "stdio"])
def test_a_new_bots_readme_names_only_files_that_exist(tmp_path, monkeypatch, lang) -> None:
    """The README of `moon new-bot` points at files the user has (the example bots and the
    protocol that came with moon, by their full paths; the bot's own files), not at a
    checkout's docs/ or example_bots/."""
    import re

    from arena.bots.starters import LANGUAGES

    assert lang in LANGUAGES
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["new-bot", "readbot", "--lang", lang])
    assert r.exit_code == 0, r.output
    readme = (tmp_path / "readbot" / "README.md").read_text()
    paths = [p for p in re.findall(r"`([^`\s]+)`", readme)
             if "/" in p and re.search(r"\.\w+$", p) and not p.startswith(("./", "~"))]
    assert paths or lang == "java", readme
    for p in paths:
        assert (tmp_path / "readbot" / p).is_file() or Path(p).is_absolute() and \
            Path(p).is_file(), p
    assert "`docs/" not in readme and "example_bots/" not in readme.replace(
        str(Path(arena_examples())), "")


def arena_examples() -> str:
    from arena.bots.resources import resource_dir

    return str(resource_dir("example_bots"))


def test_moon_host_without_the_host_extra_says_what_to_install(tmp_path):
    # a bot author's `pip install moon-arena` has no web framework or database driver:
    # `moon host` is still listed, and running it says in one line how to get them
    listed = blocked("fastapi", "sqlalchemy", args=["--help"])
    assert listed.returncode == 0 and "host" in listed.stdout
    # writing a competition's folder needs neither; serving it needs both
    made = blocked("fastapi", "sqlalchemy", args=["host", "init", str(tmp_path / "c")])
    assert made.returncode == 0, made.stderr
    out = blocked("fastapi", "sqlalchemy", args=["host", "run", str(tmp_path / "c")])
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: moon host"), lines
    assert "pip install 'moon-arena[host]'" in lines[0]
    # the commands a bot author uses do not need it
    for argv in (["play", "--help"], ["ladder", "--help"], ["bot", "check", "--help"],
                 ["submit", "--help"]):
        ok = blocked("fastapi", "sqlalchemy", args=argv)
        assert ok.returncode == 0 and "Traceback" not in ok.stderr, (argv, ok.stderr)
