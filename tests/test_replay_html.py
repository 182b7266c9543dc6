"""`moon replay html`: records of real games (played through the CLI) rendered as one
self-contained page, parsed back with the standard library's `html.parser` and compared
with the record's own fields; hostile names and logs stay text; a corrupt record is a
clear error."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from arena.records.record import load_record
from arena.web.templating import static_text

SCRIPT = static_text("replay.js")

ROOT = Path(__file__).resolve().parents[1]
MOON = [sys.executable, "-m", "arena.cli"]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
HOSTILE = "<script>alert(1)</script>"
HOSTILE_ATTR = '"><img src=x onerror=alert(2)>'


def moon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MOON, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "200"})


# -- a minimal DOM from html.parser --------------------------------------------------------
class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.iter()

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter()
                if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)]

    def one(self, tag: str | None = None, cls: str | None = None) -> Node:
        [n] = self.all(tag, cls)
        return n


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, dict(attrs), self.cur))

    def handle_endtag(self, tag):
        n: Node | None = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        assert n is not None and n.parent is not None, f"stray </{tag}>"
        self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(page: str) -> Node:
    b = TreeBuilder()
    b.feed(page)
    b.close()
    assert b.cur is b.root, "unclosed elements"
    return b.root


# -- records of real games -----------------------------------------------------------------
def play(tmp: Path, preset: str, bots: list[str], seed: int = 5) -> Path:
    out = moon("play", "--preset", preset, "--seed", str(seed), "--records", str(tmp), *bots)
    assert out.returncode in (0, 3), out.stderr
    [path] = tmp.glob("*.json")
    return path


@pytest.fixture(scope="module", params=[
    ("moon3", ["heuristic", "random", "heuristic"]),
    ("moon4", ["heuristic", "random", "heuristic", "random"]),
], ids=["moon3", "moon4"])
def game(request, tmp_path_factory) -> Path:
    preset, bots = request.param
    return play(tmp_path_factory.mktemp(preset), preset, bots)


def render(record_path: Path, *extra: str) -> tuple[Node, str]:
    out = moon("replay", "html", str(record_path), *extra)
    assert out.returncode == 0, out.stderr
    target = Path(extra[extra.index("--output") + 1]) if "--output" in extra \
        else record_path.with_suffix(".html")
    assert f"wrote {target}" in out.stdout
    page = target.read_text(encoding="utf-8")
    return parse(page), page


def label(record: dict, seat: int) -> str:
    return f"{seat}:{record['seats'][seat]['name']}"


def sides(record: dict) -> list[str]:
    n = len(record["seats"])
    if n == 4:
        return [f"{label(record, 0)} & {label(record, 2)}",
                f"{label(record, 1)} & {label(record, 3)}"]
    return [label(record, s) for s in range(n)]


def assert_self_contained(root: Node, page: str) -> None:
    assert not re.search(r"https?://", page, re.IGNORECASE)
    for n in root.iter():
        assert n.tag not in ("link", "img", "iframe", "object", "embed")
        assert "src" not in n.attrs
        assert not any(a.startswith("on") for a in n.attrs), (n.tag, n.attrs)
        if "href" in n.attrs:
            assert (n.attrs["href"] or "").startswith("#")
    [script] = root.all("script")
    assert script.attrs == {} and script.text() == SCRIPT


# -- the page shows the record ---------------------------------------------------------------
def test_html_shows_the_record(game):
    record = load_record(game)
    root, page = render(game)
    assert_self_contained(root, page)
    n = len(record["seats"])
    assert n == (4 if record["preset"] == "moon4" else 3)
    assert root.one("span", "mid").text() == f"match {record['match_id']}"
    assert [td.text() for td in root.all("td", "bot")] == [s["name"] for s in record["seats"]]

    # the result: winner, final scores and places per side
    res = record["result"]
    assert root.one(cls="winner").text() == sides(record)[res["winner"]]
    assert root.one(cls="termination").text() == res["termination"]
    final = root.one("table", "final")
    assert [td.text() for td in final.all("td", "side")] == sides(record)
    assert [int(td.text()) for td in final.all("td", "score")] == res["scores"]
    assert [int(td.text()) for td in final.all("td", "place")] == res["places"]
    assert res["winner"] is not None and res["termination"] in ("target", "moon")

    hands = root.all("section", "hand")
    assert len(hands) == len(record["hands"])
    for sec, h in zip(hands, record["hands"], strict=True):
        # the deal, the widow and the auction
        dealt = [[d.attrs["data-tile"] for d in row.all("span", "dom")
                  if "data-enter" not in d.attrs] for row in sec.all("div", "held")]
        assert dealt == h["dealt"]
        widow = sec.all("div", "widow")
        assert [d.attrs["data-tile"] for w in widow for d in w.all("span", "dom")] == h["widow"]
        bids = sec.all("li", "bid")
        assert [(int(b.attrs["data-seat"]), b.one("a", "seat").text()) for b in bids] == \
            [(b["seat"], label(record, b["seat"])) for b in h["bids"]]
        # every trick: count, leader, plays, winner
        tricks = sec.all("li", "trick")
        assert len(tricks) == len(h["tricks"])
        for li, t in zip(tricks, h["tricks"], strict=True):
            assert li.one(cls="leader").text() == label(record, t["leader"])
            plays = li.all("li", "play")
            assert [(p.one("a", "seat").text(), p.one("span", "tt").text()) for p in plays] \
                == [(label(record, p["seat"]), p["tile"]) for p in t["plays"]]
            [win] = [p for p in plays if "win" in p.classes]
            assert win.one("a", "seat").text() == label(record, t["winner"])
            assert li.one("div", "won").text() == f"won by {label(record, t['winner'])}"
        # the hand's outcome and running scores
        assert [int(td.text()) for td in sec.one("tr", "running").all("td")] == h["scores"]
        assert [int(td.text()) for td in sec.one("tr", "deltas").all("td")] == h["deltas"]
        made = sec.one("span", "made").text()
        if h["bidder"] is None:
            assert made == "all passed: redeal" and not tricks
        else:
            assert made == ("made" if h["made"] else "set")
            assert sec.one(cls="bidder-name").text() == label(record, h["bidder"])
            assert sec.one(cls="bid-value").text() == str(h["bid"])

    # the last hand's scores are the final ones
    assert record["hands"][-1]["scores"] == res["scores"]
    # bot logs are left out by default
    assert record["logs"] and not root.all("section", "logs")
    assert not any(log.strip() and log.strip() in page for log in record["logs"].values())


def test_a_chosen_trick_in_detail(game):
    """The fourth trick of the first hand that was played: each play's seat, tile and ms."""
    record = load_record(game)
    root, _ = render(game)
    i, h = next((i, h) for i, h in enumerate(record["hands"]) if h["tricks"])
    n = len(record["seats"])
    trick = h["tricks"][3]
    sec = root.all("section", "hand")[i]
    li = [x for x in sec.all("li", "trick") if x.attrs["data-trick"] == "3"][0]
    assert li.attrs["data-winner"] == str(trick["winner"])
    shown = [(p.one("a", "seat").text(), p.one("span", "tt").text(),
              p.one("span", "ms").text()) for p in li.all("li", "play")]
    assert shown == [(label(record, p["seat"]), p["tile"], f"{f['ms']} ms")
                     for p, f in zip(trick["plays"], h["plays"][3 * n:4 * n], strict=True)]


