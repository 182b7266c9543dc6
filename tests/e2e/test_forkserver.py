"""The fork server (arena/sandbox/forkserver.py), on by default: Python SDK bots forked from a warm
process are still a fresh process per game (another pid, no state carried), contained and
killed like a started bot, and play the same games: with deterministic bots and the same
seed the records are those of bots started as processes (``fork_server=False``, the
opt-out, is the comparison). What a bot can see of how it was started, its errors and its
threads are as in a started process; a server that dies voids its games."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_support import EXAMPLES, TEST_BOTS, example
from moon_sdk.rules import Ruleset

from arena.bots.manifest import DEFAULT_MEMORY_MB, BotSpec, Limits
from arena.core.timecontrol import TimeControl
from arena.errors import ConfigError, InfrastructureError
from arena.executor.local import FinishedGame, GameRequest, LocalExecutor
from arena.sandbox.containment import cgroup_parent
from arena.sandbox.forkserver import _ForkedChild, _read_line, forkable

MOON3 = Ruleset.preset("moon3")
TC = TimeControl(startup_ms=30_000)
PROBE = re.compile(r"probe pid=(\d+) ppid=(\d+) pgid=(\d+) games=(\d+) instance=(\w+) "
                   r"cgroup=(\S*) as=(-?\d+) cpu=(-?\d+) files=(-?\d+) cwd=(\S+) random=(\S+) "
                   r"marked=(\d)")


def probe(name: str = "probe") -> BotSpec:
    return BotSpec(name=name, folder=TEST_BOTS, run="{python} forkprobe.py")


def play(tmp_path: Path, requests: list[GameRequest], fork: bool
         ) -> tuple[list[FinishedGame], int | None]:
    """Play the games one after another; also the fork server's pid (None: none ran)."""
    async def go() -> tuple[list[FinishedGame], int | None]:
        async with LocalExecutor(tmp_path / ("fork" if fork else "proc"), 1,
                                 fork_server=fork) as ex:
            assert ex.forks is None  # started with the first game of a Python SDK bot
            games = [await ex.play(r) for r in requests]
            server = ex.forks.proc.pid if ex.forks is not None and ex.forks.proc else None
            assert (server is not None) == fork
            return games, server
    return asyncio.run(go())


def probes(game: FinishedGame) -> list[re.Match[str]]:
    found = []
    for seat in range(3):
        log = (Path(game.record_path).parent / "logs" / f"{game.request.game_id}.seat{seat}.log")
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
        pid, ppid, pgid, count, instance, cgroup, mem, cpu, files, cwd, _, marked = m.groups()
        assert int(ppid) == server  # forked by the server, not started by the arena
        assert count == "1"  # this process never played before
        assert int(pgid) == int(pid)  # a session and process group of its own
        assert (int(mem), int(cpu), int(files)) == (
            DEFAULT_MEMORY_MB * 1024 * 1024, limits.cpu_s, limits.open_files)
        assert Path(cwd) == TEST_BOTS
        assert marked == "1"  # its /proc/<pid>/environ holds its run's marker
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
    log = (Path(game.record_path).parent / "logs" / "hang.seat0.log").read_text()
    pid = int(PROBE.search(log).group(1))
    sleeper = int(re.search(r"probe sleeper=(\d+)", log).group(1))
    assert gone(pid) and gone(sleeper)


def test_without_cgroups_a_forked_bots_setsid_child_is_killed(tmp_path, monkeypatch):
    """In the process-group mode the arena finds what left the group by the run's marker
    in /proc/<pid>/environ: a forked bot's child that forked (no exec) and left the group
    carries it as one of a started bot would, and is killed after the game."""
    from arena.sandbox import containment

    monkeypatch.setenv(containment.CGROUP_VAR, "off")
    monkeypatch.setenv(containment.RUN_DIR_VAR, str(tmp_path / "runs"))
    bots = (probe("probe-forker"), probe(), probe())
    [game], server = play(tmp_path, [GameRequest("forker", bots, MOON3, "moon3", 3, TC)],
                          fork=True)
    log = seat_log(game, 0)
    assert int(PROBE.search(log).group(2)) == server  # forked
    child = int(re.search(r"probe forked=(\d+)", log).group(1))
    assert gone(child)
    assert game.faults == ()


