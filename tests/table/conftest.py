"""A real headless browser for the table's page (Playwright driving the system's
Chromium, as tests/web does); skipped with the reason without one, unless
MOON_REQUIRE_BROWSER=1."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("MOON_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        problem = "playwright is not installed (pip install -e '.[dev]')"
    else:
        problem = "" if Path(CHROMIUM).is_file() else f"no Chromium at {CHROMIUM}"
    if problem:
        if os.environ.get("MOON_REQUIRE_BROWSER") == "1":
            pytest.fail(f"MOON_REQUIRE_BROWSER=1, but {problem}", pytrace=False)
        pytest.skip(problem)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                               args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()
