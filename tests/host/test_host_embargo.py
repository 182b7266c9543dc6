"""No deal given away while it is in play, tried from outside: a real `moon host run` with
real bots (on SQLite: a flow), a visitor (no token) fetching every address it can reach —
every page linked from the front page, every GET of the API's OpenAPI schema for every
game, bot and version it lists, every game's event stream — while a duplicate set has finished games
and games still to be played. No answer may hold a seat's dealt hand of that set's board
(worked out here from the master seed with the rules engine's deal, docs/rules.md), nor
the board's seed, which deals it. Once the set is over, its records are shown (and the
same check finds the hands in them: the check can see a leak)."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest
from host_support import EXAMPLES, SEED, HostProcess, make_competition, tar_folder, wait_for
from moon_sdk.rules import Ruleset
from moon_sdk.rules.state import deal
from moon_sdk.rules.tiles import tile_name, tiles_of

from arena.ladder.schedule import board_seed

MAX_HANDS = 12
"""The hands a game of the test deals at most (its games go to 21 points, or 12 hands:
longer than host_support.FAST's, so a set lasts longer than a crawl)."""
TILE = re.compile(r"(?<![\w-])([0-6])-([0-6])(?![\w-])")
"""A tile's name as the pages and the records write it (``6-4``), not part of a longer
word (``s5-3``, a game id) or number (a date)."""
RULES = Ruleset.from_dict({"preset": "moon3", "target_score": 21})


def board(set_id: int) -> tuple[int, list[frozenset[str]], list[frozenset[str]]]:
    """Set ``set_id``'s board from the rules engine: its seed, every seat's dealt hand of
    every hand a game of it can deal (hands 0 to MAX_HANDS: either numbering), and each
    hand's tiles with the widow's (what a bidder holds before the discard)."""
    seed = board_seed(SEED, set_id)
    dealt, with_widow = [], []
    for n in range(MAX_HANDS + 2):
        hands, widow = deal(seed, n, RULES)
        for h in hands:
            dealt.append(frozenset(tile_name(t) for t in tiles_of(h)))
            with_widow.append(frozenset(tile_name(t) for t in tiles_of(h | widow)))
    return seed, dealt, with_widow


def _name(hi: str, lo: str) -> str:
    a, b = sorted((int(hi), int(lo)), reverse=True)
    return f"{a}-{b}"


def _line_groups(text: str) -> list[list[str]]:
    return [[_name(*m.groups()) for m in TILE.finditer(line)] for line in text.splitlines()]


def groups(body: str) -> list[list[str]]:
    """The runs of tiles ``body`` shows together, as a hand is shown: a JSON list of
    tiles (an API answer, an event's data), adjacent tiles of a page (the replay's
    hands), the tiles on one line of text (a log); a string inside JSON is text."""
    out: list[list[str]] = []

    def walk(x: object) -> None:
        if isinstance(x, list):
            if x and all(isinstance(y, str) and TILE.fullmatch(y) for y in x):
                out.append([_name(*TILE.fullmatch(y).groups()) for y in x])  # type: ignore
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
        elif isinstance(x, str):
            out.extend(_line_groups(x))

    for chunk in [body, *re.findall(r"(?m)^data: (.*)$", body)]:
        try:
            walk(json.loads(chunk))
        except ValueError:
            pass
    run: list[str] = []
    for piece in re.findall(r"<[^>]+>|[^<]+", body):
        m = re.match(r'<span class="dom[^"]*" data-tile="([^"]+)"', piece)
        if m and TILE.fullmatch(m.group(1)):
            run.append(_name(*TILE.fullmatch(m.group(1)).groups()))  # type: ignore
        elif piece.startswith(("<i ", "</i>", "</span>")) or not piece.strip():
            continue
        else:
            out.append(run)
            run = []
            if not piece.startswith("<"):
                out.extend(_line_groups(piece))
    out.append(run)
    return out


def leaks(body: str, seed: int, dealt: list[frozenset[str]]) -> list[str]:
    """What of a board ``body`` gives away: its seed, or one of the hands ``dealt`` shown
    as a group of tiles (a bidder's, with the widow tile, too)."""
    found = [f"seed {seed}"] if str(seed) in body else []
    for g in groups(body):
        if 7 <= len(set(g)) <= 8:
            found += [f"hand {sorted(h)}" for h in dealt if h <= set(g)]
    return found


def crawl(host: HostProcess, set_id: int) -> dict[str, str]:
    """Every address a visitor reaches: the pages linked from ``/`` (breadth first, up to
    300), the API's GETs (each game's for the games of set ``set_id``: another set's
    deal is not the one looked for), and the event stream of each game of the set (read
    for up to 2 s); ``{address: body}``."""
    seen: dict[str, str] = {}
    with httpx.Client(base_url=host.url, timeout=30) as client:
        todo = ["/"]
        while todo and len(seen) < 300:
            path = todo.pop(0)
            if path in seen:
                continue
            r = client.get(path)
            seen[path] = r.text
            if "text/html" in r.headers.get("content-type", ""):
                for href in re.findall(r'href="(/[^"#]*)"', r.text):
                    href = href.replace("&amp;", "&")
                    if not href.startswith(("/static", "/signout")) \
                            and "/events" not in href and href not in seen:
                        todo.append(href)
        games = client.get("/api/games", params={"limit": 500}).json()["games"]
        ours = [g["id"] for g in games if g["set"] == set_id]
        names = sorted({x["bot"] for g in games for x in g["seats"]})
        versions = sorted({x["version_id"] for g in games for x in g["seats"]
                           if x["version_id"]})
        for template, ops in client.get("/openapi.json").json()["paths"].items():
            if "get" not in ops:
                continue
            fills: list[dict[str, object]] = [{}]
            for key, values in (("game_id", ours), ("seat", [0, 1, 2]), ("name", names),
                                ("version_id", versions)):
                if "{" + key + "}" in template:
                    fills = [{**f, key: v} for f in fills for v in values]
            for f in fills:
                path = template.format(**f)
                queries = [""] if f else ["", "?limit=500", "?status=finished&limit=500"]
                for query in queries:
                    if path + query not in seen:
                        seen[path + query] = client.get(path + query).text
        for game_id in ours:
            path = f"/games/{game_id}/events"
            chunks: list[str] = []
            try:
                with client.stream("GET", path, timeout=5) as r:
                    deadline = time.monotonic() + 2
                    for chunk in r.iter_text():
                        chunks.append(chunk)
                        if time.monotonic() > deadline or "event: end" in chunk:
                            break
            except httpx.HTTPError:
                pass
            seen[path] = "".join(chunks)
    return seen


def sets(host: HostProcess) -> dict[int, list[dict]]:
    games = host.ok("GET", "/api/games", params={"limit": 500})["games"]
    out: dict[int, list[dict]] = {}
    for g in games:
        out.setdefault(g["set"], []).append(g)
    return out


@pytest.fixture
def host(tmp_path: Path, database: str | None):
    # one game at a time: a set's six games one after another, so a set with a finished
    # game has others still to be played for a few games' time
    folder = make_competition(tmp_path / "comp", concurrency=1)
    toml = folder / "competition.toml"
    text = toml.read_text()
    assert "target_score = 7" in text and "max_hands = 4" in text
    toml.write_text(text.replace("target_score = 7", "target_score = 21")
                    .replace("max_hands = 4", f"max_hands = {MAX_HANDS}"))
    h = HostProcess(folder, database).start()
    try:
        yield h
    finally:
        h.stop()


@pytest.mark.one_database  # a flow: its queries run on PostgreSQL in process (conftest.py)
def test_no_public_address_gives_away_a_deal_in_play(host: HostProcess, tmp_path: Path
                                                     ) -> None:
    # three bots: a set is the six seatings of one board; "slow" (weak, 20 ms a
    # decision) makes a game last a couple of seconds, a set longer than a crawl
    slow = tmp_path / "slow"
    shutil.copytree(EXAMPLES / "weak", slow)
    source = (slow / "bot.py").read_text()
    assert "    def act(self, obs):\n" in source
    (slow / "bot.py").write_text(source.replace(
        "    def act(self, obs):\n", "    def act(self, obs):\n        time.sleep(0.02)\n")
        .replace("from moon_sdk import", "import time\n\nfrom moon_sdk import"))
    for who, bot in (("alice", EXAMPLES / "heuristic"), ("bob", EXAMPLES / "random"),
                     ("carol", slow)):
        token = host.register(who)
        v = host.submit(token, tar_folder(bot)).json()
        assert host.wait_version(token, v["id"])["status"] == "active"

    def in_play_set() -> tuple[int, list[dict]] | None:
        for sid, gs in sorted(sets(host).items(), reverse=True):
            done = [g for g in gs if g["status"] == "finished"]
            if done and sum(g["status"] in ("queued", "running") for g in gs) >= 3:
                return sid, done
        return None

    checked = None
    for _ in range(5):  # a crawl counts if its set was still in play when it ended
        sid, done = wait_for(in_play_set, 240, "a set with a finished game and 3 to play")
        seed, dealt, _ = board(sid)
        # the hands another board deals too (a bidder's with the widow: a run of 8
        # holds a hand of 7) say nothing of this one's, wherever they are shown
        others = [h for k in range(1, sid + 8) if k != sid for h in board(k)[2]]
        dealt = [h for h in dealt if not any(h <= o for o in others)]
        pages = crawl(host, sid)
        still = [g for g in sets(host)[sid] if g["status"] in ("queued", "running")]
        if still:
            checked = (sid, done, seed, dealt, pages)
            break
    assert checked is not None, "every crawl outlasted its set"
    sid, done, seed, dealt, pages = checked
    assert len(pages) > 50, sorted(pages)  # it did reach the pages, API and streams
    found = {addr: what for addr, body in pages.items() if (what := leaks(body, seed, dealt))}
    assert found == {}, found
    # what a visitor was told instead (in the same crawl, while the set was in play)
    g = done[0]
    assert json.loads(pages[f"/api/games/{g['id']}"])["withheld"].startswith(
        "shown when the ")
    assert "other game" in json.loads(pages[f"/api/games/{g['id']}/record"])["detail"]
    assert "shown when the " in pages[f"/games/{g['id']}"]

    # once the set is over, its records are shown, and hold the hands the check looks for
    wait_for(lambda: all(x["status"] not in ("queued", "running")
                         for x in sets(host)[sid]), 240, f"set {sid} to end")
    record = host.call("GET", f"/api/games/{g['id']}/record")
    assert record.status_code == 200 and leaks(record.text, seed, dealt)
    assert leaks(host.call("GET", f"/games/{g['id']}").text, seed, dealt)
    assert host.ok("GET", f"/api/games/{g['id']}")["withheld"] is None
