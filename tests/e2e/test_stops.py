"""Stopping `moon` commands (arena/cli/stops.py): real processes sent SIGINT (to their
process group, as a terminal's Ctrl-C) or SIGTERM (to the process, as `kill`). Each ends
with exit code 130 and one line saying what was kept and what goes on, with no traceback
and no "Aborted!", and leaves no process it started: every process is found by a marker
in its environment, which bots, builds and the fork server inherit. A stopped ladder or
match keeps its results file and its records folder in step: every record there is a
stored game's, the games in flight are in neither."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from e2e_support import ROOT, TEST_BOTS

sys.path.insert(0, str(ROOT / "tests" / "host"))  # the host's test helpers
from host_support import HostProcess, make_competition  # noqa: E402

MOON = [sys.executable, "-m", "arena.cli"]
MARKER = "MOON_STOP_TEST"
"""The environment variable every process a test's command starts inherits."""
STOPS = [pytest.param(signal.SIGINT, id="ctrl-c"), pytest.param(signal.SIGTERM, id="sigterm")]


@dataclass
class Command:
    proc: subprocess.Popen[bytes]
    marker: str
    out: Path
    err: Path

    def text(self) -> tuple[str, str]:
        return self.out.read_text(errors="replace"), self.err.read_text(errors="replace")


def marked(marker: str) -> list[int]:
    """The live (not zombie) processes whose environment holds ``MARKER=marker``."""
    found = []
    needle = f"{MARKER}={marker}".encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and needle in env.split(b"\0"):
            found.append(int(d.name))
    return found


@contextmanager
def command(tmp_path: Path, *args: str, env: dict[str, str] | None = None
            ) -> Iterator[Command]:
    """`moon ARGS` started in its own process group, output to files; killed (its group
    and every marked process) if still there after the block."""
    marker = uuid.uuid4().hex
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(
            [*MOON, *args], cwd=tmp_path, stdout=o, stderr=e, start_new_session=True,
            env={**os.environ, MARKER: marker, "COLUMNS": "200", **(env or {})})
    cmd = Command(proc, marker, out, err)
    try:
        yield cmd
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started
            proc.wait()
        for pid in marked(marker):  # only processes this test's command started
            with_pid_gone(pid)


