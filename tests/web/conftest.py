"""Fixtures of the web pages' tests: a real `moon host run` on 127.0.0.1 (the host tests'
helpers) with real bots playing, and a real headless browser (Playwright driving the
system's Chromium, ``/usr/bin/chromium`` or $MOON_CHROMIUM). Without Playwright or Chromium
the browser tests are skipped with the reason, unless MOON_REQUIRE_BROWSER=1 (set by
.ci/run, which installs Chromium first): CI never skips them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from web_support import CHROMIUM, Competition, HostProcess, browser_problem, make_competition


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    problem = browser_problem()
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


@pytest.fixture(scope="module")
def competition(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Competition]:
    folder = make_competition(tmp_path_factory.mktemp("web") / "comp", concurrency=2)
    # the pages read anew at each visit: these tests compare a page with the API at one
    # moment, and follow a game as it changes; the visitors' cache, which may serve a page
    # a few seconds old, has its own tests (tests/host/test_visitors.py)
    toml = folder / "competition.toml"
    text = toml.read_text()
    assert "\ncache_s = 5 " in text  # what `moon host init` writes
    toml.write_text(text.replace("\ncache_s = 5 ", "\ncache_s = 0 "))
    host = HostProcess(folder, None).start()
    try:
        yield Competition(host)
    finally:
        host.stop()
