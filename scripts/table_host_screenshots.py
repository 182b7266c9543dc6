"""`make screenshots` (its host table part): a small competition on 127.0.0.1 with tables
open (``[tables] enabled``, anyone may sit), heuristic and random submitted; a visitor
follows the leaderboard's "play" link, and the form ("Play against heuristic") and then
the table as the host serves it, played by clicking until a trick is on the table at the
person's turn, are photographed by the system's Chromium through Playwright into
docs/screenshots/table-host.png, table-host-game.png and table-host-phone.png (a phone's
width). Nothing leaves the machine.

    python scripts/table_host_screenshots.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.cli.client import api  # noqa: E402
from arena.host.submissions import pack  # noqa: E402

BOTS = {"ann": "heuristic", "ben": "random"}
CHROMIUM = os.environ.get("MOON_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
TURN = ("() => document.querySelector('#actions button') || "
        "document.querySelector('#board button.tile.legal')")
TABLES = '\n[tables]\nenabled = true\nwho = "anyone"\nmax_open = 1\n'


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    moon = [sys.executable, "-m", "arena.cli"]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="moon-shots-") as tmp:
        folder = Path(tmp) / "comp"
        subprocess.run([*moon, "host", "init", str(folder), "--name", "Moon demo",
                        "--trust-local", "--open"], check=True, stdout=subprocess.DEVNULL)
        toml = folder / "competition.toml"
        toml.write_text(toml.read_text() + TABLES)
        host = subprocess.Popen([*moon, "host", "run", str(folder), "--address",
                                 "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
        try:
            assert host.stdout is not None
            m = re.match(r"serving (\S+)", host.stdout.readline())
            if not m:
                print("screenshots: the host did not start", file=sys.stderr)
                return 1
            url = m.group(1)
            for person, bot in BOTS.items():
                token = api("POST", url, "/api/register", json={"name": person})["token"]
                api("POST", url, "/api/submissions", token,
                    files={"archive": (f"{bot}.tar.gz", pack(ROOT / "example_bots" / bot),
                                       "application/gzip")})
            deadline = time.monotonic() + 600
            while len(api("GET", url, "/api/leaderboard")) < len(BOTS):
                if time.monotonic() > deadline:
                    print("screenshots: the bots were not validated", file=sys.stderr)
                    return 1
                time.sleep(1)
            with sync_playwright() as pw:
                b = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                       args=["--no-sandbox", "--disable-gpu"])
                page = b.new_page(viewport={"width": 1200, "height": 640})
                page.goto(url + "/")
                page.click('tr[data-bot="heuristic"] a.play-link')
                page.wait_for_selector("form.table-new")
                page.select_option("#opponent-2", "bot:random")
                page.screenshot(path=str(args.out / "table-host.png"))
                page.click("form.table-new button[type=submit]")
                page.set_viewport_size({"width": 1366, "height": 860})
                for _ in range(200):  # to a turn of the play with a trick in progress
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
                page.screenshot(path=str(args.out / "table-host-game.png"), full_page=True)
                page.set_viewport_size({"width": 390, "height": 844})  # a phone
                page.hover("#board button.tile.illegal >> nth=0", force=True)
                page.screenshot(path=str(args.out / "table-host-phone.png"), full_page=True)
                b.close()
        finally:
            if host.poll() is None:
                host.send_signal(signal.SIGTERM)
                host.wait(30)
    print(f"wrote {args.out}/table-host.png, table-host-game.png and table-host-phone.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