def test_a_ladder_replays_the_game_a_dying_fork_server_took_down(tmp_path, monkeypatch):
    """In a ladder (the fork server on by default) the game during which the server died
    is voided and played again with the bots started as processes; no bot is charged."""
    from arena.ladder.config import ladder_from_dict
    from arena.ladder.runner import open_store, run_ladder

    monkeypatch.delenv("MOON_FORK_SERVER", raising=False)
    killer = tmp_path / "diff-kill"
    killer.mkdir()
    (killer / "forkdiff.py").write_text((TEST_BOTS / "forkdiff.py").read_text())
    (killer / "bot.toml").write_text('name = "diff-kill"\nrun = "{python} forkdiff.py"\n')
    data = {"ladder": {"name": "die", "preset": "moon3", "boards": 1, "seed": 4,
                       "concurrency": 1, "check": False},
            "time_control": {"startup_ms": 30_000},
            "bots": [{"path": str(p)} for p in (killer, EXAMPLES / "weak",
                                                 EXAMPLES / "heuristic")]}
    cfg = ladder_from_dict(data, tmp_path / "die.toml")
    assert cfg.fork_server is None  # the default: on
    results = tmp_path / "die.sqlite"
    store = open_store(cfg, results)
    try:
        summary = asyncio.run(run_ladder(cfg, store, results))
        assert summary.voided == 1  # the first game; the rest are started as processes
        assert summary.played == 6 and len(store.done_ids()) == 6
        assert store.forfeits_by_bot() == {} and list(store.faults()) == []
    finally:
        store.close()