def test_holdings_at_each_trick(game):
    """What each seat holds just before the first play of trick k (a tile is held at step s when
    data-enter <= s < data-leave): dealt tiles (the bidder's with the widow and without the
    discard) minus the tiles it played in the tricks before k."""
    record = load_record(game)
    root, _ = render(game)

    def held_at(d: Node, s: int) -> bool:
        enter, leave = d.attrs.get("data-enter"), d.attrs.get("data-leave")
        return (enter is None or int(enter) <= s) and (leave is None or s < int(leave))

    for sec, h in zip(root.all("section", "hand"), record["hands"], strict=True):
        rows = sec.all("div", "held")
        assert [int(r.attrs["data-seat"]) for r in rows] == list(range(len(record["seats"])))
        for k, li in enumerate(sec.all("li", "trick")):
            step = int(li.attrs["data-first"]) - 1  # just before its first play
            for seat, row in enumerate(rows):
                start = set(h["dealt"][seat])
                if seat == h["bidder"] and h["discard"] is not None:
                    start = (start | set(h["widow"])) - {h["discard"]}
                gone = {p["tile"] for t in h["tricks"][:k] for p in t["plays"]
                        if p["seat"] == seat}
                shown = {d.attrs["data-tile"] for d in row.all("span", "dom")
                         if held_at(d, step)}
                assert shown == start - gone
                assert len(shown) == 7 - k


