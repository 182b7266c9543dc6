"""What a bot says of itself in its Join (``bot_name``, ``bot_version``: any text, up to a
64 KiB message), against a real `moon host run`: it goes into every record of the bot's
games and onto the public replay page, so the referee keeps 64 characters of each and the
page shows control and bidirectional characters as visible escapes. Before, a bot's
30,000-character name with a right-to-left override, an ESC, a NUL and a BEL was kept
whole in every record and put raw on every replay page of its games."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

from arena.referee.referee import REPORTED_MAX

NAME = "\u202eevil\u200b<b>x</b>\x1b[31m\n\r" + "W" * 30000
VERSION = "\x00\x07" + "V" * 30000


def boastful_bot(folder: Path) -> Path:
    """The random bot, reporting :data:`NAME` and :data:`VERSION` in its Join."""
    shutil.copytree(EXAMPLES / "random", folder)
    bot = folder / "bot.py"
    text = bot.read_text().replace('    name = "random"', f"    name = {NAME!r}")
    bot.write_text(text.replace('    version = "1.0"', f"    version = {VERSION!r}", 1))
    return folder


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory):
    folder = make_competition(tmp_path_factory.mktemp("reported") / "comp", concurrency=1)
    h = HostProcess(folder, None).start()
    try:
        yield h
    finally:
        h.stop()


def test_a_bots_own_name_is_cut_and_shown_inert(host: HostProcess, tmp_path: Path) -> None:
    mallory = host.register("mallory")
    for folder, name in ((EXAMPLES / "random", "plain"),
                         (boastful_bot(tmp_path / "boast", ), "boastful")):
        r = host.submit(mallory, tar_folder(folder, rename=name))
        assert r.status_code == 201, r.text
        assert host.wait_version(mallory, r.json()["id"], 300)["status"] == "active"

    def finished() -> str | None:
        games = host.ok("GET", "/api/games?bot=boastful&status=finished")["games"]
        shown = [g for g in games if g["withheld"] is None]  # its set over: its record
        return shown[0]["id"] if shown else None

    game = wait_for(finished, 180, "a finished rated game of the boastful bot")
    record = host.ok("GET", f"/api/games/{game}/record")
    seat = next(s for s in record["seats"] if s["name"] == "boastful")
    assert seat["reported_name"] == NAME[:REPORTED_MAX - 1] + "…"
    assert seat["reported_version"] == VERSION[:REPORTED_MAX - 1] + "…"
    page = host.call("GET", f"/games/{game}").text
    row = re.search(r'<td class="bot">boastful</td><td>[^<]*</td><td>(.*?)</td></tr>', page,
                    re.S)
    assert row is not None, page[:3000]
    # every control and bidi character as a visible escape; the markup escaped
    shown = html.unescape(row.group(1))
    # the name's first 63 characters: 21 before the W's (a zero-width space is no control)
    assert shown == ("\\u202eevil\u200b<b>x</b>\\x1b[31m\\n\\r" + "W" * 42 + "… "
                     "\\x00\\x07" + "V" * 61 + "…"), shown
    assert not any(c in page for c in "\u202e\x1b\x00\x07\r")
