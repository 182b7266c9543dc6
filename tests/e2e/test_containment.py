"""Every descendant of a local bot ends with its game, and what a killed arena leaves is
cleaned up when an arena next starts (arena.sandbox.containment; docs/sandbox.md).

The test bot (tests/bots/runnerbot.py) starts escapees with `setsid` and `env -i` (out of
its process group, without MOON_BOT_INSTANCE): a sleeper, a CPU burner, and a writer that
keeps the bot's stderr open. With a cgroup per bot run every one of them dies at the end of
the game; with the process-group fallback (MOON_CGROUP=off) the ones that keep the marker or
stay in the group die, and the arena does not wait on a pipe an escapee holds. Every test
kills, by pid, whatever of its own it finds alive at the end, so a failure leaves nothing
burning on the machine.

Arenas of other people share this machine, and each cleans up, when it starts, what killed
arenas left. So every test that leaves runs of a dead arena behind on purpose (the kill -9
tests) keeps them where no other arena looks: its own cgroup parent (``MOON_CGROUP``) and
run registry (``MOON_RUN_DIR``), the :func:`isolated` fixture. And a test here checks the
other side: a concurrent arena's clean-up never touches the runs of a live one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_support import ROOT, TEST_BOTS, example, with_referee
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.bots.manifest import BotSpec
from arena.executor.game import play_game
from arena.sandbox import containment

CGROUPS = containment.cgroup_parent() is not None
needs_cgroups = pytest.mark.skipif(not CGROUPS, reason=f"local bots here: {containment.mode()}")


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def ours(marker: str) -> list[int]:
    """Live processes with ``marker`` in their command line."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmd and alive(int(p)):
            found.append(int(p))
    return found


def escapees(text: str) -> dict[str, int]:
    """``{mode: pid}`` from the bot's "ESCAPEE <mode> <pid>" lines."""
    return {m: int(p) for m, p in re.findall(r"ESCAPEE (\w+) (\d+)", text)}


def wait_gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique word for this test's processes; whatever carries it is killed at the end."""
    word = f"moon-escapee-{uuid.uuid4().hex}"
    yield word
    for pid in ours(word):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture
def isolated(tmp_path: Path) -> Iterator[dict[str, str]]:
    """This test's own containment: a cgroup parent of its own (a sibling of
    ``moon-arena/``, which other arenas clean up, where cgroups can be used) and a run
    registry of its own, as the environment of the arenas the test starts. At the end
    whatever is left in the parent is killed and the parent removed."""
    env = {containment.RUN_DIR_VAR: str(tmp_path / "run")}
    parent = None
    mount = containment.cgroup2_mount()
    if CGROUPS and mount is not None:
        parent = mount / f"{containment.PARENT}-test-{uuid.uuid4().hex[:12]}"
        env[containment.CGROUP_VAR] = str(parent)
    yield env
    if parent is not None and parent.exists():
        for cg in [c for c in parent.iterdir() if c.is_dir()]:
            containment.kill_cgroup(cg)
            containment._remove_cgroup(cg, 5.0)
        parent.rmdir()


def runnerbot(marker: str, *modes: str) -> BotSpec:
    return BotSpec(name="runnerbot", folder=TEST_BOTS,
                   run=f"{{python}} runnerbot.py {marker} {' '.join(modes)}")


def play(tmp_path: Path, bot: BotSpec, seed: int = 7):
    logs = tmp_path / "logs"

    async def body(referee, ep):
        return await play_game(referee, ep, [bot, example("random"), example("random")],
                               Ruleset.preset("moon3"), preset="moon3", seed=seed,
                               log_dir=logs)

    match = with_referee(tmp_path, body)
    return match, (logs / f"{match.match_id}.seat0.log").read_text(errors="replace")


