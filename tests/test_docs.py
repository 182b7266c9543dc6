"""The project's docs are its whole spec: docs/rules.md holds every rule, option and worked
example, and nothing in the repository points to documents outside it (the design folder
the project was started from is not part of it)."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from pathlib import Path

from moon_sdk.rules import PRESETS, Ruleset

ROOT = Path(__file__).resolve().parents[1]
RULES_DOC = ROOT / "docs" / "rules.md"
# Written in pieces, so that this file does not name them itself.
OUTSIDE = re.compile(b"|".join([*(name.encode() + rb".md" for name in
                                  ("RULES", "ANCHORS", "DESIGN")), rb"\.\./shared"]))
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", "target", "build", "dist", "runs",
             ".mypy_cache", ".pytest_cache", ".ruff_cache"}


def repository_files() -> list[Path]:
    """The files of the repository: git's list in a checkout, else a walk of the tree."""
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                              check=True, timeout=60)
        return [ROOT / name for name in done.stdout.decode().split("\0") if name]
    except (OSError, subprocess.SubprocessError):
        found = []
        for root, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
            found += [Path(root) / f for f in files]
        return found


def test_nothing_points_outside_the_repository() -> None:
    hits = []
    for path in repository_files():
        try:
            data = path.read_bytes()
        except OSError:  # a file git lists but the work tree lacks (deleted, not staged)
            continue
        for number, line in enumerate(data.splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line[:120]!r}")
    assert not hits, ("point to docs/rules.md (or the right docs page) instead:\n"
                      + "\n".join(hits))


def test_the_check_bites(tmp_path: Path) -> None:
    for text in ("see " + "RULES" + ".md", "(ANCHORS" + ".md)", "../" + "shared/DESIGN" + ".md"):
        assert OUTSIDE.search(text.encode()), text
    assert not OUTSIDE.search(b"see docs/rules.md and docs/protocol.md")


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def test_rules_doc_has_every_option_and_preset() -> None:
    options = section(RULES_DOC.read_text(), "Options and presets")
    for field in dataclasses.fields(Ruleset):
        assert f"| `{field.name}` |" in options, f"docs/rules.md lacks the option {field.name}"
    for preset in PRESETS:
        assert f"`{preset}`" in options, f"docs/rules.md lacks the preset {preset}"


def test_every_worked_example_has_its_test() -> None:
    examples = section(RULES_DOC.read_text(), "Worked examples")
    numbers = [int(n) for n in re.findall(r"(?m)^(\d+)\. \*\*", examples)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 8
    tests = (ROOT / "tests" / "rules" / "test_examples.py").read_text()
    for n in numbers:
        assert re.search(rf"(?m)^def test_example_{n}_", tests), f"no test for example {n}"
