"""Helpers for the research tests: bot classes loaded from bot folders, records compared."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_bots"
BOTS = Path(__file__).resolve().parent / "bots"
MOON = str(Path(sys.executable).with_name("moon"))


def bot_module(folder: Path) -> ModuleType:
    """A bot folder's ``bot.py`` as a module (its ``run()`` is behind ``__main__``)."""
    name = f"_research_bot_{folder.name.replace('-', '_')}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, folder / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # so that its classes pickle into worker processes
    spec.loader.exec_module(module)
    return module


def game_facts(record: dict[str, Any]) -> dict[str, Any]:
    """What two records of the same game must share: everything but timestamps, think
    times, the match id, the seat names from bot.toml, the clock and the logs."""
    hands = [{k: v for k, v in h.items() if not k.endswith("ms")} for h in record["hands"]]
    for h in hands:
        h["bids"] = [{k: v for k, v in b.items() if k != "ms"} for b in h["bids"]]
        h["plays"] = [{k: v for k, v in p.items() if k != "ms"} for p in h["plays"]]
    tc = record["time_control"] or {}
    return {
        "ruleset": record["ruleset"], "preset": record["preset"], "seed": record["seed"],
        "deal_version": record["deal_version"], "actions": record["actions"],
        "hands": hands, "result": record["result"], "faults": record["faults"],
        "seats": [(s["reported_name"], s["reported_version"]) for s in record["seats"]],
        "limits": (tc.get("max_hands"), tc.get("illegal_retries")),
    }
