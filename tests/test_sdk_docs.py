"""docs/sdk.md lists every field of the Observation a Python bot's act() gets, each with its
type as the dataclass declares it, and no field that is not there."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

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
