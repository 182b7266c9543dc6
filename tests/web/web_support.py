"""Helpers of the web pages' tests: a bot that thinks long enough to watch live, archives
to submit, the browser's location, and a running competition with its participants."""

from __future__ import annotations

import io
import os
import shutil
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))

from host_support import EXAMPLES, HostProcess, make_competition, tar_folder  # noqa: E402

__all__ = ["CHROMIUM", "Competition", "HostProcess", "browser_problem", "make_competition",
           "steady_bot", "tar_files"]

CHROMIUM = os.environ.get("MOON_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

STEADY_BOT = b'''"""random, but it thinks 0.12 s a turn: games long enough to watch live."""
import random
import sys
import time

from moon_sdk import Bot, run


class Steady(Bot):
    name = "steady"
    version = "1.0"

    def act(self, obs):
        time.sleep(0.12)
        return random.choice(obs.legal_actions)


if __name__ == "__main__":
    print("<script>document.title = 'owned'</script> \x1b[2J\x1b]0;owned\x07", file=sys.stderr)
    run(Steady())
'''


def tar_files(files: dict[str, bytes]) -> bytes:
    """A .tar.gz of ``{name: bytes}``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def steady_bot() -> bytes:
    return tar_files({"bot.toml": b'name = "steady"\nrun = "{python} bot.py"\n',
                      "bot.py": STEADY_BOT})


def browser_problem() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


class Competition:
    """A running host with three participants: alice (heuristic), bob (steady: slow
    random) and carol (registered, submits through the browser)."""

    def __init__(self, host: HostProcess) -> None:
        self.host = host
        self.url = host.url
        self.tokens = {n: host.register(n) for n in ("alice", "bob", "carol", "dave")}
        self.versions: dict[str, int] = {}
        for who, archive in (("alice", tar_folder(EXAMPLES / "heuristic")),
                             ("bob", steady_bot()),
                             ("dave", tar_folder(EXAMPLES / "random"))):
            r = host.submit(self.tokens[who], archive)
            assert r.status_code == 201, r.text
            self.versions[who] = r.json()["id"]
        for who, vid in self.versions.items():
            assert host.wait_version(self.tokens[who], vid)["status"] == "active"
