"""`make screenshots`: a small competition (the example bots, short games) on 127.0.0.1,
its main pages photographed by the system's Chromium through Playwright into
docs/screenshots/*.png (laptop and phone widths). Nothing leaves the machine.

    python scripts/screenshots.py [--out docs/screenshots] [--games 18]
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.cli.client import api  # noqa: E402
from arena.host.submissions import pack  # noqa: E402

BOTS = {"ann": "heuristic", "ben": "random", "cat": "weak"}
CHROMIUM = os.environ.get("MOON_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--games", type=int, default=18, help="rated games before the pictures")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    moon = [sys.executable, "-m", "arena.cli"]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="moon-shots-") as tmp:
        folder = Path(tmp) / "comp"
        subprocess.run([*moon, "host", "init", str(folder), "--name", "Moon demo",
                        "--trust-local", "--open"], check=True, stdout=subprocess.DEVNULL)
        toml = folder / "competition.toml"
        text = re.sub(r"(?m)^batch_every_s = \d+", "batch_every_s = 3", toml.read_text())
        toml.write_text(re.sub(r"(?m)^bootstrap = \d+", "bootstrap = 40", text))
        host = subprocess.Popen([*moon, "host", "run", str(folder), "--address",
                                 "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
        try:
            assert host.stdout is not None
            m = re.match(r"serving (\S+)", host.stdout.readline())
            if not m:
                print("screenshots: the host did not start", file=sys.stderr)
                return 1
            url = m.group(1)
            tokens = {}
            for person, bot in BOTS.items():
                tokens[person] = api("POST", url, "/api/register", json={"name": person}
                                     )["token"]
                api("POST", url, "/api/submissions", tokens[person],
                    files={"archive": (f"{bot}.tar.gz", pack(ROOT / "example_bots" / bot),
                                       "application/gzip")})
            rated(url, args.games)
            # a second version of ann's bot (the same code, another hash), so that the
            # bot page's chart shows a version marker and a line each
            again = Path(tmp) / "heuristic"
            shutil.copytree(ROOT / "example_bots" / "heuristic", again)
            (again / "VERSION").write_text("2\n")
            api("POST", url, "/api/submissions", tokens["ann"],
                files={"archive": ("heuristic.tar.gz", pack(again), "application/gzip")})
            rated(url, 3 * args.games, versions=4)
            game = api("GET", url, "/api/games?status=finished&limit=1")["games"][0]["id"]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1200, "height": 800})
                page.goto(url + "/")
                page.screenshot(path=str(args.out / "leaderboard.png"), full_page=True)
                page.goto(url + "/bots/heuristic")
                page.screenshot(path=str(args.out / "bot.png"), full_page=True)
                # the player at trick 3 (the hash), then the game's details below it: the
                # whole page from its top (the hash alone scrolls the table out of view)
                page.goto(url + f"/games/{game}#hand-1-trick-3")
                page.reload()
                page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=str(args.out / "replay.png"), full_page=True)
                phone = browser.new_page(viewport={"width": 390, "height": 844})
                phone.goto(url + f"/games/{game}#hand-1-trick-3")
                phone.reload()
                phone.evaluate("window.scrollTo(0, 0)")
                phone.screenshot(path=str(args.out / "replay-phone.png"), full_page=True)
                phone.goto(url + "/")
                phone.screenshot(path=str(args.out / "leaderboard-phone.png"))
                live_shot(page, url, args.out / "live.png")
                live_shot(phone, url, args.out / "live-phone.png")
                browser.close()
            for name in ("leaderboard", "bot", "replay", "replay-phone", "leaderboard-phone",
                         "live", "live-phone"):
                print(f"wrote {args.out / (name + '.png')}")
            return 0
        finally:
            if host.poll() is None:
                host.send_signal(signal.SIGTERM)
                host.wait(30)


def rated(url: str, games: int, versions: int = 0) -> None:
    """Wait (15 min at most) for ``games`` finished rated games and a leaderboard whose
    versions are all rated, and with ``versions`` rated versions at least (retired ones
    too: the bot pages' versions)."""
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        done = api("GET", url, "/api/games?status=finished&limit=1")["total"]
        board = api("GET", url, "/api/leaderboard")
        fitted = sum(v["rating"] is not None for b in api("GET", url, "/api/bots")
                     for v in b["versions"]) if versions else 0
        if done >= games and board and all(r["rating"] is not None for r in board) \
                and fitted >= versions:
            return
        time.sleep(1)


def live_shot(page: Any, url: str, out: Path) -> None:
    """A running game's live page, taken at the page's own pace once three tricks of a
    hand are shown and a fourth is on the table (the page's queue goes on after the game
    ends, so a game of a second still gets there)."""
    from playwright.sync_api import Error as BrowserError

    shown = ("() => { const r = document.getElementById('live'); return !!r && "
             "r.querySelectorAll('.story .tricks li.trick').length >= 4 && "
             "r.querySelectorAll('.board .trick-area .played').length === 2; }")
    for _ in range(30):
        running = api("GET", url, "/api/games?status=running")["games"]
        if not running:
            time.sleep(0.2)
            continue
        try:
            page.goto(url + f"/games/{running[0]['id']}")
            if page.query_selector("#live") is None:
                continue  # over already: its replay was served
            page.wait_for_function(shown, timeout=60000)
        except BrowserError:
            continue
        page.screenshot(path=str(out), full_page=True)
        return
    raise SystemExit(f"screenshots: no live game reached its fourth trick for {out.name}")


if __name__ == "__main__":
    sys.exit(main())
