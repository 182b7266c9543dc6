"""Helpers of the sandbox tests: games with a test bot in a container, and checks that
nothing is left behind (no container, no process)."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from pathlib import Path

from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.bots.manifest import BotSpec, load_bot
from arena.core.timecontrol import TimeControl
from arena.executor.game import play_game, serving
from arena.records.record import load_record, verify_record
from arena.referee.referee import Match, Referee
from arena.sandbox.docker import LABEL, DockerLimits

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).resolve().parent / "bots"
BAD_SEAT = 1


def sandbox_bot(mode: str, *args: str, runner: str = "docker") -> BotSpec:
    """tests/sandbox/bots/sandboxbot.py in one of its modes."""
    return BotSpec(name=f"sandbox-{mode}", folder=BOTS,
                   run=" ".join(["{python} sandboxbot.py", mode, *args]), runner=runner)


def example(name: str, runner: str = "local") -> BotSpec:
    return dataclasses.replace(load_bot(ROOT / "example_bots" / name), runner=runner)


def play(tmp_path: Path, bots: list[BotSpec], *, tc: TimeControl | None = None,
         limits: DockerLimits | None = None, match_id: str = "", seed: int = 7) -> Match:
    """One moon3 game on a referee serving a Unix socket; returns the finished match."""
    async def go() -> Match:
        referee = Referee(record_dir=tmp_path / "records")
        async with serving(referee, None) as ep:
            return await play_game(referee, ep, bots, Ruleset.preset("moon3"), preset="moon3",
                                   seed=seed, tc=tc or TimeControl(), match_id=match_id,
                                   docker_limits=limits)
    return asyncio.run(go())


def checked_record(match: Match) -> dict:
    record = load_record(Path(match.record_path))
    assert verify_record(record) == []
    return record


def assert_forfeit(match: Match, record: dict, reason: str, seat: int = BAD_SEAT) -> None:
    """``seat`` forfeited for ``reason``, ranks last; the others rank by score."""
    res = match.result
    assert res is not None
    assert res.termination == pb.TERMINATION_FORFEIT, record["faults"]
    assert record["result"]["forfeit"]["reason"] == reason, record["faults"]
    assert record["result"]["forfeit"]["seat"] == seat
    places = list(res.places)
    assert places[seat] == 3
    a, b = [s for s in range(3) if s != seat]
    sa, sb = res.scores[a], res.scores[b]
    assert (places[a], places[b]) == ((1, 1) if sa == sb else (1, 2) if sa > sb else (2, 1))


def assert_clean_game(match: Match, record: dict) -> None:
    assert match.result is not None
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON), \
        record["faults"]
    assert record["faults"] == []
    assert sorted(match.result.places) in ([1, 2, 3], [1, 1, 3], [1, 2, 2], [1, 1, 1])


def unique(name: str) -> str:
    """A match id of its own: test runs on one engine at once must not see each other's
    containers."""
    return f"{name}-{secrets.token_hex(4)}"


def containers_of(client, match_id: str) -> list:
    return client.containers.list(all=True, filters={"label": f"{LABEL}.match={match_id}"})


def processes_with(marker: str, timeout_s: float = 10.0) -> list[int]:
    """Live (non-zombie) processes whose command line holds ``marker``, after giving
    killed ones up to ``timeout_s`` to disappear."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                cmdline = (d / "cmdline").read_bytes()
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in cmdline and state != "Z":
                found.append(int(d.name))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)
