"""How long a bot's processes waited for a CPU (:func:`arena.sandbox.containment.
runqueue_wait_s`), measured on real processes: a process tree whose only busy member shares
one CPU with two other busy processes waited for it most of the time, and its wait is read
through its parent (a bot started by a shell, say)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from arena.sandbox.containment import cgroup_of, runqueue_wait_s, throttled_s

SPIN = "while True: pass"


def pinned() -> None:  # pragma: no cover - runs in the child
    os.sched_setaffinity(0, {0})


@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/schedstat"),
                    reason="no /proc/PID/schedstat (a kernel without schedstats)")
def test_a_starved_process_tree_is_seen_waiting_for_a_cpu() -> None:
    hogs = [subprocess.Popen([sys.executable, "-c", SPIN], preexec_fn=pinned)
            for _ in range(2)]
    # the parent (a shell) waits for its child, which spins on the hogs' CPU
    tree = subprocess.Popen(["/bin/sh", "-c", f"{sys.executable} -c '{SPIN}'; true"],
                            preexec_fn=pinned, start_new_session=True)
    try:
        time.sleep(1.5)  # the child has started
        before = runqueue_wait_s(tree.pid)
        time.sleep(1.5)
        after = runqueue_wait_s(tree.pid)
        assert before is not None and after is not None
        # three busy processes on one CPU: with equal weights each waits two thirds of
        # the time (1 s of these 1.5 s); but the kernel may weigh the tree's own session
        # as much as the hogs' together (autogroups), and a CI run's steal time skews it:
        # 0.50 s was seen. A process with a CPU to itself waits next to nothing; a
        # sixth of the time is a wait no idle reading gives
        assert after - before > 0.25, (before, after)
    finally:
        os.killpg(tree.pid, signal.SIGKILL)  # the shell and its child
        for p in hogs:
            p.kill()
        for p in (*hogs, tree):
            p.wait()
    assert runqueue_wait_s(tree.pid) is None  # gone: unmeasured


def test_a_cgroups_throttled_time_is_read_from_its_cpu_stat(tmp_path) -> None:
    # a cgroup tree laid out as this process's /proc/self/cgroup names it, under tmp_path
    lines = cgroup_of(os.getpid())
    if not lines:
        pytest.skip("no /proc/PID/cgroup")
    assert throttled_s(os.getpid(), root=tmp_path) is None  # nothing to read
    v1 = next(((c, p) for c, p in lines if "cpu" in c), None)
    v2 = next((p for c, p in lines if not c), None)
    if v1 is not None:
        folder = tmp_path / ",".join(v1[0]) / v1[1].lstrip("/")
        folder.mkdir(parents=True)
        # cgroup v1: nanoseconds
        (folder / "cpu.stat").write_text("nr_periods 9\nnr_throttled 3\n"
                                         "throttled_time 2500000000\n")
        assert throttled_s(os.getpid(), root=tmp_path) == pytest.approx(2.5)
    elif v2 is not None:
        folder = tmp_path / v2.lstrip("/")
        folder.mkdir(parents=True, exist_ok=True)
        # cgroup v2: microseconds
        (folder / "cpu.stat").write_text("usage_usec 100\nnr_throttled 3\n"
                                         "throttled_usec 1250000\n")
        assert throttled_s(os.getpid(), root=tmp_path) == pytest.approx(1.25)
    else:
        pytest.skip("no cpu cgroup named in /proc/PID/cgroup")
