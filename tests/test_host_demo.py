"""`make host-demo` (scripts/host_demo.py) says where the pages and the API are once, on
one line (the host's own: a narrow terminal wraps it, nothing breaks a URL), and how a
visitor joins it with a bot of their own."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_demo_says_where_its_pages_are_once(tmp_path):
    out_path, err_path = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        demo = subprocess.Popen(
            [sys.executable, str(ROOT / "scripts" / "host_demo.py"), "--folder",
             str(tmp_path / "demo"), "--address", "127.0.0.1:0"],
            stdout=out, stderr=err, start_new_session=True, cwd=tmp_path,
            env={**os.environ, "COLUMNS": "80", "PYTHONUNBUFFERED": "1"})
        try:
            deadline = time.monotonic() + 180
            while "playing until Ctrl-C" not in out_path.read_text():
                assert demo.poll() is None and time.monotonic() < deadline, \
                    out_path.read_text() + err_path.read_text()
                time.sleep(0.5)
            # a visitor joins as the demo says: its register command, NAME filled in
            [join] = [x for x in out_path.read_text().splitlines() if x.startswith("join: ")]
            register = join.removeprefix("join: moon ").split(",")[0].replace("NAME", "dora")
            joined = subprocess.run(
                [sys.executable, "-m", "arena.cli", *register.split()], capture_output=True,
                text=True, timeout=60, env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)})
            assert joined.returncode == 0, joined.stdout + joined.stderr
            assert re.match(r"moon_\S{20,}$", joined.stdout.splitlines()[0]), joined.stdout
            token_file = re.search(r"the organiser's token: (\S+)\)$", join).group(1)
            assert (tmp_path / token_file).samefile(tmp_path / "demo" / "admin.token")
            demo.send_signal(signal.SIGINT)  # as Ctrl-C: the demo stops its host
            assert demo.wait(60) == 130  # stopped, as every moon command
        finally:
            if demo.poll() is None:
                os.killpg(demo.pid, signal.SIGKILL)  # the group this test started
                demo.wait()
    text = out_path.read_text() + err_path.read_text()
    url = re.search(r"pages on (http://127\.0\.0\.1:\d+)/", text).group(1)
    # the address of the pages, the API and its OpenAPI page: once, all on one line
    assert text.count("pages on") == 1 and text.count(f"{url}/api ") == 1, text
    [line] = [x for x in text.splitlines() if "pages on" in x]
    assert f"pages on {url}/, API on {url}/api (OpenAPI: {url}/docs)" in line, text
    assert f"curl {url}/api/leaderboard" in text
