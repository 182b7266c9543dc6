"""Driving `moon play human ... --web` with a real browser: start it, open its page, play
every decision by clicking (or by a key), keep what the page showed at each decision."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from table_support import tiles_in

TURN = ("() => document.querySelector('#over:not([hidden])') || "
        "document.querySelector('#actions button') || "
        "document.querySelector('#board button.tile.legal')")


@dataclass
class Game:
    proc: subprocess.Popen[str] | None
    """`moon play`'s process (None for a host's table)."""
    url: str
    screens: list[dict[str, Any]] = field(default_factory=list)
    """At each accepted decision: the page's ``html`` and the served ``state``."""
    seen: dict[str, int] = field(default_factory=lambda: {
        "click tile": 0, "click button": 0, "key": 0, "illegal refused": 0})


def start(tmp_path: Path, *bots: str, seed: int, preset: str = "moon3",
          flags: tuple[str, ...] = ()) -> Game:
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "play", "--web", "--no-open", "--preset", preset,
         "--seed", str(seed), "--records", str(tmp_path / "rec"), *flags, *bots],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"your table: (http://127\.0\.0\.1:\d+/\?k=\S+)", line)
        if m:
            return Game(proc, m.group(1))
    raise AssertionError(f"moon play printed no table address (exit {proc.wait()})")


def state(page: Any, game: Game) -> dict[str, Any]:
    """The table's state as served (`moon play`'s ``http://...:PORT/?k=KEY``, a host's
    ``http://.../tables/ID?k=KEY``)."""
    base, key = game.url.split("?k=")
    return page.request.get(f"{base.rstrip('/')}/state?since=0&k={key}").json()


def play(page: Any, game: Game, keyboard_once: bool = True, max_moves: int = 2000) -> None:
    """Play the person's seat to the end of the game; ``game.screens`` gets each decision."""
    page.goto(game.url)
    for _ in range(max_moves):
        page.wait_for_function(TURN, timeout=60_000)
        if page.is_visible("#over"):
            return
        before = page.inner_html("#board")
        game.screens.append({"html": page.content(), "state": state(page, game)})
        buttons = page.query_selector_all("#actions button")
        if buttons:
            labels = [b.inner_text() for b in buttons]
            if keyboard_once and not game.seen["key"]:
                page.keyboard.press(str(len(buttons)))  # the last choice, by its digit
                game.seen["key"] += 1
            else:
                pick = next((i for i, t in enumerate(labels) if t.endswith("trumps doubles")),
                            0)
                buttons[pick].click()
                game.seen["click button"] += 1
        else:
            illegal = page.locator("#board button.tile.illegal[data-action]")
            if illegal.count() and not game.seen["illegal refused"]:
                why = illegal.first.get_attribute("title")
                illegal.first.click(force=True)  # aria-disabled: a person may still click
                page.wait_for_function("() => document.querySelector('#refusal')"
                                       ".textContent.length > 0", timeout=10_000)
                assert page.inner_text("#refusal") == why
                assert page.is_visible("#board button.tile.legal")  # still the turn
                game.seen["illegal refused"] += 1
                before = page.inner_html("#board")
            page.click("#board button.tile.legal >> nth=-1")
            game.seen["click tile"] += 1
        page.wait_for_function("(b) => document.querySelector('#board').innerHTML !== b || "
                               "document.querySelector('#over:not([hidden])')", arg=before,
                               timeout=60_000)
    raise AssertionError("the game did not end")


def shown_tiles(screen: dict[str, Any]) -> set[str]:
    """Every tile named in what the page showed and what it was served."""
    import json

    return tiles_in(screen["html"]) | tiles_in(json.dumps(screen["state"]))
