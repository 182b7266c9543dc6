"""The local runner kills a bot's whole process group after the game: a child the bot
forked (and left behind when it exited) does not outlive the game."""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

from e2e_support import ROOT, example, with_referee
from moon_sdk.rules import Ruleset

from arena.bots import BotSpec
from arena.game import play_game

SANDBOX_BOTS = ROOT / "tests" / "sandbox" / "bots"


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (a killed orphan may wait to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_grandchild_is_killed_with_the_group(tmp_path):
    marker = f"local-forker-{uuid.uuid4().hex}"
    forker = BotSpec(name="forker", folder=SANDBOX_BOTS,
                     run=f"{{python}} sandboxbot.py forker {marker}")

    async def body(referee, ep):
        return await play_game(referee, ep, [example("heuristic"), forker,
                                             example("heuristic")],
                               Ruleset.preset("moon3"), preset="moon3", seed=3)

    match = with_referee(tmp_path, body)
    log = match.logs[1]
    # the child was there, alive, when its parent finished the game and exited
    m = re.search(r"CHILD (\d+) alive at the end", log)
    assert m, log
    child = int(m.group(1))
    assert list(match.faults) == []
    # ...and the runner's kill of the process group took it down
    deadline = time.monotonic() + 10
    while alive(child) and marker.encode() in cmdline(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (alive(child) and marker.encode() in cmdline(child)), \
        f"the bot's child {child} outlived the game"
    leftovers = [int(p) for p in os.listdir("/proc") if p.isdigit()
                 and marker.encode() in cmdline(int(p)) and alive(int(p))]
    assert leftovers == []