def test_logs_only_on_request(game, tmp_path):
    record = load_record(game)
    out = tmp_path / "with-logs.html"
    root, page = render(game, "--logs", "--output", str(out))
    assert_self_contained(root, page)
    pres = [p.text() for p in root.one("section", "logs").all("pre")]
    assert pres == [record["logs"][k] for k in sorted(record["logs"])]


# -- untrusted strings -----------------------------------------------------------------------
def test_hostile_names_and_logs_stay_text(tmp_path):
    path = play(tmp_path, "moon3", ["heuristic", "random", "heuristic"], seed=3)
    data = json.loads(path.read_text())
    data["seats"][1]["name"] = HOSTILE
    data["seats"][2]["name"] = HOSTILE_ATTR
    data["match_id"] = "</title><script>alert(5)</script>"
    data["logs"]["0"] = "</pre><script>alert(3)</script>"
    data["faults"].append({"seat": 1, "reason": "crash", "detail": "<script>alert(4)</script>",
                           "forfeit": False})
    path.write_text(json.dumps(data))
    root, page = render(path, "--logs")
    assert_self_contained(root, page)  # the one script is ours, no handler, no <img>
    assert "alert(" not in root.one("script").text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert" not in page
    assert [td.text() for td in root.all("td", "bot")] == ["heuristic", HOSTILE, HOSTILE_ATTR]
    assert f"1:{HOSTILE}" in [td.text() for td in root.one("table", "final").all("td")]
    assert root.one("title").text() == f"Moon replay {data['match_id']}"
    assert root.one("li", "fault").one("span", "detail").text() == "<script>alert(4)</script>"
    assert "</pre><script>alert(3)</script>" in [p.text() for p in root.all("pre")]
    # the seat names show in every play, escaped
    plays = [p.one("a", "seat").text() for p in root.all("li", "play")]
    assert f"1:{HOSTILE}" in plays and f"2:{HOSTILE_ATTR}" in plays


# -- a forfeit -------------------------------------------------------------------------------
def test_forfeit_and_trick_in_progress(tmp_path):
    bot = tmp_path / "crasher"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        f'name = "crasher"\nrun = "{{python}} {ROOT / "tests" / "bots" / "misbehave.py"} crash"\n')
    path = play(tmp_path / "records", "moon3", ["heuristic", str(bot), "heuristic"])
    record = load_record(path)
    res = record["result"]
    assert res["termination"] == "forfeit" and res["winner"] is None
    root, page = render(path)
    assert_self_contained(root, page)
    assert not root.all(cls="winner") and root.one(cls="no-winner").text() == "no winner"
    f = res["forfeit"]
    line = root.one("p", "forfeit-line").text()
    assert f"seat {label(record, f['seat'])}" in line and f["reason"] in line
    assert f["detail"] in line
    faults = root.all("li", "fault")
    assert len(faults) == len(record["faults"])
    assert [x.one("span", "detail").text() for x in faults] == \
        [x["detail"] for x in record["faults"]]
    # the unfinished hand shows the plays of the trick in progress, with no winner
    h = record["hands"][-1]
    sec = root.all("section", "hand")[-1]
    assert not h["finished"] and sec.one("span", "made").text() == "unfinished"
    n = len(record["seats"])
    pending = h["plays"][len(h["tricks"]) * n:]
    tricks = sec.all("li", "trick")
    assert len(tricks) == len(h["tricks"]) + (1 if pending else 0)
    if pending:
        assert tricks[-1].attrs["data-winner"] == ""
        assert [p.one("span", "tt").text() for p in tricks[-1].all("li", "play")] == \
            [p["tile"] for p in pending]


# -- unreadable records ----------------------------------------------------------------------
@pytest.mark.parametrize("content, message", [
    ("{ not json", "is not valid JSON"),
    ('{"hello": 1}', "is not a Moon Arena game record"),
    ('{"schema": "moon-arena.game-record", "schema_version": 1, "ruleset": {}, "seed": 1, '
     '"seats": [], "actions": [], "hands": [7], "result": {}}',
     "the field 'hands' must be a list of objects"),
    ("[" * 100000 + "]" * 100000, "nests too deeply"),
])
def test_corrupt_record_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    out = moon("replay", "html", str(path))
    assert out.returncode == 1
    assert message in out.stderr and "Traceback" not in out.stderr
    assert not path.with_suffix(".html").exists()