def normalized(path: str | Path) -> dict:
    """A record without what depends on timing: timestamps, milliseconds, logs."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if k not in ("ms", "created_at", "finished_at", "logs", "bank_ms_left")
                    and not (k.endswith("_ms") and isinstance(v, int))}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(json.loads(Path(path).read_text()))


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


def test_the_fork_server_starts_only_for_a_python_sdk_bot(tmp_path):
    async def go() -> tuple[object, object]:
        async with LocalExecutor(tmp_path / "lazy", 1, fork_server=True) as ex:
            none = await ex.start_fork_server((example("go-heuristic"),
                                               example("rust-stdio")))
            return none, await ex.start_fork_server((example("go-heuristic"), probe()))
    none, forks = asyncio.run(go())
    assert none is None
    assert forks is not None and not forks.alive()  # closed with the executor


def test_the_fork_server_is_the_default_and_0_turns_it_off(monkeypatch, tmp_path):
    from arena.ladder.config import ladder_from_dict

    monkeypatch.delenv("MOON_FORK_SERVER", raising=False)
    assert LocalExecutor(None).fork_server is True
    data = {"ladder": {"name": "x"}, "bots": [{"path": str(EXAMPLES / b)}
                                            for b in ("random", "weak")]}
    assert ladder_from_dict(data, tmp_path / "l.toml").fork_server is None  # unset: as env
    assert LocalExecutor(None, fork_server=False).fork_server is False
    for off in ("0", "off", "false", "No"):
        monkeypatch.setenv("MOON_FORK_SERVER", off)
        assert LocalExecutor(None).fork_server is False
    for on in ("1", "on", "true", ""):
        monkeypatch.setenv("MOON_FORK_SERVER", on)
        assert LocalExecutor(None).fork_server is True
    monkeypatch.setenv("MOON_FORK_SERVER", "maybe")
    with pytest.raises(ConfigError, match="MOON_FORK_SERVER='maybe': use 0"):
        LocalExecutor(None)


def seat_log(game: FinishedGame, seat: int) -> str:
    """The seat's log without what depends on timing (the SDK's timestamps, its
    thinking time)."""
    text = (Path(game.record_path).parent / "logs"
            / f"{game.request.game_id}.seat{seat}.log").read_text()
    text = re.sub(r"(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", "", text)
    return re.sub(r"[\d.]+ ms thinking", "ms thinking", text)


def folder_bot(tmp_path: Path, name: str, files: dict[str, str]) -> BotSpec:
    folder = tmp_path / name
    folder.mkdir()
    for file, text in files.items():
        (folder / file).write_text(text)
    return BotSpec(name=name, folder=folder, run="{python} bot.py")


@pytest.mark.parametrize("files", [
    {"bot.py": "import moon_sdk\nx = (\n"},  # the script does not compile
    {"bot.py": "import moon_sdk\nimport helper\n", "helper.py": "def f(:\n    pass\n"},
    {"bot.py": "import moon_sdk\n\ndef go():\n    raise ValueError('boom')\n\ngo()\n"},
], ids=["syntax", "syntax-in-import", "raises"])
def test_a_broken_bots_error_reaches_its_log_as_from_a_started_process(tmp_path, files,
                                                                       caplog):
    bot = folder_bot(tmp_path, "broken", files)
    assert forkable(bot) is not None
    tc = TimeControl(startup_ms=10_000)
    request = [GameRequest("broken", (bot, example("weak"), probe()), MOON3, "moon3", 1,
                           tc)]
    with caplog.at_level(logging.INFO, logger="arena"):
        (forked,), _ = play(tmp_path, request, fork=True)
    # it was forked, not started as a process after all: a bot that exits at once has its
    # exit status come in the same read as its pid, which is not the server's failure
    assert not [r.getMessage() for r in caplog.records if "as a process" in r.getMessage()]
    (started,), _ = play(tmp_path, request, fork=False)
    log = seat_log(forked, 0)
    assert log == seat_log(started, 0)  # the interpreter's report, word for word
    assert "forkserver" not in log and "runpy" not in log
    assert log.splitlines()[-1].startswith(("SyntaxError", "ValueError: boom"))
    assert [f.reason.key for f in forked.faults] == [f.reason.key for f in started.faults]
    assert forked.faults and forked.faults[0].seat == 0


def test_a_bot_that_exits_before_its_pid_is_read_is_still_seen_forked():
    """The server writes the pid, then the exit status when the child has ended; a bot
    that dies at once (on a loaded machine, before the arena reads) puts both lines in
    one read: the pid's line is the answer, the exit status the child's."""
    ours, server = socket.socketpair()
    with ours, server:
        server.sendall(b'{"pid": 41}\n{"exit": 3}\n')
        line, rest = _read_line(ours)
        assert json.loads(line) == {"pid": 41}
        child = _ForkedChild(ours, 41, rest)
        assert child.poll() == 3 and child.wait(1) == 3


def diff_bot(name: str = "diff") -> BotSpec:
    return BotSpec(name=name, folder=TEST_BOTS, run="{python} forkdiff.py")


def test_a_forked_bot_sees_what_a_started_one_sees(tmp_path):
    """argv, __file__, sys.path[0], orig_argv, cwd; a spawn pool; a non-daemon thread that
    outlives the script (the interpreter waits for it before exiting)."""
    request = [GameRequest("diff", (diff_bot(), example("weak"), probe()), MOON3, "moon3",
                           5, TC)]
    (forked,), _ = play(tmp_path, request, fork=True)
    (started,), _ = play(tmp_path, request, fork=False)
    log = seat_log(forked, 0)
    assert log == seat_log(started, 0)
    assert f"argv=['forkdiff.py'] file={TEST_BOTS / 'forkdiff.py'} path0={TEST_BOTS} " \
        f"orig={[sys.executable, 'forkdiff.py']}" in log
    assert f"diff cmdline={[sys.executable.encode(), b'forkdiff.py']}" in log
    assert "diff pool=1024" in log
    assert log.endswith("diff thread done\n")
    assert forked.faults == () and forked.result == started.result


def test_a_start_up_variable_set_after_the_server_started_acts(tmp_path, monkeypatch):
    """PYTHONHASHSEED acts only when Python starts: a bot whose environment sets it
    otherwise than the fork server's is started as a process, where it acts."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    want = subprocess.run([sys.executable, "-c", "print(hash('moon'))"], text=True,
                          capture_output=True, env=dict(os.environ, PYTHONHASHSEED="7"),
                          check=True).stdout.strip()

    async def go() -> FinishedGame:
        async with LocalExecutor(tmp_path / "seed", 1, fork_server=True) as ex:
            forks = await ex.start_fork_server((diff_bot(),))
            assert forks is not None and forks.alive()
            monkeypatch.setenv("PYTHONHASHSEED", "7")  # after the server started
            return await ex.play(GameRequest("seed", (diff_bot(), example("random"),
                                                      example("random")), MOON3, "moon3",
                                             5, TC))
    game = asyncio.run(go())
    assert f"hash={want}\n" in seat_log(game, 0)


def test_a_fork_server_that_dies_voids_its_games_and_bots_are_then_started(tmp_path):
    """The server killed mid-game (here by a bot) takes its children with it: that game
    is voided as an infrastructure failure, not charged to a bot; the next game's bots
    are started as processes and it plays normally."""
    bots = (diff_bot("diff-kill"), probe(), probe())

    async def go() -> tuple[Exception | None, FinishedGame, int]:
        async with LocalExecutor(tmp_path / "die", 1, fork_server=True) as ex:
            forks = await ex.start_fork_server(bots)
            assert forks is not None and forks.proc is not None
            server = forks.proc.pid
            failure = None
            try:
                await ex.play(GameRequest("die1", bots, MOON3, "moon3", 2, TC))
            except InfrastructureError as e:
                failure = e
            assert ex.forks is not None and not ex.forks.alive()
            return failure, await ex.play(GameRequest("die2", bots, MOON3, "moon3", 2,
                                                      TC)), server
    failure, game, server = asyncio.run(go())
    assert failure is not None and "the fork server died" in str(failure)
    assert game.faults == ()
    seen = probes(game)
    assert len(seen) == 2 and all(int(m.group(2)) != server for m in seen)