@needs_cgroups
def test_every_escapee_dies_with_the_game(tmp_path, marker):
    bot = runnerbot(marker, "sleeper", "burner", "writer")
    match, log = play(tmp_path, bot)
    found = escapees(log)
    assert set(found) == {"sleeper", "burner", "writer"}, log[:2000]
    # the game was played to its end by the rules: starting processes is no fault
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    assert list(match.faults) == []
    # setsid + env -i took them out of the group and the marker; the cgroup still had them
    assert wait_gone(list(found.values())) == []
    assert ours(marker) == []
    # the bot's cgroup is removed, and no log drain thread is left behind
    parent = containment.cgroup_parent()
    assert parent is not None
    assert [c for c in parent.iterdir()
            if c.is_dir() and c.name.startswith(containment.owner_tag() + "-")] == []
    assert [t.name for t in threading.enumerate() if t.name.startswith("moon-log-")] == []


@needs_cgroups
def test_the_bots_cgroup_holds_every_descendant_and_is_removed(tmp_path, marker):
    from arena.sandbox.local import LocalProcess

    proc = LocalProcess(runnerbot(marker, "sleeper", "burner", "hang"), "unix:///nonexistent",
                        "token", tmp_path / "bot.log")
    proc.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(escapees(
                (tmp_path / "bot.log").read_text(errors="replace"))) < 2:
            time.sleep(0.05)
        found = escapees((tmp_path / "bot.log").read_text(errors="replace"))
        assert set(found) == {"sleeper", "burner"}
        assert proc.containment.cgroup is not None
        cg = Path(proc.containment.cgroup)
        assert cg.parent == containment.cgroup_parent()
        members = {int(p) for p in (cg / "cgroup.procs").read_text().split()}
        assert set(found.values()) <= members
        assert proc.proc is not None and proc.proc.pid in members
        # the burner really burns until the kill
        before = cpu_ticks(found["burner"])
        time.sleep(0.3)
        assert cpu_ticks(found["burner"]) > before
    finally:
        proc.kill()
    assert wait_gone(list(found.values())) == []
    assert not cg.exists()


def test_fallback_kills_what_it_can_and_does_not_wait_on_an_escapees_pipe(
        tmp_path, marker, monkeypatch, isolated):
    # without cgroups: a setsid child that keeps the marker and an env -i child that stays
    # in the group die; a writer that did both (setsid + env -i) and is an orphan (its
    # parent exited: no longer the bot's descendant) is out of reach, and keeps writing to
    # the bot's stderr (ignoring SIGPIPE, so the pipe's closing does not end it either),
    # but the arena neither waits for it nor keeps reading
    monkeypatch.setenv(containment.CGROUP_VAR, "off")
    monkeypatch.setenv(containment.RUN_DIR_VAR, isolated[containment.RUN_DIR_VAR])
    bot = runnerbot(marker, "marked", "grouped", "daemon")
    match, log = play(tmp_path, bot, seed=8)
    found = escapees(log)
    assert set(found) == {"marked", "grouped", "daemon"}, log[:2000]
    assert list(match.faults) == []
    assert wait_gone([found["marked"], found["grouped"]]) == []
    # the documented escape: it lives on...
    assert alive(found["daemon"])
    # ...but no thread of the arena is still draining the pipe it writes to
    assert [t.name for t in threading.enumerate() if t.name.startswith("moon-log-")] == []
    # and the run's registry entry is gone with the game
    assert list((tmp_path / "run").glob("*.json")) == []


def test_fallback_kills_every_descendant_the_bot_still_has(tmp_path, marker, monkeypatch,
                                                           isolated):
    # without cgroups, a bot still running at the kill (it hangs): a setsid + env -i
    # writer and a setsid child that made itself non-dumpable are out of the group and
    # out of the marker's reach (for an arena that is not root), but still the bot's
    # children: they die with it
    from arena.sandbox.local import LocalProcess

    monkeypatch.setenv(containment.CGROUP_VAR, "off")
    monkeypatch.setenv(containment.RUN_DIR_VAR, isolated[containment.RUN_DIR_VAR])
    proc = LocalProcess(runnerbot(marker, "writer", "undumpable", "sleeper", "hang"),
                        "unix:///nonexistent", "token", tmp_path / "bot.log")
    proc.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(escapees(
                (tmp_path / "bot.log").read_text(errors="replace"))) < 3:
            time.sleep(0.05)
        found = escapees((tmp_path / "bot.log").read_text(errors="replace"))
        assert set(found) == {"writer", "undumpable", "sleeper"}
        assert proc.containment.cgroup is None
        # each in a session of its own (setsid), out of the bot's process group
        pgid = os.getpgid(proc.proc.pid)  # type: ignore[union-attr]
        assert all(os.getpgid(p) != pgid for p in found.values())
    finally:
        proc.kill()
    assert wait_gone(list(found.values())) == []


