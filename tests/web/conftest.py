"""Fixtures of the web pages' tests: a real `moon host run` on 127.0.0.1 (the host tests'
helpers) with real bots playing, and a real headless browser (Playwright driving the
system's Chromium, ``/usr/bin/chromium`` or $MOON_CHROMIUM). Without Playwright or Chromium
the browser tests are skipped with the reason, unless MOON_REQUIRE_BROWSER=1 (set by
.ci/run, which installs Chromium first): CI never skips them."""

from __future__ import annotations

import io
import os
import shutil
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))

from host_support import EXAMPLES, HostProcess, make_competition, tar_folder  # noqa: E402

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


def _browser_problem() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    problem = _browser_problem()
    if problem:
        if os.environ.get("MOON_REQUIRE_BROWSER") == "1":
            pytest.fail(f"MOON_REQUIRE_BROWSER=1, but {problem}", pytrace=False)
        pytest.skip(problem)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                               args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


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


@pytest.fixture(scope="module")
def competition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Competition]:
    folder = make_competition(tmp_path_factory.mktemp("web") / "comp", concurrency=2)
    host = HostProcess(folder, None).start()
    try:
        yield Competition(host)
    finally:
        host.stop()
