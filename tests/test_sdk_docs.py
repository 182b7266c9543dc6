"""docs/sdk.md lists every field of the Observation a Python bot's act() gets, each with its
type as the dataclass declares it, and no field that is not there; every name moon_sdk and
moon_sdk.rules export, and none they do not; its examples run; its worked heuristic bot
uses documented names only and plays whole games by the rules."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import random
import re
from pathlib import Path

import moon_sdk
import moon_sdk.rules
import pytest
from moon_sdk import Bot
from moon_sdk.local import play_local
from moon_sdk.rules import Observation

ROOT = Path(__file__).resolve().parents[1]


def documented_fields() -> dict[str, str]:
    """The rows of docs/sdk.md's table after its ``observation-fields`` marker: field ->
    type, as written."""
    text = (ROOT / "docs" / "sdk.md").read_text()
    table = text.split("<!-- observation-fields", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines():
        m = re.match(r"\| `(\w+)` \| `(.+?)` \|", line)
        if m:
            rows[m.group(1)] = m.group(2).replace("\\|", "|")
    return rows


def test_every_observation_field_is_documented_with_its_type() -> None:
    declared = {f.name: str(f.type) for f in dataclasses.fields(Observation)}
    assert documented_fields() == declared


def test_the_readme_points_to_it() -> None:
    assert "docs/sdk.md" in (ROOT / "README.md").read_text()


DOC = (ROOT / "docs" / "sdk.md").read_text()


def documented_names() -> list[str]:
    """The names in the first column of the tables from the ``sdk-names`` marker to the
    worked bot: ``moon_sdk.X`` for the package's own, ``X`` for moon_sdk.rules'."""
    part = DOC.split("<!-- sdk-names", 1)[1].split("## A worked heuristic bot", 1)[0]
    return re.findall(r"^\| `([\w.]+)` \|", part, re.MULTILINE)


def worked_bot() -> str:
    """The source of the worked heuristic bot (the code block after ``worked-bot``)."""
    return DOC.split("<!-- worked-bot -->", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def test_every_exported_name_is_documented_once() -> None:
    names = documented_names()
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    own = [n.removeprefix("moon_sdk.") for n in names if n.startswith("moon_sdk.")]
    rules = [n for n in names if not n.startswith("moon_sdk.")]
    absent = [n for n in own if not hasattr(moon_sdk, n)] + \
        [n for n in rules if not hasattr(moon_sdk.rules, n)]
    assert absent == []  # documented, but not there
    assert sorted(own) == sorted(moon_sdk.__all__)
    assert sorted(rules) == sorted(moon_sdk.rules.__all__)


def test_the_examples_run() -> None:
    result = doctest.testfile(str(ROOT / "docs" / "sdk.md"), module_relative=False,
                              optionflags=doctest.ELLIPSIS, report=False)
    assert result.failed == 0 and result.attempted >= 20


def test_the_worked_bot_uses_documented_names_only() -> None:
    tree = ast.parse(worked_bot())
    imported = [a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for a in node.names]
    assert {"Bot", "run", "trick_winner_index", "TRUMP_MASK"} <= set(imported)
    documented = {n.removeprefix("moon_sdk.") for n in documented_names()}
    assert set(imported) <= documented
    fields = {f.name for f in dataclasses.fields(Observation)}
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "obs"}
    assert used and used <= fields


class _Random(Bot):
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def act(self, obs: Observation) -> int:
        return self.rng.choice(obs.legal_actions)


@pytest.mark.parametrize("preset", ["moon3", "moon4"])
def test_the_worked_bot_plays_whole_games_by_the_rules(preset: str) -> None:
    space: dict[str, object] = {"__name__": "sketch"}
    exec(compile(worked_bot(), "docs/sdk.md", "exec"), space)
    sketch = space["Sketch"]
    players = 4 if preset == "moon4" else 3
    for seed in range(3):
        bots = [sketch if seat == seed % players else _Random(seat) for seat in range(players)]
        record = play_local(bots, preset, seed=seed, on_error="raise")
        assert record["result"]["termination"] in ("target", "moon"), seed
        assert record["faults"] == [], seed