def _arena(tmp_path: Path, env: dict[str, str], *bots: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "play", "--seed", "1", "--decision-ms", "60000",
         "--records", str(tmp_path / "records"), *bots],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True)


def _kill_arena_mid_game(tmp_path: Path, env: dict[str, str], marker: str,
                         modes: tuple[str, ...]) -> dict[str, int]:
    """Start `moon play` with a bot that starts ``modes`` and hangs at its first turn,
    wait for every escapee, kill -9 the arena alone; the escapees' pids."""
    folder = tmp_path / "escaper"
    folder.mkdir()
    script = TEST_BOTS / "runnerbot.py"
    (folder / "bot.toml").write_text(
        f'name = "escaper"\nrun = "{{python}} {script} {marker} {" ".join(modes)} hang"\n')
    arena = _arena(tmp_path, env, str(folder), "random", "random")
    try:
        deadline = time.monotonic() + 60
        found: dict[str, int] = {}
        while time.monotonic() < deadline and len(found) < len(modes):
            time.sleep(0.1)
            for log in (tmp_path / "records" / "logs").glob("*.seat0.log"):
                found = escapees(log.read_text(errors="replace"))
        assert set(found) == set(modes), found
        os.kill(arena.pid, signal.SIGKILL)  # the arena alone, not its group
        arena.wait()
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)
            arena.wait()
    return found


def _next_start(tmp_path: Path, env: dict[str, str]) -> None:
    """An arena starts again: a whole `moon play` among example bots."""
    again = _arena(tmp_path / "again", env, "random", "random", "random")
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err.decode(errors="replace")[-2000:]
    assert b"cleaned up" in err  # it says what it found and cleaned


@needs_cgroups
def test_what_a_killed_arena_left_is_killed_at_the_next_start(tmp_path, marker, isolated):
    env = {**os.environ, **isolated}
    parent = Path(isolated[containment.CGROUP_VAR])
    found = _kill_arena_mid_game(tmp_path, env, marker, ("sleeper", "burner"))
    # the bot itself died with the arena (pdeathsig); its escapees are still there...
    time.sleep(0.5)
    assert all(alive(p) for p in found.values()), found
    leftover = [c for c in parent.iterdir()
                if (c / "cgroup.procs").is_file() and {str(p) for p in found.values()}
                <= set((c / "cgroup.procs").read_text().split())]
    assert len(leftover) == 1  # ...in the dead arena's cgroup, which is the registry
    _next_start(tmp_path, env)
    assert wait_gone(list(found.values())) == []
    assert not leftover[0].exists()


def test_what_a_killed_arena_left_is_killed_at_the_next_start_without_cgroups(
        tmp_path, marker, isolated):
    env = {**os.environ, **isolated, containment.CGROUP_VAR: "off"}
    found = _kill_arena_mid_game(tmp_path, env, marker, ("marked", "grouped"))
    time.sleep(0.5)
    assert all(alive(p) for p in found.values()), found
    assert len(list((tmp_path / "run").glob("*.json"))) == 3  # one entry per bot run
    _next_start(tmp_path, env)
    assert wait_gone(list(found.values())) == []
    assert list((tmp_path / "run").glob("*.json")) == []


