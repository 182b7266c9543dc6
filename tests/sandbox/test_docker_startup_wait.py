"""A bot's container starved of CPU while it starts, on a real Docker engine: the time
its processes waited for a CPU (the host's load, measured from this machine's /proc) is
not counted against its start-up limit, as a local bot's is not; a bot that never joins
still stalls, the wait it had named in the fault.

The starving: the container is pinned to CPU 0 (``cpuset_cpus``, added to the sandbox's
container settings for these tests only) beside three busy processes pinned there, each
in a session of its own (the kernel's autogroups would weigh three in one session as
one), so the container's cgroup gets about a quarter of that CPU."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from moon_sdk.v1 import game_pb2 as pb
from sandbox_support import (
    BAD_SEAT,
    assert_forfeit,
    checked_record,
    containers_of,
    example,
    play,
    sandbox_bot,
    unique,
)

import arena.sandbox.docker as sandbox_docker
from arena.core.timecontrol import TimeControl

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_engine"),
              pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/schedstat"),
                                 reason="no /proc/PID/schedstat (a kernel without "
                                        "schedstats)")]

STARTUP_MS = 3000
SPIN_S = 1.0
"""CPU seconds the bot computes before joining: with its share of a CPU to itself it
joins well inside :data:`STARTUP_MS` (its Python and SDK start in about half a second of
CPU); with a quarter of a CPU it would take four times as long."""
HOGS = 3
SPIN = "while True: pass"


def _on_cpu0() -> None:  # pragma: no cover - runs in the child
    os.sched_setaffinity(0, {0})


@pytest.fixture
def starved(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Containers pinned to CPU 0 with :data:`HOGS` busy processes there, while the test
    runs."""
    if 0 not in os.sched_getaffinity(0):
        pytest.skip("CPU 0 is not this process's to use")
    config = sandbox_docker.container_config

    def pinned(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**config(*args, **kwargs), "cpuset_cpus": "0"}

    monkeypatch.setattr(sandbox_docker, "container_config", pinned)
    hogs = [subprocess.Popen([sys.executable, "-c", SPIN], preexec_fn=_on_cpu0,
                             start_new_session=True) for _ in range(HOGS)]
    try:
        yield
    finally:
        for p in hogs:
            os.kill(p.pid, signal.SIGKILL)
        for p in hogs:
            p.wait()


def spun_wall_s(log: str) -> float:
    m = re.search(r"SPUN ([0-9.]+) s of CPU in ([0-9.]+) s", log)
    assert m, log
    return float(m.group(2))


def test_a_starved_container_that_joins_late_is_not_stalled(tmp_path, docker_engine,
                                                            starved) -> None:
    bots = [example("random"), sandbox_bot("spin", str(SPIN_S)), example("random")]
    tc = TimeControl(startup_ms=STARTUP_MS, decision_ms=1000, bank_ms=5000, max_hands=1)
    match = play(tmp_path, bots, tc=tc, match_id=unique("starved"))
    record = checked_record(match)
    assert record["faults"] == [], record["faults"]
    log = record["logs"][str(BAD_SEAT)]
    # starved indeed: its own second of CPU took longer than its whole start-up limit
    assert spun_wall_s(log) > STARTUP_MS / 1000, log
    assert match.result is not None
    assert match.result.termination in (pb.TERMINATION_TARGET, pb.TERMINATION_MOON,
                                        pb.TERMINATION_HAND_LIMIT), match.result
    assert f"joined match {match.match_id}" in log, log
    assert containers_of(docker_engine, match.match_id) == []


def test_a_starved_container_that_never_joins_stalls_its_wait_named(tmp_path, docker_engine,
                                                                    starved) -> None:
    bots = [example("random"), sandbox_bot("spin", str(SPIN_S), "never"), example("random")]
    tc = TimeControl(startup_ms=STARTUP_MS, decision_ms=1000, bank_ms=5000, max_hands=1)
    match = play(tmp_path, bots, tc=tc, match_id=unique("never"))
    record = checked_record(match)
    assert_forfeit(match, record, "startup_stall")
    detail = record["result"]["forfeit"]["detail"]
    m = re.search(r"it waited (\d+) ms for a CPU, not counted either", detail)
    assert m, detail
    wall = spun_wall_s(record["logs"][str(BAD_SEAT)])
    # it waited for the CPU most of its spin: its wall time less its own CPU second, and
    # at least half of that (the rest is the moments of its start before the spin)
    assert int(m.group(1)) / 1000 > (wall - SPIN_S) / 2, (detail, wall)
    assert containers_of(docker_engine, match.match_id) == []
