"""The fork server (arena/forkserver.py): Python SDK bots forked from a warm process are
still a fresh process per game (another pid, no state carried), contained and killed like
a started bot, and play the same games: with deterministic bots and the same seed the
records are those of bots started as processes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path

from e2e_support import TEST_BOTS, example
from moon_sdk.rules import Ruleset

from arena.bots import DEFAULT_MEMORY_MB, BotSpec, Limits
from arena.containment import cgroup_parent
from arena.executor import FinishedGame, GameRequest, LocalExecutor
from arena.forkserver import forkable
from arena.timecontrol import TimeControl

MOON3 = Ruleset.preset("moon3")
TC = TimeControl(startup_ms=30_000)
PROBE = re.compile(r"probe pid=(\d+) ppid=(\d+) pgid=(\d+) games=(\d+) instance=(\w+) "
                   r"cgroup=(\S*) as=(-?\d+) cpu=(-?\d+) files=(-?\d+) cwd=(\S+) random=(\S+)")


def probe(name: str = "probe") -> BotSpec:
    return BotSpec(name=name, folder=TEST_BOTS, run="{python} forkprobe.py")


def play(tmp_path: Path, requests: list[GameRequest], fork: bool
         ) -> tuple[list[FinishedGame], int | None]:
    """Play the games one after another; also the fork server's pid (None: none ran)."""
    async def go() -> tuple[list[FinishedGame], int | None]:
        async with LocalExecutor(tmp_path / ("fork" if fork else "proc"), 1,
                                 fork_server=fork) as ex:
            server = ex.forks.proc.pid if ex.forks is not None and ex.forks.proc else None
            assert (server is not None) == fork
            return [await ex.play(r) for r in requests], server
    return asyncio.run(go())


def probes(game: FinishedGame) -> list[re.Match[str]]:
    found = []
    for seat in range(3):
        log = (game.record_path.parent / "logs" / f"{game.request.game_id}.seat{seat}.log")
        found += list(PROBE.finditer(log.read_text()))
    return found


def gone(pid: int, timeout_s: float = 5.0) -> bool:
    """Whether ``pid`` has ended (no such process, or a zombie) within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_only_python_sdk_bots_are_forked():
    assert forkable(example("heuristic")) == (example("heuristic").folder / "bot.py")
    assert forkable(probe()) == TEST_BOTS / "forkprobe.py"
    assert forkable(example("go-heuristic")) is None  # a compiled bot
    assert forkable(example("rust-stdio")) is None  # a stdio bot
    assert forkable(BotSpec(name="x", folder=TEST_BOTS, run="{python} misbehave.py hang")) \
        is None  # arguments: run as written
    assert forkable(BotSpec(name="x", folder=TEST_BOTS, run="{python} forkprobe.py",
                            runner="docker")) is None


def test_each_game_gets_a_fresh_forked_process_contained_like_a_started_one(tmp_path):
    games, server = play(tmp_path, [GameRequest(f"g{i}", (probe(),) * 3, MOON3, "moon3", i,
                                                TC) for i in range(3)], fork=True)
    seen = [m for g in games for m in probes(g)]
    assert len(seen) == 9  # 3 games x 3 seats, each joined once
    limits = Limits()
    for m in seen:
        pid, ppid, pgid, count, instance, cgroup, mem, cpu, files, cwd, _ = m.groups()
        assert int(ppid) == server  # forked by the server, not started by the arena
        assert count == "1"  # this process never played before
        assert int(pgid) == int(pid)  # a session and process group of its own
        assert (int(mem), int(cpu), int(files)) == (
            DEFAULT_MEMORY_MB * 1024 * 1024, limits.cpu_s, limits.open_files)
        assert Path(cwd) == TEST_BOTS
        if cgroup_parent() is not None:  # in the bot run's own cgroup
            assert cgroup.endswith(f"-{instance}")
        assert gone(int(pid))
    assert len({m.group(1) for m in seen}) == 9  # nine processes
    assert len({m.group(5) for m in seen}) == 9  # nine runs
    assert len({m.group(11) for m in seen}) == 9  # random reseeded in each
    assert all(g.faults == () for g in games)
    if cgroup_parent() is not None:
        for m in seen:  # every run's cgroup was removed
            assert not (cgroup_parent() / m.group(6).rsplit("/", 1)[-1]).exists()


def test_a_forked_bot_that_hangs_is_killed_with_what_it_started(tmp_path):
    tc = TimeControl(startup_ms=30_000, decision_ms=300, bank_ms=0)
    bots = (probe("probe-hang"), probe(), probe())
    [game], _ = play(tmp_path, [GameRequest("hang", bots, MOON3, "moon3", 3, tc)], fork=True)
    assert [f.reason.key for f in game.faults] == ["timeout"]
    log = (game.record_path.parent / "logs" / "hang.seat0.log").read_text()
    pid = int(PROBE.search(log).group(1))
    sleeper = int(re.search(r"probe sleeper=(\d+)", log).group(1))
    assert gone(pid) and gone(sleeper)


def normalized(path: Path) -> dict:
    """A record without what depends on timing: timestamps, milliseconds, logs."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if k not in ("ms", "created_at", "finished_at", "logs", "bank_ms_left")
                    and not (k.endswith("_ms") and isinstance(v, int))}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(json.loads(path.read_text()))


def test_records_are_the_same_with_and_without_the_fork_server(tmp_path):
    bots = (example("heuristic"), example("weak"), probe())
    requests = [GameRequest(f"same{seed}", bots, MOON3, "moon3", seed, TC) for seed in (4, 9)]
    forked, _ = play(tmp_path, requests, fork=True)
    started, _ = play(tmp_path, requests, fork=False)
    for a, b in zip(forked, started, strict=True):
        assert a.record_path != b.record_path
        ra, rb = normalized(a.record_path), normalized(b.record_path)
        assert ra["actions"] and ra == rb
        assert a.result == b.result
    assert not os.environ.get("MOON_FORK_SERVER")  # the default stays processes
