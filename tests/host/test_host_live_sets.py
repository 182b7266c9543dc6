"""No live view gives away a tile of a board in play, tried from outside: a real `moon host
run` with two games' slots and three real bots, so every duplicate set seats all three
and each version is at its cap of one running game as soon as one runs (the case where
two games of one set used to be started side by side). A visitor (no token) watches the
public games list and the public event streams of the running games for a while:

- no two games of one set (one board) are ever running together, though two games of
  different sets are (the slots are used);
- the stream of a game whose set has other games still to be played is refused (403,
  saying when it is shown): its plays are the tiles of a board still to be dealt;
- the stream of a set's last game is public as it runs, shows tiles as they are played,
  and each of them is a tile its own game played (its record's plays, read once its set
  has ended).

On SQLite alone (``one_database``): its subject is the host's policy seen from outside.
The SQL it rests on runs on PostgreSQL too, in process: the matchmaker's claim that keeps
a set's games apart (tests/host/test_matchmaker.py, two games of one set never at once)
and the withholding of a stream whose set is still in play, and of a finished game's
record (tests/host/test_app_in_process.py)."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest
from host_support import EXAMPLES, HostProcess, make_competition, tar_folder, wait_for

WATCH_MAX_S = 240.0
"""How long the visitor watches at most: until a stream has shown a tile, one was refused
and both slots were seen playing at once. A stream that shows tiles is of a set's last
game, while the other slot starts the next set's: the moment two games of one set used
to start side by side. On a loaded machine that last game comes seldom, and may be read
while its seats still bid. (It watched 45 s at least,
whatever it had seen by then: a few more sets' changes, checked as these are.)"""


def _running(client: httpx.Client) -> list[dict]:
    games = client.get("/api/games", params={"status": "running", "limit": 500}).json()
    return [g for g in games["games"] if g["kind"] == "rated"]


def _stream_tiles(client: httpx.Client, game_id: str, seconds: float) -> list[str] | str:
    """The tiles game ``game_id``'s public stream shows as played within ``seconds``, or
    the reason it was refused (403)."""
    tiles: list[str] = []
    deadline = time.monotonic() + seconds
    with client.stream("GET", f"/games/{game_id}/events", timeout=10) as r:
        if r.status_code == 403:
            return str(json.loads(r.read())["detail"])
        assert r.status_code == 200, r.read()
        for line in r.iter_lines():
            if line.startswith("data: "):
                d = json.loads(line[6:])
                if d.get("kind") == "played":
                    tiles.append(d["tile"])
            if line.startswith("event: end") or time.monotonic() > deadline:
                break
    return tiles


def _record_plays(record: dict) -> list[str]:
    """Every tile a game's record says was played, as ``high-low``."""
    text = json.dumps(record)
    return [f"{a}-{b}" for a, b in re.findall(r'"(?:tile|played)": "([0-6])-([0-6])"', text)]


@pytest.mark.one_database
def test_no_two_games_of_one_set_run_at_once(tmp_path: Path, database: str | None
                                             ) -> None:
    folder = make_competition(tmp_path / "comp", concurrency=2)
    slow = tmp_path / "slow"  # 20 ms a decision: a game lasts a second or two
    shutil.copytree(EXAMPLES / "weak", slow)
    source = (slow / "bot.py").read_text()
    assert "    def act(self, obs):\n" in source
    (slow / "bot.py").write_text(source.replace(
        "    def act(self, obs):\n", "    def act(self, obs):\n        time.sleep(0.02)\n")
        .replace("from moon_sdk import", "import time\n\nfrom moon_sdk import"))
    host = HostProcess(folder, database).start()
    try:
        for who, bot in (("alice", EXAMPLES / "heuristic"), ("bob", EXAMPLES / "random"),
                         ("carol", slow)):
            token = host.register(who)
            v = host.submit(token, tar_folder(bot)).json()
            assert host.wait_version(token, v["id"])["status"] == "active"
        together: list[list[str]] = []  # the rated games seen running, each look
        streamed: dict[str, list[str]] = {}  # tiles each stream showed
        refused: dict[str, str] = {}  # why a stream was refused
        with httpx.Client(base_url=host.url, timeout=30) as client:
            start = time.monotonic()
            while True:
                if time.monotonic() - start > WATCH_MAX_S or (
                        refused and any(streamed.values())
                        and any(len(look) == 2 for look in together)):
                    break
                running = _running(client)
                together.append(sorted(g["id"] for g in running))
                for g in running:
                    # more than 6 while none has shown a tile (one read in bidding only)
                    seen = any(streamed.values())
                    if (len(streamed) < 6 or not seen) and g["id"] not in streamed \
                            and g["id"] not in refused:
                        tiles = _stream_tiles(client, g["id"], 5.0)
                        if isinstance(tiles, str):
                            refused[g["id"]] = tiles
                            continue
                        # the sets running while it was read
                        during = [x for x in _running(client) if x["set"] == g["set"]
                                  and x["id"] != g["id"]]
                        assert during == [], (g["id"], during)
                        streamed[g["id"]] = tiles
                        break
                time.sleep(0.1)
        by_set = [[gid.split("-")[0] for gid in look] for look in together]
        doubles = [look for look, sets in zip(together, by_set, strict=True)
                   if len(sets) != len(set(sets))]
        assert doubles == [], doubles[:5]
        assert any(len(look) == 2 for look in together), "two slots never both played"
        assert streamed and sum(map(len, streamed.values())) > 0, streamed
        assert refused, "no stream of a set with games still to play was refused"
        assert all(re.fullmatch(r"the plays of game \S+ are shown when the (other game|\d+ "
                                r"other games) of its set ends?", why)
                   for why in refused.values()), refused
        # once each set is over its records are public: every tile a stream showed is
        # one its own game played
        sets = {gid.split("-")[0] for gid in streamed}
        wait_for(lambda: not any(g["id"].split("-")[0] in sets
                                 for g in host.ok("GET", "/api/games", params={
                                     "limit": 500})["games"]
                                 if g["status"] in ("queued", "running")),
                 240, "the watched sets to end")
        for gid, tiles in streamed.items():
            r = host.call("GET", f"/api/games/{gid}/record")
            if r.status_code != 200:  # voided and played again: no record of its own
                continue
            played = _record_plays(r.json())
            assert played and set(tiles) <= set(played), (gid, tiles, played)
    finally:
        host.stop()
