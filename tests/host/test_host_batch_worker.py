"""The host's batch-fit worker process never outlives the host: not when the host is killed
with ``kill -9`` while the worker is still starting (before it could ask the kernel to kill
it with its parent), not when the host is stopped normally while a fit runs. Nor does
multiprocessing's resource tracker, which the worker keeps alive.

Every process of the host under test is found by a marker in its environment (the worker
and the tracker inherit the host's environment); only those are signalled."""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
import secrets
import signal
import struct
import termios
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
from host_support import HostProcess, make_competition, wait_for

from arena.host.batchworker import BatchWorker

MARK = "MOON_TEST_BATCH_WORKER_MARK"


def marked(token: str) -> list[int]:
    """The pids of live processes whose environment has ``MARK=token``."""
    needle = f"{MARK}={token}".encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            pids.append(int(entry))
    return pids


def kill_marked(token: str) -> None:
    for pid in marked(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def batch_worker(host_pid: int) -> int | None:
    """The pid of the host's batch worker (a multiprocessing ``spawn_main`` child), once it
    has been started, else None."""
    for task in Path(f"/proc/{host_pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in children:
            try:
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return int(child)
            except OSError:
                continue
    return None


def pending_bytes(pid: int, fd: int) -> int:
    """How many bytes wait unread in the pipe that is fd ``fd`` of process ``pid``."""
    ours = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
    try:
        return struct.unpack("i", fcntl.ioctl(ours, termios.FIONREAD, b"\0" * 4))[0]
    finally:
        os.close(ours)


def catch_worker_starting(host: HostProcess) -> int:
    """Wait for the first batch fit to start the worker and stop it (SIGSTOP) at once,
    then until the host has written what the worker is to run into the worker's pipe:
    the worker has not read it yet, so none of its own code has run (it would read it,
    and so run, once continued, even with the host gone)."""
    assert host.proc is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert host.proc.poll() is None, host.log.read_text()[-3000:]
        pid = batch_worker(host.proc.pid)
        if pid is not None:
            os.kill(pid, signal.SIGSTOP)
            break
        time.sleep(0.001)
    else:
        raise AssertionError("the host started no batch worker in 120 s")
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode()
    m = re.search(r"pipe_handle=(\d+)", cmdline)
    assert m, cmdline
    wait_for(lambda: pending_bytes(pid, int(m.group(1))) > 0, 30,
             "the host to send the batch worker its work (or it was read already: "
             "this test was too slow to stop the worker before it started)", every=0.01)
    return pid


def gone(token: str) -> bool:
    return not marked(token)


def test_a_host_killed_while_its_batch_worker_starts_leaves_no_process(
        tmp_path: Path) -> None:
    token = secrets.token_hex(8)
    host = HostProcess(make_competition(tmp_path / "comp"), None, env={MARK: token}).start()
    try:
        worker = catch_worker_starting(host)
        host.kill9()
        os.kill(worker, signal.SIGCONT)
        # the worker (and the resource tracker it keeps alive) must end by itself: a process
        # left after this is re-parented and waits for work forever
        wait_for(lambda: gone(token), 60, f"the dead host's processes to end: {marked(token)}")
    finally:
        host.kill()
        kill_marked(token)


def test_a_host_stopped_during_a_batch_fit_exits_and_leaves_no_process(
        tmp_path: Path) -> None:
    token = secrets.token_hex(8)
    host = HostProcess(make_competition(tmp_path / "comp"), None, env={MARK: token}).start()
    try:
        # a stopped worker is a fit that does not end: the host must not wait for it
        catch_worker_starting(host)
        assert host.proc is not None
        host.proc.send_signal(signal.SIGINT)  # as Ctrl-C: the host stops and exits 0
        assert host.proc.wait(120) == 130  # stopped by a signal
        wait_for(lambda: gone(token), 60, f"the host's processes to end: {marked(token)}")
    finally:
        host.kill()
        kill_marked(token)
    assert "Traceback" not in host.log.read_text(), host.log.read_text()[-3000:]


def test_a_batch_worker_that_died_is_replaced_by_the_next_call() -> None:
    # killed by hand (or by the out-of-memory killer): that call fails, the next one gets
    # a new worker process and works
    async def go() -> tuple[int, int]:
        worker = BatchWorker()
        try:
            first = await worker.run(os.getpid)
            assert first != os.getpid()  # another process
            os.kill(first, signal.SIGKILL)
            with pytest.raises(BrokenProcessPool):
                await worker.run(os.getpid)
            return first, await worker.run(os.getpid)
        finally:
            worker.stop()

    first, second = asyncio.run(go())
    assert second not in (first, os.getpid())


_CTRL_C_WHILE_STARTING = """
import asyncio, os, signal, sys
from arena.host.batchworker import BatchWorker

async def go():
    worker = BatchWorker()
    try:
        call = asyncio.ensure_future(worker.run(os.getpid))
        await asyncio.sleep(0)  # the call has started the worker (spawn: a new interpreter)
        pids = [p.pid for p in worker._pool._processes.values()]
        assert pids, "no worker started"
        for pid in pids:  # Ctrl-C in a terminal reaches the worker too, still importing
            os.kill(pid, signal.SIGINT)
        print("worker", await call, flush=True)
    finally:
        worker.stop()

asyncio.run(go())
"""


def test_ctrl_c_while_the_batch_worker_starts_is_ignored_by_it(tmp_path: Path) -> None:
    # a terminal's Ctrl-C goes to the whole process group: the worker ignores it from its
    # first instruction (the host stops it itself), so no KeyboardInterrupt traceback from a
    # worker still starting is printed, and the call it was started for still works
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _CTRL_C_WHILE_STARTING], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.fullmatch(r"worker \d+\n", done.stdout), done.stdout
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
