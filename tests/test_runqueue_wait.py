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

from arena.sandbox.containment import runqueue_wait_s

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