def _sleeper(cgroup: Path | None = None, env: dict[str, str] | None = None
             ) -> subprocess.Popen[bytes]:
    """A sleeping process of this test (killed and reaped by the caller), started inside
    ``cgroup`` if given, with ``env`` added to its environment."""
    argv = ["sleep", "3600"]
    if cgroup is not None:
        argv = [containment._SH, "-c", containment._ENTER, "test", str(cgroup), *argv]
    return subprocess.Popen(argv, env={**os.environ, **(env or {})},
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _in_cgroup(pid: int, cg: Path, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if str(pid) in (cg / "cgroup.procs").read_text().split():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("cgroups", [
    pytest.param(True, marks=needs_cgroups, id="cgroup"), pytest.param(False, id="fallback")])
def test_a_concurrent_arena_cleans_up_only_runs_whose_arena_is_gone(
        tmp_path, marker, monkeypatch, isolated, cgroups):
    """An arena starting beside a live one (its clean-up in another process) leaves the
    live arena's bot run and its escapee alone, and leaves alone what it did not make; it
    cleans up a run whose owner pid now belongs to a later process (the start time in the
    run's name differs), with the process in it."""
    from arena.sandbox.local import LocalProcess

    if not cgroups:
        monkeypatch.setenv(containment.CGROUP_VAR, "off")
        isolated = {**isolated, containment.CGROUP_VAR: "off"}
    else:
        monkeypatch.setenv(containment.CGROUP_VAR, isolated[containment.CGROUP_VAR])
    monkeypatch.setenv(containment.RUN_DIR_VAR, isolated[containment.RUN_DIR_VAR])
    mode = "sleeper" if cgroups else "marked"  # each mode's escapee that its kill reaches
    live = LocalProcess(runnerbot(marker, mode, "hang"), "unix:///nonexistent", "token",
                        tmp_path / "bot.log")
    started: list[subprocess.Popen[bytes]] = []
    # this process is alive, but not the one that started at "1": a reused pid
    stale_owner = f"{os.getpid()}-1"
    stale_cg = foreign_cg = None
    try:
        live.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and mode not in escapees(
                (tmp_path / "bot.log").read_text(errors="replace")):
            time.sleep(0.05)
        escapee = escapees((tmp_path / "bot.log").read_text(errors="replace"))[mode]
        if cgroups:
            parent = Path(isolated[containment.CGROUP_VAR])
            stale_cg, foreign_cg = parent / f"{stale_owner}-{uuid.uuid4().hex}", parent / "keep"
            stale_cg.mkdir()
            foreign_cg.mkdir()
            stale, foreign = _sleeper(stale_cg), _sleeper(foreign_cg)
            started += [stale, foreign]
            assert _in_cgroup(stale.pid, stale_cg) and _in_cgroup(foreign.pid, foreign_cg)
        else:
            instance = uuid.uuid4().hex
            stale = _sleeper(env={"MOON_BOT_INSTANCE": instance})
            foreign = _sleeper(env={"MOON_BOT_INSTANCE": "keep"})
            started += [stale, foreign]
            run = Path(isolated[containment.RUN_DIR_VAR])
            entry = {"marker": "MOON_BOT_INSTANCE", "pgid": 0, "start": ""}
            (run / f"{stale_owner}-{instance}.json").write_text(
                json.dumps({**entry, "instance": instance}))
            (run / "keep.json").write_text(json.dumps({**entry, "instance": "keep"}))
        # another arena starts: its clean-up, in a process of its own
        other = subprocess.run(
            [sys.executable, "-c",
             "from arena.sandbox.containment import cleanup_stale; print(cleanup_stale())"],
            cwd=ROOT, env={**os.environ, **isolated}, capture_output=True, text=True,
            timeout=60)
        assert other.returncode == 0, other.stderr
        assert wait_gone([stale.pid]) == []
        assert alive(escapee) and alive(foreign.pid) and live.poll() is None
        if cgroups:
            assert not stale_cg.exists() and foreign_cg.exists()
            assert live.containment.cgroup is not None
            assert Path(live.containment.cgroup).exists()
        else:
            assert sorted(p.name for p in run.glob("*.json")) == sorted(
                ["keep.json", Path(str(live.containment.entry)).name])
        # what it reported cleaning up is the stale run alone (the live one's is not
        # counted; other arenas' leftovers in the shared moon-arena/ may be)
        assert int(other.stdout.split()[-1]) >= 1
    finally:
        live.kill()
        for p in started:
            p.kill()
            p.wait()
        for cg in (stale_cg, foreign_cg):
            if cg is not None:
                with contextlib.suppress(OSError):
                    cg.rmdir()
    assert wait_gone([escapee]) == []
