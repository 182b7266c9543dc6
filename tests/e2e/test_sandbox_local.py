"""The local runner contains a bot: after the game it kills the bot's whole process group
(a child the bot forked and left behind does not outlive the game) and every process that
still carries the bot's MOON_BOT_INSTANCE (one that left the group with setsid does not
either), and a bot that floods stderr gets a capped log that keeps the end."""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from pathlib import Path

from e2e_support import ROOT, example, misbehaving, with_referee
from moon_sdk.rules import Ruleset
from moon_sdk.v1 import game_pb2 as pb

from arena.bots.manifest import BotSpec
from arena.executor.game import play_game
from arena.records.record import load_record
from arena.sandbox.local import LOG_MAX_BYTES, LOG_TAIL_BYTES

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


def parent(pid: int) -> int:
    """The parent pid of ``pid`` (0 if it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


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


def test_escaped_descendant_is_killed_by_its_instance_marker(tmp_path):
    # the bot double-forks a sleeper into a session of its own (setsid), out of the
    # process group the runner kills, then plays the game to the end
    async def body(referee, ep):
        return await play_game(referee, ep, [example("heuristic"), misbehaving("escape"),
                                             example("heuristic")],
                               Ruleset.preset("moon3"), preset="moon3", seed=4)

    match = with_referee(tmp_path, body)
    assert list(match.faults) == []
    m = re.search(r"ESCAPED (\d+)", match.logs[1])
    assert m, match.logs[1]
    sleeper = int(m.group(1))
    assert sleeper != os.getpid()
    # the kill happened before play_game returned; allow the kernel a moment to finish it
    deadline = time.monotonic() + 5
    while alive(sleeper) and b"misbehave.py" in cmdline(sleeper) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (alive(sleeper) and b"misbehave.py" in cmdline(sleeper)), \
        f"the bot's escaped sleeper {sleeper} outlived the game"


def test_stderr_flood_is_capped_and_keeps_the_end(tmp_path):
    # 50 MiB of stderr before joining, then a normal game, then three last lines
    logs = tmp_path / "logs"

    async def body(referee, ep):
        return await play_game(referee, ep, [example("heuristic"), misbehaving("flood"),
                                             example("heuristic")],
                               Ruleset.preset("moon3"), preset="moon3", seed=5,
                               log_dir=logs)

    match = with_referee(tmp_path, body)
    # logging alone is no fault: the game ends by the rules
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON)
    assert list(match.faults) == []
    log_file = logs / f"{match.match_id}.seat1.log"
    size = log_file.stat().st_size
    assert LOG_MAX_BYTES <= size <= LOG_MAX_BYTES + LOG_TAIL_BYTES + 200, size
    data = log_file.read_bytes()
    m = re.search(rb"\n\[\.\.\. (\d+) bytes of output dropped \.\.\.\]\n", data)
    assert m, data[LOG_MAX_BYTES:LOG_MAX_BYTES + 300]
    written = 50 * 1024 * 1024 + sum(len(f"FLOOD last line {i}\n") for i in (1, 2, 3))
    assert int(m.group(1)) == written - LOG_MAX_BYTES - (len(data) - m.end())
    assert data.startswith(b"x" * 1023 + b"\n")
    # the record keeps the end of what the bot wrote
    tail = load_record(Path(match.record_path))["logs"]["1"]
    assert tail == match.logs[1]
    assert tail.endswith("FLOOD last line 1\nFLOOD last line 2\nFLOOD last line 3\n"), \
        tail[-200:]
    assert len(tail.encode()) <= LOG_TAIL_BYTES + 10
    # the stderr drains were joined: no thread is left behind
    assert [t.name for t in threading.enumerate() if t.name.startswith("moon-log-")] == []


def test_a_killed_arena_takes_its_bots_with_it(tmp_path):
    # `moon play` with a bot that hangs at its first turn; kill -9 the arena mid-game: the
    # hanging bot must not live on (setpriv --pdeathsig), nor the others.
    import shutil
    import signal
    import subprocess
    import sys

    import pytest

    if shutil.which("setpriv") is None:
        pytest.skip("no util-linux setpriv on this machine: bots outlive a killed arena")
    hanger = tmp_path / "hanger"
    hanger.mkdir()
    script = ROOT / "tests" / "bots" / "misbehave.py"
    (hanger / "bot.toml").write_text(f'name = "hanger"\nrun = "{{python}} {script} hang"\n')
    arena = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "play", "--seed", "1", "--decision-ms", "60000",
         "--records", str(tmp_path / "records"), str(hanger), "random", "random"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        bots: list[int] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(bots) < 3:  # the arena's 3 bot processes
            time.sleep(0.2)
            bots = [int(p) for p in os.listdir("/proc") if p.isdigit()
                    and parent(int(p)) == arena.pid and b"python" in cmdline(int(p))]
        assert len(bots) == 3, bots
        assert any(str(script).encode() in cmdline(b) for b in bots)
        time.sleep(1.0)  # it is in the game now, hanging on its turn
        os.kill(arena.pid, signal.SIGKILL)  # not the group: the arena alone
        arena.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(b) for b in bots):
            time.sleep(0.1)
        assert not [b for b in bots if alive(b)], "bots outlived the arena"
    finally:
        if arena.poll() is None:
            os.killpg(arena.pid, signal.SIGKILL)


def test_a_crash_detail_waits_for_the_last_output_of_a_bot(tmp_path, monkeypatch):
    # on a loaded machine the log's drain thread may run after the bot has exited: the
    # crash detail read the log before its last words (a JVM's "Could not reserve...")
    # were in it, and said nothing of the memory limit. The drain is held back here.
    from arena.sandbox import local

    taken = local._LogDrain._take

    def late(self, chunk: bytes) -> None:
        time.sleep(0.5)
        taken(self, chunk)

    monkeypatch.setattr(local._LogDrain, "_take", late)
    spec = BotSpec(name="oom", folder=tmp_path, run="sh -c 'echo Could not reserve enough "
                   "space for object heap >&2; exit 1'")
    proc = local.LocalProcess(spec, "127.0.0.1:1", "t", tmp_path / "oom.log")
    proc.start()
    try:
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() == 1
        detail = proc.exit_detail()
        assert f"its address space is limited to {proc.limits.memory_mb} MiB" in detail, detail
    finally:
        proc.kill()
