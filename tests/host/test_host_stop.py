"""Stopping the host (SIGTERM, Ctrl-C) while a submission is being validated: it exits
promptly (the validation's games are aborted, not waited for), and the validation starts
again at the next start, nothing recorded lost."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

STOPPED_WITHIN_S = 20.0
"""Far above a prompt stop (well under a second here), far below the validation games of
the slow bot below (each move waits 0.4 s: a minute or more for the whole check), so a host
that waited for them cannot pass."""


def slow_bot(tmp: Path, quick: Path) -> bytes:
    """The random bot, waiting 0.4 s a move until the file ``quick`` exists (the same
    version either way: the path is in its code)."""
    folder = tmp / "slow"
    shutil.copytree(EXAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    src = (folder / "bot.py").read_text()
    (folder / "bot.py").write_text(src.replace(
        "    def act(self, obs):", "    def act(self, obs):\n        import os, time\n"
        f"        if not os.path.exists({str(quick)!r}):\n"
        "            time.sleep(0.4)"))
    return tar_folder(folder)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_validation_is_prompt_and_the_validation_reruns(
        tmp_path: Path, sig: signal.Signals) -> None:
    folder = make_competition(tmp_path / "comp")
    host = HostProcess(folder, None).start()
    try:
        token = host.register("val")
        quick = tmp_path / "quick"
        v = host.submit(token, slow_bot(tmp_path, quick)).json()
        wait_for(lambda: host.ok("GET", f"/api/versions/{v['id']}", token)["status"]
                 == "validating", 60, "the validation to start", every=0.05)
        wait_for(lambda: any(g["status"] == "running" for g in host.ok(
            "GET", "/api/games", token, params={"kind": "validation"})["games"]) or None,
            30, "the validation game to run", every=0.05)
        assert host.proc is not None
        host.proc.send_signal(sig)
        try:
            rc = host.proc.wait(STOPPED_WITHIN_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the host did not stop within {STOPPED_WITHIN_S:g} s of {sig.name} "
                        "while validating")
        assert rc == 130, rc  # stopped by a signal, as every moon command
    finally:
        host.stop()
    log = host.log.read_text()
    assert "Traceback" not in log, log[-3000:]
    # the next start validates it again, and it passes (at full speed now: the rerun is
    # the subject here, not the bot's pace)
    quick.touch()
    host = HostProcess(folder, None).start()
    try:
        assert host.ok("GET", f"/api/versions/{v['id']}", token)["status"] in (
            "pending", "building", "validating")
        done = host.wait_version(token, v["id"], timeout=300)
        assert done["status"] == "active", done
        games = host.ok("GET", "/api/games", token, params={"kind": "validation"})["games"]
        mine = [g for g in games if any(s["version_id"] == v["id"] for s in g["seats"])]
        assert [g["status"] for g in mine].count("finished") == 1, mine
        assert all(g["status"] in ("finished", "voided") for g in mine), mine
    finally:
        host.stop()


def test_ctrl_c_during_a_build_does_not_wait_for_it(tmp_path: Path) -> None:
    # a build of minutes (here: until a marker file exists) held Ctrl-C for all of it (the
    # build ran on asyncio's default executor, whose threads are waited for at exit)
    marker = tmp_path / "built-once"
    folder = tmp_path / "slowbuild"
    shutil.copytree(EXAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = folder / "bot.toml"
    toml.write_text(toml.read_text() + f'build = "[ -e {marker} ] || sleep 120"\n')
    comp = make_competition(tmp_path / "comp")
    host = HostProcess(comp, None).start()
    try:
        token = host.register("slowbuilder")
        v = host.submit(token, tar_folder(folder)).json()
        wait_for(lambda: host.ok("GET", f"/api/versions/{v['id']}", token)["status"]
                 == "building", 60, "the build to start", every=0.05)
        assert host.proc is not None
        host.proc.send_signal(signal.SIGINT)
        try:
            assert host.proc.wait(STOPPED_WITHIN_S) == 130  # stopped
        except subprocess.TimeoutExpired:
            pytest.fail(f"the host did not stop within {STOPPED_WITHIN_S:g} s of SIGINT "
                        "while building")
    finally:
        host.stop()
        # the build's own processes outlive the host (not yet killed with it): end ours
        for pid in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                if pid.name.isdigit() and str(marker).encode() in \
                        (pid / "cmdline").read_bytes():
                    os.kill(int(pid.name), signal.SIGKILL)
    marker.touch()
    host = HostProcess(comp, None).start()
    try:  # built again at the next start (the marker makes it quick), then validated
        assert host.wait_version(token, v["id"], timeout=300)["status"] == "active"
    finally:
        host.stop()
