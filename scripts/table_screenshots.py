"""`make screenshots` (its table part): `moon play human heuristic random --web` on
127.0.0.1, played by clicking until a trick is on the table at the person's turn, then
photographed by the system's Chromium through Playwright at a laptop's and a phone's size
into docs/screenshots/table-laptop.png and table-phone.png. Nothing leaves the machine.

    python scripts/table_screenshots.py [--out docs/screenshots] [--seed 11]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("MOON_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
TURN = ("() => document.querySelector('#actions button') || "
        "document.querySelector('#board button.tile.legal')")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="moon-table-") as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "play", "--web", "--no-open", "--seed",
             str(args.seed), "--records", tmp, "human", "heuristic", "random"],
            cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        url = next(m.group(1) for line in proc.stdout
                   if (m := re.search(r"your table: (\S+)", line)))
        try:
            with sync_playwright() as pw:
                b = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                       args=["--no-sandbox", "--disable-gpu"])
                page = b.new_page(viewport={"width": 1366, "height": 860})
                page.goto(url)
                # to a turn of the play with tiles on the table (a trick in progress)
                for _ in range(200):
                    page.wait_for_function(TURN, timeout=60_000)
                    if page.query_selector("#board .played") and \
                            page.query_selector("#board button.tile.illegal[data-action]"):
                        break
                    before = page.inner_html("#board")
                    buttons = page.query_selector_all("#actions button")
                    (buttons[0] if buttons else
                     page.locator("#board button.tile.legal").last).click()
                    page.wait_for_function("(b) => document.querySelector('#board')"
                                           ".innerHTML !== b", arg=before, timeout=60_000)
                page.hover("#board button.tile.illegal >> nth=0", force=True)
                page.screenshot(path=str(args.out / "table-laptop.png"), full_page=True)
                phone = b.new_page(viewport={"width": 390, "height": 844},
                                   device_scale_factor=2, is_mobile=True, has_touch=True)
                phone.goto(url)
                phone.wait_for_function(TURN, timeout=60_000)
                phone.screenshot(path=str(args.out / "table-phone.png"), full_page=True)
                b.close()
        finally:
            proc.kill()
            proc.wait()
    print(f"wrote {args.out}/table-laptop.png and table-phone.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
