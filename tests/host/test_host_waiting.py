"""A competition with fewer than two active versions plays no rated game, and the host says
so where an organiser or participant looks: `/api/status`'s ``waiting``, `moon host status`,
and the leaderboard page. Once a second version is active, games start and the line goes."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import httpx
from host_support import EXAMPLES, MOON, ROOT, HostProcess, make_competition, tar_folder, wait_for

NONE = "no rated games yet: they start once 2 versions are active (none is now)"
ONE = "no rated games yet: they start once 2 versions are active (only 1 is now)"


def status_cli(url: str) -> str:
    done = subprocess.run([*MOON, "host", "status", url], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    return re.sub(r"[\s│┃|]+", " ", done.stdout)  # the table's cells, as words


def test_the_host_says_why_no_game_starts(tmp_path: Path) -> None:
    host = HostProcess(make_competition(tmp_path / "comp"), None).start()
    try:
        assert host.ok("GET", "/api/status")["waiting"] == NONE
        ann = host.register("ann")
        v = host.submit(ann, tar_folder(EXAMPLES / "random")).json()
        assert host.wait_version(ann, v["id"])["status"] == "active"
        time.sleep(3)  # matchmaking had time to start a game, had it been able to
        st = host.ok("GET", "/api/status")
        assert st["waiting"] == ONE and st["finished"] == 0 and st["running"] == 0, st
        assert f"waiting {ONE}" in status_cli(host.url)
        page = httpx.get(host.url + "/", timeout=30).text
        assert "No rated games yet: they start once 2 versions are active (only 1 is now)." \
            in page
        bob = host.register("bob")
        v = host.submit(bob, tar_folder(EXAMPLES / "weak")).json()
        assert host.wait_version(bob, v["id"])["status"] == "active"
        wait_for(lambda: host.ok("GET", "/api/status")["finished"] >= 1, 120, "a rated game")
        assert host.ok("GET", "/api/status")["waiting"] == ""
        assert "waiting" not in status_cli(host.url)
        assert "No rated games yet" not in httpx.get(host.url + "/", timeout=30).text
    finally:
        host.stop()
