"""A competition whose runner is Docker, on a machine where no Docker engine answers: the
host says so once at start (with what to do), and a submission waits as pending with a
reason its owner can read, instead of the host writing a traceback every few seconds;
nothing is rejected for the host's own trouble. The host's status says why submissions
wait (the API and `moon host status`), and a stopped host says what the stop left."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from host_support import (
    EXAMPLES,
    MOON,
    HostProcess,
    make_competition,
    stopped_line,
    tar_folder,
    wait_for,
)


def test_a_docker_host_without_an_engine_says_so_and_submissions_wait(tmp_path: Path) -> None:
    folder = make_competition(tmp_path / "comp", runner="docker")
    dead = tmp_path / "no-engine.sock"  # nothing listens here
    host = HostProcess(folder, None, env={"DOCKER_HOST": f"unix://{dead}"}).start()
    try:
        token = host.register("ann")
        v = host.submit(token, tar_folder(EXAMPLES / "random")).json()
        wait_for(lambda: "waits:" in host.log.read_text(), 60, "the builder's line")
        time.sleep(12)  # two more tries of the builder (every 5 s)
        got = host.ok("GET", f"/api/versions/{v['id']}", token)
        assert got["status"] in ("pending", "building"), got
        assert got["reason"].startswith("waiting for the host: it cannot build or run bots "
                                        "just now"), got
        # the status says why submissions wait, in the API and in `moon host status`
        said = host.ok("GET", "/api/status")["builds_waiting"]
        assert said.startswith("submissions wait (pending) until the host can build them: "
                               f"no Docker engine reachable at unix://{dead}"), said
        done = subprocess.run([*MOON, "host", "status", host.url], capture_output=True,
                              text=True, timeout=120, env={**os.environ, "COLUMNS": "1000"})
        assert done.returncode == 0, done.stderr
        row = next(line for line in done.stdout.splitlines() if "builds wait" in line)
        assert said in row, done.stdout
    finally:
        host.stop()
    log = host.log.read_text()
    assert "Traceback" not in log, log[-3000:]
    assert log.count(f"version {v['id']} waits: no Docker engine reachable at "
                     f"unix://{dead}") == 1, log
    start = next(line for line in log.splitlines() if line.startswith("warning:"))
    assert f"no Docker engine reachable at unix://{dead}" in start
    assert start.endswith('submissions wait (pending) until an engine answers; [runner] kind = '
                          '"local" (with trust_local = true) runs bots you trust without one')
    assert "  " not in start
    assert log.splitlines()[-1] == stopped_line(folder)