def with_pid_gone(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def wait_for(check, timeout: float, what: str, cmd: Command) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if cmd.proc.poll() is not None or time.monotonic() > deadline:
            out, err = cmd.text()
            raise AssertionError(f"waiting for {what}: rc {cmd.proc.poll()}\n{out[-2000:]}"
                                 f"\n{err[-3000:]}")
        time.sleep(0.2)


def stop(cmd: Command, sig: signal.Signals) -> tuple[str, str]:
    """Send ``sig`` as a user would (SIGINT to the group, SIGTERM to the process); wait for
    the exit (a hang is a failure); the output."""
    if sig == signal.SIGINT:
        os.killpg(cmd.proc.pid, sig)
    else:
        cmd.proc.send_signal(sig)
    cmd.proc.wait(120)
    return cmd.text()


def assert_clean_stop(cmd: Command, out: str, err: str) -> str:
    """Exit 130, no traceback or "Aborted!", nothing left running; the last line."""
    assert cmd.proc.returncode == 130, (cmd.proc.returncode, out[-2000:], err[-3000:])
    both = out + err
    assert "Traceback" not in both and "Aborted!" not in both, both[-3000:]
    deadline = time.monotonic() + 10  # killed processes are reaped by init a moment later
    while marked(cmd.marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marked(cmd.marker) == [], "processes left running"
    return err.strip().splitlines()[-1]


def ponder_bot(folder: Path, name: str, build: str = "") -> Path:
    """A bot folder with tests/bots/ponder.py (PONDER_S seconds a decision)."""
    folder.mkdir(parents=True)
    shutil.copy(TEST_BOTS / "ponder.py", folder / "bot.py")
    (folder / "bot.toml").write_text(f'name = "{name}"\nrun = "{{python}} bot.py"\n'
                                     + (f'build = "{build}"\n' if build else ""))
    return folder


@pytest.mark.parametrize("sig", STOPS)
def test_a_stopped_play_says_where_the_aborted_games_record_is(tmp_path, sig):
    bots = [str(ponder_bot(tmp_path / f"p{i}", f"p{i}")) for i in range(3)]
    with command(tmp_path, "play", *bots, "--records", "rec", "--decision-ms", "60000",
                 env={"PONDER_S": "30"}) as cmd:
        # the three bots are up and the first one thinks
        wait_for(lambda: len(list((tmp_path / "rec" / "logs").glob("*.log"))) == 3
                 and len(marked(cmd.marker)) >= 4, 120, "the bots", cmd)
        time.sleep(1)
        out, err = stop(cmd, sig)
        last = assert_clean_stop(cmd, out, err)
    [record] = (tmp_path / "rec").glob("*.json")
    assert last == ("stopped: the game was aborted unfinished (no result); its record as far "
                    f"as it went: {Path('rec') / record.name}"), err
    import json

    assert json.loads(record.read_text())["result"]["termination"] == "aborted"


@pytest.mark.parametrize("sig", STOPS)
def test_a_check_stopped_in_its_build_ends_the_build_and_keeps_nothing(tmp_path, sig):
    bot = ponder_bot(tmp_path / "slow", "slow", build="sleep 600")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    with command(tmp_path, "bot", "check", str(bot), env={"TMPDIR": str(tmp)}) as cmd:
        # the build runs (its sleep, marked), then the stop: the build is not waited for
        wait_for(lambda: any(b"sleep" in Path(f"/proc/{p}/cmdline").read_bytes()
                             for p in marked(cmd.marker)), 120, "the build", cmd)
        out, err = stop(cmd, sig)
        last = assert_clean_stop(cmd, out, err)
    assert last == ("stopped: the check did not finish, so it says nothing about the bot; "
                    "nothing was kept (its temporary folder is removed)"), err
    assert list(tmp.glob("moon-check-*")) == []


def stored(results: Path) -> tuple[set[str], set[str]]:
    """The stored games' ids and their records' file names."""
    with sqlite3.connect(results) as db:
        rows = db.execute("SELECT id, record_path FROM games").fetchall()
    return {r[0] for r in rows}, {Path(r[1]).name for r in rows}


# short games: the ponder bots' (first legal action every time) took about 30 s each
# under the default rules, to 7 points as to 21; with the dealer forced to bid when all
# pass, to 7 points, two games are stored within seconds, and each game in flight still
# lasts seconds, far longer than the check and the stop take
SHORT = ("-o", "all_pass=force_dealer", "-o", "target_score=7")
RUNS = {
    "ladder": lambda bots: ["ladder", "run", *(x for b in bots for x in ("--bot", b)),
                            "--boards", "6", "-j", "2", "--no-check", "--results",
                            "r.sqlite", "--startup-ms", "60000", *SHORT],
    "match": lambda bots: ["match", bots[0], bots[1], "--against", bots[2], "--games", "36",
                           "-j", "2", "--no-check", "--results", "r.sqlite",
                           "--startup-ms", "60000", *SHORT],
}


@pytest.mark.parametrize("sig", STOPS)
@pytest.mark.parametrize("kind", list(RUNS))
def test_a_stopped_ladder_or_match_keeps_results_and_records_in_step(tmp_path, kind, sig):
    bots = [str(ponder_bot(tmp_path / f"b{i}", f"b{i}")) for i in range(3)]
    results, records = tmp_path / "r.sqlite", tmp_path / "r.sqlite.records"
    in_flight: set[str] = set()

    def games_stored_and_in_flight() -> bool:
        try:
            ids, _ = stored(results)
        except sqlite3.Error:
            return False
        playing = {p.name.split(".seat")[0] for p in (records / "logs").glob("*.seat*.log")}
        in_flight.clear()
        in_flight.update(playing - ids)
        return len(ids) >= 2 and bool(in_flight)

    with command(tmp_path, *RUNS[kind](bots), env={"PONDER_S": "0.05"}) as cmd:
        wait_for(games_stored_and_in_flight, 600, "two games stored, one playing", cmd)
        out, err = stop(cmd, sig)
        last = assert_clean_stop(cmd, out, err)
    ids, names = stored(results)
    assert last == (f"interrupted: {len(ids)} finished game(s) are kept in r.sqlite, each "
                    "with its record; the games in flight are not (no result, no record): "
                    "run the same command again to resume"), err
    # every record is a stored game's and every stored game has its record
    assert {p.name for p in records.glob("*.json")} == names
    assert in_flight - ids, "a game was in flight at the stop"
    for gid in in_flight - ids:
        assert list((records / "logs").glob(f"{gid}.seat*.log")) == []


@pytest.mark.parametrize("sig", STOPS)
def test_a_stopped_submit_wait_says_the_build_goes_on_at_the_host(tmp_path, sig):
    folder = make_competition(tmp_path / "comp")
    host = HostProcess(folder, None).start()
    try:
        token = host.register("ann")
        bot = ponder_bot(tmp_path / "slowbuild", "slowbuild", build="sleep 600")
        with command(tmp_path, "submit", str(bot), "--server", host.url, "--token", token,
                     "--wait") as cmd:
            wait_for(lambda: "slowbuild@" in cmd.out.read_text() and any(
                v["status"] == "building" for b in host.ok("GET", "/api/bots", token)
                for v in b["versions"]), 120, "the build at the host", cmd)
            out, err = stop(cmd, sig)
            last = assert_clean_stop(cmd, out, err)
        [bot_out] = host.ok("GET", "/api/bots", token)
        [v] = bot_out["versions"]
        assert v["status"] == "building"  # it went on at the host
        seen = "building" if f"{v['label']}: building" in out else "pending"
        assert last == (f"stopped waiting: {v['label']} (version 1 of slowbuild, {seen} when "
                        "last seen) is submitted, and its build and validation go on at the "
                        f"host: follow it with `moon host status {host.url}` or GET "
                        f"{host.url}/api/versions/{v['id']}"), err
    finally:
        host.stop()


@pytest.mark.parametrize("sig", STOPS)
def test_a_stopped_referee_server_says_so_in_one_line(tmp_path, sig):
    with command(tmp_path, "serve", "--address", "127.0.0.1:0", "--records", "rec",
                 "--insecure-no-admin-token", "--grace", "1") as cmd:
        wait_for(lambda: "serving on" in cmd.err.read_text(), 60, "the server", cmd)
        out, err = stop(cmd, sig)
        last = assert_clean_stop(cmd, out, err)
    assert last == ("stopped: shutting down; the running games get 1 s to finish, then are "
                    "aborted; every game's record is kept in rec"), err


@pytest.mark.parametrize("sig", STOPS)
def test_a_stopped_host_demo_leaves_nothing_serving(tmp_path, sig):
    marker = uuid.uuid4().hex
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "wb") as o, open(err, "wb") as e:
        demo = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "host_demo.py"), "--folder",
             str(tmp_path / "demo"), "--address", "127.0.0.1:0"], cwd=tmp_path, stdout=o,
            stderr=e, start_new_session=True,
            env={**os.environ, MARKER: marker, "PYTHONUNBUFFERED": "1"})
    cmd = Command(demo, marker, out, err)
    try:
        wait_for(lambda: "playing until Ctrl-C" in out.read_text(), 180, "the demo", cmd)
        url = next(w for line in out.read_text().splitlines() if line.startswith("try:")
                   for w in line.split() if w.startswith("http://")).removesuffix(
                       "/api/leaderboard")
        assert httpx.get(f"{url}/api/status", timeout=30).status_code == 200
        o_text, e_text = stop(cmd, sig)
        last = assert_clean_stop(cmd, o_text, e_text)
        assert last.startswith("stopped: ") and "every finished game and submission is " \
            "kept" in last, e_text
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/api/status", timeout=5)
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
        for pid in marked(marker):
            with_pid_gone(pid)
