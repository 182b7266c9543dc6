"""Every `moon` command's --help, found by walking the click command tree: it runs without
a traceback, the command says what it does and shows an example, every option has a
description, one short flag means one thing everywhere, and choices are listed."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from arena.cli import main


def walk(cmd: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...],
                                                                       click.Command]]:
    """Every command under ``cmd`` (itself first) with its path of names."""
    out = [(path, cmd)]
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            out += walk(cmd.commands[name], (*path, name))
    return out


COMMANDS = walk(main)
LEAVES = [(p, c) for p, c in COMMANDS if not isinstance(c, click.Group)]


def listed_commands(help_text: str) -> set[str]:
    """The command names a group's --help lists under "Commands:"."""
    part = help_text.split("Commands:", 1)[1]
    return {m.group(1) for m in re.finditer(r"^  (\S+)", part, re.M)}


def test_the_walk_finds_every_command_the_help_lists():
    # what `moon --help` lists, read from its text, against the walk: no command missed
    runner = CliRunner()
    for path, cmd in COMMANDS:
        if isinstance(cmd, click.Group):
            text = runner.invoke(main, [*path, "--help"]).output
            walked = {p[-1] for p, _ in COMMANDS if len(p) == len(path) + 1
                      and p[:len(path)] == path}
            assert listed_commands(text) == walked, path
    names = {" ".join(p) for p, _ in COMMANDS}
    # the commands of the README, as a floor (the walk may find more)
    assert {"serve", "play", "replay show", "replay html", "replay verify", "ladder run",
            "ladder show", "new-bot", "host", "submit"} <= names


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "moon")
def test_help_runs_and_describes_the_command(path):
    res = CliRunner().invoke(main, [*path, "--help"])
    assert res.exit_code == 0, res.output
    assert res.exception is None and "Traceback" not in res.output
    cmd = dict(COMMANDS)[path]
    assert (cmd.help or "").strip(), f"moon {' '.join(path)} has no description"
    if not isinstance(cmd, click.Group):
        assert "Example" in res.output, f"moon {' '.join(path)} --help shows no example"


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "moon")
def test_every_option_has_a_description(path):
    cmd = dict(COMMANDS)[path]
    missing = [p.opts[0] for p in cmd.params if isinstance(p, click.Option) and not p.hidden
               and not (p.help or "").strip()]
    assert not missing, f"moon {' '.join(path)}: no help for {missing}"


def test_one_short_flag_means_one_thing_everywhere():
    meaning: dict[str, set[str]] = {}
    for _, cmd in COMMANDS:
        for p in cmd.params:
            if not isinstance(p, click.Option):
                continue
            longs = [o for o in p.opts if o.startswith("--")]
            for o in p.opts:
                if re.fullmatch(r"-[A-Za-z]", o):
                    meaning.setdefault(o, set()).add(longs[0] if longs else o)
    clash = {k: v for k, v in meaning.items() if len(v) > 1}
    assert not clash, clash


def test_a_preset_is_a_listed_choice_everywhere():
    for path, cmd in COMMANDS:
        for p in cmd.params:
            if isinstance(p, click.Option) and "--preset" in p.opts:
                assert isinstance(p.type, click.Choice), " ".join(path)
                assert "moon3" in p.type.choices and "moon4" in p.type.choices
